"""mindspore.ops' activation functions and Primitive classes over core/ops/activation.py, and
the Tensor methods that are these functions (Tensor.hardshrink, Tensor.soft_shrink).

Each function has MindSpore 2.10's signature and checks: its argument types (TypeError), the
dtypes MindSpore's CPU kernel takes (TypeError naming the dtype), and MindSpore's value rules
(elu's alpha must be 1.0, celu's alpha not 0, softshrink's lambd >= 0), then calls the one
declaration with MindSpore's attributes (hardtanh's shared gradient at a bound, leaky_relu's
maximum form, selu's x = 0 in the linear branch, elu's exp(x) - 1). The Primitive classes
(ReLU6, HSwish, ...) take MindSpore's attributes in __init__ and run the same function."""
from __future__ import annotations

import numbers

from ..core import dtype as _dt
from ..core.ops import activation as _A
from ..core.ops import array as _a
from ..core.ops import random as _rnd
from ..core.ops import math as _m
from ..core.primitive import Primitive
from ..core.tensor import Tensor
from .primitives import GeLU

_F16_32 = (_dt.float16, _dt.float32)
_SHRINK = (_dt.float16, _dt.bfloat16, _dt.float32)
_F16_32_64 = (_dt.float16, _dt.float32, _dt.float64)
_HARD = (_dt.int8, _dt.int16, _dt.int32, _dt.int64) + _F16_32_64


def _tensor(who, name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{who}', the '{name}' must be a Tensor, got {type(x).__name__}")
    return x


def _dtype(who, name, x, allowed):
    _tensor(who, name, x)
    if x.dtype not in allowed:
        raise TypeError(f"For '{who}', the dtype of '{name}' must be one of "
                        f"{', '.join(str(d) for d in allowed)}, but got {x.dtype}; cast it with "
                        f".astype(ms.float32)")
    return x


def _number(who, name, v, allow_bool=False):
    if (isinstance(v, bool) and not allow_bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"For '{who}', the type of '{name}' should be int or float, but got "
                        f"{v!r} ({type(v).__name__})")
    return float(v) if not isinstance(v, bool) else v


def _float_attr(who, name, v):
    """MindSpore's Elu/CeLU attributes are float only: an int is refused."""
    if not isinstance(v, float):
        raise TypeError(f"For '{who}', '{name}' must be a float, but got {v!r} "
                        f"({type(v).__name__}); e.g. {name}=1.0")
    return v


# ---------------------------------------------------------------- functions ---------------------
def relu6(x):
    """min(max(x, 0), 6); float16/float32 (MindSpore's ReLU6). Gradient 1 on (0, 6]."""
    return _A.relu6(_dtype("relu6", "x", x, _F16_32))


def hardswish(input):
    """x * relu6(x + 3) / 6 (integers rounded towards zero)."""
    return _A.hardswish(_dtype("hardswish", "input", input, _HARD))


def hardsigmoid(input):
    """relu6(x + 3) / 6 (integers rounded towards zero)."""
    return _A.hardsigmoid(_dtype("hardsigmoid", "input", input, _HARD))


def hardtanh(input, min_val=-1.0, max_val=1.0):
    """minimum(maximum(x, min_val), max_val) in x's dtype (max_val everywhere when min_val >
    max_val, as MindSpore's); the gradient at a bound is 0.5."""
    _tensor("hardtanh", "input", input)
    lo = _number("hardtanh", "min_val", min_val)
    hi = _number("hardtanh", "max_val", max_val)
    return _A.hardtanh(input, lo, hi, "shared")


def leaky_relu(input, alpha=0.2):
    """maximum(alpha * x, x) (minimum when alpha > 1), alpha cast to x's dtype first (an
    integer x truncates it); the gradient at 0 is (1 + alpha) / 2."""
    _tensor("leaky_relu", "input", input)
    return _A.leaky_relu(input, _number("leaky_relu", "alpha", alpha), "maximum")


def prelu(input, weight):
    """x where x > 0, weight * x elsewhere; weight 1-D of length 1 or input.shape[1]
    (float16/float32 both; weight is cast to input's dtype)."""
    _dtype("prelu", "input", input, _F16_32)
    _dtype("prelu", "weight", weight, _F16_32)
    return _A.prelu(input, weight)


def _elu_alpha(who, alpha):
    a = _float_attr(who, "alpha", alpha)
    if a != 1.0:
        raise ValueError(f"For '{who}', alpha must be 1.0 (MindSpore's Elu supports only 1.0), "
                         f"got {alpha}; use ops.celu(x, alpha) or mint.nn.functional.elu(x, "
                         f"alpha) for another alpha")
    return a


def elu(input_x, alpha=1.0):
    """x where x > 0, exp(x) - 1 elsewhere (MindSpore's Elu kernel: -0.0 gives +0.0)."""
    _dtype("elu", "input_x", input_x, _F16_32_64)
    return _A.elu(input_x, _elu_alpha("elu", alpha), exact=False)


def selu(input_x):
    """scale * (x where x >= 0, alpha * (exp(x) - 1) elsewhere), MindSpore's constants."""
    _dtype("selu", "input_x", input_x, _F16_32_64)
    return _A.selu(input_x, positive_at_zero=True)


def _celu_alpha(who, alpha):
    a = _float_attr(who, "alpha", alpha)
    if a == 0.0:
        raise ValueError(f"For '{who}', alpha must not be 0, got {alpha}")
    return a


def celu(x, alpha=1.0):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _dtype("celu", "x", x, _F16_32_64)
    return _A.celu(x, _celu_alpha("celu", alpha))


def silu(input):
    """x * sigmoid(x)."""
    return _A.silu(_dtype("silu", "input", input, _F16_32_64))


def mish(x):
    """x * tanh(softplus(x))."""
    return _A.mish(_dtype("mish", "x", x, _F16_32_64))


def softsign(x):
    """x / (1 + |x|)."""
    return _A.softsign(_dtype("softsign", "x", x, _F16_32_64))


def logsigmoid(x):
    """log(sigmoid(x)) (MindSpore's composition: -inf once sigmoid underflows)."""
    return _A.logsigmoid(_dtype("logsigmoid", "x", x, _F16_32_64), "sigmoid")


def tanhshrink(input):
    """x - tanh(x); an integer input is cast to float32 first."""
    x = _tensor("tanhshrink", "input", input)
    if x.dtype is _dt.bool_:
        raise TypeError("For 'tanhshrink', the input must be a numeric tensor, got Bool")
    return _A.tanhshrink(x)


def softmin(x, axis=-1, *, dtype=None):
    """softmax(-x, axis), x cast to `dtype` first when given."""
    _tensor("softmin", "x", x)
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"For 'softmin', the type of 'axis' should be int, but got {axis!r} "
                        f"({type(axis).__name__})")
    if dtype is not None:
        x = _m.cast(x, dtype)
    return _A.softmin(_dtype("softmin", "x", x, _F16_32_64), axis)


