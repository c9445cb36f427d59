"""The reduction and creation cases of mint_cases.py."""
from __future__ import annotations

import numpy as np

from mint_cases import (B, C, CASES, F, G, I, IDX, J, M3, NANS, P, T, TIES, U, V,  # noqa: F401
                        W, case, mint, ms)


# ---------------------------------------------------------------- reductions --------------------
@case(F, ref=lambda x: x.sum())
def sum_all(x):
    return mint.sum(x)


@case(T, ref=lambda x: x.sum(1, keepdims=True))
def sum_dim_keepdim(x):
    return mint.sum(x, 1, True)


@case(T, ref=lambda x: x.sum((0, 2)))
def sum_dims(x):
    return mint.sum(x, (0, 2))


@case(I, ref=lambda x: x.sum(1).astype(np.int64))
def sum_int(x):
    return mint.sum(x, 1)


@case(B, ref=lambda x: x.sum().astype(np.int64))
def sum_bool(x):
    return mint.sum(x)


@case(I, ref=lambda x: x.astype(np.float32).sum(0))
def sum_dtype(x):
    return mint.sum(x, 0, dtype=ms.float32)


@case(np.array([[1.0, np.nan], [2.0, 3.0]], np.float32), ref=lambda x: np.nansum(x, 0))
def nansum(x):
    return mint.nansum(x, 0)


@case(T, ref=lambda x: x.mean())
def mean_all(x):
    return mint.mean(x)


@case(T, ref=lambda x: x.mean((1, 2), keepdims=True))
def mean_dims(x):
    return mint.mean(x, (1, 2), keepdim=True)


@case(F, ref=lambda x: x.prod(1))
def prod_dim(x):
    return mint.prod(x, 1)


@case(I, ref=lambda x: x.astype(np.int64).prod())
def prod_int(x):
    return mint.prod(x)


@case(TIES, ref=lambda x: (x.max(1), x.argmax(1)))
def max_dim(x):
    return mint.max(x, 1)


@case(TIES, ref=lambda x: (x.max(0, keepdims=True), x.argmax(0)[None]))
def max_dim_keepdim(x):
    return mint.max(x, 0, keepdim=True)


@case(TIES, ref=lambda x: np.float32(x.max()))
def max_all(x):
    return mint.max(x)


@case(F, G, ref=np.maximum)
def max_other(x, y):
    return mint.max(x, y)


@case(TIES, ref=lambda x: (x.min(1), x.argmin(1)))
def min_dim(x):
    return mint.min(x, 1)


@case(F, ref=lambda x: np.float32(x.min()))
def min_all(x):
    return mint.min(x)


@case(F, G, ref=np.minimum)
def min_other(x, y):
    return mint.min(x, y)


@case(T, ref=lambda x: x.max(-1))
def amax_dim(x):
    return mint.amax(x, -1)


@case(T, ref=lambda x: np.float32(x.max()))
def amax_all(x):
    return mint.amax(x)


@case(T, ref=lambda x: x.min((0, 1), keepdims=True))
def amin_dims(x):
    return mint.amin(x, (0, 1), True)


@case(TIES, ref=lambda x: np.int64(x.argmax()))
def argmax_all(x):
    return mint.argmax(x)


@case(TIES, ref=lambda x: x.argmax(1))
def argmax_dim(x):
    return mint.argmax(x, 1)


@case(TIES, ref=lambda x: x.argmin(0)[None])
def argmin_dim_keepdim(x):
    return mint.argmin(x, 0, True)


@case(I, ref=lambda x: np.all(x))
def all_all(x):
    return mint.all(x)


@case(B, ref=lambda x: np.all(x, 1))
def all_dim(x):
    return mint.all(x, 1)


@case(B, ref=lambda x: np.any(x))
def any_all(x):
    return mint.any(x)


@case(F, ref=lambda x: np.any(x, 0, keepdims=True))
def any_dim(x):
    return mint.any(x, 0, True)


@case(T, ref=lambda x: x.std(ddof=1))
def std_all(x):
    return mint.std(x)


@case(T, ref=lambda x: x.std(1, ddof=0, keepdims=True))
def std_dim_correction0(x):
    return mint.std(x, 1, correction=0, keepdim=True)


