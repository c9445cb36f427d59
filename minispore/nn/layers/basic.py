"""Basic layers: nn.Dense, nn.Flatten, nn.Identity, nn.Embedding (MindSpore 2.x names, arguments
and default initializations), and `init_param`, the weight_init/bias_init resolution that every
layer with Parameters shares (a name, an Initializer, a number, a Tensor or a numpy array)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...common.initializer import HeUniform, Initializer, Normal, Uniform, initializer
from ...core import dtype as dt
from ...core.arg_checks import check_bool
from ...core.errors import ShapeError, at_user_site
from ...core.ops import array as _a
from ...core.ops import index_ops as _ix
from ...core.ops import linalg as _la
from ...core.ops import math as _m
from ...core.tensor import Parameter, Tensor
from ..cell import Cell
from .activation import get_activation


def check_positive_int(who: str, name: str, value, fix: str = "") -> int:
    """`value` as an int > 0, else a TypeError/ValueError naming the argument and value."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: {name} must be a positive int, got {value!r} "
                        f"({type(value).__name__}){fix}")
    if value <= 0:
        raise ValueError(f"{who}: {name} must be a positive int, got {value}{fix}")
    return int(value)


def init_param(who: str, argname: str, init, shape, dtype, name: str) -> Parameter:
    """A Parameter of `shape` from init; a Tensor/array of another shape is a ValueError."""
    if isinstance(init, (Tensor, np.ndarray)):
        got = tuple(init.shape)
        if got != tuple(shape):
            raise ValueError(f"{who}: {argname} has shape {got}, expected {tuple(shape)}; pass "
                             f"a Tensor of that shape or an initializer such as 'normal'")
    elif not isinstance(init, (str, Initializer, numbers.Number)) and not (
            isinstance(init, type) and issubclass(init, Initializer)):
        raise TypeError(f"{who}: {argname} must be a str, Initializer, number, Tensor or numpy "
                        f"array, got {type(init).__name__}")
    return Parameter(initializer(init, shape, dtype), name=name)


class Dense(Cell):
    """y = activation(x @ weight.T + bias), weight (out_channels, in_channels). Inputs of rank
    other than 2 are flattened to (-1, in_channels) and reshaped back, as in MindSpore.
    Defaults: weight HeUniform(negative_slope=sqrt(5)), bias Uniform(1/sqrt(in_channels))."""

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None,
                 has_bias=True, activation=None, dtype=dt.float32):
        super().__init__()
        self.in_channels = check_positive_int("Dense", "in_channels", in_channels)
        self.out_channels = check_positive_int("Dense", "out_channels", out_channels)
        self.has_bias = check_bool("Dense", "has_bias", has_bias)
        dtype = dt.to_dtype(dtype)
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight = init_param("Dense", "weight_init", weight_init,
                                 (self.out_channels, self.in_channels), dtype, "weight")
        self.bias = None
        if self.has_bias:
            if bias_init is None:
                bias_init = Uniform(1 / math.sqrt(self.in_channels))
            self.bias = init_param("Dense", "bias_init", bias_init, (self.out_channels,), dtype,
                                   "bias")
        self.activation = get_activation(activation, "Dense")
        self.activation_flag = self.activation is not None

    def construct(self, x):
        shape = x.shape
        if not shape or (isinstance(shape[-1], int) and 0 <= shape[-1] != self.in_channels):
            raise at_user_site(ShapeError(
                f"Dense: the input has shape {tuple(shape)}, whose last dim "
                f"{shape[-1] if shape else '(none: a scalar)'} must equal in_channels="
                f"{self.in_channels}; pass inputs with {self.in_channels} features in the last "
                f"dim, or build the layer as Dense({shape[-1] if shape else 1}, "
                f"{self.out_channels})"))
        if len(shape) != 2:
            x = _a.reshape(x, (-1, shape[-1]))
        x = _la.matmul(x, self.weight, transpose_b=True)     # MindSpore: MatMul(transpose_b)
        if self.has_bias:
            x = x + self.bias
        if self.activation_flag:
            x = self.activation(x)
        if len(shape) != 2:
            x = _a.reshape(x, shape[:-1] + (self.out_channels,))
        return x

    def extend_repr(self):
        s = (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
             f"has_bias={self.has_bias}")
        if self.activation_flag:
            s += f", activation={self.activation}"
        return s


