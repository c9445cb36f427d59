"""mindspore.common.initializer: Initializer classes and `initializer(init, shape, dtype)`.

Owns the weight initializations used by nn layers (Dense's and Conv2d's defaults are
HeUniform(negative_slope=sqrt(5)) for the weight and Uniform(1/sqrt(fan_in)) for the bias, as in
MindSpore 2.x). Unlike MindSpore, which creates the Tensor lazily, `initializer` returns a Tensor
holding the values at once.

Random draws come from numpy's global random state (`np.random`), as MindSpore's initializers do:
`ms.set_seed(s)` seeds numpy too, so the same seed gives the same initial weights. Fan-in/fan-out
follow MindSpore/PyTorch: for a shape (out, in, *k): fan_in = in * prod(k), fan_out = out * prod(k).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..core import dtype as dt
from ..core.tensor import Tensor, register_initializer

__all__ = ["Initializer", "initializer", "Normal", "Uniform", "Zero", "One", "Constant",
           "TruncatedNormal", "XavierUniform", "XavierNormal", "HeUniform", "HeNormal"]


def _rng():
    """numpy's global random state (seeded by ms.set_seed / np.random.seed)."""
    return np.random.mtrand._rand


def _fans(shape, who: str):
    if len(shape) < 2:
        raise ValueError(f"{who}: fan_in and fan_out can not be computed for a shape with fewer "
                         f"than 2 dimensions, got shape {tuple(shape)}; use Normal, Uniform, Zero "
                         f"or One for 0-d and 1-d tensors")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity: str, param=None) -> float:
    """torch/MindSpore calculate_gain."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, numbers.Number):
            raise TypeError(f"HeUniform/HeNormal: negative_slope must be a number, got {slope!r}")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"initializer: unsupported nonlinearity {nonlinearity!r}; use one of "
                     f"{list(linear) + ['tanh', 'relu', 'leaky_relu', 'selu']}")


class Initializer:
    """Base class: `__call__(shape) -> float64 ndarray` (the caller casts to the dtype); a
    subclass defines `_init(shape)`.

    A MindSpore-style subclass works too: `super().__init__(**kwargs)` keeps the keywords, and
    `_initialize(arr)` fills a float64 array of the shape in place; called with an array
    (MindSpore's `init(arr)`), it fills that array."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._seed = None

    def _init(self, shape) -> np.ndarray:
        if type(self)._initialize is Initializer._initialize:
            raise NotImplementedError(f"{type(self).__name__}: an Initializer subclass must "
                                      f"define _init(shape) or MindSpore's _initialize(arr)")
        arr = np.zeros(shape, np.float64)
        self._initialize(arr)
        return arr

    def _initialize(self, arr) -> None:
        raise NotImplementedError(f"{type(self).__name__}: _initialize(arr) must be overridden")

    def __call__(self, shape) -> np.ndarray:
        if isinstance(shape, np.ndarray):
            shape[...] = self._init(shape.shape)
            return shape
        return np.asarray(self._init(tuple(int(s) for s in shape)), np.float64)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


class Zero(Initializer):
    def _init(self, shape):
        return np.zeros(shape)


class One(Initializer):
    def _init(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value):
        self.value = value

    def _init(self, shape):
        return np.full(shape, self.value, np.float64)


class Normal(Initializer):
    """N(mean, sigma^2); MindSpore's defaults sigma=0.01, mean=0.0."""

    def __init__(self, sigma=0.01, mean=0.0):
        self.sigma, self.mean = sigma, mean

    def _init(self, shape):
        return _rng().normal(self.mean, self.sigma, shape)


class Uniform(Initializer):
    """U(-scale, scale); MindSpore's default scale=0.07."""

    def __init__(self, scale=0.07):
        self.scale = scale

    def _init(self, shape):
        return _rng().uniform(-self.scale, self.scale, shape)


class TruncatedNormal(Initializer):
    """N(mean, sigma^2) restricted to the absolute interval [a, b], as MindSpore 2.x: `a` and `b`
    are bounds on the values, not multiples of sigma (TruncatedNormal(0.5, a=-0.1, b=0.1) stays
    within +-0.1; the default [-2, 2] leaves TruncatedNormal(0.02) practically untruncated).
    Drawn by the inverse CDF over [cdf(a), cdf(b)], so a narrow or far-out interval costs the
    same as a wide one."""

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        if not a < b:
            raise ValueError(f"TruncatedNormal: a={a} must be less than b={b}")
        if not sigma > 0:
            raise ValueError(f"TruncatedNormal: sigma must be positive, got {sigma}")
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _init(self, shape):
        from scipy.special import ndtr, ndtri
        lo, hi = ndtr((self.a - self.mean) / self.sigma), ndtr((self.b - self.mean) / self.sigma)
        if not hi > lo:
            raise ValueError(f"TruncatedNormal: [a, b] = [{self.a}, {self.b}] lies too far in the "
                             f"tail of N({self.mean}, {self.sigma}^2) to sample; move the bounds "
                             f"towards the mean or widen sigma")
        z = ndtri(_rng().uniform(lo, hi, shape))
        return np.clip(self.mean + self.sigma * z, self.a, self.b)


class XavierUniform(Initializer):
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        self.gain = gain

    def _init(self, shape):
        fan_in, fan_out = _fans(shape, "XavierUniform")
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _rng().uniform(-bound, bound, shape)


class XavierNormal(Initializer):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        self.gain = gain

    def _init(self, shape):
        fan_in, fan_out = _fans(shape, "XavierNormal")
        return _rng().normal(0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)), shape)


