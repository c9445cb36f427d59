"""mint's shape and indexing functions with PyTorch's meanings: `transpose(input, dim0, dim1)`
swaps two axes, `flatten` merges all axes by default, `gather(input, dim, index)` and
`scatter(input, dim, index, src)` are PyTorch's elementwise gather/scatter (composed as a
gather/scatter over the flattened input), `split` takes a chunk size or section sizes."""
from __future__ import annotations

import numpy as np

from ..core import dtype as _dt
from ..core import tensor_methods_extra as _X
from ..core.ops import array as _A
from ..core.ops import index_ops as _I
from ..core.ops import math as _M
from ..core.overloads import is_int
from ..core.tensor import Tensor

__all__ = ["reshape", "permute", "transpose", "swapaxes", "t", "flatten", "ravel", "squeeze",
           "unsqueeze", "cat", "concat", "stack", "hstack", "dstack", "split", "chunk", "unbind",
           "narrow", "select", "tile", "broadcast_to", "flip", "roll", "tril", "triu", "meshgrid",
           "repeat_interleave", "gather", "index_select", "take", "scatter", "scatter_add",
           "masked_select", "nonzero", "where", "item", "clone", "diag", "trace", "diff", "cross"]


def _ax(name, dim, ndim):
    return _A.normalize_axis(f"mint.{name}", dim, ndim)


def reshape(input, shape):
    """input's elements in shape (one -1 is inferred)."""
    return _A.reshape(input, shape)


def permute(input, dims):
    """The axes reordered by dims."""
    return _A.transpose(input, dims)


def transpose(input, dim0, dim1):
    """input with axes dim0 and dim1 swapped."""
    n = input.ndim
    a, b = _ax("transpose", dim0, n), _ax("transpose", dim1, n)
    perm = list(range(n))
    perm[a], perm[b] = perm[b], perm[a]
    return _A.transpose(input, tuple(perm)) if n else _A.reshape(input, ())


def swapaxes(input, axis0, axis1):
    """Alias of mint.transpose."""
    return transpose(input, axis0, axis1)


def t(input):
    """A 2-D tensor transposed (0-D and 1-D come back as they are)."""
    if input.ndim > 2:
        raise ValueError(f"mint.t: input must be at most 2-D, got rank {input.ndim}")
    return transpose(input, 0, 1) if input.ndim == 2 else _A.reshape(input, tuple(input.shape))


def flatten(input, start_dim=0, end_dim=-1):
    """Axes start_dim..end_dim merged into one (all of them by default)."""
    return _A.flatten(input, start_dim=start_dim, end_dim=end_dim)


def ravel(input):
    """The elements as a 1-D tensor."""
    return _A.reshape(input, (-1,))


def squeeze(input, dim):
    """input without the size-1 axes in dim (an int or tuple; () for all of them); an axis in
    dim whose size is not 1 stays."""
    shape = tuple(input.shape)
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return _A.squeeze(input)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    axes = {_ax("squeeze", d, len(shape)) for d in dims}
    return _A.reshape(input, tuple(s for i, s in enumerate(shape) if not (i in axes and s == 1)))


def unsqueeze(input, dim):
    """A size-1 axis inserted at dim."""
    return _A.expand_dims(input, dim)


def cat(tensors, dim=0):
    """tensors joined along dim."""
    return _A.concat(tensors, dim)


def concat(tensors, dim=0):
    """Alias of mint.cat."""
    return _A.concat(tensors, dim)


def stack(tensors, dim=0):
    """tensors joined along a new axis dim."""
    return _A.stack(tensors, dim)


def _atleast_3d(t):
    shape = tuple(t.shape)
    if len(shape) >= 3:
        return t
    return _A.reshape(t, {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)])


def hstack(tensors):
    """tensors joined along axis 1 (axis 0 for 1-D ones)."""
    ts = [_A.reshape(t, (1,)) if t.ndim == 0 else t for t in tensors]
    return _A.concat(ts, 0 if ts[0].ndim == 1 else 1)


