"""The GPU backend's kernels for every primitive that is not an elementwise template: data
movement, indexing, creation, reductions, matmul (through matmul.py) and softmax here;
conv/pool/norm/random in routines_nn.py. Elementwise templates are generated CUDA (elementwise.py).

Each kernel is a factory `f(xp, ctx, in_metas, attrs, out_meta) -> run(*arrays)` written against
an array module `xp`: the backend passes cupy, so every routine is CuPy's own (matmul is cuBLAS
through cupy.matmul; reductions are CuPy's reduction kernels); tests pass numpy to check the table
against the op references on a machine without a GPU (that never serves device_target="GPU").
Arrays are in device storage (storage.py: bfloat16 as uint16 bits); results are C-contiguous.
`ctx.checks` is False while a CUDA graph is captured (no host synchronisation allowed then),
`ctx.in_graph` is True while a graph is captured and during its warm-up run (matmul then runs on
`ctx.gemm`, the runtime's own kernel: CuPy refuses cuBLAS calls during stream capture), and
`ctx.const(host_array)` uploads a constant once, when the kernel is made. Where
`ctx.compiles_cuda` (the CuPy runtime), a routine may launch a generated kernel instead,
`ctx.raw_kernel(cuda_codegen.CudaKernel)`: softmax and log_softmax do (cuda_softmax.py); the
tests' numpy compiles nothing, so they check the composed form there and the kernel on the host
shim and on a GPU."""
from __future__ import annotations

import math

import numpy as np

from ...core import dtype as dt
from ...core.index_check import IndexCheck
from ...core.ops.index_ops import _py_slices
from ...core.ops.reduce import reduction_axes
from . import cuda_softmax
from .matmul import matmul
from . import storage as S

TABLE: dict = {}


def routine(*names):
    def deco(factory):
        for n in names:
            TABLE[n] = factory
        return factory
    return deco


def _red(xp, fn: str, a, axes: tuple, keep: bool):
    """xp.<fn> over `axes` (a tuple); no axes: the array itself (numpy's axis=())."""
    if not axes:
        return a
    return getattr(xp, fn)(a, axis=axes, keepdims=keep)


_c = S.contig


# ---------------------------------------------------------------- data movement ----------------
@routine("reshape")
def _reshape(xp, ctx, ms, attrs, out):
    shape = tuple(out.shape)
    return lambda x: x.reshape(shape)


@routine("stop_gradient")
def _identity(xp, ctx, ms, attrs, out):
    return lambda x: x


@routine("check_class_labels")
def _check_class_labels(xp, ctx, ms, attrs, out):
    """The labels, after core/ops/nn.py's range check (a host sync; none while a CUDA graph is
    captured, as gather's)."""
    from ...core.ops.nn import label_check
    site = label_check(attrs["classes"], attrs["ignore_index"], attrs["caller"])

    def run(labels):
        if ctx.checks and labels.size:
            bad = (labels < 0) | (labels >= site.size)
            if site.ignore is not None:
                bad &= labels != site.ignore
            if bool(xp.any(bad)):                                                # syncs
                site.check(xp.asnumpy(labels) if hasattr(xp, "asnumpy") else labels)
        return labels
    return run


@routine("transpose")
def _transpose(xp, ctx, ms, attrs, out):
    perm = tuple(attrs["perm"])
    return lambda x: _c(xp, xp.transpose(x, perm))


@routine("broadcast_to")
def _broadcast_to(xp, ctx, ms, attrs, out):
    shape = tuple(out.shape)
    return lambda x: _c(xp, xp.broadcast_to(x, shape))


@routine("tile")
def _tile(xp, ctx, ms, attrs, out):
    reps = tuple(attrs["reps"])
    return lambda x: _c(xp, xp.tile(x, reps))


@routine("cast")
def _cast(xp, ctx, ms, attrs, out):
    src, dst = ms[0].dtype, out.dtype
    return lambda x: S.cast(xp, x, src, dst)


