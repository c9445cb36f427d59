"""Activation composites: each formula declared once here, and called by nn, ops and mint.

relu6, hardswish, hardsigmoid, hardtanh, leaky_relu, prelu, elu (also selu and celu: one
exponential-linear formula with MindSpore's and PyTorch's constants as attributes), silu, mish,
softsign, logsigmoid, tanhshrink, softmin, softshrink, hardshrink, fast_gelu, threshold, glu.

Where MindSpore's API (ops/nn) and its PyTorch-style API (mint) differ at a kink, in a
rounding form or at -0.0, the one declaration carries the difference as an attribute:
hardtanh's `bounds` ("shared": MindSpore's maximum/minimum, whose gradient halves at a bound
and whose NaN gives min_val; "zero": PyTorch's, 0 at a bound), leaky_relu's `form`
("maximum": MindSpore's maximum(alpha * x, x), minimum for alpha > 1, halving the gradient at
0; "select": PyTorch's x where x > 0, the slope at 0), elu's `positive_at_zero` (the branch x = 0 belongs to) and
`exact` (expm1, or MindSpore's Elu kernel's exp(x) - 1), logsigmoid's `form` (ops'
log(sigmoid(x)), nn's log(1 / (1 + exp(-x))), mint's -softplus(-x)).

The composites take every dtype their formula is defined on; the dtype sets of MindSpore's
CPU kernels (relu6 float16/float32 only, ...) are checked by the public functions in
ops/activations.py, so mint keeps its own. A bprop is declared where the parts' gradient
differs from MindSpore's (relu6, hardswish at -3 and 3, hardtanh at NaN) or is much costlier
(elu, softsign)."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from . import array as _a
from . import math as _m
from . import nn as _nn
from . import rounding as _rd
from .declare import FLOAT, composite_elementwise, ref_array_dtype
from .math import _constant

FL = dt.FLOATS
NUM = dt.NUMERIC


def _c(value, x):
    """`value` as a 0-d tensor of x's dtype (an integer dtype truncates, as MindSpore's cast)."""
    return _constant(value, x.dtype)


def _zero(x):
    return _constant(0, x.dtype)


def _expm1(x):
    """exp(x) - 1 without the cancellation near 0: tanh(x / 2) * (exp(x) + 1)."""
    return _m.tanh(x * _c(0.5, x)) * (_m.exp(x) + _c(1, x))


def _div6(v):
    """v / 6; integers rounded towards zero, as MindSpore's integer HSwish/HSigmoid kernels."""
    if v.dtype.is_float:
        return v / _c(6, v)
    return _rd.truncate_div(v, _c(6, v))


def _np_div6(v):
    return v / 6 if v.dtype.kind == "f" else np.trunc(v / 6).astype(v.dtype)


# ---------------------------------------------------------------- relu6 -------------------------
def _relu6(x):
    # relu first: NaN and -inf give +0 as MindSpore's ReLU6 kernel, +inf gives 6
    return _m.where(x > _c(6, x), _c(6, x), _m.relu(x))


def _relu6_bprop(i, o, g):
    x = i[0]
    # MindSpore's ReLU6 gradient: 1 on (0, 6], 0 at 0 and above 6
    keep = _m.logical_and(x > _zero(x), x <= _c(6, x))
    return (_m.where(keep, g, _m.zeros_like(g)),)


RELU6 = composite_elementwise(
    "relu6", 1, _relu6, lambda x: np.where(x > 6, 6, np.where(x > 0, x, 0)).astype(x.dtype),
    _relu6_bprop, allowed=NUM)


# ---------------------------------------------------------------- hardswish / hardsigmoid -------
def _hardswish(x):
    inner = _div6(x * (x + _c(3, x)))
    # -3 gives +0.0 (not -3 * 0 = -0.0), as MindSpore's HSwish; the bprop gives -3 its
    # inner gradient
    return _m.where(x <= _c(-3, x), _zero(x), _m.where(x > _c(3, x), x, inner))


