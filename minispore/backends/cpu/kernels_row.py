"""Eager CPU kernels of the small ops on a classifier's loss path: softmax and log_softmax over one
axis, logsumexp over axes, and the sparse softmax cross-entropy and its gradient.

Their numpy references cost 20-70 us on a (32, 10) batch of logits (eight numpy calls, moveaxis,
dtype round trips), more than the matmuls of a small MLP step; these kernels cost a few us
(softmax of (32, 128): 15 us).
softmax/log_softmax, logsumexp and the cross-entropy pair are the row family of loops/rows.py
(one numba kernel per rank and reduction axes for logsumexp), rendered by
render/numba_source.py as shape-generic numba kernels (disk-cached like the generated elementwise
kernels); native_rows.py renders the same definitions into the O2 sink's LLVM IR, so PyNative, O0
and O2 agree bit for bit.
softmax runs over an (outer, d, inner) view of its input; the cross-entropy pair over (rows,
classes). Half-precision tensors compute in float32 (cpu_np) and round once.
`register(backend)` is called by kernels.register_all after it registers the reference
kernels, so the logsumexp kernel registered here is the one the backend runs.
"""
from __future__ import annotations

import numpy as np

from ...core.ops.reduce import reduction_axes
from ...core.shape import size_of
from .kernel_abi import cpu_np
from .loops import rows
from .render import numba_source

# the numba modules are built (and numba loaded) when a factory first runs: numba_source.module
# builds each once per process. sparse_softmax_cross_entropy's kernel: (x (R, C), labels (R,)
# int64) -> (R,) losses; its gradient's: (x, labels, dout (R,)) -> (R, C)


def _rounded(out, odt, shape):
    """A kernel's compute-dtype result in the output dtype and shape."""
    return (out if out.dtype == odt else out.astype(odt)).reshape(shape)


def _sce_factory(definition):
    """The sparse cross-entropy (rows.sparse_softmax_cross_entropy: logits, labels) or its
    gradient (rows.sparse_softmax_cross_entropy_grad: logits, labels, dout) over the logits viewed
    as (rows, classes)."""
    def factory(in_metas, attrs, out_meta):
        row_fn = numba_source.module(definition).kernel
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
        kernel = numba_source.module(rows.softmax, log=log).kernel
        shape = tuple(in_metas[0].shape)
        c, odt = cpu_np(out_meta.dtype), out_meta.dtype.np
        if not shape:                               # one element: 1 (softmax) or 0 (log)
            return lambda x: np.full((), 0 if log else 1, odt)
        axis = attrs["axis"] % len(shape)
        view = (size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:]))

        def run(x):
            return _rounded(kernel(np.ascontiguousarray(x, c).reshape(view)), odt, shape)
        return run
    return factory


def _logsumexp(in_metas, attrs, out_meta):
    """logsumexp over the reduction axes (a 0-d tensor: the value itself, as the native sink
    lowers it), in float64: a float input read in its compute dtype, an integer one as float64
    (exactly), the result rounded to the output dtype."""
    x_dtype, shape, oshape = in_metas[0].dtype, tuple(in_metas[0].shape), tuple(out_meta.shape)
    c = cpu_np(x_dtype) if x_dtype.is_float else np.float64
    odt = out_meta.dtype.np
    axes = reduction_axes("logsumexp", attrs["axis"], len(shape))
    if not shape:
        return lambda x: np.asarray(x).astype(odt).reshape(oshape)
    kernel = numba_source.module(rows.logsumexp, rank=len(shape), axes=axes).kernel

    def run(x):
        return _rounded(kernel(np.ascontiguousarray(x, c)), odt, oshape)
    return run


def register(backend) -> None:
    backend.register("logsumexp")(_logsumexp)
    backend.register("softmax")(_softmax_factory(False))
    backend.register("log_softmax")(_softmax_factory(True))
    backend.register("sparse_softmax_cross_entropy")(
        _sce_factory(rows.sparse_softmax_cross_entropy))
    backend.register("sparse_softmax_cross_entropy_grad")(
        _sce_factory(rows.sparse_softmax_cross_entropy_grad))
