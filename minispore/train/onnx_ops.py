"""The primitive -> ONNX mapping used by `ms.export(..., file_format="ONNX")` (onnx_export.py).

`CONVERTERS[name](w, n, xs, ys)` writes the ONNX nodes computing graph node `n` (a primitive of
minispore's graph IR) into the OnnxWriter `w`: `xs` are the ONNX names of its inputs, `ys` the
names its outputs must get. Every converter reproduces minispore's semantics of the primitive
exactly (its dtype rule, MindSpore's pad_mode geometry, numpy's rounding of mod and floor_div),
building from several ONNX ops where no single one matches (gelu, log1p, mod, logsumexp), and
widening the integer types onnxruntime has no kernel for (wide_int). A primitive without a
converter is listed in UNSUPPORTED with the reason (a gradient kernel, a random op, topk, whose
tie order is MindSpore's CPU kernel's, not ONNX TopK's) and refused by the exporter with its
name and source line. The target is the default ONNX domain at OPSET (every Reduce* op takes
its axes as an input).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..core import dtype as dt
from ..core.ops.reduce import reduction_axes
from ..core.primitive import REGISTRY, attrs_dict
from ..core.shape import normalize_axis

OPSET = 18
IR_VERSION = 8                  # the IR version of ONNX 1.13, which introduced opset 18

_ONNX_TYPES = {"Float32": "FLOAT", "Float64": "DOUBLE", "Float16": "FLOAT16",
               "BFloat16": "BFLOAT16", "Int8": "INT8", "Int16": "INT16", "Int32": "INT32",
               "Int64": "INT64", "UInt8": "UINT8", "UInt16": "UINT16", "UInt32": "UINT32",
               "Bool": "BOOL"}
INT64_MIN = -(2 ** 63)


def onnx_type(d: dt.DType) -> int:
    """The TensorProto element type of a minispore dtype."""
    from onnx import TensorProto
    if d.name not in _ONNX_TYPES:       # UInt64: int64 cannot hold it for the ops onnxruntime
        raise NotImplementedError(      # lacks on uint64, and the others would wrap >= 2**63
            f"ONNX export: {d.name} tensors are not supported (onnxruntime computes few ops on "
            f"them and widening to int64 would wrap values >= 2**63); cast to int64 or a "
            f"float dtype before exporting")
    return getattr(TensorProto, _ONNX_TYPES[d.name])


class OnnxWriter:
    """The ONNX nodes and initializers of one graph being written, with fresh value names."""

    def __init__(self):
        from onnx import helper, numpy_helper
        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list = []
        self.initializers: list = []
        self.gemm_shapes: dict = {}         # a Gemm's output name -> its (rows, columns)
        self._ids = itertools.count()

    def child(self) -> "OnnxWriter":
        """A writer for a subgraph: its own nodes, this graph's names and initializers."""
        sub = OnnxWriter()
        sub.initializers, sub._ids, sub.gemm_shapes = self.initializers, self._ids, \
            self.gemm_shapes
        return sub

    def fresh(self, hint: str) -> str:
        return f"{hint}_{next(self._ids)}"

    def add(self, op_type: str, inputs, outputs=None, **attrs) -> str:
        """One ONNX node; returns its (first) output name (a fresh one unless given)."""
        outputs = list(outputs) if outputs is not None else [self.fresh(op_type)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outputs,
                                                name=self.fresh(f"{op_type}_node"), **attrs))
        return outputs[0]

    def initializer(self, array: np.ndarray, name: str) -> str:
        array = np.asarray(array)
        if array.dtype == dt.bfloat16.np:             # numpy_helper has no bfloat16: its bits
            from onnx import TensorProto
            t = self.helper.make_tensor(name, TensorProto.BFLOAT16, array.shape,
                                        np.ascontiguousarray(array).view(np.uint16).tobytes(),
                                        raw=True)
        else:
            t = self.numpy_helper.from_array(array, name)
        self.initializers.append(t)
        return name

    def const(self, array, hint: str = "const") -> str:
        return self.initializer(np.asarray(array), self.fresh(hint))

    def ints(self, values) -> str:
        """A 1-D int64 constant (shapes, axes, pads given as inputs)."""
        return self.const(np.asarray(list(values), np.int64), "ints")

    def cast(self, name: str, have: dt.DType, want: dt.DType, out: str | None = None) -> str:
        if have is want:
            return name if out is None else self.add("Identity", [name], [out])
        return self.add("Cast", [name], None if out is None else [out], to=onnx_type(want))


