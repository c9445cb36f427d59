"""The elementwise cases of mint_cases.py (arithmetic, unary math, comparisons, logic)."""
from __future__ import annotations

import math

import numpy as np

from mint_cases import (B, C, CASES, F, G, I, IDX, J, M3, NANS, P, T, TIES, U, V,  # noqa: F401
                        W, case, mint, ms)


def _trunc(a):
    return np.trunc(a)



# ---------------------------------------------------------------- elementwise -------------------
@case(F, G, ref=lambda x, y: x + 2.5 * y)
def add_alpha(x, y):
    return mint.add(x, y, alpha=2.5)


@case(F, G, ref=lambda x, y: x - 2 * y)
def sub_alpha(x, y):
    return mint.sub(x, y, alpha=2)


@case(F, G, ref=lambda x, y: x * y)
def mul(x, y):
    return mint.mul(x, y)


@case(F, ref=lambda x: x * 3)
def mul_scalar(x):
    return mint.mul(x, 3)


@case(F, G, ref=lambda x, y: x / y)
def div(x, y):
    return mint.div(x, y)


@case(I, J, ref=lambda x, y: (x / y).astype(np.float32))
def div_int(x, y):
    return mint.div(x, y)


@case(I, J, ref=lambda x, y: np.floor_divide(x, y))
def div_floor_int(x, y):
    return mint.div(x, y, rounding_mode="floor")


@case(I, J, ref=lambda x, y: _trunc(x / y).astype(np.int32))
def div_trunc_int(x, y):
    return mint.div(x, y, rounding_mode="trunc")


@case(F, G, ref=lambda x, y: np.floor(x / y))
def div_floor_float(x, y):
    return mint.divide(x, y, rounding_mode="floor")


@case(F, G, ref=lambda x, y: _trunc(x / y))
def div_trunc_float(x, y):
    return mint.div(x, y, rounding_mode="trunc")


@case(I, J, ref=lambda x, y: np.floor_divide(x, y))
def floor_divide(x, y):
    return mint.floor_divide(x, y)


@case(I, J, ref=lambda x, y: np.mod(x, y))
def remainder(x, y):
    return mint.remainder(x, y)


@case(F, G, ref=lambda x, y: np.fmod(x, y))
def fmod(x, y):
    return mint.fmod(x, y)


@case(P, G, ref=lambda x, y: np.power(x, y))
def pow(x, y):
    return mint.pow(x, y)


@case(F, ref=lambda x: np.power(x, 2))
def pow_scalar(x):
    return mint.pow(x, 2)


@case(P, ref=lambda x: np.power(x.astype(np.float64), 1.5))
def float_power(x):
    return mint.float_power(x, 1.5)


def _unary(name, ref, inp=F):
    def fn(x):
        return getattr(mint, name)(x)
    fn.__name__ = name
    CASES[name] = (fn, (inp,), ref, True)


for _n, _r, _inp in [
        ("abs", np.abs, F), ("neg", np.negative, F), ("negative", np.negative, F),
        ("exp", np.exp, F), ("exp2", np.exp2, F), ("log", np.log, P), ("log2", np.log2, P),
        ("log10", np.log10, P), ("log1p", np.log1p, P), ("sqrt", np.sqrt, P),
        ("rsqrt", lambda a: 1 / np.sqrt(a), P), ("square", np.square, F),
        ("reciprocal", np.reciprocal, P), ("sin", np.sin, F), ("cos", np.cos, F),
        ("tan", np.tan, F), ("tanh", np.tanh, F), ("sinh", np.sinh, F), ("cosh", np.cosh, F),
        ("asinh", np.arcsinh, F), ("arcsinh", np.arcsinh, F),
        ("acosh", np.arccosh, P + 1), ("arccosh", np.arccosh, P + 1),
        ("atanh", np.arctanh, U), ("arctanh", np.arctanh, U),
        ("atan", np.arctan, F * 3), ("arctan", np.arctan, F * 0.3),
        ("asin", np.arcsin, U), ("arcsin", np.arcsin, U), ("acos", np.arccos, U),
        ("arccos", np.arccos, U),
        ("sigmoid", lambda a: 1 / (1 + np.exp(-a)), F),
        ("erf", lambda a: np.vectorize(math.erf)(a).astype(np.float32), F),
        ("floor", np.floor, F * 0.7), ("ceil", np.ceil, F * 0.7), ("trunc", np.trunc, F * 0.7),
        ("fix", np.trunc, F * 0.7), ("frac", lambda a: a - np.trunc(a), F * 0.7),
        ("sign", np.sign, F), ("round", np.round, F * 0.7 + 0.05),
        ("sinc", np.sinc, F * 0.7), ("logical_not", np.logical_not, B),
        ("bitwise_not", np.invert, I), ("isnan", np.isnan, NANS),
        ("isinf", np.isinf, NANS), ("isfinite", np.isfinite, NANS),
        ("isneginf", np.isneginf, NANS)]:
    _unary(_n, _r, _inp)