@routine("concat")
def _concat(xp, ctx, ms, attrs, out):
    a = attrs["axis"] % len(out.shape)
    srcs, od = [m.dtype for m in ms], out.dtype
    shape, sd = tuple(out.shape), S.storage_np(od)
    keys, at = [], 0
    for m in ms:                  # one slice copy per input, never cupy.concatenate: for more
        n = m.shape[a]            # than 8 inputs it uploads a host table of their pointers,
        keys.append((slice(None),) * a + (slice(at, at + n),))   # which a captured CUDA graph
        at += n                                                  # would replay stale

    def run(*xs):
        r = xp.empty(shape, sd)
        for x, s, k in zip(xs, srcs, keys):
            r[k] = S.cast(xp, x, s, od)
        return r
    return run


@routine("split")
def _split(xp, ctx, ms, attrs, out):
    nd = len(ms[0].shape)
    a = attrs["axis"] % nd
    bounds = np.cumsum((0,) + tuple(attrs["sizes"])).tolist()
    keys = [(slice(None),) * a + (slice(b, e),) for b, e in zip(bounds[:-1], bounds[1:])]
    return lambda x: tuple(_c(xp, x[k]) for k in keys)


@routine("strided_slice")
def _strided_slice(xp, ctx, ms, attrs, out):
    key = _py_slices(attrs["begin"], attrs["end"], attrs["strides"])
    return lambda x: _c(xp, x[key])


@routine("strided_slice_grad")
def _strided_slice_grad(xp, ctx, ms, attrs, out):
    key = _py_slices(attrs["begin"], attrs["end"], attrs["strides"])
    shape, sd = tuple(out.shape), S.storage_np(out.dtype)

    def run(g):
        r = xp.zeros(shape, sd)
        r[key] = g
        return r
    return run


# ---------------------------------------------------------------- indexing ---------------------
def _wrap_index(xp, idx, n):
    if idx.dtype.kind == "u":     # no negatives (and idx + n could overflow the unsigned type)
        return idx
    return xp.where(idx < 0, idx + n, idx)


def _check_bounds(xp, ctx, op: str, idx, n: int, a: int):
    """The eager kernels' IndexError (core/index_check.py) for an index outside [-n, n) of
    axis a: a host sync, skipped while a CUDA graph is captured (ctx.checks False)."""
    if ctx.checks and idx.size and bool(xp.any((idx < -n) | (idx >= n)) if idx.dtype.kind
                                        != "u" else xp.any(idx >= n)):      # syncs
        IndexCheck(op, n, a).check(xp.asnumpy(idx) if hasattr(xp, "asnumpy") else idx)


@routine("gather")
def _gather(xp, ctx, ms, attrs, out):
    nd = len(ms[0].shape)
    a = attrs["axis"] % nd
    n = ms[0].shape[a]

    def run(x, idx):
        _check_bounds(xp, ctx, "gather", idx, n, a)
        return _c(xp, xp.take(x, _wrap_index(xp, idx, n), axis=a))
    return run


def _scatter_key(ms, attrs):
    nd = len(ms[0].shape)
    a = attrs["axis"] % nd
    x, idx = ms[0].shape, ms[1].shape
    return a, x[a], tuple(x[:a]) + tuple(idx) + tuple(x[a + 1:])


@routine("scatter_add")
def _scatter_add(xp, ctx, ms, attrs, out):
    a, n, want = _scatter_key(ms, attrs)
    xd, ud = ms[0].dtype, ms[2].dtype
    half = xd in (dt.float16, dt.bfloat16)         # atomics on the bits would be wrong
    # cupy's add.at (scatter_add: atomicAdd) takes int32/uint32/uint64/float16/32/64 only:
    # int64 adds as uint64 (the same two's-complement bits), smaller ints and bool through int32
    # (the cast back wraps as numpy's add does; bool: nonzero, numpy's `or`)
    wide = xd.np in (np.int8, np.int16, np.uint8, np.uint16, np.bool_)
    bits64 = xd.np == np.int64

    def run(x, idx, upd):
        _check_bounds(xp, ctx, "scatter_add", idx, n, a)
        u = xp.broadcast_to(S.cast(xp, upd, ud, xd), want)
        key = (slice(None),) * a + (_wrap_index(xp, idx, n),)
        if half or wide:
            c = np.float32 if half else np.int32
            r = S.to_compute(xp, x, xd).astype(c)
            xp.add.at(r, key, S.to_compute(xp, u, xd).astype(c))
            return S.from_compute(xp, r, xd)
        r = x.copy()
        if bits64:
            xp.add.at(r.view(np.uint64), key, u.view(np.uint64))
        else:
            xp.add.at(r, key, u)
        return r
    return run


