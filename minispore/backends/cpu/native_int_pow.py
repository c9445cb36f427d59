"""Integer `x ** y` in the native sink, as numba computes it in the eager elementwise kernels
(numba.cpython.numbers.int_power_impl, error_model="numpy"): the operands widened to int64, the
result truncated to the node's integer type.

numba's algorithm, element by element: a negative exponent gives 0 ** y = INT64_MIN (numpy's
error model returns it instead of raising), 0 for a base other than 1 and -1, and the power of
|y| otherwise (1.0 / r of r = +-1: r itself); an exponent above 0x10000 gives
int64(math.pow(float(x), float(y))), whose out-of-range results (+-inf) convert as x86's
cvttsd2si does (INT64_MIN); any other exponent is square-and-multiply with wrapping int64
products, written here as 17 branch-free steps (17 bits hold every exponent up to 0x10000).
"""
from __future__ import annotations

from llvmlite import ir as L

I64, F64 = L.IntType(64), L.DoubleType()
_STEPS = 17
_INT64_MIN = -(1 << 63)


def int_power(builder: L.IRBuilder, module: L.Module, x, y, T):
    """x ** y for signed integers x, y of LLVM integer type T narrower than 64 bits (an int64
    exponent of INT64_MIN makes numba raise OverflowError: the caller declines int64)."""
    b = builder
    zero, one = L.Constant(I64, 0), L.Constant(I64, 1)
    base = b.sext(x, I64) if T.width < 64 else x
    power = b.sext(y, I64) if T.width < 64 else y
    negative = b.icmp_signed("<", power, zero)
    exp = b.select(negative, b.neg(power), power)
    r, a, e = one, base, exp
    for _ in range(_STEPS):
        r = b.select(b.icmp_unsigned("!=", b.and_(e, one), zero), b.mul(r, a), r)
        e = b.lshr(e, one)
        a = b.mul(a, a)
    pow_fn = module.declare_intrinsic("llvm.pow", [F64])
    v = b.call(pow_fn, [b.sitofp(base, F64), b.sitofp(power, F64)])
    in_range = b.fcmp_ordered("<", b.call(module.declare_intrinsic("llvm.fabs", [F64]), [v]),
                              L.Constant(F64, 2.0 ** 63))
    big = b.select(in_range, b.fptosi(v, I64), L.Constant(I64, _INT64_MIN))
    r = b.select(b.icmp_signed(">", exp, L.Constant(I64, 0x10000)), big, r)
    unit = b.or_(b.icmp_signed("==", base, one), b.icmp_signed("==", base, L.Constant(I64, -1)))
    special = b.select(b.icmp_signed("==", base, zero), L.Constant(I64, _INT64_MIN), zero)
    r = b.select(b.and_(negative, b.not_(unit)), special, r)
    return r if T.width == 64 else b.trunc(r, T)