class Flatten(Cell):
    """Merge dims start_dim..end_dim (MindSpore 2.x: Flatten(start_dim=1, end_dim=-1))."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        for n, v in (("start_dim", start_dim), ("end_dim", end_dim)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"Flatten: {n} must be an int, got {v!r}")
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def construct(self, x):
        return _a.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


class Identity(Cell):
    def construct(self, x):
        return x


class Embedding(Cell):
    """A lookup table (vocab_size, embedding_size): output shape = ids.shape + (embedding_size,).
    embedding_table defaults to 'normal' (Normal(sigma=0.01)) in float32, or is the given
    initializer/Tensor (a Tensor keeps its dtype); the padding_idx row starts at 0; ids may be
    any integer dtype. use_one_hot computes one_hot(ids) @ table instead of a gather (same
    numbers).

    `dtype` (float32 by default, any number type) is what MindSpore 2.x's Embedding uses it for:
    the dtype of the one-hot matrix's on/off values. It does not change the table, so with
    use_one_hot it must equal the table's dtype (MindSpore's MatMul refuses mixed operands;
    this refuses them at construction)."""

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=dt.float32, padding_idx=None):
        super().__init__()
        self.vocab_size = check_positive_int("Embedding", "vocab_size", vocab_size)
        self.embedding_size = check_positive_int("Embedding", "embedding_size", embedding_size)
        self.use_one_hot = check_bool("Embedding", "use_one_hot", use_one_hot)
        if not isinstance(dtype, dt.DType) or dtype not in dt.NUMERIC:
            raise TypeError(f"Embedding: dtype must be a number type (mindspore.float32, "
                            f"mindspore.float16, mindspore.int32, ...), got {dtype!r}")
        self.dtype = dtype
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral) \
                    or not -self.vocab_size <= padding_idx < self.vocab_size:
                raise ValueError(f"Embedding: padding_idx must be None or an int in "
                                 f"[-{self.vocab_size}, {self.vocab_size}), got {padding_idx!r}")
            padding_idx = int(padding_idx) % self.vocab_size
        self.padding_idx = padding_idx
        if isinstance(embedding_table, str) and embedding_table == "normal":
            embedding_table = Normal()
        table = init_param("Embedding", "embedding_table", embedding_table,
                           (self.vocab_size, self.embedding_size),
                           embedding_table.dtype if isinstance(embedding_table, Tensor)
                           else dt.float32, "embedding_table")
        if padding_idx is not None:
            arr = table.asnumpy().copy()
            arr[padding_idx] = 0
            table = Tensor(arr)
        self.embedding_table = Parameter(table, name="embedding_table")
        if self.use_one_hot and self.embedding_table.dtype is not self.dtype:
            raise TypeError(f"Embedding: use_one_hot multiplies a one-hot matrix of dtype "
                            f"{self.dtype} (the dtype argument) by the embedding table of dtype "
                            f"{self.embedding_table.dtype}; MindSpore's MatMul needs equal "
                            f"dtypes: pass dtype={self.embedding_table.dtype} or a table of "
                            f"dtype {self.dtype}")

    def construct(self, ids):
        if self.use_one_hot:
            oh = _a.one_hot(ids, self.vocab_size, 1.0, 0.0, -1)
            if oh.dtype is not self.dtype:
                oh = _m.cast(oh, self.dtype)
            return _la.matmul(oh, self.embedding_table)
        return _ix.gather(self.embedding_table, ids, 0)

    def extend_repr(self):
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, padding_idx={self.padding_idx}")

__all__ = ["Dense", "Embedding", "Flatten", "Identity"]
