"""The PIL-image paths of `dataset.vision`'s ops: MindSpore runs a PIL image through Pillow's
operations (its py_transforms_util), with Python's rounding, so these reproduce those steps
(Pillow's ImageEnhance / ImageOps / rotate / resize) rather than the OpenCV kernels the numpy
paths follow."""
from __future__ import annotations

import math

import numpy as np

from .vision_common import Inter, pil_image_module


def resample(op: str, interpolation: Inter):
    """Pillow's filter for a MindSpore Inter (AREA and PILCUBIC exist for numpy images only)."""
    image = pil_image_module()
    table = {Inter.NEAREST: image.Resampling.NEAREST, Inter.ANTIALIAS: image.Resampling.LANCZOS,
             Inter.BILINEAR: image.Resampling.BILINEAR, Inter.BICUBIC: image.Resampling.BICUBIC}
    if interpolation not in table:
        raise TypeError(f"{op}: {interpolation!r} works on numpy images only (as in "
                        f"MindSpore); convert the PIL image with np.asarray first")
    return table[interpolation]


def enhance(kind: str, img, factor: float):
    """ImageEnhance.<kind>(img).enhance(factor): Brightness, Contrast or Color."""
    from PIL import ImageEnhance
    return getattr(ImageEnhance, kind)(img).enhance(factor)


def adjust_hue(img, factor: float):
    """Pillow's HSV hue plus uint8(factor * 255), wrapping (grey modes pass through)."""
    image = pil_image_module()
    if img.mode in {"L", "1", "I", "F"}:
        return img
    hue, saturation, value = img.convert("HSV").split()
    shifted = np.array(hue, dtype=np.uint8)
    shifted += np.uint8(int(factor * 255) % 256)   # MindSpore's np.uint8(factor * 255)
    hue = image.fromarray(shifted, "L")
    return image.merge("HSV", (hue, saturation, value)).convert(img.mode)


def color_adjust(img, factors, order):
    """Brightness, contrast, saturation and hue (all four, as MindSpore's PIL path does) in
    `order` (a permutation of 0..3)."""
    steps = [lambda x: enhance("Brightness", x, factors[0]),
             lambda x: enhance("Contrast", x, factors[1]),
             lambda x: enhance("Color", x, factors[2]),
             lambda x: adjust_hue(x, factors[3])]
    for i in order:
        img = steps[i](img)
    return img


def equalize(img):
    from PIL import ImageOps
    return ImageOps.equalize(img)


def rotate(op: str, img, angle: float, interpolation: Inter, expand: bool, center, fill):
    """Pillow's rotate by angle % 360 (counter-clockwise) with MindSpore's checks."""
    angle = angle % 360.0
    if interpolation == Inter.ANTIALIAS and (angle not in (0, 90, 180, 270) or center):
        raise ValueError(f"{op}: with Inter.ANTIALIAS, center must be None and the angle a "
                         f"multiple of 90")
    return img.rotate(angle, resample(op, interpolation), expand, center, fillcolor=fill)


def resized_crop_box(w: int, h: int, scale, ratio, attempts: int, uniform, integer):
    """MindSpore's PIL-path crop box (top, left, height, width): Python's round (half to
    even) and a centred fallback."""
    area = w * h
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(attempts):
        crop_area = uniform(scale[0], scale[1]) * area
        aspect = math.exp(uniform(*log_ratio))
        cw = int(round(math.sqrt(crop_area * aspect)))
        ch = int(round(cw / aspect))
        if 0 < cw <= w and 0 < ch <= h:
            return integer(0, h - ch), integer(0, w - cw), ch, cw
    img_ratio = w / h
    if img_ratio < ratio[0]:
        cw, ch = w, int(round(w / ratio[0]))
    elif img_ratio > ratio[1]:
        ch, cw = h, int(round(h * ratio[1]))
    else:
        cw, ch = w, h
    return int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0)), ch, cw


def random_affine(op: str, img, degrees, translate, scale, shear, interpolation: Inter, fill,
                  uniform):
    """MindSpore's PIL-path RandomAffine: translate[0] / translate[1] are the largest x / y
    shifts (fractions, drawn in (-t, t) and rounded), the centre is (w / 2 + 0.5,
    h / 2 + 0.5), and Pillow >= 10 gets no fill colour (MindSpore compares version strings:
    '10' < '5'), all as MindSpore 2.10 does."""
    image = pil_image_module()
    w, h = img.size
    angle = uniform(*degrees)
    tx = float(np.round(uniform(-translate[0] * w, translate[0] * w)))
    ty = float(np.round(uniform(-translate[1] * h, translate[1] * h)))
    factor = uniform(*scale)
    sx, sy = uniform(shear[0], shear[1]), uniform(shear[2], shear[3])
    cx, cy = w * 0.5 + 0.5, h * 0.5 + 0.5
    angle, sx, sy = math.radians(angle), math.radians(sx), math.radians(sy)
    inv = 1.0 / factor
    d = math.cos(angle + sx) * math.cos(angle + sy) + math.sin(angle + sx) * math.sin(angle + sy)
    m = [math.cos(angle + sx), math.sin(angle + sx), 0, -math.sin(angle + sy),
         math.cos(angle + sy), 0]
    m = [inv / d * v for v in m]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
    m[2] += cx
    m[5] += cy
    kwargs = {"fillcolor": fill} if image.__version__ >= "5" else {}
    return img.transform((w, h), image.Transform.AFFINE, m, resample(op, interpolation),
                         **kwargs)