@routine("scatter_update")
def _scatter_update(xp, ctx, ms, attrs, out):
    a, n, want = _scatter_key(ms, attrs)
    xd, ud = ms[0].dtype, ms[2].dtype

    def run(x, idx, upd):
        _check_bounds(xp, ctx, "scatter_update", idx, n, a)
        r = x.copy()
        r[(slice(None),) * a + (_wrap_index(xp, idx, n),)] = \
            xp.broadcast_to(S.cast(xp, upd, ud, xd), want)
        return r
    return run


@routine("slice_update")
def _slice_update(xp, ctx, ms, attrs, out):
    key = _py_slices(attrs["begin"], attrs["end"], attrs["strides"])
    xd, vd = ms[0].dtype, ms[1].dtype

    def run(x, v):
        r = x.copy()
        r[key] = S.cast(xp, v, vd, xd)
        return r
    return run


# ---------------------------------------------------------------- creation ---------------------
@routine("fill", "fill_like")
def _fill(xp, ctx, ms, attrs, out):
    shape, sd = tuple(out.shape), S.storage_np(out.dtype)
    value = S.host_scalar_storage(attrs["value"], out.dtype).item()
    return lambda *x: xp.full(shape, value, sd)


@routine("arange")
def _arange(xp, ctx, ms, attrs, out):
    host = np.arange(attrs["start"], attrs["stop"], attrs["step"]).astype(out.dtype.np)
    dev = ctx.const(S.to_storage_host(host))      # attributes only: a constant, made once
    return lambda: dev


@routine("one_hot")
def _one_hot(xp, ctx, ms, attrs, out):
    on_np = np.asarray(attrs["on_value"]).astype(out.dtype.np)
    on, off = ctx.const(on_np), ctx.const(np.asarray(attrs["off_value"]).astype(out.dtype.np))
    depth, axis = attrs["depth"], attrs["axis"]
    positions = ctx.const(np.arange(depth))

    def run(idx):
        hot = xp.where(positions == idx[..., None], on, off)
        return _c(xp, xp.moveaxis(hot, -1, axis))
    return run


# ---------------------------------------------------------------- reductions -------------------
def _reduction(op_name, fn):
    def factory(xp, ctx, ms, attrs, out):
        xd, od = ms[0].dtype, out.dtype
        axes = reduction_axes(op_name, attrs["axis"], len(ms[0].shape))
        keep = attrs["keep_dims"]
        float_out = od.is_float
        empty = any(ms[0].shape[k] == 0 for k in axes)
        shape = tuple(out.shape)

        def run(x):
            if op_name == "mean" and empty:            # numpy: the mean of nothing is NaN
                return S.from_compute(xp, xp.full(shape, np.nan, np.float32), od)
            a = S.to_compute(xp, x, xd)
            if float_out:
                a = a.astype(S.compute_np(od), copy=False)
            return S.from_compute(xp, fn(xp, a, axes, keep), od)
        return run
    return factory


