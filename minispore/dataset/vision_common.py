"""What every `dataset.vision` op shares: the Inter and Border enums, OpenCV's lazy import, the
checks of an input image (numpy HWC/HW or PIL), MindSpore's rules for sizes and ranges, and the
random draws of the random ops (seeded from `dataset.config`)."""
from __future__ import annotations

import contextlib
import contextvars
import numbers
import zlib
from enum import Enum, IntEnum

import numpy as np

from . import config


class Inter(IntEnum):
    """Interpolation modes, MindSpore's values (LINEAR is BILINEAR, CUBIC is BICUBIC)."""
    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, Enum):
    """Padding modes: CONSTANT (fill_value), EDGE (repeat the edge), REFLECT (mirror without the
    edge pixel), SYMMETRIC (mirror with it)."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


def cv2_module():
    """OpenCV, imported when an op first needs it."""
    try:
        import cv2
    except ImportError:
        raise ImportError('dataset.vision needs OpenCV for its geometric and colour ops: '
                          'pip install "minispore[vision]"') from None
    return cv2


def pil_image_module():
    try:
        from PIL import Image
    except ImportError:
        raise ImportError('dataset.vision needs Pillow for PIL images: '
                          'pip install "minispore[vision]"') from None
    return Image


def is_pil(img) -> bool:
    """Whether `img` is a PIL image (without importing Pillow when it is not loaded)."""
    import sys
    pil = sys.modules.get("PIL.Image")
    return pil is not None and isinstance(img, pil.Image)


def as_image(op: str, img, min_ndim: int = 2, max_ndim: int = 3, dtypes=None,
             pil: bool = False) -> np.ndarray:
    """`img` as a numpy image of rank min_ndim..max_ndim ((H, W) or (H, W, C)), else an error
    naming the op. A PIL image is taken only by the ops (pil=True) whose pixels MindSpore's
    Pillow path computes the same way."""
    if is_pil(img):
        if not pil:
            raise TypeError(f"{op}: MindSpore runs PIL images through Pillow's version of this "
                            f"op, which minispore does not reproduce; pass the image as a numpy "
                            f"array (np.asarray(img) or vision.ToNumpy())")
        img = np.asarray(img)
    if not isinstance(img, np.ndarray):
        raise TypeError(f"{op}: the input should be a numpy array or a PIL image, got "
                        f"{type(img).__name__}")
    if not min_ndim <= img.ndim <= max_ndim:
        want = "(H, W) or (H, W, C)" if (min_ndim, max_ndim) == (2, 3) else \
            f"of rank {min_ndim}..{max_ndim}"
        raise ValueError(f"{op}: the image should be {want}, got shape {img.shape}")
    if img.ndim >= 2 and 0 in img.shape[:2]:
        raise ValueError(f"{op}: the image is empty, shape {img.shape}")
    if dtypes is not None and img.dtype not in [np.dtype(d) for d in dtypes]:
        raise TypeError(f"{op}: the image dtype should be one of "
                        f"{[np.dtype(d).name for d in dtypes]}, got {img.dtype}; cast it with "
                        f"transforms.TypeCast first")
    return img


def check_channels(op: str, img: np.ndarray, allowed) -> None:
    c = 1 if img.ndim == 2 else img.shape[2]
    if c not in allowed:
        raise ValueError(f"{op}: the image should have {' or '.join(map(str, allowed))} "
                         f"channel(s), got shape {img.shape}")


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def size_pair(op: str, size, allow_int: bool = True):
    """MindSpore's `size`: an int (kept as an int, meaning "both sides" or "the shorter side"
    depending on the op) or a sequence (h, w) of positive ints."""
    if _is_int(size) and allow_int:
        if size < 1:
            raise ValueError(f"{op}: size must be >= 1, got {size}")
        return int(size)
    if isinstance(size, (list, tuple)) and len(size) in ((1, 2) if allow_int else (2,)) and \
            all(_is_int(s) for s in size):
        if any(s < 1 for s in size):
            raise ValueError(f"{op}: every size must be >= 1, got {tuple(size)}")
        return int(size[0]) if len(size) == 1 else (int(size[0]), int(size[1]))
    raise TypeError(f"{op}: size must be an int or a sequence (height, width) of ints, got "
                    f"{size!r}")


def square(size):
    """(h, w) of a crop size: an int means a square."""
    return (size, size) if isinstance(size, int) else size


def min_max_range(op: str, name: str, value, low=None, high=None, centre=None):
    """A (min, max) range of floats; a single number v means (centre - v, centre + v) (with
    the low end clipped at `low`), as MindSpore's random ops document."""
    if _is_number(value):
        if value < 0:
            raise ValueError(f"{op}: {name} must be >= 0 as a single number, got {value}")
        if centre is None:
            raise TypeError(f"{op}: {name} must be a sequence (min, max), got {value!r}")
        lo = centre - value
        rng = (max(lo, low) if low is not None else lo, centre + value)
    elif isinstance(value, (list, tuple)) and len(value) == 2 and all(map(_is_number, value)):
        rng = (value[0], value[1])
    else:
        raise TypeError(f"{op}: {name} must be a number or a sequence (min, max), got {value!r}")
    if rng[0] > rng[1]:
        raise ValueError(f"{op}: {name} should be in (min, max) format, got {tuple(value)}")
    if (low is not None and rng[0] < low) or (high is not None and rng[1] > high):
        raise ValueError(f"{op}: {name} must lie in [{low}, {high}], got {tuple(rng)}")
    return rng


