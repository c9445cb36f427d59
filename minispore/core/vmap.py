"""`ms.vmap(fn, in_axes=0, out_axes=0)` (also `ops.vmap`): fn vectorised over a batch axis.

The general form, for any fn: the batched inputs are split along their `in_axes` into
axis_size slices, fn runs once per slice (inside a graph the loop unrolls at compile time), and
each output is stacked along its `out_axes`. It is differentiable both ways round (grad of a
vmap, vmap of a grad) because it is made of ordinary ops. As MindSpore 2.10:

- in_axes: an int or None for every input, or a tuple/list with one entry per positional
  argument, nested like a tuple/list argument; an int entry batches every Tensor below it.
  A single None (no input batched) is an error; so is an axis out of range, a batched Python
  value, or batched inputs whose axis sizes differ.
- out_axes: an int for every output, or a tuple/list nested like the outputs. None keeps an
  output unbatched, allowed (as in MindSpore) only for an output that does not depend on the
  batch: in a graph, no IR value computed from a batched input reaches it; in PyNative, each
  slice gave the same Tensor or equal values.
- fn takes positional arguments only (MindSpore raises on keywords too); outputs are Tensors,
  numbers (broadcast to the batch as MindSpore does: an int becomes int64) or tuples/lists of
  them. A CellList (MindSpore's model ensembling) is not supported.
- In GRAPH_MODE a vmap called from Python compiles fn's batch as one graph, as MindSpore does.
"""
from __future__ import annotations

import numpy as np

from . import context
from .cells import is_cell
from .primitive import executor
from .pynative import TAPE
from .tensor import Tensor


class VmapError(RuntimeError):
    """A vmap argument MindSpore refuses (it raises RuntimeError)."""


def vmap(fn, in_axes=0, out_axes=0):
    """Return fn vectorised over the batch axis `in_axes` of its inputs (MindSpore's vmap)."""
    if type(fn).__name__ == "CellList" and is_cell(fn):
        raise NotImplementedError("vmap: a CellList (model ensembling) is not supported by "
                                  "minispore; vmap a function or a single Cell")
    if not callable(fn):
        raise TypeError(f"vmap: 'fn' must be callable, got {type(fn).__name__}")
    _check_axes(in_axes, "in_axes")
    _check_axes(out_axes, "out_axes")
    if in_axes is None:
        raise VmapError("The 'in_axes' of 'vmap' cannot be a single None while 'fn' is not a "
                        "'CellList'.")
    if out_axes is None:
        raise VmapError("The 'out_axes' of 'vmap' cannot be a single None while 'fn' is not a "
                        "'CellList'.")
    name = f"vmap_{getattr(fn, '__name__', type(fn).__name__)}"

    def compute(*args):
        return _run(fn, args, in_axes, out_axes)

    def wrapper(*args, **kwargs):
        if kwargs:
            raise TypeError(f"vmap: Got an unexpected keyword argument "
                            f"{sorted(kwargs)[0]!r}; the vectorised function takes its "
                            f"inputs positionally")
        if context._state["mode"] == context.GRAPH_MODE and \
                getattr(executor.current, "parser", None) is None and not TAPE.depth:
            from .graph import compile as graph_compile
            return graph_compile.run(compute, args, {}, parse=False, name=name)
        return compute(*args)
    wrapper.__name__ = name
    return wrapper


def _check_axes(axes, what):
    if axes is None or (isinstance(axes, int) and not isinstance(axes, bool)):
        return
    if isinstance(axes, (tuple, list)):
        for a in axes:
            _check_axes(a, what)
        return
    raise VmapError(f"The axis in vmap's '{what}' should be a None or a scalar of type "
                    f"Int64Imm, but got a {axes!r}.")


def _norm_axis(axis, ndim, what):
    if not -ndim <= axis < ndim:
        raise VmapError(f"The axis: {axis} in '{what}' is out of bounds for array of dimension "
                        f"[{-ndim},{ndim}).")
    return axis % ndim


def _bind_in(arg, axes, sizes: list):
    """arg with every batched Tensor replaced by ('B', tensor, axis); sizes gets each batched
    tensor's axis size."""
    if isinstance(arg, (tuple, list)):
        if isinstance(axes, (tuple, list)):
            if len(axes) != len(arg):
                raise VmapError(f"The 'in_axes' entry {axes!r} has {len(axes)} item(s) for an "
                                f"argument of {len(arg)} item(s).")
            return type(arg)(_bind_in(a, x, sizes) for a, x in zip(arg, axes))
        return type(arg)(_bind_in(a, axes, sizes) for a in arg)
    if isinstance(axes, (tuple, list)):
        raise VmapError(f"The 'in_axes' entry {axes!r} is a sequence, but its argument is a "
                        f"{type(arg).__name__}.")
    if axes is None:
        return arg
    if not isinstance(arg, Tensor):
        raise VmapError(f"The orig_abs should be AbstractTensor when corresponding axis is "
                        f"{axes}, but got a {type(arg).__name__} ({arg!r}). Check the "
                        f"correspondence between vmap's 'in_axes' and the inputs.")
    a = _norm_axis(axes, len(arg.shape), "in_axes")
    sizes.append(arg.shape[a])
    return _Batched(arg, a)


