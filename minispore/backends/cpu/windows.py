"""The CPU conv/pool kernels, shared by the eager kernels (kernels_nn.py) and the O2 sink.

Convolutions: im2col + BLAS, one numba function per dtype for every geometry (below). `cols` of
group g is (CG*kh*kw, N*Ho*Wo): row k = (c*kh + i)*kw + j, column (n*Ho + oy)*Wo + ox, so the
innermost loop walks ox along one image row in x and in cols. The GEMMs are `gemm` (np.dot) of
C-contiguous matrices; the rest is plain loops, which numba compiles fast (slice assignments,
`.T` operands and ascontiguousarray made a first compile take several seconds). The copies index
flat views with uint64 offsets (`_u`): numba then drops the negative-index wraparound it adds to
every signed index, which made them 2-3x faster (im2col of the digits CNN's second conv: 176 ->
65 us); an offset may wrap below zero before the column term is added, which unsigned arithmetic
undoes exactly (every element read or written lies inside the array). Compiled per
geometry instead (constant kernel size, stride, padding), the digits CNN's conv family ran only
~15% faster (640 vs 770 us a step) for a compile of ~5 s per geometry, so it stays generic.

Pools: loops/pool.py's definitions rendered by render/numba_source.py per window geometry
(constant window loops make them 2-4x faster), loaded from the on-disk kernel cache; the native
sink renders the same definitions (native_pool.py).

`conv_kernel` / `pool_kernel` map a node (name, input shapes, attributes) to (module, function
name, trailing int arguments).
"""
from __future__ import annotations

import sys

import numpy as np
from numba import njit
from numba import uint64 as _u

from ...core.ops import conv as C
from .loops import pool
from .render import numba_source

_J = dict(cache=True, nogil=True, error_model="numpy")
SHORT_ROW = 8           # im2col: output rows shorter than this take _im2col_short_rows


@njit(**_J)
def gemm(a, b):
    """a @ b (BLAS: numba's np.dot calls scipy's OpenBLAS, the "scipy" library of blas.py),
    compiled once per dtype and called by every kernel here."""
    return np.dot(a, b)


