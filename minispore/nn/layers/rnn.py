"""Recurrent layers: nn.RNN, nn.GRU, nn.LSTM (multi-layer, bidirectional, batch_first,
seq_length), with MindSpore 2.10's arguments, Parameters and results.

- Arguments, in MindSpore's positional order: input_size, hidden_size, num_layers=1,
  has_bias=True, batch_first=False, dropout=0.0, bidirectional=False, dtype=float32; nn.RNN
  also takes nonlinearity='tanh' ('relu'), by keyword only (MindSpore's RNN(*args, **kwargs)
  passes only the others on positionally). dropout must be a float in [0, 1).
- Parameters: weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, with the suffix
  `_reverse` for the backward direction, listed (as MindSpore lists them) all weight_ih first,
  then weight_hh, bias_ih, bias_hh; also reachable as the ParameterTuples w_ih_list, w_hh_list,
  b_ih_list, b_hh_list. Each is drawn with numpy's global generator from
  U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) in MindSpore's order (per layer, per direction:
  w_ih, w_hh, b_ih, b_hh), so after the same np.random.seed the initial weights equal
  MindSpore's bit for bit.
- construct(x, hx=None, seq_length=None): x (seq_len, batch, input_size), or (batch, seq_len,
  input_size) with batch_first; hx (num_layers * num_directions, batch, hidden_size), for LSTM
  the tuple (h_0, c_0), zeros when None; seq_length an int32/int64 (batch,) Tensor. Returns
  (output, h_n), for LSTM (output, (h_n, c_n)); output has num_directions * hidden_size
  features, the directions concatenated (forward first).
- seq_length, as MindSpore: at steps t >= seq_length[b] the state of batch entry b is kept and
  its output is zero, so h_n is the state after its last valid step; the backward direction
  runs over each entry's first seq_length[b] steps in reverse (MindSpore reverses each
  sequence with ReverseSequence, runs forward and reverses back: the same numbers).
- dropout is applied to the output of every layer but the last, in training only
  (set_train()), by the sub-Cell dropout_op (an nn.Dropout), as MindSpore does. Printed,
  a layer shows no settings of its own, as MindSpore's does.
- The weights are cast to x's dtype; a float64 x runs in float64 (as MindSpore, which checks
  hx's dtype, float32/float16 and equal to x's, only when hx is given).

Each direction of each layer projects the whole sequence in one matmul (x @ w_ih.T + b_ih)
and loops over time for the hidden projection only, with the step functions of rnn_cells.py.
The construct is a library Cell's: in GRAPH_MODE it runs as Python while the graph is built,
so the time loop is unrolled into the graph; in PyNative it runs step by step."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ...core import dtype as dt
from ...core.arg_checks import check_bool
from ...core.errors import ShapeError, at_user_site
from ...core.ops import array as _a
from ...core.ops import math as _m
from ...core.tensor import Parameter, ParameterTuple, Tensor
from ..cell import Cell
from .basic import check_positive_int
from .normalization import Dropout
from .rnn_cells import (CELL_DTYPES, check_nonlinearity, check_shape, check_state_tensor,
                        gru_step, input_projection, lstm_step, rnn_step)

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


class _RNNBase(Cell):
    """The layers' common machinery; `mode` is RNN_TANH, RNN_RELU, GRU or LSTM."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, has_bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, dtype=dt.float32):
        super().__init__()
        who = type(self).__name__
        self.hidden_size = check_positive_int(who, "hidden_size", hidden_size)
        self.input_size = check_positive_int(who, "input_size", input_size)
        self.num_layers = check_positive_int(who, "num_layers", num_layers)
        if not isinstance(dropout, float):
            example = float(dropout) if isinstance(dropout, int) else 0.0
            raise TypeError(f"{who}: dropout must be a float (as in MindSpore, where an int "
                            f"is refused too), got {type(dropout).__name__} {dropout!r}; "
                            f"write e.g. dropout={example}")
        self.has_bias = check_bool(who, "has_bias", has_bias)
        self.batch_first = check_bool(who, "batch_first", batch_first)
        self.bidirectional = check_bool(who, "bidirectional", bidirectional)
        if not 0 <= dropout < 1:
            raise ValueError(f"{who}: dropout must be in [0, 1): the probability of zeroing an "
                             f"element of a layer's output, got {dropout}")
        if dropout > 0 and self.num_layers == 1:
            warnings.warn(f"{who}: dropout is applied after every recurrent layer but the last, "
                          f"so dropout={dropout} with num_layers=1 does nothing", stacklevel=3)
        self.mode = mode
        self.is_lstm = mode == "LSTM"
        self.dropout = dropout
        self.dropout_op = Dropout(p=float(dropout))
        num_directions = 2 if self.bidirectional else 1
        gate_size = _GATES[mode] * self.hidden_size
        dtype = dt.to_dtype(dtype)
        stdv = 1 / math.sqrt(self.hidden_size)

        def draw(shape, name):
            # numpy's global generator, in MindSpore's order: its init is then reproduced exactly
            arr = np.random.uniform(-stdv, stdv, shape).astype(np.float32)
            return Parameter(Tensor(arr, dtype=dtype), name=name)

        lists = {"w_ih": [], "w_hh": [], "b_ih": [], "b_hh": []}
        for layer in range(self.num_layers):
            for direction in range(num_directions):
                layer_input = self.input_size if layer == 0 else self.hidden_size * num_directions
                suffix = f"l{layer}" + ("_reverse" if direction == 1 else "")
                lists["w_ih"].append(draw((gate_size, layer_input), f"weight_ih_{suffix}"))
                lists["w_hh"].append(draw((gate_size, self.hidden_size), f"weight_hh_{suffix}"))
                if self.has_bias:
                    lists["b_ih"].append(draw((gate_size,), f"bias_ih_{suffix}"))
                    lists["b_hh"].append(draw((gate_size,), f"bias_hh_{suffix}"))
        for key in ("w_ih", "w_hh", "b_ih", "b_hh"):       # MindSpore's listing order
            for p in lists[key]:
                setattr(self, p.name, p)
        self.w_ih_list = ParameterTuple(lists["w_ih"])
        self.w_hh_list = ParameterTuple(lists["w_hh"])
        self.b_ih_list = ParameterTuple(lists["b_ih"])
        self.b_hh_list = ParameterTuple(lists["b_hh"])

    # -- checks ---------------------------------------------------------------------------------
    def _check_inputs(self, x, hx, seq_length):
        who = type(self).__name__
        if not isinstance(x, Tensor):
            raise at_user_site(TypeError(f"{who}: x must be a Tensor, got "
                                         f"{type(x).__name__}"))
        if not x.dtype.is_float:
            raise at_user_site(TypeError(
                f"{who}: x must be a float Tensor, got {x.dtype} (MindSpore fails in its "
                f"Sigmoid/Tanh kernels); cast it with x.astype(mindspore.float32)"))
        layout = "(batch, seq_len, input_size)" if self.batch_first else \
            "(seq_len, batch, input_size)"
        if len(x.shape) != 3 or x.shape[-1] != self.input_size:
            raise at_user_site(ShapeError(
                f"{who}: x has shape {tuple(x.shape)}, expected {layout} with input_size="
                f"{self.input_size}; an unbatched sequence needs a batch axis "
                f"(x.expand_dims({0 if self.batch_first else 1}))"))
        batch, steps = (x.shape[0], x.shape[1]) if self.batch_first else (x.shape[1], x.shape[0])
        if steps == 0:
            raise at_user_site(ShapeError(f"{who}: x has shape {tuple(x.shape)}: a sequence "
                                          f"of 0 steps; pass at least one time step"))
        state_shape = (self.num_layers * (2 if self.bidirectional else 1), batch,
                       self.hidden_size)
        if hx is not None:
            if self.is_lstm:
                if not isinstance(hx, tuple) or len(hx) != 2:
                    raise at_user_site(TypeError(
                        f"{who}: hx must be a tuple (h_0, c_0) of two Tensors, got "
                        f"{type(hx).__name__}"
                        f"{f' of length {len(hx)}' if isinstance(hx, (tuple, list)) else ''}"))
                states = (("hx[0]", hx[0]), ("hx[1]", hx[1]))
            else:
                states = (("hx", hx),)
            for name, h in states:
                check_state_tensor(who, name, h, CELL_DTYPES)
                if h.dtype != x.dtype or x.dtype not in CELL_DTYPES:
                    raise at_user_site(TypeError(
                        f"{who}: x ({x.dtype}) and {name} ({h.dtype}) must have one dtype, "
                        f"float32 or float16, when hx is given (as in MindSpore)"))
                check_shape(who, name, h, state_shape)
        if seq_length is not None:
            if not isinstance(seq_length, Tensor) or seq_length.dtype not in (dt.int32, dt.int64):
                raise at_user_site(TypeError(
                    f"{who}: seq_length must be an int32 or int64 Tensor of shape (batch,), got "
                    f"{getattr(seq_length, 'dtype', type(seq_length).__name__)}"))
            if tuple(seq_length.shape) != (batch,):
                raise at_user_site(ValueError(
                    f"{who}: seq_length has shape {tuple(seq_length.shape)}, expected "
                    f"({batch},): one length per batch entry of x"))
        return state_shape

    # -- running --------------------------------------------------------------------------------
    def _weights(self, index, dtype):
        ws = [self.w_ih_list[index], self.w_hh_list[index]]
        ws += [self.b_ih_list[index], self.b_hh_list[index]] if self.has_bias else [None, None]
        return [w if w is None or w.dtype == dtype else _m.cast(w, dtype) for w in ws]

    def _step(self, gi, state, w_hh, b_hh):
        if self.is_lstm:
            return lstm_step(gi, state[0], state[1], w_hh, b_hh)
        if self.mode == "GRU":
            return gru_step(gi, state, w_hh, b_hh)
        return rnn_step(gi, state, w_hh, b_hh, "tanh" if self.mode == "RNN_TANH" else "relu")

    def _direction(self, x, state, weights, masks, reverse):
        """One direction of one layer over x (T, B, F): (outputs (T, B, H), final state)."""
        w_ih, w_hh, b_ih, b_hh = weights
        steps, batch = x.shape[0], x.shape[1]
        if b_ih is not None and self.mode != "GRU":
            # b_hh enters RNN and LSTM gates only as a sum with b_ih: add it once per sequence
            # (GRU scales b_hn by the reset gate, so it stays in the step)
            b_ih, b_hh = b_ih + b_hh, None
        gi = input_projection(x, w_ih, b_ih)                    # the whole sequence at once
        gis = [_a.reshape(g, (batch, gi.shape[-1])) for g in _a.split(gi, 1, axis=0)] \
            if steps > 1 else [_a.reshape(gi, (batch, gi.shape[-1]))]
        outputs = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            new = self._step(gis[t], state, w_hh, b_hh)
            h_new = new[0] if self.is_lstm else new
            if masks is None:
                state, outputs[t] = new, h_new
                continue
            valid = masks[t]                                    # (B, 1): t < seq_length[b]
            if self.is_lstm:
                state = (_m.where(valid, new[0], state[0]), _m.where(valid, new[1], state[1]))
            else:
                state = _m.where(valid, new, state)
            outputs[t] = _m.where(valid, h_new, 0.0)
        return _a.stack(outputs, 0), state

    def construct(self, x, hx=None, seq_length=None):
        state_shape = self._check_inputs(x, hx, seq_length)
        dtype = x.dtype
        if self.batch_first:
            x = _a.transpose(x, (1, 0, 2))
        steps, batch = x.shape[0], x.shape[1]
        n_states = state_shape[0]
        if hx is None:
            zeros = _a.zeros(state_shape, dtype)
            hx = (zeros, zeros) if self.is_lstm else zeros

        def per_layer(h):
            parts = _a.split(h, 1, axis=0) if n_states > 1 else [h]
            return [_a.reshape(p, (batch, self.hidden_size)) for p in parts]
        h0 = per_layer(hx[0]) if self.is_lstm else per_layer(hx)
        c0 = per_layer(hx[1]) if self.is_lstm else None
        masks = None
        if seq_length is not None:
            lengths = _a.reshape(_m.cast(seq_length, dt.int64), (1, batch, 1))
            times = _a.reshape(_a.arange(0, steps, 1, dtype=dt.int64), (steps, 1, 1))
            valid = _m.less(times, lengths)                     # (T, B, 1)
            masks = [_a.reshape(v, (batch, 1)) for v in _a.split(valid, 1, axis=0)] \
                if steps > 1 else [_a.reshape(valid, (batch, 1))]
        num_directions = 2 if self.bidirectional else 1
        layer_input, h_n, c_n = x, [], []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                state = (h0[k], c0[k]) if self.is_lstm else h0[k]
                out, state = self._direction(layer_input, state, self._weights(k, dtype), masks,
                                             reverse=direction == 1)
                outs.append(out)
                h_n.append(state[0] if self.is_lstm else state)
                if self.is_lstm:
                    c_n.append(state[1])
            output = outs[0] if num_directions == 1 else _a.concat(outs, 2)
            if self.dropout != 0 and layer < self.num_layers - 1:
                layer_input = self.dropout_op(output)
            else:
                layer_input = output
        if self.batch_first:
            output = _a.transpose(output, (1, 0, 2))
        h_n = _a.stack(h_n, 0)
        if self.is_lstm:
            return output, (h_n, _a.stack(c_n, 0))
        return output, h_n