def _names_read(nodes, counts) -> None:
    for node in nodes:
        counts.update(node.input)
        for a in node.attribute:
            if a.HasField("g"):                       # a branch reads enclosing names
                _names_read(a.g.node, counts)
                counts.update(o.name for o in a.g.output)


def tidy(nodes: list, keep=()) -> list:
    """The nodes without the Identity nodes that only rename another node's result (the
    converters land results under the graph's names through them): `b = Identity(a)` where a
    node of this list makes `a` and nothing else reads it becomes that node making `b`.
    `keep`: names that must stay (the graph's outputs)."""
    from collections import Counter
    counts: Counter = Counter()
    _names_read(nodes, counts)
    made = {o: node for node in nodes for o in node.output}
    out = []
    for node in nodes:
        if node.op_type == "Identity" and node.input[0] in made and counts[node.input[0]] == 1 \
                and node.input[0] not in keep:
            producer = made.pop(node.input[0])
            slot = list(producer.output).index(node.input[0])
            producer.output[slot] = node.output[0]
            made[node.output[0]] = producer
            continue
        out.append(node)
    return out


def fuse_gemm_bias(nodes: list, w: OnnxWriter) -> list:
    """`Add(Gemm(a, b), c)` with c a 1-D initializer of the Gemm's column count and the Gemm's
    result read only there becomes `Gemm(a, b, c)` (nn.Dense's matmul + bias, written as
    MindSpore's exporter writes it; onnxruntime adds C to the same float32 product)."""
    from collections import Counter
    vectors = {t.name: tuple(t.dims) for t in w.initializers if len(t.dims) == 1}
    counts: Counter = Counter()
    _names_read(nodes, counts)
    gemms = {node.output[0]: node for node in nodes
             if node.op_type == "Gemm" and len(node.input) == 2}
    out = []
    for node in nodes:
        a, c = (node.input[0], node.input[1]) if node.op_type == "Add" else (None, None)
        if a in gemms and counts[a] == 1 and c in vectors and \
                vectors[c] == w.gemm_shapes.get(a, ())[1:]:
            gemm = gemms.pop(node.input[0])
            gemm.input.append(node.input[1])
            gemm.output[0] = node.output[0]
            continue
        out.append(node)
    return out


CONVERTERS: dict = {}


def converts(*names):
    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn
    return register


_SMALL_INTS = (dt.int8, dt.int16, dt.uint8, dt.uint16, dt.uint32)   # uint64 does not fit int64


def wide_int(d: dt.DType) -> dt.DType:
    """int64 for the integer types ONNX's reductions, CumSum, Pow and MatMul do not take (their
    two's-complement results wrap the same when cast back), else d itself."""
    return dt.int64 if d in _SMALL_INTS else d


def _finish(w, name, have, n, ys, k=0):
    """Land a result `name` of dtype `have` in output k of `n` (cast to its dtype if needed)."""
    w.cast(name, have, n.outputs[k].dtype, out=ys[k])


def _compute_inputs(w, n, xs):
    """The inputs cast to the elementwise op's compute dtypes, and the result dtype."""
    cdts, od = n.op.compute(tuple(v.dtype for v in n.inputs))
    return [w.cast(x, v.dtype, c) for x, v, c in zip(xs, n.inputs, cdts)], cdts[0], od


