"""The GPU backend's conv/pool/norm/random kernels, written against an array module `xp` as in
routines.py (cupy on the device, numpy in the table's tests).

- conv2d and its two adjoints: im2col (a strided view of the padded input copied once into a
  (N*Ho*Wo, C/group*kh*kw) matrix) and one matmul per group (cuBLAS on the device, the runtime's
  GEMM kernel while a CUDA graph is captured: matmul.py); the input
  gradient multiplies then scatters the columns back (col2im, one strided add per kernel tap).
  The same algorithm as the CPU backend's kernels_nn.py, so the two agree closely.
- max/avg pooling fold the kh*kw strided tap slices in place; the pooling gradients and the
  max-pool gather follow the references tap by tap (first maximum of a window wins).
- batch_norm/layer_norm as the references; random ops draw the references' counter-based
  splitmix64 stream on the device, so GPU, CPU and the references give the same bits for
  uniform/randint/dropout (normal up to float64 libm rounding), and no host round trip is needed
  (they can run inside a captured CUDA graph).
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core.ops import conv
from ...core.ops.random import M1, M2, M3, _UNIT_BITS
from . import storage as S
from .matmul import matmul

TABLE: dict = {}


def _cdt(out) -> np.dtype:
    return S.compute_np(out.dtype)


def _pad(xp, x, pads, value=0.0):
    if not any(pads):
        return x
    return xp.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])),
                  constant_values=value)


def _in(xp, x, meta, c):
    return S.to_compute(xp, x, meta.dtype).astype(c, copy=False)


# ---------------------------------------------------------------- convolution ------------------
def _windows(xp, xp_arr, k, o, stride, dilation):
    """(N, C, kh, kw, Ho, Wo) view: [n, c, i, j, y, x] = xp_arr[n, c, y*sh + i*dh, x*sw + j*dw]."""
    s = xp_arr.strides
    return xp.lib.stride_tricks.as_strided(
        xp_arr, tuple(xp_arr.shape[:2]) + tuple(k) + tuple(o),
        (s[0], s[1], s[2] * dilation[0], s[3] * dilation[1], s[2] * stride[0], s[3] * stride[1]))


def _im2col(xp, x, pads, k, o, stride, dilation, group):
    xq = S.contig(xp, _pad(xp, x, pads))
    w = _windows(xp, xq, k, o, stride, dilation)
    N, Cin = x.shape[:2]
    cg = Cin // group
    return [S.contig(xp, w[:, g * cg:(g + 1) * cg].transpose(0, 4, 5, 1, 2, 3))
            .reshape(N * o[0] * o[1], cg * k[0] * k[1]) for g in range(group)]


def _conv_fwd(xp, ctx, x, w, stride, pads, dilation, group, o):
    N, O = x.shape[0], w.shape[0]
    og = O // group
    cols = _im2col(xp, x, pads, w.shape[2:], o, stride, dilation, group)
    r = xp.empty((N, o[0], o[1], O), x.dtype)
    for g, cg in enumerate(cols):
        r[..., g * og:(g + 1) * og] = matmul(
            xp, ctx, cg, w[g * og:(g + 1) * og].reshape(og, -1).T).reshape(N, o[0], o[1], og)
    return r.transpose(0, 3, 1, 2)


def _conv_bpi(xp, ctx, dy, w, input_shape, stride, pads, dilation, group):
    N, Cin, H, W = input_shape
    O, cg, kh, kw = w.shape
    og = O // group
    o = dy.shape[2:]
    dxp = xp.zeros((N, Cin, H + pads[0] + pads[1], W + pads[2] + pads[3]), dy.dtype)
    d2 = S.contig(xp, dy.transpose(0, 2, 3, 1)).reshape(-1, O)
    for g in range(group):
        cols = matmul(xp, ctx, d2[:, g * og:(g + 1) * og], w[g * og:(g + 1) * og].reshape(og, -1)
                   ).reshape(N, o[0], o[1], cg, kh, kw)
        part = dxp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                conv.window(part, i, j, dilation, stride, o)[...] += \
                    cols[..., i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, pads[0]:pads[0] + H, pads[2]:pads[2] + W]


def _conv_bpf(xp, ctx, x, dy, filter_shape, stride, pads, dilation, group):
    O, cg, kh, kw = filter_shape
    og = O // group
    o = dy.shape[2:]
    cols = _im2col(xp, x, pads, (kh, kw), o, stride, dilation, group)
    d2 = S.contig(xp, dy.transpose(0, 2, 3, 1)).reshape(-1, O)
    dw = xp.empty(tuple(filter_shape), x.dtype)
    for g, cgm in enumerate(cols):
        dw[g * og:(g + 1) * og] = matmul(xp, ctx, d2[:, g * og:(g + 1) * og].T, cgm).reshape(
            og, cg, kh, kw)
    return dw


def _geometry(attrs, x_shape, w_shape):
    return conv.conv_geometry("conv2d", x_shape, w_shape, attrs["stride"], attrs["pad_mode"],
                           attrs["pad"], attrs["dilation"], attrs["group"])


def _conv(kind):
    def factory(xp, ctx, ms, attrs, out):
        c, od = _cdt(out), out.dtype
        s, d, grp = attrs["stride"], attrs["dilation"], attrs["group"]
        if kind == "conv2d":
            pads, o = _geometry(attrs, ms[0].shape, ms[1].shape)

            def run(x, w):
                return S.from_compute(xp, _conv_fwd(xp, ctx, _in(xp, x, ms[0], c),
                                                    _in(xp, w, ms[1], c), s, pads, d, grp, o), od)
        elif kind == "input":
            ishape = tuple(attrs["input_shape"])
            pads, _ = _geometry(attrs, ishape, ms[1].shape)

            def run(dy, w):
                return S.from_compute(xp, _conv_bpi(xp, ctx, _in(xp, dy, ms[0], c),
                                                    _in(xp, w, ms[1], c), ishape, s, pads, d,
                                                    grp), od)
        else:
            fshape = tuple(attrs["filter_shape"])
            pads, _ = _geometry(attrs, ms[0].shape, fshape)

            def run(x, dy):
                return S.from_compute(xp, _conv_bpf(xp, ctx, _in(xp, x, ms[0], c),
                                                    _in(xp, dy, ms[1], c), fshape, s, pads, d,
                                                    grp), od)
        return run
    return factory


TABLE["conv2d"] = _conv("conv2d")
TABLE["conv2d_backprop_input"] = _conv("input")
TABLE["conv2d_backprop_filter"] = _conv("filter")


# ---------------------------------------------------------------- pooling ----------------------
def _taps(k, s, o):
    return [(i, j, slice(i, i + s[0] * (o[0] - 1) + 1, s[0]),
             slice(j, j + s[1] * (o[1] - 1) + 1, s[1])) for i in range(k[0]) for j in range(k[1])]


def _pool(kind):
    def factory(xp, ctx, ms, attrs, out):
        c, od = _cdt(out), out.dtype
        k, s, shape = attrs["kernel_size"], attrs["stride"], ms[0].shape
        if kind == "max":
            pads, o = conv.pool_geometry("max_pool2d", shape, k, s, attrs["pad_mode"], attrs["pad"])
            fill, div = -np.inf, None
        else:
            pads, o, div_h = conv.avg_divisor(shape, k, s, attrs["pad_mode"], attrs["pad"],
                                           attrs["count_include_pad"])
            fill, div = 0.0, ctx.const(div_h.astype(c))
        fold = xp.maximum if kind == "max" else xp.add
        taps = _taps(k, s, o)

        def run(x):
            xq = _pad(xp, _in(xp, x, ms[0], c), pads, fill)
            r = xq[:, :, taps[0][2], taps[0][3]].copy()
            for _, _, ti, tj in taps[1:]:
                fold(r, xq[:, :, ti, tj], out=r)
            if div is not None:
                r = r / div
            return S.from_compute(xp, r, od)
        return run
    return factory


def _argmax_taps(xp, x, k, s, pads, o):
    """Per output position the flat tap (i * kw + j) of the window's first maximum (NaN counts as
    the maximum), as the reference's _argmax_taps."""
    xq = _pad(xp, x, pads, -np.inf)
    best = xp.full(tuple(x.shape[:2]) + tuple(o), -np.inf, x.dtype)
    arg = xp.zeros(tuple(x.shape[:2]) + tuple(o), np.int64)
    for i, j, ti, tj in _taps(k, s, o):
        v = xq[:, :, ti, tj]
        take = (v > best) | (xp.isnan(v) & ~xp.isnan(best))
        best = xp.where(take, v, best)
        arg = xp.where(take, i * k[1] + j, arg)
    return arg


