"""Recurrent cells: nn.RNNCell, nn.GRUCell, nn.LSTMCell, and the one-step functions the
layers in rnn.py share.

The step functions take the input projection `gi = x @ w_ih.T + b_ih` already computed, so a
layer projects a whole sequence in one matmul and loops over time for the hidden projection
only; a cell projects its one step. The formulas and gate orders are MindSpore 2.10's
(mindspore/nn/layer/rnn_cells.py):

- RNN:  h' = act(gi + h @ w_hh.T + b_hh), act tanh or relu
- GRU:  gates split (r, z, n): r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z),
        n = tanh(gi_n + r * gh_n) with gh = h @ w_hh.T + b_hh; h' = n + z * (h - n)
- LSTM: gates = gi + h @ w_hh.T + b_hh split (i, f, g, o); c' = sigmoid(f) * c +
        sigmoid(i) * tanh(g); h' = sigmoid(o) * tanh(c')

Every step is composed of existing ops (matmul, split, sigmoid, tanh, relu), so it runs on
every backend in both modes and its gradient is its parts'. The cells' Parameters are named
weight_ih, weight_hh, bias_ih, bias_hh with shapes (gates * hidden, input),
(gates * hidden, hidden), (gates * hidden,), all drawn from U(-1/sqrt(hidden), 1/sqrt(hidden))
as MindSpore's reset_parameters does (MindSpore's cells draw from its own generator, so the
values differ after the same seed; the layers' draws are numpy's and equal MindSpore's).
Inputs x and hx must be float32 or float16 and share the Parameters' dtype, as in MindSpore."""
from __future__ import annotations

import math

from ...common.initializer import Uniform, initializer
from ...core import dtype as dt
from ...core.arg_checks import check_bool
from ...core.errors import ShapeError, at_user_site
from ...core.ops import array as _a
from ...core.ops import linalg as _la
from ...core.ops import math as _m
from ...core.tensor import Parameter, Tensor
from ..cell import Cell
from .basic import check_positive_int

NONLINEARITIES = ("tanh", "relu")
# the dtypes MindSpore 2.10's cells (and its layers, when given hx) accept for x and hx
CELL_DTYPES = (dt.float32, dt.float16)


# ------------------------------------------------------------------ one step -------------------
def input_projection(x, w_ih, b_ih):
    """x @ w_ih.T + b_ih over x's last dim; x of any rank >= 2 (a whole (T, B, I) sequence is
    one matmul)."""
    shape = tuple(x.shape)
    flat = x if len(shape) == 2 else _a.reshape(x, (-1, shape[-1]))
    gi = _la.matmul(flat, w_ih, transpose_b=True)
    if b_ih is not None:
        gi = gi + b_ih
    if len(shape) != 2:
        gi = _a.reshape(gi, shape[:-1] + (gi.shape[-1],))
    return gi


def _hidden_projection(h, w_hh, b_hh):
    gh = _la.matmul(h, w_hh, transpose_b=True)
    return gh if b_hh is None else gh + b_hh


def rnn_step(gi, h, w_hh, b_hh, nonlinearity="tanh"):
    """One Elman step: act(gi + h @ w_hh.T + b_hh), act tanh or relu."""
    pre = gi + _hidden_projection(h, w_hh, b_hh)
    return _m.tanh(pre) if nonlinearity == "tanh" else _m.relu(pre)


