"""`dataset.vision`'s colour ops with MindSpore's numbers: RandomColorAdjust and the fixed
Adjust{Brightness,Contrast,Saturation,Hue} (blended and rounded as MindSpore's OpenCV kernels
do), Invert and Equalize."""
from __future__ import annotations

import numpy as np

from . import vision_pil
from .vision_common import (RandomDraws, as_image, check_channels, cv2_module, is_pil,
                            min_max_range)

_F32 = np.float32


def _to_dtype(value: np.ndarray, dtype) -> np.ndarray:
    """A float32 result back to the image's dtype: uint8 rounds half to even and saturates
    (OpenCV's saturate_cast)."""
    if dtype == np.uint8:
        return np.clip(np.rint(value), 0, 255).astype(np.uint8)
    return value.astype(dtype)


def blend(img: np.ndarray, other: np.ndarray, alpha: float) -> np.ndarray:
    """img * alpha + other * (1 - alpha) as MindSpore computes it (an OpenCV MatExpr, i.e.
    addWeighted(other, 1 - alpha, img, alpha): other * (1 - alpha) fused-multiply-added to
    img * alpha in float32), then rounded to the image's dtype."""
    fa = _F32(alpha)
    fb = _F32(1.0 - np.float64(fa))
    scaled = (img.astype(_F32) * fa).astype(np.float64)
    fused = (np.asarray(other, np.float64) * np.float64(fb) + scaled).astype(_F32)
    return _to_dtype(fused, img.dtype)


def _rgb(op: str, img) -> np.ndarray:
    x = as_image(op, img, 3, 3, dtypes=(np.uint8, np.float32))
    check_channels(op, x, (3,))
    return x


def adjust_brightness(img: np.ndarray, factor: float) -> np.ndarray:
    return _to_dtype(img.astype(_F32) * _F32(factor), img.dtype)


def adjust_contrast(img: np.ndarray, factor: float) -> np.ndarray:
    """Blend with the mean of the grey image (rounded to an integer for uint8 images)."""
    cv2 = cv2_module()
    mean = cv2.mean(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY))[0]
    if img.dtype == np.uint8:
        mean = float(np.clip(np.rint(mean), 0, 255))
    return blend(img, np.float64(_F32(mean)), factor)


def adjust_saturation(img: np.ndarray, factor: float) -> np.ndarray:
    """Blend with the grey image."""
    cv2 = cv2_module()
    grey = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    return blend(img, cv2.cvtColor(grey, cv2.COLOR_GRAY2RGB), factor)


def adjust_hue(img: np.ndarray, factor: float, op: str = "RandomColorAdjust") -> np.ndarray:
    """Shift OpenCV's full-range (0..255) hue by int(factor * 255), wrapping around."""
    if img.dtype != np.uint8:
        raise TypeError(f"{op}: hue works on uint8 images only (MindSpore's "
                        f"kernel gives wrong numbers for {img.dtype}); cast to uint8 first")
    cv2 = cv2_module()
    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL)
    hsv[..., 0] = ((hsv[..., 0].astype(np.int64) + int(factor * 255)) % 256).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB_FULL)


class RandomColorAdjust:
    """Draw a brightness, contrast and saturation factor uniformly from their (min, max) ranges
    (a single number v means (max(0, 1 - v), 1 + v)) and a hue shift from hue's range (v
    means (-v, v), within [-0.5, 0.5]), and apply them to an RGB image in a random order; a
    range (1, 1) (or (0, 0) for hue) leaves that property unchanged."""

    def __init__(self, brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0)):
        op = "RandomColorAdjust"
        self.brightness = min_max_range(op, "brightness", brightness, low=0, centre=1)
        self.contrast = min_max_range(op, "contrast", contrast, low=0, centre=1)
        self.saturation = min_max_range(op, "saturation", saturation, low=0, centre=1)
        self.hue = min_max_range(op, "hue", hue, low=-0.5, high=0.5, centre=0)
        self._draws = RandomDraws(op)

    def __call__(self, img):
        if is_pil(img):                             # MindSpore's Pillow path
            d = self._draws
            factors = [d.uniform(*self.brightness), d.uniform(*self.contrast),
                       d.uniform(*self.saturation), d.uniform(*self.hue)]
            return vision_pil.color_adjust(img, factors, d.generator().permutation(4))
        x = _rgb("RandomColorAdjust", img)
        steps = [(self.brightness, 1, adjust_brightness), (self.contrast, 1, adjust_contrast),
                 (self.saturation, 1, adjust_saturation), (self.hue, 0, adjust_hue)]
        for i in self._draws.generator().permutation(len(steps)):   # a random order, as
            (lo, hi), unchanged, apply = steps[i]                     # MindSpore applies them
            if (lo, hi) != (unchanged, unchanged):
                x = apply(x, self._draws.uniform(lo, hi))
        return x


