"""`mindspore.dataset.vision`: image ops on numpy HWC images (as MindSpore's decoders produce)
and, where MindSpore takes them, PIL images. This module holds decoding and the type/layout
ops (Decode, RandomCropDecodeResize, ToTensor, ToPIL, ToNumpy, Rescale, Normalize, HWC2CHW)
and re-exports the geometric (vision_geometry), warping (vision_warp) and colour
(vision_color) ops, so every op is importable as `minispore.dataset.vision.<Name>`."""
from __future__ import annotations

import numpy as np

from .vision_common import Border, Inter, as_image, is_pil, pil_image_module
from .vision_color import (AdjustBrightness, AdjustContrast, AdjustHue, AdjustSaturation,
                           Equalize, Grayscale, Invert, RandomColorAdjust, RandomGrayscale)
from .vision_geometry import (CenterCrop, Crop, HorizontalFlip, Pad, RandomCrop,
                              RandomHorizontalFlip, RandomResizedCrop, RandomVerticalFlip, Resize,
                              VerticalFlip)
from .vision_warp import RandomAffine, RandomRotation, Rotate


_ARRAY_FORMATS = ("JPEG", "MPO", "PNG", "BMP", "TIFF")


class Decode:
    """Decode an encoded image (a 1-D uint8 array or bytes) into an RGB (H, W, 3) uint8 array
    (JPEG, PNG, BMP, TIFF; grey and palette images become RGB, alpha is dropped: the pixels of
    MindSpore's decoder), or a PIL RGB image with to_pil=True (any format Pillow reads)."""

    def __init__(self, to_pil=False):
        if not isinstance(to_pil, bool):
            raise TypeError(f"Decode: to_pil must be a bool, got {to_pil!r}")
        self.to_pil = to_pil

    def __call__(self, img):
        import io
        if isinstance(img, (bytes, bytearray, memoryview)):
            img = np.frombuffer(bytes(img), np.uint8)
        if not isinstance(img, np.ndarray):
            raise TypeError(f"Decode: the input should be the encoded bytes as a 1-D uint8 "
                            f"numpy array, got {type(img).__name__}")
        if img.ndim != 1:
            raise TypeError(f"Decode: the encoded image should be a 1-D array, got shape "
                            f"{img.shape}")
        if img.dtype != np.uint8:
            raise TypeError(f"Decode: the encoded image should be uint8, got {img.dtype}")
        image = pil_image_module()
        try:
            pil = image.open(io.BytesIO(img.tobytes()))
            pil.load()
        except Exception as exc:        # Pillow raises several kinds for corrupt data
            raise RuntimeError(f"Decode: image decode failed ({len(img)} bytes that are not "
                               f"a readable JPEG/PNG/BMP/GIF/TIFF image: {exc})") from None
        if not self.to_pil and pil.format not in _ARRAY_FORMATS:
            raise RuntimeError(f"Decode: unsupported image type [{str(pil.format).lower()}] "
                               f"for a numpy result (MindSpore decodes JPEG, PNG, BMP and TIFF "
                               f"to arrays); use Decode(to_pil=True)")
        pil = pil.convert("RGB")
        return pil if self.to_pil else np.array(pil)         # one copy, writable


