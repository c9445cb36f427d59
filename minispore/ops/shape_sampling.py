"""mindspore.ops' padding, resampling and N-d indexing functions and Primitive classes (pad,
mirror_pad, interpolate/upsample, ResizeBilinearV2, PadV3, MirrorPad, gather_nd,
scatter_nd/ScatterNd, tensor_scatter_add/sub/update and their classes, masked_fill/MaskedFill,
tril/Tril, triu/Triu, tril_indices/triu_indices and their classes, einsum/Einsum), with
MindSpore 2.10's argument rules, over the composites of core/ops/resample.py and
core/ops/array_nd.py; the other resize Primitive classes are in ops/resize_primitives.py."""
from __future__ import annotations

import numbers

import numpy as _np

from ..core import dtype as _dt
from ..core.ops import array_nd as _nd
from ..core.ops import resample as _rs
from ..core.primitive import Primitive
from ..core.tensor import Tensor
from . import resize_primitives as _resize_primitives
from .resize_primitives import *  # noqa: F401,F403

__all__ = ["pad", "mirror_pad", "interpolate", "upsample", "gather_nd", "scatter_nd",
           "tensor_scatter_add", "tensor_scatter_sub", "tensor_scatter_update", "masked_fill",
           "tril", "triu", "tril_indices", "triu_indices", "einsum", "ScatterNd",
           "TensorScatterAdd", "TensorScatterSub", "TensorScatterUpdate", "Einsum",
           "MaskedFill", "Tril", "Triu", "TrilIndices", "TriuIndices", "ResizeBilinearV2",
           "PadV3", "MirrorPad"] + _resize_primitives.__all__


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _int_tuple(v):
    """A Tensor or sequence of ints as a tuple of ints (None when it is neither)."""
    if isinstance(v, Tensor):
        v = v.asnumpy().reshape(-1).tolist()
    if isinstance(v, (tuple, list)) and all(_is_int(p) for p in v):
        return tuple(int(p) for p in v)
    return None


# ---------------------------------------------------------------- pad ---------------------------
_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _check_border_rank(who, rank, n_pairs, mode):
    """MindSpore's PadV3 rule for the border modes: padding of p axes needs an input of rank
    p + 1 or p + 2 (p <= 3), reflect at most rank 4 once a batch axis is added."""
    if rank < 2 or rank not in (n_pairs + 1, n_pairs + 2):
        raise ValueError(f"For '{who}', mode {mode!r} with a padding of {2 * n_pairs} values "
                         f"needs an input of rank {n_pairs + 1} or {n_pairs + 2}, got rank "
                         f"{rank}; use mode='constant' or pad fewer axes")
    if mode == "reflect" and n_pairs == 3:
        raise ValueError(f"For '{who}', mode 'reflect' pads at most 2 axes (an input of rank "
                         f"<= 4), got a padding of 6 values")


