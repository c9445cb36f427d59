"""Normalisation and regularisation Cells: nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
nn.LayerNorm, nn.GroupNorm, nn.InstanceNorm1d/2d/3d and nn.Dropout (MindSpore 2.x names,
arguments, defaults and default initializations).

Train/eval behaviour follows `Cell.set_train`: BatchNorm normalises with the batch statistics and
updates its moving statistics in training, and with the moving statistics in eval (unless
use_batch_statistics forces one or the other); Dropout is the identity in eval. MindSpore's
momentum convention is kept: moving = momentum * moving + (1 - momentum) * batch (default 0.9),
so ops.batch_norm (PyTorch's convention) receives 1 - momentum, which the `momentum` attribute
holds, as MindSpore's does (its repr shows the argument); the batch variance entering the
moving variance is the unbiased one, as MindSpore's GPU/Ascend kernels use. The `if
self.training:` branches are resolved when a graph compiles, and the compile cache keys on the
`training` flags, so switching set_train after a GRAPH_MODE call runs the other phase's graph.

BatchNorm3d is MindSpore's: a BatchNorm2d child named `bn2d` (so its Parameters are
bn2d.gamma, bn2d.moving_mean, ...) over the (N, C, D * H, W) view. GroupNorm and the
InstanceNorms are the group_norm composite (core/ops/pool_nd.py; an InstanceNorm is GroupNorm
with one channel per group). MindSpore's InstanceNorm always normalises with each instance's
own statistics, in training and in eval, and never writes its moving_mean / moving_variance
Parameters (named 'mean' and 'variance'; its GPU kernel updates copies of them), so they stay
at their initial zeros / ones here too.
"""
from __future__ import annotations

import numbers
import warnings

from ...core import dtype as dt
from ...core.ops import array as _a
from ...core.ops import norm as _nm
from ...core.ops import pool_nd as _pn
from ...core.ops import random as _rnd
from ...core.primitive import apply
from ..cell import Cell
from ...core.arg_checks import check_bool
from ...core.tensor import Tensor
from .basic import check_positive_int, init_param


def _check_float(who: str, name: str, value, lo, hi, lo_open=False, hi_open=False,
                 fix: str = ""):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{who}: {name} must be a float, got {value!r} "
                        f"({type(value).__name__}){fix}")
    v = float(value)
    if v < lo or v > hi or (lo_open and v == lo) or (hi_open and v == hi):
        rng = f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
        raise ValueError(f"{who}: {name} must be in {rng}, got {value!r}{fix}")
    return v


class _BatchNorm(Cell):
    """Shared BatchNorm: Parameters gamma, beta (trainable when affine) and moving_mean,
    moving_variance (never trainable) of shape (num_features,)."""
    who = "BatchNorm"
    ranks: tuple = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW", dtype=dt.float32):
        super().__init__()
        who = self.who
        self.num_features = check_positive_int(who, "num_features", num_features)
        self.eps = _check_float(who, "eps", eps, 0.0, float("inf"), lo_open=True)
        momentum = _check_float(
            who, "momentum", momentum, 0.0, 1.0,
            fix="; MindSpore's momentum weighs the old moving statistics (moving = momentum * "
                "moving + (1 - momentum) * batch): PyTorch's momentum=0.1 is momentum=0.9 here")
        self.affine = check_bool(who, "affine", affine)
        if use_batch_statistics is not None:
            use_batch_statistics = check_bool(who, "use_batch_statistics", use_batch_statistics)
        self.use_batch_statistics = use_batch_statistics
        if data_format != "NCHW":
            raise ValueError(f"{who}: data_format={data_format!r} is not supported; use 'NCHW' "
                             f"(channels on axis 1)")
        self.data_format = data_format
        dtype = dt.to_dtype(dtype)
        shape = (self.num_features,)
        self.moving_mean = init_param(who, "moving_mean_init", moving_mean_init, shape, dtype,
                                      "moving_mean")
        self.moving_mean.requires_grad = False
        self.moving_variance = init_param(who, "moving_var_init", moving_var_init, shape, dtype,
                                          "moving_variance")
        self.moving_variance.requires_grad = False
        self.gamma = init_param(who, "gamma_init", gamma_init, shape, dtype, "gamma")
        self.gamma.requires_grad = self.affine
        self.beta = init_param(who, "beta_init", beta_init, shape, dtype, "beta")
        self.beta.requires_grad = self.affine
        # the attribute holds 1 - momentum (ops.batch_norm's convention), as MindSpore's does
        self.momentum = self._op_momentum = 1.0 - momentum

    def construct(self, x):
        _check_bn_input(self.who, x.shape, self.ranks, self.num_features)
        if self.use_batch_statistics is None:
            if self.training:
                return _nm.batch_norm(x, self.moving_mean, self.moving_variance, self.gamma,
                                      self.beta, True, self._op_momentum, self.eps)
            return _nm.batch_norm(x, self.moving_mean, self.moving_variance, self.gamma,
                                  self.beta, False, self._op_momentum, self.eps)
        return _nm.batch_norm(x, self.moving_mean, self.moving_variance, self.gamma, self.beta,
                              self.use_batch_statistics, self._op_momentum, self.eps)

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, "
                f"momentum={1.0 - self.momentum}, "
                f"gamma={self.gamma.name}, beta={self.beta.name}, "
                f"moving_mean={self.moving_mean.name}, "
                f"moving_variance={self.moving_variance.name}")