class _Batched:
    __slots__ = ("slices", "tensor", "axis")

    def __init__(self, tensor, axis):
        self.tensor, self.axis, self.slices = tensor, axis, None


def _slice(arg, i):
    if isinstance(arg, _Batched):
        if arg.slices is None:
            from .ops.array import split, squeeze
            parts = split(arg.tensor, 1, arg.axis)
            arg.slices = [squeeze(p, arg.axis) for p in parts]
        return arg.slices[i]
    if isinstance(arg, (tuple, list)):
        return type(arg)(_slice(a, i) for a in arg)
    return arg


def _caller(fn):
    parser = getattr(executor.current, "parser", None)
    if parser is not None:
        from .graph.parser import is_user_function
        if is_user_function(fn):
            return lambda *a: parser.call_function(fn, a)
    return fn


def _run(fn, args, in_axes, out_axes):
    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) != len(args):
            raise VmapError(f"When vmap`s 'in_axes' is a tuple or list, and its size must be "
                            f"equal to the number of arguments of 'fn': {len(args)}, but got "
                            f"size: {len(in_axes)}.")
    sizes: list = []
    if isinstance(in_axes, (tuple, list)):
        bound = [_bind_in(a, x, sizes) for a, x in zip(args, in_axes)]
    else:
        bound = [_bind_in(a, in_axes, sizes) for a in args]
    if not sizes:
        raise VmapError("vmap: no input is batched: 'in_axes' must give a batch axis to at "
                        "least one Tensor input.")
    if any(s != sizes[0] for s in sizes):
        other = next(s for s in sizes if s != sizes[0])
        raise VmapError(f"The 'axis_size' of each argument in the scope of 'vmap' should be "
                        f"equal, but got {sizes[0]} and {other}.")
    call = _caller(fn)
    b = executor.current if getattr(executor.current, "parser", None) is not None else None
    start = len(b.graph.nodes) if b is not None else 0
    outs = [call(*[_slice(a, i) for a in bound]) for i in range(sizes[0])]
    batched = _batched_values(b, start, bound) if b is not None else None
    return _stack_out(outs, out_axes, batched)


def _batched_values(b, start: int, bound) -> set:
    """Inside a graph being built: the ids of the IR values computed from a batched input
    since node `start` (a node with a region counts as computed from the batch)."""
    tainted = set()

    def inputs_of(arg):
        if isinstance(arg, _Batched):
            tainted.add(b.value_of(arg.tensor).id)
        elif isinstance(arg, (tuple, list)):
            for a in arg:
                inputs_of(a)
    for a in bound:
        inputs_of(a)
    for n in b.graph.nodes[start:]:
        if n.subgraphs or any(v.id in tainted for v in n.inputs):
            tainted.update(v.id for v in n.outputs)
    return tainted


def _stack_out(outs: list, axes, batched=None):
    first = outs[0]
    if isinstance(first, (tuple, list)):
        if any(not isinstance(o, (tuple, list)) or len(o) != len(first) for o in outs):
            raise VmapError("vmap: fn returned outputs of different structures for different "
                            "slices of the batch")
        if isinstance(axes, (tuple, list)):
            if len(axes) != len(first):
                raise VmapError(f"The 'out_axes' {axes!r} has {len(axes)} item(s) for "
                                f"{len(first)} output(s).")
            parts = [_stack_out([o[k] for o in outs], axes[k], batched)
                     for k in range(len(first))]
        else:
            parts = [_stack_out([o[k] for o in outs], axes, batched) for k in range(len(first))]
        return tuple(parts) if isinstance(first, tuple) else list(parts)
    if isinstance(axes, (tuple, list)):
        raise VmapError(f"The 'out_axes' entry {axes!r} is a sequence, but the output is a "
                        f"{type(first).__name__}.")
    if isinstance(first, dict):
        raise VmapError("The outputs of vmap's 'fn' should be consisting of tensors or "
                        "constants, but got a dict.")
    tensors = [_as_tensor(o) for o in outs]
    if axes is None:
        return _unbatched(outs, tensors, batched)
    from .ops.array import stack
    a = _norm_axis(axes, len(tensors[0].shape) + 1, "out_axes")
    return stack(tensors, a)


def _as_tensor(o):
    if isinstance(o, Tensor):
        return o
    if isinstance(o, (bool, int, float, np.number)):
        from . import dtype as dt
        d = dt.bool_ if isinstance(o, bool) else dt.int64 if isinstance(o, (int, np.integer)) \
            else dt.float32
        return Tensor(np.array(o), dtype=d)
    raise VmapError(f"The outputs of vmap's 'fn' should be consisting of tensors or constants, "
                    f"but got a {type(o).__name__}.")


def _unbatched(outs, tensors, batched):
    """out_axes None: the output must not depend on the batch."""
    from .graph.builder import is_symbolic
    first = outs[0]
    if all(o is first for o in outs):
        return tensors[0]
    if batched is not None:                     # in a graph: what the IR says it depends on
        if not any(is_symbolic(t) and t._buf.id in batched for t in tensors):
            return tensors[0]
    elif all(np.array_equal(t.asnumpy(), tensors[0].asnumpy(), equal_nan=True)
             for t in tensors[1:]):             # PyNative: the slices gave the same values
        return tensors[0]
    raise VmapError("It is invalid that source is not None and dst is None: an output with "
                    "out_axes None depends on the batch.")
