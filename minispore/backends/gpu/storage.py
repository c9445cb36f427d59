"""How the GPU backend stores each dtype, and conversions between storage and compute arrays,
written for an array module `xp` (cupy on the device; numpy in the tests of the kernel table).

CuPy has no bfloat16 arrays, so a bfloat16 tensor lives on the device as a uint16 array of its
bits (the generated CUDA kernels read and write those bits, cuda_codegen.py); every other dtype is
stored as itself. Routines that compute (matmul, reductions, softmax...) take half types to float32
first, as the CPU backend and the references do, and round once at the end: float32 -> bfloat16
rounds to nearest-even on the bits, exactly as ml_dtypes does (which also goes through float32
from float64)."""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt

U16 = np.dtype(np.uint16)
F32 = np.dtype(np.float32)


def storage_np(d: dt.DType) -> np.dtype:
    """The numpy/cupy dtype that holds a tensor of dtype d on the device."""
    return U16 if d is dt.bfloat16 else d.np


def compute_np(d: dt.DType) -> np.dtype:
    """The dtype routines compute d in (half types in float32)."""
    return F32 if d in (dt.float16, dt.bfloat16) else d.np


def contig(xp, a):
    """`a` as a C-contiguous array of its own rank (numpy's ascontiguousarray makes 0-d 1-d)."""
    a = xp.asarray(a)
    return a if a.flags.c_contiguous else a.copy(order="C")


def bf16_to_f32(xp, bits):
    """float32 values of bfloat16 bits (exact)."""
    return xp.left_shift(xp.asarray(bits).astype(np.uint32), 16).view(np.float32)


def f32_to_bf16(xp, f):
    """bfloat16 bits of float32 values, round to nearest-even; NaN stays a (quiet) NaN."""
    f = xp.asarray(f, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)         # 64 bits: the rounding add cannot wrap
    r = xp.right_shift(u + 0x7FFF + (xp.right_shift(u, 16) & 1), 16) & 0xFFFF
    nan = xp.right_shift(u, 16) | 0x40
    return xp.where(f != f, nan, r).astype(np.uint16)


def to_compute(xp, a, d: dt.DType):
    """Storage array `a` of dtype d as an array of compute_np(d)."""
    if d is dt.bfloat16:
        return bf16_to_f32(xp, a)
    if d is dt.float16:
        return a.astype(F32)
    return a


def from_compute(xp, a, d: dt.DType):
    """Any numeric/bool array as the storage of dtype d (numpy's cast rules, C-contiguous)."""
    if d is dt.bfloat16:
        return f32_to_bf16(xp, xp.asarray(a).astype(F32))
    a = xp.asarray(a)
    return contig(xp, a if a.dtype == d.np else a.astype(d.np))


def cast(xp, a, src: dt.DType, dst: dt.DType):
    """Storage of dtype src -> storage of dtype dst."""
    if src is dst:
        return a
    if src is dt.bfloat16:
        a = bf16_to_f32(xp, a)
    return from_compute(xp, a, dst)


def host_scalar_storage(value, d: dt.DType):
    """A Python value as a 0-d numpy array in the storage of d (numpy's np.full cast rules)."""
    a = np.full((), value, d.np)
    return a.view(np.uint16) if d is dt.bfloat16 else a


def to_storage_host(a: np.ndarray) -> np.ndarray:
    """A host array in the layout the device keeps (bfloat16 as its bits)."""
    return a.view(np.uint16) if a.dtype == dt.bfloat16.np else a


def from_storage_host(a: np.ndarray, d: dt.DType) -> np.ndarray:
    """A host copy of device storage as an array of dtype d."""
    return a.view(dt.bfloat16.np) if d is dt.bfloat16 else a