def pad(input_x, padding, mode="constant", value=None):
    """input_x padded: padding = (left, right) of the last axis, then of the one before, ...;
    'constant' fills with value (0 by default), 'reflect' mirrors without the edge, 'replicate'
    repeats the edge, 'circular' wraps around; negative pads crop (before the border is
    taken)."""
    if not isinstance(input_x, Tensor):
        raise TypeError(f"For 'pad', input_x must be a Tensor, got {type(input_x).__name__}")
    pads = _int_tuple(padding)
    if pads is None:
        raise TypeError(f"For 'pad', the paddings value must be tuple of int or list of int, "
                        f"but got {padding!r}")
    if len(pads) % 2:
        raise ValueError(f"For 'pad', the size of padding must be divisible by 2, but got "
                         f"{len(pads)}")
    if mode not in _PAD_MODES:
        raise ValueError(f"For 'pad', mode must be one of {list(_PAD_MODES)}, got {mode!r}")
    if mode != "constant" and value is not None:
        raise ValueError(f"For 'pad', the padding mode '{mode}' can not set value, but got "
                         f"value {value}.")
    rank = len(input_x.shape)
    if rank == 0:
        raise ValueError("For 'pad', the dimension of 'input_x' must be bigger than 0")
    if mode != "constant":
        _check_border_rank("pad", rank, len(pads) // 2, mode)
    if value is not None and isinstance(value, Tensor):
        value = value.asnumpy().item()
    return _rs.pad_nd(input_x, pads, mode, 0 if value is None else value)


class PadV3(Primitive):
    """`PadV3(mode='constant', paddings_contiguous=True)(x, paddings, value=None)`: ops.pad's
    padding as a Primitive ('edge' is replicate); paddings_contiguous=False reads the padding as
    (all befores, then all afters)."""

    def __init__(self, mode="constant", paddings_contiguous=True):
        if mode not in ("constant", "reflect", "edge", "circular"):
            raise ValueError(f"For 'PadV3', the 'mode' must be str and must be in "
                             f"['constant', 'reflect', 'edge', 'circular'], but got {mode!r}.")
        self.mode, self.paddings_contiguous = mode, bool(paddings_contiguous)
        self.name = "PadV3"

    def __call__(self, x, paddings, constant_value=None):
        pads = _int_tuple(paddings)
        if pads is None or len(pads) % 2:
            raise ValueError(f"For 'PadV3', paddings must be an even number of ints, got "
                             f"{paddings!r}")
        if not self.paddings_contiguous:
            half = len(pads) // 2
            pads = tuple(v for pair in zip(pads[:half], pads[half:]) for v in pair)
        mode = "replicate" if self.mode == "edge" else self.mode
        rank = len(x.shape)
        if mode != "constant" and rank != len(pads) // 2 + 2:
            raise ValueError(f"For primitive[PadV3], the input dims when padding's size equal "
                             f"{len(pads)} must be equal to {len(pads) // 2 + 2}, but got "
                             f"{rank}.")
        if mode == "constant":
            return pad(x, pads, "constant", constant_value)
        return pad(x, pads, mode)


def mirror_pad(input_x, paddings, mode):
    """MirrorPad(mode)(input_x, paddings): paddings an (rank, 2) int Tensor."""
    if not isinstance(paddings, Tensor):
        raise TypeError(f"For Primitive[MirrorPad], the type of input argument[paddings] must "
                        f"be Tensor but got {type(paddings).__name__}.")
    return MirrorPad(mode)(input_x, paddings)


class MirrorPad(Primitive):
    """`MirrorPad(mode='REFLECT')(x, paddings)`: paddings an (rank, 2) int tensor of
    (before, after) per axis, first axis first; 'REFLECT' mirrors without the edge,
    'SYMMETRIC' with it."""

    def __init__(self, mode="REFLECT"):
        if mode not in ("REFLECT", "SYMMETRIC"):
            raise ValueError(f"For 'MirrorPad', mode must be 'REFLECT' or 'SYMMETRIC', got "
                             f"{mode!r}")
        self.mode, self.name = mode, "MirrorPad"

    def __call__(self, input_x, paddings):
        p = _np.asarray(paddings.asnumpy() if isinstance(paddings, Tensor) else paddings)
        rank = len(input_x.shape)
        if p.shape != (rank, 2) or p.dtype.kind not in "iu" or (p < 0).any():
            raise ValueError(f"For 'MirrorPad', paddings must be non-negative ints of shape "
                             f"({rank}, 2), got {p.tolist()!r}")
        return _rs.pad_nd(input_x, _flat_pairs(p.tolist()), self.mode.lower())


def _flat_pairs(pairs):
    """((before, after) per axis, first axis first) -> flat padding, last axis first."""
    return tuple(int(v) for pair in reversed(pairs) for v in pair)


# ---------------------------------------------------------------- interpolate -------------------
# mode -> (ranks it accepts, core mode)
_INTERP = {"nearest": ((3, 4, 5), "nearest"), "linear": ((3,), "linear"),
           "bilinear": ((4,), "linear"), "bicubic": ((4,), "cubic_tabulated"),
           "trilinear": ((5,), "linear"), "area": ((3, 4, 5), "area"),
           "nearest-exact": ((3, 4), "nearest_exact")}


def _out_sizes(who, input, mode, size, scale_factor, recompute_scale_factor):
    """(output sizes, source scales or None) by MindSpore 2.10's rules: a size is used as given
    (scales in / out); a scale factor gives floor(in * scale_factor) and is used as the source
    step 1 / scale_factor only by 5-D 'nearest' and 'trilinear' (UpsampleNearest3D and
    UpsampleTrilinear3D); 'area' and recompute_scale_factor=True recompute the scales from the
    sizes; any other mode refuses a scale factor."""
    rank = len(input.shape)
    n = rank - 2
    if size is not None and scale_factor is not None:
        raise ValueError(f"For '{who}', 'size' and 'scale_factor' cannot be set simultaneously")
    if size is None and scale_factor is None:
        raise ValueError(f"For '{who}', 'size' and 'scale_factor' cannot be both empty")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError(f"For '{who}', it is incorrect to set 'recompute_scale_factor' to "
                             f"True after specifying an explicit 'size'.")
        sizes = (int(size),) * n if _is_int(size) else _int_tuple(size)
        if sizes is None or len(sizes) != n or min(sizes) <= 0:
            raise ValueError(f"For '{who}', size must be a positive int or a tuple of {n} "
                             f"positive ints, got {size!r}")
        return sizes, None
    sf = (scale_factor,) * n if isinstance(scale_factor, numbers.Real) else tuple(scale_factor)
    if len(sf) != n or any(isinstance(s, bool) or not isinstance(s, numbers.Real) or s <= 0
                           for s in sf):
        raise ValueError(f"For '{who}', scale_factor must be a positive number or a tuple of "
                         f"{n}, got {scale_factor!r}")
    sizes = tuple(int(_np.floor(i * float(s))) for i, s in zip(input.shape[2:], sf))
    if recompute_scale_factor or mode == "area":
        return sizes, None
    if (mode, rank) in (("nearest", 5), ("trilinear", 5)):
        return sizes, tuple(1.0 / float(s) for s in sf)
    raise ValueError(f"For '{who}', 'scale_factor' option cannot currently be set with the "
                     f"mode = {mode} and dim = {rank}D; pass recompute_scale_factor=True (the "
                     f"output size is floor(input size * scale_factor)) or give size")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None):
    """Resize the spatial axes of (N, C, *spatial) to `size` (or floor(spatial *
    scale_factor), see _out_sizes): 'nearest' (source floor(d * in / out)), 'nearest-exact'
    (floor((d + 0.5) * in / out)), 'linear'/'bilinear'/'trilinear' (half-pixel centres, or
    align_corners=True), 'bicubic' (MindSpore's tabulated kernel: Keys' A = -0.5 without the
    outside taps, or A = -0.75 with align_corners=True), 'area' (adaptive average)."""
    who = "interpolate"
    if not isinstance(input, Tensor):
        raise TypeError(f"For '{who}', input must be a Tensor, got {type(input).__name__}")
    if mode not in _INTERP:
        raise ValueError(f"For '{who}', 'mode' must be in '{list(_INTERP)}', but got {mode}")
    ranks, core_mode = _INTERP[mode]
    rank = len(input.shape)
    if rank not in ranks:
        raise ValueError(f"For '{who}', {mode} only support '{list(ranks)}'D, but got {rank}D")
    if align_corners is not None and core_mode not in ("linear", "cubic_tabulated"):
        raise ValueError(f"For '{who}', 'align_corners' option cannot currently be set with "
                         f"the mode = {mode}, and dim = {rank}D")
    if not input.dtype.is_float:
        raise TypeError(f"For '{who}', the input must be float16, float32 or float64, got "
                        f"{input.dtype}; cast it with .astype(ms.float32)")
    sizes, scales = _out_sizes(who, input, mode, size, scale_factor, recompute_scale_factor)
    if core_mode == "area" and rank == 3:
        n_in, n_out = input.shape[2], sizes[0]
        if n_in < n_out or n_in % n_out:
            raise ValueError(f"For '{who}', mode 'area' on a 3-D input needs the input length "
                             f"{n_in} to be >= and divisible by the output size {n_out} "
                             f"(MindSpore's adaptive_avg_pool1d)")
    coordinate = "align_corners" if align_corners else "half_pixel"
    return _rs.resize(input, sizes, core_mode, coordinate, scales)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
             recompute_scale_factor=None):
    """ops.interpolate under its other name."""
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