class _Adjust:
    """One colour adjustment by a fixed factor."""
    _name, _field, _low, _high = "", "", 0.0, None

    def __init__(self, factor):
        from .vision_common import _is_number
        if not _is_number(factor):
            raise TypeError(f"{self._name}: {self._field} must be a number, got {factor!r}")
        if factor < self._low or (self._high is not None and factor > self._high):
            raise ValueError(f"{self._name}: {self._field} must lie in [{self._low}, "
                             f"{self._high if self._high is not None else 'inf'}], got {factor}")
        setattr(self, self._field, float(factor))

    _pil_kind = ""

    def __call__(self, img):
        if is_pil(img):                             # MindSpore's Pillow path
            factor = getattr(self, self._field)
            if self._name == "AdjustHue":
                return vision_pil.adjust_hue(img, factor)
            return vision_pil.enhance(self._pil_kind, img, factor)
        x, factor = _rgb(self._name, img), getattr(self, self._field)
        if self._name == "AdjustHue":
            return adjust_hue(x, factor, self._name)
        return type(self)._apply(x, factor)


class AdjustBrightness(_Adjust):
    """Multiply by brightness_factor (>= 0)."""
    _name, _field, _apply = "AdjustBrightness", "brightness_factor", staticmethod(adjust_brightness)
    _pil_kind = "Brightness"

    def __init__(self, brightness_factor):
        super().__init__(brightness_factor)


class AdjustContrast(_Adjust):
    """Blend with the mean grey level by contrast_factor (>= 0)."""
    _name, _field, _apply = "AdjustContrast", "contrast_factor", staticmethod(adjust_contrast)
    _pil_kind = "Contrast"

    def __init__(self, contrast_factor):
        super().__init__(contrast_factor)


class AdjustSaturation(_Adjust):
    """Blend with the grey image by saturation_factor (>= 0)."""
    _name, _field, _pil_kind = "AdjustSaturation", "saturation_factor", "Color"
    _apply = staticmethod(adjust_saturation)

    def __init__(self, saturation_factor):
        super().__init__(saturation_factor)


class AdjustHue(_Adjust):
    """Shift the hue by hue_factor (in [-0.5, 0.5]) of a turn."""
    _name, _field, _low, _high = "AdjustHue", "hue_factor", -0.5, 0.5
    _apply = staticmethod(adjust_hue)

    def __init__(self, hue_factor):
        super().__init__(hue_factor)


class Invert:
    """255 - image, for RGB images."""

    def __call__(self, img):
        from .vision_common import back_to_input_kind
        x = as_image("Invert", img, 3, 3, dtypes=(np.uint8, np.float32), pil=True)
        check_channels("Invert", x, (3,))
        out = (np.float32(255) - x).astype(x.dtype) if x.dtype != np.uint8 else 255 - x
        return back_to_input_kind(img, out)


def _pil_only(op: str, img):
    from .vision_common import is_pil
    if not is_pil(img):
        raise TypeError(f"{op}: MindSpore takes PIL images only here; convert with "
                        f"vision.ToPIL() first")
    return img


def _grey_pil(img, channels: int):
    grey = img.convert("L")
    return grey if channels == 1 else grey.convert("RGB")


class Grayscale:
    """A PIL image in grey, with 1 or 3 (equal) channels (Pillow's convert('L'))."""

    def __init__(self, num_output_channels=1):
        if num_output_channels not in (1, 3) or isinstance(num_output_channels, bool):
            raise ValueError(f"Grayscale: num_output_channels must be 1 or 3, got "
                             f"{num_output_channels!r}")
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        return _grey_pil(_pil_only("Grayscale", img), self.num_output_channels)


class RandomGrayscale:
    """With probability prob, a PIL image in grey (keeping 1 channel for 'L' images, else 3)."""

    def __init__(self, prob=0.1):
        from .vision_common import check_prob
        self.prob = check_prob("RandomGrayscale", prob)
        self._draws = RandomDraws("RandomGrayscale")

    def __call__(self, img):
        img = _pil_only("RandomGrayscale", img)
        if not self._draws.happens(self.prob):
            return img
        return _grey_pil(img, 1 if img.mode == "L" else 3)


class Equalize:
    """Histogram equalisation of each channel of a uint8 image (OpenCV's equalizeHist)."""

    def __call__(self, img):
        if is_pil(img):                             # MindSpore's Pillow path
            return vision_pil.equalize(img)
        x = as_image("Equalize", img, dtypes=(np.uint8,))
        check_channels("Equalize", x, (1, 3))
        cv2 = cv2_module()
        if x.ndim == 2:
            return cv2.equalizeHist(x)
        return np.stack([cv2.equalizeHist(np.ascontiguousarray(x[:, :, c]))
                         for c in range(x.shape[2])], axis=2)


__all__ = ["RandomColorAdjust", "Equalize", "AdjustBrightness", "AdjustContrast",
           "AdjustSaturation", "AdjustHue", "Invert", "Grayscale", "RandomGrayscale"]
