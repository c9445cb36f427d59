"""Padding and resampling composites shared by ops, nn and mint: `pad` (constant, reflect,
replicate, circular and symmetric borders; negative pads crop) and `resize` (nearest in three
rounding rules, linear, PyTorch's and MindSpore's bicubic, and area resampling of the trailing
axes, separable, with the half-pixel, align-corners and asymmetric coordinate transforms).

Both are written with gather, slicing, concat and elementwise ops, so no backend has a kernel
for them and autodiff differentiates their parts (gather's gradient scatter-adds, so a source
pixel read by several outputs gets all of their gradients). The API rules that differ between
MindSpore's ops/nn and mint's PyTorch-style functions (which ranks a mode accepts, whether a
scale factor is used as given) live in those wrappers; the algorithms live here once.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from . import array as _a
from . import index_ops as _ix
from . import math as _m
from . import reduce as _r

__all__ = ["PAD", "RESIZE", "pad_nd", "resize"]

PAD_MODES = ("constant", "reflect", "replicate", "circular", "symmetric")


# ---------------------------------------------------------------- pad ---------------------------
def _pad_pairs(who, shape, padding):
    """[(axis, before, after)] of a flat padding (last axis first, as ops.pad and F.pad)."""
    if len(padding) % 2:
        raise ValueError(f"{who}: the size of padding must be divisible by 2, got {padding!r}")
    if len(padding) // 2 > len(shape):
        raise ValueError(f"{who}: padding {padding!r} pads {len(padding) // 2} axes, the input "
                         f"of shape {tuple(shape)} has {len(shape)}")
    return [(len(shape) - 1 - k, int(padding[2 * k]), int(padding[2 * k + 1]))
            for k in range(len(padding) // 2)]


def _pad_infer(x, padding, mode, value):
    who = "pad"
    if mode not in PAD_MODES:
        raise ValueError(f"{who}: mode must be one of {PAD_MODES}, got {mode!r}")
    shape = list(x.shape)
    for axis, lo, hi in _pad_pairs(who, shape, padding):
        n = shape[axis] + min(lo, 0) + min(hi, 0)        # negative pads crop first
        if n <= 0 and (lo or hi):
            raise ValueError(f"{who}: padding ({lo}, {hi}) leaves {n} elements of dimension "
                             f"{axis} (size {shape[axis]}); the output size must be > 0")
        blo, bhi = max(lo, 0), max(hi, 0)
        if mode == "reflect" and (blo >= n or bhi >= n):
            raise ValueError(f"{who}: reflect padding ({lo}, {hi}) must be smaller than the "
                             f"size {n} of dimension {axis}")
        if mode in ("circular", "symmetric") and (blo > n or bhi > n):
            raise ValueError(f"{who}: {mode} padding ({lo}, {hi}) must be at most the size {n} "
                             f"of dimension {axis}")
        shape[axis] = n + blo + bhi
    return Meta(tuple(shape), x.dtype)


def _border_index(mode, n, lo, hi):
    """The source index of each position of an axis of size n padded by (lo, hi) >= 0."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i >= n, 2 * (n - 1) - i, i)
    elif mode == "symmetric":
        i = np.where(i < 0, -1 - i, i)
        i = np.where(i >= n, 2 * n - 1 - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, n - 1)
    else:
        i = np.mod(i, n)
    return i.astype(np.int32)


def _crop_key(axis, n, lo, hi):
    return (slice(None),) * axis + (slice(max(-lo, 0), n - max(-hi, 0)),)


def _pad_impl(x, padding, mode, value):
    from ..tensor import Tensor
    y = x
    for axis, lo, hi in _pad_pairs("pad", x.shape, padding):
        if lo < 0 or hi < 0:
            y = y[_crop_key(axis, y.shape[axis], lo, hi)]
            lo, hi = max(lo, 0), max(hi, 0)
        if lo == 0 and hi == 0:
            continue
        if mode != "constant":
            y = _ix.gather(y, Tensor(_border_index(mode, y.shape[axis], lo, hi)), axis)
            continue
        shape = tuple(y.shape)
        parts = [y]
        if lo:
            parts.insert(0, _a.full(shape[:axis] + (lo,) + shape[axis + 1:], value,
                                    dtype=y.dtype))
        if hi:
            parts.append(_a.full(shape[:axis] + (hi,) + shape[axis + 1:], value, dtype=y.dtype))
        y = _a.concat(parts, axis)
    return y


