"""`mindspore.dataset.transforms`: the general column ops (TypeCast, OneHot, Fill, Concatenate,
Duplicate, PadEnd, Slice) and the op combinators (Compose, RandomApply, RandomChoice,
RandomOrder), callables on numpy arrays usable in `Dataset.map` or eagerly."""
from __future__ import annotations

import numbers

import numpy as np

from .vision_common import RandomDraws, check_prob


def np_dtype(op: str, data_type, name: str = "data_type"):
    """A minispore dtype (ms.int32), a numpy dtype or a dtype name as a numpy dtype."""
    from ..core.dtype import DType, dtype_to_nptype
    if isinstance(data_type, DType):
        return np.dtype(dtype_to_nptype(data_type))
    try:
        return np.dtype(data_type)
    except TypeError:
        raise TypeError(f"{op}: {name} must be a minispore dtype (ms.int32) or a numpy "
                        f"dtype, got {data_type!r}") from None


class TypeCast:
    """Cast the column to `data_type` (ms.int32, ms.float32, ... or a numpy dtype)."""

    def __init__(self, data_type):
        self.np_dtype = np_dtype("TypeCast", data_type)

    def __call__(self, x):
        return np.asarray(x).astype(self.np_dtype)


def _check_transforms(op: str, transforms):
    if not isinstance(transforms, (list, tuple)) or not transforms or \
            not all(callable(t) for t in transforms):
        raise TypeError(f"{op}: transforms must be a non-empty list of callables, got "
                        f"{transforms!r}")
    return list(transforms)


def _apply(transforms, args):
    """Run transforms in order; a tuple result feeds the next transform's arguments."""
    for t in transforms:
        out = t(*args)
        args = out if isinstance(out, tuple) else (out,)
    return args[0] if len(args) == 1 else args


class Compose:
    """Apply `transforms` in order; a tuple result feeds the next transform's arguments."""

    def __init__(self, transforms):
        self.transforms = _check_transforms("Compose", transforms)

    def __call__(self, *args):
        return _apply(self.transforms, args)


class RandomApply:
    """With probability prob apply all `transforms` in order, else pass the input through."""

    def __init__(self, transforms, prob=0.5):
        self.transforms = _check_transforms("RandomApply", transforms)
        self.prob = check_prob("RandomApply", prob)
        self._draws = RandomDraws("RandomApply")

    def __call__(self, *args):
        if self._draws.happens(self.prob):
            return _apply(self.transforms, args)
        return args[0] if len(args) == 1 else args


class RandomChoice:
    """Apply one of `transforms`, chosen uniformly."""

    def __init__(self, transforms):
        self.transforms = _check_transforms("RandomChoice", transforms)
        self._draws = RandomDraws("RandomChoice")

    def __call__(self, *args):
        pick = self._draws.integer(0, len(self.transforms) - 1)
        return _apply([self.transforms[pick]], args)


class RandomOrder:
    """Apply all `transforms` in a uniformly drawn order."""

    def __init__(self, transforms):
        self.transforms = _check_transforms("RandomOrder", transforms)
        self._draws = RandomDraws("RandomOrder")

    def __call__(self, *args):
        order = self._draws.generator().permutation(len(self.transforms))
        return _apply([self.transforms[i] for i in order], args)


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


class OneHot:
    """Integer labels -> one-hot rows of num_classes in the label's dtype (a negative label
    gives a row of zeros, as in MindSpore). With smoothing_rate s the hot entry is
    1 - s + s / num_classes and the others s / num_classes, as float64."""

    def __init__(self, num_classes, smoothing_rate=0.0):
        if not _is_int(num_classes) or num_classes < 1:
            raise ValueError(f"OneHot: num_classes must be an int >= 1, got {num_classes!r}")
        if not isinstance(smoothing_rate, numbers.Real) or isinstance(smoothing_rate, bool) or \
                not 0.0 <= smoothing_rate <= 1.0:
            raise ValueError(f"OneHot: smoothing_rate must be a number in [0, 1], got "
                             f"{smoothing_rate!r}")
        self.num_classes, self.smoothing_rate = int(num_classes), float(smoothing_rate)

    def __call__(self, label):
        x = np.asarray(label)
        if not np.issubdtype(x.dtype, np.integer):
            raise TypeError(f"OneHot: the labels must be integers, got {x.dtype}; cast them "
                            f"with TypeCast(ms.int32) first")
        if x.ndim > 1:
            raise ValueError(f"OneHot: the labels must be a scalar or 1-D, got shape {x.shape}")
        if np.any(x >= self.num_classes):
            raise ValueError(f"OneHot: labels must be < num_classes={self.num_classes}, got "
                             f"{x.tolist()}")
        if x.shape == (1,):                         # MindSpore gives one row for one label
            x = x.reshape(())
        hot = x[..., None] == np.arange(self.num_classes)
        if self.smoothing_rate == 0.0:
            return hot.astype(x.dtype)
        if x.size > 1:
            # MindSpore 2.10 smooths only the last label of a row of several (the others come
            # out as all s / n); refuse instead of giving either answer silently
            raise ValueError(f"OneHot: smoothing_rate with {x.size} labels in one row is not "
                             f"supported; one-hot one label per row, or smooth afterwards")
        s, n = self.smoothing_rate, self.num_classes
        return np.where(hot, 1.0 - s + s / n, s / n).astype(np.float64)


