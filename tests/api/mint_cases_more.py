"""The sorting, scan, einsum and other cases of mint_cases.py (random functions are tested
by their properties in test_mint.py: their streams differ from MindSpore's)."""
from __future__ import annotations

import numpy as np

from mint_cases import F, G, I, M3, T, TIES, V, W, case, mint, ms  # noqa: F401

S = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, -1.0, 4.0, 0.5]], np.float32)
SI = np.array([3, 1, 2, 3, 1, 1, 0], np.int32)
EDGES = np.array([1.0, 3.0, 5.0, 7.0], np.float32)
Q = np.array([[3.0, 6.0], [0.0, 9.0]], np.float32)


def _stable_argsort(a, axis=-1, descending=False):
    return np.argsort(-a if descending else a, axis=axis, kind="stable").astype(np.int64)


# ---------------------------------------------------------------- sorting and scans -------------
@case(S, ref=lambda x: (np.sort(x, -1), _stable_argsort(x)))
def sort(x):
    return mint.sort(x)


@case(S, ref=lambda x: (-np.sort(-x, 0), _stable_argsort(x, 0, True)))
def sort_descending_dim0(x):
    return mint.sort(x, dim=0, descending=True)


@case(S, ref=lambda x: _stable_argsort(x))
def argsort(x):
    return mint.argsort(x)


@case(S, ref=lambda x: _stable_argsort(x, 1, True))
def argsort_descending(x):
    return mint.argsort(x, 1, True)


@case(TIES * F, ref=lambda x: (-np.sort(-x, 1)[:, :2], _stable_argsort(x, 1, True)[:, :2]))
def topk(x):                # no ties: PyTorch leaves their order open
    return mint.topk(x, 2)


@case(TIES * F, ref=lambda x: (np.sort(x, 1)[:, :3], _stable_argsort(x, 1)[:, :3]))
def topk_smallest(x):
    return mint.topk(x, 3, dim=1, largest=False)


@case(S, ref=lambda x: np.cumsum(x, 1))
def cumsum(x):
    return mint.cumsum(x, 1)


@case(I, ref=lambda x: np.cumsum(x, 0).astype(np.int64))
def cumsum_int(x):
    return mint.cumsum(x, 0)


@case(I, ref=lambda x: np.cumsum(x, 1).astype(np.float32))
def cumsum_dtype(x):
    return mint.cumsum(x, 1, dtype=ms.float32)


@case(S, ref=lambda x: np.cumprod(x, 1))
def cumprod(x):
    return mint.cumprod(x, 1)


@case(I, ref=lambda x: np.cumprod(x, 1).astype(np.int64))
def cumprod_int(x):
    return mint.cumprod(x, 1)


def _cum_extreme(x, greater):
    v, i = x.copy(), np.zeros(x.shape, np.int64)
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            if c == 0 or (x[r, c] >= v[r, c - 1] if greater else x[r, c] <= v[r, c - 1]):
                v[r, c], i[r, c] = x[r, c], c
            else:
                v[r, c], i[r, c] = v[r, c - 1], i[r, c - 1]
    return v, i


CUM = np.array([[1.0, 3.0, 2.0, 3.0, 0.0, 5.0, 5.0], [4.0, 4.0, 1.0, 6.0, 2.0, 7.0, 1.0]],
               np.float32)


@case(CUM, ref=lambda x: _cum_extreme(x, True))
def cummax(x):
    return mint.cummax(x, 1)


@case(CUM, ref=lambda x: _cum_extreme(x, False))
def cummin(x):
    return mint.cummin(x, -1)


@case(S, ref=lambda x: np.float32(np.sort(x.reshape(-1))[3]))
def median_all(x):
    return mint.median(x)


@case(S, ref=lambda x: (np.sort(x, 1)[:, 1], _stable_argsort(x, 1)[:, 1]))
def median_dim(x):
    return mint.median(x, 1)


@case(S, ref=lambda x: (np.sort(x, 0)[:1], _stable_argsort(x, 0)[:1]))
def median_dim_keepdim(x):
    return mint.median(x, 0, True)


@case(S, ref=lambda x: (np.sort(x, 1)[:, 2], _stable_argsort(x, 1)[:, 2]))
def kthvalue(x):
    return mint.kthvalue(x, 3)


@case(EDGES, Q, ref=lambda s, v: np.searchsorted(s, v).astype(np.int64))
def searchsorted(s, v):
    return mint.searchsorted(s, v)


@case(EDGES, Q, ref=lambda s, v: np.searchsorted(s, v, "right").astype(np.int32))
def searchsorted_right_int32(s, v):
    return mint.searchsorted(s, v, right=True, out_int32=True)


