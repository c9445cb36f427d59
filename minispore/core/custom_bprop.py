"""A Cell's own gradient: `bprop(self, *inputs, out, dout)` (MindSpore's custom cell bprop).

While a gradient is being taken, a call of a Cell whose class defines `bprop` runs its forward
with the tape off and is recorded as one op on the tape: its inputs are the call's Tensor
arguments, its outputs the Tensors of what construct returned. The op's bprop calls the user's
`bprop` with the inputs, the output and its sensitivity (nested as construct returned them) and
takes its result as the gradients of the inputs. So that bprop replaces the Cell's automatic
gradient entirely: nothing reaches the Parameters the forward used inside the Cell (their
gradient is zeros), and a higher-order gradient differentiates the user's bprop itself, whose
ops are recorded by an outer gradient like any bprop's.

The same in both modes: in PyNative, `Cell.__call__` hooks here; while a graph is built, the
parser's call_cell does, the forward is parsed, and the user's bprop is parsed too when the
backward runs (the tape works on symbolic tensors).
"""
from __future__ import annotations

from .errors import MinisporeError, ShapeError
from .pynative import TAPE, _tensor, record
from .primitive import OpDef, executor
from .tensor import Tensor


class BpropError(MinisporeError, ValueError, RuntimeError):
    """A Cell's bprop returned the wrong number of gradients (MindSpore raises RuntimeError,
    or ValueError with check_bprop: both catch this)."""


def has_bprop(cell) -> bool:
    return callable(getattr(type(cell), "bprop", None))


def call(cell, args: tuple, kwargs: dict, forward):
    """forward(*args) (the Cell's construct) with the tape off, recorded on the tape as one op
    with the Cell's bprop as its gradient when an argument is being differentiated (when none
    is, nothing inside the Cell is: not even the Parameters it reads)."""
    if not TAPE.depth:
        return forward(*args)
    if kwargs:
        raise TypeError(f"{type(cell).__name__}: a Cell with its own bprop takes its inputs "
                        f"positionally under a gradient (bprop(self, *inputs, out, dout) has no "
                        f"keywords); got keyword argument(s) {sorted(kwargs)}")
    depth, TAPE.depth = TAPE.depth, 0           # the forward's own ops are not differentiated
    try:
        out = forward(*args)
    finally:
        TAPE.depth = depth
    if not any(isinstance(a, Tensor) and a._node is not None for a in args):
        return out
    flat: list = []
    out = _alias_outputs(out, flat)
    if not flat:
        return out
    template = _template(out)
    tensor_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    others = tuple((i, a) for i, a in enumerate(args) if not isinstance(a, Tensor))
    layout = (("cell", cell, object), ("n_args", len(args), int), ("tensor_pos", tensor_pos, tuple),
              ("others", others, tuple), ("template", template, object), ("n_flat", len(flat), int))
    res = tuple(flat) if len(flat) > 1 else flat[0]
    record(_OP, layout, tuple(args[i] for i in tensor_pos), res)
    b = executor.current
    refs = getattr(b, "refs", None)
    if refs is not None:                        # a graph being built: control flow looks here
        for t in flat:
            refs[t._buf.id] = t._node
    return out


def _alias_outputs(out, flat: list):
    """out with each Tensor replaced by a new one on the same buffer (appended to flat), so
    recording the op never rebinds the tape identity of a tensor the forward returned as is."""
    if isinstance(out, Tensor):
        t = _tensor(out._buf, out.shape, out.dtype, None)
        flat.append(t)
        return t
    if isinstance(out, (tuple, list)):
        return type(out)(_alias_outputs(o, flat) for o in out)
    if isinstance(out, dict):
        return {k: _alias_outputs(v, flat) for k, v in out.items()}
    return out


class _Slot:
    """Where a Tensor of the output was (the template holds no tensors: it is an attribute)."""
    __slots__ = ()


_SLOT = _Slot()


def _template(out):
    if isinstance(out, Tensor):
        return _SLOT
    if isinstance(out, (tuple, list)):
        return type(out)(_template(o) for o in out)
    if isinstance(out, dict):
        return {k: _template(v) for k, v in out.items()}
    return out


def _rebuild(template, it, sens: bool):
    """template's structure with its Tensors taken from `it` in order; in a sensitivity, a
    number the forward returned has the sensitivity 0."""
    if template is _SLOT:
        return next(it)
    if isinstance(template, (tuple, list)):
        return type(template)(_rebuild(o, it, sens) for o in template)
    if isinstance(template, dict):
        return {k: _rebuild(v, it, sens) for k, v in template.items()}
    if sens and isinstance(template, (bool, int, float)):
        return type(template)(0)
    return template


def _bprop(ins, out, dout, cell, n_args, tensor_pos, others, template, n_flat):
    from .ops.array import zeros
    outs = list(out) if n_flat > 1 else [out]
    douts = list(dout) if n_flat > 1 else [dout]
    douts = [d if d is not None else zeros(o.shape, o.dtype) for d, o in zip(douts, outs)]
    args: list = [None] * n_args
    for i, t in zip(tensor_pos, ins):
        args[i] = t
    for i, a in others:
        args[i] = a
    o = _rebuild(template, iter(outs), False)
    d = _rebuild(template, iter(douts), True)
    name = type(cell).__name__
    b = executor.current
    parser = getattr(b, "parser", None)
    if parser is not None:                      # building a graph: the user's bprop is parsed
        grads = parser.call_function(type(cell).bprop, (cell, *args, o, d))
    else:
        grads = cell.bprop(*args, o, d)
    if isinstance(grads, Tensor) and n_args == 1:
        grads = (grads,)
    if not isinstance(grads, (tuple, list)) or len(grads) != n_args:
        got = f"{len(grads)} value(s)" if isinstance(grads, (tuple, list)) else \
            type(grads).__name__
        raise BpropError(f"{name}.bprop must return a tuple of one gradient per input "
                         f"({n_args}: {name}.bprop(self, *inputs, out, dout)), got {got}")
    result = []
    for k, (i, x) in enumerate(zip(tensor_pos, ins)):
        g = grads[i]
        if not isinstance(g, Tensor):
            raise TypeError(f"{name}.bprop: the gradient of input {i} (a Tensor of shape "
                            f"{x.shape}, {x.dtype}) must be a Tensor, got {type(g).__name__}")
        if tuple(g.shape) != tuple(x.shape):
            raise ShapeError(f"{name}.bprop: the gradient of input {i} has shape {g.shape}, the "
                             f"input has shape {x.shape}; they must match")
        result.append(g)
    return tuple(result)


_OP = OpDef("CellBprop", infer=None, ref=None, bprop=_bprop, arity=None)
