"""`dataset.vision`'s geometric ops with MindSpore's numbers: Resize (OpenCV 4's kernels; its
nearest rule, fixed-point uint8 bicubic and float 16-bit bicubic reproduced in numpy, where
newer OpenCV builds round differently), crops, pads and flips. The random ones draw their
parameters as MindSpore documents, from `vision_common.RandomDraws`."""
from __future__ import annotations

import math

import numpy as np

from .vision_common import (Border, Inter, RandomDraws, as_image, back_to_input_kind,
                            check_enum, check_prob, cv2_module, fill_triple, is_pil,
                            min_max_range, pil_image_module, size_pair, square)

_INTERPOLATING_DTYPES = (np.uint8, np.uint16, np.int16, np.float32, np.float64)


def shorter_side_size(h: int, w: int, size: int):
    """MindSpore's output (h, w) for an int size: the shorter side becomes `size`, the longer
    one floor(long / short * size) computed in float32 (as MindSpore's kernel does)."""
    f32 = np.float32
    if h <= w:
        return size, int(math.floor(f32(f32(w) / f32(h)) * f32(size)))
    return int(math.floor(f32(f32(h) / f32(w)) * f32(size))), size


def _cubic_taps(n_in: int, n_out: int):
    """Source indices (edge-clamped) and fixed-point weights (scale 2048) of OpenCV's bicubic
    (A = -0.75, half-pixel centres) along one axis, computed in float32 as OpenCV does."""
    f32 = np.float32
    f = ((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5).astype(f32)
    s = np.floor(f).astype(np.int64)
    x = (f - s).astype(f32)
    a = f32(-0.75)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    c3 = f32(1) - c0 - c1 - c2
    weights = np.rint(np.stack([c0, c1, c2, c3], 1).astype(f32) * f32(2048)).astype(np.int64)
    return np.clip(s[:, None] + np.arange(-1, 3)[None], 0, n_in - 1), weights


def _nearest(img: np.ndarray, oh: int, ow: int) -> np.ndarray:
    """OpenCV's INTER_NEAREST for any dtype: source index floor(i * in / out) (in double)."""
    h, w = img.shape[:2]
    ys = np.minimum(np.floor(np.arange(oh) * (1.0 / (oh / h))).astype(np.int64), h - 1)
    xs = np.minimum(np.floor(np.arange(ow) * (1.0 / (ow / w))).astype(np.int64), w - 1)
    return np.ascontiguousarray(img[ys][:, xs])


def _cubic_16bit(img: np.ndarray, oh: int, ow: int) -> np.ndarray:
    """OpenCV's INTER_CUBIC on 16-bit images: float32 weights and sums, taps added in order,
    rounded to the dtype at the end."""
    f32 = np.float32
    xi, _ = _cubic_taps(img.shape[1], ow)
    yi, _ = _cubic_taps(img.shape[0], oh)
    xw, yw = _float_cubic_weights(img.shape[1], ow), _float_cubic_weights(img.shape[0], oh)
    extra = (1,) * (img.ndim - 2)
    src = img.astype(f32)
    rows = np.zeros((img.shape[0], ow) + img.shape[2:], f32)
    for k in range(4):
        rows = rows + src[:, xi[:, k]] * xw[:, k].reshape((1, ow) + extra)
    out = np.zeros((oh, ow) + img.shape[2:], f32)
    for k in range(4):
        out = out + rows[yi[:, k]] * yw[:, k].reshape((oh, 1) + extra)
    info = np.iinfo(img.dtype)
    return np.clip(np.rint(out), info.min, info.max).astype(img.dtype)


def _float_cubic_weights(n_in: int, n_out: int) -> np.ndarray:
    f32 = np.float32
    f = ((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5).astype(f32)
    x = (f - np.floor(f)).astype(f32)
    a = f32(-0.75)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    c3 = f32(1) - c0 - c1 - c2
    return np.stack([c0, c1, c2, c3], 1).astype(f32)


def _cubic_uint8(img: np.ndarray, oh: int, ow: int) -> np.ndarray:
    """OpenCV's INTER_CUBIC on uint8 (integer weights, one rounding shift of 22 bits at the
    end), which MindSpore's numbers follow; newer OpenCV builds round differently."""
    xi, xw = _cubic_taps(img.shape[1], ow)
    yi, yw = _cubic_taps(img.shape[0], oh)
    extra = (1,) * (img.ndim - 2)
    rows = (img.astype(np.int64)[:, xi] * xw.reshape((1, ow, 4) + extra)).sum(2)
    out = (rows[yi] * yw.reshape((oh, 4, 1) + extra)).sum(1)
    return np.clip((out + (1 << 21)) >> 22, 0, 255).astype(np.uint8)


_CV2_INTER = {Inter.NEAREST: "INTER_NEAREST", Inter.BILINEAR: "INTER_LINEAR",
              Inter.BICUBIC: "INTER_CUBIC", Inter.AREA: "INTER_AREA"}


def resize_array(op: str, img: np.ndarray, oh: int, ow: int, interpolation: Inter) -> np.ndarray:
    """Resize an (H, W[, C]) numpy image to (oh, ow) with MindSpore's kernels."""
    if interpolation == Inter.ANTIALIAS:
        raise TypeError(f"{op}: Inter.ANTIALIAS works on PIL images only (as in MindSpore); "
                        f"convert with vision.ToPIL() first or choose another interpolation")
    if interpolation == Inter.PILCUBIC:
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
            raise ValueError(f"{op}: Inter.PILCUBIC needs a uint8 (H, W, 3) image, got "
                             f"{img.dtype} {img.shape}")
        image = pil_image_module()        # MindSpore's PILCUBIC is Pillow's bicubic, exactly
        return np.asarray(image.fromarray(img).resize((ow, oh), image.Resampling.BICUBIC))
    if interpolation == Inter.NEAREST:
        return _nearest(img, oh, ow)
    if img.dtype not in [np.dtype(d) for d in _INTERPOLATING_DTYPES]:
        raise TypeError(f"{op}: cannot interpolate a {img.dtype} image; use uint8, uint16, "
                        f"int16, float32 or float64 (transforms.TypeCast) or Inter.NEAREST")
    if interpolation == Inter.BICUBIC and img.dtype == np.uint8:
        return _cubic_uint8(img, oh, ow)
    if interpolation == Inter.BICUBIC and img.dtype in (np.uint16, np.int16):
        return _cubic_16bit(img, oh, ow)
    cv2 = cv2_module()
    out = cv2.resize(img, (ow, oh), interpolation=getattr(cv2, _CV2_INTER[interpolation]))
    return out.reshape(oh, ow, *img.shape[2:])


class Resize:
    """Resize to `size`: an int makes the shorter side `size` keeping the aspect ratio, (h, w)
    sets both. Numpy images (H, W[, C]) or batches (N, H, W, C) use OpenCV's kernels as
    MindSpore does; PIL images use Pillow's resize (MindSpore's Python path)."""

    def __init__(self, size, interpolation=Inter.BILINEAR):
        self.size = size_pair("Resize", size)
        self.interpolation = check_enum("Resize", "interpolation", interpolation, Inter)

    def _target(self, h, w):
        return shorter_side_size(h, w, self.size) if isinstance(self.size, int) else self.size

    def __call__(self, img):
        if is_pil(img):
            return self._resize_pil(img)
        img = as_image("Resize", img, 2, 4)
        if img.ndim == 4:
            return np.stack([self(one) for one in img]) if len(img) else img
        return resize_array("Resize", img, *self._target(*img.shape[:2]), self.interpolation)

    def _resize_pil(self, img):
        from .vision_pil import resample as pil_resample
        resample = pil_resample("Resize", self.interpolation)
        w, h = img.size
        if isinstance(self.size, int):
            if min(w, h) == self.size:
                return img
            ratio = w / h
            target = (self.size, int(self.size / ratio)) if w < h else \
                (int(self.size * ratio), self.size)
            return img.resize(target, resample)
        return img.resize(self.size[::-1], resample)


def _offset(total: int, part: int) -> int:
    """MindSpore's centred offset of a window of `part` in `total` (rounds half down)."""
    return (total - part) // 2


def crop_array(img: np.ndarray, top: int, left: int, h: int, w: int) -> np.ndarray:
    return np.ascontiguousarray(img[top:top + h, left:left + w])


_CV2_BORDER = {Border.CONSTANT: "BORDER_CONSTANT", Border.EDGE: "BORDER_REPLICATE",
               Border.REFLECT: "BORDER_REFLECT_101", Border.SYMMETRIC: "BORDER_REFLECT"}


def pad_array(img: np.ndarray, left: int, top: int, right: int, bottom: int, fill=(0, 0, 0),
              mode: Border = Border.CONSTANT) -> np.ndarray:
    """Pad with OpenCV's border rules; constant padding writes fill (one value per channel)."""
    if not (left or top or right or bottom):
        return img
    if img.dtype == np.bool_:                   # MindSpore pads bool images as uint8
        img = img.astype(np.uint8)
    if mode == Border.CONSTANT:
        c = 1 if img.ndim == 2 else img.shape[2]
        shape = (img.shape[0] + top + bottom, img.shape[1] + left + right) + img.shape[2:]
        out = np.empty(shape, img.dtype)
        out[...] = fill[0] if c != 3 else np.asarray(fill, img.dtype)
        out[top:top + img.shape[0], left:left + img.shape[1]] = img
        return out
    np_mode = {Border.EDGE: "edge", Border.REFLECT: "reflect", Border.SYMMETRIC: "symmetric"}
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
    return np.pad(img, widths, mode=np_mode[mode])


def padding_ltrb(op: str, padding):
    """MindSpore's padding: an int for all sides, (left/right, top/bottom) or (left, top,
    right, bottom)."""
    from .vision_common import _is_int
    if _is_int(padding):
        vals = (padding,) * 4
    elif isinstance(padding, (list, tuple)) and all(map(_is_int, padding)):
        if len(padding) == 2:
            vals = (padding[0], padding[1], padding[0], padding[1])
        elif len(padding) == 4:
            vals = tuple(padding)
        else:
            raise ValueError(f"{op}: padding should be an int or a sequence of 2 or 4 ints, "
                             f"got {padding!r}")
    else:
        raise TypeError(f"{op}: padding should be an int or a sequence of 2 or 4 ints, got "
                        f"{padding!r}")
    if any(v < 0 for v in vals):
        raise ValueError(f"{op}: padding must be >= 0, got {padding!r}")
    return tuple(int(v) for v in vals)


class Crop:
    """Crop the (h, w) window (size; an int: a square) whose top-left pixel is coordinates
    (top, left)."""

    def __init__(self, coordinates, size):
        from .vision_common import _is_int
        if not isinstance(coordinates, (list, tuple)) or len(coordinates) != 2 or \
                not all(_is_int(c) for c in coordinates):
            raise TypeError(f"Crop: coordinates must be (top, left) ints, got {coordinates!r}")
        if any(c < 0 for c in coordinates):
            raise ValueError(f"Crop: coordinates must be >= 0, got {coordinates!r}")
        self.coordinates = (int(coordinates[0]), int(coordinates[1]))
        self.size = square(size_pair("Crop", size))

    def __call__(self, img):
        x = as_image("Crop", img, pil=True)         # a PIL image comes back as an array
        (top, left), (h, w) = self.coordinates, self.size
        if top + h > x.shape[0] or left + w > x.shape[1]:
            raise ValueError(f"Crop: the window at {self.coordinates} of size {self.size} "
                             f"exceeds the image {x.shape[:2]}")
        return crop_array(x, top, left, h, w)


class CenterCrop:
    """Crop the centre (h, w) (an int: a square); a crop larger than the image pads it with 0
    around the image first, as MindSpore does."""

    def __init__(self, size):
        self.size = square(size_pair("CenterCrop", size))

    def __call__(self, img):
        if is_pil(img):
            h, w = self.size
            top = int(round((img.size[1] - h) / 2.0))
            left = int(round((img.size[0] - w) / 2.0))
            return img.crop((left, top, left + w, top + h))
        x = as_image("CenterCrop", img)
        h, w = self.size
        ph, pw = max(h - x.shape[0], 0), max(w - x.shape[1], 0)
        if ph or pw:                                # the larger half goes first
            x = pad_array(x, pw - pw // 2, ph - ph // 2, pw // 2, ph // 2)
        return crop_array(x, _offset(x.shape[0], h), _offset(x.shape[1], w), h, w)


class Pad:
    """Pad the sides: padding int / (left-right, top-bottom) / (left, top, right, bottom)."""

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        self.padding = padding_ltrb("Pad", padding)
        self.fill_value = fill_triple("Pad", fill_value)
        self.padding_mode = check_enum("Pad", "padding_mode", padding_mode, Border)

    def __call__(self, img):
        x = as_image("Pad", img, pil=True)
        return back_to_input_kind(img, pad_array(x, *self.padding, self.fill_value,
                                                 self.padding_mode))


class RandomCrop:
    """Pad by `padding` (and, with pad_if_needed, by the missing height/width on both sides),
    then crop (h, w) at a uniformly drawn position."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0,
                 padding_mode=Border.CONSTANT):
        self.size = square(size_pair("RandomCrop", size))
        self.padding = (0, 0, 0, 0) if padding is None else padding_ltrb("RandomCrop", padding)
        if not isinstance(pad_if_needed, bool):
            raise TypeError(f"RandomCrop: pad_if_needed must be a bool, got {pad_if_needed!r}")
        self.pad_if_needed = pad_if_needed
        self.fill_value = fill_triple("RandomCrop", fill_value)
        self.padding_mode = check_enum("RandomCrop", "padding_mode", padding_mode, Border)
        self._draws = RandomDraws("RandomCrop")

    def __call__(self, img):
        x = pad_array(as_image("RandomCrop", img, pil=True), *self.padding, self.fill_value,
                      self.padding_mode)
        h, w = self.size
        if self.pad_if_needed:
            dh, dw = max(h - x.shape[0], 0), max(w - x.shape[1], 0)
            x = pad_array(x, dw, dh, dw, dh, self.fill_value, self.padding_mode)
        if h > x.shape[0] or w > x.shape[1]:
            raise ValueError(f"RandomCrop: the crop size {self.size} is bigger than the "
                             f"(padded) image {x.shape[:2]}; pass padding or "
                             f"pad_if_needed=True")
        top = self._draws.integer(0, x.shape[0] - h)
        left = self._draws.integer(0, x.shape[1] - w)
        return back_to_input_kind(img, crop_array(x, top, left, h, w))


def _round_half_up(v: float) -> int:
    """C++'s std::round for the non-negative values of crop sizes and offsets."""
    return int(math.floor(v + 0.5))


class RandomResizedCrop:
    """Crop a random area (a fraction in `scale` of the image, aspect ratio drawn
    log-uniformly in `ratio`, up to `max_attempts` tries, else a centred crop clamped to the
    ratio range) and resize it to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.),
                 interpolation=Inter.BILINEAR, max_attempts=10):
        self.size = square(size_pair("RandomResizedCrop", size))
        self.scale = min_max_range("RandomResizedCrop", "scale", scale, low=0)
        self.ratio = min_max_range("RandomResizedCrop", "ratio", ratio, low=0)
        if self.ratio[0] <= 0:
            raise ValueError(f"RandomResizedCrop: ratio must be > 0, got {ratio!r}")
        self.interpolation = check_enum("RandomResizedCrop", "interpolation", interpolation,
                                        Inter)
        if not isinstance(max_attempts, int) or isinstance(max_attempts, bool) or \
                max_attempts < 1:
            raise ValueError(f"RandomResizedCrop: max_attempts must be an int >= 1, got "
                             f"{max_attempts!r}")
        self.max_attempts = max_attempts
        self._draws = RandomDraws("RandomResizedCrop")

    def crop_box(self, h: int, w: int):
        """(top, left, crop_h, crop_w) of one draw."""
        log_lo, log_hi = math.log(self.ratio[0]), math.log(self.ratio[1])
        for _ in range(self.max_attempts):
            area = h * w * self._draws.uniform(*self.scale)
            ratio = math.exp(self._draws.uniform(log_lo, log_hi))
            cw = _round_half_up(math.sqrt(area * ratio))
            ch = _round_half_up(cw / ratio)
            if 0 < cw <= w and 0 < ch <= h:
                return self._draws.integer(0, h - ch), self._draws.integer(0, w - cw), ch, cw
        img_ratio = w / h
        if img_ratio < self.ratio[0]:
            cw, ch = w, _round_half_up(w / self.ratio[0])
        elif img_ratio > self.ratio[1]:
            ch, cw = h, _round_half_up(h * self.ratio[1])
        else:
            ch, cw = h, w
        ch, cw = max(ch, 1), max(cw, 1)
        return _round_half_up((h - ch) / 2), _round_half_up((w - cw) / 2), ch, cw

    def __call__(self, img):
        if is_pil(img):                             # MindSpore's Pillow path
            from . import vision_pil
            d = self._draws
            top, left, ch, cw = vision_pil.resized_crop_box(
                *img.size, self.scale, self.ratio, self.max_attempts, d.uniform, d.integer)
            crop = img.crop((left, top, left + cw, top + ch))
            return crop.resize(self.size[::-1],
                               vision_pil.resample("RandomResizedCrop", self.interpolation))
        x = as_image("RandomResizedCrop", img)
        top, left, ch, cw = self.crop_box(*x.shape[:2])
        return resize_array("RandomResizedCrop", crop_array(x, top, left, ch, cw), *self.size,
                            self.interpolation)


def _hflip(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.flip(x, 2 if x.ndim == 4 else 1))


class HorizontalFlip:
    """Mirror left-right (a PIL image comes back as an array, as in MindSpore)."""

    def __call__(self, img):
        return _hflip(as_image("HorizontalFlip", img, 2, 4, pil=True))


class VerticalFlip:
    """Mirror top-bottom (one image, not batches; a PIL image comes back as an array)."""

    def __call__(self, img):
        return np.ascontiguousarray(as_image("VerticalFlip", img, pil=True)[::-1])


class RandomHorizontalFlip:
    """Mirror left-right with probability prob."""

    def __init__(self, prob=0.5):
        self.prob = check_prob("RandomHorizontalFlip", prob)
        self._draws = RandomDraws("RandomHorizontalFlip")

    def __call__(self, img):
        x = as_image("RandomHorizontalFlip", img, 2, 4, pil=True)
        return back_to_input_kind(img, _hflip(x)) if self._draws.happens(self.prob) else img


class RandomVerticalFlip:
    """Mirror top-bottom with probability prob."""

    def __init__(self, prob=0.5):
        self.prob = check_prob("RandomVerticalFlip", prob)
        self._draws = RandomDraws("RandomVerticalFlip")

    def __call__(self, img):
        x = as_image("RandomVerticalFlip", img, pil=True)
        if not self._draws.happens(self.prob):
            return img
        return back_to_input_kind(img, np.ascontiguousarray(x[::-1]))


__all__ = ["Resize", "Crop", "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop",
           "HorizontalFlip", "VerticalFlip", "RandomHorizontalFlip",
           "RandomVerticalFlip"]
