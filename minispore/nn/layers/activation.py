"""Activation Cells (nn.ReLU, Sigmoid, Tanh, GELU, Softmax, Softmax2d, LogSoftmax, LeakyReLU,
PReLU, ReLU6, HSwish, HSigmoid, ELU, CELU, SeLU, SiLU, Mish, Softsign, Hardtanh, LogSigmoid,
Tanhshrink, Softmin, SoftShrink, HShrink, FastGelu, GLU, Threshold, RReLU, PReLUExt) and
`get_activation`, which maps the activation names accepted by e.g.
`nn.Dense(activation='relu')` to Cells.

Each Cell calls the ops function MindSpore's Cell calls (ops/activations.py), so its checks
and numbers are those of ops; the formulas are declared once in core/ops/activation.py.
Arguments MindSpore checks only when the Cell runs (LeakyReLU's alpha, ELU's alpha, ...)
are checked when it runs here too."""
from __future__ import annotations

import numbers

import numpy as np

from ...core import dtype as dt
from ...core.arg_checks import check_bool
from ...core.errors import MinisporeError
from ...core.ops import activation as _act
from ...core.ops import math as _m
from ...core.ops import nn as _nn
from ...core.tensor import Parameter, Tensor
from ...ops import activations as _ops
from ..cell import Cell


def _check_axis(cls: str, axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, tuple, list)):
        raise TypeError(f"{cls}: axis must be an int, got {axis!r}; e.g. axis=-1")
    return axis


class ReLU(Cell):
    """max(x, 0)."""

    def construct(self, x):
        return _m.relu(x)


class Sigmoid(Cell):
    """1 / (1 + exp(-x))."""

    def construct(self, x):
        return _m.sigmoid(x)


class Tanh(Cell):
    def construct(self, x):
        return _m.tanh(x)


class GELU(Cell):
    """GELU; MindSpore's default approximate=True uses the tanh approximation, False uses erf."""

    def __init__(self, approximate=True):
        super().__init__()
        check_bool("GELU", "approximate", approximate)
        self.approximate = "tanh" if approximate else "none"

    def construct(self, x):
        return _m.gelu(x, approximate=self.approximate)

    def extend_repr(self):
        return f"approximate={self.approximate == 'tanh'}"


class Softmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = _check_axis("Softmax", axis)

    def construct(self, x):
        return _nn.softmax(x, self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class LogSoftmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = _check_axis("LogSoftmax", axis)

    def construct(self, x):
        return _nn.log_softmax(x, self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class Softmax2d(Cell):
    """softmax over the channel axis (-3) of a (C, H, W) or (N, C, H, W) input."""

    def construct(self, x):
        if len(x.shape) not in (3, 4):
            raise ValueError(f"For 'Softmax2d', the in_shape must have 3 or 4 dims, but got "
                             f"{len(x.shape)}.")
        return _nn.softmax(x, -3)


class LeakyReLU(Cell):
    """maximum(alpha * x, x) (minimum when alpha > 1), as ops.leaky_relu."""

    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return _ops.leaky_relu(x, self.alpha)


def _prelu_weight(cls: str, channel, w):
    """MindSpore's nn.PReLU weight: a float (or np.float32) filled to (channel,), a list of
    `channel` floats, or a float16/float32 Tensor of shape (channel,)."""
    if isinstance(w, (float, np.float32)):
        return Tensor(np.full((channel,), w, np.float32))
    if isinstance(w, list):
        if len(w) != channel:
            raise ValueError(f"For '{cls}', the length of 'w' must be equal to the 'channel' "
                             f"when the 'w' is a list, but got the length of 'w': {len(w)}, "
                             f"the 'channel': {channel}.")
        for v in w:
            if not isinstance(v, (float, np.float32)):
                raise ValueError(f"For '{cls}', all elements in 'w' must be float when the "
                                 f"'w' is a list, but got {v!r}.")
        return Tensor(np.array(w, np.float32))
    if isinstance(w, Tensor):
        if w.dtype not in (dt.float16, dt.float32):
            raise ValueError(f"For '{cls}', the dtype of 'w' must be float16 or float32 when "
                             f"the 'w' is a tensor, but got {w.dtype}.")
        if len(w.shape) != 1 or w.shape[0] != channel:
            raise ValueError(f"For '{cls}', the dimension of 'w' must be 1, and the elements "
                             f"number should be equal to the 'channel' when the 'w' is a "
                             f"tensor, but got 'w' shape {tuple(w.shape)}, the 'channel' "
                             f"{channel}.")
        return Tensor(w.asnumpy())
    raise TypeError(f"For '{cls}', the 'w' only supported float, list and tensor, but got "
                    f"{type(w).__name__}.")


class PReLU(Cell):
    """x where x > 0, w * x elsewhere, w the Parameter 'a' of shape (channel,) broadcast over
    axis 1 (the channels of NCHW; a 0-d or 1-D input has one channel), cast to x's dtype."""

    def __init__(self, channel=1, w=0.25):
        super().__init__()
        if isinstance(channel, bool) or not isinstance(channel, numbers.Integral):
            raise TypeError(f"For 'PReLU', the 'channel' must be int, but got {channel!r} "
                            f"({type(channel).__name__})")
        if channel <= 0:
            raise ValueError(f"For 'PReLU', the 'channel' must be int and must > 0, but got "
                             f"'{channel}' with type '{type(channel).__name__}'.")
        self.w = Parameter(_prelu_weight("PReLU", int(channel), w), name="a")

    def construct(self, x):
        return _ops.prelu(x, _m.cast(self.w, x.dtype))


class PReLUExt(Cell):
    """PReLU with PyTorch's arguments: Parameter 'weight' of shape (num_parameters,) filled
    with `init`, in `dtype` (float32 when None)."""

    def __init__(self, num_parameters=1, init=0.25, dtype=None):
        super().__init__()
        d = dt.float32 if dtype is None else dt.to_dtype(dtype)
        self.weight = Parameter(Tensor(np.full((num_parameters,), init, np.float32)
                                       .astype(d.np)), name="weight")

    def construct(self, input):
        return _ops.prelu(input, self.weight)


def _simple_cell(name: str, fn, doc: str):
    """A Cell with no arguments whose construct is `fn(x)`."""
    def construct(self, x):
        return fn(x)
    return type(name, (Cell,), {"construct": construct, "__doc__": doc,
                                "__module__": __name__, "__qualname__": name})


ReLU6 = _simple_cell("ReLU6", _ops.relu6, "min(max(x, 0), 6) (ops.relu6).")
HSwish = _simple_cell("HSwish", _ops.hardswish, "x * relu6(x + 3) / 6 (ops.hardswish).")
HSigmoid = _simple_cell("HSigmoid", _ops.hardsigmoid, "relu6(x + 3) / 6 (ops.hardsigmoid).")
SiLU = _simple_cell("SiLU", _ops.silu, "x * sigmoid(x) (ops.silu).")
Mish = _simple_cell("Mish", _ops.mish, "x * tanh(softplus(x)) (ops.mish).")
Softsign = _simple_cell("Softsign", _ops.softsign, "x / (1 + |x|) (ops.softsign).")
SeLU = _simple_cell("SeLU", _ops.selu, "MindSpore's SeLU (ops.selu).")
Tanhshrink = _simple_cell("Tanhshrink", _ops.tanhshrink, "x - tanh(x) (ops.tanhshrink).")
FastGelu = _simple_cell("FastGelu", _ops.fast_gelu, "MindSpore's FastGeLU (ops.fast_gelu).")


def _log_sigmoid(x):
    # nn.LogSigmoid's own composition, log(1 / (1 + exp(-x))): numbers (and gradients for a
    # large x) differ from ops.logsigmoid's log(sigmoid(x)) in the last bits
    _ops._dtype("LogSigmoid", "input_x", x, _ops._F16_32_64)
    return _act.logsigmoid(x, "reciprocal")


LogSigmoid = _simple_cell("LogSigmoid", _log_sigmoid, "log(1 / (1 + exp(-x))).")


class ELU(Cell):
    """ops.Elu(alpha): MindSpore's Elu takes alpha=1.0 only, refused when the Cell runs."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return _ops.elu(x, self.alpha)


class CELU(Cell):
    """ops.CeLU(alpha): alpha a float other than 0, checked when the Cell runs."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return _ops.celu(x, self.alpha)


class Hardtanh(Cell):
    """ops.hardtanh(x, min_val, max_val); min_val must be below max_val."""

    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        self.min_val, self.max_val = min_val, max_val
        if self.min_val >= self.max_val:
            raise ValueError(f"For Hardtanh, min_val should be less than max_val,but got "
                             f"{self.min_val} and {self.max_val}")

    def construct(self, x):
        return _ops.hardtanh(x, self.min_val, self.max_val)


class Softmin(Cell):
    """softmax(-x, axis)."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return _ops.softmin(x, self.axis)


class SoftShrink(Cell):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.softshrink = _ops.SoftShrink(lambd)

    def construct(self, input):
        return self.softshrink(input)


class HShrink(Cell):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.hshrink = _ops.HShrink(lambd)

    def construct(self, input):
        return self.hshrink(input)


class GLU(Cell):
    """a * sigmoid(b), a and b the halves of x along axis."""

    def __init__(self, axis=-1):
        super().__init__()
        self.dim = axis

    def construct(self, x):
        return _ops.glu(x, self.dim)


class Threshold(Cell):
    """x where x > threshold, value elsewhere."""

    def __init__(self, threshold, value):
        super().__init__()
        self.threshold, self.value = threshold, value

    def construct(self, input_x):
        return _ops.threshold(input_x, self.threshold, self.value)


class RReLU(Cell):
    """x where x > 0, x * a where x < 0, a drawn from U[lower, upper) per element on every
    call (MindSpore's RReLU draws in training and inference alike)."""

    def __init__(self, lower=1 / 8, upper=1 / 3):
        super().__init__()
        for name, v in (("upper", upper), ("lower", lower)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"For 'RReLU', the type of '{name}' should be int or float, "
                                f"but got {type(v).__name__}")
        if lower > upper:
            raise ValueError(f"For RReLU, the value of 'upper' must be greater than or equal "
                             f"to 'lower', but got upper: {upper}, lower: {lower}. ")
        self.lower, self.upper = lower, upper

    def construct(self, x):
        return _ops.rrelu(x, self.lower, self.upper)


class UnknownActivationError(MinisporeError, ValueError, KeyError):
    """An activation name that is not known (MindSpore raises KeyError for it)."""

    def __str__(self):
        return str(self.args[0])


# MindSpore 2.10's nn.get_activation table (its keys, looked up case-insensitively here; MindSpore's
# 'logsoftmaxExt' and 'preluExt' are 'logsoftmaxext' and 'preluext'), and 'log_softmax'
_ACTIVATIONS = {"relu": ReLU, "sigmoid": Sigmoid, "tanh": Tanh, "gelu": GELU, "softmax": Softmax,
                "softmax2d": Softmax2d, "logsoftmax": LogSoftmax, "log_softmax": LogSoftmax,
                "softmin": Softmin, "relu6": ReLU6, "rrelu": RReLU, "silu": SiLU,
                "tanhshrink": Tanhshrink, "hardtanh": Hardtanh, "fast_gelu": FastGelu, "elu": ELU,
                "softsign": Softsign, "prelu": PReLU, "preluext": PReLUExt,
                "leakyrelu": LeakyReLU, "hswish": HSwish, "hsigmoid": HSigmoid,
                "logsigmoid": LogSigmoid, "softshrink": SoftShrink, "hshrink": HShrink,
                "threshold": Threshold, "mish": Mish}


def get_activation(name, prim_name=None):
    """A new activation Cell for `name` (case-insensitive), a Cell as it is, None for None.
    `prim_name` names the caller in the error messages (as MindSpore's)."""
    who = prim_name or "get_activation"
    if name is None or isinstance(name, Cell):
        return name
    if isinstance(name, str):
        cls = _ACTIVATIONS.get(name.lower())
        if cls is not None:
            return cls()
        raise UnknownActivationError(f"{who}: unknown activation {name!r}; use one of "
                       f"{sorted(_ACTIVATIONS)}, a Cell or None")
    raise TypeError(f"{who}: activation must be a str, a Cell or None, got "
                    f"{type(name).__name__}")

__all__ = ["ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "Softmax2d", "LogSoftmax", "LeakyReLU",
           "PReLU", "PReLUExt", "ReLU6", "HSwish", "HSigmoid", "SiLU", "Mish", "Softsign", "SeLU",
           "Tanhshrink", "FastGelu", "LogSigmoid", "ELU", "CELU", "Hardtanh", "Softmin",
           "SoftShrink", "HShrink", "GLU", "Threshold", "RReLU", "get_activation"]
