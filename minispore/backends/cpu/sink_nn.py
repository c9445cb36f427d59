"""The CPU sink (O2) lowerings of the conv/pool/norm/random primitives: each node becomes a call
of one numba-compiled helper below (im2col + np.dot for the convolutions, window loops for the
pools, per-channel/per-row loops for the norms, the splitmix64 counter generator of
core/ops/random.py for the random ops: bit-identical to the numpy reference for uniform, randint
and dropout). The generated graph function imports this module (sink.py's header), with its
DIGEST in the source so numba's on-disk cache of a sunk graph is rebuilt when this file changes.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
from numba import njit

from ...core.ops import conv as C
from . import kernels_row as _kernels_row

DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
_J = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_J)
def nn_im2col(x, g, cg, kh, kw, sh, sw, pt, pl, dh, dw, ho, wo):
    N, _, H, W = x.shape
    cols = np.zeros((N * ho * wo, cg * kh * kw), x.dtype)
    for n in range(N):
        for oy in range(ho):
            for ox in range(wo):
                r = (n * ho + oy) * wo + ox
                for c in range(cg):
                    for i in range(kh):
                        y = oy * sh + i * dh - pt
                        if y < 0 or y >= H:
                            continue
                        for j in range(kw):
                            xx = ox * sw + j * dw - pl
                            if 0 <= xx < W:
                                cols[r, (c * kh + i) * kw + j] = x[n, g * cg + c, y, xx]
    return cols


@njit(**_J)
def nn_conv2d(x, w, sh, sw, pt, pl, dh, dw, group, ho, wo):
    N = x.shape[0]
    O, cg, kh, kw = w.shape
    og = O // group
    out = np.empty((N, O, ho, wo), x.dtype)
    for g in range(group):
        cols = nn_im2col(x, g, cg, kh, kw, sh, sw, pt, pl, dh, dw, ho, wo)
        wg = np.ascontiguousarray(w[g * og:(g + 1) * og].reshape((og, cg * kh * kw)).T)
        r = np.dot(cols, wg)
        for n in range(N):
            for o in range(og):
                for oy in range(ho):
                    for ox in range(wo):
                        out[n, g * og + o, oy, ox] = r[(n * ho + oy) * wo + ox, o]
    return out


@njit(**_J)
def _dy2(dy, g, og):
    N, _, ho, wo = dy.shape
    d = np.empty((N * ho * wo, og), dy.dtype)
    for n in range(N):
        for o in range(og):
            for oy in range(ho):
                for ox in range(wo):
                    d[(n * ho + oy) * wo + ox, o] = dy[n, g * og + o, oy, ox]
    return d


@njit(**_J)
def nn_conv2d_bpi(dy, w, N, Cin, H, W, sh, sw, pt, pl, dh, dw, group):
    O, cg, kh, kw = w.shape
    og = O // group
    ho, wo = dy.shape[2], dy.shape[3]
    dx = np.zeros((N, Cin, H, W), dy.dtype)
    for g in range(group):
        wg = np.ascontiguousarray(w[g * og:(g + 1) * og].reshape((og, cg * kh * kw)))
        cols = np.dot(_dy2(dy, g, og), wg)
        for n in range(N):
            for oy in range(ho):
                for ox in range(wo):
                    r = (n * ho + oy) * wo + ox
                    for c in range(cg):
                        for i in range(kh):
                            y = oy * sh + i * dh - pt
                            if y < 0 or y >= H:
                                continue
                            for j in range(kw):
                                xx = ox * sw + j * dw - pl
                                if 0 <= xx < W:
                                    dx[n, g * cg + c, y, xx] += cols[r, (c * kh + i) * kw + j]
    return dx


@njit(**_J)
def nn_conv2d_bpf(x, dy, O, cg, kh, kw, sh, sw, pt, pl, dh, dw, group):
    og = O // group
    ho, wo = dy.shape[2], dy.shape[3]
    out = np.empty((O, cg, kh, kw), x.dtype)
    for g in range(group):
        cols = nn_im2col(x, g, cg, kh, kw, sh, sw, pt, pl, dh, dw, ho, wo)
        r = np.dot(np.ascontiguousarray(_dy2(dy, g, og).T), cols)
        out[g * og:(g + 1) * og] = r.reshape((og, cg, kh, kw))
    return out


@njit(**_J)
def _argtap(xs, oy, ox, kh, kw, sh, sw, pt, pl):
    """(y, x) of the first maximum of one window of the 2-d plane xs (NaN counts as the
    maximum); (-1, -1) if the maximum is padding. Compared in xs's own dtype: a float64
    running maximum over float32 data converted every element (3-4x slower)."""
    H, W = xs.shape
    best = xs.dtype.type(-np.inf)
    by, bx = -1, -1
    for i in range(kh):
        y = oy * sh + i - pt
        if y < 0 or y >= H:
            continue
        for j in range(kw):
            xx = ox * sw + j - pl
            if xx < 0 or xx >= W:
                continue
            v = xs[y, xx]
            if v > best or (v != v and best == best):
                best, by, bx = v, y, xx
    return by, bx


@njit(**_J)
def nn_max_pool(x, kh, kw, sh, sw, pt, pl, ho, wo):
    N, Cc, H, W = x.shape
    out = np.empty((N, Cc, ho, wo), x.dtype)
    ninf, nan = x.dtype.type(-np.inf), x.dtype.type(np.nan)
    for n in range(N):
        for c in range(Cc):
            xs, os = x[n, c], out[n, c]
            for oy in range(ho):
                for ox in range(wo):
                    best = ninf          # a window of padding only (or of -inf) gives -inf
                    isnan = False
                    for i in range(kh):
                        y = oy * sh + i - pt
                        if y < 0 or y >= H:
                            continue
                        for j in range(kw):
                            xx = ox * sw + j - pl
                            if xx < 0 or xx >= W:
                                continue
                            v = xs[y, xx]
                            isnan |= v != v
                            best = max(best, v)
                    os[oy, ox] = nan if isnan else best
    return out


@njit(**_J)
def nn_max_pool_grad(x, dy, kh, kw, sh, sw, pt, pl):
    N, Cc, ho, wo = dy.shape
    dx = np.zeros(x.shape, dy.dtype)
    for n in range(N):
        for c in range(Cc):
            xs, ds, gs = x[n, c], dx[n, c], dy[n, c]
            for oy in range(ho):
                for ox in range(wo):
                    y, xx = _argtap(xs, oy, ox, kh, kw, sh, sw, pt, pl)
                    if y >= 0:
                        ds[y, xx] += gs[oy, ox]
    return dx


@njit(**_J)
def nn_max_pool_gather(x, g, kh, kw, sh, sw, pt, pl, ho, wo):
    N, Cc = x.shape[0], x.shape[1]
    out = np.zeros((N, Cc, ho, wo), g.dtype)
    for n in range(N):
        for c in range(Cc):
            xs, gs, os = x[n, c], g[n, c], out[n, c]
            for oy in range(ho):
                for ox in range(wo):
                    y, xx = _argtap(xs, oy, ox, kh, kw, sh, sw, pt, pl)
                    if y >= 0:
                        os[oy, ox] = gs[y, xx]
    return out


@njit(**_J)
def _count(H, W, oy, ox, kh, kw, sh, sw, pt, pl, include_pad):
    if include_pad:
        return kh * kw
    k = 0
    for i in range(kh):
        y = oy * sh + i - pt
        for j in range(kw):
            xx = ox * sw + j - pl
            if 0 <= y < H and 0 <= xx < W:
                k += 1
    return k


@njit(**_J)
def nn_avg_pool(x, kh, kw, sh, sw, pt, pl, ho, wo, include_pad):
    N, Cc, H, W = x.shape
    out = np.empty((N, Cc, ho, wo), x.dtype)
    for n in range(N):
        for c in range(Cc):
            for oy in range(ho):
                for ox in range(wo):
                    s = 0.0
                    for i in range(kh):
                        y = oy * sh + i - pt
                        for j in range(kw):
                            xx = ox * sw + j - pl
                            if 0 <= y < H and 0 <= xx < W:
                                s += x[n, c, y, xx]
                    out[n, c, oy, ox] = s / _count(H, W, oy, ox, kh, kw, sh, sw, pt, pl,
                                                   include_pad)
    return out


@njit(**_J)
def nn_avg_pool_grad(dy, H, W, kh, kw, sh, sw, pt, pl, include_pad):
    N, Cc, ho, wo = dy.shape
    dx = np.zeros((N, Cc, H, W), dy.dtype)
    for n in range(N):
        for c in range(Cc):
            for oy in range(ho):
                for ox in range(wo):
                    q = dy[n, c, oy, ox] / _count(H, W, oy, ox, kh, kw, sh, sw, pt, pl,
                                                  include_pad)
                    for i in range(kh):
                        y = oy * sh + i - pt
                        for j in range(kw):
                            xx = ox * sw + j - pl
                            if 0 <= y < H and 0 <= xx < W:
                                dx[n, c, y, xx] += q
    return dx


@njit(**_J)
def nn_batch_norm(x3, s, b, m, v, training, eps):
    N, Cc, S = x3.shape
    y = np.empty(x3.shape, x3.dtype)
    for c in range(Cc):
        if training:
            mu = 0.0
            for n in range(N):
                for k in range(S):
                    mu += x3[n, c, k]
            mu /= max(N * S, 1)
            var = 0.0
            for n in range(N):
                for k in range(S):
                    var += (x3[n, c, k] - mu) ** 2
            var /= max(N * S, 1)
        else:
            mu, var = float(m[c]), float(v[c])
        r = 1.0 / math.sqrt(var + eps)
        for n in range(N):
            for k in range(S):
                y[n, c, k] = (x3[n, c, k] - mu) * r * s[c] + b[c]
    return y


@njit(**_J)
def nn_layer_norm(x2, gamma, beta, eps):
    R, K = x2.shape
    P = gamma.size
    y = np.empty(x2.shape, x2.dtype)
    for r in range(R):
        mu = 0.0
        for k in range(K):
            mu += x2[r, k]
        mu /= max(K, 1)
        var = 0.0
        for k in range(K):
            var += (x2[r, k] - mu) ** 2
        var /= max(K, 1)
        inv = 1.0 / math.sqrt(var + eps)
        for k in range(K):
            f = (r * K + k) % P
            y[r, k] = (x2[r, k] - mu) * inv * gamma[f] + beta[f]
    return y


_M1, _M2, _M3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), \
    np.uint64(0x94D049BB133111EB)


@njit(**_J)
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _M2
    z = (z ^ (z >> np.uint64(27))) * _M3
    return z ^ (z >> np.uint64(31))


@njit(**_J)
def nn_random_bits(key, seed, n):
    s = _mix(_mix(np.uint64(key[0]) * _M1 ^ np.uint64(seed)) + np.uint64(key[1]) * _M1)
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = _mix(s + np.uint64(i + 1) * _M1)
    return out


@njit(**_J)
def nn_uniform(key, seed, n, nbits):
    bits = nn_random_bits(key, seed, n)
    out = np.empty(n, np.float64)
    for i in range(n):
        out[i] = np.float64(bits[i] >> np.uint64(64 - nbits)) * 2.0 ** -nbits
    return out


@njit(**_J)
def nn_normal(key, seed, n):
    bits = nn_random_bits(key, seed, n)
    out = np.empty(n, np.float64)
    for i in range(n):
        u1 = (np.float64(bits[i] >> np.uint64(11)) + 1.0) * 2.0 ** -53
        u2 = np.float64(_mix(bits[i]) >> np.uint64(11)) * 2.0 ** -53
        out[i] = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
    return out


@njit(**_J)
def nn_randint(key, seed, n, low, span):
    bits = nn_random_bits(key, seed, n)
    out = np.empty(n, np.int64)
    for i in range(n):
        out[i] = np.int64(bits[i] % np.uint64(span)) + low
    return out


@njit(**_J)
def nn_dropout(x, key, seed, keep_prob, scale):
    xf = x.ravel()
    bits = nn_random_bits(key, seed, xf.size)
    y = np.empty(xf.size, x.dtype)
    mask = np.empty(xf.size, x.dtype)
    for i in range(xf.size):
        keep = np.float64(bits[i] >> np.uint64(11)) * 2.0 ** -53 < keep_prob
        mask[i] = 1 if keep else 0
        y[i] = xf[i] * mask[i] * scale[0]
    return y.reshape(x.shape), mask.reshape(x.shape)


# ---------------------------------------------------------------- lowerings ----------------------
def _args(*vals) -> str:
    return ", ".join(repr(v) for v in vals)


def _conv(e, n, a, ind):
    from .sink import _np
    out = n.outputs[0]
    name = n.op.name
    s, d, g = a["stride"], a["dilation"], a["group"]
    if name == "conv2d":
        x, w = n.inputs
        pads, o = C.conv_geometry(name, x.shape, w.shape, s, a["pad_mode"], a["pad"], d, g)
        call = f"nn_conv2d({e.name(x)}, {e.name(w)}, " \
               f"{_args(s[0], s[1], pads[0], pads[2], d[0], d[1], g, o[0], o[1])})"
    elif name == "conv2d_backprop_input":
        dy, w = n.inputs
        ish = tuple(a["input_shape"])
        pads, _ = C.conv_geometry(name, ish, w.shape, s, a["pad_mode"], a["pad"], d, g)
        call = f"nn_conv2d_bpi({e.name(dy)}, {e.name(w)}, " \
               f"{_args(*ish, s[0], s[1], pads[0], pads[2], d[0], d[1], g)})"
    else:
        x, dy = n.inputs
        fsh = tuple(a["filter_shape"])
        pads, _ = C.conv_geometry(name, x.shape, fsh, s, a["pad_mode"], a["pad"], d, g)
        call = f"nn_conv2d_bpf({e.name(x)}, {e.name(dy)}, " \
               f"{_args(*fsh, s[0], s[1], pads[0], pads[2], d[0], d[1], g)})"
    if any(v.dtype is not out.dtype for v in n.inputs):
        raise _unsupported(f"{name} of mixed dtypes")
    e.line(ind, f"{e.out(out)} = {call}.astype({_np(out.dtype)})")


def _unsupported(msg):
    from .sink import SinkUnsupported
    return SinkUnsupported(msg)


def _pool(e, n, a, ind):
    name = n.op.name
    out = n.outputs[0]
    k, s = a["kernel_size"], a["stride"]
    x_shape = tuple(a["input_shape"]) if name == "avg_pool2d_grad" else n.inputs[0].shape
    pads, o = C.pool_geometry(name, x_shape, k, s, a["pad_mode"], a["pad"])
    geo = _args(k[0], k[1], s[0], s[1], pads[0], pads[2])
    ins = ", ".join(e.name(v) for v in n.inputs)
    call = {
        "max_pool2d": f"nn_max_pool({ins}, {geo}, {o[0]}, {o[1]})",
        "max_pool2d_grad": f"nn_max_pool_grad({ins}, {geo})",
        "max_pool2d_gather": f"nn_max_pool_gather({ins}, {geo}, {o[0]}, {o[1]})",
        "avg_pool2d": f"nn_avg_pool({ins}, {geo}, {o[0]}, {o[1]}, "
                      f"{bool(a.get('count_include_pad'))})",
        "avg_pool2d_grad": f"nn_avg_pool_grad({ins}, {x_shape[2]}, {x_shape[3]}, {geo}, "
                           f"{bool(a.get('count_include_pad'))})",
    }[name]
    e.line(ind, f"{e.out(out)} = {call}")


def _batch_norm(e, n, a, ind):
    x = n.inputs[0]
    out = n.outputs[0]
    S = int(np.prod(x.shape[2:], dtype=np.int64))
    x3 = f"{e.name(x)}.reshape(({x.shape[0]}, {x.shape[1]}, {S}))"
    rest = ", ".join(e.name(v) for v in n.inputs[1:])
    e.line(ind, f"{e.out(out)} = nn_batch_norm({x3}, {rest}, {bool(a['training'])}, "
                f"{float(a['epsilon'])!r}).reshape({out.shape!r})")


def _layer_norm(e, n, a, ind):
    x, gm, bt = n.inputs
    out = n.outputs[0]
    nd = len(x.shape)
    bna = a["begin_norm_axis"] % nd
    R = int(np.prod(x.shape[:bna], dtype=np.int64))
    K = int(np.prod(x.shape[bna:], dtype=np.int64))
    e.line(ind, f"{e.out(out)} = nn_layer_norm({e.name(x)}.reshape(({R}, {K})), "
                f"{e.name(gm)}.ravel(), {e.name(bt)}.ravel(), {float(a['epsilon'])!r})"
                f".reshape({out.shape!r})")


def _random(e, n, a, ind):
    from ...core.ops.random import _UNIT_BITS
    from .sink import _np
    out = n.outputs[0]
    key = e.name(n.inputs[0])
    size = int(np.prod(out.shape, dtype=np.int64))
    seed = a["seed"]
    if n.op.name == "random_uniform":
        call = f"nn_uniform({key}, {seed}, {size}, {_UNIT_BITS[out.dtype.name]})"
    elif n.op.name == "random_normal":
        call = f"nn_normal({key}, {seed}, {size})"
    else:
        call = f"nn_randint({key}, {seed}, {size}, {a['low']}, {a['high'] - a['low']})"
    e.line(ind, f"{e.out(out)} = {call}.astype({_np(out.dtype)}).reshape({out.shape!r})")


def _dropout(e, n, a, ind):
    from .sink import _np
    x, key = n.inputs
    y, m = n.outputs
    scale = f"np.full(1, {1.0 / a['keep_prob']!r}, {_np(x.dtype)})"
    e.line(ind, f"{e.out(y)}, {e.out(m)} = nn_dropout({e.name(x)}, {e.name(key)}, {a['seed']}, "
                f"{a['keep_prob']!r}, {scale})")


def _sce(e, n, a, ind):
    """The sparse softmax cross-entropy pair: kernels_row's row loops (the eager kernels)."""
    x, lab = n.inputs[:2]
    out = n.outputs[0]
    R, C = int(np.prod(x.shape[:-1], dtype=np.int64)), x.shape[-1]
    args = f"{e.name(x)}.reshape(({R}, {C})), {e.name(lab)}.reshape({R}).astype(np.int64)"
    if n.op.name == "sparse_softmax_cross_entropy":
        call = f"sce_rows({args})"
    else:
        call = f"sce_grad_rows({args}, {e.name(n.inputs[2])}.reshape({R}))"
    e.line(ind, f"{e.out(out)} = {call}.reshape({out.shape!r})")


