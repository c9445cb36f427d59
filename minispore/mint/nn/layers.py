"""mint.nn layers with Parameters and the pooling Cells, PyTorch's names, arguments, defaults
and default initializations (MindSpore 2.10's mint.nn):

- Linear / Conv1d / Conv2d / Conv3d: weight HeUniform(negative_slope=sqrt(5)) (bound
  1 / sqrt(fan_in)), bias Uniform(1 / sqrt(fan_in)); Parameters 'weight', 'bias'.
- BatchNorm1d/2d/3d: PyTorch's momentum (running = (1 - momentum) * running + momentum * batch,
  the unbiased batch variance), Parameters 'weight', 'bias', 'running_mean', 'running_var' and
  'num_batches_tracked' (int64, counted in training; momentum=None averages cumulatively with
  it, PyNative only).
- LayerNorm, GroupNorm: 'weight' ones, 'bias' zeros. Embedding: 'weight' Normal(1, 0), the
  padding_idx row zero."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...common.initializer import HeUniform, Normal, Uniform, initializer
from ...core import dtype as dt
from ...core.ops.state import assign
from ...core.tensor import Parameter, Tensor
from ...nn.cell import Cell
from . import functional as F
from ._resample import _ints


def _dtype(dtype):
    return dt.float32 if dtype is None else dt.to_dtype(dtype)


def _pos_int(who, name, v):
    v = F._check_int(who, name, v)
    if v <= 0:
        raise ValueError(f"{who}: {name} must be a positive int, got {v}")
    return v


def _check_bool(who, name, v):
    if not isinstance(v, bool):
        raise TypeError(f"{who}: {name} must be a bool, got {v!r}")
    return v


class Linear(Cell):
    """input @ weight.T + bias, weight (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None,
                 dtype=None):
        super().__init__()
        self.in_features = _pos_int("Linear", "in_features", in_features)
        self.out_features = _pos_int("Linear", "out_features", out_features)
        self.has_bias = _check_bool("Linear", "bias", bias)
        d = _dtype(dtype)
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight = Parameter(initializer(weight_init, (self.out_features, self.in_features),
                                            d), name="weight")
        self.bias = None
        if self.has_bias:
            if bias_init is None:
                bias_init = Uniform(1 / math.sqrt(self.in_features))
            self.bias = Parameter(initializer(bias_init, (self.out_features,), d), name="bias")

    def construct(self, input):
        return F.linear(input, self.weight, self.bias)

    def extend_repr(self):
        return (f"input_features={self.in_features}, output_features={self.out_features}"
                + (f", has_bias={self.has_bias}" if self.has_bias else ""))


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Cell):
    n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", dtype=None):
        super().__init__()
        who, n = type(self).__name__, self.n
        self.in_channels = _pos_int(who, "in_channels", in_channels)
        self.out_channels = _pos_int(who, "out_channels", out_channels)
        self.groups = _pos_int(who, "groups", groups)
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"{who}: in_channels={in_channels} and out_channels={out_channels} "
                             f"must be divisible by groups={groups}")
        self.kernel_size = _ints(who, "kernel_size", kernel_size, n)
        self.stride = _ints(who, "stride", stride, n)
        self.dilation = _ints(who, "dilation", dilation, n)
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"{who}: padding must be 'valid', 'same', an int or a tuple, "
                                 f"got {padding!r}")
            if padding == "same" and self.stride != (1,) * n:
                raise ValueError(f"{who}: padding='same' needs stride=1 (as PyTorch)")
            self.padding = padding
        else:
            self.padding = _ints(who, "padding", padding, n, low=0)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{who}: padding_mode must be one of {_PADDING_MODES}, got "
                             f"{padding_mode!r}")
        if padding_mode != "zeros" and isinstance(padding, str):
            raise NotImplementedError(f"{who}: padding={padding!r} with padding_mode="
                                      f"{padding_mode!r} is not supported by minispore; pass "
                                      f"explicit padding")
        self.padding_mode = padding_mode
        d = _dtype(dtype)
        shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = Parameter(initializer(HeUniform(math.sqrt(5)), shape, d), name="weight")
        self.bias = None
        if _check_bool(who, "bias", bias):
            fan_in = shape[1] * int(np.prod(self.kernel_size))
            self.bias = Parameter(initializer(Uniform(1 / math.sqrt(fan_in)), (shape[0],), d),
                                  name="bias")

    def _conv2d(self, x, weight, stride, padding, dilation):
        if self.padding_mode != "zeros":
            pads = []
            for p in reversed(padding):
                pads += [p, p]
            x = F.pad(x, tuple(pads), self.padding_mode)
            padding = 0
        return F.conv2d(x, weight, self.bias, stride, padding, dilation, self.groups)

    def extend_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W)."""
    n = 2

    def construct(self, input):
        return self._conv2d(input, self.weight, self.stride, self.padding, self.dilation)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) (F.conv1d: the conv1d composite)."""
    n = 1

    def construct(self, input):
        x, padding = input, self.padding
        if self.padding_mode != "zeros":
            x, padding = F.pad(x, (padding[0], padding[0]), self.padding_mode), 0
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""
    n = 3

    def construct(self, input):
        x, padding = input, self.padding
        if self.padding_mode != "zeros":
            pads = []
            for p in reversed(padding):
                pads += [p, p]
            x, padding = F.pad(x, tuple(pads), self.padding_mode), 0
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class _BatchNorm(Cell):
    ranks: tuple = (2, 3)

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__()
        who = type(self).__name__
        self.num_features = _pos_int(who, "num_features", num_features)
        self.eps = F._check_real(who, "eps", eps)
        if momentum is not None:
            momentum = F._check_real(who, "momentum", momentum)
        self.momentum = momentum
        self.affine = _check_bool(who, "affine", affine)
        self.track_running_stats = _check_bool(who, "track_running_stats", track_running_stats)
        d = _dtype(dtype)
        self.dtype = d
        c = (self.num_features,)
        self.weight = self.bias = None
        if self.affine:
            self.weight = Parameter(Tensor(np.ones(c, d.np)), name="weight")
            self.bias = Parameter(Tensor(np.zeros(c, d.np)), name="bias")
        self.running_mean = self.running_var = self.num_batches_tracked = None
        if self.track_running_stats:
            self.running_mean = Parameter(Tensor(np.zeros(c, d.np)), name="running_mean",
                                          requires_grad=False)
            self.running_var = Parameter(Tensor(np.ones(c, d.np)), name="running_var",
                                         requires_grad=False)
            self.num_batches_tracked = Parameter(Tensor(np.array(0, np.int64)),
                                                 name="num_batches_tracked",
                                                 requires_grad=False)

    def construct(self, input):
        who = type(self).__name__
        if len(input.shape) not in self.ranks:
            raise ValueError(f"{who}: expected a {' or '.join(f'{r}-D' for r in self.ranks)} "
                             f"input, got shape {tuple(input.shape)}")
        if input.shape[1] != self.num_features:
            raise ValueError(f"{who}: the input of shape {tuple(input.shape)} has "
                             f"{input.shape[1]} channels, num_features={self.num_features}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            count = assign(self.num_batches_tracked, self.num_batches_tracked + 1)
            if self.momentum is None:
                from ...core.graph.builder import is_symbolic
                if is_symbolic(count):
                    raise NotImplementedError(f"{who}: momentum=None (a cumulative average) is "
                                              f"not supported in GRAPH_MODE; pass a float")
                factor = 1.0 / float(count.asnumpy())
        if self.training or not self.track_running_stats:
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight,
                                self.bias, True, factor, self.eps)
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            False, factor, self.eps)

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs."""
    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs."""
    ranks = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs."""
    ranks = (5,)


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over inputs of rank >= 2 whose batch statistics are those of the whole
    process group; minispore runs one process, where they are the local batch's (as
    MindSpore's SyncBatchNorm with a group of size 1)."""
    ranks = tuple(range(2, 9))

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)
        from ...communication import GlobalComm, get_group_size
        self.process_group = process_group if process_group else GlobalComm.WORLD_COMM_GROUP
        self.world_size = get_group_size(self.process_group)
        if self.world_size != 1:
            raise NotImplementedError(f"SyncBatchNorm: a process group of {self.world_size} "
                                      f"processes is not supported by minispore (one process)")