def gru_step(gi, h, w_hh, b_hh):
    """One GRU step, gates (r, z, n) as MindSpore: n = tanh(gi_n + r * (h @ w_hn.T + b_hn)),
    h' = n + z * (h - n)."""
    i_r, i_z, i_n = _a.split(gi, gi.shape[-1] // 3, axis=-1)
    h_r, h_z, h_n = _a.split(_hidden_projection(h, w_hh, b_hh), gi.shape[-1] // 3, axis=-1)
    reset = _m.sigmoid(i_r + h_r)
    update = _m.sigmoid(i_z + h_z)
    new = _m.tanh(i_n + reset * h_n)
    return new + update * (h - new)


def lstm_step(gi, h, c, w_hh, b_hh):
    """One LSTM step, gates (i, f, g, o) as MindSpore; returns (h', c')."""
    gates = gi + _hidden_projection(h, w_hh, b_hh)
    i, f, g, o = _a.split(gates, gates.shape[-1] // 4, axis=-1)
    c_new = _m.sigmoid(f) * c + _m.sigmoid(i) * _m.tanh(g)
    return _m.sigmoid(o) * _m.tanh(c_new), c_new


# ------------------------------------------------------------------ argument checks ------------
def check_state_tensor(who: str, name: str, value, dtypes=CELL_DTYPES):
    """value must be a Tensor of one of `dtypes` (MindSpore's TypeError otherwise)."""
    if not isinstance(value, Tensor):
        raise at_user_site(TypeError(f"{who}: {name} must be a Tensor, got "
                                     f"{type(value).__name__}"))
    if dtypes is not None and value.dtype not in dtypes:
        raise at_user_site(TypeError(
            f"{who}: {name} must have dtype float32 or float16 (as in MindSpore), got "
            f"{value.dtype}; cast it with {name}.astype(mindspore.float32)"))
    return value


def check_shape(who: str, name: str, value, expected):
    if tuple(value.shape) != tuple(expected):
        raise at_user_site(ShapeError(f"{who}: {name} has shape {tuple(value.shape)}, expected "
                                      f"{tuple(expected)}"))


def check_same_dtype(who: str, x, h, hname: str, param_dtype):
    """x, the state and the Parameters must share a dtype (MindSpore's MatMul refuses mixed
    operands with a TypeError)."""
    if not x.dtype == h.dtype == param_dtype:
        raise at_user_site(TypeError(
            f"{who}: x ({x.dtype}), {hname} ({h.dtype}) and the Parameters ({param_dtype}) must "
            f"have one dtype; cast the inputs, or build the cell with dtype={x.dtype}"))


def check_nonlinearity(who: str, nonlinearity):
    if not isinstance(nonlinearity, str) or nonlinearity not in NONLINEARITIES:
        raise ValueError(f"{who}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
    return nonlinearity


# ------------------------------------------------------------------ the cells ------------------
class _RNNCellBase(Cell):
    """The Parameters every cell has: (num_chunks * hidden_size) gate rows."""

    def __init__(self, who, input_size, hidden_size, has_bias, num_chunks, dtype):
        super().__init__()
        self.has_bias = check_bool(who, "has_bias", has_bias)
        self.hidden_size = check_positive_int(who, "hidden_size", hidden_size)
        self.input_size = check_positive_int(who, "input_size", input_size)
        dtype = dt.to_dtype(dtype)
        stdv = 1 / math.sqrt(self.hidden_size)
        rows = num_chunks * self.hidden_size

        def param(shape, name):
            return Parameter(initializer(Uniform(stdv), shape, dtype), name=name)
        self.weight_ih = param((rows, self.input_size), "weight_ih")
        self.weight_hh = param((rows, self.hidden_size), "weight_hh")
        if self.has_bias:
            self.bias_ih = param((rows,), "bias_ih")
            self.bias_hh = param((rows,), "bias_hh")
        else:
            self.bias_ih = None
            self.bias_hh = None

    def _check_step(self, x, h, hname):
        who = type(self).__name__
        check_state_tensor(who, "x", x)
        check_state_tensor(who, hname, h)
        if len(x.shape) != 2 or x.shape[1] != self.input_size:
            raise at_user_site(ShapeError(
                f"{who}: x has shape {tuple(x.shape)}, expected (batch_size, "
                f"{self.input_size}); a cell takes one time step (use nn.{who[:-4]} for a "
                f"sequence; an unbatched x needs x.expand_dims(0))"))
        check_shape(who, hname, h, (x.shape[0], self.hidden_size))
        check_same_dtype(who, x, h, hname, self.weight_ih.dtype)


class RNNCell(_RNNCellBase):
    """An Elman cell: h' = act(x @ weight_ih.T + bias_ih + hx @ weight_hh.T + bias_hh),
    act 'tanh' (default) or 'relu'. construct(x, hx): x (batch, input_size), hx (batch,
    hidden_size), both float32 or float16; returns h'."""

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True,
                 nonlinearity: str = "tanh", dtype=dt.float32):
        super().__init__("RNNCell", input_size, hidden_size, has_bias, 1, dtype)
        self.nonlinearity = check_nonlinearity("RNNCell", nonlinearity)

    def construct(self, x, hx):
        self._check_step(x, hx, "hx")
        gi = input_projection(x, self.weight_ih, self.bias_ih)
        return rnn_step(gi, hx, self.weight_hh, self.bias_hh, self.nonlinearity)


class GRUCell(_RNNCellBase):
    """A GRU cell (gates r, z, n as MindSpore). construct(x, hx): x (batch, input_size), hx
    (batch, hidden_size); returns h'."""

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True,
                 dtype=dt.float32):
        super().__init__("GRUCell", input_size, hidden_size, has_bias, 3, dtype)

    def construct(self, x, hx):
        self._check_step(x, hx, "hx")
        gi = input_projection(x, self.weight_ih, self.bias_ih)
        return gru_step(gi, hx, self.weight_hh, self.bias_hh)


class LSTMCell(_RNNCellBase):
    """An LSTM cell (gates i, f, g, o as MindSpore). construct(x, hx): x (batch, input_size),
    hx a tuple (h, c) of (batch, hidden_size) Tensors; returns the tuple (h', c').
    (MindSpore 2.10 refuses a positional dtype here as if it were an argument of the
    pre-1.6 single-layer LSTMCell; minispore takes it: it means what the signature says.)"""

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True,
                 dtype=dt.float32):
        super().__init__("LSTMCell", input_size, hidden_size, has_bias, 4, dtype)

    def construct(self, x, hx):
        if not isinstance(hx, tuple) or len(hx) != 2:
            length = f" of length {len(hx)}" if isinstance(hx, (tuple, list)) else ""
            raise at_user_site(TypeError(f"LSTMCell: hx must be a tuple (h, c) of two Tensors, "
                                         f"got {type(hx).__name__}{length}"))
        h, c = hx
        self._check_step(x, h, "hx[0]")
        check_state_tensor("LSTMCell", "hx[1]", c)
        check_shape("LSTMCell", "hx[1]", c, (x.shape[0], self.hidden_size))
        check_same_dtype("LSTMCell", x, c, "hx[1]", self.weight_ih.dtype)
        gi = input_projection(x, self.weight_ih, self.bias_ih)
        return lstm_step(gi, h, c, self.weight_hh, self.bias_hh)


__all__ = ["RNNCell", "GRUCell", "LSTMCell"]
