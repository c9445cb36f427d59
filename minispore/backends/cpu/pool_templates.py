"""Source templates of the CPU pooling kernels; never run as they are here.

windows.py compiles these functions per window GEOMETRY: a generated module defines the
upper-case names below as constants (kernel size KH x KW, stride SH/SW, top/left padding PT/PL,
avg-pool INCLUDE_PAD) and then holds the text of these functions, so numba sees the window loops
with constant trip counts and bounds (LLVM unrolls them and drops the dead padding checks). With
the geometry passed as arguments instead, the digits CNN's pools ran 2-4x slower (batch 32, 2x2
stride 2: max_pool2d_grad 190-340 us -> 80-150 us, max_pool2d 55-68 -> 29-43 us). The price is a
compile per geometry (~0.5 s per function and dtype, then cached on disk). Shapes and dtypes stay
runtime values.
"""
from __future__ import annotations

import numpy as np

# placeholders: a generated module defines each as an int constant before these functions' text
KH = KW = SH = SW = PT = PL = INCLUDE_PAD = None
MAX_POOL_GEOMETRY = ("KH", "KW", "SH", "SW", "PT", "PL")
AVG_POOL_GEOMETRY = MAX_POOL_GEOMETRY + ("INCLUDE_PAD",)


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


MAX_POOL_FUNCTIONS = (argtap, max_pool, max_pool_grad, max_pool_gather)
AVG_POOL_FUNCTIONS = (window_count, avg_pool, avg_pool_grad)
# small helpers inlined into their callers at numba's IR level (not compiled on their own)
INLINE = (argtap, window_count)
