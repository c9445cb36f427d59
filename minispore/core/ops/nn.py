"""Neural-network primitives of this wave: softmax and log_softmax along an axis."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError
from ..primitive import Meta, apply, defop
from ..shape import normalize_axis
from ._common import ref_array_dtype


def _infer(name):
    def infer(x, axis):
        if not x.dtype.is_float:
            raise DTypeError(f"{name}: dtype {x.dtype} is not supported; use a float dtype "
                             f"(x.astype(ms.float32))")
        normalize_axis(name, axis, len(x.shape))
        return Meta(tuple(x.shape), x.dtype)
    return infer


def _softmax_ref(x, axis):
    a = x.astype(ref_array_dtype(dt.to_dtype(x.dtype)))
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype)


def _log_softmax_ref(x, axis):
    a = x.astype(ref_array_dtype(dt.to_dtype(x.dtype)))
    s = a - np.max(a, axis=axis, keepdims=True)
    return (s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))).astype(x.dtype)


def _softmax_bprop(i, o, g, axis):
    from .math import mul, sub
    from .reduce import sum as _sum
    return (mul(o, sub(g, _sum(mul(g, o), axis, True))),)


def _log_softmax_bprop(i, o, g, axis):
    from .math import exp, mul, sub
    from .reduce import sum as _sum
    return (sub(g, mul(exp(o), _sum(g, axis, True))),)


SOFTMAX = defop("softmax", infer=_infer("softmax"), ref=_softmax_ref, bprop=_softmax_bprop,
                attrs={"axis": -1}, arity=1)
LOG_SOFTMAX = defop("log_softmax", infer=_infer("log_softmax"), ref=_log_softmax_ref,
                    bprop=_log_softmax_bprop, attrs={"axis": -1}, arity=1)


def softmax(input, axis=-1, *, dtype=None):
    from .math import cast
    if dtype is not None:
        input = cast(input, dtype)
    return apply(SOFTMAX, input, axis=axis)


def log_softmax(logits, axis=-1):
    return apply(LOG_SOFTMAX, logits, axis=axis)
