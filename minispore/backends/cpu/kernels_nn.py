"""CPU kernels of the conv/pool/norm/random primitives (core/ops/conv.py, norm.py, random.py).

- conv2d and its two adjoints: im2col (a strided view of the padded input, copied once into a
  (N*Ho*Wo, C/group*kh*kw) matrix) and one BLAS matmul per group; the input gradient multiplies
  then scatters the columns back (col2im, one strided add per kernel tap).
- max_pool2d / avg_pool2d: the padded input's kh * kw strided tap slices folded in place.
- The rest (pool gradients, batch_norm, layer_norm, random ops) run their numpy reference, which
  is already vectorised over the tensor (loops only over kernel taps).
`register(backend)` is called by kernels.register_all.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...core.ops import conv as C
from ...core.primitive import REGISTRY

REF_OPS = ("max_pool2d_grad", "max_pool2d_gather", "avg_pool2d_grad", "batch_norm",
           "layer_norm", "random_uniform", "random_normal", "random_randint", "dropout")


def compute_dtype(out_meta):
    d = out_meta.dtype.np
    return np.dtype(np.float32) if d.itemsize < 4 else d


def windows(xp, k, o, stride, dilation=(1, 1)):
    """(N, C, kh, kw, Ho, Wo) view of padded xp: element [n, c, i, j, y, x] is
    xp[n, c, y*sh + i*dh, x*sw + j*dw]."""
    s = xp.strides
    return as_strided(xp, xp.shape[:2] + tuple(k) + tuple(o),
                      (s[0], s[1], s[2] * dilation[0], s[3] * dilation[1], s[2] * stride[0],
                       s[3] * stride[1]), writeable=False)


def im2col(x, pads, k, o, stride, dilation, group):
    """[group] of (N*Ho*Wo, C/group*kh*kw) column matrices."""
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    w = windows(xp, k, o, stride, dilation)
    N, Cin = x.shape[:2]
    cg = Cin // group
    return [np.ascontiguousarray(w[:, g * cg:(g + 1) * cg].transpose(0, 4, 5, 1, 2, 3))
            .reshape(N * o[0] * o[1], cg * k[0] * k[1]) for g in range(group)]


def conv_fwd(x, w, stride, pads, dilation, group, o):
    N, O = x.shape[0], w.shape[0]
    og = O // group
    cols = im2col(x, pads, w.shape[2:], o, stride, dilation, group)
    out = np.empty((N, o[0], o[1], O), x.dtype)
    for g, cg in enumerate(cols):
        out[..., g * og:(g + 1) * og] = (cg @ w[g * og:(g + 1) * og].reshape(og, -1).T
                                         ).reshape(N, o[0], o[1], og)
    return out.transpose(0, 3, 1, 2)


def conv_bpi(dy, w, input_shape, stride, pads, dilation, group):
    N, Cin, H, W = input_shape
    O, cg, kh, kw = w.shape
    og = O // group
    o = dy.shape[2:]
    dxp = np.zeros((N, Cin, H + pads[0] + pads[1], W + pads[2] + pads[3]), dy.dtype)
    d2 = dy.transpose(0, 2, 3, 1).reshape(-1, O)
    for g in range(group):
        cols = (d2[:, g * og:(g + 1) * og] @ w[g * og:(g + 1) * og].reshape(og, -1)).reshape(
            N, o[0], o[1], cg, kh, kw)
        part = dxp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                C.window(part, i, j, dilation, stride, o)[...] += \
                    cols[..., i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, pads[0]:pads[0] + H, pads[2]:pads[2] + W]


def conv_bpf(x, dy, filter_shape, stride, pads, dilation, group):
    O, cg, kh, kw = filter_shape
    og = O // group
    o = dy.shape[2:]
    cols = im2col(x, pads, (kh, kw), o, stride, dilation, group)
    d2 = dy.transpose(0, 2, 3, 1).reshape(-1, O)
    dw = np.empty(tuple(filter_shape), x.dtype)
    for g, cgm in enumerate(cols):
        dw[g * og:(g + 1) * og] = (d2[:, g * og:(g + 1) * og].T @ cgm).reshape(og, cg, kh, kw)
    return dw


def _geometry(attrs, x_shape, w_shape):
    return C.conv_geometry("conv2d", x_shape, w_shape, attrs["stride"], attrs["pad_mode"],
                           attrs["pad"], attrs["dilation"], attrs["group"])


def conv_factory(kind):
    """A kernel factory for conv2d / conv2d_backprop_input / conv2d_backprop_filter."""
    def factory(in_metas, attrs, out_meta):
        c, odt = compute_dtype(out_meta), out_meta.dtype.np
        s, d, grp = attrs["stride"], attrs["dilation"], attrs["group"]
        if kind == "conv2d":
            pads, o = _geometry(attrs, in_metas[0].shape, in_metas[1].shape)

            def run(x, w):
                return np.ascontiguousarray(conv_fwd(x.astype(c), w.astype(c), s, pads, d, grp,
                                                     o), odt)
        elif kind == "input":
            ishape = tuple(attrs["input_shape"])
            pads, _ = _geometry(attrs, ishape, in_metas[1].shape)

            def run(dy, w):
                return np.ascontiguousarray(conv_bpi(dy.astype(c), w.astype(c), ishape, s, pads,
                                                     d, grp), odt)
        else:
            fshape = tuple(attrs["filter_shape"])
            pads, _ = _geometry(attrs, in_metas[0].shape, fshape)

            def run(x, dy):
                return np.ascontiguousarray(conv_bpf(x.astype(c), dy.astype(c), fshape, s, pads,
                                                     d, grp), odt)
        return run
    return factory


def pool_factory(kind):
    def factory(in_metas, attrs, out_meta):
        c, odt = compute_dtype(out_meta), out_meta.dtype.np
        k, s = attrs["kernel_size"], attrs["stride"]
        x_shape = in_metas[0].shape
        if kind == "max":
            pads, o = C.pool_geometry("max_pool2d", x_shape, k, s, attrs["pad_mode"], attrs["pad"])
            fill = -np.inf
        else:
            pads, o, div = C.avg_divisor(x_shape, k, s, attrs["pad_mode"], attrs["pad"],
                                         attrs["count_include_pad"])
            div = div.astype(c)
            fill = 0.0
        widths = ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3]))

        padded = any(pads)
        fold = np.maximum if kind == "max" else np.add
        taps = [(slice(i, i + s[0] * (o[0] - 1) + 1, s[0]), slice(j, j + s[1] * (o[1] - 1) + 1,
                                                                 s[1]))
                for i in range(k[0]) for j in range(k[1])]

        def run(x):
            # one vectorised pass per kernel tap (kh * kw strided slices folded in place): a
            # reduction over the small window axes of a 6-d strided view was ~10x slower
            xp = np.pad(x.astype(c), widths, constant_values=fill) if padded else x.astype(c)
            r = np.array(xp[:, :, taps[0][0], taps[0][1]])
            for ti, tj in taps[1:]:
                fold(r, xp[:, :, ti, tj], out=r)
            if kind != "max":
                r /= div
            return np.ascontiguousarray(r, odt)
        return run
    return factory


def register(backend, ref_kernel) -> None:
    for name in REF_OPS:
        backend.register(name)(ref_kernel(REGISTRY[name]))
    backend.register("conv2d")(conv_factory("conv2d"))
    backend.register("conv2d_backprop_input")(conv_factory("input"))
    backend.register("conv2d_backprop_filter")(conv_factory("filter"))
    backend.register("max_pool2d")(pool_factory("max"))
    backend.register("avg_pool2d")(pool_factory("avg"))