def _check_bn_input(who, shape, ranks, c):
    if len(shape) not in ranks:
        want = " or ".join(f"{r}-D" for r in ranks)
        raise ValueError(f"{who}: the input must be {want} (N, C{', ...' if max(ranks) > 2 else ''}"
                         f"), got shape {tuple(shape)}"
                         + ("; use BatchNorm1d for (N, C) inputs" if who == "BatchNorm2d" else
                            "; use BatchNorm2d for (N, C, H, W) inputs"))
    if shape[1] != c:
        raise ValueError(f"{who}: the input of shape {tuple(shape)} has {shape[1]} channels "
                         f"(axis 1) but num_features={c}; make num_features={shape[1]}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs over every axis but C."""
    who = "BatchNorm1d"
    ranks = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW", dtype=dt.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init,
                         moving_mean_init, moving_var_init, use_batch_statistics, data_format,
                         dtype)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs over N, H and W."""
    who = "BatchNorm2d"
    ranks = (4,)


class LayerNorm(Cell):
    """Normalise over the axes from begin_norm_axis on; gamma and beta (shape normalized_shape)
    scale and shift the axes from begin_params_axis on. MindSpore's default epsilon is 1e-7."""

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1,
                 gamma_init="ones", beta_init="zeros", epsilon=1e-7, dtype=dt.float32):
        super().__init__()
        who = "LayerNorm"
        if not isinstance(normalized_shape, (tuple, list)) or not all(
                isinstance(d, numbers.Integral) and not isinstance(d, bool) and d > 0
                for d in normalized_shape):
            raise TypeError(f"LayerNorm: normalized_shape must be a tuple or list of positive "
                            f"ints, got {normalized_shape!r}; e.g. LayerNorm((64,)) for the "
                            f"last axis of size 64")
        self.normalized_shape = tuple(int(d) for d in normalized_shape)
        for name, v in (("begin_norm_axis", begin_norm_axis),
                        ("begin_params_axis", begin_params_axis)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{who}: {name} must be an int, got {v!r}; e.g. -1 for the "
                                f"last axis")
        self.begin_norm_axis = int(begin_norm_axis)
        self.begin_params_axis = int(begin_params_axis)
        self.epsilon = _check_float(who, "epsilon", epsilon, 0.0, float("inf"), lo_open=True)
        dtype = dt.to_dtype(dtype)
        self.gamma = init_param(who, "gamma_init", gamma_init, self.normalized_shape, dtype,
                                "gamma")
        self.beta = init_param(who, "beta_init", beta_init, self.normalized_shape, dtype, "beta")

    def construct(self, x):
        return apply(_nm.LAYER_NORM, x, self.gamma, self.beta,
                     begin_norm_axis=self.begin_norm_axis,
                     begin_params_axis=self.begin_params_axis, epsilon=self.epsilon)

    def extend_repr(self):
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis="
                f"{self.begin_norm_axis}, begin_params_axis={self.begin_params_axis}, "
                f"gamma={self.gamma.name}, beta={self.beta.name}")


class Dropout(Cell):
    """Zero each element with probability p and scale the rest by 1 / (1 - p) in training; the
    identity in eval. `p` (MindSpore 2.x) wins over the deprecated `keep_prob` (= 1 - p, 0.5 by
    default as in MindSpore, so neither gives p = 0.5; a keep_prob other than 0.5 warns). The
    mask comes from the global random state that ms.set_seed seeds."""

    def __init__(self, keep_prob=0.5, p=None, dtype=dt.float32):
        super().__init__()
        if p is not None:
            p = _check_float("Dropout", "p", p, 0.0, 1.0, hi_open=True,
                             fix="; p is the probability of dropping an element, e.g. p=0.5")
        else:
            if keep_prob != 0.5:
                warnings.warn("Dropout: keep_prob is deprecated (as in MindSpore 2.x); use p = 1 "
                              "- keep_prob", DeprecationWarning, stacklevel=2)
            keep_prob = _check_float("Dropout", "keep_prob", keep_prob, 0.0, 1.0, lo_open=True,
                                     fix="; keep_prob is the probability of keeping an element; "
                                         "prefer p = 1 - keep_prob")
            p = 1.0 - keep_prob
        self.p = p
        self.keep_prob = 1.0 - p
        self.dtype = dt.to_dtype(dtype)

    def construct(self, x):
        if not self.training or self.p == 0.0:
            return x
        return _rnd.dropout(x, self.p, True)

    def extend_repr(self):
        return f"p={self.p}"


