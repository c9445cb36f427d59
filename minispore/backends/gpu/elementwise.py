"""Generated CUDA kernels of the GPU backend, both from cuda_codegen (one generator):

- eager elementwise primitives: one `cupy.ElementwiseKernel` per (op, attributes, input dtypes)
  whose body is `cuda_codegen.ew_operation` (shape-generic: CuPy broadcasts and compiles once per
  rank); float16 operands are passed as their uint16 bits (`.view`), as the body expects;
- fused groups of a graph: one `cupy.RawKernel` per group from `cuda_codegen.fused_kernel`
  (shapes baked in; a trailing reduction fused as a block-tree reduction), launched with the
  generator's grid and block.

The generated sources are compiled (nvcc and NVRTC) and run on the host in the tests, and
launched through CuPy on an H200 in the `gpu`-marked tests.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core.shape import size_of
from . import cuda_codegen
from . import storage as S
from .buffers import launcher

U16 = np.dtype(np.uint16)


def eager_kernel(rt, op, in_metas, attrs, out_meta):
    """The launchable eager kernel of elementwise primitive `op` for these input types."""
    ew = cuda_codegen.ew_operation(op, [m.dtype for m in in_metas], attrs)
    k = rt.ew_kernel(ew)
    cp = rt.cp
    shape, sd = tuple(out_meta.shape), S.storage_np(out_meta.dtype)
    views = [m.dtype is dt.float16 for m in in_metas]
    out_view = out_meta.dtype is dt.float16

    if not any(views) and not out_view and len(in_metas) == 2:      # the hot path
        def fn2(a, b):
            out = cp.empty(shape, sd)
            k(a, b, out)
            return out
        return launcher(rt, fn2, out_meta, 2)

    def fn(*arrays):
        out = cp.empty(shape, sd)
        args = [a.view(U16) if v else a for a, v in zip(arrays, views)]
        k(*args, out.view(U16) if out_view else out)
        return out
    return launcher(rt, fn, out_meta, len(in_metas))


def fused_kernel(rt, expr, in_metas, out_meta, reduce=None):
    """The launchable kernel of a FUSED node (inputs in their own dtypes; `reduce` its
    ir.Reduction or None)."""
    ck = cuda_codegen.fused_kernel(expr, [m.dtype for m in in_metas],
                                   [tuple(m.shape) for m in in_metas], out_meta.dtype,
                                   tuple(out_meta.shape), reduce)
    k = rt.raw_kernel(ck)
    cp = rt.cp
    shape, sd = tuple(out_meta.shape), S.storage_np(out_meta.dtype)
    grid, block = (ck.grid,), (ck.block,)
    empty = size_of(shape) == 0

    def fn(*arrays):
        out = cp.empty(shape, sd)
        if not empty:
            k(grid, block, tuple(arrays) + (out,))
        return out
    return launcher(rt, fn, out_meta, len(in_metas))