@case(np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], np.float32),
      np.array([[3.0, 0.0], [6.0, 4.0]], np.float32),
      ref=lambda s, v: np.stack([np.searchsorted(s[i], v[i], "right") for i in range(2)])
      .astype(np.int64))
def searchsorted_batched(s, v):
    return mint.searchsorted(s, v, side="right")


@case(SI, ref=lambda x: np.unique(x), graph=False)
def unique(x):
    return mint.unique(x)


@case(SI, ref=lambda x: tuple(np.unique(x, return_inverse=True, return_counts=True)[i]
                              .astype(t) for i, t in ((0, np.int32), (1, np.int64),
                                                      (2, np.int64))), graph=False)
def unique_inverse_counts(x):
    return mint.unique(x, return_inverse=True, return_counts=True)


@case(SI, ref=lambda x: (np.array([3, 1, 2, 3, 1, 0], np.int32),
                         np.array([0, 1, 2, 3, 4, 4, 5], np.int64),
                         np.array([1, 1, 1, 1, 2, 1], np.int64)), graph=False)
def unique_consecutive(x):
    return mint.unique_consecutive(x, True, True)


@case(SI, ref=lambda x: np.bincount(x).astype(np.int64), graph=False)
def bincount(x):
    return mint.bincount(x)


@case(SI, np.arange(7, dtype=np.float32) / 2,
      ref=lambda x, w: np.bincount(x, w, 6).astype(np.float32), graph=False)
def bincount_weights(x, w):
    return mint.bincount(x, w, 6)


@case(S, ref=lambda x: np.histogram(x, 4, (-1.0, 4.0))[0].astype(np.float32))
def histc(x):
    return mint.histc(x, 4, -1, 4)


@case(S, ref=lambda x: np.histogram(x, 5)[0].astype(np.float32))
def histc_data_range(x):
    return mint.histc(x, 5)


# ---------------------------------------------------------------- einsum and more ---------------
@case(T, T.swapaxes(1, 2), ref=lambda a, b: np.einsum("bij,bjk->bik", a, b))
def einsum_bmm(a, b):
    return mint.einsum("bij,bjk->bik", a, b)


@case(T, ref=lambda a: np.einsum("bij->jb", a))
def einsum_sum_transpose(a):
    return mint.einsum("bij->jb", a)


@case(M3, ref=lambda a: np.float32(np.einsum("ii", a)))
def einsum_trace(a):
    return mint.einsum("ii", a)


@case(V, W, ref=lambda a, b: np.einsum("i,j", a, b))
def einsum_outer_implicit(a, b):
    return mint.einsum("i,j", a, b)


@case(T, np.ones((4, 2), np.float32) * 0.5, V,
      ref=lambda a, b, c: np.einsum("...ij,jk,i->...k", a, b, c))
def einsum_three_ellipsis(a, b, c):
    return mint.einsum("...ij,jk,i->...k", a, b, c)


@case(np.array([1e-8, 1e-3, 0.5, -0.7, -30.0, 0.0], np.float32), ref=np.expm1)
def expm1(x):
    return mint.expm1(x)


@case(T[0], T[1, :2], ref=lambda a, b: np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)))
def cdist(a, b):
    return mint.cdist(a, b)


@case(T[0], T[1, :2], ref=lambda a, b: np.abs(a[:, None] - b[None]).sum(-1))
def cdist_p1(a, b):
    return mint.cdist(a, b, 1.0)


def _index_add_ref(x, i, s, alpha):
    out = x.copy()
    for k, j in enumerate(i):
        out[:, j] += alpha * s[:, k]
    return out


@case(F, np.array([2, 0, 2, 1], np.int64), np.arange(8, dtype=np.float32).reshape(2, 4),
      ref=lambda x, i, s: _index_add_ref(x, i, s, 2.0))
def index_add(x, i, s):
    return mint.index_add(x, 1, i, s, alpha=2)


def _conv_ref(x, w):
    out = np.zeros((1, 2, 2, 2), np.float32)
    for o in range(2):
        for i in range(2):
            for j in range(2):
                out[0, o, i, j] = (x[0, :, i:i + 3, j:j + 3] * w[o]).sum()
    return out


@case(np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4) / 8,
      np.arange(36, dtype=np.float32).reshape(2, 2, 3, 3) / 16 - 1,
      ref=lambda x, w: _conv_ref(x, w))
def conv2d(x, w):
    return mint.conv2d(x, w)


@case(ref=lambda: np.zeros((2, 3), np.float32))
def empty():                # its values are whatever memory held: compared by shape and dtype
    return mint.zeros_like(mint.empty(2, 3))


@case(I, ref=lambda x: np.zeros((2, 3), np.float32))
def empty_like_dtype(x):
    return mint.zeros_like(mint.empty_like(x, dtype=ms.float32))