def _he_std(self, shape, who):
    if self.mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{who}: mode must be 'fan_in' or 'fan_out', got {self.mode!r}")
    fan_in, fan_out = _fans(shape, who)
    fan = fan_in if self.mode == "fan_in" else fan_out
    return _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


class HeUniform(Initializer):
    """Kaiming uniform: U(-b, b), b = sqrt(3) * gain(nonlinearity, negative_slope) / sqrt(fan)."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _init(self, shape):
        bound = math.sqrt(3.0) * _he_std(self, shape, "HeUniform")
        return _rng().uniform(-bound, bound, shape)


class HeNormal(Initializer):
    """Kaiming normal: N(0, std^2), std = gain(nonlinearity, negative_slope) / sqrt(fan)."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _init(self, shape):
        return _rng().normal(0.0, _he_std(self, shape, "HeNormal"), shape)


_ALIASES = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal, "uniform": Uniform,
    "truncatednormal": TruncatedNormal, "truncated_normal": TruncatedNormal,
    "xavieruniform": XavierUniform, "xavier_uniform": XavierUniform,
    "xaviernormal": XavierNormal, "xavier_normal": XavierNormal,
    "heuniform": HeUniform, "he_uniform": HeUniform, "henormal": HeNormal, "he_normal": HeNormal,
}


def initializer(init, shape=None, dtype=dt.float32) -> Tensor:
    """A Tensor of `shape` and `dtype` initialized by `init`: an Initializer, its name as a string
    ('normal', 'zeros', 'he_uniform', ...), a number (every element), a Tensor or numpy array
    (whose shape must equal `shape` when it is given)."""
    dtype = dt.to_dtype(dtype)
    if isinstance(init, (Tensor, np.ndarray)):
        arr = init.asnumpy() if isinstance(init, Tensor) else np.asarray(init)
        if shape is not None and tuple(arr.shape) != _shape_tuple(shape):
            raise ValueError(f"initializer: the init value has shape {tuple(arr.shape)} but "
                             f"shape={_shape_tuple(shape)} was requested; pass an array of that "
                             f"shape or omit shape")
        return Tensor(arr.astype(dtype.np))
    if shape is None:
        raise ValueError(f"initializer: shape is required when init is {init!r}; pass e.g. "
                         f"shape=(out, in)")
    shape = _shape_tuple(shape)
    if isinstance(init, str):
        cls = _ALIASES.get(init.lower())
        if cls is None:
            raise ValueError(f"initializer: unknown init {init!r}; use one of "
                             f"{sorted(set(_ALIASES))}, an Initializer, a number or a Tensor")
        init = cls()
    elif isinstance(init, type) and issubclass(init, Initializer):
        init = init()
    elif isinstance(init, numbers.Number) and not isinstance(init, bool):
        init = Constant(init)
    if not isinstance(init, Initializer):
        raise TypeError(f"initializer: init must be a str, Initializer, number, Tensor or numpy "
                        f"array, got {type(init).__name__}")
    return Tensor(init(shape).astype(dtype.np))


def _shape_tuple(shape):
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    try:
        out = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"initializer: shape must be an int or a tuple of ints, "
                        f"got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"initializer: shape {out} has a negative dimension")
    return out


register_initializer(initializer)