def _logsumexp(xp, a, axes, keep):
    m = _red(xp, "max", a, axes, True) if a.size else xp.zeros([1] * a.ndim, a.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    r = xp.log(_red(xp, "sum", xp.exp(a - m), axes, True)) + m
    return r if keep or not axes else xp.squeeze(r, axis=axes)


for _n in ("sum", "prod", "max", "min", "mean"):
    TABLE[_n] = _reduction(_n, (lambda f: lambda xp, a, axes, keep: _red(xp, f, a, axes,
                                                                          keep))(_n))
TABLE["logsumexp"] = _reduction("logsumexp", _logsumexp)


def _arg(fn):
    def factory(xp, ctx, ms, attrs, out):
        xd, axis, keep = ms[0].dtype, attrs["axis"], attrs["keep_dims"]
        nd = len(ms[0].shape)

        def run(x):
            a = S.to_compute(xp, x, xd)
            if axis is None or nd == 0:          # CuPy rejects any axis of a 0-d array
                r = getattr(xp, fn)(a.reshape(-1))
                return xp.asarray(r).astype(np.int64).reshape((1,) * nd if keep else ())
            return _c(xp, xp.asarray(getattr(xp, fn)(a, axis=axis, keepdims=keep))
                      .astype(np.int64))
        return run
    return factory


TABLE["argmax"], TABLE["argmin"] = _arg("argmax"), _arg("argmin")


# ---------------------------------------------------------------- linalg, softmax --------------
@routine("matmul")
def _matmul(xp, ctx, ms, attrs, out):
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    od = out.dtype
    c = S.compute_np(od)
    (da, db) = (m.dtype for m in ms)

    def run(a, b):
        a = S.to_compute(xp, a, da).astype(c, copy=False)
        b = S.to_compute(xp, b, db).astype(c, copy=False)
        r = matmul(xp, ctx, xp.swapaxes(a, -1, -2) if ta else a,
                   xp.swapaxes(b, -1, -2) if tb else b)
        return S.from_compute(xp, r, od)
    return run


def _softmax(log: bool):
    def factory(xp, ctx, ms, attrs, out):
        xd, shape = ms[0].dtype, tuple(ms[0].shape)
        zero_d = not shape
        axis = 0 if zero_d else attrs["axis"] % len(shape)   # CuPy rejects any axis of a 0-d
        if getattr(ctx, "compiles_cuda", False):             # one generated kernel
            outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
            ck = cuda_softmax.softmax_kernel(xd, outer, shape[axis] if shape else 1, inner, log)
            k, grid, block = ctx.raw_kernel(ck), (ck.grid,), (ck.block,)
            sd, size = S.storage_np(xd), math.prod(shape)

            def run_kernel(x):
                r = xp.empty(shape, sd)
                if size:
                    k(grid, block, (x, r))
                return r
            return run_kernel

        def run(x):                  # array modules that compile nothing (the tests' numpy)
            a = S.to_compute(xp, x, xd)
            a = a.reshape(1) if zero_d else a
            s = a - xp.max(a, axis=axis, keepdims=True)
            if log:
                r = s - xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))
            else:
                e = xp.exp(s)
                r = e / xp.sum(e, axis=axis, keepdims=True)
            return S.from_compute(xp, r.reshape(()) if zero_d else r, xd)
        return run
    return factory


TABLE["softmax"], TABLE["log_softmax"] = _softmax(False), _softmax(True)


@routine("sparse_softmax_cross_entropy", "sparse_softmax_cross_entropy_grad")
def _sparse_softmax_ce(xp, ctx, ms, attrs, out):
    """Per-row logsumexp - x[label] (0 outside [0, C)); the _grad op: (softmax * valid -
    one_hot) * dout (core/ops/nn.py)."""
    xd, C, grad = ms[0].dtype, ms[0].shape[-1], len(ms) == 3

    def run(x, labels, *dout):
        a = S.to_compute(xp, x, xd)
        m = xp.max(a, axis=-1, keepdims=True)
        e = xp.exp(a - m)
        total = xp.sum(e, axis=-1, keepdims=True)
        onehot = (xp.arange(C) == labels[..., None]).astype(a.dtype)
        valid = xp.sum(onehot, axis=-1)
        if grad:
            d = S.to_compute(xp, dout[0], xd)
            r = (e / total * valid[..., None] - onehot) * d[..., None]
        else:
            lse = (xp.log(total) + m)[..., 0]
            r = xp.where(valid > 0, lse - xp.sum(a * onehot, axis=-1), 0).astype(a.dtype)
        return S.from_compute(xp, r, xd)
    return run


def build(xp, ctx, op_name: str, in_metas, attrs: dict, out_meta):
    """The launchable kernel of `op_name` from the table (KeyError if it has none)."""
    return TABLE[op_name](xp, ctx, in_metas, attrs, out_meta)


def _load_nn():
    from . import routines_nn, routines_sorting
    TABLE.update(routines_nn.TABLE)
    TABLE.update(routines_sorting.TABLE)


_load_nn()