class RandomCropDecodeResize:
    """Decode, then crop a random area and resize it exactly as RandomResizedCrop does (one
    op for the common ImageNet recipe)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.),
                 interpolation=Inter.BILINEAR, max_attempts=10):
        self._crop = RandomResizedCrop(size, scale, ratio, interpolation, max_attempts)
        self._crop._draws = type(self._crop._draws)("RandomCropDecodeResize")
        self.size, self.scale, self.ratio = self._crop.size, self._crop.scale, self._crop.ratio
        self.interpolation, self.max_attempts = interpolation, max_attempts

    def __call__(self, img):
        if not (isinstance(img, (bytes, bytearray)) or
                (isinstance(img, np.ndarray) and img.ndim == 1 and img.dtype == np.uint8)):
            raise TypeError(f"RandomCropDecodeResize: the input should be an encoded image (a "
                            f"1-D uint8 array), got {getattr(img, 'shape', type(img))}; use "
                            f"RandomResizedCrop on decoded images")
        return self._crop(Decode()(img))


class ToPIL:
    """A numpy (H, W[, C]) image as a PIL image (a PIL image passes through)."""

    def __call__(self, img):
        if is_pil(img):
            return img
        x = as_image("ToPIL", img, pil=True)
        if x.ndim == 3 and x.shape[2] == 1:
            x = x[:, :, 0]
        try:
            return pil_image_module().fromarray(x)
        except TypeError:
            raise TypeError(f"ToPIL: Pillow cannot hold a {x.dtype} image of shape {x.shape}; "
                            f"cast it to uint8 first") from None


class ToNumpy:
    """A PIL image as a numpy array (a numpy array passes through)."""

    def __call__(self, img):
        return np.asarray(img).copy() if is_pil(img) else np.asarray(img)


class ToTensor:
    """(H, W[, C]) image -> (C, H, W) of `output_type`, every value divided by 255 (whatever
    the input dtype, as MindSpore does)."""

    def __init__(self, output_type=np.float32):
        from .transforms import np_dtype
        self.output_type = np_dtype("ToTensor", output_type, name="output_type")

    def __call__(self, img):
        x = as_image("ToTensor", img, pil=True)
        if x.ndim == 2:
            x = x[:, :, None]
        out = x.astype(np.float32) / np.float32(255)
        return np.ascontiguousarray(out.transpose(2, 0, 1)).astype(self.output_type)


class ToType:
    """Cast the image to data_type (numpy's casting, as MindSpore's)."""

    def __init__(self, data_type):
        from .transforms import np_dtype
        self.data_type = np_dtype("ToType", data_type)

    def __call__(self, img):
        return np.asarray(img).astype(self.data_type)   # a PIL image comes back as an array


class Rescale:
    """image * rescale + shift, as float32."""

    def __init__(self, rescale, shift):
        self.rescale, self.shift = float(rescale), float(shift)

    def __call__(self, img):
        x = np.asarray(img, np.float32)
        return (x * np.float32(self.rescale) + np.float32(self.shift)).astype(np.float32)


class Normalize:
    """(image - mean) / std per channel, as float32; channels last unless is_hwc=False. mean
    must lie in [0, 255] and std in (0, 255], as MindSpore checks."""

    def __init__(self, mean, std, is_hwc=True):
        self.mean, self.std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        if self.mean.ndim != 1 or self.mean.shape != self.std.shape:
            raise ValueError(f"Normalize: mean and std must be sequences of one value per "
                             f"channel of equal length, got {mean!r} and {std!r}")
        if np.any(self.std <= 0) or np.any(self.std > 255):
            raise ValueError(f"Normalize: std must be > 0 and <= 255, got {std!r}")
        if np.any(self.mean < 0) or np.any(self.mean > 255):
            raise ValueError(f"Normalize: mean must lie in [0, 255], got {mean!r}")
        if not isinstance(is_hwc, bool):
            raise TypeError(f"Normalize: is_hwc must be a bool, got {is_hwc!r}")
        self.is_hwc = is_hwc

    def __call__(self, img):
        img = np.asarray(img, np.float32)
        if img.ndim not in (2, 3, 4):
            raise ValueError(f"Normalize: the image must be 2-D, 3-D "
                             f"({'HWC' if self.is_hwc else 'CHW'}) or a 4-D batch, got shape "
                             f"{img.shape}")
        c = 1 if img.ndim == 2 else (img.shape[-1] if self.is_hwc else img.shape[-3])
        if c != len(self.mean):
            raise ValueError(f"Normalize: the image has {c} channel(s) but mean/std have "
                             f"{len(self.mean)} value(s)")
        shape = () if img.ndim == 2 else ((c,) if self.is_hwc else (c, 1, 1))
        mean, std = self.mean.reshape(shape or (1,)), self.std.reshape(shape or (1,))
        return ((img - mean) / std).astype(np.float32)


class HWC2CHW:
    """Move the channel axis first: (H, W, C) -> (C, H, W); a 2-D image passes through."""

    def __call__(self, img):
        img = np.asarray(img)
        if img.ndim == 2:
            return img
        if img.ndim != 3:
            raise ValueError(f"HWC2CHW: the image must be 2-D or 3-D (H, W, C), got shape "
                             f"{img.shape}")
        return np.ascontiguousarray(img.transpose(2, 0, 1))


__all__ = ["Inter", "Border", "Decode", "RandomCropDecodeResize", "Crop", "ToPIL", "ToNumpy",
           "ToTensor", "Rescale", "Normalize", "HWC2CHW", "Resize", "CenterCrop", "Pad",
           "RandomCrop", "RandomResizedCrop", "HorizontalFlip", "VerticalFlip",
           "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "Rotate",
           "RandomAffine", "RandomColorAdjust", "Equalize", "ToType",
           "AdjustBrightness", "AdjustContrast", "AdjustSaturation", "AdjustHue",
           "Invert", "Grayscale", "RandomGrayscale"]