@case(T, ref=lambda x: x.var((0, 2), ddof=1))
def var_dims(x):
    return mint.var(x, (0, 2))


@case(T, ref=lambda x: (x.std(2, ddof=1), x.mean(2)))
def std_mean(x):
    return mint.std_mean(x, 2)


@case(T, ref=lambda x: (x.var(0, ddof=2), x.mean(0)))
def var_mean(x):
    return mint.var_mean(x, 0, correction=2)


@case(T, ref=lambda x: np.log(np.exp(x).sum(1)))
def logsumexp(x):
    return mint.logsumexp(x, 1)


@case(T, ref=lambda x: np.float32(np.sqrt((x * x).sum())))
def norm_fro(x):
    return mint.norm(x)


@case(T, ref=lambda x: np.abs(x).sum(1))
def norm_p1_dim(x):
    return mint.norm(x, 1, 1)


@case(T, ref=lambda x: np.float32(np.abs(x).max()))
def norm_inf(x):
    return mint.norm(x, float("inf"))


@case(T, ref=lambda x: (np.abs(x) ** 3).sum((1, 2), keepdims=True) ** (1 / 3))
def norm_p3_dims(x):
    return mint.norm(x, 3, (1, 2), True)


@case(F, ref=lambda x: np.int64(np.count_nonzero(x)))
def count_nonzero(x):
    return mint.count_nonzero(x)


@case(F, ref=lambda x: np.count_nonzero(x, 0).astype(np.int64))
def count_nonzero_dim(x):
    return mint.count_nonzero(x, 0)


@case(F, ref=lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True))
def softmax(x):
    return mint.softmax(x, 1)


# ---------------------------------------------------------------- creation ----------------------
@case(ref=lambda: np.zeros((2, 3), np.float32))
def zeros():
    return mint.zeros((2, 3))


@case(ref=lambda: np.zeros((4,), np.int32))
def zeros_int_dtype():
    return mint.zeros(4, dtype=ms.int32)


@case(ref=lambda: np.ones((2, 1), np.float32))
def ones():
    return mint.ones((2, 1))


@case(ref=lambda: np.full((2, 2), 3, np.int64))
def full_int():
    return mint.full((2, 2), 3)


@case(ref=lambda: np.full((3,), 1.5, np.float32))
def full_float():
    return mint.full((3,), 1.5)


@case(ref=lambda: np.full((2,), True))
def full_bool():
    return mint.full((2,), True)


@case(I, ref=lambda x: np.zeros_like(x))
def zeros_like(x):
    return mint.zeros_like(x)


@case(I, ref=lambda x: np.ones_like(x, np.float32))
def ones_like_dtype(x):
    return mint.ones_like(x, dtype=ms.float32)


@case(F, ref=lambda x: np.full_like(x, 7.0))
def full_like(x):
    return mint.full_like(x, 7)


@case(ref=lambda: np.arange(5, dtype=np.int64))
def arange_end():
    return mint.arange(5)


@case(ref=lambda: np.arange(1, 10, 3, dtype=np.int64))
def arange_step():
    return mint.arange(1, 10, 3)


@case(ref=lambda: np.arange(0, 1, 0.25, dtype=np.float32))
def arange_float():
    return mint.arange(0, 1, 0.25)


@case(ref=lambda: np.linspace(0, 1, 5, dtype=np.float32))
def linspace():
    return mint.linspace(0, 1, 5)


@case(ref=lambda: np.linspace(-3, 7, 6, dtype=np.float32))
def linspace_6():
    return mint.linspace(-3, 7, 6)


@case(ref=lambda: np.eye(3, dtype=np.float32))
def eye():
    return mint.eye(3)


@case(ref=lambda: np.eye(2, 4, dtype=np.int32))
def eye_rect_dtype():
    return mint.eye(2, 4, ms.int32)


@case(I, ref=lambda x: np.trunc(x.sum(1) / 3).astype(np.int32))
def mean_int_dim(x):
    return mint.mean(x, 1)


@case(np.array([-7, 0, 0, 2, -1, 5], np.int64), ref=lambda x: np.int64(np.trunc(x.sum() / 6)))
def mean_int64(x):
    return mint.mean(x)


@case(I, ref=lambda x: x.astype(np.float32).mean(0))
def mean_int_dtype(x):
    return mint.mean(x, 0, dtype=ms.float32)
