"""CPU kernels of the conv/pool/norm/random primitives (core/ops/conv.py, norm.py, random.py).

conv2d and its two adjoints run the native sink's lowering of the one-node graph eagerly
(native_kernels.py wraps the factories registered here); windows.py's im2col + BLAS numba kernels
(compiled once per dtype) are what they fall back to where no native program can run; the
pooling ops (and their gradients) call the numba renderings of loops/pool.py's definitions
(compiled per window geometry), whose LLVM renderings are the O2 sink's lowerings
(native_pool.py), so eager, O0 and O2 run one algorithm, cached on disk. A conv with small
GEMMs runs them on the calling thread (blas_threads.py).
The random ops are kernels_random.py's (loops/random.py's definitions rendered as numba kernels,
the ones the O2 sink renders in LLVM). batch_norm and layer_norm register their numpy
reference, which native_kernels.py wraps the same way as the convolutions. `register(backend, ref_kernel)` is called by
kernels.register_all.
"""
from __future__ import annotations

import numpy as np

from ...core.primitive import REGISTRY
from . import blas_threads
from . import kernels_random

REF_OPS = ("batch_norm", "layer_norm")


def compute_dtype(out_meta):
    d = out_meta.dtype.np
    return np.dtype(np.float32) if d.itemsize < 4 else d


def window_factory(name):
    """A kernel factory for the conv2d family and the pooling ops: windows.py's numba function
    for this node (with its geometry as trailing arguments, or compiled in for a pool), on
    contiguous arrays of the compute dtype."""
    conv = name.startswith("conv2d")

    def factory(in_metas, attrs, out_meta):
        from . import windows        # numba functions: loaded with the first kernel built
        c, odt = compute_dtype(out_meta), out_meta.dtype.np
        if conv:
            mod, fname, extra = windows.conv_kernel(name, tuple(m.shape for m in in_metas), attrs)
        else:
            mod, fname, extra = windows.pool_kernel(name, in_metas[0].shape, attrs)
        fn = getattr(mod, fname)
        if conv and blas_threads.serial(blas_threads.conv_macs(
                name, tuple(m.shape for m in in_metas), out_meta.shape, attrs)):
            kernel, fn = fn, (lambda *a: blas_threads.call_serial(kernel, *a))

        def run(*bufs):
            return np.ascontiguousarray(fn(*[np.ascontiguousarray(b, c) for b in bufs], *extra),
                                        odt)
        return run
    return factory


WINDOW_OPS = ("conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "max_pool2d",
              "max_pool2d_grad", "max_pool2d_gather", "avg_pool2d", "avg_pool2d_grad")


def register(backend, ref_kernel) -> None:
    for name in REF_OPS:
        backend.register(name)(ref_kernel(REGISTRY[name]))
    for name in WINDOW_OPS:
        backend.register(name)(window_factory(name))
    kernels_random.register(backend)