class LayerNorm(Cell):
    """Normalise over the trailing normalized_shape axes; weight ones, bias zeros."""

    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape:
            raise TypeError(f"LayerNorm: normalized_shape must be an int or a non-empty tuple of "
                            f"ints, got {normalized_shape!r}")
        self.normalized_shape = tuple(_pos_int("LayerNorm", "normalized_shape", v)
                                      for v in normalized_shape)
        self.eps = F._check_real("LayerNorm", "eps", eps)
        self.elementwise_affine = _check_bool("LayerNorm", "elementwise_affine",
                                              elementwise_affine)
        _check_bool("LayerNorm", "bias", bias)
        d = _dtype(dtype)
        self.weight = self.bias = None
        if self.elementwise_affine:
            self.weight = Parameter(Tensor(np.ones(self.normalized_shape, d.np)), name="weight")
            if bias:
                self.bias = Parameter(Tensor(np.zeros(self.normalized_shape, d.np)),
                                      name="bias")

    def construct(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extend_repr(self):
        return (f"normalized_shape={self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Cell):
    """Normalise (N, C, *) over groups of C / num_groups channels; weight ones, bias zeros
    (trainable when affine)."""

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, dtype=None):
        super().__init__()
        self.num_groups = _pos_int("GroupNorm", "num_groups", num_groups)
        self.num_channels = _pos_int("GroupNorm", "num_channels", num_channels)
        if self.num_channels % self.num_groups:
            raise ValueError(f"GroupNorm: num_channels={num_channels} must be divisible by "
                             f"num_groups={num_groups}")
        self.eps = F._check_real("GroupNorm", "eps", eps)
        self.affine = _check_bool("GroupNorm", "affine", affine)
        d = _dtype(dtype)
        c = (self.num_channels,)
        self.weight = Parameter(Tensor(np.ones(c, d.np)), name="weight",
                                requires_grad=self.affine)
        self.bias = Parameter(Tensor(np.zeros(c, d.np)), name="bias", requires_grad=self.affine)

    def construct(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extend_repr(self):
        return (f"num_groups={self.num_groups}, num_channels={self.num_channels}, "
                f"eps={self.eps}, affine={self.affine}")


class Embedding(Cell):
    """Rows of weight (num_embeddings, embedding_dim) at the input indices; weight starts
    Normal(sigma=1, mean=0) with the padding_idx row zero, or is `_weight`."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, dtype=None):
        super().__init__()
        self.scale_grad_by_freq = _check_bool("Embedding", "scale_grad_by_freq",
                                              scale_grad_by_freq)
        self.max_norm = None if max_norm is None else F._check_real("Embedding", "max_norm",
                                                                     max_norm)
        F._not_supported("Embedding", "sparse", sparse, False)
        self.norm_type = F._check_real("Embedding", "norm_type", norm_type)
        self.num_embeddings = _pos_int("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = _pos_int("Embedding", "embedding_dim", embedding_dim)
        if padding_idx is not None:
            p = F._check_int("Embedding", "padding_idx", padding_idx)
            if not -self.num_embeddings <= p < self.num_embeddings:
                raise ValueError(f"Embedding: padding_idx must be in [-{num_embeddings}, "
                                 f"{num_embeddings}), got {padding_idx}")
            padding_idx = p % self.num_embeddings
        self.padding_idx = padding_idx
        shape = (self.num_embeddings, self.embedding_dim)
        if _weight is None:
            w = initializer(Normal(1.0, 0.0), shape, _dtype(dtype)).asnumpy().copy()
            if padding_idx is not None:
                w[padding_idx] = 0
            _weight = Tensor(w)
        elif tuple(_weight.shape) != shape:
            raise ValueError(f"Embedding: _weight has shape {tuple(_weight.shape)}, expected "
                             f"{shape}")
        self.weight = Parameter(_weight, name="weight",
                                requires_grad=not _check_bool("Embedding", "_freeze", _freeze))

    def construct(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq)

    def extend_repr(self):
        return (f"{self.num_embeddings}, {self.embedding_dim}, "
                f"padding_idx={self.padding_idx}")


class MaxPool2d(Cell):
    def __init__(self, kernel_size=1, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation = dilation
        self.return_indices = _check_bool("MaxPool2d", "return_indices", return_indices)
        self.ceil_mode = _check_bool("MaxPool2d", "ceil_mode", ceil_mode)

    def construct(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class MaxUnpool2d(Cell):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def construct(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class AvgPool2d(Cell):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode = _check_bool("AvgPool2d", "ceil_mode", ceil_mode)
        self.count_include_pad = _check_bool("AvgPool2d", "count_include_pad",
                                             count_include_pad)
        self.divisor_override = divisor_override

    def construct(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(Cell):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode = _check_bool("AvgPool3d", "ceil_mode", ceil_mode)
        self.count_include_pad = _check_bool("AvgPool3d", "count_include_pad",
                                             count_include_pad)
        self.divisor_override = divisor_override

    def construct(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool1d(Cell):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode = _check_bool("AvgPool1d", "ceil_mode", ceil_mode)
        self.count_include_pad = _check_bool("AvgPool1d", "count_include_pad",
                                             count_include_pad)

    def construct(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool2d(Cell):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool1d(Cell):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)