class BatchNorm3d(Cell):
    """Batch normalisation of (N, C, D, H, W) inputs over N, D, H and W: MindSpore's BatchNorm3d,
    a BatchNorm2d child `bn2d` over the (N, C, D * H, W) view (its arguments, defaults and
    momentum convention)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, dtype=dt.float32):
        super().__init__()
        self.bn2d = BatchNorm2d(num_features, eps, momentum, affine, gamma_init, beta_init,
                                moving_mean_init, moving_var_init, use_batch_statistics,
                                "NCHW", dtype)

    def construct(self, x):
        shape = tuple(x.shape)
        if len(shape) != 5:
            raise ValueError(f"BatchNorm3d: the input must be 5-D (N, C, D, H, W), got shape "
                             f"{shape}; use BatchNorm2d for (N, C, H, W) inputs")
        y = self.bn2d(_a.reshape(x, (shape[0], shape[1], shape[2] * shape[3], shape[4])))
        return _a.reshape(y, shape)


class GroupNorm(Cell):
    """Normalise each group of num_channels / num_groups channels (and all trailing axes) of an
    (N, C, ...) input with its own mean and biased variance, then scale and shift per channel
    by gamma and beta (shape (num_channels,), trainable when affine)."""

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=dt.float32):
        super().__init__()
        who = "GroupNorm"
        self.num_groups = check_positive_int(who, "num_groups", num_groups)
        self.num_channels = check_positive_int(who, "num_channels", num_channels)
        if self.num_channels % self.num_groups:
            raise ValueError(f"GroupNorm: num_channels={num_channels} must be divisible by "
                             f"num_groups={num_groups}")
        self.eps = _check_float(who, "eps", eps, 0.0, float("inf"), lo_open=True)
        self.affine = check_bool(who, "affine", affine)
        dtype = dt.to_dtype(dtype)
        shape = (self.num_channels,)
        self.gamma = init_param(who, "gamma_init", gamma_init, shape, dtype, "gamma")
        self.gamma.requires_grad = self.affine
        self.beta = init_param(who, "beta_init", beta_init, shape, dtype, "beta")
        self.beta.requires_grad = self.affine

    def construct(self, x):
        if len(x.shape) < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: the input must be (N, C, ...) with C = num_channels = "
                             f"{self.num_channels}, got shape {tuple(x.shape)}")
        return _pn.group_norm(x, self.num_groups, self.gamma, self.beta, self.eps)

    def extend_repr(self):
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}"


class _InstanceNorm(Cell):
    """Normalise each (sample, channel) plane with its own mean and biased variance, then scale
    and shift per channel by gamma and beta; in training and eval alike (see the module
    docstring for the moving statistics)."""
    who = "InstanceNorm"
    rank = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=dt.float32):
        super().__init__()
        who = self.who
        self.num_features = check_positive_int(who, "num_features", num_features)
        self.eps = _check_float(who, "eps", eps, 0.0, float("inf"), lo_open=True)
        self.momentum = _check_float(who, "momentum", momentum, 0.0, 1.0)
        self.affine = check_bool(who, "affine", affine)
        for name, init in (("gamma_init", gamma_init), ("beta_init", beta_init)):
            if isinstance(init, Tensor) and init.dtype is not dt.float32:
                raise TypeError(f"{who}: {name} must be a float32 Tensor (as MindSpore "
                                f"requires), got {init.dtype}; use .astype(ms.float32)")
        dtype = dt.to_dtype(dtype)
        shape = (self.num_features,)
        self.moving_mean = init_param(who, "moving_mean", "zeros", shape, dtype, "mean")
        self.moving_mean.requires_grad = False
        self.moving_variance = init_param(who, "moving_variance", "ones", shape, dtype,
                                          "variance")
        self.moving_variance.requires_grad = False
        self.gamma = init_param(who, "gamma_init", gamma_init, shape, dtype, "gamma")
        self.gamma.requires_grad = self.affine
        self.beta = init_param(who, "beta_init", beta_init, shape, dtype, "beta")
        self.beta.requires_grad = self.affine

    def construct(self, x):
        if len(x.shape) != self.rank:
            raise ValueError(f"{self.who}: the input must be {self.rank}-D (N, C"
                             f"{', ...' if self.rank > 2 else ''}), got shape "
                             f"{tuple(x.shape)}")
        if x.shape[1] != self.num_features:
            raise ValueError(f"{self.who}: the input of shape {tuple(x.shape)} has "
                             f"{x.shape[1]} channels (axis 1) but num_features="
                             f"{self.num_features}; make num_features={x.shape[1]}")
        return _pn.group_norm(x, self.num_features, self.gamma, self.beta, self.eps)

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma.name}, beta={self.beta.name}, "
                f"moving_mean={self.moving_mean.name}, "
                f"moving_variance={self.moving_variance.name}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) inputs."""
    who = "InstanceNorm1d"
    rank = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) inputs."""
    who = "InstanceNorm2d"
    rank = 4


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) inputs."""
    who = "InstanceNorm3d"
    rank = 5


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "Dropout"]
