"""The graph builder: the executor that runs while a graph is being built.

It is the twin of the eager executor (DESIGN.md, "Dispatch"): `apply` runs the op's `infer`
(so shape and dtype errors are the same as in PyNative, plus the user's source line) and appends a
Node instead of launching a kernel; the result is a symbolic Tensor whose `_buf` is an ir.Value.
Tensors from outside the graph become graph inputs: Parameters by reference, other tensors as
constants. The tape works unchanged on symbolic tensors, so `ms.grad` inside compiled code replays
the same bprop declarations through this builder: the reverse-mode transform on the IR.
"""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import MinisporeError
from ..primitive import Meta, OpDef, attrs_dict, executor
from ..pynative import SCALARS, TAPE, op_inputs, record, scalar_operand_dtype, tensor_dtype
from ..mutable import SymScalar, scalar_operands
from ..tensor import Parameter, Tensor, to_numpy
from . import ir

def is_symbolic(t) -> bool:
    return isinstance(t, Tensor) and isinstance(t._buf, ir.Value)


def sym(v: ir.Value) -> Tensor:
    t = Tensor.__new__(Tensor)
    t._buf, t.shape, t.dtype, t._node = v, v.shape, v.dtype, None
    return t


class GraphBuilder:
    """Appends nodes to the innermost open graph. Nested graphs (If/While regions) are opened
    with `region()`; parameters and constants always go to the outermost graph."""

    def __init__(self, name: str):
        self.root = ir.Graph(name)
        self.stack = [self.root]
        self.loc: ir.Loc | None = None
        self._params: dict[int, ir.Value] = {}      # Parameter -> its graph input
        self._current: dict[int, ir.Value] = {}     # Parameter -> its value after assignments
        self.param_objs: dict[int, Parameter] = {}  # id -> each Parameter assigned
        self._consts: dict = {}
        self.refs: dict[int, object] = {}           # value id -> tape identity (while on tape)
        # output value id -> (op, attrs, input values, output values) of each composite with a
        # declared bprop expanded here: replaying a branch (cf_grad) applies it there again
        self.composites: dict[int, tuple] = {}

    @property
    def graph(self) -> ir.Graph:
        return self.stack[-1]

    # -- entering and leaving ----------------------------------------------------------------
    def __enter__(self):
        self._saved = executor.current
        executor.current = self
        return self

    def __exit__(self, *exc):
        executor.current = self._saved

    def region(self, name: str) -> "_Region":
        return _Region(self, name)

    # -- values ---------------------------------------------------------------------------------
    def input(self, shape, dtype) -> Tensor:
        v = ir.Value(shape, dtype)
        self.root.inputs.append(v)
        return sym(v)

    def value_of(self, t: Tensor) -> ir.Value:
        """The IR value of a tensor: symbolic as is, a Parameter as a graph input, any other
        tensor as a constant."""
        v = self._plain_value(t)
        if t._node is not None and TAPE.depth:
            self.refs[v.id] = t._node              # for control flow on the tape (cf_grad)
        return v

    def _plain_value(self, t: Tensor) -> ir.Value:
        if isinstance(t._buf, ir.Value):
            return t._buf
        if isinstance(t, Parameter):
            v = self._current.get(id(t)) or self._params.get(id(t))
            if v is None:
                v = self._params[id(t)] = ir.Value(t.shape, t.dtype)
                self.root.params.append((v, t))
            return v
        return self.const(np.asarray(t._buf), t.dtype)

    def const(self, array: np.ndarray, dtype: dt.DType) -> ir.Value:
        key = (dtype, array.shape, array.tobytes()) if array.size <= 64 else None
        if key is not None and key in self._consts:
            return self._consts[key]
        v = ir.Value(array.shape, dtype)
        self.root.nodes.insert(self._n_consts(), ir.Node(ir.CONST, [], (("value", array),),
                                                         [v], self.loc))
        if key is not None:
            self._consts[key] = v
        return v

    def _n_consts(self) -> int:
        n = 0
        for node in self.root.nodes:
            if node.op != ir.CONST:
                break
            n += 1
        return n

    def to_tensor(self, op: OpDef, x, ref_dtype) -> Tensor:
        if isinstance(x, Tensor):
            return x
        if getattr(type(x), "_ms_runtime_value", False):     # graph/fallback.py: at run time
            return x.to_tensor()
        if isinstance(x, SCALARS):
            d = scalar_operand_dtype(op, x, ref_dtype)
            return sym(self.const(to_numpy(x, d), d))
        if isinstance(x, (np.ndarray, list, tuple)):
            a = to_numpy(x)
            return sym(self.const(a, dt.to_dtype(a.dtype)))
        raise TypeError(f"{op.name}: expected a Tensor or a number as input, got "
                        f"{type(x).__name__}")

    # -- the executor interface -------------------------------------------------------------------
    def apply(self, op: OpDef, inputs: tuple, attrs: tuple):
        inputs = op_inputs(op, inputs)
        for x in inputs:
            if isinstance(x, SymScalar):     # ms.mutable / float(t): a Python number's dtype
                inputs = scalar_operands(op, inputs)
                break
        ref = tensor_dtype(op, inputs)
        ts = tuple(self.to_tensor(op, x, ref) for x in inputs)
        try:
            meta = op.infer(*ts, **attrs_dict(attrs))
        except MinisporeError as e:
            raise self.located(e) from None
        in_vals = [self.value_of(t) for t in ts]
        # the tape must see graph values, never a Parameter's current buffer (which a backward
        # pass would otherwise bake into the graph as a constant)
        ts = tuple(t if isinstance(t._buf, ir.Value) else _alias(t, v) for t, v in zip(ts, in_vals))
        metas = (meta,) if isinstance(meta, Meta) else tuple(meta)
        outs = [ir.Value(m.shape, m.dtype) for m in metas]
        self.graph.nodes.append(ir.Node(op, in_vals, attrs, outs, self.loc))
        res = sym(outs[0]) if isinstance(meta, Meta) else tuple(sym(v) for v in outs)
        if TAPE.depth and op.differentiable:
            for t in ts:
                if t._node is not None:
                    record(op, attrs, ts, res)
                    for v, o in zip(outs, res if isinstance(res, tuple) else (res,)):
                        self.refs[v.id] = o._node
                    break
        return res

    def tape_node(self, op: OpDef, attrs: tuple, ts: tuple, res) -> None:
        """Tape `op` on graph values, as `apply` does: a composite with a declared bprop, whose
        parts ran untaped (core/composite.py)."""
        in_vals = [self.value_of(t) for t in ts]
        ts = tuple(t if isinstance(t._buf, ir.Value) else _alias(t, v) for t, v in zip(ts, in_vals))
        record(op, attrs, ts, res)
        for o in res if isinstance(res, tuple) else (res,):
            self.refs[o._buf.id] = o._node

    def note_composite(self, op: OpDef, attrs: tuple, ts: tuple, res) -> None:
        """Remember that composite `op` (one with a declared bprop) computed `res` from `ts`,
        taped or not: a loop body is traced untaped, and its gradient replays it (cf_grad)."""
        in_vals = tuple(self.value_of(t) for t in ts)
        outs = tuple(o._buf for o in (res if isinstance(res, tuple) else (res,)))
        for v in outs:
            if all(v is not u for u in in_vals):
                self.composites[v.id] = (op, attrs, in_vals, outs)

    def binary(self, op: OpDef, a, b):
        return self.apply(op, (a, b), ())

    def assign(self, p: Parameter, value) -> None:
        """`p` takes `value` after the call; later reads of `p` in this graph see `value`."""
        from ..errors import ShapeError
        if not isinstance(value, Tensor):
            value = sym(self.const(to_numpy(value, p.dtype), p.dtype))
        if tuple(value.shape) != tuple(p.shape):
            raise ShapeError(f"assign: Parameter '{p.name}' has shape {p.shape}, the value has "
                             f"shape {value.shape}; they must match")
        if value.dtype is not p.dtype:
            from ..ops.math import cast
            value = cast(value, p.dtype)
        v = self.value_of(value)
        self.value_of(p)                           # make sure p is a graph input
        self.param_objs[id(p)] = p
        if len(self.stack) == 1:
            self.emit(ir.ASSIGN, [v], (("param", p, Parameter),), [])
        # in an If/While region the new value only becomes p's current value there: the
        # control flow that opened the region (control.py) makes it an output of the If/While
        # and assigns it after the node
        # later reads of p are reads of the Parameter, not of the expression assigned: their own
        # IR value (a stop_gradient alias, free in the backends), so that control flow on the
        # tape (cf_grad looks tape identities up by value) sees p's identity, as a straight
        # read does, and no gradient flows back through the assignment (as in PyNative)
        from ..ops.array import STOP_GRADIENT
        if len(self.stack) > 1:
            # in a region, p's new value passes the gradient of later reads on to p's value
            # before the assignment (a read of a Parameter is a read of the Parameter, as in
            # PyNative), the chain ending at p itself outside the If/While
            from ..primitive import apply
            self._current[id(p)] = apply(ASSIGNED_VALUE, sym(v), p)._buf
            return
        self._current[id(p)] = self.emit(STOP_GRADIENT, [v], (), [Meta(v.shape, v.dtype)])[0]

    # the side-effect protocol every executor implements (core/ops/state.py)
    def assign_parameter(self, p: Parameter, value) -> Tensor:
        """ops.assign while tracing: `p` takes `value` after the call; returns p's new value."""
        self.assign(p, value)
        return sym(self.value_of(p))

    def print_values(self, inputs) -> None:
        """ops.Print while tracing: a runtime Print node."""
        self.print_node(inputs)

    def print_node(self, args, sep="\n", end="\n", file=None) -> None:
        """A runtime Print node: strings now, tensors with their values at every run. As
        MindSpore's graph-mode print: one item per line (sep), a tuple or list holding a tensor
        (or a list) printed item by item, Python numbers as C++ prints them (tensor_format.py)."""
        from ..tensor_format import constant as format_constant
        parts, inputs = [], []

        def add(a):
            if isinstance(a, Tensor):
                parts.append(("t", len(inputs)))
                inputs.append(self.value_of(a))
            elif isinstance(a, list) or (isinstance(a, tuple) and any(
                    isinstance(x, (Tensor, tuple, list)) for x in a)):
                for x in a:
                    add(x)
            elif isinstance(a, tuple):
                parts.append(("s", "(" + ", ".join(format_constant(x) for x in a) + ")"))
            else:
                parts.append(("s", format_constant(a)))
        for a in args:
            add(a)
        self.emit(ir.PRINT, inputs, (("parts", tuple(parts), tuple), ("sep", sep, str),
                                     ("end", end, str), ("file", file, object)), [])

    def emit(self, kind: str, inputs: list, attrs: tuple, out_metas, subgraphs=()) -> list:
        outs = [ir.Value(m.shape, m.dtype) for m in out_metas]
        self.graph.nodes.append(ir.Node(kind, inputs, attrs, outs, self.loc, tuple(subgraphs)))
        return outs

    def located(self, e: Exception) -> Exception:
        """The same exception type with the user's source line appended."""
        if self.loc is None or getattr(e, "_ms_located", False):
            return e
        new = type(e)(f"{e}\n{self.loc.caret()}")
        new._ms_located = True
        return new


def _assigned_value(new, prev):
    from ..ops.array import STOP_GRADIENT
    from ..primitive import apply
    return apply(STOP_GRADIENT, new)


# A Parameter's value after an assignment in an If/While region: `new`'s value (a stop_gradient
# node: no gradient into the assigned expression), the gradient of its reads passed to `prev`,
# the Parameter's value before the assignment. Not registered: only the builder makes it.
ASSIGNED_VALUE = OpDef("assigned_value",
                       infer=lambda new, prev: Meta(tuple(new.shape), new.dtype),
                       ref=lambda new, prev: new, bprop=lambda i, o, g: (None, g), arity=2,
                       composite=_assigned_value)


def _alias(t: Tensor, v: ir.Value) -> Tensor:
    a = sym(v)
    a._node = t._node
    return a


class _Region:
    def __init__(self, b: GraphBuilder, name: str):
        self.b, self.g = b, ir.Graph(name)

    def __enter__(self) -> ir.Graph:
        self.b.stack.append(self.g)
        return self.g

    def __exit__(self, *exc):
        self.b.stack.pop()