def _hardswish_bprop(i, o, g):
    x = i[0]
    # MindSpore's HSwishGrad: (2x + 3) / 6 on [-3, 3] (ends included), 0 below, 1 above
    d = (x * _c(2, x) + _c(3, x)) / _c(6, x)
    d = _m.where(x < _c(-3, x), _zero(x), _m.where(x > _c(3, x), _c(1, x), d))
    return (g * d,)


def _hardswish_np(x):
    return np.where(x <= -3, 0, np.where(x > 3, x, _np_div6(x * (x + 3)))).astype(x.dtype)


HARDSWISH = composite_elementwise("hardswish", 1, _hardswish, _hardswish_np, _hardswish_bprop,
                                  allowed=NUM)


def _hardsigmoid(x):
    # where, not a clamp: NaN stays NaN (MindSpore's HSigmoid); the parts' gradient is 1/6
    # strictly inside (-3, 3) and 0 at the ends, as MindSpore's HSigmoidGrad
    inner = _div6(x + _c(3, x))
    return _m.where(x <= _c(-3, x), _zero(x), _m.where(x >= _c(3, x), _c(1, x), inner))


def _hardsigmoid_bprop(i, o, g):
    x = i[0]
    inside = _m.logical_and(x > _c(-3, x), x < _c(3, x))
    return (_m.where(inside, g / _c(6, g), _m.zeros_like(g)),)


HARDSIGMOID = composite_elementwise(
    "hardsigmoid", 1, _hardsigmoid,
    lambda x: np.where(x <= -3, 0, np.where(x >= 3, 1, _np_div6(x + 3))).astype(x.dtype),
    _hardsigmoid_bprop, allowed=NUM)


# ---------------------------------------------------------------- hardtanh ----------------------
def _hardtanh(x, min_val=-1.0, max_val=1.0, bounds="shared"):
    lo, hi = _c(min_val, x), _c(max_val, x)
    if bounds == "shared":
        # MindSpore's ops.hardtanh: minimum(maximum(x, min_val), max_val) with its CPU
        # kernels' selections, x > lo ? x : lo then y < hi ? y : hi (NaN gives min_val, a
        # signed zero at a zero bound gives the bound), in x's dtype (an integer x truncates
        # the bounds, which gives MindSpore's cast of the float result)
        y = _m.where(x > lo, x, lo)
        return _m.where(y < hi, y, hi)
    # PyTorch's: the bound's value at and beyond it, NaN kept
    return _m.where(x <= lo, lo, _m.where(x >= hi, hi, x))


def _hardtanh_bprop(i, o, g, min_val=-1.0, max_val=1.0, bounds="shared"):
    x = i[0]
    lo, hi = _c(min_val, x), _c(max_val, x)
    if bounds == "zero":
        # PyTorch's: x's gradient strictly inside (lo, hi), 0 at and beyond the bounds
        return (_m.where(_m.logical_and(x > lo, x < hi), g, _m.zeros_like(g)),)
    # MindSpore's maximum/minimum gradients chained: each gives its input the gradient unless
    # the other operand is strictly selected, half on a tie (0.25 at x = min_val = max_val);
    # minimum's is taken at maximum's output y (a NaN x: y = min_val, gradient 1)
    half, one = _c(0.5, g), _c(1, g)
    y = _m.where(x > lo, x, lo)
    w_lo = _m.where(x < lo, _zero(g), _m.where(_m.equal(x, lo), half, one))
    w_hi = _m.where(y > hi, _zero(g), _m.where(_m.equal(y, hi), half, one))
    return (g * (w_lo * w_hi),)


def _hardtanh_np(x, min_val=-1.0, max_val=1.0, bounds="shared"):
    lo, hi = np.array(min_val).astype(x.dtype), np.array(max_val).astype(x.dtype)
    if bounds == "shared":
        y = np.where(x > lo, x, lo)
        return np.where(y < hi, y, hi).astype(x.dtype)
    return np.where(x <= lo, lo, np.where(x >= hi, hi, x)).astype(x.dtype)