class RNN(_RNNBase):
    """A multi-layer Elman RNN: h_t = act(x_t @ w_ih.T + b_ih + h_(t-1) @ w_hh.T + b_hh), act
    'tanh' (default) or 'relu' (keyword only, as MindSpore). See the module docstring for the
    arguments, Parameters, inputs and results."""

    def __init__(self, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=dt.float32, *, nonlinearity="tanh"):
        check_nonlinearity("RNN", nonlinearity)
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, has_bias, batch_first, dropout, bidirectional,
                         dtype)
        self.nonlinearity = nonlinearity


class GRU(_RNNBase):
    """A multi-layer GRU (gates r, z, n as MindSpore: n = tanh(W_in x + b_in + r * (W_hn h +
    b_hn)), h' = (1 - z) * n + z * h). See the module docstring."""

    def __init__(self, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=dt.float32):
        super().__init__("GRU", input_size, hidden_size, num_layers, has_bias, batch_first,
                         dropout, bidirectional, dtype)


class LSTM(_RNNBase):
    """A multi-layer LSTM (gates i, f, g, o as MindSpore); hx and the final state are the
    tuples (h, c). See the module docstring."""

    def __init__(self, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=dt.float32):
        super().__init__("LSTM", input_size, hidden_size, num_layers, has_bias, batch_first,
                         dropout, bidirectional, dtype)


__all__ = ["RNN", "GRU", "LSTM"]
