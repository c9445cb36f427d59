"""Source templates of the CPU conv/pool kernels; never run as they are here.

windows.py compiles these functions per window GEOMETRY: a generated module defines the
upper-case names below as constants (kernel size KH x KW, stride SH/SW, top/left padding PT/PL,
dilation DH/DW, conv groups G, avg-pool INCLUDE_PAD) and then holds the text of these functions,
so numba sees the window loops with constant trip counts and bounds (LLVM unrolls them and drops
the dead padding checks). With the geometry passed as arguments instead, the LeNet-sized kernels
ran 2-4x slower (measured on the digits CNN: max_pool2d_grad 190-340 us -> ~80 us).

Layouts: `cols` of group g is (CG*KH*KW, N*Ho*Wo): row k = (c*KH + i)*KW + j, column
(n*Ho + oy)*Wo + ox, so the innermost loop walks ox along one image row in x and in cols.
The GEMMs are np.dot (BLAS). Shapes and dtypes stay runtime values (one compile per dtype).
"""
# ruff: noqa: F821  (the geometry names are defined by the generated module)
from __future__ import annotations

import numpy as np

CONV_GEOMETRY = ("KH", "KW", "SH", "SW", "PT", "PL", "DH", "DW", "G")
POOL_GEOMETRY = ("KH", "KW", "SH", "SW", "PT", "PL", "INCLUDE_PAD")