HARDTANH = composite_elementwise("hardtanh", 1, _hardtanh, _hardtanh_np, _hardtanh_bprop,
                                 allowed=NUM,
                                 attrs={"min_val": -1.0, "max_val": 1.0, "bounds": "shared"})


# ---------------------------------------------------------------- leaky_relu / prelu ------------
def _leaky_relu(x, alpha=0.2, form="maximum"):
    a = _c(alpha, x)
    if form == "maximum":
        # MindSpore's ops.leaky_relu: alpha cast to x's dtype, maximum(alpha * x, x) (minimum
        # when alpha > 1); at x = 0 the two tie and the gradient is (1 + alpha) / 2
        # (x first: minispore's maximum/minimum give the first operand on a tie, MindSpore's
        # the second, so -0.0 and +0.0 come out as MindSpore's)
        pick = _m.minimum if alpha > 1 else _m.maximum
        return pick(x, a * x)
    return _m.where(x > _zero(x), x, x * a)


def _leaky_relu_np(x, alpha=0.2, form="maximum"):
    a = np.array(alpha).astype(x.dtype)
    if form == "maximum":
        return (np.minimum if alpha > 1 else np.maximum)(a * x, x).astype(x.dtype)
    return np.where(x > 0, x, x * a).astype(x.dtype)


LEAKY_RELU = composite_elementwise("leaky_relu", 1, _leaky_relu, _leaky_relu_np, allowed=NUM,
                                   attrs={"alpha": 0.2, "form": "maximum"})


def _prelu_channels(x_shape) -> int:
    return x_shape[1] if len(x_shape) >= 2 else 1


def _prelu_infer(x, weight):
    for what, t in (("x", x), ("weight", weight)):
        if t.dtype not in FL:
            raise DTypeError(f"prelu: {what} must be a float tensor, got {t.dtype}; cast it "
                             f"with .astype(ms.float32)")
    if len(weight.shape) != 1:
        raise ShapeError(f"prelu: weight must be 1-D, got shape {tuple(weight.shape)}; pass a "
                         f"(channels,) or (1,) weight")
    c = _prelu_channels(tuple(x.shape))
    if weight.shape[0] not in (1, c):
        raise ShapeError(f"prelu: the length of weight ({weight.shape[0]}) must be 1 or the "
                         f"number of channels {c} (axis 1 of x's shape {tuple(x.shape)}; 1 for "
                         f"a 0-d or 1-D x)")
    return Meta(tuple(x.shape), x.dtype)


def _prelu_weight(x_ndim, weight):
    """weight shaped to broadcast along axis 1 (the channels) of an x of x_ndim dims."""
    if x_ndim >= 2 and weight.shape[0] != 1:
        return weight.reshape((weight.shape[0],) + (1,) * (x_ndim - 2))
    return weight if x_ndim else weight.reshape(())


def _prelu(x, weight):
    w = weight if weight.dtype is x.dtype else _m.cast(weight, x.dtype)
    if len(x.shape) >= 2 and w.shape[0] != 1:
        w = _a.reshape(w, (w.shape[0],) + (1,) * (len(x.shape) - 2))
    elif not x.shape:                   # a 0-d x stays 0-d
        w = _a.reshape(w, ())
    # x where x > 0, w * x elsewhere (-0.0 gives -0.0): the gradient at 0 is w, and weight's
    # is the sum of x over its channel's non-positive elements, as MindSpore's PReLUGrad
    return _m.where(x > _zero(x), x, x * w)


def _prelu_ref(x, weight):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    w = _prelu_weight(x.ndim, weight.astype(x.dtype).astype(c))
    xc = x.astype(c)
    return np.where(xc > 0, xc, xc * w).astype(x.dtype)


PRELU = defop("prelu", infer=_prelu_infer, ref=_prelu_ref, arity=2, composite=_prelu)


