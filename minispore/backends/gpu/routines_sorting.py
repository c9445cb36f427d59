"""The GPU routines of sort, topk, cumsum and cumprod, against the array module `xp` (CuPy on a
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


def _topk(xp, ctx, ms, attrs, out):
    """MindSpore's TopK selection (core/ops/topk_select.py, its tie order) on the host, with
    the CPU backend's numba compilation of it; the values gathered on the device. A CUDA graph
    cannot capture the host round trip: the capture fails (and the step runs kernel by
    kernel)."""
    from ...core.ops.topk_select import compare_keys
    from ..cpu.kernels_sorting import select_module
    d, k, sorted_ = ms[0].dtype, attrs["k"], attrs["sorted"]
    select_rows = select_module().select_rows

    def run(x):
        if not ctx.checks:
            raise RuntimeError("topk: MindSpore's TopK selection runs on the host, which a "
                               "CUDA graph cannot capture")
        host = x.get() if hasattr(x, "get") else np.asarray(x)
        n = host.shape[-1]
        keys = compare_keys(S.to_compute(np, host, d).reshape(-1, n))
        pos = np.zeros((keys.shape[0], k), np.int64)
        select_rows(keys, k, sorted_, pos)
        pos = xp.asarray(pos.reshape(host.shape[:-1] + (k,)))
        return S.contig(xp, xp.take_along_axis(x, pos, -1)), S.contig(xp, pos.astype(np.int32))
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


TABLE["sort"], TABLE["topk"] = _sort, _topk
TABLE["cumsum"], TABLE["cumprod"] = _scan(False), _scan(True)
