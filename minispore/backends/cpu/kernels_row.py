"""Eager CPU kernels of the small ops on a classifier's loss path: softmax and log_softmax over one
axis, the sparse softmax cross-entropy and its gradient, and one_hot (sum and mean, float64
accumulation, are kernels.py's `accumulation`).

Their numpy references cost 20-70 us on a (32, 10) batch of logits (eight numpy calls, moveaxis,
dtype round trips), more than the matmuls of a small MLP step; these kernels cost a few us
(softmax of (32, 128): 15 us, 35 before the exps went through a row buffer).
softmax/log_softmax are one numba loop over an (outer, d, inner) view with the arithmetic of the
O2 sink's lowering (sink.py `_softmax`: float64 running max and sum, vexp/vlog), so PyNative, O0
and O2 agree; the cross-entropy pair are row loops the O2 sink calls too (sink_nn.py), with
the same arithmetic; one_hot is one loop writing on/off values (an index outside [0, depth) gives a row
of off values, as the reference does). Half-precision tensors compute in float32 (cpu_np) and
round once.
`register(backend)` is called by kernels.register_all.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit

from ...core.shape import normalize_axis, size_of
from .elementwise import cpu_np
from .vecmath import vexp, vlog

_J = dict(cache=True, nogil=True, error_model="numpy")
DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]   # for the sink's cache


@njit(**_J)
def row_softmax(x, out, log):
    """x, out: (outer, d, inner) arrays; softmax (log=False) or log_softmax along axis 1.
    exp(x - max) goes to a float64 row buffer first and is summed in a second loop: the same
    values added in the same order as the sink's one-loop `s += vexp(...)` (so the bits agree),
    but the exp loop has no loop-carried sum and vectorises (~3x on a (32, 128) batch)."""
    outer, d, inner = x.shape
    e = np.empty(d, np.float64)
    for r in range(outer):
        for c in range(inner):
            m = -np.inf
            for k in range(d):
                m = max(m, x[r, k, c])
            for k in range(d):
                e[k] = vexp(x[r, k, c] - m)
            s = 0.0
            for k in range(d):
                s += e[k]
            if log:
                ls = vlog(s)
                for k in range(d):
                    out[r, k, c] = x[r, k, c] - m - ls
            else:
                for k in range(d):
                    out[r, k, c] = e[k] / s


@njit(**_J)
def one_hot_rows(idx, out, on, off):
    """idx: (outer, inner) integers; out: (outer, depth, inner)."""
    outer, depth, inner = out.shape
    for r in range(outer):
        for k in range(depth):
            for c in range(inner):
                out[r, k, c] = on if idx[r, c] == k else off


@njit(**_J)
def _row_lse(x, r, e):
    """(max, log(sum(exp(x[r] - max)))) of row r, in float64; e: a float64 scratch row (the
    exps are summed in a second loop, in order: see row_softmax)."""
    m = -np.inf
    for k in range(x.shape[1]):
        m = max(m, x[r, k])
    for k in range(x.shape[1]):
        e[k] = vexp(x[r, k] - m)
    s = 0.0
    for k in range(x.shape[1]):
        s += e[k]
    return m, vlog(s)


@njit(**_J)
def sce_rows(x, labels):
    """x: (R, C) logits, labels: (R,) int64 -> (R,) losses logsumexp - x[label] (0 when the
    label is outside [0, C))."""
    R, C = x.shape
    out = np.empty(R, x.dtype)
    e = np.empty(C, np.float64)
    for r in range(R):
        m, ls = _row_lse(x, r, e)
        lab = labels[r]
        out[r] = (ls + m - x[r, lab]) if 0 <= lab < C else 0.0
    return out


@njit(**_J)
def sce_grad_rows(x, labels, d):
    """(softmax(x) * valid - one_hot(labels)) * d[:, None] for (R, C) x."""
    R, C = x.shape
    out = np.empty((R, C), x.dtype)
    e = np.empty(C, np.float64)
    for r in range(R):
        m, ls = _row_lse(x, r, e)
        lab = labels[r]
        valid = 0 <= lab < C
        for k in range(C):
            p = vexp(x[r, k] - m - ls) if valid else 0.0
            out[r, k] = (p - (1.0 if k == lab else 0.0)) * d[r]
    return out


def _rounded(out, odt, shape):
    """A kernel's compute-dtype result in the output dtype and shape."""
    return (out if out.dtype == odt else out.astype(odt)).reshape(shape)


def _sce_factory(row_fn):
    """The sparse cross-entropy (row_fn = sce_rows: logits, labels) or its gradient (sce_grad_rows:
    logits, labels, dout) over the logits viewed as (rows, classes)."""
    def factory(in_metas, attrs, out_meta):
        x_shape = tuple(in_metas[0].shape)
        R, C = size_of(x_shape[:-1]), x_shape[-1]
        c, odt, shape = cpu_np(out_meta.dtype), out_meta.dtype.np, tuple(out_meta.shape)

        def run(x, labels, *dout):
            out = row_fn(np.ascontiguousarray(x, c).reshape(R, C),
                         np.ascontiguousarray(labels, np.int64).reshape(R),
                         *[np.ascontiguousarray(d, c).reshape(R) for d in dout])
            return _rounded(out, odt, shape)
        return run
    return factory


def _softmax_factory(log: bool):
    def factory(in_metas, attrs, out_meta):
        shape = tuple(in_metas[0].shape)
        c, odt = cpu_np(out_meta.dtype), out_meta.dtype.np
        if not shape:                               # one element: 1 (softmax) or 0 (log)
            return lambda x: np.full((), 0 if log else 1, odt)
        axis = attrs["axis"] % len(shape)
        view = (size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:]))

        def run(x):
            out = np.empty(view, c)
            row_softmax(np.ascontiguousarray(x, c).reshape(view), out, log)
            return _rounded(out, odt, shape)
        return run
    return factory


def _one_hot(in_metas, attrs, out_meta):
    shape = tuple(out_meta.shape)
    axis = normalize_axis("one_hot", attrs["axis"], len(shape))
    view = (size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:]))
    odt = out_meta.dtype.np
    on, off = odt.type(attrs["on_value"]), odt.type(attrs["off_value"])

    def run(idx):
        out = np.empty(view, odt)
        one_hot_rows(np.ascontiguousarray(idx, np.int64).reshape(view[0], view[2]), out, on, off)
        return out.reshape(shape)
    return run


def register(backend) -> None:
    backend.register("softmax")(_softmax_factory(False))
    backend.register("log_softmax")(_softmax_factory(True))
    backend.register("one_hot")(_one_hot)
    backend.register("sparse_softmax_cross_entropy")(_sce_factory(sce_rows))
    backend.register("sparse_softmax_cross_entropy_grad")(_sce_factory(sce_grad_rows))
