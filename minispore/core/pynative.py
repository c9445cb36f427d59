"""The eager (PyNative) executor and the autodiff tape.

`EagerExecutor.apply` is the hot path of every op outside a compiled graph: convert Python scalars,
look up the cached plan for (op, attrs, input shapes/dtypes) on the current backend (infer + kernel
lookup happen once per signature), launch, wrap the output, and record a TapeNode only while a
gradient is being taken (`TAPE.depth > 0`) and an input is being tracked.

Tape: a tracked tensor's `_node` is a Leaf (an input being differentiated) or a (TapeNode, index)
tuple. A node keeps its inputs as (buffer, shape, dtype, _node) records and its outputs as
(buffer, shape, dtype): buffers are immutable, so a later `__setitem__` that rebinds a tensor
cannot change what the backward pass sees, and nothing points back from a node to its outputs, so
the tape has no reference cycles and is freed by refcounting alone (cycles made every recorded op
pay for the garbage collector). `backward` walks the nodes reachable from the outputs in reverse
topological order and chains each op's bprop, itself run through this executor, so the ops it
runs are recorded when an outer gradient is active (grad of grad). When nothing records, a tape
whose structure repeats (a training loop) is handed to bprop_graph instead, which runs the same
bprops as one compiled program.
"""
from __future__ import annotations

from operator import itemgetter

import numpy as np

from . import context
from . import dtype as dt
from .device import current, get_backend
from .primitive import ELEMENTWISE, Meta, OpDef, attrs_dict, executor
from .tensor import Tensor, to_numpy
from .thread_state import per_thread


class Leaf:
    """The tape identity of an input being differentiated."""
    __slots__ = ("__weakref__",)


class TapeNode(tuple):
    """One recorded op: TapeNode((op, attrs, inputs, outputs)). A tuple (made in C: recording
    is on every op's path inside a gradient) compared and hashed by identity, as the tape's
    dicts key on nodes; its fields are read by name."""
    __slots__ = ()
    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    op = property(itemgetter(0))
    attrs = property(itemgetter(1))
    inputs = property(itemgetter(2))
    outputs = property(itemgetter(3))


# Whether this thread is taking a gradient (depth > 0): per thread, so that another thread's ops
# are not recorded on this thread's tape, and a graph build or composite in another thread that
# sets the depth to 0 for a while cannot switch this thread's recording off (thread_state.py).
TAPE = per_thread("Tape", "depth > 0 while this thread takes a gradient.", depth=0)


def _tensor(buf, shape, dtype, ref) -> Tensor:
    t = Tensor.__new__(Tensor)
    t._buf, t.shape, t.dtype, t._node = buf, shape, dtype, ref
    return t


def _wrap(buf, meta) -> Tensor:
    t = Tensor.__new__(Tensor)
    t._buf, t.shape, t.dtype, t._node = buf, meta.shape, meta.dtype, None
    return t


SCALARS = (bool, int, float, np.number, np.bool_)


def op_inputs(op: OpDef, inputs: tuple) -> tuple:
    """The operands of a call: a variadic op's one sequence unpacked, the arity checked (shared
    by the eager executor and the graph builder, so both modes raise the same error)."""
    if op.arity is None and len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    if op.arity is not None and len(inputs) != op.arity:
        raise TypeError(f"{op.name}: takes {op.arity} tensor input(s), got {len(inputs)}")
    return inputs


def tensor_dtype(op: OpDef, inputs) -> dt.DType | None:
    """The promoted dtype of the Tensor operands of an elementwise op: what a Python scalar
    operand is promoted against. None for any other op: its scalars take their own dtype, and
    its operands need not promote together (gather's UInt32 params with Int64 indices)."""
    if op.kind != ELEMENTWISE:
        return None
    ref = None
    for y in inputs:
        if isinstance(y, Tensor):
            ref = y.dtype if ref is None else dt.promote(ref, y.dtype)
    return ref


def scalar_operand_dtype(op: OpDef, value, ref_dtype) -> dt.DType:
    """MindSpore's rule for a Python scalar operand: promoted against the tensor operands of an
    elementwise op, its own default dtype otherwise."""
    if ref_dtype is not None and op.kind == ELEMENTWISE:
        return dt.promote_with_scalar(ref_dtype, value)
    return dt.scalar_dtype(value)

# Python-scalar operands as 0-d tensors, memoised: buffers are immutable and these tensors are
# never handed to user code, so sharing them is safe (x * 2 in a loop converts 2 once).
_scalars: dict = {}