LOWER = {
    "sparse_softmax_cross_entropy": _sce, "sparse_softmax_cross_entropy_grad": _sce,
    "conv2d": _conv, "conv2d_backprop_input": _conv, "conv2d_backprop_filter": _conv,
    "max_pool2d": _pool, "max_pool2d_grad": _pool, "max_pool2d_gather": _pool,
    "avg_pool2d": _pool, "avg_pool2d_grad": _pool,
    "batch_norm": _batch_norm, "layer_norm": _layer_norm,
    "random_uniform": _random, "random_normal": _random, "random_randint": _random,
    "dropout": _dropout,
}
HEADER = ("from minispore.backends.cpu.sink_nn import (nn_avg_pool, nn_avg_pool_grad, "
          "nn_batch_norm, nn_conv2d, nn_conv2d_bpf, nn_conv2d_bpi, nn_dropout, nn_layer_norm, "
          "nn_max_pool, nn_max_pool_gather, nn_max_pool_grad, nn_normal, nn_randint, "
          "nn_uniform)\n"
          f"SINK_NN_DIGEST = {DIGEST!r}\n"
          "from minispore.backends.cpu.kernels_row import sce_grad_rows, sce_rows\n"
          f"KERNELS_ROW_DIGEST = {_kernels_row.DIGEST!r}\n")
