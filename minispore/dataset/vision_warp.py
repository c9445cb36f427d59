"""`dataset.vision`'s affine warps with MindSpore's numbers: Rotate / RandomRotation and
RandomAffine, OpenCV's warpAffine with MindSpore's matrices, centres and output sizes."""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import vision_pil
from .vision_common import (Inter, RandomDraws, as_image, check_enum, cv2_module, fill_triple,
                            is_pil, min_max_range)
from .vision_warp_kernel import warp_affine

def _warp(op: str, img: np.ndarray, matrix, size, resample: Inter, fill) -> np.ndarray:
    """OpenCV 4's warpAffine (vision_warp_kernel) with a constant border; OpenCV treats AREA
    as BILINEAR in warps."""
    kinds = {Inter.NEAREST: "nearest", Inter.BILINEAR: "linear", Inter.AREA: "linear",
             Inter.BICUBIC: "cubic"}
    if resample not in kinds:
        raise TypeError(f"{op}: resample={resample!r} is not supported on numpy images; use "
                        f"NEAREST, BILINEAR, BICUBIC or AREA")
    if img.dtype not in (np.uint8, np.float32, np.float64, np.int16, np.uint16):
        raise TypeError(f"{op}: cannot warp a {img.dtype} image; use uint8, uint16, int16, "
                        f"float32 or float64 (transforms.TypeCast)")
    return warp_affine(img, matrix, size, kinds[resample], fill)


def rotate_array(op: str, img: np.ndarray, degree: float, resample: Inter, expand: bool,
                 center, fill) -> np.ndarray:
    """Rotate counter-clockwise by `degree` around `center` ((x, y); default the middle of the
    pixel grid); expand grows the output to hold the whole rotated image."""
    cv2 = cv2_module()
    h, w = img.shape[:2]
    cx, cy = ((w - 1) * 0.5, (h - 1) * 0.5) if center is None else center
    rot = cv2.getRotationMatrix2D((float(np.float32(cx)), float(np.float32(cy))),
                                  float(np.float32(degree)), 1.0)
    size = (w, h)
    if expand:
        _, (bw, bh) = _bounding_box(w, h, degree)
        rot[0, 2] += bw / 2.0 - w / 2.0
        rot[1, 2] += bh / 2.0 - h / 2.0
        size = (int(round(bw)), int(round(bh)))
    return _warp(op, img, rot, size, resample, fill[::-1])


def _bounding_box(w: int, h: int, degree: float):
    """OpenCV's RotatedRect((0, 0), (w, h), degree).boundingRect2f(), in float32 like OpenCV:
    the (x, y) and (width, height) spanned by the rotated rectangle's corners."""
    f32 = np.float32
    angle = float(f32(degree)) * math.pi / 180.0
    b, a = f32(math.cos(angle)) * f32(0.5), f32(math.sin(angle)) * f32(0.5)
    w, h = f32(w), f32(h)
    p0 = (-a * h - b * w, b * h - a * w)
    p1 = (a * h - b * w, -b * h - a * w)
    p2, p3 = (-p0[0], -p0[1]), (-p1[0], -p1[1])
    xs, ys = [p[0] for p in (p0, p1, p2, p3)], [p[1] for p in (p0, p1, p2, p3)]
    return (min(xs), min(ys)), (f32(max(xs) - min(xs)), f32(max(ys) - min(ys)))


def _rotation_degrees(op: str, degrees):
    """MindSpore's degree range: a number d means (-d, d) after d % 360; a range is taken mod
    360 (its end moved up by 360 when it falls below its start); a range of >= 360 degrees is
    (-180, 180)."""
    if isinstance(degrees, numbers.Real) and not isinstance(degrees, bool):
        if degrees < 0:
            raise ValueError(f"{op}: degrees must be >= 0 as a single number, got {degrees}")
        d = degrees % 360
        return (-d, d)
    lo, hi = min_max_range(op, "degrees", degrees)
    if hi - lo >= 360:
        return (-180, 180)
    lo, hi = lo % 360, hi % 360
    return (lo, hi + 360) if lo > hi else (lo, hi)


def _center(op: str, center):
    if center is None:
        return None
    if not isinstance(center, (list, tuple)) or len(center) != 2 or \
            not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in center):
        raise TypeError(f"{op}: center must be a (x, y) pair of numbers, got {center!r}")
    return float(center[0]), float(center[1])


class Rotate:
    """Rotate counter-clockwise by `degrees`."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None,
                 fill_value=0):
        if not isinstance(degrees, numbers.Real) or isinstance(degrees, bool):
            raise TypeError(f"Rotate: degrees must be a number, got {degrees!r}")
        self.degrees = float(degrees)
        self.resample = check_enum("Rotate", "resample", resample, Inter)
        if not isinstance(expand, bool):
            raise TypeError(f"Rotate: expand must be a bool, got {expand!r}")
        self.expand, self.center = expand, _center("Rotate", center)
        self.fill_value = fill_triple("Rotate", fill_value)

    def __call__(self, img):
        x = as_image("Rotate", img, pil=True)       # MindSpore rotates a PIL image as an array
        return rotate_array("Rotate", x, self.degrees, self.resample, self.expand, self.center,
                            self.fill_value)


class RandomRotation:
    """Rotate by an angle drawn uniformly from `degrees` (a number d: (-d, d))."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None,
                 fill_value=0):
        self.degrees = _rotation_degrees("RandomRotation", degrees)
        self.resample = check_enum("RandomRotation", "resample", resample, Inter)
        if not isinstance(expand, bool):
            raise TypeError(f"RandomRotation: expand must be a bool, got {expand!r}")
        self.expand, self.center = expand, _center("RandomRotation", center)
        self.fill_value = fill_triple("RandomRotation", fill_value)
        self._draws = RandomDraws("RandomRotation")

    def __call__(self, img):
        if is_pil(img):                             # MindSpore's Pillow path
            return vision_pil.rotate("RandomRotation", img, self._draws.uniform(*self.degrees),
                                     self.resample, self.expand, self.center, self.fill_value)
        x = as_image("RandomRotation", img)
        return rotate_array("RandomRotation", x, self._draws.uniform(*self.degrees),
                            self.resample, self.expand, self.center, self.fill_value)


