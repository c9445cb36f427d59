"""mindspore.ops' N-d indexing, masking and contraction functions and Primitive classes:
gather_nd, scatter_nd/ScatterNd, tensor_scatter_add/sub/update and their classes,
masked_fill/MaskedFill, tril/Tril, triu/Triu, tril_indices/triu_indices and their classes,
einsum/Einsum, with MindSpore 2.10's argument rules, over the composites of
core/ops/array_nd.py."""
from __future__ import annotations

import numbers

import numpy as _np

from ..core import dtype as _dt
from ..core.ops import array_nd as _nd
from ..core.primitive import Primitive
from ..core.tensor import Tensor

__all__ = ["gather_nd", "scatter_nd", "tensor_scatter_add", "tensor_scatter_sub",
           "tensor_scatter_update", "masked_fill", "tril", "triu", "tril_indices",
           "triu_indices", "einsum", "ScatterNd", "TensorScatterAdd", "TensorScatterSub",
           "TensorScatterUpdate", "Einsum", "MaskedFill", "Tril", "Triu", "TrilIndices",
           "TriuIndices"]


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _check_index_tuples(who, indices, shape):
    """Eagerly, an index tuple outside `shape` named as MindSpore names it (in a graph the
    values are not known while it is built: gather's or scatter_add's range check refuses the
    tuple when it runs)."""
    from ..core.primitive import executor
    from ..core.pynative import EAGER
    if executor.current is not EAGER or indices.dtype not in (_dt.int32, _dt.int64) or \
            not indices.shape or not 1 <= indices.shape[-1] <= len(shape):
        return
    k = indices.shape[-1]
    tuples = indices.asnumpy().reshape(-1, k)
    bad = ((tuples < 0) | (tuples >= _np.asarray(shape[:k]))).any(axis=1)
    if bad.any():
        i = int(_np.argmax(bad))
        raise IndexError(f"For '{who}', the indices[{i}]: {tuples[i].tolist()} does not index "
                         f"into the shape {list(shape)}; each index must be in [0, dim)")


def gather_nd(input_x, indices):
    """The slices of input_x at the index tuples in the last axis of indices."""
    if not isinstance(indices, Tensor):
        indices = Tensor(_np.asarray(indices))
    _check_index_tuples("GatherNd", indices, tuple(input_x.shape))
    return _nd.gather_nd(input_x, indices)


def scatter_nd(indices, updates, shape):
    """A tensor of `shape` (a tuple of ints), zero but for updates added at the index tuples of
    indices (repeated tuples sum)."""
    if not isinstance(shape, tuple) or not all(_is_int(s) for s in shape):
        raise TypeError(f"For 'ScatterNd', shape must be a tuple of ints, got {shape!r}")
    _check_index_tuples("ScatterNd", indices, shape)
    return _nd.scatter_nd(indices, updates, shape)


class ScatterNd(Primitive):
    """`ScatterNd()(indices, updates, shape)`: ops.scatter_nd."""

    def __init__(self):
        self.name = "ScatterNd"

    def __call__(self, indices, updates, shape):
        return scatter_nd(indices, updates, shape)


def _scatter_args(indices, updates):
    if not isinstance(indices, Tensor):
        indices = Tensor(_np.asarray(indices))
    return indices, updates


def tensor_scatter_add(input_x, indices, updates):
    """input_x with updates added at the index tuples of indices (repeated tuples sum)."""
    indices, updates = _scatter_args(indices, updates)
    _check_index_tuples("TensorScatterAdd", indices, tuple(input_x.shape))
    return _nd.tensor_scatter_add(input_x, indices, updates)


def tensor_scatter_sub(input_x, indices, updates):
    """input_x with updates subtracted at the index tuples of indices (repeated tuples sum)."""
    from ..core.ops import math as _m
    indices, updates = _scatter_args(indices, updates)
    _check_index_tuples("TensorScatterSub", indices, tuple(input_x.shape))
    return _nd.tensor_scatter_add(input_x, indices, _m.neg(updates))


