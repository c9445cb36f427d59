"""mint's elementwise functions (PyTorch names and signatures): arithmetic with `alpha`,
`div(rounding_mode=)`, the unary math, comparisons, logic and bit operations, the float tests,
and the composites PyTorch adds (lerp, xlogy, logaddexp, addcmul, addcdiv, nan_to_num, ...),
each written with the op declarations of core.ops."""
from __future__ import annotations

import math as _pymath

from ..core import dtype as _dt
from ..core import tensor_methods_extra as _X
from ..core.ops import math as _M
from ..core.ops import rounding as _RD
from ..core.tensor import Tensor

__all__ = [
    "abs", "add", "sub", "mul", "div", "divide", "neg", "negative", "exp", "exp2", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "square", "reciprocal", "pow", "float_power",
    "sin", "cos", "tan", "tanh", "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh", "atanh",
    "arctanh", "sigmoid", "erf", "floor", "ceil", "round", "trunc", "fix", "frac", "sign",
    "clamp", "clip", "maximum", "minimum", "remainder", "fmod", "floor_divide", "eq", "ne",
    "not_equal", "gt", "greater", "ge", "greater_equal", "lt", "less", "le", "less_equal",
    "equal", "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "isfinite", "isinf", "isnan", "isneginf",
    "isclose", "allclose", "nan_to_num", "lerp", "xlogy", "logaddexp", "logaddexp2", "addcmul",
    "addcdiv", "sinc",
]


def _scaled(other, alpha, name):
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, Tensor)):
        raise TypeError(f"mint.{name}: alpha must be a number, got {type(alpha).__name__}")
    return other if (not isinstance(alpha, Tensor) and alpha == 1) else _M.mul(other, alpha)


# ---------------------------------------------------------------- arithmetic --------------------
def add(input, other, *, alpha=1):
    """input + alpha * other."""
    return _M.add(input, _scaled(other, alpha, "add"))


def sub(input, other, *, alpha=1):
    """input - alpha * other."""
    return _M.sub(input, _scaled(other, alpha, "sub"))


def mul(input, other):
    """input * other (broadcasting)."""
    return _M.mul(input, other)


def div(input, other, *, rounding_mode=None):
    """input / other: true division (integers give float32), 'floor' rounds the quotient down,
    'trunc' towards zero (integers keep their dtype)."""
    return _RD.div(input, other, rounding_mode=rounding_mode)


def divide(input, other, *, rounding_mode=None):
    """Alias of mint.div."""
    return _RD.div(input, other, rounding_mode=rounding_mode)


def floor_divide(input, other):
    """input / other rounded down."""
    return _M.floor_div(input, other)


def remainder(input, other):
    """input - floor(input / other) * other: the sign of other (Python's %)."""
    return _M.mod(input, other)


def fmod(input, other):
    """The remainder of truncated division: the sign of input (C's fmod)."""
    return _X._fmod(input, other)


def pow(input, exponent):
    """input ** exponent (a Python number base is taken as a tensor of the exponent's dtype
    where that is a float, else float32)."""
    if not isinstance(input, Tensor):
        d = exponent.dtype if exponent.dtype.is_float else _dt.float32
        input = Tensor(input, d)
    return _M.pow(input, exponent)


def float_power(input, exponent):
    """input ** exponent computed in float64 (PyTorch's float_power)."""
    x = _M.cast(input, _dt.float64) if isinstance(input, Tensor) else Tensor(input, _dt.float64)
    e = _M.cast(exponent, _dt.float64) if isinstance(exponent, Tensor) else float(exponent)
    return _M.pow(x, e)


def neg(input):
    """-input."""
    return _M.neg(input)


negative = neg


def abs(input):
    """|input|."""
    return _M.abs(input)


def square(input):
    """input * input."""
    return _M.square(input)


def reciprocal(input):
    """1 / input (integers give float32)."""
    return _M.reciprocal(input)


def sign(input):
    """-1, 0 or 1 by the sign of input (0 for 0, NaN for NaN)."""
    return _M.sign(input)


def _unary(name, fn, doc):
    def f(input):
        return fn(input)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


exp = _unary("exp", _M.exp, "e ** input (integers give float32).")
log = _unary("log", _M.log, "The natural logarithm (integers give float32).")
log1p = _unary("log1p", _M.log1p, "log(1 + input), accurate near 0.")
sqrt = _unary("sqrt", _M.sqrt, "The square root (integers give float32).")
rsqrt = _unary("rsqrt", _M.rsqrt, "1 / sqrt(input).")
sin = _unary("sin", _M.sin, "The sine.")
cos = _unary("cos", _M.cos, "The cosine.")
tanh = _unary("tanh", _M.tanh, "The hyperbolic tangent.")
sigmoid = _unary("sigmoid", _M.sigmoid, "1 / (1 + exp(-input)).")
erf = _unary("erf", _M.erf, "The error function.")
floor = _unary("floor", _M.floor, "Rounded down.")
ceil = _unary("ceil", _M.ceil, "Rounded up.")