def _pad_ref(x, padding, mode, value):
    y = np.asarray(x)
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap", "symmetric": "symmetric"}[mode]
    for axis, lo, hi in _pad_pairs("pad", y.shape, padding):
        y = y[_crop_key(axis, y.shape[axis], lo, hi)]
        widths = [(0, 0)] * y.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        if mode == "constant":
            fill = np.array(value).astype(y.dtype)
            y = np.pad(y, widths, mode="constant", constant_values=fill)
        else:
            y = np.pad(y, widths, mode=np_mode)
    return y


# x padded: `padding` flat, (before, after) of the last axis first; negative pads crop before
# the border is added (MindSpore's order: a circular or reflected border comes from the cropped
# tensor). Differentiated through its parts (slices, gather, concat).
PAD = defop("pad", infer=_pad_infer, ref=_pad_ref, arity=1, composite=_pad_impl,
            attrs={"padding": (), "mode": "constant", "value": 0})


def pad_nd(x, padding, mode="constant", value=0):
    """x padded by the flat `padding` (last axis first) with border `mode` (composite 'pad')."""
    if mode != "constant":
        value = 0
    if not isinstance(value, numbers.Number):
        raise TypeError(f"pad: value must be a number or a bool, got {value!r}")
    return apply(PAD, x, padding=tuple(int(p) for p in padding), mode=mode, value=value)


# ---------------------------------------------------------------- resize ------------------------
RESIZE_MODES = ("nearest", "nearest_exact", "nearest_round", "linear", "cubic", "cubic_tabulated",
                "area")
COORDINATES = ("half_pixel", "align_corners", "asymmetric")
CUBIC_A = -0.75          # the cubic convolution parameter of PyTorch's bicubic
CUBIC_TABLE = 1024       # entries of the tabulated kernel of MindSpore's (TensorFlow's) bicubic


def _resize_infer(x, sizes, mode, coordinate, scales):
    who = "resize"
    if mode not in RESIZE_MODES:
        raise ValueError(f"{who}: mode must be one of {RESIZE_MODES}, got {mode!r}")
    if coordinate not in COORDINATES:
        raise ValueError(f"{who}: coordinate must be one of {COORDINATES}, got {coordinate!r}")
    if not x.dtype.is_float and not mode.startswith("nearest"):
        raise DTypeError(f"{who}: mode {mode!r} needs a float tensor, got {x.dtype}; cast it "
                         f"with .astype(ms.float32)")
    n = len(sizes)
    if not 1 <= n <= len(x.shape):
        raise ShapeError(f"{who}: {n} output sizes for an input of shape {tuple(x.shape)}")
    if scales is not None and len(scales) != n:
        raise ValueError(f"{who}: {len(scales)} scales for {n} sizes")
    if any(not isinstance(s, numbers.Integral) or s <= 0 for s in sizes):
        raise ValueError(f"{who}: the output sizes must be positive ints, got {sizes!r}")
    lead = tuple(x.shape[:len(x.shape) - n])
    if any(d == 0 for d in x.shape[len(x.shape) - n:]):
        raise ShapeError(f"{who}: the resized axes of shape {tuple(x.shape)} must not be empty")
    return Meta(lead + tuple(int(s) for s in sizes), x.dtype)


def _source(n_in, n_out, scale, coordinate):
    """The source coordinate of each output position (float64)."""
    d = np.arange(n_out, dtype=np.float64)
    if coordinate == "align_corners":
        return d * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    if coordinate == "asymmetric":
        return d * scale
    return (d + 0.5) * scale - 0.5