def check_prob(op: str, prob) -> float:
    if not _is_number(prob) or not 0 <= prob <= 1:
        raise ValueError(f"{op}: prob must be a number in [0, 1], got {prob!r}")
    return float(prob)


def fill_triple(op: str, fill_value):
    """fill_value: an int in [0, 255] or a 3-tuple of them."""
    vals = (fill_value,) * 3 if _is_int(fill_value) else fill_value
    if not isinstance(vals, (list, tuple)) or len(vals) != 3 or not all(map(_is_int, vals)):
        raise TypeError(f"{op}: fill_value should be a single integer or a 3-tuple, got "
                        f"{fill_value!r}")
    if any(not 0 <= v <= 255 for v in vals):
        raise ValueError(f"{op}: fill_value must lie in [0, 255], got {fill_value!r}")
    return tuple(int(v) for v in vals)


def check_enum(op: str, name: str, value, enum_cls):
    if not isinstance(value, enum_cls):
        raise TypeError(f"{op}: {name} must be a vision.{enum_cls.__name__}, got {value!r}")
    return value


_ROW = contextvars.ContextVar("minispore_dataset_random_row", default=None)


def enter_row(key: tuple, seed: int | None = None, seeded: bool = True):
    """Make the random ops draw from generators keyed by `key` (a tuple of ints, e.g. the
    epoch and row index a pipeline is mapping) instead of their running sequences, until
    `leave_row(token)` with the token this returns: a seeded pipeline then draws the same
    parameters for a row whatever the worker, thread, process or order that maps it.
    `seed`/`seeded` are the reading iterator's seed and whether it is a set one
    (`config.get_seed()`, a seed set with `set_seed`), taken with the row so that a worker
    process draws with the reader's seed; None: read `config` when drawing. (`random_row`
    is the same as a `with` block; the pipeline engine calls these two once per row.)"""
    return _ROW.set((key, {}, seed, seeded))


def leave_row(token) -> None:
    _ROW.reset(token)


@contextlib.contextmanager
def random_row(*key: int):
    """Within this block the random ops draw from generators keyed by `key` (see enter_row)."""
    token = enter_row(tuple(int(k) for k in key))
    try:
        yield
    finally:
        leave_row(token)


class RandomDraws:
    """The generator of one random op: seeded from `dataset.config`'s seed and the op's kind,
    so a seeded pipeline draws the same parameters in every run (like MindSpore, which seeds
    every random op with the set seed, two ops of one kind then draw the same sequence; without
    a set seed each op draws its own); a new seed set later starts a new sequence. Inside
    `random_row(...)` it draws from a generator of that row instead."""

    _instances = 0

    def __init__(self, kind: str):
        self._salt = zlib.crc32(kind.encode())
        RandomDraws._instances += 1
        self._instance = RandomDraws._instances
        self._seed, self._gen = None, None

    def generator(self) -> np.random.Generator:
        row = _ROW.get()
        if row is not None:                     # one generator per op per row, made once
            key, made, seed, seeded = row
            gen = made.get(self._instance)
            if gen is None:
                if seed is None:
                    seed, seeded = config.get_seed(), config._seed["value"] is not None
                mine = [] if seeded else [self._instance]
                gen = made[self._instance] = np.random.default_rng(
                    [seed, 4, self._salt, *mine, *key])
            return gen
        seed = config.get_seed()
        mine = [] if config._seed["value"] is not None else [self._instance]
        if self._gen is None or seed != self._seed:
            self._gen = np.random.default_rng([seed, 3, self._salt, *mine])
            self._seed = seed
        return self._gen

    def uniform(self, lo: float, hi: float) -> float:
        return float(lo) if lo == hi else float(self.generator().uniform(lo, hi))

    def integer(self, lo: int, hi: int) -> int:
        """Uniform over lo..hi inclusive."""
        return int(lo) if lo >= hi else int(self.generator().integers(lo, hi + 1))

    def happens(self, prob: float) -> bool:
        """True with probability prob (never for 0, always for 1)."""
        return prob >= 1 or (prob > 0 and float(self.generator().random()) < prob)


def back_to_input_kind(original, out: np.ndarray):
    """A PIL result for a PIL input (for the ops whose pixels do not depend on which library
    moved them: flips, crops, pads)."""
    if is_pil(original):
        return pil_image_module().fromarray(out, mode=original.mode if out.ndim == 3 or
                                            original.mode in ("L", "I", "F") else None)
    return out


__all__ = ["Inter", "Border"]