def _float(x):
    return x if x.dtype.is_float else _M.cast(x, _dt.float32)


def exp2(input):
    """2 ** input (integers give float32)."""
    x = _float(input)
    return _M.pow(_M._constant(2.0, x.dtype), x)


def log2(input):
    """The base-2 logarithm: log(input) / log(2)."""
    return _M.mul(_M.log(input), 1 / _pymath.log(2))


def log10(input):
    """The base-10 logarithm: log(input) / log(10)."""
    return _M.mul(_M.log(input), 1 / _pymath.log(10))


def tan(input):
    """sin(input) / cos(input)."""
    x = _float(input)
    return _M.div(_M.sin(x), _M.cos(x))


def sinh(input):
    """(exp(input) - exp(-input)) / 2."""
    x = _float(input)
    return _M.mul(_M.sub(_M.exp(x), _M.exp(_M.neg(x))), 0.5)


def cosh(input):
    """(exp(input) + exp(-input)) / 2."""
    x = _float(input)
    return _M.mul(_M.add(_M.exp(x), _M.exp(_M.neg(x))), 0.5)


def asinh(input):
    """The inverse hyperbolic sine, sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))."""
    x = _float(input)
    a = _M.where(_M.less(x, 0), _M.neg(x), x)       # |x|, with slope 1 at 0 (abs's is 0)
    a2 = _M.square(a)
    r = _M.log1p(_M.add(a, _M.div(a2, _M.add(_M.sqrt(_M.add(a2, 1.0)), 1.0))))
    return _M.where(_M.less(x, 0), _M.neg(r), r)


def acosh(input):
    """The inverse hyperbolic cosine, log1p((x - 1) + sqrt((x - 1)(x + 1))) (NaN below 1)."""
    x = _float(input)
    t = _M.sub(x, 1.0)
    return _M.log1p(_M.add(t, _M.sqrt(_M.mul(t, _M.add(x, 1.0)))))


def atanh(input):
    """The inverse hyperbolic tangent, (log1p(x) - log1p(-x)) / 2."""
    x = _float(input)
    return _M.mul(_M.sub(_M.log1p(x), _M.log1p(_M.neg(x))), 0.5)


arcsinh, arccosh, arctanh = asinh, acosh, atanh


def round(input, *, decimals=0):
    """Rounded half to even, at `decimals` digits after the point."""
    return _RD.round(input, decimals=decimals)


def trunc(input):
    """Rounded towards zero."""
    return _X._trunc(input)


def fix(input):
    """Alias of mint.trunc."""
    return _X._trunc(input)


def frac(input):
    """input - trunc(input): the fractional part, with input's sign."""
    return _M.sub(input, _X._trunc(input))


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0 (integers give float32)."""
    x = _float(input)
    px = _M.mul(x, _pymath.pi)
    zero = _M.equal(x, 0)
    safe = _M.where(zero, _M._constant(1.0, x.dtype), px)
    return _M.where(zero, _M._constant(1.0, x.dtype), _M.div(_M.sin(safe), safe))


def clamp(input, min=None, max=None):
    """input limited to [min, max] (either may be None, not both; max wins where min > max)."""
    if min is None and max is None:
        raise ValueError("mint.clamp: at least one of 'min' or 'max' must not be None")
    return _M.clamp(input, min, max)


def clip(input, min=None, max=None):
    """Alias of mint.clamp."""
    if min is None and max is None:
        raise ValueError("mint.clip: at least one of 'min' or 'max' must not be None")
    return _M.clamp(input, min, max)


def maximum(input, other):
    """The elementwise maximum (NaN propagates)."""
    return _M.maximum(input, other)


def minimum(input, other):
    """The elementwise minimum (NaN propagates)."""
    return _M.minimum(input, other)


# ---------------------------------------------------------------- comparisons and logic ---------
def _cmp(name, fn):
    def f(input, other):
        return fn(input, other)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} (a bool tensor, broadcasting)."
    return f


eq = _cmp("eq", _M.equal)
ne = _cmp("ne", _M.not_equal)
not_equal = _cmp("not_equal", _M.not_equal)
gt = _cmp("gt", _M.greater)
greater = _cmp("greater", _M.greater)
ge = _cmp("ge", _M.greater_equal)
greater_equal = _cmp("greater_equal", _M.greater_equal)
lt = _cmp("lt", _M.less)
less = _cmp("less", _M.less)
le = _cmp("le", _M.less_equal)
less_equal = _cmp("less_equal", _M.less_equal)


def equal(input, other):
    """True when input and other have the same shape and elements (a Python bool, as
    MindSpore's mint.equal; it reads the tensors' values, so PyNative only)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    from ..core.ops import reduce as _R
    return bool(_R.amin(_M.cast(_M.equal(input, other), _dt.int32)).item()) \
        if input.size else True