def _lambd(who, lambd, allow_bool):
    return _number(who, "lambd", lambd, allow_bool)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between (NaN gives 0)."""
    _dtype("softshrink", "input", input, _SHRINK)
    lam = _lambd("softshrink", lambd, False)
    if lam < 0:
        raise RuntimeError(f"For 'SoftShrink', the values for lambd should be greater or equal "
                           f"to 0, but got {lambd}")
    return _A.softshrink(input, float(lam))


def soft_shrink(input, lambd=0.5):
    """MindSpore's deprecated spelling of softshrink."""
    return softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    """0 on [-lambd, lambd], x elsewhere."""
    _dtype("hardshrink", "input", input, _SHRINK)
    return _A.hardshrink(input, float(_lambd("hardshrink", lambd, True)))


def _tensor_hardshrink(self, lambd=0.5):
    return hardshrink(self, lambd)


def _tensor_soft_shrink(self, lambd=0.5):
    return softshrink(self, lambd)


# Tensor.hardshrink / Tensor.soft_shrink are these functions, argument checks included
# (registered from here: core, which defines Tensor, imports nothing above it)
Tensor.hardshrink, Tensor.soft_shrink = _tensor_hardshrink, _tensor_soft_shrink


def fast_gelu(x):
    """x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|)); float16/float32."""
    return _A.fast_gelu(_dtype("fast_gelu", "x", x, _F16_32))


def threshold(input, thr, value):
    """x where x > thr, value (in x's dtype) elsewhere."""
    _tensor("threshold", "input", input)
    return _A.threshold(input, _number("threshold", "thr", thr),
                        _number("threshold", "value", value))


def glu(x, axis=-1):
    """a * sigmoid(b), a and b the halves of x along axis."""
    _tensor("glu", "x", x)
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"For 'glu', the type of 'axis' should be int, but got {axis!r}")
    return _A.glu(x, axis)


def swiglu(input, dim=-1):
    """silu(a) * b, a and b the halves of input along dim (MindSpore's SwiGLU)."""
    _dtype("swiglu", "input", input, _SHRINK)
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"For 'swiglu', dim must be an int, but got {dim!r}")
    nd = len(input.shape)
    if not -nd <= dim < nd:
        raise ValueError(f"For 'swiglu', dim {dim} is out of range for a {nd}-D input")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"For 'swiglu', the length of dim {dim} ({n}, shape "
                           f"{tuple(input.shape)}) must be divisible by 2")
    a, b = _a.split(input, n // 2, dim % nd)
    return _A.silu(a) * b


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3):
    """x where x > 0, 0 at 0, x * a where x < 0, a drawn uniformly from [lower, upper) per
    element on every call (MindSpore's ops.rrelu: random in training and inference alike)."""
    for name, v in (("upper", upper), ("lower", lower)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"For 'rrelu', '{name}' must be an int or a float, but got "
                            f"{type(v)}")
    if lower > upper:
        raise ValueError(f"For 'rrelu', the value of 'upper' must be greater than or equal to "
                         f"'lower', but got upper: {upper}, lower: {lower}.")
    _tensor("rrelu", "input", input)
    # MindSpore's composition: sign(x) split into its negative and positive parts
    s = _m.sign(input)
    neg, pos = _m.minimum(s, _m.zeros_like(s)), _m.maximum(s, _m.zeros_like(s))
    mask = _m.cast(_rnd.uniform(tuple(input.shape), float(lower), float(upper)), input.dtype)
    return (neg * mask * -1 + pos) * input