def tensor_scatter_update(input_x, indices, updates):
    """input_x with updates written at the index tuples of indices (a repeated tuple takes the
    last of its updates; each update's gradient is the output's gradient at its tuple)."""
    indices, updates = _scatter_args(indices, updates)
    _check_index_tuples("TensorScatterUpdate", indices, tuple(input_x.shape))
    return _nd.tensor_scatter_update(input_x, indices, updates)


def _scatter_class(name, fn):
    def __init__(self):
        self.name = name

    def __call__(self, input_x, indices, updates):
        return fn(input_x, indices, updates)
    return type(name, (Primitive,), {"__init__": __init__, "__call__": __call__,
                                     "__doc__": f"`{name}()(input_x, indices, updates)`: "
                                                f"ops.{fn.__name__}.", "__module__": __name__})


TensorScatterAdd = _scatter_class("TensorScatterAdd", tensor_scatter_add)
TensorScatterSub = _scatter_class("TensorScatterSub", tensor_scatter_sub)
TensorScatterUpdate = _scatter_class("TensorScatterUpdate", tensor_scatter_update)


def _kind(d: _dt.DType) -> str:
    return "bool" if d is _dt.bool_ else "float" if d.is_float else "int"


def masked_fill(input_x, mask, value):
    """input_x with value where mask (bool, broadcast) is true. value is a number or a 0-D
    tensor of input_x's kind (float, int or bool), cast to input_x's dtype; an int number also
    fills a float tensor."""
    if not isinstance(input_x, Tensor) or not isinstance(mask, Tensor):
        raise TypeError("For 'masked_fill', input_x and mask must be Tensors")
    kind = _kind(input_x.dtype)
    if isinstance(value, Tensor):
        if _kind(value.dtype) != kind:
            raise TypeError(f"For 'masked_fill', value of dtype {value.dtype} does not fit "
                            f"input_x of dtype {input_x.dtype}; cast value to {input_x.dtype}")
    elif (not isinstance(value, numbers.Number) or isinstance(value, bool) != (kind == "bool")
          or (isinstance(value, float) and kind != "float")):
        raise TypeError(f"For 'masked_fill', value {value!r} ({type(value).__name__}) does not "
                        f"fit input_x of dtype {input_x.dtype}; pass a value of its kind")
    else:
        value = Tensor(_np.asarray(value, dtype=input_x.dtype.np))
    return _nd.masked_fill(input_x, mask, value)


class MaskedFill(Primitive):
    """`MaskedFill()(input, mask, value)`: ops.masked_fill."""

    def __init__(self):
        self.name = "MaskedFill"

    def __call__(self, input, mask, value):
        return masked_fill(input, mask, value)


def _diagonal_arg(who, diagonal):
    if not _is_int(diagonal):
        raise TypeError(f"For '{who}', the type of 'diagonal' should be 'int', but got type "
                        f"'{type(diagonal).__name__}'.")
    return int(diagonal)


def tril(input, diagonal=0):
    """The lower triangle of the last two axes: column - row <= diagonal kept, the rest 0."""
    return _nd.tril(input, _diagonal_arg("Tril", diagonal))


def triu(input, diagonal=0):
    """The upper triangle of the last two axes: column - row >= diagonal kept, the rest 0."""
    return _nd.triu(input, _diagonal_arg("Triu", diagonal))


class Tril(Primitive):
    """`Tril(diagonal=0)(x)`: ops.tril."""

    def __init__(self, diagonal=0):
        self.diagonal, self.name = _diagonal_arg("Tril", diagonal), "Tril"

    def __call__(self, x):
        return _nd.tril(x, self.diagonal)


class Triu(Primitive):
    """`Triu(diagonal=0)(x)`: ops.triu."""

    def __init__(self, diagonal=0):
        self.diagonal, self.name = _diagonal_arg("Triu", diagonal), "Triu"

    def __call__(self, x):
        return _nd.triu(x, self.diagonal)


def _triangle_indices(who, row, col, offset, dtype, lower):
    for name, v in (("row", row), ("col", col), ("offset", offset)):
        if not _is_int(v):
            raise TypeError(f"For '{who}', {name} must be an int, got {v!r}")
    if row < 0 or col < 0:
        raise ValueError(f"For '{who}', row and col must be >= 0, got {row} and {col}")
    d = _dt.to_dtype(dtype)
    if d not in (_dt.int32, _dt.int64):
        raise TypeError(f"For '{who}', dtype must be int32 or int64, got {d}")
    r, c = _np.meshgrid(_np.arange(row), _np.arange(col), indexing="ij")
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return Tensor(_np.stack([r[keep], c[keep]]).astype(d.np))


