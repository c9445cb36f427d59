"""Elementwise ops (unary, binary, where, cast) and their functional API.

Each primitive is one `elementwise(...)` declaration: scalar template (rendered by every backend),
numpy function (the reference), bprop (minispore ops, so eager, graph and higher-order autodiff
share it) and its dtype rule. A `composite_elementwise(...)` declaration is an op written with
other ops instead of a template: no backend has a kernel for it."""
from __future__ import annotations

import math as _pymath

import numpy as np

from .. import dtype as dt
from .. import scalar_expr as E
from ..primitive import Meta, apply, defop, executor, tracked
from .declare import COMPARE, FLOAT, LOGICAL, composite_elementwise, elementwise, sum_to

FL = dt.FLOATS
NUM = dt.NUMERIC

def _erf(x):
    from scipy.special import erf     # imported on first use: scipy.special costs ~0.2 s
    return erf(x)


def _expit(x):
    from scipy.special import expit
    return expit(x)


# ---------------------------------------------------------------- unary -------------------------
# neg stays primitive: x * -1 keeps a NaN's sign bit (np.negative flips it), 0 - x gives +0.0
NEG = elementwise("neg", 1, lambda x: -x, np.negative, lambda i, o, g: (neg(g),), allowed=NUM)
ABS = elementwise("abs", 1, lambda x: E.fabs(x), np.abs,
                  lambda i, o, g: (mul(g, sign(i[0])),), allowed=NUM)
EXP = elementwise("exp", 1, E.exp, np.exp, lambda i, o, g: (mul(g, o),), FLOAT)
LOG = elementwise("log", 1, E.log, np.log, lambda i, o, g: (div(g, i[0]),), FLOAT)
LOG1P = elementwise("log1p", 1, E.log1p, np.log1p,
                    lambda i, o, g: (div(g, add(i[0], 1)),), FLOAT)
SQRT = elementwise("sqrt", 1, E.sqrt, np.sqrt, lambda i, o, g: (div(g, mul(o, 2)),), FLOAT)
# rsqrt stays primitive: as div(1, sqrt(x)) a half-precision input would round twice (half
# types compute in float32 and round once per kernel)
RSQRT = elementwise("rsqrt", 1, lambda x: 1 / E.sqrt(x), lambda x: 1 / np.sqrt(x),
                    lambda i, o, g: (mul(g, mul(mul(o, mul(o, o)), -0.5)),), FLOAT)
_CONSTANTS: dict = {}


def _constant(value, dtype):
    """A 0-d tensor of `dtype`, made once (buffers are immutable, so it is shared): a composite's
    tensor-tensor operation skips the Python-scalar conversion (half of a small op's dispatch)."""
    t = _CONSTANTS.get((value, dtype))
    if t is None:
        from ..tensor import Tensor
        t = _CONSTANTS[(value, dtype)] = Tensor(np.array(value).astype(dtype.np))   # -1 wraps
    return t


# composites of one kernel each, bit-identical to a kernel of their own (x * x and 1 / x on the
# executors' fast binary path), with bprops cheaper than their parts' (mul's would take the
# gradient of x twice and add them; div's would be -g*(o/x))
SQUARE = composite_elementwise("square", 1, lambda x: x * x, np.square,
                               lambda i, o, g: (mul(g, mul(i[0], 2)),), allowed=NUM)
RECIPROCAL = composite_elementwise("reciprocal", 1, lambda x: _constant(1, x.dtype) / x,
                                   np.reciprocal,
                                   lambda i, o, g: (neg(mul(g, mul(o, o))),), FLOAT)
SIN = elementwise("sin", 1, E.sin, np.sin, lambda i, o, g: (mul(g, cos(i[0])),), FLOAT)
COS = elementwise("cos", 1, E.cos, np.cos, lambda i, o, g: (neg(mul(g, sin(i[0]))),), FLOAT)
TANH = elementwise("tanh", 1, E.tanh, np.tanh,
                   lambda i, o, g: (mul(g, sub(1, mul(o, o))),), FLOAT)