def _bool(x):
    return _M.cast(x, _dt.bool_) if isinstance(x, Tensor) else bool(x)


def logical_and(input, other):
    """input and other, each read as bool."""
    return _M.logical_and(_bool(input), _bool(other))


def logical_or(input, other):
    """input or other, each read as bool."""
    return _M.logical_or(_bool(input), _bool(other))


def logical_xor(input, other):
    """input xor other, each read as bool."""
    return _M.not_equal(_bool(input), _bool(other))


def logical_not(input):
    """not input (a bool tensor)."""
    return _M.logical_not(input)


def bitwise_and(input, other):
    """input & other (ints and bools)."""
    return _M.bitwise_and(input, other)


def bitwise_or(input, other):
    """input | other (ints and bools)."""
    return _M.bitwise_or(input, other)


def bitwise_xor(input, other):
    """input ^ other (ints and bools)."""
    return _M.bitwise_xor(input, other)


def bitwise_not(input):
    """~input: the bits flipped (ints), not (bools)."""
    if input.dtype is _dt.bool_:
        return _M.logical_not(input)
    return _M.bitwise_not(input)


def _full_bool(x, value):
    from ..core.ops import array as _A
    return _A.full(tuple(x.shape), value, dtype=_dt.bool_)


def isnan(tensor):
    """True where tensor is NaN."""
    return _M.not_equal(tensor, tensor) if tensor.dtype.is_float else _full_bool(tensor, False)


def isinf(input):
    """True where input is +inf or -inf."""
    return _X._isinf(input) if input.dtype.is_float else _full_bool(input, False)


def isneginf(input):
    """True where input is -inf."""
    return _M.equal(input, float("-inf")) if input.dtype.is_float else _full_bool(input, False)


def isfinite(input):
    """True where input is neither NaN nor infinite."""
    return _X._isfinite(input) if input.dtype.is_float else _full_bool(input, True)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other| (infinities equal only to themselves; NaNs equal
    when equal_nan)."""
    close = _M.less_equal(_M.abs(_M.sub(input, other)),
                          _M.add(_M.mul(_M.abs(other), float(rtol)), float(atol)))
    close = _M.logical_or(close, _M.equal(input, other))
    if equal_nan:
        close = _M.logical_or(close, _M.logical_and(isnan(input), isnan(other)))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether isclose holds everywhere (a Python bool: it reads the values, PyNative only)."""
    from ..core.ops import reduce as _R
    c = isclose(input, other, rtol, atol, equal_nan)
    return bool(_R.amin(_M.cast(c, _dt.int32)).item()) if c.size else True


def nan_to_num(input, nan=None, posinf=None, neginf=None):
    """NaN -> nan (None: 0), +inf -> posinf (None: the dtype's largest value), -inf -> neginf
    (None: the dtype's lowest); integer tensors come back unchanged."""
    return _X._nan_to_num(input, nan, posinf, neginf)


# ---------------------------------------------------------------- composites --------------------
def lerp(input, end, weight):
    """input + weight * (end - input)."""
    return _X._lerp(input, end, weight)


def xlogy(input, other):
    """input * log(other), 0 where input is 0 (unless other is NaN)."""
    if not isinstance(input, Tensor):
        input = Tensor(input, other.dtype if other.dtype.is_float else _dt.float32)
    if not isinstance(other, Tensor):
        other = Tensor(other, input.dtype if input.dtype.is_float else _dt.float32)
    x, y = _float(input), _float(other)
    r = _M.mul(x, _M.log(y))
    return _M.where(_M.logical_and(_M.equal(x, 0), _M.equal(y, y)),
                    _M.zeros_like(r), r)


def logaddexp(input, other):
    """log(exp(input) + exp(other)), computed stably: max + log1p(exp(-|input - other|))."""
    x, y = _float(input), _float(other)
    m = _M.maximum(x, y)
    r = _M.add(m, _M.log1p(_M.exp(_M.neg(_M.abs(_M.sub(x, y))))))
    same_inf = _M.logical_and(_M.equal(x, y), _X._isinf(x))          # inf - inf is NaN
    return _M.where(same_inf, x, r)


def logaddexp2(input, other):
    """log2(2 ** input + 2 ** other), computed stably."""
    x, y = _float(input), _float(other)
    m = _M.maximum(x, y)
    d = _M.mul(_M.neg(_M.abs(_M.sub(x, y))), _pymath.log(2))
    r = _M.add(m, _M.mul(_M.log1p(_M.exp(d)), 1 / _pymath.log(2)))
    return _M.where(_M.logical_and(_M.equal(x, y), _X._isinf(x)), x, r)


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    return _X._addcmul(input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    q = _M.div(tensor1, tensor2)
    return _M.add(input, q if value == 1 else _M.mul(q, value))
