"""mint's inverse trigonometric functions, composed of elementwise ops: atan by Cephes' atanf
(range reduction and an odd polynomial, about 1 ulp in float32), atan2 from it with the
quadrant and signed-zero rules of C, asin and acos through atan2."""
from __future__ import annotations

import math as _pymath

from ..core import dtype as _dt
from ..core import tensor_methods_extra as _X
from ..core.ops import array as _A
from ..core.ops import math as _M
from ..core.tensor import Tensor
from ._elementwise import _float

__all__ = ["atan", "arctan", "atan2", "arctan2", "asin", "arcsin", "acos", "arccos", "erfc",
           "erfinv", "gcd", "real"]

# Numerical Recipes' erfcc: erfc(|x|) = t exp(-x^2 + P(t)), t = 1 / (1 + |x| / 2), with a
# relative error below 1.2e-7 everywhere (so no cancellation for large x, as 1 - erf has)
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
         -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def erfc(input):
    """1 - erf(input), accurate where it is tiny (large input): Numerical Recipes' erfcc."""
    x = _float(input)
    a = _abs(x)
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


def _abs(x):
    """|x| as where(x < 0, -x, x): its gradient at 0 is 1 (abs's is 0), so a function of |x|
    that is smooth at 0 (atan, erfc) gets its true slope there."""
    return _M.where(_M.less(x, 0), _M.neg(x), x)


def _atan_float(x):
    """atan of a float tensor: Cephes' atanf (range reduction to |x| <= tan(pi/8), then a
    degree-9 odd polynomial; about 1 ulp in float32)."""
    a = _abs(x)
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


def _negative(v, one):
    """v < 0, -0.0 included (1 / -0.0 is -inf)."""
    return _M.logical_or(_M.less(v, 0), _M.logical_and(_M.equal(v, 0),
                                                       _M.less(_M.div(one, v), 0)))


def atan2(input, other):
    """The angle of the point (other, input) in (-pi, pi], C's atan2 (signed zeros included):
    atan(y / x) moved to x's half-plane where |y| <= |x|, else +-pi/2 - atan(x / y), so the
    quotient is at most 1 in size and each branch is smooth where it is taken."""
    if not isinstance(input, Tensor):
        input = Tensor(input, other.dtype if other.dtype.is_float else _dt.float32)
    if not isinstance(other, Tensor):
        other = Tensor(other, input.dtype if input.dtype.is_float else _dt.float32)
    y, x = _float(input), _float(other)
    d = _dt.promote(y.dtype, x.dtype)
    y, x = _M.cast(y, d), _M.cast(x, d)
    zero = _M.zeros_like(_M.add(y, x))
    one = _M.add(zero, 1.0)
    pi = _M.add(zero, _pymath.pi)
    shape = tuple(zero.shape)                                  # both of the broadcast shape
    y, x = _A.broadcast_to(y, shape), _A.broadcast_to(x, shape)   # (+0 would turn -0.0 to 0.0)
    swap = _M.greater(_M.abs(y), _M.abs(x))
    num, den = _M.where(swap, x, y), _M.where(swap, y, x)
    t = _atan_float(_M.div(num, _M.where(_M.equal(den, 0), one, den)))
    neg_y, neg_x = _negative(y, one), _negative(x, one)
    flat = _M.where(neg_x, _M.add(t, _M.where(neg_y, _M.neg(pi), pi)), t)
    steep = _M.sub(_M.where(neg_y, _M.mul(pi, -0.5), _M.mul(pi, 0.5)), t)
    r = _M.where(swap, steep, flat)
    inf_both = _M.logical_and(_X._isinf(x), _X._isinf(y))       # the quadrant's diagonal
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


# Giles' single-precision erfinv ("Approximating the erfinv function", 2010): a polynomial in
# w = -log((1 - x)(1 + x)), one for w < 5 and one for the tails
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefs, t):
    p = _M.add(_M.zeros_like(t), coefs[0])
    for c in coefs[1:]:
        p = _M.add(_M.mul(p, t), c)
    return p


def erfinv(input):
    """The inverse of erf on (-1, 1) (+-inf at +-1, NaN outside): Giles' approximation refined
    by one Newton step on erf(y) = x."""
    x = _float(input)
    w = _M.neg(_M.log(_M.mul(_M.sub(1.0, x), _M.add(x, 1.0))))
    central = _M.less(w, 5.0)
    wc = _M.where(central, _M.sub(w, 2.5), _M.sub(_M.sqrt(_M.where(central, 5.0, w)), 3.0))
    p = _M.where(central, _horner(_ERFINV_CENTRAL, wc), _horner(_ERFINV_TAIL, wc))
    y = _M.mul(p, x)
    finite = _M.less(_M.abs(x), 1.0)
    ys = _M.where(finite, y, _M.zeros_like(y))
    step = _M.div(_M.sub(_M.erf(ys), x), _M.mul(_M.exp(_M.neg(_M.mul(ys, ys))),
                                                2 / _pymath.sqrt(_pymath.pi)))
    inf = _M.add(_M.zeros_like(x), float("inf"))  # +-inf at +-1 (no path back to x: its
    edge = _M.where(_M.less(x, 0), _M.neg(inf), inf)  # gradient would be 0 * inf = NaN)
    return _M.where(finite, _M.sub(ys, step), _M.where(_M.equal(_M.abs(x), 1.0), edge, y))


def gcd(input, other):
    """The greatest common divisor of integer tensors (non-negative; gcd(0, 0) = 0), by
    Euclid's algorithm run for the most steps the dtype can need."""
    a, b = input, other
    if not isinstance(a, Tensor):
        a = Tensor(a, b.dtype)
    if not isinstance(b, Tensor):
        b = Tensor(b, a.dtype)
    if not (a.dtype.is_int and b.dtype.is_int):
        raise TypeError(f"mint.gcd: inputs must be integer tensors, got {a.dtype} and {b.dtype}")
    d = _dt.promote(a.dtype, b.dtype)
    a, b = _M.abs(_M.cast(a, d)), _M.abs(_M.cast(b, d))
    shape = tuple(_M.add(a, b).shape)
    a, b = _A.broadcast_to(a, shape), _A.broadcast_to(b, shape)
    one = _M._constant(1, d)
    # Euclid needs fewer steps than the index of the first Fibonacci number past the maximum
    steps = {1: 13, 2: 25, 4: 47, 8: 93}[d.np.itemsize]
    for _ in range(steps):
        zero_b = _M.equal(b, 0)
        r = _M.mod(a, _M.where(zero_b, one, b))
        a, b = _M.where(zero_b, a, b), _M.where(zero_b, b, r)
    return a


def real(input):
    """The real part: input itself (minispore has no complex dtypes)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"mint.real: input must be a Tensor, got {type(input).__name__}")
    return input