def dstack(tensors):
    """tensors made at least 3-D ((N,) -> (1, N, 1), (M, N) -> (M, N, 1)) joined along axis 2."""
    return _A.concat([_atleast_3d(t) for t in tensors], 2)


def split(tensor, split_size_or_sections, dim=0):
    """A tuple of pieces along dim: of size split_size_or_sections (an int; the last may be
    smaller) or of the sizes it lists."""
    return tuple(_A.split(tensor, split_size_or_sections, dim))


def chunk(input, chunks, dim=0):
    """A tuple of at most chunks pieces of ceil(size / chunks) along dim."""
    return _X._chunk(input, chunks, dim)


def unbind(input, dim=0):
    """A tuple of the slices along dim, each without that axis."""
    return _X._unbind(input, dim)


def narrow(input, dim, start, length):
    """The length elements from start along dim."""
    return _X._narrow(input, dim, start, length)


def select(input, dim, index):
    """The slice at index along dim, without that axis."""
    d = _ax("select", dim, input.ndim)
    if not is_int(index):
        raise TypeError(f"mint.select: index must be an int, got {index!r}")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"mint.select: index {index} out of range for axis {dim} of size {n}")
    return input[(slice(None),) * d + (index % n,)]


def tile(input, dims):
    """input repeated dims times along each axis (dims shorter than the rank are padded with
    leading 1s, longer ones add leading axes)."""
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return _A.tile(input, dims)


def broadcast_to(input, shape):
    """input broadcast to shape (-1 keeps a dim)."""
    return _A.broadcast_to(input, shape)


def flip(input, dims):
    """The elements reversed along each axis in dims."""
    if is_int(dims):
        dims = (dims,)
    return _X._flip(input, dims)


def roll(input, shifts, dims=None):
    """The elements shifted cyclically by shifts along dims (None: over the flattened input,
    reshaped back)."""
    if dims is None:
        if not is_int(shifts):
            if len(shifts) != 1:
                raise ValueError("mint.roll: with dims None, shifts must be one int")
            shifts = shifts[0]
        return _A.reshape(roll(_A.reshape(input, (-1,)), shifts, 0), tuple(input.shape))
    shifts = (shifts,) if is_int(shifts) else tuple(shifts)
    dims = (dims,) if is_int(dims) else tuple(dims)
    if len(shifts) != len(dims):
        raise ValueError(f"mint.roll: shifts {shifts} and dims {dims} must have equal lengths")
    x = input
    for s, d in zip(shifts, dims):
        a = _ax("roll", d, x.ndim)
        n = x.shape[a]
        k = s % n if n else 0
        if k:
            lo = (slice(None),) * a
            x = _A.concat([x[lo + (slice(n - k, n),)], x[lo + (slice(0, n - k),)]], a)
    return x


_tril = _X._triangle("tril", _X.ND.tril)      # Tensor.tril's checks over the tril composite
_triu = _X._triangle("triu", _X.ND.triu)


def tril(input, diagonal=0):
    """The lower triangle of the last two axes (on and below diagonal `diagonal`), 0 elsewhere."""
    return _tril(input, diagonal)


