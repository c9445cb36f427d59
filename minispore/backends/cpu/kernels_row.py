"""Eager CPU kernels of the small ops on a classifier's loss path: softmax and log_softmax over one
axis, the sparse softmax cross-entropy and its gradient, one_hot, and mean.

Their numpy references cost 20-70 us on a (32, 10) batch of logits (eight numpy calls, moveaxis,
dtype round trips), more than the matmuls of a small MLP step; these kernels cost a few us.
softmax/log_softmax are one numba loop over an (outer, d, inner) view with the arithmetic of the
O2 sink's lowering (sink.py `_softmax`: float64 running max and sum, vexp/vlog), so PyNative, O0
and O2 agree; the cross-entropy pair are row loops the O2 sink calls too (sink_nn.py), with
the same arithmetic; one_hot is one loop writing on/off values (an index outside [0, depth) gives a row
of off values, as the reference does); mean is `np.add.reduce` in float64 divided by the count
(the sink's arithmetic; np.mean's, without its Python layers, would accumulate float32).
`register(backend)` is called by kernels.register_all.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit

from ...core.ops.reduce import reduction_axes
from ...core.shape import normalize_axis, size_of
from .vecmath import vexp, vlog

_J = dict(cache=True, nogil=True, error_model="numpy")
DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]   # for the sink's cache


@njit(**_J)
def row_softmax(x, out, log):
    """x, out: (outer, d, inner) arrays; softmax (log=False) or log_softmax along axis 1."""
    outer, d, inner = x.shape
    for r in range(outer):
        for c in range(inner):
            m = -np.inf
            for k in range(d):
                m = max(m, x[r, k, c])
            s = 0.0
            for k in range(d):
                s += vexp(x[r, k, c] - m)
            if log:
                ls = vlog(s)
                for k in range(d):
                    out[r, k, c] = x[r, k, c] - m - ls
            else:
                for k in range(d):
                    out[r, k, c] = vexp(x[r, k, c] - m) / s


@njit(**_J)
def one_hot_rows(idx, out, on, off):
    """idx: (outer, inner) integers; out: (outer, depth, inner)."""
    outer, depth, inner = out.shape
    for r in range(outer):
        for k in range(depth):
            for c in range(inner):
                out[r, k, c] = on if idx[r, c] == k else off


@njit(**_J)
def _row_lse(x, r):
    """(max, log(sum(exp(x[r] - max)))) of row r, in float64."""
    m = -np.inf
    for k in range(x.shape[1]):
        m = max(m, x[r, k])
    s = 0.0
    for k in range(x.shape[1]):
        s += vexp(x[r, k] - m)
    return m, vlog(s)


@njit(**_J)
def sce_rows(x, labels):
    """x: (R, C) logits, labels: (R,) int64 -> (R,) losses logsumexp - x[label] (0 when the
    label is outside [0, C))."""
    R, C = x.shape
    out = np.empty(R, x.dtype)
    for r in range(R):
        m, ls = _row_lse(x, r)
        lab = labels[r]
        out[r] = (ls + m - x[r, lab]) if 0 <= lab < C else 0.0
    return out


@njit(**_J)
def sce_grad_rows(x, labels, d):
    """(softmax(x) * valid - one_hot(labels)) * d[:, None] for (R, C) x."""
    R, C = x.shape
    out = np.empty((R, C), x.dtype)
    for r in range(R):
        m, ls = _row_lse(x, r)
        lab = labels[r]
        valid = 0 <= lab < C
        for k in range(C):
            p = vexp(x[r, k] - m - ls) if valid else 0.0
            out[r, k] = (p - (1.0 if k == lab else 0.0)) * d[r]
    return out


def _rows(shape):
    return size_of(shape[:-1]), shape[-1]


def _sce(in_metas, attrs, out_meta):
    R, C = _rows(tuple(in_metas[0].shape))
    odt = out_meta.dtype.np
    c = np.dtype(np.float32) if odt.itemsize < 4 else odt
    shape = tuple(out_meta.shape)

    def run(x, labels):
        out = sce_rows(np.ascontiguousarray(x, c).reshape(R, C),
                       np.ascontiguousarray(labels, np.int64).reshape(R))
        return out.reshape(shape) if c == odt else out.astype(odt).reshape(shape)
    return run


def _sce_grad(in_metas, attrs, out_meta):
    R, C = _rows(tuple(in_metas[0].shape))
    odt = out_meta.dtype.np
    c = np.dtype(np.float32) if odt.itemsize < 4 else odt
    shape = tuple(out_meta.shape)

    def run(x, labels, d):
        out = sce_grad_rows(np.ascontiguousarray(x, c).reshape(R, C),
                            np.ascontiguousarray(labels, np.int64).reshape(R),
                            np.ascontiguousarray(d, c).reshape(R))
        return out.reshape(shape) if c == odt else out.astype(odt).reshape(shape)
    return run


def _softmax_factory(log: bool):
    def factory(in_metas, attrs, out_meta):
        shape = tuple(in_metas[0].shape)
        odt = out_meta.dtype.np
        c = np.dtype(np.float32) if odt.itemsize < 4 else odt
        if not shape:                               # one element: 1 (softmax) or 0 (log)
            return lambda x: np.full((), 0 if log else 1, odt)
        axis = attrs["axis"] % len(shape)
        view = (size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:]))

        def run(x):
            out = np.empty(view, c)
            row_softmax(np.ascontiguousarray(x, c).reshape(view), out, log)
            return out.reshape(shape) if c == odt else out.astype(odt).reshape(shape)
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


def _mean(in_metas, attrs, out_meta):
    shape = tuple(in_metas[0].shape)
    axis = reduction_axes("mean", attrs["axis"], len(shape))
    keep = attrs["keep_dims"]
    count = size_of(shape) // max(size_of(out_meta.shape), 1) if size_of(out_meta.shape) else 0
    odt = out_meta.dtype.np

    def run(x):
        # accumulated and divided in float64, as the O2 sink's loops do (the same rounding in
        # both modes)
        with np.errstate(invalid="ignore", divide="ignore"):      # empty slices: nan
            r = np.add.reduce(x, axis=axis, keepdims=keep, dtype=np.float64) / count
        return np.asarray(r, odt)           # a reduction's result is C-contiguous (0-d too)
    return run


def register(backend) -> None:
    backend.register("softmax")(_softmax_factory(False))
    backend.register("log_softmax")(_softmax_factory(True))
    backend.register("one_hot")(_one_hot)
    backend.register("sparse_softmax_cross_entropy")(_sce)
    backend.register("sparse_softmax_cross_entropy_grad")(_sce_grad)
    backend.register("mean")(_mean)
