"""The random family, written once: uniform, normal, randint and dropout over core/ops/random.py's
counter-based generator, as flat loops over the n elements of a draw. kernels_random.py renders
them as the eager numba kernels, native_random.py as the native sink's LLVM lowerings.

Element i of a draw is word(i) = mix(s + (i + 1) * M1), s = mix(mix(key[0] * M1 ^ seed) +
key[1] * M1), with splitmix64's finaliser `mix` on uint64 words (wrapping arithmetic, logical
shifts), exactly core/ops/random.py's random_bits. Then, in float64 as the numpy references:
uniform is the word's top `nbits` bits times 2**-nbits (_UNIT_BITS of the dtype); normal is
Box-Muller, sqrt(-2 log u1) cos(2 pi u2) with u1 = ((w >> 11) + 1) 2**-53 and u2 = (mix(w) >>
11) 2**-53, log and cos the C library's (`libm`); randint is low + w mod (high - low); dropout
keeps an element where (w >> 11) 2**-53 < keep_prob, its mask is 1/0 and its output x * mask *
scale in x's dtype (scale = 1 / keep_prob in that dtype). Outputs are stored converted to their
dtype (rounded once).

The generator's inputs are the key buffer (int64, (2,)) and scalars: the op seed as a uint64
word, the draw's size n, randint's span and low, dropout's keep_prob and scale; only the output
dtype (and uniform's bit count) is a parameter, so one compiled kernel serves every seed and
shape.
"""
from __future__ import annotations

import math

from ....core import scalar_expr as E
from .builder import definition, f64, i64, libm, u64

M1, M2, M3 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _mix(b, z, value):
    """Set uint64 variable z to splitmix64's finaliser of `value`."""
    b.set(z, value)
    b.set(z, (z ^ (z >> u64(30))) * u64(M2))
    b.set(z, (z ^ (z >> u64(27))) * u64(M3))
    b.set(z, z ^ (z >> u64(31)))
    return z


def _draw(b):
    """The key input, the seed scalar and the draw's base word s; returns word(i), which sets
    and returns the uint64 variable `w`."""
    key = b.input("key", 1)
    seed = b.scalar("seed", "uint64")
    s = b.var("s", u64(0))
    _mix(b, s, u64(key[0]) * u64(M1) ^ seed)
    _mix(b, s, s + u64(key[1]) * u64(M1))
    w = b.var("w", u64(0))
    return key, lambda i: _mix(b, w, s + u64(i + 1) * u64(M1))


def draw_dtype(name: str) -> str:
    """The dtype (numpy name) a float draw of dtype `name` is computed in: itself, float64 for
    a half dtype (stored rounded once)."""
    return "float64" if name in ("float16", "bfloat16") else name


def _unit53(w):
    return f64(w >> u64(11)) * 2.0 ** -53


@definition
def uniform(b, nbits: int, dtype: str):
    """(n,) of `dtype`: float64(w >> (64 - nbits)) * 2**-nbits."""
    _, word = _draw(b)
    n = b.scalar("n", "int64")
    out = b.output("out", (n,), dtype=dtype)
    with b.loop(n, "i") as i:
        b.store(out, i, f64(word(i) >> u64(64 - nbits)) * 2.0 ** -nbits)


@definition
def normal(b, dtype: str):
    """(n,) of `dtype`: Box-Muller over two unit float64s of each word."""
    _, word = _draw(b)
    n = b.scalar("n", "int64")
    out = b.output("out", (n,), dtype=dtype)
    z = b.var("z", u64(0))
    with b.loop(n, "i") as i:
        w = word(i)
        u1 = b.var("u1", (f64(w >> u64(11)) + 1.0) * 2.0 ** -53)
        u2 = b.var("u2", _unit53(_mix(b, z, w)))
        b.store(out, i, libm("sqrt", -2.0 * libm("log", u1)) * libm("cos", 2.0 * math.pi * u2))


@definition
def randint(b, dtype: str):
    """(n,) of `dtype`: low + w mod span (span = high - low > 0, as a uint64)."""
    _, word = _draw(b)
    n, span, low = b.scalar("n", "int64"), b.scalar("span", "uint64"), b.scalar("low", "int64")
    out = b.output("out", (n,), dtype=dtype)
    with b.loop(n, "i") as i:
        b.store(out, i, i64(word(i) % span) + low)


@definition
def dropout(b, dtype: str):
    """x: (n,) of `dtype` (float32 or float64) -> (y, mask) like x: mask 1 where the word's unit
    float64 is below keep_prob, else 0; y = x * mask * scale."""
    x = b.input("x", 1)
    _, word = _draw(b)
    keep_prob, scale = b.scalar("keep_prob", "float64"), b.scalar("scale", dtype)
    (n,) = x.dims
    y, mask = b.output("y", (n,), like=x), b.output("mask", (n,), like=x)
    m = b.var("m", E.Expr("cast", E.lift(0.0), dtype))
    with b.loop(n, "i") as i:
        b.set(m, E.Expr("cast", E.where(_unit53(word(i)) < keep_prob, 1.0, 0.0), dtype))
        b.store(mask, i, m)
        b.store(y, i, x[i] * m * scale)
