"""The GPU routines of sort and cumsum, against the array module `xp` (CuPy on a device, numpy
in the table's tests), with core/ops/sorting.py's semantics: a stable sort (CuPy's only sort
is stable and orders NaN last, as numpy's kind='stable'), descending as the ascending sort of
the line reversed, reversed back (ties keep their input order, NaN comes first); cumsum adds
along the axis in the tensor's dtype, half tensors rounding every partial sum to the half dtype
(a running float32 sum rounded at each step: numpy's half loop)."""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core.shape import normalize_axis
from . import storage as S

TABLE: dict = {}


def _stable_argsort(xp, a, axis):
    return xp.argsort(a, axis=axis, kind="stable")     # CuPy's default and only kind


def _sort(xp, ctx, ms, attrs, out):
    d = ms[0].dtype
    axis = normalize_axis("sort", attrs["axis"], len(ms[0].shape))
    desc = attrs["descending"]

    def run(x):
        a = S.to_compute(xp, x, d)
        if desc:
            n = a.shape[axis]
            order = (n - 1) - xp.flip(_stable_argsort(xp, xp.flip(a, axis), axis), axis)
        else:
            order = _stable_argsort(xp, a, axis)
        values = xp.take_along_axis(x, order, axis)
        return S.contig(xp, values), S.contig(xp, order.astype(np.int32))
    return run


def _cumsum(xp, ctx, ms, attrs, out):
    d = ms[0].dtype
    axis = normalize_axis("cumsum", attrs["axis"], len(ms[0].shape))
    exclusive, reverse = attrs["exclusive"], attrs["reverse"]
    half = d in (dt.float16, dt.bfloat16)

    def run(x):
        y = xp.flip(x, axis) if reverse else x
        if half:
            a = S.to_compute(xp, y, d)
            acc = xp.empty(a.shape, np.float32)
            run_sum = None
            for k in range(a.shape[axis]):
                v = xp.take(a, k, axis)          # the first sum is the first element (-0.0)
                run_sum = v if run_sum is None else \
                    S.to_compute(xp, S.from_compute(xp, run_sum + v, d), d)
                acc[(slice(None),) * axis + (k,)] = run_sum
            r = S.from_compute(xp, acc, d)
        else:
            r = xp.cumsum(y, axis=axis, dtype=y.dtype)
        if exclusive:
            shifted = xp.zeros_like(r)
            shifted[(slice(None),) * axis + (slice(1, None),)] = \
                r[(slice(None),) * axis + (slice(0, -1),)]
            r = shifted
        return S.contig(xp, xp.flip(r, axis) if reverse else r)
    return run


TABLE["sort"] = _sort
TABLE["cumsum"] = _cumsum
