"""Matrix multiplication on the GPU backend's array module `xp`, used by every routine that
multiplies (routines.py's matmul, routines_nn.py's conv GEMMs): cuBLAS through xp.matmul, or,
while a CUDA graph is captured (and in its warm-up run), the runtime's own GEMM kernel
(`ctx.gemm`, cuda_codegen.gemm_kernel), because CuPy refuses cuBLAS calls during stream
capture."""
from __future__ import annotations

import numpy as np

from . import storage as S


def matmul(xp, ctx, a, b):
    """xp.matmul(a, b); float operands while a CUDA graph is captured (and in its warm-up run, so
    the kernel is compiled before the capture) go through `ctx.gemm` instead: CuPy raises
    NotImplementedError ("calling cuBLAS API during stream capture is currently unsupported")
    for every cuBLAS call on a capturing stream. (Integer matmul is CuPy's own kernel.)"""
    if getattr(ctx, "in_graph", False) and a.dtype.kind == "f" and b.dtype.kind == "f":
        return matmul_via(xp, a, b, ctx.gemm)
    return xp.matmul(a, b)


def matmul_via(xp, a, b, gemm3):
    """numpy's matmul (1-D operands, broadcast batch dimensions) through gemm3(A, B) -> C for
    C-contiguous A (batch, m, k), B (batch, k, n) of one dtype and C (batch, m, n)."""
    dtype = np.result_type(a.dtype, b.dtype)
    va, vb = a.ndim == 1, b.ndim == 1
    a2 = a.reshape(1, -1) if va else a
    b2 = b.reshape(-1, 1) if vb else b
    (m, k), (k2, n) = a2.shape[-2:], b2.shape[-2:]
    if k != k2:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not match ({k} != {k2})")
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    nb = int(np.prod(batch, dtype=np.int64))
    A = S.contig(xp, xp.broadcast_to(a2.astype(dtype, copy=False), batch + (m, k)))
    B = S.contig(xp, xp.broadcast_to(b2.astype(dtype, copy=False), batch + (k, n)))
    if nb * m * n == 0 or k == 0:
        r = xp.zeros(batch + (m, n), dtype)
    else:
        r = gemm3(A.reshape(nb, m, k), B.reshape(nb, k, n)).reshape(batch + (m, n))
    if va:
        r = r[..., 0, :]
    if vb:
        r = r[..., 0]
    return r