def _pool_grads(kind):
    def factory(xp, ctx, ms, attrs, out):
        c, od = _cdt(out), out.dtype
        k, s = attrs["kernel_size"], attrs["stride"]
        if kind == "avg_grad":
            ishape = tuple(attrs["input_shape"])
            pads, o, div_h = conv.avg_divisor(ishape, k, s, attrs["pad_mode"], attrs["pad"],
                                           attrs["count_include_pad"])
            div = ctx.const(div_h.astype(c))
            N, Cn, H, W = ishape

            def run(dy):
                dxp = xp.zeros((N, Cn, H + pads[0] + pads[1], W + pads[2] + pads[3]), c)
                q = _in(xp, dy, ms[0], c) / div
                for _, _, ti, tj in _taps(k, s, o):
                    dxp[:, :, ti, tj] += q
                return S.from_compute(xp, dxp[:, :, pads[0]:pads[0] + H, pads[2]:pads[2] + W],
                                      od)
            return run
        shape = ms[0].shape
        pads, o = conv.pool_geometry("max_pool2d", shape, k, s, attrs["pad_mode"], attrs["pad"])
        N, Cn, H, W = shape
        if kind == "max_grad":
            def run(x, dy):
                arg = _argmax_taps(xp, _in(xp, x, ms[0], c), k, s, pads, o)
                d = _in(xp, dy, ms[1], c)
                dxp = xp.zeros((N, Cn, H + pads[0] + pads[1], W + pads[2] + pads[3]), c)
                for i, j, ti, tj in _taps(k, s, o):
                    dxp[:, :, ti, tj] += xp.where(arg == i * k[1] + j, d, 0)
                return S.from_compute(xp, dxp[:, :, pads[0]:pads[0] + H, pads[2]:pads[2] + W],
                                      od)
            return run

        def gather(x, g):
            arg = _argmax_taps(xp, _in(xp, x, ms[0], c), k, s, pads, o)
            gp = _pad(xp, _in(xp, g, ms[1], c), pads)
            r = xp.zeros(arg.shape, c)
            for i, j, ti, tj in _taps(k, s, o):
                r = xp.where(arg == i * k[1] + j, gp[:, :, ti, tj], r)
            return S.from_compute(xp, r, od)
        return gather
    return factory


