"""mindspore.ops' resize Primitive classes beyond ResizeBilinearV2: ResizeLinear1D,
ResizeNearestNeighborV2, ResizeBicubic, UpsampleNearest3D and UpsampleTrilinear3D, with
MindSpore 2.10's arguments and coordinate rules, over the resize composite
(core/ops/resample.py). ops.interpolate is built on the same composite
(ops/shape_sampling.py), so each primitive gives the numbers of the interpolate mode that
MindSpore implements with it."""
from __future__ import annotations

import numbers

import numpy as _np

from ..core.ops import resample as _rs
from ..core.primitive import Primitive
from ..core.tensor import Tensor

__all__ = ["ResizeLinear1D", "ResizeNearestNeighborV2", "ResizeBicubic", "UpsampleNearest3D",
           "UpsampleTrilinear3D"]


def _sizes(who, size, n):
    """A Tensor, tuple or list of n positive ints as a tuple."""
    if isinstance(size, Tensor):
        size = size.asnumpy().reshape(-1).tolist()
    if not (isinstance(size, (tuple, list)) and len(size) == n and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) and v > 0
            for v in size)):
        raise ValueError(f"For '{who}', size must be {n} positive ints, got {size!r}")
    return tuple(int(v) for v in size)


def _rank(who, x, rank, layout):
    if len(x.shape) != rank:
        raise ValueError(f"For '{who}', the input must be {rank}-D {layout}, got shape "
                         f"{tuple(x.shape)}")


def _flags(who, align_corners, half_pixel_centers):
    if not isinstance(align_corners, bool) or not isinstance(half_pixel_centers, bool):
        raise TypeError(f"For '{who}', align_corners and half_pixel_centers must be bool")
    if align_corners and half_pixel_centers:
        raise ValueError(f"For '{who}', the half_pixel_centers must be false when "
                         f"align_corners is true, but half_pixel_centers got True.")


class ResizeLinear1D(Primitive):
    """`ResizeLinear1D(coordinate_transformation_mode='align_corners')(x, size)`: the last axis
    of the 3-D x resampled linearly to size[0]; 'align_corners' or 'half_pixel' (MindSpore 2.10
    refuses 'asymmetric' when it runs)."""

    def __init__(self, coordinate_transformation_mode="align_corners"):
        if coordinate_transformation_mode not in ("align_corners", "half_pixel"):
            raise ValueError(f"For 'ResizeLinear1D', coordinate_transformation_mode must be "
                             f"'align_corners' or 'half_pixel', got "
                             f"{coordinate_transformation_mode!r}")
        self.coordinate_transformation_mode = coordinate_transformation_mode
        self.name = "ResizeLinear1D"

    def __call__(self, x, size):
        _rank(self.name, x, 3, "(N, C, W)")
        return _rs.resize(x, _sizes(self.name, size, 1), "linear",
                          self.coordinate_transformation_mode)


class ResizeNearestNeighborV2(Primitive):
    """`ResizeNearestNeighborV2(align_corners=False, half_pixel_centers=False)(x, size)`: the
    4-D (N, C, H, W) x resized to size = (height, width) by nearest neighbour: source
    floor(d * in / out), round(d * (in - 1) / (out - 1)) with align_corners, floor((d + 0.5) *
    in / out) with half_pixel_centers."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        _flags("ResizeNearestNeighborV2", align_corners, half_pixel_centers)
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers
        self.name = "ResizeNearestNeighborV2"

    def __call__(self, x, size):
        _rank(self.name, x, 4, "(N, C, H, W)")
        mode = ("nearest_round" if self.align_corners else
                "nearest_exact" if self.half_pixel_centers else "nearest")
        return _rs.resize(x, _sizes(self.name, size, 2), mode, "half_pixel")


class ResizeBicubic(Primitive):
    """`ResizeBicubic(align_corners=False, half_pixel_centers=False)(images, size)`: the 4-D
    (N, C, H, W) images resized bicubically by MindSpore's tabulated kernel (Keys' A = -0.5
    without the outside taps with half_pixel_centers, else A = -0.75 with clamped taps; the
    source d * in / out, or d * (in - 1) / (out - 1) with align_corners)."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        _flags("ResizeBicubic", align_corners, half_pixel_centers)
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers
        self.name = "ResizeBicubic"

    def __call__(self, images, size):
        _rank(self.name, images, 4, "(N, C, H, W)")
        coordinate = ("align_corners" if self.align_corners else
                      "half_pixel" if self.half_pixel_centers else "asymmetric")
        return _rs.resize(images, _sizes(self.name, size, 2), "cubic_tabulated", coordinate)


def _upsample_3d(who, x, output_size, scales):
    """(sizes, source scales) of the 3-D upsampling primitives: output_size as given (scales
    in / out), or floor(in * scale) with the source step 1 / scale."""
    _rank(who, x, 5, "(N, C, D, H, W)")
    if (output_size is None) == (scales is None):
        raise ValueError(f"For '{who}', exactly one of output_size and scales must be given")
    if output_size is not None:
        return _sizes(who, output_size, 3), None
    sc = tuple(scales) if isinstance(scales, (tuple, list)) else None
    if sc is None or len(sc) != 3 or any(isinstance(s, bool) or not isinstance(
            s, numbers.Real) or s <= 0 for s in sc):
        raise ValueError(f"For '{who}', scales must be 3 positive numbers, got {scales!r}")
    sizes = tuple(int(_np.floor(n * float(s))) for n, s in zip(x.shape[2:], sc))
    return sizes, tuple(1.0 / float(s) for s in sc)


class UpsampleNearest3D(Primitive):
    """`UpsampleNearest3D()(x, output_size=None, scales=None)`: the 5-D x resized by nearest
    neighbour (source floor(d * step), the step in / out for output_size, 1 / scale for
    scales)."""

    def __init__(self):
        self.name = "UpsampleNearest3D"

    def __call__(self, x, output_size=None, scales=None):
        sizes, steps = _upsample_3d(self.name, x, output_size, scales)
        return _rs.resize(x, sizes, "nearest", "half_pixel", steps)


class UpsampleTrilinear3D(Primitive):
    """`UpsampleTrilinear3D(align_corners=False)(x, output_size=None, scales=None)`: the 5-D x
    resized trilinearly (half-pixel centres with the step in / out for output_size or
    1 / scale for scales; d * (in - 1) / (out - 1) with align_corners)."""

    def __init__(self, align_corners=False):
        if not isinstance(align_corners, bool):
            raise TypeError("For 'UpsampleTrilinear3D', align_corners must be bool")
        self.align_corners, self.name = align_corners, "UpsampleTrilinear3D"

    def __call__(self, x, output_size=None, scales=None):
        sizes, steps = _upsample_3d(self.name, x, output_size, scales)
        coordinate = "align_corners" if self.align_corners else "half_pixel"
        return _rs.resize(x, sizes, "linear", coordinate, steps)