class ResizeBilinearV2(Primitive):
    """`ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(x, size)`: the 4-D x
    resized to size = (height, width) bilinearly; the source of output d is d * in / out
    (asymmetric), (d + 0.5) * in / out - 0.5 with half_pixel_centers, d * (in - 1) / (out - 1)
    with align_corners."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        if not isinstance(align_corners, bool) or not isinstance(half_pixel_centers, bool):
            raise TypeError("For 'ResizeBilinearV2', align_corners and half_pixel_centers must "
                            "be bool")
        if align_corners and half_pixel_centers:
            raise ValueError("For 'ResizeBilinearV2', the half_pixel_centers must be false "
                             "when align_corners is true, but half_pixel_centers got True.")
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers
        self.name = "ResizeBilinearV2"

    def __call__(self, x, size):
        sizes = _int_tuple(size)
        if sizes is None or len(sizes) != 2 or min(sizes) <= 0:
            raise ValueError(f"For 'ResizeBilinearV2', size must be two positive ints, got "
                             f"{size!r}")
        if len(x.shape) != 4:
            raise ValueError(f"For 'ResizeBilinearV2', x must be 4-D (N, C, H, W), got shape "
                             f"{tuple(x.shape)}")
        coordinate = ("align_corners" if self.align_corners else
                      "half_pixel" if self.half_pixel_centers else "asymmetric")
        return _rs.resize(x, sizes, "linear", coordinate)


# ---------------------------------------------------------------- N-d indexing ------------------
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
