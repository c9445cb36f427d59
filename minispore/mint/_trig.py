"""mint's inverse trigonometric functions, composed of elementwise ops: atan by Cephes' atanf
(range reduction and an odd polynomial, about 1 ulp in float32), atan2 from it with the
quadrant and signed-zero rules of C, asin and acos through atan2."""
from __future__ import annotations

import math as _pymath

from ..core import dtype as _dt
from ..core import tensor_methods_extra as _X
from ..core.ops import math as _M
from ..core.tensor import Tensor
from ._elementwise import _float

__all__ = ["atan", "arctan", "atan2", "arctan2", "asin", "arcsin", "acos", "arccos", "erfc"]

# Numerical Recipes' erfcc: erfc(|x|) = t exp(-x^2 + P(t)), t = 1 / (1 + |x| / 2), with a
# relative error below 1.2e-7 everywhere (so no cancellation for large x, as 1 - erf has)
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
         -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def erfc(input):
    """1 - erf(input), accurate where it is tiny (large input): Numerical Recipes' erfcc."""
    x = _float(input)
    a = _M.abs(x)
    t = _M.div(1.0, _M.add(_M.mul(a, 0.5), 1.0))
    p = _M.mul(_M.add(_M.zeros_like(t), _ERFC[-1]), t)
    for c in reversed(_ERFC[1:-1]):
        p = _M.mul(_M.add(p, c), t)
    # exp(-a^2) with a^2 = h^2 + (a - h)(a + h), h = a to 6 fractional bits (h^2 is exact):
    # rounding a^2 itself would cost ulp(a^2) of relative error in the result
    h = _M.div(_M.floor(_M.mul(a, 64.0)), 64.0)
    rest = _M.mul(_M.sub(a, h), _M.add(a, h))
    r = _M.mul(_M.mul(t, _M.exp(_M.neg(_M.mul(h, h)))),
               _M.exp(_M.add(_M.sub(_ERFC[0], rest), p)))
    return _M.where(_M.less(x, 0), _M.sub(2.0, r), r)

_TAN_3PI_8, _TAN_PI_8 = 2.414213562373095, 0.4142135623730950


def _atan_float(x):
    """atan of a float tensor: Cephes' atanf (range reduction to |x| <= tan(pi/8), then a
    degree-9 odd polynomial; about 1 ulp in float32)."""
    a = _M.abs(x)
    big = _M.greater(a, _TAN_3PI_8)
    mid = _M.logical_and(_M.greater(a, _TAN_PI_8), _M.logical_not(big))
    one = _M._constant(1.0, x.dtype)
    safe = _M.where(big, a, one)
    r = _M.where(big, _M.neg(_M.div(one, safe)),
                 _M.where(mid, _M.div(_M.sub(a, 1.0), _M.add(a, 1.0)), a))
    y0 = _M.where(big, _M._constant(_pymath.pi / 2, x.dtype),
                  _M.where(mid, _M._constant(_pymath.pi / 4, x.dtype), _M.zeros_like(x)))
    z = _M.mul(r, r)
    p = _M.sub(_M.mul(z, 8.05374449538e-2), 1.38776856032e-1)
    p = _M.sub(_M.mul(_M.add(_M.mul(p, z), 1.99777106478e-1), z), 3.33329491539e-1)
    y = _M.add(y0, _M.add(_M.mul(_M.mul(p, z), r), r))
    return _M.where(_M.less(x, 0), _M.neg(y), _M.where(_M.equal(x, 0), x, y))   # keeps -0.0


def atan(input):
    """The inverse tangent, in (-pi/2, pi/2) (integers give float32)."""
    return _atan_float(_float(input))


def atan2(input, other):
    """The angle of the point (other, input) in (-pi, pi]: atan(input / other) moved to its
    quadrant (atan2(0, 0) = 0, the signs of zeros respected as in C)."""
    y, x = _float(input), _float(other)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        d = _dt.promote(y.dtype, x.dtype)
        y, x = _M.cast(y, d), _M.cast(x, d)
    zero = _M.zeros_like(_M.add(y, x))
    pi = _M.add(zero, _pymath.pi)
    x_zero = _M.equal(x, 0)
    base = _atan_float(_M.div(y, _M.where(x_zero, _M.add(zero, 1.0), x)))
    neg_y = _M.logical_or(_M.less(y, 0), _M.logical_and(
        _M.equal(y, 0), _M.less(_M.div(_M.add(zero, 1.0), y), 0)))            # -0.0
    neg_x = _M.logical_or(_M.less(x, 0), _M.logical_and(
        x_zero, _M.less(_M.div(_M.add(zero, 1.0), x), 0)))
    r = _M.where(neg_x, _M.where(neg_y, _M.sub(base, pi), _M.add(base, pi)), base)
    half = _M.where(neg_y, _M.neg(_M.mul(pi, 0.5)), _M.mul(pi, 0.5))
    at_zero = _M.where(neg_x, _M.where(neg_y, _M.neg(pi), pi), _M.where(neg_y, _M.neg(zero),
                                                                            zero))
    r = _M.where(x_zero, _M.where(_M.equal(y, 0), at_zero, half), r)
    # both infinite: the quadrant's diagonal
    inf_both = _M.logical_and(_X._isinf(x), _X._isinf(y))
    diag = _M.where(neg_x, _M.mul(pi, 0.75), _M.mul(pi, 0.25))
    return _M.where(inf_both, _M.where(neg_y, _M.neg(diag), diag), r)


def asin(input):
    """The inverse sine, atan2(x, sqrt((1 - x)(1 + x))) (NaN outside [-1, 1])."""
    x = _float(input)
    return atan2(x, _M.sqrt(_M.mul(_M.sub(1.0, x), _M.add(x, 1.0))))


def acos(input):
    """The inverse cosine, atan2(sqrt((1 - x)(1 + x)), x) (NaN outside [-1, 1])."""
    x = _float(input)
    return atan2(_M.sqrt(_M.mul(_M.sub(1.0, x), _M.add(x, 1.0))), x)


def arcsin(x):
    """Alias of mint.asin."""
    return asin(x)


arctan, arctan2, arccos = atan, atan2, acos
