"""matmul in the native sink: each (batch) product through the CBLAS routine numpy.matmul picks
for its shapes (PyNative's matmul kernel is np.matmul, so the two stay bit-identical). Half
precision operands are converted to float32 in the node's arena scratch and the float32 product
rounded to the half dtype, as the eager kernel (kernels.py matmul: astype(float32), np.matmul,
astype back) does. Integer products (numpy's wrapping loops, no BLAS) are a loop nest.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core.graph import ir
from ...core.shape import broadcast_strides, size_of
from .native_emit import FLOAT, I32, I64, INTS, STORAGE, Emitter, NativeUnsupported, const
from .native_registry import lowering


@lowering("matmul", half_as_float32=True)     # kernels.py: astype(float32), np.matmul
def _matmul(e: Emitter, n: ir.Node, a: dict):
    x, y = n.inputs
    out = n.outputs[0]
    integer = out.dtype in INTS
    if (out.dtype not in FLOAT and not integer) or x.dtype is not y.dtype \
            or x.dtype is not out.dtype:
        raise NativeUnsupported(f"matmul of {x.dtype} and {y.dtype}")
    T = STORAGE[out.dtype]
    ta, tb = a["transpose_a"], a["transpose_b"]
    M, N = out.shape[-2:]
    K = x.shape[-2] if ta else x.shape[-1]
    b = e.b
    if M == 0 or N == 0:
        return
    batch = out.shape[:-2]
    if K == 0:
        zero = L.Constant(T, 0 if integer else 0.0)
        with e.loop(size_of(out.shape)) as i:
            e.store(zero, out, i)
        return
    with e.nest(batch) as bidx:
        def at(v, mat):
            st = broadcast_strides(v.shape[:-2], batch)
            off = b.mul(e.flat_index(bidx, st), const(mat)) if batch else const(0)
            return b.gep(e.ptr(v), [off])
        mats = (at(x, x.shape[-1] * x.shape[-2]), x.shape[-1],
                at(y, y.shape[-1] * y.shape[-2]), y.shape[-1], at(out, M * N))
        if integer:
            _integer_matmul(e, out.dtype, ta, tb, M, N, K, *mats)
        else:
            _numpy_matmul(e, T, ta, tb, M, N, K, *mats, same=x is y)


def _integer_matmul(e: Emitter, d: dt.DType, ta, tb, M, N, K, A, lda, B, ldb, C):
    """One integer C = op(A) @ op(B) as a loop nest: numpy's integer matmul (no BLAS) wraps in
    the dtype, and the low bits of a wrapping 64-bit sum of products are the dtype's own, so
    each dot product accumulates in an i64 and is truncated once (any order: integer addition
    modulo 2**64 is associative)."""
    b = e.b
    acc = e.alloca(I64)
    with e.loop(M) as m, e.loop(N) as p:
        b.store(const(0), acc)
        with e.loop(K) as k:
            ia = b.add(b.mul(k, const(lda)), m) if ta else b.add(b.mul(m, const(lda)), k)
            ib = b.add(b.mul(p, const(ldb)), k) if tb else b.add(b.mul(k, const(ldb)), p)
            va = e.convert(b.load(b.gep(A, [ia])), d, dt.int64)
            vb = e.convert(b.load(b.gep(B, [ib])), d, dt.int64)
            b.store(b.add(b.load(acc), b.mul(va, vb)), acc)
        b.store(e.convert(b.load(acc), dt.int64, d), b.gep(C, [b.add(b.mul(m, const(N)), p)]))


def _numpy_matmul(e: Emitter, T, ta, tb, M, N, K, A, lda, B, ldb, C, same):
    """One C = op(A) @ op(B) with the routine numpy.matmul picks for these shapes (PyNative's
    matmul is numpy's, so the two stay bit-identical; each choice checked against np.matmul):
    K = 1: its loop, 0 + a*b; M = N = 1: ?dot; M = 1: ?gemv over B; N = 1: ?gemv over A; a
    matrix times its own transpose: ?syrk and the upper triangle mirrored; else ?gemm."""
    b = e.b
    one, zero = L.Constant(T, 1.0), L.Constant(T, 0.0)
    if K == 1:
        with e.loop(M) as m, e.loop(N) as p:
            v = b.fadd(zero, b.fmul(b.load(b.gep(A, [m])), b.load(b.gep(B, [p]))))
            b.store(v, b.gep(C, [b.add(b.mul(m, const(N)), p)]))
        return
    if M == 1 or N == 1:
        fn, IT = e.blas(T, "dot" if M == N else "gemv")
        i1 = const(1, IT)
        if M == N:
            b.store(b.call(fn, [const(K, IT), A, i1, B, i1]), C)
            return
        if M == 1:        # vector @ matrix: y = op(B)^T x
            rows, cols, mat, trans = (N, K, B, 111) if tb else (K, N, B, 112)
            x = A
        else:             # matrix @ vector: y = op(A) x
            rows, cols, mat, trans = (K, M, A, 112) if ta else (M, K, A, 111)
            x = B
        b.call(fn, [const(101, I32), const(trans, I32), const(rows, IT), const(cols, IT), one,
                    mat, const(cols, IT), x, i1, zero, C, i1])
        return
    if same and ta != tb and M == N:
        fn, IT = e.blas(T, "syrk")
        b.call(fn, [const(101, I32), const(121, I32), const(112 if ta else 111, I32),
                    const(M, IT), const(K, IT), one, A, const(lda, IT), zero, C, const(M, IT)])
        with e.loop(M) as i, e.loop(M, start=b.add(i, const(1))) as j:
            src = b.load(b.gep(C, [b.add(b.mul(i, const(M)), j)]))
            b.store(src, b.gep(C, [b.add(b.mul(j, const(M)), i)]))
        return
    e.gemm(T, ta, tb, M, N, K, A, lda, B, ldb, C, N)

