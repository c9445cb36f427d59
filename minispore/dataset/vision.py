"""`mindspore.dataset.vision` in small: Rescale, Normalize and HWC2CHW on numpy images (HWC
as MindSpore's decoders produce). Anything else raises instead of running differently."""
from __future__ import annotations

import numpy as np


class Rescale:
    """image * rescale + shift, as float32."""

    def __init__(self, rescale, shift):
        self.rescale, self.shift = float(rescale), float(shift)

    def __call__(self, img):
        return (np.asarray(img, np.float32) * self.rescale + self.shift).astype(np.float32)


class Normalize:
    """(image - mean) / std per channel; channels last unless is_hwc=False."""

    def __init__(self, mean, std, is_hwc=True):
        self.mean, self.std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        if self.mean.ndim != 1 or self.mean.shape != self.std.shape:
            raise ValueError(f"Normalize: mean and std must be sequences of one value per "
                             f"channel of equal length, got {mean!r} and {std!r}")
        if np.any(self.std <= 0):
            raise ValueError(f"Normalize: std must be > 0, got {std!r}")
        self.is_hwc = is_hwc

    def __call__(self, img):
        img = np.asarray(img, np.float32)
        if img.ndim != 3:
            raise ValueError(f"Normalize: the image must be 3-D ({'HWC' if self.is_hwc else 'CHW'}),"
                             f" got shape {img.shape}; add a channel axis first")
        c = img.shape[-1] if self.is_hwc else img.shape[0]
        if c != len(self.mean):
            raise ValueError(f"Normalize: the image has {c} channel(s) but mean/std have "
                             f"{len(self.mean)} value(s)")
        shape = (1, 1, c) if self.is_hwc else (c, 1, 1)
        return ((img - self.mean.reshape(shape)) / self.std.reshape(shape)).astype(np.float32)


class HWC2CHW:
    """Move the channel axis first: (H, W, C) -> (C, H, W)."""

    def __call__(self, img):
        img = np.asarray(img)
        if img.ndim != 3:
            raise ValueError(f"HWC2CHW: the image must be 3-D (H, W, C), got shape {img.shape}")
        return np.ascontiguousarray(img.transpose(2, 0, 1))


__all__ = ["Rescale", "Normalize", "HWC2CHW"]
