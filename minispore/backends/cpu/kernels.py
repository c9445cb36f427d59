"""Non-elementwise CPU kernels: matmul through BLAS (np.matmul: numpy's OpenBLAS, the "numpy"
library of blas.py), reductions through numpy's SIMD loops, and data movement/indexing ops through their numpy
reference (they move memory; a generated loop would not beat numpy's memcpy-based kernels), but
for gather, scatter_add, scatter_update, one_hot and check_class_labels: kernels_index.py's
renderings of loops/index.py.
Every output is a fresh or immutable C-contiguous array of exactly the declared dtype."""
from __future__ import annotations

import numpy as np

from ...core.ops.reduce import reduction_axes
from ...core.primitive import REGISTRY
from ...core.shape import size_of
from .kernel_abi import cpu_np

# ops whose CPU kernel is their numpy reference (see the module docstring)
REF_KERNEL_OPS = (
    "cast", "reshape", "transpose", "concat", "split", "strided_slice", "strided_slice_grad",
    "slice_update", "broadcast_to", "tile",
    "arange", "stop_gradient", "argmax", "argmin", "prod",
)


def _contig(a, np_dtype):
    a = np.asarray(a)
    if a.dtype != np_dtype:
        a = a.astype(np_dtype)
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def ref_kernel(op):
    def factory(in_metas, attrs, out_meta):
        ref = op.ref
        if isinstance(out_meta, tuple) and not hasattr(out_meta, "dtype"):
            dts = [m.dtype.np for m in out_meta]
            return lambda *bufs: tuple(_contig(r, d) for r, d in zip(ref(*bufs, **attrs), dts))
        odt = out_meta.dtype.np
        return lambda *bufs: _contig(ref(*bufs, **attrs), odt)
    return factory


def register_all(backend) -> None:
    for name in REF_KERNEL_OPS:
        backend.register(name)(ref_kernel(REGISTRY[name]))
    from . import kernels_nn                 # conv, pooling, normalisation, random ops
    kernels_nn.register(backend, ref_kernel)
    from . import kernels_row                # softmax, log_softmax, logsumexp, cross-entropy
    kernels_row.register(backend)
    from . import kernels_index              # gather, scatter, one_hot, label checks
    kernels_index.register(backend, ref_kernel)
    from . import kernels_sorting            # sort, cumsum
    kernels_sorting.register(backend, ref_kernel)

    @backend.register("matmul")
    def matmul(in_metas, attrs, out_meta):
        ta, tb = attrs["transpose_a"], attrs["transpose_b"]
        c = cpu_np(out_meta.dtype)
        odt = out_meta.dtype.np
        cast = [m.dtype.np != c for m in in_metas]
        if not any(cast) and c == odt and len(in_metas[0].shape) == len(in_metas[1].shape) == 2:
            # the common case without the generic plumbing: np.matmul's result is a new
            # C-contiguous array of the compute dtype, and .T is swapaxes for a matrix
            if tb and not ta:
                return lambda a, b: np.matmul(a, b.T)
            if ta and not tb:
                return lambda a, b: np.matmul(a.T, b)
            if not (ta or tb):
                return np.matmul

        def run(a, b):
            if cast[0]:
                a = a.astype(c)
            if cast[1]:
                b = b.astype(c)
            r = np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
            return _contig(r, odt)
        return run

    def reduction(op_name, np_fn):
        def factory(in_metas, attrs, out_meta):
            keep = attrs["keep_dims"]
            # normalised as infer does it (a 0-d input has no axis to reduce)
            axis = reduction_axes(op_name, attrs["axis"], len(in_metas[0].shape))
            odt = out_meta.dtype.np
            c = cpu_np(out_meta.dtype) if out_meta.dtype.is_float else None

            def run(x):
                if c is not None and x.dtype != c:
                    x = x.astype(c)
                return _contig(np_fn(x, axis=axis, keepdims=keep), odt)
            return run
        return factory

    def accumulation(op_name):
        """sum and mean where no native program can run (MINISPORE_NATIVE_SINK=0, no CBLAS, a
        signature the lowering declines; native_kernels.py runs the others through the native
        lowering): float results accumulate in float64 and round once; mean divides in float64
        too. Integer sums keep numpy's own accumulator."""
        def factory(in_metas, attrs, out_meta):
            keep = attrs["keep_dims"]
            shape = tuple(in_metas[0].shape)
            axis = reduction_axes(op_name, attrs["axis"], len(shape))
            odt = out_meta.dtype.np
            acc = np.float64 if out_meta.dtype.is_float else None
            n_out = size_of(out_meta.shape)
            count = size_of(shape) // n_out if n_out else 0

            def run(x):
                r = np.add.reduce(x, axis=axis, keepdims=keep, dtype=acc)
                if op_name == "mean":
                    if count:           # nothing to warn about (np.errstate costs ~3 us)
                        r = r / count
                    else:
                        with np.errstate(invalid="ignore", divide="ignore"):   # empty: nan
                            r = r / count
                return _contig(r, odt)
            return run
        return factory

    def filled(in_metas, attrs, out_meta):
        """fill / fill_like: the reference's np.full; a small result is made once per plan and
        copied per call (the sensitivity of every gradient is one: ~6 -> ~1 us), a large one
        is not kept alive by the plan cache."""
        shape, d, value = tuple(out_meta.shape), out_meta.dtype.np, attrs["value"]
        if size_of(shape) > 4096:
            return lambda *bufs: np.full(shape, value, d)
        proto = np.full(shape, value, d)
        return lambda *bufs: proto.copy()
    backend.register("fill")(filled)
    backend.register("fill_like")(filled)

    # ufunc.reduce directly: np.sum & co. add ~2 us of Python dispatch per call
    backend.register("sum")(accumulation("sum"))
    backend.register("mean")(accumulation("mean"))
    backend.register("max")(reduction("max", np.maximum.reduce))
    backend.register("min")(reduction("min", np.minimum.reduce))
    from . import native_kernels             # last: wraps sum/mean/prod/logsumexp/norms
    native_kernels.register(backend)
