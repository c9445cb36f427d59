"""The layer and data-movement part of the primitive -> ONNX mapping (onnx_ops.py holds the
writer, the registry, the elementwise ops and the reductions): matmul, conv2d and its
transpose (conv2d_backprop_input, which nn.Conv2dTranspose runs), the pools,
batch_norm, layer_norm, softmax/log_softmax, sort, reshape, transpose, broadcast_to, concat,
split, strided_slice, gather, tile, and the updates slice_update, strided_slice_grad (conv3d's
padding), scatter_update and scatter_add. Window geometry comes from the primitives' own functions
(`pads_for`, `pool_geometry`: MindSpore's 'valid'/'same'/'pad' rules), written as explicit ONNX
pads, and each window op checks that ONNX's output shape is the graph's."""
from __future__ import annotations

import numpy as np

from ..core import dtype as dt
from ..core.ops.conv import conv_geometry, pads_for, pool_geometry
from ..core.shape import normalize_axis
from .onnx_ops import CONVERTERS, INT64_MIN, UNSUPPORTED, converts, onnx_type, wide_int


def _same_type(w, n, xs):
    """Every input cast to the node's output dtype (matmul's promotion)."""
    out = n.outputs[0].dtype
    return [w.cast(x, v.dtype, out) for x, v in zip(xs, n.inputs)], out


def _swap_last(w, name, rank):
    perm = list(range(rank))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return w.add("Transpose", [name], perm=perm)


@converts("matmul")
def _matmul(w, n, xs, ys):
    (a, b), c = _same_type(w, n, xs)
    ta, tb = bool(n.attr("transpose_a")), bool(n.attr("transpose_b"))
    ra, rb = len(n.inputs[0].shape), len(n.inputs[1].shape)
    if ra == rb == 2 and c.is_float:
        w.add("Gemm", [a, b], ys, transA=int(ta), transB=int(tb))
        w.gemm_shapes[ys[0]] = tuple(n.outputs[0].shape)
        return
    if ta:
        a = _swap_last(w, a, ra)
    if tb:
        b = _swap_last(w, b, rb)
    work = wide_int(c)
    r = w.add("MatMul", [w.cast(a, c, work), w.cast(b, c, work)])
    w.cast(r, work, c, out=ys[0])


def _check_shape(n, got, what):
    want = tuple(n.outputs[0].shape)
    if tuple(got) != want:
        raise NotImplementedError(
            f"ms.export(file_format='ONNX'): {n.name} {what} gives shape {tuple(got)} in ONNX, "
            f"but the graph's output has shape {want}; ONNX export does not support this "
            f"geometry yet")


@converts("conv2d")
def _conv2d(w, n, xs, ys):
    x, wt = n.inputs
    (xi, wi), c = _same_type(w, n, xs)
    k = tuple(wt.shape[2:])
    stride, dilation = tuple(n.attr("stride")), tuple(n.attr("dilation"))
    t, b, l, r = pads_for("conv2d", n.attr("pad_mode"), n.attr("pad"), x.shape[2:], k, stride,
                          dilation)
    hw = [(x.shape[2 + i] + p - (dilation[i] * (k[i] - 1) + 1)) // stride[i] + 1
          for i, p in enumerate((t + b, l + r))]
    _check_shape(n, (x.shape[0], wt.shape[0], *hw), "with these pads")
    w.add("Conv", [xi, wi], ys, kernel_shape=list(k), strides=list(stride),
          dilations=list(dilation), pads=[t, l, b, r], group=int(n.attr("group")))