# ---------------------------------------------------------------- convolution --------------------
@njit(inline="always", **_J)
def _ox_range(j, W, wo, sw, dw, pl):
    """The output columns ox whose tap j reads inside the image: lo <= ox < hi."""
    off = j * dw - pl
    lo = 0 if off >= 0 else (-off + sw - 1) // sw
    hi = 0 if W - off <= 0 else min(wo, (W - 1 - off) // sw + 1)
    return lo, max(lo, hi)


@njit(**_J)
def im2col(x, g, ho, wo, kh, kw, sh, sw, pt, pl, dh, dw, group):
    N, C, H, W = x.shape
    cg = C // group
    HW = ho * wo
    L = N * HW
    cols = np.zeros((cg * kh * kw, L), x.dtype)
    xf, cf = x.reshape(x.size), cols.reshape(cols.size)
    if wo < SHORT_ROW:
        _im2col_short_rows(xf, cf, N, C, H, W, g, cg, ho, wo, kh, kw, sh, sw, pt, pl, dh, dw)
        return cols
    for c in range(cg):
        for i in range(kh):
            for j in range(kw):
                r0 = ((c * kh + i) * kw + j) * L
                lo, hi = _ox_range(j, W, wo, sw, dw, pl)
                for n in range(N):
                    s0 = ((n * C + g * cg + c) * H) * W + j * dw - pl
                    for oy in range(ho):
                        y = oy * sh + i * dh - pt
                        if 0 <= y < H:
                            s, d = _u(s0 + y * W), _u(r0 + n * HW + oy * wo)
                            for ox in range(lo, hi):
                                cf[d + _u(ox)] = xf[s + _u(ox * sw)]
    return cols


@njit(inline="always", **_J)
def _im2col_short_rows(xf, cf, N, C, H, W, g, cg, ho, wo, kh, kw, sh, sw, pt, pl, dh, dw):
    """im2col's copies when output rows are short (wo < SHORT_ROW), where the row loops would
    run a few elements each: the (tap, pixel) pairs inside the image are listed once, as
    offsets into one channel's rows and one image plane, and every (channel, image) copies them
    in that order (the digits CNN's second conv, 4x4 images: im2col 0.4-0.6x, the whole
    eager conv2d 0.66-0.84x the time, in-process A/B with fresh numba caches)."""
    HW = ho * wo
    L = N * HW
    dsts = np.empty(kh * kw * HW, np.uint64)
    srcs = np.empty(kh * kw * HW, np.uint64)
    T = 0
    for i in range(kh):
        for j in range(kw):
            for oy in range(ho):
                y = oy * sh + i * dh - pt
                if 0 <= y < H:
                    for ox in range(wo):
                        xx = ox * sw + j * dw - pl
                        if 0 <= xx < W:
                            dsts[T] = (i * kw + j) * L + oy * wo + ox
                            srcs[T] = y * W + xx
                            T += 1
    for c in range(cg):
        for n in range(N):
            d0 = _u((c * kh * kw * N + n) * HW)
            s0 = _u(((n * C + g * cg + c) * H) * W)
            for t in range(T):
                cf[d0 + dsts[t]] = xf[s0 + srcs[t]]


@njit(**_J)
def _col2im(cols, dx, g, ho, wo, kh, kw, sh, sw, pt, pl, dh, dw, group):
    """dx[group g] += the columns scattered back to their taps (im2col's adjoint)."""
    N, C, H, W = dx.shape
    cg = C // group
    HW = ho * wo
    L = N * HW
    cf, xf = cols.reshape(cols.size), dx.reshape(dx.size)
    for c in range(cg):
        for i in range(kh):
            for j in range(kw):
                r0 = ((c * kh + i) * kw + j) * L
                lo, hi = _ox_range(j, W, wo, sw, dw, pl)
                for n in range(N):
                    s0 = ((n * C + g * cg + c) * H) * W + j * dw - pl
                    for oy in range(ho):
                        y = oy * sh + i * dh - pt
                        if 0 <= y < H:
                            s, d = _u(s0 + y * W), _u(r0 + n * HW + oy * wo)
                            for ox in range(lo, hi):
                                xf[s + _u(ox * sw)] += cf[d + _u(ox)]


@njit(inline="always", **_J)
def _weight_rows(w, g, og, transpose):
    """Group g's filters as an (og, K) matrix, or its (K, og) transpose."""
    K = w.shape[1] * w.shape[2] * w.shape[3]
    w2 = w.reshape((w.shape[0], K))
    m = np.empty((K, og) if transpose else (og, K), w.dtype)
    for o in range(og):
        for k in range(K):
            if transpose:
                m[k, o] = w2[g * og + o, k]
            else:
                m[o, k] = w2[g * og + o, k]
    return m


@njit(**_J)
def conv2d(x, w, ho, wo, sh, sw, pt, pl, dh, dw, group):
    N = x.shape[0]
    O, _, kh, kw = w.shape
    og = O // group
    HW = ho * wo
    out = np.empty((N, O, ho, wo), x.dtype)
    of = out.reshape(out.size)
    for g in range(group):
        r = gemm(_weight_rows(w, g, og, False),
                 im2col(x, g, ho, wo, kh, kw, sh, sw, pt, pl, dh, dw, group))
        rf = r.reshape(r.size)
        for o in range(og):
            for n in range(N):
                d, s = _u((n * O + g * og + o) * HW), _u((o * N + n) * HW)
                for p in range(HW):
                    of[d + _u(p)] = rf[s + _u(p)]
    return out


@njit(**_J)
def conv2d_bpi(dy, w, N, Cin, H, W, sh, sw, pt, pl, dh, dw, group):
    O, _, kh, kw = w.shape
    og = O // group
    _, _, ho, wo = dy.shape
    HW = ho * wo
    df = dy.reshape(dy.size)
    dx = np.zeros((N, Cin, H, W), dy.dtype)
    for g in range(group):
        rows = np.empty((og, N * HW), dy.dtype)       # group g's dy as (og, N*Ho*Wo)
        rf = rows.reshape(rows.size)
        for o in range(og):
            for n in range(N):
                d, s = _u((o * N + n) * HW), _u((n * O + g * og + o) * HW)
                for p in range(HW):
                    rf[d + _u(p)] = df[s + _u(p)]
        _col2im(gemm(_weight_rows(w, g, og, True), rows), dx, g, ho, wo, kh, kw, sh, sw, pt,
                pl, dh, dw, group)
    return dx


@njit(**_J)
def conv2d_bpf(x, dy, O, cg, kh, kw, sh, sw, pt, pl, dh, dw, group):
    og = O // group
    N, _, ho, wo = dy.shape
    HW = ho * wo
    K = cg * kh * kw
    out = np.empty((O, cg, kh, kw), x.dtype)
    o2 = out.reshape((O, K))
    df = dy.reshape(dy.size)
    for g in range(group):
        dyt = np.empty((N * HW, og), dy.dtype)        # group g's dy as (N*Ho*Wo, og)
        tf = dyt.reshape(dyt.size)
        for n in range(N):
            for o in range(og):
                d, s = _u(n * HW * og + o), _u((n * O + g * og + o) * HW)
                for p in range(HW):
                    tf[d + _u(p * og)] = df[s + _u(p)]
        r = gemm(im2col(x, g, ho, wo, kh, kw, sh, sw, pt, pl, dh, dw, group), dyt)  # (K, og)
        for o in range(og):
            for k in range(K):
                o2[g * og + o, k] = r[k, o]
    return out


def conv_kernel(name: str, in_shapes: tuple, attrs: dict):
    """(module, function name, trailing int arguments) of a conv2d-family node whose two
    inputs have shapes `in_shapes`; the function takes the two inputs, then those arguments."""
    s, d, grp = attrs["stride"], attrs["dilation"], attrs["group"]
    if name == "conv2d":
        shapes = in_shapes
    elif name == "conv2d_backprop_input":
        shapes = (tuple(attrs["input_shape"]), in_shapes[1])
    else:
        shapes = (in_shapes[0], tuple(attrs["filter_shape"]))
    pads, o = C.conv_geometry(name, *shapes, s, attrs["pad_mode"], attrs["pad"], d, grp)
    geo = (s[0], s[1], pads[0], pads[2], d[0], d[1], grp)
    fname, lead = {"conv2d": ("conv2d", tuple(o)),
                   "conv2d_backprop_input": ("conv2d_bpi", tuple(shapes[0])),
                   "conv2d_backprop_filter": ("conv2d_bpf", tuple(shapes[1]))}[name]
    return sys.modules[__name__], fname, lead + geo


# ---------------------------------------------------------------- pooling (per geometry) ---------
def pool_kernel(name: str, x_shape: tuple, attrs: dict):
    """(module, function name, trailing int arguments) of a pooling node; `x_shape` is its
    first input's shape (avg_pool2d_grad: ignored, the input_shape attribute is used). The
    module is loops/pool.py's definition for the node's window geometry rendered by
    render/numba_source.py (one per geometry, cached on disk); its `kernel` takes the inputs,
    then the scalar arguments."""
    defn, params, scalars = pool.plan(name, tuple(x_shape), attrs)
    return numba_source.module(defn, **params), "kernel", tuple(scalars.values())