# ---------------------------------------------------------------- elementwise ------------------
_UNARY = {"abs": "Abs", "ceil": "Ceil", "cos": "Cos", "erf": "Erf", "exp": "Exp",
          "floor": "Floor", "log": "Log", "neg": "Neg", "relu": "Relu", "sigmoid": "Sigmoid",
          "sign": "Sign", "sin": "Sin", "sqrt": "Sqrt", "tanh": "Tanh", "softplus": "Softplus",
          "round": "Round"}         # ONNX Round, like np.rint, rounds halves to even
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min", "equal": "Equal", "greater": "Greater",
           "greater_equal": "GreaterOrEqual", "less": "Less", "less_equal": "LessOrEqual",
           "logical_and": "And", "logical_or": "Or", "bitwise_and": "BitwiseAnd",
           "bitwise_or": "BitwiseOr", "bitwise_xor": "BitwiseXor"}
_BOOL_ARITH = {"add": "Or", "mul": "And", "maximum": "Or", "minimum": "And"}


@converts(*_UNARY)
def _unary(w, n, xs, ys):
    ins, c, od = _compute_inputs(w, n, xs)
    if n.name == "neg" and c is dt.uint8:           # ONNX Neg is signed only: 0 - x wraps alike
        _finish(w, w.add("Sub", [_scalar(w, 0, c)] + ins), od, n, ys)
        return
    if n.name == "relu" and c.is_float:             # where(x > 0, x, 0): NaN -> 0, as
        zero = _scalar(w, 0, c)                       # minispore and MindSpore give
        _finish(w, w.add("Where", [w.add("Greater", [ins[0], zero]), ins[0], zero]), od, n, ys)
        return
    if n.name == "relu" and wide_int(c) is not c:   # no small-int kernels (uint8: x itself)
        r = ins[0] if c is dt.uint8 else w.add("Relu", [w.cast(ins[0], c, dt.int64)])
        _finish(w, r, c if c is dt.uint8 else dt.int64, n, ys)
        return
    _finish(w, w.add(_UNARY[n.name], ins), od, n, ys)


@converts(*_BINARY)
def _binary(w, n, xs, ys):
    ins, c, od = _compute_inputs(w, n, xs)
    op = _BOOL_ARITH.get(n.name, _BINARY[n.name]) if c is dt.bool_ else _BINARY[n.name]
    if op in ("Pow", "Max", "Min") and wide_int(c) is not c:     # no small-int kernels
        ins, od = [w.cast(x, c, dt.int64) for x in ins], dt.int64
    _finish(w, w.add(op, ins), od, n, ys)


@converts("not_equal")
def _not_equal(w, n, xs, ys):
    ins, c, od = _compute_inputs(w, n, xs)
    _finish(w, w.add("Not", [w.add("Equal", ins)]), od, n, ys)


def _scalar(w, value, d: dt.DType) -> str:
    return w.const(np.asarray(value, d.np), "scalar")


@converts("rsqrt")
def _rsqrt(w, n, xs, ys):
    ins, c, od = _compute_inputs(w, n, xs)
    _finish(w, w.add("Reciprocal", [w.add("Sqrt", ins)]), od, n, ys)


@converts("log1p")
def _log1p(w, n, xs, ys):
    """log1p(x) = log(u) * x / (u - 1) with u = 1 + x, and x itself where u rounds to 1 (the
    classic accurate form, so small x keep their relative precision)."""
    (x,), c, od = _compute_inputs(w, n, xs)
    u = w.add("Add", [x, _scalar(w, 1, c)])
    um1 = w.add("Sub", [u, _scalar(w, 1, c)])
    is_one = w.add("Equal", [um1, _scalar(w, 0, c)])
    safe = w.add("Where", [is_one, _scalar(w, 1, c), um1])
    general = w.add("Div", [w.add("Mul", [w.add("Log", [u]), x]), safe])
    _finish(w, w.add("Where", [is_one, x, general]), od, n, ys)