def to_tensor(op: OpDef, x, ref_dtype) -> Tensor:
    """An op input that is not a Tensor: a Python scalar takes MindSpore's scalar promotion
    against the op's tensor inputs; arrays and nested lists become tensors."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, SCALARS):
        d = scalar_operand_dtype(op, x, ref_dtype)
        if x == 0 and isinstance(x, float):      # -0.0 == 0.0: never share a signed zero
            return Tensor(to_numpy(x, d))
        key = (x.__class__, x, d)
        t = _scalars.get(key)
        if t is None:
            if len(_scalars) > 1024:
                _scalars.clear()
            t = _scalars[key] = Tensor(to_numpy(x, d))
        return t
    if isinstance(x, (np.ndarray, list, tuple)):
        return Tensor(x)
    raise TypeError(f"{op.name}: expected a Tensor or a number as input, got "
                    f"{type(x).__name__}")


class EagerExecutor:
    @staticmethod
    def backend():
        b = current.backend
        if b is None:
            b = current.backend = get_backend(context._state["device_target"])
        return b

    # the side-effect protocol every executor implements (core/ops/state.py)
    @staticmethod
    def assign_parameter(variable, value):
        """ops.assign in PyNative: the Parameter takes the value now; returns the Parameter."""
        if isinstance(value, Tensor):
            if tuple(value.shape) != tuple(variable.shape):
                from .errors import ShapeError
                raise ShapeError(f"assign: Parameter '{variable.name}' has shape "
                                 f"{variable.shape}, the value has shape {value.shape}; they "
                                 f"must match")
            if value.dtype is not variable.dtype:
                value = value.astype(variable.dtype)
            # buffers are immutable: the Parameter takes the value's buffer where it lives (on
            # a device it stays there; set_data would round-trip through the host)
            variable._buf = value._buf
        else:
            variable.set_data(to_numpy(value, variable.dtype))
        return variable

    @staticmethod
    def print_values(inputs) -> None:
        """ops.Print in PyNative: prints now, one input per line (MindSpore's PyNative Print),
        tensors as their repr Tensor(shape=..., dtype=..., value=...), other values as str."""
        print("\n".join(Tensor.__repr__(a) if isinstance(a, Tensor) else str(a)
                        for a in inputs))           # a Parameter as its values, too

    def apply(self, op: OpDef, inputs: tuple, attrs: tuple):
        ts = inputs = op_inputs(op, inputs)
        for x in inputs:
            if not isinstance(x, Tensor):
                ref = tensor_dtype(op, inputs)
                ts = tuple(to_tensor(op, y, ref) for y in inputs)
                break
        backend = current.backend or self.backend()
        n = len(ts)
        if n == 1:
            x = ts[0]
            key = (op, attrs, x.shape, x.dtype)
        elif n == 2:
            x, y = ts
            key = (op, attrs, x.shape, x.dtype, y.shape, y.dtype)
        else:
            key = (op, attrs) + tuple((t.shape, t.dtype) for t in ts)
        plan = backend.plans.get(key)
        if plan is None:
            plan = self._plan(backend, op, ts, attrs)
            backend.plans[key] = plan
        fn, out_meta = plan
        try:
            if n == 1:
                res = fn(x._buf)
            elif n == 2:
                res = fn(x._buf, y._buf)
            else:
                res = fn(*[t._buf for t in ts])
        except Exception:
            check_devices(op, backend, ts)
            raise
        backend.counters["launches"] += 1
        if out_meta.__class__ is Meta:
            out = _wrap(res, out_meta)
        else:
            out = tuple(_wrap(r, m) for r, m in zip(res, out_meta))
        if TAPE.depth and op.differentiable:
            if n == 1:                          # record(), inlined for the common unary op
                if x._node is not None and out.__class__ is not tuple:
                    out._node = (TapeNode((op, attrs, ((x._buf, x.shape, x.dtype, x._node),),
                                           ((out._buf, out.shape, out.dtype),))), 0)
                elif x._node is not None:
                    record(op, attrs, ts, out)
            else:
                for t in ts:
                    if t._node is not None:
                        record(op, attrs, ts, out)
                        break
        return out

    @staticmethod
    def _plan(backend, op, ts, attrs):
        kw = attrs_dict(attrs)
        out_meta = op.infer(*ts, **kw)         # raises the op's shape/dtype errors
        metas = tuple(Meta(t.shape, t.dtype) for t in ts)
        return backend.kernel(op, metas, kw, out_meta), out_meta

    def binary(self, op: OpDef, a, b):
        """`a (op) b` from Tensor operators (either side may be a Python scalar): the same as
        apply, minus the generic plumbing."""
        if a.__class__ is not Tensor or b.__class__ is not Tensor:
            if isinstance(a, Tensor) and isinstance(b, SCALARS):
                b = to_tensor(op, b, a.dtype)
            elif isinstance(b, Tensor) and isinstance(a, SCALARS):
                a = to_tensor(op, a, b.dtype)
            if a.__class__ is not Tensor or b.__class__ is not Tensor:   # Parameters, arrays
                return self.apply(op, (a, b), ())
        backend = current.backend or self.backend()
        key = (op, a.shape, a.dtype, b.shape, b.dtype)      # flat: cheaper than apply's key
        plan = backend.plans.get(key)
        if plan is None:
            out = self.apply(op, (a, b), ())
            backend.plans[key] = backend.plans[(op, (), a.shape, a.dtype, b.shape, b.dtype)]
            return out
        fn, meta = plan
        t = Tensor.__new__(Tensor)
        try:
            t._buf = fn(a._buf, b._buf)
        except Exception:
            check_devices(op, backend, (a, b))
            raise
        t.shape = meta.shape
        t.dtype = meta.dtype
        t._node = None
        backend.counters["launches"] += 1
        if (a._node is not None or b._node is not None) and TAPE.depth and op.differentiable:
            # record(op, (), (a, b), t), inlined: the per-op cost of recording a gradient
            t._node = (TapeNode((op, (), ((a._buf, a.shape, a.dtype, a._node),
                                          (b._buf, b.shape, b.dtype, b._node)),
                                 ((t._buf, meta.shape, meta.dtype),))), 0)
        return t


def check_devices(op, backend, tensors) -> None:
    """After a kernel failed: if an input lives on another device, say so and how to move it
    (checked only on failure, so the hot path pays nothing)."""
    from .errors import DeviceError
    for i, t in enumerate(tensors):
        if not backend.owns(t._buf):
            where = getattr(t._buf, "device_name", type(t._buf).__name__)
            raise DeviceError(
                f"{op.name}: input {i} (shape {t.shape}, {t.dtype}) lives on the {where} device "
                f"but device_target is {backend.name!r}; copy it with ms.Tensor(x.asnumpy()) or "
                f"set device_target back") from None


def record(op, attrs, inputs, out) -> None:
    ins = tuple((t._buf, t.shape, t.dtype, t._node) for t in inputs)
    if out.__class__ is tuple:
        node = TapeNode((op, attrs, ins, tuple((o._buf, o.shape, o.dtype) for o in out)))
        for i, o in enumerate(out):
            o._node = (node, i)
    else:
        out._node = (TapeNode((op, attrs, ins, ((out._buf, out.shape, out.dtype),))), 0)


EAGER = EagerExecutor()
executor.set_default("current", EAGER)


def _reachable(root_refs, targets: set) -> list:
    """TapeNodes reachable from `root_refs` that lead to a target, inputs before consumers
    (an iterative post-order depth-first walk: tapes can be far deeper than Python's stack)."""
    reach: dict = {}
    order = []
    for rref in root_refs:
        if rref.__class__ is not tuple:
            continue
        stack = [(rref[0], False)]
        while stack:
            node, done = stack.pop()
            if done:
                for rec in node.inputs:
                    ref = rec[3]
                    if ref is not None and (ref in targets or
                                            (ref.__class__ is tuple and reach[ref[0]])):
                        reach[node] = True
                        order.append(node)
                        break
            elif node not in reach:
                reach[node] = False
                stack.append((node, True))
                for rec in node.inputs:
                    ref = rec[3]
                    if ref.__class__ is tuple and ref[0] not in reach:
                        stack.append((ref[0], False))
    return order


def backward(roots: list, sens: list, targets: list) -> list:
    """Gradients of sum(root_i * sens_i) with respect to each tape identity in `targets`
    (None where a target is unreachable)."""
    from .ops.math import add, cast
    tset = set(targets)
    order = _reachable([r._node for r in roots], tset)
    if not TAPE.depth:                       # nothing records the backward: it may be compiled
        from . import bprop_graph
        got = bprop_graph.run(order, roots, sens, targets)
        if got is not None:
            return got
    grads: dict = {}
    for r, s in zip(roots, sens):
        ref = r._node
        if ref is not None:
            grads[ref] = add(grads[ref], s) if ref in grads else s
    for node in reversed(order):
        n_out = len(node.outputs)
        douts = [grads.get((node, i)) if (node, i) in tset else grads.pop((node, i), None)
                 for i in range(n_out)]
        if all(d is None for d in douts):
            continue
        outs = [_tensor(b, s, d, (node, i)) for i, (b, s, d) in enumerate(node.outputs)]
        ins = tuple(_tensor(*rec) for rec in node.inputs)
        if n_out == 1:
            gs = node.op.bprop(ins, outs[0], douts[0], **attrs_dict(node.attrs))
        else:
            gs = node.op.bprop(ins, tuple(outs), tuple(douts), **attrs_dict(node.attrs))
        for x, g in zip(ins, gs):
            ref = x._node
            if ref is None or g is None or not x.dtype.has_grad:
                continue
            # a gradient takes its input's dtype, for every op (an integer input's is cast, as
            # MindSpore's binary ops do; its Div and Mean bprops leave a float gradient)
            if g.dtype is not x.dtype:
                g = cast(g, x.dtype)
            grads[ref] = add(grads[ref], g) if ref in grads else g
    return [grads.get(t) for t in targets]