def tril_indices(row, col, offset=0, *, dtype=_dt.int64):
    """The (2, N) row and column indices of the lower triangle (column - row <= offset) of a
    row x col matrix, row by row."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, True)


def triu_indices(row, col, offset=0, *, dtype=_dt.int64):
    """The (2, N) row and column indices of the upper triangle (column - row >= offset) of a
    row x col matrix, row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, False)


class TrilIndices(Primitive):
    """`TrilIndices(row, col, offset=0, dtype=ms.int32)()`: ops.tril_indices."""

    def __init__(self, row, col, offset=0, dtype=_dt.int32):
        self.row, self.col, self.offset, self.dtype = row, col, offset, dtype
        _triangle_indices("TrilIndices", row, col, offset, dtype, True)
        self.name = "TrilIndices"

    def __call__(self):
        return _triangle_indices(self.name, self.row, self.col, self.offset, self.dtype, True)


class TriuIndices(Primitive):
    """`TriuIndices(row, col, offset=0, dtype=ms.int32)()`: ops.triu_indices."""

    def __init__(self, row, col, offset=0, dtype=_dt.int32):
        self.row, self.col, self.offset, self.dtype = row, col, offset, dtype
        _triangle_indices("TriuIndices", row, col, offset, dtype, False)
        self.name = "TriuIndices"

    def __call__(self):
        return _triangle_indices(self.name, self.row, self.col, self.offset, self.dtype, False)


def _sublist_label(num):
    """MindSpore's sublist label: 0-25 are 'A'-'Z', 26-51 'a'-'z', Ellipsis '...'."""
    if num is Ellipsis:
        return "..."
    if _is_int(num) and 0 <= num < 26:
        return chr(num + 65)
    if _is_int(num) and 26 <= num < 52:
        return chr(num + 71)
    raise ValueError(f"For Einsum, the number in sublist should be in range [0, 52), but got "
                     f"{num!r}")


def _sublist_equation(first, rest):
    """einsum(op1, sublist1, op2, sublist2, ..., [sublist_out]) as (equation, operands)."""
    operands = (first,) + tuple(rest[1::2])
    subs = [rest[k] for k in range(0, len(rest), 2)]
    out = None
    if len(rest) % 2 == 0:                  # a trailing output sublist
        out = rest[-1]
        operands = (first,) + tuple(rest[1:-1:2])
        subs = [rest[k] for k in range(0, len(rest) - 1, 2)]
    eq = ",".join("".join(_sublist_label(n) for n in sub) for sub in subs)
    if out is not None:
        eq += "->" + "".join(_sublist_label(n) for n in out)
    return eq, operands


def _einsum(equation, operands):
    r = _nd.einsum(equation, *operands)
    # MindSpore's Einsum gives a full reduction as shape (1,) ("i->" of [1, 2, 4] is [7.])
    return _nd._a.reshape(r, (1,)) if r.shape == () else r


def einsum(equation, *operands):
    """Einstein summation of float operands of one dtype (numpy's equation rules; a full
    reduction has shape (1,), as MindSpore's Einsum documents), or the sublist form
    einsum(op1, sublist1, op2, sublist2, ..., [sublist_out]). MindSpore 2.10 has no CPU kernel
    for it; minispore runs it everywhere."""
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation(equation, operands)
    if not operands:
        raise ValueError("For einsum, the 'operands' must have at least one operand.")
    return _einsum(equation, operands)


class Einsum(Primitive):
    """`Einsum(equation)(operands)`: ops.einsum with the operands as one tuple."""

    def __init__(self, equation):
        if not isinstance(equation, str):
            raise TypeError(f"For 'Einsum', equation must be a str, got "
                            f"{type(equation).__name__}")
        self.equation, self.name = equation, "Einsum"

    def __call__(self, operands):
        return _einsum(self.equation, tuple(operands))