@case(np.array([0.5, 1.5, 2.5, -0.5, 1.25], np.float32), ref=np.round)
def round_half_even(x):
    return mint.round(x)


@case(np.array([1.234, -5.678], np.float32), ref=lambda a: np.round(a, 1))
def round_decimals(x):
    return mint.round(x, decimals=1)


@case(F, ref=lambda x: np.clip(x, -1.0, 2.0))
def clamp(x):
    return mint.clamp(x, -1.0, 2.0)


@case(F, ref=lambda x: np.maximum(x, 0.5))
def clamp_min(x):
    return mint.clamp(x, min=0.5)


@case(F, ref=lambda x: np.clip(x, -1.0, 2.0))
def clip(x):
    return mint.clip(x, -1.0, 2.0)


@case(np.array([0.0, -0.0, 1.0, -1.0, 0.0, 2.0, -2.0, np.inf, 3.0], np.float32),
      np.array([0.0, -1.0, 0.0, 0.0, -1.0, -3.0, -3.0, np.inf, 0.5], np.float32),
      ref=np.arctan2)
def atan2(y, x):
    return mint.atan2(y, x)


@case(F, G, ref=np.arctan2)
def arctan2(y, x):
    return mint.arctan2(y, x)


@case(F, G, ref=np.maximum)
def maximum(x, y):
    return mint.maximum(x, y)


@case(F, G, ref=np.minimum)
def minimum(x, y):
    return mint.minimum(x, y)


for _n, _r in [("eq", np.equal), ("ne", np.not_equal), ("not_equal", np.not_equal),
               ("gt", np.greater), ("greater", np.greater), ("ge", np.greater_equal),
               ("greater_equal", np.greater_equal), ("lt", np.less), ("less", np.less),
               ("le", np.less_equal), ("less_equal", np.less_equal)]:
    def _fn(x, y, _n=_n):
        return getattr(mint, _n)(x, y)
    CASES[_n] = (_fn, (F, np.where(G > 0, F, G)), _r, True)

for _n, _r, _a, _b in [("logical_and", np.logical_and, B, C), ("logical_or", np.logical_or, B, C),
                       ("logical_xor", np.logical_xor, B, C),
                       ("logical_and_float", np.logical_and, F, G * (G > 0)),
                       ("bitwise_and", np.bitwise_and, I, J), ("bitwise_or", np.bitwise_or, I, J),
                       ("bitwise_xor", np.bitwise_xor, I, J)]:
    def _fn(x, y, _n=_n.replace("_float", "")):
        return getattr(mint, _n)(x, y)
    CASES[_n] = (_fn, (_a, _b), _r, True)


@case(F, F + np.float32(1e-6), ref=lambda x, y: np.isclose(y, x))
def isclose(x, y):
    return mint.isclose(x, y)


@case(NANS, NANS, ref=lambda x, y: np.isclose(x, y, equal_nan=True))
def isclose_equal_nan(x, y):
    return mint.isclose(x, y, equal_nan=True)


@case(F, F + np.float32(1e-6), ref=lambda x, y: bool(np.allclose(y, x)), graph=False)
def allclose(x, y):
    return mint.allclose(x, y)


@case(F, F, ref=lambda x, y: True, graph=False)
def equal(x, y):
    return mint.equal(x, y)


@case(F, G, ref=lambda x, y: False, graph=False)
def equal_false(x, y):
    return mint.equal(x, y)


@case(NANS, ref=lambda x: np.nan_to_num(x, nan=0.0, posinf=np.finfo(np.float32).max,
                                        neginf=np.finfo(np.float32).min))
