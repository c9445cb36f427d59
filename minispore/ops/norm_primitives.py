"""mindspore.ops' normalisation Primitive classes: LayerNorm and BatchNorm, views of the
layer_norm and batch_norm declarations (core/ops/norm.py) with MindSpore's output tuples, and
L2Normalize (ops/pooling_norm.py re-exports them, so `ops.LayerNorm` finds them).

- `LayerNorm(begin_norm_axis, begin_params_axis, epsilon)(x, gamma, beta)` -> (y, mean,
  variance): mean and the biased variance over the normalised axes, kept as size-1 axes.
- `BatchNorm(is_training, epsilon, momentum)(x, scale, bias, mean, variance)` -> 5 tensors, as
  MindSpore's CPU kernel gives them: y, then zeros of shape (C,) twice, then (training) the
  batch mean and biased batch variance, or (inference) zeros. In training the moving mean and
  variance, when Parameters, become (1 - momentum) * moving + momentum * batch (the unbiased
  batch variance), as ops.batch_norm does.
- `L2Normalize(axis=0, epsilon=1e-4)(x)`: x / sqrt(max(sum(x ** 2, axis), epsilon)).
"""
from __future__ import annotations

import numbers

from ..core.ops import array as _a
from ..core.ops import math as _m
from ..core.ops import norm as _nm
from ..core.ops import reduce as _r
from ..core.primitive import Primitive, apply

__all__ = ["LayerNorm", "BatchNorm", "L2Normalize"]


def _float(who, what, v, lo=0.0, hi=None):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{who}: '{what}' must be a float, got {v!r}")
    v = float(v)
    if v < lo or (hi is not None and v > hi):
        raise ValueError(f"{who}: '{what}' must be in [{lo}, {hi if hi is not None else 'inf'}], "
                         f"got {v!r}")
    return v


def _axis(who, what, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{who}: '{what}' must be an int, got {v!r}")
    return int(v)


class LayerNorm(Primitive):
    """`LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(x, gamma, beta)` ->
    (y, mean, variance)."""

    def __init__(self, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7):
        self.name = "LayerNorm"
        self.begin_norm_axis = _axis(self.name, "begin_norm_axis", begin_norm_axis)
        self.begin_params_axis = _axis(self.name, "begin_params_axis", begin_params_axis)
        self.epsilon = _float(self.name, "epsilon", epsilon)

    def __call__(self, x, gamma, beta):
        y = apply(_nm.LAYER_NORM, x, gamma, beta, begin_norm_axis=self.begin_norm_axis,
                  begin_params_axis=self.begin_params_axis, epsilon=self.epsilon)
        nd = len(x.shape)
        axes = tuple(range(self.begin_norm_axis % nd, nd))
        mean = _r.mean(x, axes, True)
        xc = _m.sub(x, mean)
        return y, mean, _r.mean(_m.mul(xc, xc), axes, True)

    def __repr__(self) -> str:
        return "Prim[LayerNorm]"


class BatchNorm(Primitive):
    """`BatchNorm(is_training=False, epsilon=1e-5, momentum=0.1)(x, scale, bias, mean,
    variance)` -> (y, zeros, zeros, batch mean or zeros, batch variance or zeros); see the
    module docstring."""

    def __init__(self, is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW"):
        self.name = "BatchNorm"
        if not isinstance(is_training, bool):
            raise TypeError(f"BatchNorm: is_training must be a bool, got {is_training!r}")
        self.is_training = is_training
        self.epsilon = _float(self.name, "epsilon", epsilon, 0.0, 1.0)
        self.momentum = _float(self.name, "momentum", momentum, 0.0, 1.0)
        if data_format != "NCHW":
            raise ValueError(f"BatchNorm: data_format={data_format!r} is not supported; use "
                             f"'NCHW' (channels on axis 1)")
        self.data_format = data_format

    def __call__(self, x, scale, bias, mean, variance):
        y = _nm.batch_norm(x, mean, variance, scale, bias, self.is_training, self.momentum,
                           self.epsilon)
        C = x.shape[1]
        zeros = _a.zeros((C,), scale.dtype)
        if not self.is_training:
            return y, zeros, zeros, zeros, zeros
        axes = _nm.bn_axes(len(x.shape))
        mu = _r.mean(x, axes, True)
        xc = _m.sub(x, mu)
        var = _r.mean(_m.mul(xc, xc), axes)
        return (y, zeros, _a.zeros((C,), scale.dtype),
                _m.cast(_a.reshape(mu, (C,)), scale.dtype), _m.cast(var, scale.dtype))

    def __repr__(self) -> str:
        return "Prim[BatchNorm]"


class L2Normalize(Primitive):
    """`L2Normalize(axis=0, epsilon=1e-4)(x)`: x / sqrt(max(sum(x ** 2 over axis),
    epsilon)); axis an int or a 1-tuple (MindSpore takes one axis)."""

    def __init__(self, axis=0, epsilon=1e-4):
        self.name = "L2Normalize"
        if isinstance(axis, (tuple, list)):
            if len(axis) != 1:
                raise TypeError(f"L2Normalize: axis must be an int or a tuple of 1 int (MindSpore "
                                f"takes one axis), got {axis!r}")
            axis = axis[0]
        self.axis = _axis(self.name, "axis", axis)
        self.epsilon = _float(self.name, "epsilon", epsilon)

    def __call__(self, x):
        nd = len(x.shape)
        if not -nd <= self.axis < max(nd, 1):
            raise ValueError(f"L2Normalize: axis={self.axis} is out of range for an input of "
                             f"shape {tuple(x.shape)}")
        sq = _r.sum(_m.mul(x, x), self.axis % max(nd, 1), True)
        return _m.mul(x, _m.rsqrt(_m.maximum(sq, self.epsilon)))

    def __repr__(self) -> str:
        return "Prim[L2Normalize]"
