"""numba's integer and float arithmetic semantics in LLVM IR, for the native sink's scalar
expressions (native_emit.Emitter.scalar): floor division and modulo as numba lowers `//` and `%`
(numba/cpython/numbers.py, error_model="numpy"), and float32 division by a compile-time constant
without the divider. Each is branch-free (selects), so the loops around it still vectorise, and
gives numba's results bit for bit (tests/graph/test_native_sink.py)."""
from __future__ import annotations

import math

from llvmlite import ir as L

F32, F64 = L.FloatType(), L.DoubleType()


def div_f32_by_constant(b, x, c):
    """x / c for float32 x and a compile-time float32 c, without a division: the float64 product
    x * RN64(1/c), rounded to float32. That is x / c correctly rounded, bit for bit: a float32
    quotient that is not exact lies at least 2**-49 (relative) from a rounding boundary of
    float32, and the product is within 2**-52 of it (two float64 roundings); zeros,
    infinities and NaNs come out as the division's (c = 0 gives x * inf). It keeps the divider
    free for tanh/sigmoid's divisions: chain (a) of the benchmark, 1.37 -> 1.33 ns per element
    on one thread."""
    v = float(c.constant)
    inv = L.Constant(F64, 1.0 / v if v != 0.0 else math.copysign(math.inf, v))
    return b.fptrunc(b.fmul(b.fpext(x, F64), inv), F32)


def int_divmod(b, x, y, signed: bool):
    """(x // y, x % y) for integers as numba computes them (numbers._int_divmod_impl,
    int_divmod_signed): floor division and a remainder with the divisor's sign; 0 and 0 for a
    zero divisor and for MIN // -1 (numba's error_model="numpy"). The divisor is made 1 in those
    cases first, so the division itself never traps."""
    ty = x.type
    zero, one = L.Constant(ty, 0), L.Constant(ty, 1)
    bad = b.icmp_signed("==", y, zero)
    if signed:
        bad = b.or_(bad, b.and_(b.icmp_signed("==", x, L.Constant(ty, -(1 << ty.width - 1))),
                                b.icmp_signed("==", y, L.Constant(ty, -1))))
    ys = b.select(bad, one, y)
    if signed:
        q, r = b.sdiv(x, ys), b.srem(x, ys)
        fix = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", b.xor(ys, r), zero))
        q, r = b.select(fix, b.sub(q, one), q), b.select(fix, b.add(r, ys), r)
    else:
        q, r = b.udiv(x, ys), b.urem(x, ys)
    return b.select(bad, zero, q), b.select(bad, zero, r)


def real_divmod(b, x, y, floor):
    """(x // y, x % y) for floats as numba computes them (numbers.real_floordiv_impl /
    real_mod_impl: CPython's float_divmod, and x / y resp. fmod(x, y) for y == 0), with
    selects for numba's branches; `floor` is llvm.floor of x's type."""
    T = x.type
    zero, nzero, one = L.Constant(T, 0.0), L.Constant(T, -0.0), L.Constant(T, 1.0)
    mod = b.frem(x, y)
    div = b.fdiv(b.fsub(x, mod), y)
    mod_true = b.fcmp_unordered("!=", mod, zero)
    y_neg = b.fcmp_ordered("<", y, zero)
    adjust = b.and_(mod_true, b.icmp_unsigned("!=", y_neg, b.fcmp_ordered("<", mod, zero)))
    div = b.select(adjust, b.fsub(div, one), div)
    mod = b.select(mod_true, b.select(adjust, b.fadd(mod, y), mod),
                   b.select(y_neg, nzero, zero))
    fl = b.call(floor, [div])
    fl = b.select(b.fcmp_ordered(">", b.fsub(div, fl), L.Constant(T, 0.5)),
                  b.fadd(fl, one), fl)
    sq = b.fmul(div, div)
    q = b.select(b.fcmp_ordered("!=", div, zero), fl, b.fdiv(b.fmul(sq, x), y))
    y_zero = b.fcmp_ordered("==", y, zero)
    return b.select(y_zero, b.fdiv(x, y), q), b.select(y_zero, b.frem(x, y), mod)