def _taps(mode, n_in, n_out, scale, coordinate):
    """[(source index per output position (int32), weight per output position or None)] whose
    weighted sum is the resampled axis; a None weight is 1 (one tap: nearest)."""
    if mode in ("nearest", "nearest_exact"):
        # computed in float32 like MindSpore's and PyTorch's kernels (floor of d * scale)
        d = np.arange(n_out, dtype=np.float32)
        if mode == "nearest_exact":
            d = d + np.float32(0.5)
        src = np.floor(d * np.float32(scale)).astype(np.int64)
        return [(np.minimum(src, n_in - 1).astype(np.int32), None)]
    if mode == "nearest_round":
        # TensorFlow's (and MindSpore's ResizeNearestNeighborV2's) align_corners nearest:
        # round(d * (in - 1) / (out - 1)) in float32, halves away from zero
        step = np.float32((n_in - 1) / (n_out - 1)) if n_out > 1 else np.float32(0)
        src = np.floor(np.arange(n_out, dtype=np.float32) * step + np.float32(0.5))
        return [(np.minimum(src.astype(np.int64), n_in - 1).astype(np.int32), None)]
    if mode == "area":
        raise AssertionError("area windows are summed by _resample_axis, not tapped")
    src = _source(n_in, n_out, scale, coordinate)
    if mode == "linear":
        if coordinate == "half_pixel":
            src = np.maximum(src, 0.0)
        lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        lam = src - lo
        return [(lo.astype(np.int32), 1.0 - lam), (hi.astype(np.int32), lam)]
    base = np.floor(src)
    t = src - base
    if mode == "cubic_tabulated":
        return _tabulated_cubic_taps(n_in, base, t, coordinate)
    return [(np.clip(base + k - 1, 0, n_in - 1).astype(np.int32), w)
            for k, w in enumerate(_cubic_weights(CUBIC_A, t))]


def _cubic_weights(a, t):
    def near(v):                                    # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):                                     # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _tabulated_cubic_taps(n_in, base, t, coordinate):
    """MindSpore's ResizeBicubic (TensorFlow's kernel): the fraction t rounded to a
    1/CUBIC_TABLE grid; with half-pixel centres Keys' A = -0.5 and the taps outside the input
    dropped (the others renormalised), else A = -0.75 and the taps clamped to the border."""
    t = np.rint(t * CUBIC_TABLE) / CUBIC_TABLE
    keys = coordinate == "half_pixel"
    weights = _cubic_weights(-0.5 if keys else CUBIC_A, t)
    idx = [base + k - 1 for k in range(4)]
    if keys:
        inside = [(i >= 0) & (i < n_in) for i in idx]
        weights = [np.where(ok, w, 0.0) for ok, w in zip(inside, weights)]
        total = weights[0] + weights[1] + weights[2] + weights[3]
        weights = [w / total for w in weights]
    return [(np.clip(i, 0, n_in - 1).astype(np.int32), w) for i, w in zip(idx, weights)]