def nan_to_num(x):
    return mint.nan_to_num(x)


@case(NANS, ref=lambda x: np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0))
def nan_to_num_values(x):
    return mint.nan_to_num(x, 1.0, 2.0, -3.0)


@case(F, G, ref=lambda x, y: x + 0.25 * (y - x))
def lerp(x, y):
    return mint.lerp(x, y, 0.25)


@case(np.array([0.0, 1.0, 2.0, 0.0], np.float32), np.array([3.0, 2.0, 0.5, np.nan], np.float32),
      ref=lambda x, y: np.array([0.0, np.log(2.0), 2 * np.log(0.5), np.nan], np.float32))
def xlogy(x, y):
    return mint.xlogy(x, y)


@case(np.array([1.0, -np.inf, np.inf, 2.0, 0.5], np.float32),
      np.array([1.0, -np.inf, np.inf, np.inf, -3.0], np.float32), ref=np.logaddexp)
def logaddexp_special(x, y):
    return mint.logaddexp(x, y)


@case(F, G, ref=np.logaddexp)
def logaddexp(x, y):
    return mint.logaddexp(x, y)


@case(F, G, ref=np.logaddexp2)
def logaddexp2(x, y):
    return mint.logaddexp2(x, y)


@case(F, G, P, ref=lambda x, a, b: x + 0.5 * a * b)
def addcmul(x, a, b):
    return mint.addcmul(x, a, b, value=0.5)


@case(F, G, P, ref=lambda x, a, b: x + 2 * a / b)
def addcdiv(x, a, b):
    return mint.addcdiv(x, a, b, value=2)


# ---------------------------------------------------------------- dtype promotion ---------------
@case(I, ref=lambda x: (x * 2.5).astype(np.float32))
def mul_int_by_float(x):
    return mint.mul(x, 2.5)


@case(I, ref=lambda x: x + 3)
def add_int_scalar(x):
    return mint.add(x, 3)


@case(I, F, ref=lambda x, y: (x + y).astype(np.float32))
def add_int_float(x, y):
    return mint.add(x, y)


@case(F.astype(np.float16), F, ref=lambda x, y: x.astype(np.float32) * y)
def mul_half_float(x, y):
    return mint.mul(x, y)


@case(I, ref=lambda x: np.sqrt(x.astype(np.float32)))
def sqrt_int(x):
    return mint.sqrt(x)


@case(I, ref=lambda x: np.power(x, 2))
def pow_int(x):
    return mint.pow(x, 2)


@case(I, ref=lambda x: np.abs(x))
def abs_int(x):
    return mint.abs(x)


@case(F.astype(np.float16), ref=lambda x: x.astype(np.float32).sum().astype(np.float16))
def sum_half(x):
    return mint.sum(x)


@case(I, ref=lambda x: np.clip(x, -2, 2))
def clamp_int(x):
    return mint.clamp(x, -2, 2)


@case(I, ref=lambda x: np.maximum(x, 0).astype(np.int32))
def clamp_int_min_only(x):
    return mint.clamp(x, min=0)


@case(B, I, J, ref=np.where)
def where_int(c, x, y):
    return mint.where(c, x, y)


@case(I, F, ref=lambda x, y: x < y)
def lt_int_float(x, y):
    return mint.lt(x, y)


@case(np.array([-2.0, -0.5, 0.0, 0.3, 1.0, 3.0, 5.0, 8.0], np.float32),
      ref=lambda x: np.vectorize(math.erfc)(x).astype(np.float32))
def erfc(x):
    return mint.erfc(x)


@case(np.array([-1.0, -0.9999, -0.5, 0.0, 1e-6, 0.3, 0.95, 1.0, 1.5], np.float32),
      ref=lambda x: np.array([-np.inf, -2.7510355, -0.47693628, 0.0, 8.862269e-07, 0.27246273,
                              1.3859037, np.inf, np.nan], np.float32))   # scipy's erfinv
def erfinv(x):
    return mint.erfinv(x)


@case(np.array([12, -18, 0, 7, 0, 1 << 30], np.int32),
      np.array([18, 24, 5, 0, 0, 3 << 20], np.int32), ref=np.gcd)
def gcd(a, b):
    return mint.gcd(a, b)


@case(F, ref=lambda x: x)
def real(x):
    return mint.real(x)