# ---------------------------------------------------------------- convolution --------------------
def ox_range(j, W, wo):
    """The output columns ox whose tap j reads inside the image: lo <= ox < hi."""
    off = j * DW - PL
    lo = 0 if off >= 0 else (-off + SW - 1) // SW
    hi = 0 if W - off <= 0 else min(wo, (W - 1 - off) // SW + 1)
    return lo, max(lo, hi)


def im2col(x, g, ho, wo):
    N, C, H, W = x.shape
    CG = C // G
    HW = ho * wo
    cols = np.zeros((CG * KH * KW, N * HW), x.dtype)
    for c in range(CG):
        for i in range(KH):
            for j in range(KW):
                row = cols[(c * KH + i) * KW + j]
                lo, hi = ox_range(j, W, wo)
                for n in range(N):
                    for oy in range(ho):
                        y = oy * SH + i * DH - PT
                        if 0 <= y < H:
                            base = n * HW + oy * wo
                            for ox in range(lo, hi):
                                row[base + ox] = x[n, g * CG + c, y, ox * SW + j * DW - PL]
    return cols


def col2im(cols, dx, g, ho, wo):
    """dx[group g] += the columns scattered back to their taps (im2col's adjoint)."""
    N, C, H, W = dx.shape
    CG = C // G
    HW = ho * wo
    for c in range(CG):
        for i in range(KH):
            for j in range(KW):
                row = cols[(c * KH + i) * KW + j]
                lo, hi = ox_range(j, W, wo)
                for n in range(N):
                    for oy in range(ho):
                        y = oy * SH + i * DH - PT
                        if 0 <= y < H:
                            base = n * HW + oy * wo
                            for ox in range(lo, hi):
                                dx[n, g * CG + c, y, ox * SW + j * DW - PL] += row[base + ox]


def rows_of(dy, g, og):
    """(og, N*Ho*Wo): the output channels of group g as rows (dy is (N, O, Ho, Wo))."""
    N, _, ho, wo = dy.shape
    HW = ho * wo
    d3 = dy.reshape((N, dy.shape[1], HW))
    r = np.empty((og, N * HW), dy.dtype)
    for o in range(og):
        for n in range(N):
            r[o, n * HW:(n + 1) * HW] = d3[n, g * og + o]
    return r


def conv2d(x, w, ho, wo):
    N = x.shape[0]
    O = w.shape[0]
    og = O // G
    K = w.shape[1] * KH * KW
    HW = ho * wo
    out = np.empty((N, O, ho, wo), x.dtype)
    o3 = out.reshape((N, O, HW))
    for g in range(G):
        wg = np.ascontiguousarray(w[g * og:(g + 1) * og]).reshape((og, K))
        r = np.dot(wg, im2col(x, g, ho, wo))
        for o in range(og):
            for n in range(N):
                o3[n, g * og + o] = r[o, n * HW:(n + 1) * HW]
    return out


def conv2d_bpi(dy, w, N, Cin, H, W):
    O = w.shape[0]
    og = O // G
    K = w.shape[1] * KH * KW
    ho, wo = dy.shape[2], dy.shape[3]
    dx = np.zeros((N, Cin, H, W), dy.dtype)
    for g in range(G):
        wg = np.ascontiguousarray(w[g * og:(g + 1) * og]).reshape((og, K))
        col2im(np.dot(np.ascontiguousarray(wg.T), rows_of(dy, g, og)), dx, g, ho, wo)
    return dx


def conv2d_bpf(x, dy, O, CG):
    og = O // G
    ho, wo = dy.shape[2], dy.shape[3]
    out = np.empty((O, CG, KH, KW), x.dtype)
    for g in range(G):
        cols = im2col(x, g, ho, wo)
        r = np.dot(rows_of(dy, g, og), cols.T)
        out[g * og:(g + 1) * og] = r.reshape((og, CG, KH, KW))
    return out


# ---------------------------------------------------------------- pooling ------------------------
def argtap(x, n, c, oy, ox):
    """Flat y*W + x of the first maximum of one window (NaN counts as the maximum), -1 if the
    maximum is padding. Compared in x's own dtype (a float64 running maximum was 3-4x slower)."""
    H, W = x.shape[2], x.shape[3]
    best = x.dtype.type(-np.inf)
    at = -1
    for i in range(KH):
        y = oy * SH + i - PT
        if 0 <= y < H:
            for j in range(KW):
                xx = ox * SW + j - PL
                if 0 <= xx < W:
                    v = x[n, c, y, xx]
                    if v > best or (v != v and best == best):
                        best, at = v, y * W + xx
    return at


def max_pool(x, ho, wo):
    N, Cc, H, W = x.shape
    out = np.empty((N, Cc, ho, wo), x.dtype)
    ninf, nan = x.dtype.type(-np.inf), x.dtype.type(np.nan)
    for n in range(N):
        for c in range(Cc):
            for oy in range(ho):
                for ox in range(wo):
                    best = ninf          # a window of padding only (or of -inf) gives -inf
                    isnan = False
                    for i in range(KH):
                        y = oy * SH + i - PT
                        if 0 <= y < H:
                            for j in range(KW):
                                xx = ox * SW + j - PL
                                if 0 <= xx < W:
                                    v = x[n, c, y, xx]
                                    isnan |= v != v
                                    best = max(best, v)
                    out[n, c, oy, ox] = nan if isnan else best
    return out


def max_pool_grad(x, dy):
    N, Cc, ho, wo = dy.shape
    W = x.shape[3]
    dx = np.zeros(x.shape, dy.dtype)
    for n in range(N):
        for c in range(Cc):
            for oy in range(ho):
                for ox in range(wo):
                    at = argtap(x, n, c, oy, ox)
                    if at >= 0:
                        dx[n, c, at // W, at % W] += dy[n, c, oy, ox]
    return dx


def max_pool_gather(x, g, ho, wo):
    N, Cc, _, W = x.shape
    out = np.zeros((N, Cc, ho, wo), g.dtype)
    for n in range(N):
        for c in range(Cc):
            for oy in range(ho):
                for ox in range(wo):
                    at = argtap(x, n, c, oy, ox)
                    if at >= 0:
                        out[n, c, oy, ox] = g[n, c, at // W, at % W]
    return out


def window_count(H, W, oy, ox):
    if INCLUDE_PAD:
        return KH * KW
    k = 0
    for i in range(KH):
        y = oy * SH + i - PT
        for j in range(KW):
            xx = ox * SW + j - PL
            if 0 <= y < H and 0 <= xx < W:
                k += 1
    return k


def avg_pool(x, ho, wo):
    N, Cc, H, W = x.shape
    out = np.empty((N, Cc, ho, wo), x.dtype)
    for n in range(N):
        for c in range(Cc):
            for oy in range(ho):
                for ox in range(wo):
                    s = 0.0
                    for i in range(KH):
                        y = oy * SH + i - PT
                        for j in range(KW):
                            xx = ox * SW + j - PL
                            if 0 <= y < H and 0 <= xx < W:
                                s += x[n, c, y, xx]
                    out[n, c, oy, ox] = s / window_count(H, W, oy, ox)
    return out


def avg_pool_grad(dy, H, W):
    N, Cc, ho, wo = dy.shape
    dx = np.zeros((N, Cc, H, W), dy.dtype)
    for n in range(N):
        for c in range(Cc):
            for oy in range(ho):
                for ox in range(wo):
                    q = dy[n, c, oy, ox] / window_count(H, W, oy, ox)
                    for i in range(KH):
                        y = oy * SH + i - PT
                        for j in range(KW):
                            xx = ox * SW + j - PL
                            if 0 <= y < H and 0 <= xx < W:
                                dx[n, c, y, xx] += q
    return dx


CONV_FUNCTIONS = (ox_range, im2col, col2im, rows_of, conv2d, conv2d_bpi, conv2d_bpf)
POOL_FUNCTIONS = (argtap, max_pool, max_pool_grad, max_pool_gather, window_count, avg_pool,
                  avg_pool_grad)