@converts("gelu")
def _gelu(w, n, xs, ys):
    """0.5 x (1 + erf(x / sqrt 2)), or with approximate='tanh' 0.5 x (1 + tanh(sqrt(2 / pi)
    (x + 0.044715 x^3))): minispore's formulas (ONNX's own Gelu needs opset 20)."""
    (x,), c, od = _compute_inputs(w, n, xs)
    if n.attr("approximate") == "tanh":
        cube = w.add("Mul", [w.add("Mul", [x, x]), x])
        inner = w.add("Add", [x, w.add("Mul", [cube, _scalar(w, 0.044715, c)])])
        core = w.add("Tanh", [w.add("Mul", [inner, _scalar(w, math.sqrt(2 / math.pi), c)])])
    else:
        core = w.add("Erf", [w.add("Mul", [x, _scalar(w, 1 / math.sqrt(2), c)])])
    half_x = w.add("Mul", [x, _scalar(w, 0.5, c)])
    _finish(w, w.add("Mul", [half_x, w.add("Add", [_scalar(w, 1, c), core])]), od, n, ys)


@converts("mod")
def _mod(w, n, xs, ys):
    """numpy's mod: the remainder has the divisor's sign (integers: ONNX Mod with fmod=0;
    floats: fmod, then + y where the signs differ, as numpy computes it)."""
    (x, y), c, od = _compute_inputs(w, n, xs)
    if not c.is_float:
        _finish(w, w.add("Mod", [x, y], fmod=0), od, n, ys)
        return
    r = w.add("Mod", [x, y], fmod=1)
    zero = _scalar(w, 0, c)
    differ = w.add("Xor", [w.add("Less", [r, zero]), w.add("Less", [y, zero])])
    fix = w.add("And", [w.add("Not", [w.add("Equal", [r, zero])]), differ])
    _finish(w, w.add("Where", [fix, w.add("Add", [r, y]), r]), od, n, ys)


@converts("floor_div")
def _floor_div(w, n, xs, ys):
    """floats: floor(x / y); integers: (x - mod(x, y)) / y, exact (ONNX's integer Div
    truncates toward zero)."""
    (x, y), c, od = _compute_inputs(w, n, xs)
    if c.is_float:
        out = w.add("Floor", [w.add("Div", [x, y])])
    else:
        out = w.add("Div", [w.add("Sub", [x, w.add("Mod", [x, y], fmod=0)]), y])
    _finish(w, out, od, n, ys)


@converts("where")
def _where(w, n, xs, ys):
    (cond, x, y), c, od = _compute_inputs(w, n, xs)
    _finish(w, w.add("Where", [cond, x, y]), od, n, ys)


@converts("cast")
def _cast(w, n, xs, ys):
    w.cast(xs[0], n.inputs[0].dtype, n.outputs[0].dtype, out=ys[0])


@converts("stop_gradient")
def _identity(w, n, xs, ys):
    w.add("Identity", xs[:1], ys[:1])


# ---------------------------------------------------------------- reductions -------------------
_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin",
           "prod": "ReduceProd"}


@converts(*_REDUCE)
def _reduce(w, n, xs, ys):
    x, out = n.inputs[0], n.outputs[0]
    axes = reduction_axes(n.name, n.attr("axis"), len(x.shape))
    work = wide_int(out.dtype)
    src = w.cast(xs[0], x.dtype, work)              # bool sums count in int64, mean of ints
    if not axes:
        w.cast(src, work, out.dtype, out=ys[0])
        return
    r = w.add(_REDUCE[n.name], [src, w.ints(axes)], keepdims=int(bool(n.attr("keep_dims"))))
    w.cast(r, work, out.dtype, out=ys[0])


@converts("logsumexp")
def _logsumexp(w, n, xs, ys):
    """log(sum(exp(x - m))) + m with m the finite maximum (0 where it is not finite), as
    minispore computes it."""
    x, out = n.inputs[0], n.outputs[0]
    axes = reduction_axes(n.name, n.attr("axis"), len(x.shape))
    c = out.dtype
    src = w.cast(xs[0], x.dtype, c)
    if not axes:
        w.add("Identity", [src], ys)
        return
    ax = w.ints(axes)
    m = w.add("ReduceMax", [src, ax], keepdims=1)
    finite = w.add("Not", [w.add("Or", [w.add("IsInf", [m]), w.add("IsNaN", [m])])])
    m = w.add("Where", [finite, m, _scalar(w, 0, c)])
    s = w.add("ReduceSum", [w.add("Exp", [w.add("Sub", [src, m])]), ax], keepdims=1)
    r = w.add("Add", [w.add("Log", [s]), m])
    w.add("Reshape", [r, w.ints(out.shape)], ys)


