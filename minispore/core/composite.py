"""Running a composite op: an op declared with `defop(..., composite=impl)` whose `impl` is
written with other ops (primitives or composites), so it needs no kernel on any backend.

`run(op, inputs, attrs)` is what `primitive.apply` does for a composite, under every executor:
Python-scalar operands become tensors by the composite's own promotion rule, the composite's
`infer` runs (so a bad call raises the composite's error, under its name, in PyNative and in
graph mode alike), then `impl` runs its parts through the current executor. Eagerly the parts
launch their kernels; while a graph is built they become the graph's nodes, so graph passes
fuse them and every jit level and backend runs them as they run any primitive: the composite
itself never reaches the IR or a backend.

Autodiff: a composite without a bprop is differentiated through its parts (the tape records
them). A composite that declares a bprop runs its parts with the tape paused and is recorded as
one tape node, whose bprop the backward pass calls; a non-differentiable composite runs its
parts untaped (its outputs carry no gradient). The gradient of a tensor `if`/`while` in a
compiled graph replays the branch's IR (graph/cf_grad.py), which holds the parts: the graph
builder notes where it expanded a composite with a bprop (`note_composite`), and the replay
applies that composite again there, so its bprop gives those gradients too, as in PyNative.
"""
from __future__ import annotations

from .primitive import Meta, OpDef, attrs_dict, executor
from .pynative import EAGER, TAPE, op_inputs, record, tensor_dtype, to_tensor
from .tensor import Tensor


def run(op: OpDef, inputs: tuple, attrs: tuple):
    """Run (or, while tracing, expand) composite `op` on `inputs` with normalised `attrs`."""
    if len(inputs) == 1 and inputs[0].__class__ is Tensor and op.arity == 1:
        x = inputs[0]                       # the common call: one plain tensor
        ts, key = inputs, (attrs, x.shape, x.dtype)
    else:
        ts = _tensors(op, inputs)
        key = (attrs,) + tuple([(t.shape, t.dtype) for t in ts])
    kw = attrs_dict(attrs) if attrs else None
    # infer once per signature (an eager loop calls the op again and again): it raises the
    # composite's own shape/dtype errors, and the first run checks the parts against it
    meta = op.meta_cache.get(key)
    fresh = meta is None
    if fresh:
        meta = op.infer(*ts, **kw) if kw else op.infer(*ts)
    if op.bprop is None and op.differentiable:
        out = op.composite(*ts, **kw) if kw else op.composite(*ts)
    else:
        depth = TAPE.depth
        if depth:                   # a write is dearer than a read: only when recording
            TAPE.depth = 0
            try:
                out = op.composite(*ts, **kw) if kw else op.composite(*ts)
            finally:
                TAPE.depth = depth
        else:
            out = op.composite(*ts, **kw) if kw else op.composite(*ts)
        if op.bprop is not None and (depth or executor.current is not EAGER):
            _taped(op, attrs, ts, out, depth)
    if fresh:
        _check(op, out, meta)
        if len(op.meta_cache) > 4096:
            op.meta_cache.clear()
        op.meta_cache[key] = meta
    return out


def _taped(op: OpDef, attrs: tuple, ts: tuple, out, depth: int) -> None:
    """A composite with a declared bprop after its untaped parts ran: one tape node while a
    gradient is taken and an input is tracked; while a graph is built, the builder also notes
    the expansion (a loop body is traced untaped, and its gradient replays it)."""
    ex = executor.current
    tracked = depth and any(t._node is not None for t in ts)
    if ex is EAGER:
        if tracked:
            record(op, attrs, ts, out)
        return
    if tracked:
        ex.tape_node(op, attrs, ts, out)     # the tape identities of graph values too
    ex.note_composite(op, attrs, ts, out)


def _tensors(op: OpDef, inputs: tuple) -> tuple:
    """The operands as tensors: arity checked, a variadic op's sequence unpacked, Python scalars
    promoted by the composite's own rule (as the executors do for a primitive)."""
    inputs = op_inputs(op, inputs)
    for x in inputs:
        if not isinstance(x, Tensor):
            ref = tensor_dtype(op, inputs)
            return tuple(to_tensor(op, y, ref) for y in inputs)
    return inputs


def _check(op: OpDef, out, meta) -> None:
    """The parts must produce what the composite's infer declares: a disagreement is a bug in
    the declaration, named here rather than surfacing as a wrong dtype later."""
    outs = out if isinstance(out, tuple) else (out,)
    metas = (meta,) if isinstance(meta, Meta) else tuple(meta)
    if len(outs) != len(metas) or any(
            tuple(o.shape) != tuple(m.shape) or o.dtype is not m.dtype
            for o, m in zip(outs, metas)):
        got = ", ".join(f"{o.dtype}{tuple(o.shape)}" for o in outs)
        want = ", ".join(f"{m.dtype}{tuple(m.shape)}" for m in metas)
        raise RuntimeError(f"composite {op.name}: its parts produced {got}, its infer "
                           f"declares {want}")