SIGMOID = elementwise("sigmoid", 1, E.sigmoid,
                      _expit,
                      lambda i, o, g: (mul(g, mul(o, sub(1, o))),), FLOAT)
# relu is x where x > 0 and a literal +0 elsewhere (not x * 0: that is -0.0 for a negative x and
# NaN for -inf), so relu(-1) = relu(-0.0) = relu(-inf) = relu(nan) = +0.0, as MindSpore's ReLU.
# relu stays primitive for speed: one pass (as greater + where it would be two kernels and a mask)
RELU = elementwise("relu", 1, lambda x: E.where(x > 0, x, 0),
                   lambda x: np.where(x > 0, x, np.zeros((), x.dtype)),
                   lambda i, o, g: (relu_grad(g, o),), allowed=NUM)
ERF = elementwise("erf", 1, E.erf, _erf,
                  lambda i, o, g: (mul(g, mul(exp(neg(square(i[0]))), 2 / _pymath.sqrt(_pymath.pi))),),
                  FLOAT)
SOFTPLUS = elementwise("softplus", 1, E.softplus,
                       lambda x: np.logaddexp(0, x),
                       lambda i, o, g: (mul(g, sigmoid(i[0])),), FLOAT)

_SQRT_2_PI = _pymath.sqrt(2 / _pymath.pi)