def _area_windows(n_in, n_out):
    """Adaptive average windows: [start, end) of each output position."""
    d = np.arange(n_out)
    start = (d * n_in) // n_out
    end = -((-(d + 1) * n_in) // n_out)
    return start, end


def _axis_shape(nd, axis, n):
    return (1,) * axis + (n,) + (1,) * (nd - axis - 1)


def _resample_axis(y, axis, n_out, mode, coordinate, scale):
    from ..tensor import Tensor
    n_in = y.shape[axis]
    nd = len(y.shape)
    if mode == "area" and n_in % n_out == 0 and n_in > n_out:
        # equal windows of k: one reshape and a sum instead of k gathers
        k = n_in // n_out
        shape = tuple(y.shape)
        blocks = _a.reshape(y, shape[:axis] + (n_out, k) + shape[axis + 1:])
        return _r.sum(blocks, axis + 1) / k
    if mode == "area":
        start, end = _area_windows(n_in, n_out)
        length = end - start
        total = None
        for k in range(int(length.max())):
            idx = np.minimum(start + k, end - 1).astype(np.int32)
            tap = _ix.gather(y, Tensor(idx), axis)
            if k >= length.min():       # positions whose window is shorter read nothing here
                keep = Tensor((k < length).reshape(_axis_shape(nd, axis, n_out)))
                tap = _m.where(keep, tap, _a.zeros((), y.dtype))
            total = tap if total is None else total + tap
        return total / Tensor(length.astype(y.dtype.np).reshape(_axis_shape(nd, axis, n_out)))
    total = None
    for idx, w in _taps(mode, n_in, n_out, scale, coordinate):
        tap = _ix.gather(y, Tensor(idx), axis)
        if w is not None:
            tap = tap * Tensor(w.astype(y.dtype.np).reshape(_axis_shape(nd, axis, n_out)))
        total = tap if total is None else total + tap
    return total


def _resize_impl(x, sizes, mode, coordinate, scales):
    half = x.dtype in (dt.float16, dt.bfloat16)
    # half types resample in float32 and round once, as MindSpore's kernels do
    y = _m.cast(x, dt.float32) if half else x
    nd = len(x.shape)
    for k, n_out in enumerate(sizes):
        axis = nd - len(sizes) + k
        n_in = x.shape[axis]
        scale = n_in / n_out if scales is None else float(scales[k])
        y = _resample_axis(y, axis, int(n_out), mode, coordinate, scale)
    return _m.cast(y, x.dtype) if half else y


def _resize_ref(x, sizes, mode, coordinate, scales):
    """Reference: each axis resampled by an explicit (out, in) matrix in float64."""
    y = np.asarray(x).astype(np.float64)
    nd = y.ndim
    for k, n_out in enumerate(sizes):
        axis = nd - len(sizes) + k
        n_in = y.shape[axis]
        scale = n_in / n_out if scales is None else float(scales[k])
        mat = np.zeros((n_out, n_in))
        if mode == "area":
            start, end = _area_windows(n_in, n_out)
            for d in range(n_out):
                mat[d, start[d]:end[d]] = 1.0 / (end[d] - start[d])
        else:
            for idx, w in _taps(mode, n_in, n_out, scale, coordinate):
                np.add.at(mat, (np.arange(n_out), idx), 1.0 if w is None else w)
        y = np.moveaxis(np.tensordot(mat, np.moveaxis(y, axis, 0), axes=(1, 0)), 0, axis)
    return y.astype(np.asarray(x).dtype)


# the trailing len(sizes) axes of x resampled to `sizes`, one axis after the other (every mode
# is separable). mode: 'nearest' (source floor(d * scale)), 'nearest_exact' (floor((d + 0.5) *
# scale)), 'nearest_round' (round(d * (in - 1) / (out - 1))), 'linear', 'cubic' (PyTorch's:
# A = -0.75, indices clamped at the border), 'cubic_tabulated' (MindSpore's, see
# _tabulated_cubic_taps), 'area' (adaptive average windows). coordinate: the source
# coordinate of output d for linear and cubic: 'half_pixel' (d + 0.5) * scale - 0.5 (clamped
# at 0 for linear), 'align_corners' d * (in - 1) / (out - 1), 'asymmetric' d * scale. scales:
# the source step per axis (None: in / out; PyTorch's interpolate passes 1 / scale_factor).
RESIZE = defop("resize", infer=_resize_infer, ref=_resize_ref, arity=1, composite=_resize_impl,
               attrs={"sizes": (), "mode": "nearest", "coordinate": "half_pixel",
                      "scales": None})


def resize(x, sizes, mode="nearest", coordinate="half_pixel", scales=None):
    """The trailing axes of x resampled to `sizes` (composite 'resize'; see RESIZE)."""
    return apply(RESIZE, x, sizes=tuple(int(s) for s in sizes), mode=mode,
                 coordinate=coordinate,
                 scales=None if scales is None else tuple(float(s) for s in scales))