# ---------------------------------------------------------------- Primitive classes -------------
class _Activation(Primitive):
    """A Primitive class whose call runs the ops function above (its checks included)."""
    _op = None

    def __init__(self, **attrs):
        self.op = self._op
        self.attrs = ()
        self.name = type(self).__name__
        self._kw = attrs
        for k, v in attrs.items():
            setattr(self, k, v)

    def _run(self, *inputs):
        raise NotImplementedError

    def __call__(self, *inputs):
        return self._run(*inputs)

    def __repr__(self) -> str:
        a = ", ".join(f"{k}={v!r}" for k, v in self._kw.items())
        return f"Prim[{self.name}]({a})" if a else f"Prim[{self.name}]"


class ReLU6(_Activation):
    _op = _A.RELU6

    def __init__(self):
        super().__init__()

    def _run(self, x):
        return relu6(x)


class HSwish(_Activation):
    _op = _A.HARDSWISH

    def __init__(self):
        super().__init__()

    def _run(self, input_x):
        return hardswish(input_x)


class HSigmoid(_Activation):
    _op = _A.HARDSIGMOID

    def __init__(self):
        super().__init__()

    def _run(self, input_x):
        return hardsigmoid(input_x)


class Elu(_Activation):
    """Elu(alpha=1.0): MindSpore accepts any alpha here and refuses alpha != 1.0 when called."""
    _op = _A.ELU

    def __init__(self, alpha=1.0):
        super().__init__(alpha=alpha)

    def _run(self, input_x):
        return elu(input_x, self.alpha)


class CeLU(_Activation):
    _op = _A.ELU

    def __init__(self, alpha=1.0):
        super().__init__(alpha=alpha)

    def _run(self, input_x):
        return celu(input_x, self.alpha)


class SeLU(_Activation):
    _op = _A.ELU

    def __init__(self):
        super().__init__()

    def _run(self, input_x):
        return selu(input_x)


class PReLU(_Activation):
    _op = _A.PRELU

    def __init__(self):
        super().__init__()

    def _run(self, x, weight):
        return prelu(x, weight)


class Softsign(_Activation):
    _op = _A.SOFTSIGN

    def __init__(self):
        super().__init__()

    def _run(self, input_x):
        return softsign(input_x)


class Mish(_Activation):
    _op = _A.MISH

    def __init__(self):
        super().__init__()

    def _run(self, input_x):
        return mish(input_x)


class FastGeLU(_Activation):
    _op = _A.FAST_GELU

    def __init__(self):
        super().__init__()

    def _run(self, x):
        return fast_gelu(x)


FastGelu = type("FastGelu", (FastGeLU,), {"__doc__": "MindSpore's older spelling of FastGeLU."})


class Gelu(GeLU):
    """MindSpore's deprecated spelling of GeLU()."""

    def __init__(self):
        super().__init__()


class HShrink(_Activation):
    _op = _A.HARDSHRINK

    def __init__(self, lambd=0.5):
        if isinstance(lambd, str) or not isinstance(lambd, (numbers.Real, bool)):
            raise TypeError(f"For 'HShrink', the type of 'lambd' should be one of [bool, int, "
                            f"float], but got {type(lambd)}")
        super().__init__(lambd=lambd)

    def _run(self, input_x):
        return hardshrink(input_x, self.lambd)


class SoftShrink(_Activation):
    _op = _A.SOFTSHRINK

    def __init__(self, lambd=0.5):
        super().__init__(lambd=lambd)

    def _run(self, input_x):
        return softshrink(input_x, self.lambd)


class GLU(_Activation):
    _op = _A.GLU

    def __init__(self, axis=-1):
        super().__init__(axis=axis)

    def _run(self, x):
        return glu(x, self.axis)


__all__ = ["relu6", "hardswish", "hardsigmoid", "hardtanh", "leaky_relu", "prelu", "elu",
           "selu", "celu", "silu", "mish", "softsign", "logsigmoid", "tanhshrink", "softmin",
           "softshrink", "soft_shrink", "hardshrink", "fast_gelu", "threshold", "glu", "swiglu",
           "rrelu",
           "ReLU6", "HSwish", "HSigmoid", "Elu", "CeLU", "SeLU", "PReLU", "Softsign", "Mish",
           "FastGeLU", "FastGelu", "Gelu", "HShrink", "SoftShrink", "GLU"]
