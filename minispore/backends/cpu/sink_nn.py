"""The CPU sink (O2) lowerings of the conv/pool/norm/random primitives: each node becomes a call
of one numba-compiled helper. Convolutions and pools call windows.py's kernels, imported into
the graph's module by name (`conv2d_windows`, `max_pool_<digest>` for a pool compiled for this
node's geometry); the norms (per-channel/per-row loops) and the random ops (the splitmix64
counter generator of core/ops/random.py: bit-identical to the numpy reference for uniform,
randint and dropout) are below. The generated graph function imports this module (sink.py's
header), with its DIGEST in the source so numba's on-disk cache of a sunk graph is rebuilt when
this file changes.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
from numba import njit

from . import kernels_row as _kernels_row
from . import windows as _windows

DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
_J = dict(cache=True, nogil=True, error_model="numpy")


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


def _window(e, n, a, ind):
    """conv2d family and pooling: a call of windows.py's kernel for this node's geometry."""
    name, out = n.op.name, n.outputs[0]
    shapes = tuple(v.shape for v in n.inputs)
    if name.startswith("conv2d"):
        mod, fname, extra = _windows.conv_kernel(name, shapes, a)
    else:
        mod, fname, extra = _windows.pool_kernel(name, shapes[0], a)
    if any(v.dtype is not out.dtype for v in n.inputs):
        raise _unsupported(f"{name} of mixed dtypes")
    line, alias = _windows.import_line(mod, fname)
    e.imports.append(line)
    ins = ", ".join([e.name(v) for v in n.inputs] + [repr(int(v)) for v in extra])
    e.line(ind, f"{e.out(out)} = {alias}({ins})")      # same dtype in and out: no copy


def _unsupported(msg):
    from .sink import SinkUnsupported
    return SinkUnsupported(msg)


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
    "conv2d": _window, "conv2d_backprop_input": _window, "conv2d_backprop_filter": _window,
    "max_pool2d": _window, "max_pool2d_grad": _window, "max_pool2d_gather": _window,
    "avg_pool2d": _window, "avg_pool2d_grad": _window,
    "batch_norm": _batch_norm, "layer_norm": _layer_norm,
    "random_uniform": _random, "random_normal": _random, "random_randint": _random,
    "dropout": _dropout,
}
HEADER = ("from minispore.backends.cpu.sink_nn import (nn_batch_norm, nn_dropout, "
          "nn_layer_norm, nn_normal, nn_randint, nn_uniform)\n"
          f"SINK_NN_DIGEST = {DIGEST!r}\n"
          "from minispore.backends.cpu.kernels_row import sce_grad_rows, sce_rows\n"
          f"KERNELS_ROW_DIGEST = {_kernels_row.DIGEST!r}\n")