# ---------------------------------------------------------------- elu / selu / celu -------------
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_ELU_ATTRS = {"alpha": 1.0, "scale": 1.0, "input_scale": 1.0, "positive_at_zero": False,
              "exact": True}


def _elu_split(x, positive_at_zero):
    """(the mask of the linear branch, x limited to <= 0 for the exponential branch: a large
    positive x must not overflow exp where its branch is not taken)."""
    pos = (x >= _zero(x)) if positive_at_zero else (x > _zero(x))
    return pos, _m.where(x > _zero(x), _zero(x), x)


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0, positive_at_zero=False, exact=True):
    pos, xn = _elu_split(x, positive_at_zero)
    if input_scale != 1.0:
        xn = xn * _c(input_scale, x)
    # exact: expm1 (CeLU, SeLU, PyTorch's elu); else MindSpore's Elu kernel's exp(x) - 1,
    # whose -0.0 gives +0.0 and whose tiny negative inputs round to 0
    em1 = _expm1(xn) if exact else _m.exp(xn) - _c(1, x)
    neg = em1 * _c(alpha * scale, x)
    lin = x if scale == 1.0 else x * _c(scale, x)
    return _m.where(pos, lin, neg)


def _elu_bprop(i, o, g, alpha=1.0, scale=1.0, input_scale=1.0, positive_at_zero=False,
               exact=True):
    x = i[0]
    pos, xn = _elu_split(x, positive_at_zero)
    d_neg = _m.exp(xn * _c(input_scale, x) if input_scale != 1.0 else xn) * \
        _c(alpha * scale * input_scale, x)
    d = _m.where(pos, _c(scale, x), d_neg)
    return (g * d,)


def _elu_np(x, alpha=1.0, scale=1.0, input_scale=1.0, positive_at_zero=False, exact=True):
    pos = (x >= 0) if positive_at_zero else (x > 0)
    xn = np.minimum(x, 0) * input_scale
    em1 = np.expm1(xn) if exact else np.exp(xn) - 1
    return np.where(pos, x * scale, em1 * (alpha * scale)).astype(x.dtype)


ELU = composite_elementwise("elu", 1, _elu, _elu_np, _elu_bprop, allowed=FL, attrs=_ELU_ATTRS)


# ---------------------------------------------------------------- smooth ones -------------------
SILU = composite_elementwise("silu", 1, lambda x: x * _m.sigmoid(x),
                             lambda x: x / (1 + np.exp(-x)), allowed=FL)
MISH = composite_elementwise("mish", 1, lambda x: x * _m.tanh(_m.softplus(x)),
                             lambda x: x * np.tanh(np.logaddexp(0, x)), allowed=FL)


def _softsign_bprop(i, o, g):
    d = _m.abs(i[0]) + _c(1, i[0])
    return (g / (d * d),)


SOFTSIGN = composite_elementwise("softsign", 1, lambda x: x / (_m.abs(x) + _c(1, x)),
                                 lambda x: x / (1 + np.abs(x)), _softsign_bprop, allowed=FL)


def _logsigmoid(x, form="sigmoid"):
    if form == "sigmoid":               # ops.logsigmoid: log(sigmoid(x))
        return _m.log(_m.sigmoid(x))
    if form == "reciprocal":            # nn.LogSigmoid: log(1 / (1 + exp(-x)))
        return _m.log(_m.reciprocal(_m.exp(_m.neg(x)) + _c(1, x)))
    return _m.neg(_m.softplus(_m.neg(x)))      # mint: -softplus(-x), stable for x << 0


def _logsigmoid_np(x, form="sigmoid"):
    with np.errstate(all="ignore"):
        if form == "softplus":
            return -np.logaddexp(0, -x)
        return np.log(1 / (1 + np.exp(-x)))


LOGSIGMOID = composite_elementwise("logsigmoid", 1, _logsigmoid, _logsigmoid_np, allowed=FL,
                                   attrs={"form": "sigmoid"})


def _tanhshrink(x):
    if not x.dtype.is_float:             # MindSpore's tanhshrink casts integers to float32
        x = _m.cast(x, dt.float32)
    return x - _m.tanh(x)