TABLE["max_pool2d"] = _pool("max")
TABLE["avg_pool2d"] = _pool("avg")
TABLE["max_pool2d_grad"] = _pool_grads("max_grad")
TABLE["max_pool2d_gather"] = _pool_grads("max_gather")
TABLE["avg_pool2d_grad"] = _pool_grads("avg_grad")


# ---------------------------------------------------------------- normalisation ----------------
def _batch_norm(xp, ctx, ms, attrs, out):
    c, od = _cdt(out), out.dtype
    training, eps = attrs["training"], np.dtype(_cdt(out)).type(attrs["epsilon"])
    nd = len(ms[0].shape)
    shp = (1, ms[0].shape[1]) + (1,) * (nd - 2)
    axes = (0,) + tuple(range(2, nd))

    def run(x, scale, bias, mean, var):
        a = _in(xp, x, ms[0], c)
        if training:
            mu = a.mean(axis=axes, keepdims=True)
            v = ((a - mu) ** 2).mean(axis=axes, keepdims=True)
        else:
            mu, v = _in(xp, mean, ms[3], c).reshape(shp), _in(xp, var, ms[4], c).reshape(shp)
        y = (a - mu) / xp.sqrt(v + eps) * _in(xp, scale, ms[1], c).reshape(shp) + \
            _in(xp, bias, ms[2], c).reshape(shp)
        return S.from_compute(xp, y, od)
    return run


