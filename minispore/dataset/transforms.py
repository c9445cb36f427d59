"""`mindspore.dataset.transforms` in small: TypeCast and Compose, callables on numpy arrays
usable in `Dataset.map` or eagerly."""
from __future__ import annotations

import numpy as np


def _np_dtype(data_type):
    from ..core.dtype import DType, dtype_to_nptype
    if isinstance(data_type, DType):
        return dtype_to_nptype(data_type)
    try:
        return np.dtype(data_type)
    except TypeError:
        raise TypeError(f"TypeCast: data_type must be a minispore dtype (ms.int32) or a numpy "
                        f"dtype, got {data_type!r}") from None


class TypeCast:
    """Cast the column to `data_type` (ms.int32, ms.float32, ... or a numpy dtype)."""

    def __init__(self, data_type):
        self.np_dtype = _np_dtype(data_type)

    def __call__(self, x):
        return np.asarray(x).astype(self.np_dtype)


class Compose:
    """Apply `transforms` in order; a tuple result feeds the next transform's arguments."""

    def __init__(self, transforms):
        if not transforms or not all(callable(t) for t in transforms):
            raise TypeError("Compose: transforms must be a non-empty list of callables")
        self.transforms = list(transforms)

    def __call__(self, *args):
        for t in self.transforms:
            out = t(*args)
            args = out if isinstance(out, tuple) else (out,)
        return args[0] if len(args) == 1 else args


__all__ = ["TypeCast", "Compose"]