TANHSHRINK = composite_elementwise("tanhshrink", 1, _tanhshrink, lambda x: x - np.tanh(x),
                                   rule=FLOAT, allowed=NUM)

# MindSpore's FastGeLU kernel's form: x / (1 + exp(-1.702|x|)) * exp(0.851 (x - |x|)), which
# overflows nowhere; its gradient at 0 is 0.5
FAST_GELU = composite_elementwise(
    "fast_gelu", 1,
    lambda x: x / (_m.exp(_m.abs(x) * _c(-1.702, x)) + _c(1, x))
    * _m.exp((x - _m.abs(x)) * _c(0.851, x)),
    lambda x: x / (1 + np.exp(-1.702 * np.abs(x))) * np.exp(0.851 * (x - np.abs(x))),
    allowed=FL)


# ---------------------------------------------------------------- shrinks / threshold ----------
def _softshrink(x, lambd=0.5):
    lam = _c(lambd, x)
    # NaN gives 0 (both comparisons false), as MindSpore's SoftShrink; gradient 0 at +-lambd
    return _m.where(x > lam, x - lam, _m.where(x < _m.neg(lam), x + lam, _zero(x)))


SOFTSHRINK = composite_elementwise(
    "softshrink", 1, _softshrink,
    lambda x, lambd=0.5: np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0)),
    allowed=FL, attrs={"lambd": 0.5})


def _hardshrink(x, lambd=0.5):
    lam = _c(lambd, x)
    # 0 on [-lambd, lambd], x elsewhere (NaN kept, a negative lambd keeps every x), as
    # MindSpore's HShrink; gradient 0 at +-lambd
    inside = _m.logical_and(x >= _m.neg(lam), x <= lam)
    return _m.where(inside, _zero(x), x)


HARDSHRINK = composite_elementwise(
    "hardshrink", 1, _hardshrink,
    lambda x, lambd=0.5: np.where((x >= -lambd) & (x <= lambd), 0, x), allowed=FL,
    attrs={"lambd": 0.5})


def _threshold(x, threshold=0.0, value=0.0):
    # x where x > threshold (compared with promotion: an int x against 0.5), else value in
    # x's dtype (an int x truncates it), as MindSpore's select(greater(x, thr), x, fill(value))
    return _m.where(_m.greater(x, threshold), x, _c(value, x))


THRESHOLD = composite_elementwise(
    "threshold", 1, _threshold,
    lambda x, threshold=0.0, value=0.0: np.where(x > threshold, x,
                                                 np.array(value).astype(x.dtype)),
    allowed=NUM, attrs={"threshold": 0.0, "value": 0.0})


# ---------------------------------------------------------------- softmin / glu -----------------
def _float_input(name, x):
    if x.dtype not in FL:
        raise DTypeError(f"{name}: x must be a float tensor, got {x.dtype}; cast it with "
                         f".astype(ms.float32)")


def _axis(name, axis, ndim):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name}: axis must be an int, got {axis!r} ({type(axis).__name__})")
    if not -ndim <= axis < max(ndim, 0) or ndim == 0:
        raise ShapeError(f"{name}: axis {axis} is out of range for a {ndim}-D input; use an "
                         f"axis in [{-ndim}, {ndim})")
    return int(axis) % ndim


def _softmin_infer(x, axis=-1):
    _float_input("softmin", x)
    _axis("softmin", axis, len(x.shape))
    return Meta(tuple(x.shape), x.dtype)


def _softmin_ref(x, axis=-1):
    a = -x.astype(ref_array_dtype(dt.to_dtype(x.dtype)))
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype)


SOFTMIN = defop("softmin", infer=_softmin_infer, ref=_softmin_ref, attrs={"axis": -1}, arity=1,
                composite=lambda x, axis=-1: _nn.softmax(_m.neg(x), axis))


