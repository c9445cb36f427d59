"""The random ops and dropout in the native sink: core/ops/random.py's splitmix64 counter
generator in LLVM IR.

Word i of a draw is mix(s + (i + 1) * M1) with s = mix(mix(key[0] * M1 ^ seed) + key[1] * M1);
uniform takes the word's top _UNIT_BITS bits as a unit float, normal is Box-Muller over two unit
float64s (the float64 llvm.log/cos/sqrt intrinsics), randint is low + word mod span, dropout
keeps an element where its unit float64 is below keep_prob and scales it in x's dtype; the
numpy references of uniform, randint and dropout (the eager kernels) give the same bits.
Registered in native_registry.py.
"""
from __future__ import annotations

import math

from llvmlite import ir as L

from ...core import dtype as dt
from ...core.shape import size_of
from .native_emit import F64, FLOAT, HALF, Emitter, NativeUnsupported, const
from .native_registry import register

_M1, _M2, _M3 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _mix(b, z):
    z = b.mul(b.xor(z, b.lshr(z, const(30))), const(_M2))
    z = b.mul(b.xor(z, b.lshr(z, const(27))), const(_M3))
    return b.xor(z, b.lshr(z, const(31)))


def _words(e: Emitter, key, seed: int):
    """word(i): the i-th uint64 word of this draw, an i64 value (i64 arithmetic wraps modulo
    2**64 like numba's uint64; shifts are logical)."""
    if key.dtype is not dt.int64:
        raise NativeUnsupported(f"random key of {key.dtype}")
    b = e.b
    k0, k1 = e.load(key, const(0)), e.load(key, const(1))
    s = _mix(b, b.add(_mix(b, b.xor(b.mul(k0, const(_M1)), const(seed % 2 ** 64))),
                      b.mul(k1, const(_M1))))
    return lambda i: _mix(b, b.add(s, b.mul(b.add(i, const(1)), const(_M1))))


def _unit53(b, w):
    """float64(w >> 11) * 2**-53."""
    return b.fmul(b.uitofp(b.lshr(w, const(11)), F64), L.Constant(F64, 2.0 ** -53))


def _random(e: Emitter, n, a: dict):
    from ...core.ops.random import _UNIT_BITS
    out, b = n.outputs[0], e.b
    word = _words(e, n.inputs[0], a["seed"])
    name = n.op.name
    # a half draw: the unit float64 of the half's bits (_UNIT_BITS), rounded once, as the
    # references' astype
    if name != "random_randint" and out.dtype not in FLOAT and out.dtype not in HALF:
        raise NativeUnsupported(f"{name} into {out.dtype}")
    if name == "random_normal":
        fns = {f: e.m.declare_intrinsic(f"llvm.{f}", [F64]) for f in ("log", "cos", "sqrt")}
    with e.loop(size_of(out.shape)) as i:
        w = word(i)
        if name == "random_uniform":
            nbits = _UNIT_BITS[out.dtype.name]
            v = b.fmul(b.uitofp(b.lshr(w, const(64 - nbits)), F64), L.Constant(F64, 2.0 ** -nbits))
            y = e.convert(v, dt.float64, out.dtype)
        elif name == "random_normal":
            u1 = b.fmul(b.fadd(b.uitofp(b.lshr(w, const(11)), F64), L.Constant(F64, 1.0)),
                        L.Constant(F64, 2.0 ** -53))
            u2 = _unit53(b, _mix(b, w))
            r = b.call(fns["sqrt"], [b.fmul(L.Constant(F64, -2.0), b.call(fns["log"], [u1]))])
            c = b.call(fns["cos"], [b.fmul(L.Constant(F64, 2.0 * math.pi), u2)])
            y = e.convert(b.fmul(r, c), dt.float64, out.dtype)
        else:
            span, low = a["high"] - a["low"], a["low"]
            v = b.add(b.urem(w, const(span)), const(low))
            y = e.convert(v, dt.int64, out.dtype)
        e.store(y, out, i)


def _dropout(e: Emitter, n, a: dict):
    """keep = unit53(word) < keep_prob; mask = keep in x's dtype; y = x * mask * (1/keep_prob)
    in x's dtype."""
    x, key = n.inputs
    y, m = n.outputs
    if x.dtype not in FLOAT:
        raise NativeUnsupported(f"dropout of {x.dtype}")
    b, T = e.b, FLOAT[x.dtype]
    word = _words(e, key, a["seed"])
    scale = L.Constant(T, float(x.dtype.np.type(1.0 / a["keep_prob"])))
    one, zero = L.Constant(T, 1.0), L.Constant(T, 0.0)
    with e.loop(size_of(x.shape)) as i:
        keep = b.fcmp_ordered("<", _unit53(b, word(i)), L.Constant(F64, float(a["keep_prob"])))
        mask = b.select(keep, one, zero)
        e.store(mask, m, i)
        e.store(b.fmul(b.fmul(e.load(x, i), mask), scale), y, i)


register(("random_uniform", "random_normal", "random_randint"), _random)
# the reference computes a half dropout in float32 (ref_array_dtype) and rounds once
register("dropout", _dropout, half_as_float32=True)
