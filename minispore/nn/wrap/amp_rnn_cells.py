"""The recurrent cells (nn.RNNCell, nn.GRUCell, nn.LSTMCell) as auto_mixed_precision O1 makes
them in MindSpore 2.10.

MindSpore's O1 rewrites the source of each white-list Cell: every Primitive call in it (and in
the functions its construct calls) gets its float inputs cast to float16 and its outputs cast
back to float32, while Python arithmetic operators (+, -, *) are left alone, so they compute in
float32 on the float16-rounded values. For Dense and the convolutions (Primitive calls only) that
is the whole Cell in float16; the recurrent cells mix the two: the MatMuls, Split, Sigmoid,
Tanh and ReLU run in float16, the bias additions and the gate arithmetic in float32. The
classes here are the cells with that construct (MindSpore names its rewritten classes
`<Cell>Opt`); auto_mixed_precision O1 gives an nn.RNNCell/GRUCell/LSTMCell one of them as its
class, keeping its Parameters.
"""
from __future__ import annotations

from ...core import dtype as dt
from ...core.ops import array as _a
from ...core.ops import linalg as _la
from ...core.ops import math as _m
from ..layers.rnn_cells import GRUCell, LSTMCell, RNNCell, check_shape, check_state_tensor
from .mixed_precision import cast_floats

__all__ = []


def _prim(fn, *inputs, dtype=dt.float16, **attrs):
    """A Primitive call as O1 rewrites it: float inputs to `dtype`, float outputs to float32."""
    return cast_floats(fn(*cast_floats(inputs, dtype), **attrs), dt.float32)


def _matmul_t(a, b, dtype):
    return _prim(_la.matmul, a, b, dtype=dtype, transpose_b=True)


def _split(x, parts, dtype):
    return _prim(lambda t: _a.split(t, t.shape[1] // parts, axis=1), x, dtype=dtype)


class RNNCellOpt(RNNCell):
    """nn.RNNCell under O1 (MindSpore's _rnn_tanh_cell / _rnn_relu_cell rewritten)."""

    def construct(self, x, hx):
        self._check_step(x, hx, "hx")
        d = self._amp_o1_dtype
        igates = _matmul_t(x, self.weight_ih, d)
        hgates = _matmul_t(hx, self.weight_hh, d)
        if self.bias_ih is not None:
            igates = igates + self.bias_ih
            hgates = hgates + self.bias_hh
        act = _m.tanh if self.nonlinearity == "tanh" else _m.relu
        return _prim(act, igates + hgates, dtype=d)


class GRUCellOpt(GRUCell):
    """nn.GRUCell under O1 (MindSpore's _gru_cell rewritten)."""

    def construct(self, x, hx):
        self._check_step(x, hx, "hx")
        d = self._amp_o1_dtype
        gi = _matmul_t(x, self.weight_ih, d)
        gh = _matmul_t(hx, self.weight_hh, d)
        if self.bias_ih is not None:
            gi = gi + self.bias_ih
            gh = gh + self.bias_hh
        i_r, i_i, i_n = _split(gi, 3, d)
        h_r, h_i, h_n = _split(gh, 3, d)
        resetgate = _prim(_m.sigmoid, i_r + h_r, dtype=d)
        inputgate = _prim(_m.sigmoid, i_i + h_i, dtype=d)
        newgate = _prim(_m.tanh, i_n + resetgate * h_n, dtype=d)
        return newgate + inputgate * (hx - newgate)


class LSTMCellOpt(LSTMCell):
    """nn.LSTMCell under O1 (MindSpore's _lstm_cell rewritten)."""

    def construct(self, x, hx):
        if not isinstance(hx, tuple) or len(hx) != 2:
            return LSTMCell.construct(self, x, hx)          # LSTMCell's error for a bad hx
        h, c = hx
        self._check_step(x, h, "hx[0]")
        check_state_tensor("LSTMCell", "hx[1]", c)
        check_shape("LSTMCell", "hx[1]", c, (x.shape[0], self.hidden_size))
        d = self._amp_o1_dtype
        gates = _matmul_t(x, self.weight_ih, d) + _matmul_t(h, self.weight_hh, d)
        if self.bias_ih is not None:
            gates = gates + self.bias_ih + self.bias_hh
        ingate, forgetgate, cellgate, outgate = _split(gates, 4, d)
        ingate = _prim(_m.sigmoid, ingate, dtype=d)
        forgetgate = _prim(_m.sigmoid, forgetgate, dtype=d)
        cellgate = _prim(_m.tanh, cellgate, dtype=d)
        outgate = _prim(_m.sigmoid, outgate, dtype=d)
        cy = (forgetgate * c) + (ingate * cellgate)
        hy = outgate * _prim(_m.tanh, cy, dtype=d)
        return hy, cy


O1_CLASSES = {RNNCell: RNNCellOpt, GRUCell: GRUCellOpt, LSTMCell: LSTMCellOpt}


def make_o1(cell, dtype) -> bool:
    """Give an nn.RNNCell/GRUCell/LSTMCell (exactly that class) its O1 class; False for any
    other Cell."""
    cls = O1_CLASSES.get(type(cell))
    if cls is None:
        return False
    cell.__dict__["_amp_o1_dtype"] = dtype
    cell.__class__ = cls
    return True