def _glu_infer(x, axis=-1):
    _float_input("glu", x)
    a = _axis("glu", axis, len(x.shape))
    if x.shape[a] % 2:
        raise ShapeError(f"glu: the length of axis {axis} ({x.shape[a]}, shape "
                         f"{tuple(x.shape)}) must be even: glu splits it in two halves")
    shape = tuple(x.shape)
    return Meta(shape[:a] + (shape[a] // 2,) + shape[a + 1:], x.dtype)


def _glu(x, axis=-1):
    a = axis % len(x.shape)
    first, second = _a.split(x, x.shape[a] // 2, a)
    return first * _m.sigmoid(second)


def _glu_ref(x, axis=-1):
    first, second = np.split(x.astype(ref_array_dtype(dt.to_dtype(x.dtype))), 2, axis=axis)
    return (first / (1 + np.exp(-second))).astype(x.dtype)


GLU = defop("glu", infer=_glu_infer, ref=_glu_ref, attrs={"axis": -1}, arity=1, composite=_glu)


# ---------------------------------------------------------------- functional API ----------------
def relu6(x):
    return apply(RELU6, x)


def hardswish(x):
    return apply(HARDSWISH, x)


def hardsigmoid(x):
    return apply(HARDSIGMOID, x)


def hardtanh(x, min_val=-1.0, max_val=1.0, bounds="shared"):
    return apply(HARDTANH, x, min_val=min_val, max_val=max_val, bounds=bounds)


def leaky_relu(x, alpha=0.2, form="maximum"):
    return apply(LEAKY_RELU, x, alpha=alpha, form=form)


def prelu(x, weight):
    return apply(PRELU, x, weight)


def elu(x, alpha=1.0, scale=1.0, input_scale=1.0, positive_at_zero=False, exact=True):
    return apply(ELU, x, alpha=alpha, scale=scale, input_scale=input_scale,
                 positive_at_zero=positive_at_zero, exact=exact)


def selu(x, positive_at_zero=True):
    """MindSpore's SeLU takes x = 0 in the linear branch (gradient scale at 0); PyTorch's
    (mint) in the exponential one (gradient scale * alpha)."""
    return elu(x, SELU_ALPHA, SELU_SCALE, 1.0, positive_at_zero, True)


def celu(x, alpha=1.0):
    return elu(x, alpha, 1.0, 1.0 / alpha, False, True)


def silu(x):
    return apply(SILU, x)


def mish(x):
    return apply(MISH, x)


def softsign(x):
    return apply(SOFTSIGN, x)


def logsigmoid(x, form="sigmoid"):
    return apply(LOGSIGMOID, x, form=form)


def tanhshrink(x):
    return apply(TANHSHRINK, x)


def fast_gelu(x):
    return apply(FAST_GELU, x)


def softshrink(x, lambd=0.5):
    return apply(SOFTSHRINK, x, lambd=lambd)


def hardshrink(x, lambd=0.5):
    return apply(HARDSHRINK, x, lambd=lambd)


def threshold(x, threshold=0.0, value=0.0):
    return apply(THRESHOLD, x, threshold=threshold, value=value)


def softmin(x, axis=-1):
    return apply(SOFTMIN, x, axis=axis)


def glu(x, axis=-1):
    return apply(GLU, x, axis=axis)


__all__ = ["RELU6", "HARDSWISH", "HARDSIGMOID", "HARDTANH", "LEAKY_RELU", "PRELU", "ELU", "SILU",
           "MISH", "SOFTSIGN", "LOGSIGMOID", "TANHSHRINK", "FAST_GELU", "SOFTSHRINK",
           "HARDSHRINK", "THRESHOLD", "SOFTMIN", "GLU", "SELU_ALPHA", "SELU_SCALE", "relu6",
           "hardswish", "hardsigmoid", "hardtanh", "leaky_relu", "prelu", "elu", "selu", "celu",
           "silu", "mish", "softsign", "logsigmoid", "tanhshrink", "fast_gelu", "softshrink",
           "hardshrink", "threshold", "softmin", "glu"]