def affine_matrix(w: int, h: int, degrees: float, tx: float, ty: float, scale: float,
                  shear_x: float, shear_y: float):
    """MindSpore's forward affine matrix: rotation (counter-clockwise), scale and shears about
    the middle of the pixel grid, then a translation by (tx, ty) pixels."""
    f32 = np.float32
    a, sx, sy = math.radians(degrees), math.radians(shear_x), math.radians(-shear_y)
    m = [f32(scale * math.cos(a + sy) / math.cos(sy)),
         f32(scale * (-math.cos(a + sy) * math.tan(sx) / math.cos(sy) - math.sin(a))), 0.0,
         f32(scale * math.sin(a + sy) / math.cos(sy)),
         f32(scale * (-math.sin(a + sy) * math.tan(sx) / math.cos(sy) + math.cos(a))), 0.0]
    cx, cy = f32((w - 1) / 2.0), f32((h - 1) / 2.0)
    m[2] = f32((1 - m[0]) * cx - m[1] * cy + tx)
    m[5] = f32((1 - m[4]) * cy - m[3] * cx + ty)
    return [float(v) for v in m]


class RandomAffine:
    """Rotate by an angle from `degrees`, translate by fractions of the width/height drawn from
    `translate` ((min_x, max_x) or (min_x, max_x, min_y, max_y); not rounded to pixels),
    scale by a factor from `scale` and shear by angles from `shear` (a number s: x-shear in
    (-s, s); (min_x, max_x) or (min_x, max_x, min_y, max_y))."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 resample=Inter.NEAREST, fill_value=0):
        op = "RandomAffine"
        if isinstance(degrees, numbers.Real) and not isinstance(degrees, bool):
            if degrees < 0:
                raise ValueError(f"{op}: degrees must be >= 0 as a single number, got {degrees}")
            self.degrees = (-float(degrees), float(degrees))
        else:
            self.degrees = min_max_range(op, "degrees", degrees)
        self.translate = self._ranges(op, "translate", translate, -1.0, 1.0)
        self.scale = (1.0, 1.0) if scale is None else min_max_range(op, "scale", scale, low=0)
        if scale is not None and self.scale[1] <= 0:
            raise ValueError(f"{op}: scale[1] must be > 0, got {scale!r}")
        if isinstance(shear, numbers.Real) and not isinstance(shear, bool):
            if shear <= 0:
                raise ValueError(f"{op}: shear must be > 0 as a single number, got {shear}")
            shear = (-shear, shear)
        self.shear = self._ranges(op, "shear", shear, None, None)
        self.resample = check_enum(op, "resample", resample, Inter)
        self.fill_value = fill_triple(op, fill_value)
        self._draws = RandomDraws(op)

    @staticmethod
    def _ranges(op, name, value, low, high):
        if value is None:
            return (0.0, 0.0, 0.0, 0.0)
        if not isinstance(value, (list, tuple)) or len(value) not in (2, 4) or not all(
                isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
            raise TypeError(f"{op}: {name} must be a sequence of 2 or 4 numbers, got {value!r}")
        vals = tuple(float(v) for v in value) + ((0.0, 0.0) if len(value) == 2 else ())
        if vals[0] > vals[1] or vals[2] > vals[3]:
            raise ValueError(f"{op}: {name} must be (min_x, max_x[, min_y, max_y]) with min <= "
                             f"max, got {value!r}")
        if low is not None and any(not low <= v <= high for v in vals):
            raise ValueError(f"{op}: {name} values must lie in [{low}, {high}], got {value!r}")
        return vals

    def __call__(self, img):
        if is_pil(img):                             # MindSpore's Pillow path
            return vision_pil.random_affine("RandomAffine", img, self.degrees, self.translate,
                                            self.scale, self.shear, self.resample,
                                            self.fill_value, self._draws.uniform)
        x = as_image("RandomAffine", img)
        h, w = x.shape[:2]
        d = self._draws
        degrees = d.uniform(*self.degrees)
        tx = d.uniform(self.translate[0] * w, self.translate[1] * w)
        ty = d.uniform(self.translate[2] * h, self.translate[3] * h)
        scale = d.uniform(*self.scale)
        shear_x, shear_y = d.uniform(*self.shear[:2]), d.uniform(*self.shear[2:])
        matrix = affine_matrix(w, h, degrees, tx, ty, scale, shear_x, shear_y)
        return _warp("RandomAffine", x, matrix, (w, h), self.resample, self.fill_value)


__all__ = ["Rotate", "RandomRotation", "RandomAffine"]
