"""mindspore.ops' padding and resampling functions and Primitive classes (pad, mirror_pad,
interpolate/upsample, ResizeBilinearV2, PadV3, MirrorPad), with MindSpore 2.10's argument rules,
over the composites of core/ops/resample.py. The module also gathers (for ops' star import) the
other resize Primitive classes (ops/resize_primitives.py) and the N-d indexing functions
(ops/nd_indexing.py)."""
from __future__ import annotations

import numbers

import numpy as _np

from ..core.ops import resample as _rs
from ..core.primitive import Primitive
from ..core.tensor import Tensor
from . import nd_indexing as _nd_indexing
from . import resize_primitives as _resize_primitives
from .nd_indexing import *  # noqa: F401,F403
from .resize_primitives import *  # noqa: F401,F403

__all__ = ["pad", "mirror_pad", "interpolate", "upsample", "ResizeBilinearV2", "PadV3",
           "MirrorPad"] + _resize_primitives.__all__ + _nd_indexing.__all__


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
    out = _rs.PAD.infer(input_x, padding=pads, mode=mode, value=0).shape
    if 0 in out:
        raise ValueError(f"For 'pad', the output size must be greater than 0, but the output "
                         f"shape of {tuple(input_x.shape)} padded by {pads} is {out}")
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