class Fill:
    """Every element replaced by fill_value (cast to the input's dtype)."""

    def __init__(self, fill_value):
        if not isinstance(fill_value, (numbers.Number, str, bytes, np.generic)):
            raise TypeError(f"Fill: fill_value must be a number, str or bytes, got "
                            f"{fill_value!r}")
        self.fill_value = fill_value

    def __call__(self, x):
        x = np.asarray(x)
        if x.dtype.kind in "US":                    # the strings take the fill's width
            return np.full(x.shape, self.fill_value)
        return np.full(x.shape, self.fill_value, dtype=x.dtype)


class Concatenate:
    """Join 1-D arrays along axis 0: prepend + input + append."""

    def __init__(self, axis=0, prepend=None, append=None):
        if axis not in (0, -1) or not _is_int(axis):
            raise ValueError(f"Concatenate: only axis 0 (or -1) of 1-D data is supported, as "
                             f"in MindSpore, got {axis!r}")
        self.axis = axis
        self.prepend = None if prepend is None else np.asarray(prepend)
        self.append = None if append is None else np.asarray(append)
        for name, a in (("prepend", self.prepend), ("append", self.append)):
            if a is not None and a.ndim != 1:
                raise ValueError(f"Concatenate: {name} must be 1-D, got shape {a.shape}")

    def __call__(self, x):
        x = np.asarray(x)
        if x.ndim != 1:
            raise ValueError(f"Concatenate: the input must be 1-D, got shape {x.shape}")
        parts = [p for p in (self.prepend, x, self.append) if p is not None]
        text = x.dtype.kind in "US"
        for p in parts:
            if (p.dtype.kind in "US") != text or (not text and p.dtype != x.dtype):
                raise TypeError(f"Concatenate: prepend/append must have the input's dtype "
                                f"{x.dtype}, got {p.dtype}")
        return np.concatenate(parts)


class Duplicate:
    """Return the column and a copy of it (map with two output_columns)."""

    def __call__(self, x):
        x = np.asarray(x)
        return x, x.copy()


class Slice:
    """Index each axis in turn: an int (kept as a length-1 axis), a list of indices, a slice,
    or None / Ellipsis (the whole axis)."""

    def __init__(self, *slices):
        for s in slices:
            ok = s is None or s is Ellipsis or isinstance(s, slice) or _is_int(s) or (
                isinstance(s, list) and all(map(_is_int, s)))
            if not ok:
                raise TypeError(f"Slice: each slice must be an int, a list of ints, a slice, "
                                f"None or Ellipsis, got {s!r}")
        self.slices = slices

    def __call__(self, x):
        x = np.asarray(x)
        if len(self.slices) > x.ndim:
            raise ValueError(f"Slice: {len(self.slices)} slices for data of shape {x.shape}")
        for axis, s in enumerate(self.slices):
            if _is_int(s) or isinstance(s, list):
                x = np.take(x, [s] if _is_int(s) else s, axis=axis)
            elif isinstance(s, slice):
                x = x[(slice(None),) * axis + (s,)]
        return np.ascontiguousarray(x)


class PadEnd:
    """Pad the end of each axis to pad_shape with pad_value (None: 0 or '' for strings);
    an axis longer than pad_shape is cut to it, as MindSpore does."""

    def __init__(self, pad_shape, pad_value=None):
        if not isinstance(pad_shape, (list, tuple)) or not all(
                _is_int(s) and s >= 0 for s in pad_shape):
            raise TypeError(f"PadEnd: pad_shape must be a list of ints >= 0, got "
                            f"{pad_shape!r}")
        self.pad_shape, self.pad_value = tuple(pad_shape), pad_value

    def __call__(self, x):
        x = np.asarray(x)
        if x.ndim != len(self.pad_shape):
            raise ValueError(f"PadEnd: pad_shape {list(self.pad_shape)} has {len(self.pad_shape)}"
                             f" axes but the input has shape {x.shape}")
        value = self.pad_value
        if value is None:
            value = "" if x.dtype.kind in "US" else 0
        if x.dtype.kind in "US":
            width = max(x.dtype.itemsize // (4 if x.dtype.kind == "U" else 1), len(str(value)))
            dtype = np.dtype(f"{x.dtype.kind}{max(width, 1)}")
        else:
            dtype = x.dtype
        out = np.full(self.pad_shape, value, dtype=dtype)
        keep = tuple(slice(0, min(a, b)) for a, b in zip(x.shape, self.pad_shape))
        out[keep] = x[keep]
        return out


__all__ = ["TypeCast", "Compose", "RandomApply", "RandomChoice", "RandomOrder", "OneHot",
           "Fill", "Concatenate", "Duplicate", "PadEnd", "Slice"]