def triu(input, diagonal=0):
    """The upper triangle of the last two axes (on and above diagonal `diagonal`), 0 elsewhere."""
    return _triu(input, diagonal)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors: indexing 'xy' (the default, as MindSpore's) swaps
    the first two output axes, 'ij' keeps them in input order. A tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    indexing = "xy" if indexing is None else indexing
    if indexing not in ("xy", "ij"):
        raise ValueError(f"mint.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ts = [_A.reshape(t, (-1,)) for t in tensors]
    n = len(ts)
    sizes = [t.shape[0] for t in ts]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(ts):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        shape = [1] * n
        shape[pos] = t.shape[0]
        out.append(_A.broadcast_to(_A.reshape(t, tuple(shape)), tuple(sizes)))
    return tuple(out)


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Each element along dim (None: of the flattened input) repeated repeats times (an int,
    or one count per element; a Tensor of counts is read, so PyNative only)."""
    return _X._repeat_interleave(input, repeats, dim, output_size=output_size)


def _flat_index(name, input, dim, index):
    """The indices into input flattened that PyTorch's gather/scatter along dim address."""
    if not isinstance(index, Tensor) or not index.dtype.is_int:
        raise TypeError(f"mint.{name}: index must be an int Tensor")
    n = input.ndim
    if index.ndim != n:
        raise ValueError(f"mint.{name}: index must have input's rank {n}, got {index.ndim}")
    d = _ax(name, dim, n)
    shape, ishape = tuple(input.shape), tuple(index.shape)
    for i, (a, b) in enumerate(zip(ishape, shape)):
        if i != d and a > b:
            raise ValueError(f"mint.{name}: index shape {ishape} exceeds input shape {shape} "
                             f"at axis {i}")
    strides = np.cumprod((1,) + shape[::-1][:-1])[::-1]
    flat = None
    for i in range(n):
        if i == d:
            # index through arange(size): GATHER's range check raises an IndexError for an
            # index outside -size..size-1 (else it would land in another row of the flat input)
            # and a negative one comes out counted from the end
            checked = _I.gather(_A.arange(0, shape[d], 1, dtype=_dt.int64), index, 0)
            part = _M.mul(checked, int(strides[i]))
        else:
            r = np.arange(ishape[i], dtype=np.int64) * int(strides[i])
            part = Tensor(r.reshape([ishape[i] if j == i else 1 for j in range(n)]))
        flat = part if flat is None else _M.add(flat, part)
    return flat


def gather(input, dim, index):
    """out[i][j][k] = input[index[i][j][k]][j][k] (for dim 0): PyTorch's gather."""
    flat = _flat_index("gather", input, dim, index)
    return _I.gather(_A.reshape(input, (-1,)), flat, 0)


def index_select(input, dim, index):
    """The elements at the 1-D int Tensor index along dim."""
    return _X._index_select(input, dim, index)


def take(input, index):
    """The elements of the flattened input at index, in index's shape."""
    return _I.gather(_A.reshape(input, (-1,)), index, 0)


def _src(name, input, index, src):
    if isinstance(src, Tensor):
        src = src if src.dtype is input.dtype else _M.cast(src, input.dtype)
        return src[tuple(slice(0, s) for s in index.shape)]
    if isinstance(src, bool) or not isinstance(src, (int, float)):
        raise TypeError(f"mint.{name}: src must be a Tensor or a number, got {src!r}")
    return _A.full(tuple(index.shape), src, dtype=input.dtype)


def scatter(input, dim, index, src):
    """input with src written at the positions index addresses along dim (PyTorch's
    scatter; where index repeats a position, which value lands is unspecified)."""
    flat = _A.reshape(_flat_index("scatter", input, dim, index), (-1,))
    upd = _A.reshape(_src("scatter", input, index, src), (-1,))
    out = _I.apply(_I.SCATTER_UPDATE, _A.reshape(input, (-1,)), flat, upd, axis=0)
    return _A.reshape(out, tuple(input.shape))


def scatter_add(input, dim, index, src):
    """input with src added at the positions index addresses along dim (repeats add up)."""
    flat = _A.reshape(_flat_index("scatter_add", input, dim, index), (-1,))
    upd = _A.reshape(_src("scatter_add", input, index, src), (-1,))
    out = _I.scatter_add(_A.reshape(input, (-1,)), flat, upd, 0)
    return _A.reshape(out, tuple(input.shape))


def masked_select(input, mask):
    """The elements of input where mask (broadcast together) is True, as a 1-D tensor (its
    length depends on the data: PyNative only)."""
    from ..core.shape import broadcast_shapes
    shape = broadcast_shapes("masked_select", tuple(input.shape), tuple(mask.shape))
    return _A.broadcast_to(input, shape)[_A.broadcast_to(mask, shape)]


def nonzero(input, *, as_tuple=False):
    """The int64 indices of input's nonzero elements: an (N, rank) tensor, or with as_tuple a
    tuple of rank 1-D tensors (the count depends on the data: PyNative only)."""
    shape = tuple(input.shape)
    mask = _M.not_equal(input, 0) if input.dtype is not _dt.bool_ else input
    cols = []
    for i, n in enumerate(shape):
        r = Tensor(np.arange(n, dtype=np.int64).reshape([n if j == i else 1
                                                         for j in range(len(shape))]))
        cols.append(_A.broadcast_to(r, shape)[mask])
    if as_tuple:
        return tuple(cols)
    return _A.stack(cols, 1) if cols else _A.zeros((int(bool(input.item())), 0), _dt.int64)


def where(condition, input=None, other=None):
    """input where condition is True, else other (broadcasting); where(condition) alone is
    nonzero(condition, as_tuple=True)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("mint.where: give both input and other, or neither")
    return _M.where(condition, input, other)


def item(input):
    """The value of a one-element tensor as a Python number."""
    return input.item()


def clone(input):
    """A new tensor with input's values."""
    return _A.reshape(input, tuple(input.shape))


def diag(input, diagonal=0):
    """A 1-D input as the diagonal `diagonal` of a square matrix; of a 2-D input, that
    diagonal as a 1-D tensor."""
    k = diagonal
    if not is_int(k):
        raise TypeError(f"mint.diag: diagonal must be an int, got {k!r}")
    if input.ndim == 1:
        n = input.shape[0] + abs(k)
        pad = _A.zeros((abs(k),), input.dtype)
        col = _A.concat([input, pad] if k >= 0 else [pad, input], 0) if k else input
        mask = Tensor(np.eye(n, n, k, dtype=np.bool_))
        return _M.where(mask, _A.broadcast_to(_A.reshape(col, (n, 1)), (n, n)),
                        _A.zeros((n, n), input.dtype))
    if input.ndim != 2:
        raise ValueError(f"mint.diag: input must be 1-D or 2-D, got rank {input.ndim}")
    r, c = input.shape
    i = np.arange(max(0, min(r, c - k) if k >= 0 else min(r + k, c)), dtype=np.int64)
    flat = i * c + i + k if k >= 0 else (i - k) * c + i
    return _I.gather(_A.reshape(input, (-1,)), Tensor(flat), 0)


def trace(input):
    """The sum of the main diagonal of a 2-D tensor (integers give int64)."""
    if input.ndim != 2:
        raise ValueError(f"mint.trace: input must be 2-D, got rank {input.ndim}")
    return _X._trace(input)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (x[i+1] - x[i]; xor for bools), with prepend and
    append joined on first."""
    x = input
    d = _ax("diff", dim, x.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _A.concat(parts, d)
    lo = (slice(None),) * d
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x[lo + (slice(1, m),)], x[lo + (slice(0, m - 1),)]
        x = _M.not_equal(a, b) if x.dtype is _dt.bool_ else _M.sub(a, b)
    return x


def cross(input, other, dim=None):
    """The cross product of 3-vectors along dim (None: the first axis of size 3)."""
    from ..core.shape import broadcast_shapes
    shape = broadcast_shapes("cross", tuple(input.shape), tuple(other.shape))
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise ValueError(f"mint.cross: no axis of size 3 in shape {shape}")
    d = _ax("cross", dim, len(shape))
    if shape[d] != 3:
        raise ValueError(f"mint.cross: axis {dim} must have size 3, got {shape[d]}")
    a, b = _A.broadcast_to(input, shape), _A.broadcast_to(other, shape)
    lo = (slice(None),) * d

    def c(t, i):
        return t[lo + (slice(i, i + 1),)]
    return _A.concat([_M.sub(_M.mul(c(a, 1), c(b, 2)), _M.mul(c(a, 2), c(b, 1))),
                      _M.sub(_M.mul(c(a, 2), c(b, 0)), _M.mul(c(a, 0), c(b, 2))),
                      _M.sub(_M.mul(c(a, 0), c(b, 1)), _M.mul(c(a, 1), c(b, 0)))], d)