def _layer_norm(xp, ctx, ms, attrs, out):
    c, od = _cdt(out), out.dtype
    nd = len(ms[0].shape)
    bna = attrs["begin_norm_axis"] % nd
    axes = tuple(range(bna, nd))
    eps = np.dtype(c).type(attrs["epsilon"])

    def run(x, gamma, beta):
        a = _in(xp, x, ms[0], c)
        mu = a.mean(axis=axes, keepdims=True)
        v = ((a - mu) ** 2).mean(axis=axes, keepdims=True)
        y = (a - mu) / xp.sqrt(v + eps) * _in(xp, gamma, ms[1], c) + _in(xp, beta, ms[2], c)
        return S.from_compute(xp, y, od)
    return run


TABLE["batch_norm"], TABLE["layer_norm"] = _batch_norm, _layer_norm


# ---------------------------------------------------------------- random -----------------------
_U64 = np.uint64


def _mix(z):
    z = (z ^ (z >> _U64(30))) * M2
    z = (z ^ (z >> _U64(27))) * M3
    return z ^ (z >> _U64(31))


def random_bits(xp, key, seed: int, n: int):
    """random.random_bits on the device: n uint64 words for (key, op seed). The key is read as
    one-element slices, so everything stays an array (no host scalar, no synchronisation)."""
    k = key.astype(np.int64).view(np.uint64)
    s = _mix(_mix(k[0:1] * M1 ^ _U64(seed & 0xFFFFFFFFFFFFFFFF)) + k[1:2] * M1)
    return _mix(s + xp.arange(1, n + 1, dtype=np.uint64) * M1)


def _unit(bits, d: dt.DType):
    b = _UNIT_BITS[d.name]
    return (bits >> _U64(64 - b)).astype(np.float64) * (2.0 ** -b)


def _random(kind):
    def factory(xp, ctx, ms, attrs, out):
        shape, od, seed = tuple(out.shape), out.dtype, attrs["seed"]
        n = int(np.prod(shape, dtype=np.int64))

        def run(key):
            bits = random_bits(xp, key, seed, n)
            if kind == "uniform":
                r = _unit(bits, od)
            elif kind == "normal":
                u1 = ((bits >> _U64(11)).astype(np.float64) + 1.0) * 2.0 ** -53
                u2 = (_mix(bits) >> _U64(11)).astype(np.float64) * 2.0 ** -53
                r = xp.sqrt(-2.0 * xp.log(u1)) * xp.cos(2.0 * np.pi * u2)
            else:
                r = (bits % _U64(attrs["high"] - attrs["low"])).astype(np.int64) + attrs["low"]
            return S.from_compute(xp, r, od).reshape(shape)
        return run
    return factory


TABLE["random_uniform"] = _random("uniform")
TABLE["random_normal"] = _random("normal")
TABLE["random_randint"] = _random("randint")


def _dropout(xp, ctx, ms, attrs, out):
    xd = ms[0].dtype
    c = S.compute_np(xd)
    keep_prob, seed = attrs["keep_prob"], attrs["seed"]
    shape = tuple(ms[0].shape)
    n = int(np.prod(shape, dtype=np.int64))
    scale = np.dtype(c).type(1.0 / keep_prob)

    def run(x, key):
        keep = (_unit(random_bits(xp, key, seed, n), dt.float64) < keep_prob).reshape(shape)
        mask = keep.astype(c)
        y = _in(xp, x, ms[0], c) * mask * scale
        return S.from_compute(xp, y, xd), S.from_compute(xp, mask, xd)
    return run


TABLE["dropout"] = _dropout
