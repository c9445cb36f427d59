"""The GPU routines of sort, cumsum and cumprod, against the array module `xp` (CuPy on a
device, numpy in the table's tests), with core/ops/sorting.py's semantics: a stable sort (CuPy's only sort
is stable and orders NaN last, as numpy's kind='stable'), descending as the ascending sort of
the line reversed, reversed back (ties keep their input order, NaN comes first); cumsum
(cumprod) accumulates along the axis in the tensor's dtype, half tensors rounding every partial
result to the half dtype (a running float32 value rounded at each step: numpy's half loop)."""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core.shape import normalize_axis
from . import storage as S

TABLE: dict = {}


def _stable_argsort(xp, a, axis):
    """numpy's stable argsort; CuPy's argsort is always stable, and a CuPy that takes no
    `kind` (or only None) rejects the keyword."""
    try:
        return xp.argsort(a, axis=axis, kind="stable")
    except (TypeError, NotImplementedError, ValueError):
        return xp.argsort(a, axis=axis)


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


def _scan(product: bool):
    op = "cumprod" if product else "cumsum"

    def factory(xp, ctx, ms, attrs, out):
        d = ms[0].dtype
        axis = normalize_axis(op, attrs["axis"], len(ms[0].shape))
        exclusive, reverse = attrs["exclusive"], attrs["reverse"]
        half = d in (dt.float16, dt.bfloat16)

        def run(x):
            y = xp.flip(x, axis) if reverse else x
            if half:
                a = S.to_compute(xp, y, d)
                acc = xp.empty(a.shape, np.float32)
                run_acc = None
                for k in range(a.shape[axis]):
                    v = xp.take(a, k, axis)      # the first result is the first element
                    if run_acc is None:
                        run_acc = v
                    else:
                        step = run_acc * v if product else run_acc + v
                        run_acc = S.to_compute(xp, S.from_compute(xp, step, d), d)
                    acc[(slice(None),) * axis + (k,)] = run_acc
                r = S.from_compute(xp, acc, d)
            else:
                r = (xp.cumprod if product else xp.cumsum)(y, axis=axis, dtype=y.dtype)
            if exclusive:
                shifted = xp.ones_like(r) if product else xp.zeros_like(r)
                shifted[(slice(None),) * axis + (slice(1, None),)] = \
                    r[(slice(None),) * axis + (slice(0, -1),)]
                r = shifted
            return S.contig(xp, xp.flip(r, axis) if reverse else r)
        return run
    return factory


TABLE["sort"] = _sort
TABLE["cumsum"], TABLE["cumprod"] = _scan(False), _scan(True)