@converts("argmax", "argmin")
def _arg(w, n, xs, ys):
    x, out = n.inputs[0], n.outputs[0]
    src, axis = xs[0], n.attr("axis")
    if axis is None:
        src, axis = w.add("Reshape", [src, w.ints([-1])]), 0
    else:
        axis = normalize_axis(n.name, axis, len(x.shape))
    if len(x.shape) == 0:
        src = w.add("Reshape", [src, w.ints([1])])
    idx = w.add("ArgMax" if n.name == "argmax" else "ArgMin", [src], axis=axis, keepdims=1,
                select_last_index=0)
    shaped = w.add("Reshape", [idx, w.ints(out.shape)])
    w.cast(shaped, dt.int64, out.dtype, out=ys[0])


@converts("cumsum")
def _cumsum(w, n, xs, ys):
    x = n.inputs[0]
    axis = normalize_axis("cumsum", n.attr("axis"), len(x.shape))
    work = wide_int(x.dtype)
    r = w.add("CumSum", [w.cast(xs[0], x.dtype, work), w.const(np.asarray(axis, np.int64),
                                                                 "axis")],
              exclusive=int(bool(n.attr("exclusive"))), reverse=int(bool(n.attr("reverse"))))
    w.cast(r, work, n.outputs[0].dtype, out=ys[0])


# ---------------------------------------------------------------- constants --------------------
@converts("fill", "arange")
def _static(w, n, xs, ys):
    """No tensor inputs: the value is known while exporting (the op's own reference)."""
    value = np.asarray(n.op.ref(**attrs_dict(n.attrs))).astype(n.outputs[0].dtype.np)
    w.initializer(value.reshape(n.outputs[0].shape), ys[0])


@converts("fill_like")
def _fill_like(w, n, xs, ys):
    out = n.outputs[0]
    w.initializer(np.full(out.shape, n.attr("value"), out.dtype.np), ys[0])


@converts("one_hot")
def _one_hot(w, n, xs, ys):
    """where(indices[..., None] == arange(depth), on_value, off_value), the class axis at
    `axis` (an index outside [0, depth) gives a row of off_value, as minispore's)."""
    x, out = n.inputs[0], n.outputs[0]
    r = len(out.shape)
    a = n.attr("axis") % r
    depth = n.attr("depth")
    idx = w.add("Unsqueeze", [w.cast(xs[0], x.dtype, dt.int64), w.ints([a])])
    classes = w.const(np.arange(depth, dtype=np.int64).reshape(
        [depth if i == a else 1 for i in range(r)]), "classes")
    on = w.const(np.asarray(n.attr("on_value"), out.dtype.np), "on_value")
    off = w.const(np.asarray(n.attr("off_value"), out.dtype.np), "off_value")
    w.add("Where", [w.add("Equal", [idx, classes]), on, off], ys)


# primitives with no mapping, and why (the exporter's error says so)
UNSUPPORTED = {
    "topk": "its tie order (MindSpore's CPU kernel) is not ONNX TopK's",
    "dropout": "a random op (call set_train(False), or drop the training=True argument)",
    "random_normal": "a random op", "random_uniform": "a random op",
    "random_randint": "a random op",
    "left_shift": "ONNX BitShift takes unsigned integers only",
    "right_shift": "ONNX BitShift takes unsigned integers only",
    "cumprod": "ONNX has no cumulative product",
}
for _name in [op.name for op in REGISTRY.values() if op.composite is None]:
    if _name.endswith(("_grad", "_backprop_input", "_backprop_filter")) or \
            _name in ("max_pool2d_gather", "check_class_labels", "sparse_softmax_cross_entropy"):
        UNSUPPORTED.setdefault(_name, "a training-time op (a gradient, a loss or an update)")

__all__ = ["CONVERTERS", "UNSUPPORTED", "OPSET", "IR_VERSION", "OnnxWriter", "onnx_type",
           "converts", "tidy", "wide_int", "fuse_gemm_bias"]