def _gelu_scalar(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + E.tanh(_SQRT_2_PI * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1 + E.erf(x * (1 / _pymath.sqrt(2))))


def _gelu_np(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_SQRT_2_PI * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def _gelu_bprop(i, o, g, approximate="none"):
    x = i[0]
    if approximate == "tanh":
        inner = mul(add(x, mul(mul(x, mul(x, x)), 0.044715)), _SQRT_2_PI)
        t = tanh(inner)
        dinner = mul(add(mul(square(x), 3 * 0.044715), 1), _SQRT_2_PI)
        d = add(mul(add(t, 1), 0.5), mul(mul(mul(x, 0.5), sub(1, square(t))), dinner))
    else:
        cdf = mul(add(erf(mul(x, 1 / _pymath.sqrt(2))), 1), 0.5)
        pdf = mul(exp(mul(square(x), -0.5)), 1 / _pymath.sqrt(2 * _pymath.pi))
        d = add(cdf, mul(x, pdf))
    return (mul(g, d),)


# gelu stays primitive: one kernel instead of five eagerly, and a half-precision input rounds once
GELU = elementwise("gelu", 1, _gelu_scalar, _gelu_np, _gelu_bprop, FLOAT,
                   attrs={"approximate": "none"})


def _zero_grad(i, o, g, **a):
    return (zeros_like(i[0]),)


# sign stays primitive for speed: one kernel instead of two comparisons, two wheres and a mul
SIGN = elementwise("sign", 1, lambda x: E.where(x > 0, 1, E.where(x < 0, -1, x * 0)), np.sign,
                   _zero_grad, allowed=NUM)
FLOOR = elementwise("floor", 1, E.floor, np.floor, _zero_grad, allowed=FL)
CEIL = elementwise("ceil", 1, E.ceil, np.ceil, _zero_grad, allowed=FL)
ROUND = elementwise("round", 1, E.rint, np.rint, _zero_grad, allowed=FL)
# a composite of one kernel: x == 0 in x's own dtype is not x (NaN and -0.0 included)
LOGICAL_NOT = composite_elementwise("logical_not", 1, lambda x: x == _constant(0, x.dtype),
                                    np.logical_not, rule=LOGICAL, differentiable=False)

# ---------------------------------------------------------------- binary ------------------------
def _binary_bprop(rule_x, rule_y):
    """The bprop of a binary op from one gradient rule per input (i, o, g) -> unreduced grad,
    each run only for an input a gradient tracks (primitive.tracked)."""
    def bprop(i, o, g):
        return tuple(sum_to(rule(i, o, g), x.shape) if tracked(x) else None
                     for rule, x in zip((rule_x, rule_y), i))
    return bprop


# relu's gradient dy * (y > 0) as ONE kernel (MindSpore's ReluGrad, torch's threshold_backward)
# instead of greater + cast + mul: three passes over the activation and three eager dispatches.
# Piecewise constant in y, so its y-gradient is zero. Where y <= 0 the gradient is a literal +0
# (dy * 0 would be NaN for an infinite dy), as MindSpore's ReluGrad.
RELU_GRAD = elementwise("relu_grad", 2, lambda dy, y: E.where(y > 0, dy, 0),
                        lambda dy, y: np.where(y > 0, dy, np.zeros((), dy.dtype)),
                        _binary_bprop(lambda i, o, g: relu_grad(g, i[1]),
                                      lambda i, o, g: zeros_like(i[1])), allowed=NUM)


ADD = elementwise("add", 2, lambda x, y: x + y, np.add,
                  _binary_bprop(lambda i, o, g: g, lambda i, o, g: g))
SUB = elementwise("sub", 2, lambda x, y: x - y, np.subtract,
                  _binary_bprop(lambda i, o, g: g, lambda i, o, g: neg(g)), allowed=NUM)
MUL = elementwise("mul", 2, lambda x, y: x * y, np.multiply,
                  _binary_bprop(lambda i, o, g: mul(g, i[1]), lambda i, o, g: mul(g, i[0])))
DIV = elementwise("div", 2, lambda x, y: x / y, np.true_divide,
                  _binary_bprop(lambda i, o, g: div(g, i[1]),
                                lambda i, o, g: neg(mul(g, div(o, i[1])))), FLOAT)
FLOOR_DIV = elementwise("floor_div", 2, lambda x, y: x // y, np.floor_divide,
                        lambda i, o, g: (zeros_like(i[0]), zeros_like(i[1])), allowed=NUM)
MOD = elementwise("mod", 2, lambda x, y: x % y, np.mod,
                  lambda i, o, g: (sum_to(g, i[0].shape),
                                   sum_to(neg(mul(g, floor_div(i[0], i[1]))), i[1].shape)),
                  allowed=NUM)


def _pow_bprop(i, o, g):
    x, y = i
    dx = mul(g, mul(y, pow(x, sub(y, 1))))
    pos = greater(x, 0)
    dy = mul(g, mul(o, where(pos, log(where(pos, x, 1)), 0)))
    return sum_to(dx, x.shape), sum_to(dy, y.shape)


POW = elementwise("pow", 2, lambda x, y: x ** y, np.power, _pow_bprop, allowed=NUM)


def _minmax_bprop(pick_x):
    def bprop(i, o, g):
        x, y = i
        m = pick_x(x, y)
        if g.dtype.is_float:
            # where x == y the gradient is shared, half to each input, as MindSpore's
            gt = where(equal(x, y), mul(g, 0.5), g)
            gx, gy = where(m, gt, 0), where(m, where(equal(x, y), gt, 0), g)
        else:
            gx, gy = where(m, g, 0), where(m, 0, g)
        return sum_to(gx, x.shape), sum_to(gy, y.shape)
    return bprop


def _ge_or_nan(x, y):
    return E.logical_or(x >= y, E.isnan(x))


def _le_or_nan(x, y):
    return E.logical_or(x <= y, E.isnan(x))


# maximum and minimum stay primitive for speed: one kernel (as where of comparisons, four)
MAXIMUM = elementwise("maximum", 2, lambda x, y: E.where(_ge_or_nan(x, y), x, y), np.maximum,
                      _minmax_bprop(lambda x, y: greater_equal(x, y)), allowed=NUM)
MINIMUM = elementwise("minimum", 2, lambda x, y: E.where(_le_or_nan(x, y), x, y), np.minimum,
                      _minmax_bprop(lambda x, y: less_equal(x, y)), allowed=NUM)

EQUAL = elementwise("equal", 2, lambda x, y: x.eq(y), np.equal, rule=COMPARE, differentiable=False)
NOT_EQUAL = elementwise("not_equal", 2, lambda x, y: x.ne(y), np.not_equal, rule=COMPARE,
                        differentiable=False)
LESS = elementwise("less", 2, lambda x, y: x < y, np.less, rule=COMPARE, differentiable=False)
LESS_EQUAL = elementwise("less_equal", 2, lambda x, y: x <= y, np.less_equal, rule=COMPARE,
                         differentiable=False)
GREATER = elementwise("greater", 2, lambda x, y: x > y, np.greater, rule=COMPARE,
                      differentiable=False)
GREATER_EQUAL = elementwise("greater_equal", 2, lambda x, y: x >= y, np.greater_equal,
                            rule=COMPARE, differentiable=False)
LOGICAL_AND = elementwise("logical_and", 2, E.logical_and, np.logical_and, rule=LOGICAL,
                          differentiable=False)
LOGICAL_OR = elementwise("logical_or", 2, E.logical_or, np.logical_or, rule=LOGICAL,
                         differentiable=False)

_BITS = (dt.bool_,) + dt.INTS
BITWISE_AND = elementwise("bitwise_and", 2, lambda x, y: x & y, np.bitwise_and, allowed=_BITS,
                          differentiable=False)
BITWISE_OR = elementwise("bitwise_or", 2, lambda x, y: x | y, np.bitwise_or, allowed=_BITS,
                         differentiable=False)
BITWISE_XOR = elementwise("bitwise_xor", 2, lambda x, y: x ^ y, np.bitwise_xor, allowed=_BITS,
                          differentiable=False)
# a composite of one kernel: ~x is x ^ (all ones), -1 in x's dtype (255 for uint8), on the
# executors' fast binary path
BITWISE_NOT = composite_elementwise(
    "bitwise_not", 1, lambda x: executor.current.binary(BITWISE_XOR, x, _constant(-1, x.dtype)),
    np.invert, allowed=dt.INTS, differentiable=False)
LEFT_SHIFT = elementwise("left_shift", 2, lambda x, y: x << y, np.left_shift, allowed=dt.INTS,
                         differentiable=False)
RIGHT_SHIFT = elementwise("right_shift", 2, lambda x, y: x >> y, np.right_shift, allowed=dt.INTS,
                          differentiable=False)


def _where_compute(in_dtypes):
    c = dt.promote(in_dtypes[1], in_dtypes[2])
    return (dt.bool_, c, c), c


def _where_infer(c, x, y):
    from ..shape import broadcast_shapes
    return Meta(broadcast_shapes("where", c.shape, x.shape, y.shape),
                _where_compute((c.dtype, x.dtype, y.dtype))[1])


def _where_ref(c, x, y):
    out = _where_compute((dt.bool_, dt.to_dtype(x.dtype), dt.to_dtype(y.dtype)))[1]
    return np.where(c.astype(bool), x, y).astype(out.np)


WHERE = defop("where", kind="elementwise", infer=_where_infer, ref=_where_ref,
              scalar=lambda c, x, y: E.where(c, x, y), compute=_where_compute, arity=3,
              bprop=lambda i, o, g: (None, sum_to(where(i[0], g, 0), i[1].shape),
                                     sum_to(where(i[0], 0, g), i[2].shape)))


def _cast_infer(x, dtype):
    return Meta(x.shape, dt.to_dtype(dtype))


def _cast_bprop(i, o, g, dtype):
    return (cast(g, i[0].dtype) if i[0].dtype.has_grad else None,)


CAST = defop("cast", infer=_cast_infer, ref=lambda x, dtype: x.astype(dt.to_dtype(dtype).np),
             bprop=_cast_bprop, attrs={"dtype": None}, arity=1)


# ---------------------------------------------------------------- functional API ----------------
def _unary(op):
    def f(input):
        return apply(op, input)
    f.__name__ = op.name
    f.__doc__ = f"Elementwise {op.name} ({'composite' if op.composite else 'primitive'} " \
                f"'{op.name}')."
    return f


def _binary(op):
    def f(input, other):
        return apply(op, input, other)
    f.__name__ = op.name
    f.__doc__ = f"Elementwise {op.name} with broadcasting (primitive '{op.name}')."
    return f


neg, abs, exp, log, log1p, sqrt, rsqrt, square, reciprocal, sin, cos, tanh, sigmoid, relu, erf, \
    softplus, sign, floor, ceil, round, logical_not, bitwise_not = map(_unary, (
        NEG, ABS, EXP, LOG, LOG1P, SQRT, RSQRT, SQUARE, RECIPROCAL, SIN, COS, TANH, SIGMOID, RELU,
        ERF, SOFTPLUS, SIGN, FLOOR, CEIL, ROUND, LOGICAL_NOT, BITWISE_NOT))
add, sub, mul, div, floor_div, mod, maximum, minimum, equal, not_equal, less, less_equal, \
    greater, greater_equal, logical_and, logical_or, bitwise_and, bitwise_or, bitwise_xor, \
    left_shift, right_shift, relu_grad = map(_binary, (
        ADD, SUB, MUL, DIV, FLOOR_DIV, MOD, MAXIMUM, MINIMUM, EQUAL, NOT_EQUAL, LESS, LESS_EQUAL,
        GREATER, GREATER_EQUAL, LOGICAL_AND, LOGICAL_OR, BITWISE_AND, BITWISE_OR, BITWISE_XOR,
        LEFT_SHIFT, RIGHT_SHIFT, RELU_GRAD))


def pow(input, exponent):
    """input ** exponent, elementwise with broadcasting (primitive 'pow')."""
    return apply(POW, input, exponent)


def gelu(input, approximate="none"):
    """GELU: 'none' uses erf, 'tanh' the tanh approximation (MindSpore's ops.gelu)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate={approximate!r} is not valid; use 'none' or 'tanh'")
    return apply(GELU, input, approximate=approximate)


def cast(input, dtype):
    """Convert to `dtype` (primitive 'cast')."""
    return apply(CAST, input, dtype=dt.to_dtype(dtype))


def where(condition, input, other):
    """Elements of `input` where `condition` is true, else of `other` (broadcasting)."""
    from ..tensor import Tensor, to_numpy
    if not isinstance(condition, Tensor):
        condition = Tensor(to_numpy(condition, dt.bool_))
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = Tensor(input)
    if not isinstance(input, Tensor):
        input = Tensor(to_numpy(input, dt.promote_with_scalar(other.dtype, input)))
    if not isinstance(other, Tensor):
        other = Tensor(to_numpy(other, dt.promote_with_scalar(input.dtype, other)))
    return apply(WHERE, condition, input, other)


def zeros_like(input, dtype=None):
    from .array import zeros_like as _z
    return _z(input, dtype)


# MindSpore's other spellings
negative, absolute, multiply, divide, subtract = neg, abs, mul, div, sub


def true_divide(dividend, divisor):
    """MindSpore's ops.true_divide: dividend / divisor (true division, as ops.div)."""
    return div(dividend, divisor)
floor_divide, floor_mod, remainder = floor_div, mod, mod
eq, ne, lt, le, gt, ge = equal, not_equal, less, less_equal, greater, greater_equal


def clamp(x, lo=None, hi=None):
    """x limited to [lo, hi] (either may be None), with the values of
    minimum(maximum(x, lo), hi) (hi everywhere when lo > hi) and MindSpore's clamp gradient: x's
    where lo <= x <= hi (ties included, not shared), lo's where x is below it, hi's where x is
    above it."""
    if hi is not None:
        above = greater(x, hi)
        if lo is not None:
            above = logical_or(above, greater(lo, hi))
    if lo is None:
        return where(above, hi, x)
    y = where(less(x, lo), lo, x)
    return y if hi is None else where(above, hi, y)
