"""batch_norm and layer_norm lowerings of the native sink.

Per channel (batch_norm) or per row (layer_norm), in float64: the mean, then the mean of squared
deviations, then `(x - mu) * (1 / sqrt(var + eps)) * scale + bias` rounded once to the output
dtype. The eager CPU kernels of both ops are this lowering of their one-node graph
(native_kernels.py), so PyNative and O2 give the same bits. Registered in native_registry.py.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core.shape import size_of
from .native_emit import F64, FLOAT, Emitter, NativeUnsupported, const
from .native_registry import register


def _f64(e: Emitter, v, idx):
    return e.convert(e.load(v, idx), v.dtype, dt.float64)


def _moments(e: Emitter, count: int, values):
    """(mu, 1 / sqrt(var + eps) without eps applied yet: var) over `values(loop)`, as the numba
    loops: mu = sum / max(count, 1); var = sum((v - mu)**2) / max(count, 1)."""
    b = e.b
    acc = e.alloca(F64)
    div = L.Constant(F64, float(max(count, 1)))
    b.store(L.Constant(F64, 0.0), acc)
    values(lambda v: b.store(b.fadd(b.load(acc), v), acc))
    mu = b.fdiv(b.load(acc), div)
    b.store(L.Constant(F64, 0.0), acc)

    def square(v):
        d = b.fsub(v, mu)
        b.store(b.fadd(b.load(acc), b.fmul(d, d)), acc)
    values(square)
    return mu, b.fdiv(b.load(acc), div)


def _inv_std(e: Emitter, var, eps: float):
    b = e.b
    sqrt = e.m.declare_intrinsic("llvm.sqrt", [F64])
    return b.fdiv(L.Constant(F64, 1.0), b.call(sqrt, [b.fadd(var, L.Constant(F64, eps))]))


def _check(n):
    if any(v.dtype not in FLOAT for v in n.inputs + n.outputs):
        raise NativeUnsupported(f"{n.name} of {[str(v.dtype) for v in n.inputs]}")


def _batch_norm(e: Emitter, n, a: dict):
    """y[n, c, k] per channel c, x viewed as (N, C, S); eval mode reads the running mean and
    variance (inputs 3 and 4)."""
    _check(n)
    x, s, bias, m, v = n.inputs[:5]
    out, b = n.outputs[0], e.b
    N, C = x.shape[0], x.shape[1]
    S = size_of(x.shape[2:])
    with e.loop(C) as c:
        def at(i, k):
            return b.add(b.mul(b.add(b.mul(i, const(C)), c), const(S)), k)

        def values(f):
            with e.loop(N) as i, e.loop(S) as k:
                f(_f64(e, x, at(i, k)))
        if a["training"]:
            mu, var = _moments(e, N * S, values)
        else:
            mu, var = _f64(e, m, c), _f64(e, v, c)
        r = _inv_std(e, var, float(a["epsilon"]))
        sc, bc = _f64(e, s, c), _f64(e, bias, c)
        with e.loop(N) as i, e.loop(S) as k:
            y = b.fadd(b.fmul(b.fmul(b.fsub(_f64(e, x, at(i, k)), mu), r), sc), bc)
            e.store(e.convert(y, dt.float64, out.dtype), out, at(i, k))


def _layer_norm(e: Emitter, n, a: dict):
    """Rows of x viewed as (R, K) (K = the axes from begin_norm_axis on); gamma/beta flat,
    indexed by (r*K + k) % their size, as nn_layer_norm."""
    _check(n)
    x, gamma, beta = n.inputs
    out, b = n.outputs[0], e.b
    bna = a["begin_norm_axis"] % len(x.shape)
    R, K = size_of(x.shape[:bna]), size_of(x.shape[bna:])
    P = size_of(gamma.shape)
    with e.loop(R) as r:
        base = b.mul(r, const(K))

        def values(f):
            with e.loop(K) as k:
                f(_f64(e, x, b.add(base, k)))
        mu, var = _moments(e, K, values)
        inv = _inv_std(e, var, float(a["epsilon"]))
        with e.loop(K) as k:
            at = b.add(base, k)
            f = b.urem(at, const(P))
            y = b.fadd(b.fmul(b.fmul(b.fsub(_f64(e, x, at), mu), inv), _f64(e, gamma, f)),
                       _f64(e, beta, f))
            e.store(e.convert(y, dt.float64, out.dtype), out, at)


register("batch_norm", _batch_norm, half_as_float32=True)
register("layer_norm", _layer_norm, half_as_float32=True)