@converts("conv2d_backprop_input")
def _conv2d_transpose(w, n, xs, ys):
    """The adjoint of conv2d (what nn.Conv2dTranspose runs) as ONNX ConvTranspose: the
    forward convolution's pads, and output_padding for the rows/columns the forward
    convolution's stride skipped at the end."""
    dy, wt = n.inputs
    (di, wi), c = _same_type(w, n, xs)
    shape = tuple(n.attr("input_shape"))
    k = tuple(wt.shape[2:])
    stride, dilation = tuple(n.attr("stride")), tuple(n.attr("dilation"))
    pads, o = conv_geometry("conv2d_backprop_input", shape, wt.shape, stride, n.attr("pad_mode"),
                            n.attr("pad"), dilation, n.attr("group"))
    t, b, l, r = pads
    extra = [shape[2 + i] - ((o[i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 - p)
             for i, p in enumerate((t + b, l + r))]
    if any(e < 0 or e >= max(stride[i], dilation[i]) for i, e in enumerate(extra)):
        raise NotImplementedError(
            f"ms.export(file_format='ONNX'): conv2d_backprop_input to shape {shape} needs "
            f"output_padding {extra}, outside ONNX ConvTranspose's range [0, max(stride, "
            f"dilation)); ONNX export does not support this geometry yet")
    w.add("ConvTranspose", [di, wi], ys, kernel_shape=list(k), strides=list(stride),
          dilations=list(dilation), pads=[t, l, b, r], output_padding=extra,
          group=int(n.attr("group")))


def _pool(w, n, xs, ys, op_type, **extra):
    x = n.inputs[0]
    k, stride = tuple(n.attr("kernel_size")), tuple(n.attr("stride"))
    (t, b, l, r), hw = pool_geometry(n.name, x.shape, k, stride, n.attr("pad_mode"),
                                     n.attr("pad"))
    _check_shape(n, tuple(x.shape[:2]) + tuple(hw), "with these pads")
    w.add(op_type, xs[:1], ys, kernel_shape=list(k), strides=list(stride), pads=[t, l, b, r],
          **extra)


@converts("max_pool2d")
def _max_pool(w, n, xs, ys):
    _pool(w, n, xs, ys, "MaxPool")


@converts("avg_pool2d")
def _avg_pool(w, n, xs, ys):
    _pool(w, n, xs, ys, "AveragePool", count_include_pad=int(bool(n.attr("count_include_pad"))))


@converts("batch_norm")
def _batch_norm(w, n, xs, ys):
    if n.attr("training"):
        raise NotImplementedError(
            "ms.export(file_format='ONNX'): batch_norm with training=True (batch statistics) "
            "has no inference form; export calls net.set_train(False): a batch_norm called "
            "with training=True in construct cannot be exported")
    x = n.inputs[0]
    ins = [w.cast(a, v.dtype, x.dtype) for a, v in zip(xs, n.inputs)]
    w.add("BatchNormalization", ins, ys, epsilon=float(n.attr("epsilon")))


@converts("layer_norm")
def _layer_norm(w, n, xs, ys):
    """ONNX LayerNormalization where gamma/beta cover the normalised axes; otherwise (a
    begin_params_axis past begin_norm_axis) the mean/variance form minispore computes."""
    x = n.inputs[0]
    r = len(x.shape)
    bna = normalize_axis("layer_norm", n.attr("begin_norm_axis"), r)
    bpa = normalize_axis("layer_norm", n.attr("begin_params_axis"), r)
    eps = float(n.attr("epsilon"))
    if bna == bpa:
        w.add("LayerNormalization", xs[:3], ys, axis=bna, epsilon=eps)
        return
    c = x.dtype
    axes = w.ints(range(bna, r))
    mean = w.add("ReduceMean", [xs[0], axes], keepdims=1)
    centred = w.add("Sub", [xs[0], mean])
    var = w.add("ReduceMean", [w.add("Mul", [centred, centred]), axes], keepdims=1)
    std = w.add("Sqrt", [w.add("Add", [var, w.const(np.asarray(eps, c.np), "eps")])])
    normed = w.add("Div", [centred, std])
    w.add("Add", [w.add("Mul", [normed, xs[1]]), xs[2]], ys)


@converts("softmax", "log_softmax")
def _softmax(w, n, xs, ys):
    x = n.inputs[0]
    axis = normalize_axis(n.name, n.attr("axis"), len(x.shape))
    src = xs[0]
    if len(x.shape) == 0:
        src = w.add("Reshape", [src, w.ints([1])])
    out = w.add("Softmax" if n.name == "softmax" else "LogSoftmax", [src], axis=axis)
    if len(x.shape) == 0:
        w.add("Reshape", [out, w.ints([])], ys)
    else:
        w.add("Identity", [out], ys)


@converts("sort")
def _sort(w, n, xs, ys):
    """ONNX TopK over the whole axis: its ties come lower index first, as minispore's stable
    sort orders them in both directions; indices int64 -> the graph's int32."""
    x = n.inputs[0]
    axis = normalize_axis("sort", n.attr("axis"), len(x.shape))
    idx = w.fresh("sort_indices")
    w.add("TopK", [xs[0], w.ints([x.shape[axis]])], [ys[0], idx], axis=axis,
          largest=int(bool(n.attr("descending"))), sorted=1)
    w.cast(idx, dt.int64, n.outputs[1].dtype, out=ys[1])


# ---------------------------------------------------------------- data movement ----------------
@converts("reshape")
def _reshape(w, n, xs, ys):
    w.add("Reshape", [xs[0], w.ints(n.outputs[0].shape)], ys)


@converts("broadcast_to")
def _broadcast_to(w, n, xs, ys):
    w.add("Expand", [xs[0], w.ints(n.outputs[0].shape)], ys)


@converts("transpose")
def _transpose(w, n, xs, ys):
    w.add("Transpose", xs[:1], ys, perm=[int(p) for p in n.attr("perm")])


@converts("concat")
def _concat(w, n, xs, ys):
    out = n.outputs[0]
    axis = normalize_axis("concat", n.attr("axis"), len(out.shape))
    ins = [w.cast(x, v.dtype, out.dtype) for x, v in zip(xs, n.inputs)]
    w.add("Concat", ins, ys, axis=axis)


@converts("split")
def _split(w, n, xs, ys):
    x = n.inputs[0]
    axis = normalize_axis("split", n.attr("axis"), len(x.shape))
    w.add("Split", [xs[0], w.ints(n.attr("sizes"))], ys, axis=axis)


@converts("strided_slice")
def _strided_slice(w, n, xs, ys):
    """begin/end are normalised to [0, dim] (end -1: through index 0 with a negative step,
    which ONNX Slice spells as an end below -dim)."""
    begin, end, strides = n.attr("begin"), n.attr("end"), n.attr("strides")
    ends = [INT64_MIN if (e == -1 and s < 0) else e for e, s in zip(end, strides)]
    w.add("Slice", [xs[0], w.ints(begin), w.ints(ends), w.ints(range(len(begin))),
                    w.ints(strides)], ys)


@converts("gather")
def _gather(w, n, xs, ys):
    x = n.inputs[0]
    axis = normalize_axis("gather", n.attr("axis"), len(x.shape))
    w.add("Gather", xs[:2], ys, axis=axis)


@converts("slice_update")
def _slice_update(w, n, xs, ys):
    """x with x[begin:end:strides] = value (Tensor.__setitem__): ScatterND at the region's
    positions, which are known while exporting (range(b, e, s) per axis: end -1 with a
    negative step runs through index 0)."""
    x, v = n.inputs
    ranges = [np.arange(b, e, s, dtype=np.int64)
              for b, e, s in zip(n.attr("begin"), n.attr("end"), n.attr("strides"))]
    region = tuple(len(r) for r in ranges)
    positions = np.stack(np.meshgrid(*ranges, indexing="ij"), axis=-1) if ranges else \
        np.zeros((0,), np.int64)
    upd = w.add("Expand", [w.cast(xs[1], v.dtype, x.dtype), w.ints(region)])
    w.add("ScatterND", [xs[0], w.const(positions, "positions"), upd], ys)


@converts("strided_slice_grad")
def _strided_slice_grad(w, n, xs, ys):
    """Zeros of `shape` with the slice region holding the input (how conv3d pads and how a
    slice's gradient is formed): ScatterND into ConstantOfShape at the region's positions."""
    from onnx import helper
    g, out = n.inputs[0], n.outputs[0]
    ranges = [np.arange(b, e, s, dtype=np.int64)
              for b, e, s in zip(n.attr("begin"), n.attr("end"), n.attr("strides"))]
    zeros = w.add("ConstantOfShape", [w.ints(out.shape)],
                  value=helper.make_tensor("zero", onnx_type(out.dtype), [1], [0]))
    positions = np.stack(np.meshgrid(*ranges, indexing="ij"), axis=-1) if ranges else \
        np.zeros((0,), np.int64)
    w.add("ScatterND", [zeros, w.const(positions, "positions"),
                        w.cast(xs[0], g.dtype, out.dtype)], ys)


@converts("scatter_update", "scatter_add")
def _scatter(w, n, xs, ys):
    """x with x[..., idx, ...] (along `axis`) set to / increased by the updates, as ScatterND
    (reduction 'add' accumulates repeated indices): each position of the indexed region
    x.shape[:axis] + idx.shape + x.shape[axis + 1:] names its element of x, the axis'
    coordinate read from idx (negative ones counted from the end)."""
    x, idx, upd = n.inputs
    r, k = len(x.shape), len(idx.shape)
    a = normalize_axis(n.name, n.attr("axis"), r)
    region = tuple(x.shape[:a]) + tuple(idx.shape) + tuple(x.shape[a + 1:])
    grid = np.indices(region, dtype=np.int64)
    static = np.zeros(region + (r,), np.int64)
    for d in range(r):
        if d != a:
            static[..., d] = grid[d if d < a else d - 1 + k]
    i64 = w.cast(xs[1], idx.dtype, dt.int64)
    i64 = w.add("Where", [w.add("Less", [i64, w.ints([0])]),
                          w.add("Add", [i64, w.ints([x.shape[a]])]), i64])
    col = w.add("Reshape", [i64, w.ints((1,) * a + tuple(idx.shape) + (1,) * (r - a))])
    unit = w.const(np.eye(r, dtype=np.int64)[a], "axis_unit")
    positions = w.add("Add", [w.const(static, "positions"), w.add("Mul", [col, unit])])
    updates = w.add("Expand", [w.cast(xs[2], upd.dtype, x.dtype), w.ints(region)])
    extra = {"reduction": "add"} if n.name == "scatter_add" else {}
    w.add("ScatterND", [xs[0], positions, updates], ys, **extra)


@converts("tile")
def _tile(w, n, xs, ys):
    x, out = n.inputs[0], n.outputs[0]
    r = len(out.shape)
    src = xs[0]
    if len(x.shape) < r:
        src = w.add("Reshape", [src, w.ints((1,) * (r - len(x.shape)) + tuple(x.shape))])
    reps = (1,) * (r - len(n.attr("reps"))) + tuple(n.attr("reps"))
    w.add("Tile", [src, w.ints(reps)], ys)


for _name in CONVERTERS:            # a gradient-named op that forward code uses is mapped here
    UNSUPPORTED.pop(_name, None)

__all__: list = []
