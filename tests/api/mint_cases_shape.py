"""The shape, indexing and matrix-product cases of mint_cases.py."""
from __future__ import annotations

import numpy as np

from mint_cases import (B, C, CASES, F, G, I, IDX, J, M3, NANS, P, T, TIES, U, V,  # noqa: F401
                        W, case, mint, ms)


# ---------------------------------------------------------------- shapes and indexing -----------
@case(T, ref=lambda x: x.reshape(4, -1))
def reshape(x):
    return mint.reshape(x, (4, -1))


@case(T, ref=lambda x: x.transpose(2, 0, 1))
def permute(x):
    return mint.permute(x, (2, 0, 1))


@case(T, ref=lambda x: x.swapaxes(0, 2))
def transpose(x):
    return mint.transpose(x, 0, 2)


@case(T, ref=lambda x: x.swapaxes(-1, 1))
def transpose_negative(x):
    return mint.transpose(x, -1, 1)


@case(T, ref=lambda x: x.swapaxes(0, 1))
def swapaxes(x):
    return mint.swapaxes(x, 0, 1)


@case(F, ref=lambda x: x.T)
def t(x):
    return mint.t(x)


@case(T, ref=lambda x: x.reshape(-1))
def flatten(x):
    return mint.flatten(x)


@case(T, ref=lambda x: x.reshape(2, 12))
def flatten_start(x):
    return mint.flatten(x, 1)


@case(T, ref=lambda x: x.reshape(6, 4))
def flatten_range(x):
    return mint.flatten(x, 0, 1)


@case(T, ref=lambda x: x.reshape(-1))
def ravel(x):
    return mint.ravel(x)


@case(np.ones((2, 1, 3, 1), np.float32), ref=lambda x: x.reshape(2, 3, 1))
def squeeze(x):
    return mint.squeeze(x, 1)


@case(np.ones((2, 1, 3, 1), np.float32), ref=lambda x: x.reshape(2, 1, 3))
def squeeze_not_one(x):
    return mint.squeeze(x, (0, 3))


@case(F, ref=lambda x: x[:, None])
def unsqueeze(x):
    return mint.unsqueeze(x, 1)


@case(F, G, ref=lambda x, y: np.concatenate([x, y], 1))
def cat(x, y):
    return mint.cat((x, y), 1)


@case(F, G, ref=lambda x, y: np.concatenate([x, y], 0))
def concat(x, y):
    return mint.concat([x, y])


@case(F, G, ref=lambda x, y: np.stack([x, y], 2))
def stack(x, y):
    return mint.stack((x, y), dim=2)


@case(F, G, ref=lambda x, y: np.hstack([x, y]))
def hstack(x, y):
    return mint.hstack((x, y))


@case(F, G, ref=lambda x, y: np.dstack([x, y]))
def dstack(x, y):
    return mint.dstack([x, y])


@case(T, ref=lambda x: tuple(np.split(x, [2], 2)))
def split_size(x):
    return mint.split(x, 2, 2)


@case(T, ref=lambda x: tuple(np.split(x, [2], 1)))
def split_uneven(x):
    return mint.split(x, 2, dim=1)


@case(T, ref=lambda x: tuple(np.split(x, [1, 4], 2)))
def split_sections(x):
    return mint.split(x, [1, 3], 2)


@case(T, ref=lambda x: tuple(np.split(x, [2], 1)))
def chunk(x):
    return mint.chunk(x, 2, 1)


@case(T, ref=lambda x: tuple(x[:, i] for i in range(3)))
def unbind(x):
    return mint.unbind(x, 1)


@case(T, ref=lambda x: x[:, :, 1:3])
def narrow(x):
    return mint.narrow(x, 2, 1, 2)


@case(T, ref=lambda x: x[:, -1])
def select(x):
    return mint.select(x, 1, -1)


@case(F, ref=lambda x: np.tile(x, (2, 2)))
def tile(x):
    return mint.tile(x, (2, 2))


@case(F, ref=lambda x: np.tile(x, (1, 3)))
def tile_short(x):
    return mint.tile(x, (3,))


@case(V, ref=lambda x: np.broadcast_to(x, (2, 3)))
def broadcast_to(x):
    return mint.broadcast_to(x, (2, 3))


@case(T, ref=lambda x: x[::-1, :, ::-1])
def flip(x):
    return mint.flip(x, (0, 2))


@case(F, ref=lambda x: np.roll(x, 1))
def roll_flat(x):
    return mint.roll(x, 1)


@case(T, ref=lambda x: np.roll(x, (1, -1), (1, 2)))
def roll_dims(x):
    return mint.roll(x, (1, -1), (1, 2))


@case(M3, ref=np.tril)
def tril(x):
    return mint.tril(x)


@case(M3, ref=lambda x: np.triu(x, 1))
def triu(x):
    return mint.triu(x, 1)


@case(V, W[:2], ref=lambda a, b: tuple(np.meshgrid(a, b, indexing="ij")))
def meshgrid_ij(a, b):
    return mint.meshgrid(a, b, indexing="ij")


@case(V, W[:2], ref=lambda a, b: tuple(np.meshgrid(a, b, indexing="xy")))
def meshgrid_xy(a, b):
    return mint.meshgrid(a, b, indexing="xy")


@case(F, ref=lambda x: np.repeat(x, 2, 1))
def repeat_interleave(x):
    return mint.repeat_interleave(x, 2, 1)


@case(F, ref=lambda x: np.repeat(x.reshape(-1), 2))
def repeat_interleave_flat(x):
    return mint.repeat_interleave(x, 2)


@case(F, IDX, ref=lambda x, i: np.take_along_axis(x, i, 1))
def gather(x, i):
    return mint.gather(x, 1, i)


@case(T, np.array([[[1, 0]], [[0, 1]]], np.int64),
      ref=lambda x, i: np.take_along_axis(x[:, :1, :2], i, 0))
def gather_dim0(x, i):
    return mint.gather(x, 0, i)


@case(T, np.array([2, 0], np.int64), ref=lambda x, i: x[:, i])
def index_select(x, i):
    return mint.index_select(x, 1, i)


@case(F, IDX, ref=lambda x, i: x.reshape(-1)[i])
def take(x, i):
    return mint.take(x, i)


def _scatter_ref(x, i, s, add):
    out = x.copy()
    for r in range(i.shape[0]):
        for c in range(i.shape[1]):
            if add:
                out[r, i[r, c]] += s[r, c]
            else:
                out[r, i[r, c]] = s[r, c]
    return out


@case(F, IDX, G, ref=lambda x, i, s: _scatter_ref(x, i, s, False))
def scatter(x, i, s):
    return mint.scatter(x, 1, i, s)


@case(F, np.array([[0, 0], [1, 1]], np.int64), G,
      ref=lambda x, i, s: _scatter_ref(x, i, s, True))
def scatter_add(x, i, s):
    return mint.scatter_add(x, 1, i, s)


@case(F, B, ref=lambda x, m: x[m], graph=False)
def masked_select(x, m):
    return mint.masked_select(x, m)


@case(F, ref=lambda x: np.argwhere(x).astype(np.int64), graph=False)
def nonzero(x):
    return mint.nonzero(x)


@case(F, ref=lambda x: tuple(i.astype(np.int64) for i in np.nonzero(x)), graph=False)
def nonzero_tuple(x):
    return mint.nonzero(x, as_tuple=True)


@case(B, F, G, ref=np.where)
def where(c, x, y):
    return mint.where(c, x, y)


@case(B, F, ref=lambda c, x: np.where(c, x, np.float32(0.5)))
def where_scalar(c, x):
    return mint.where(c, x, 0.5)


@case(np.array([2.5], np.float32), ref=lambda x: 2.5, graph=False)
def item(x):
    return mint.item(x)


@case(F, ref=lambda x: x.copy())
def clone(x):
    return mint.clone(x)


@case(V, ref=np.diag)
def diag_vector(x):
    return mint.diag(x)


@case(V, ref=lambda x: np.diag(x, -1))
def diag_vector_below(x):
    return mint.diag(x, -1)


@case(M3, ref=lambda x: np.diag(x, 1))
def diag_matrix(x):
    return mint.diag(x, 1)


@case(F, ref=lambda x: np.diag(x, -1))
def diag_rect_below(x):
    return mint.diag(x, -1)


@case(M3, ref=lambda x: np.float32(np.trace(x)))
def trace(x):
    return mint.trace(x)


@case(T, ref=lambda x: np.diff(x, 2, 1))
def diff(x):
    return mint.diff(x, 2, 1)


@case(V, W, ref=lambda x, p: np.diff(x, prepend=p))
def diff_prepend(x, p):
    return mint.diff(x, prepend=p)


@case(np.stack([V, W]), np.stack([W, V]), ref=lambda a, b: np.cross(a, b))
def cross(a, b):
    return mint.cross(a, b)


# ---------------------------------------------------------------- products ----------------------
@case(T, np.ones((4, 2), np.float32) * W[:2], ref=lambda a, b: a @ b)
def matmul(a, b):
    return mint.matmul(a, b)


@case(T[0], W[:4] if False else np.arange(4, dtype=np.float32), ref=lambda a, b: a @ b)
def matmul_vector(a, b):
    return mint.matmul(a, b)


@case(F, M3, ref=lambda a, b: a @ b)
def mm(a, b):
    return mint.mm(a, b)


@case(T, T.swapaxes(1, 2), ref=lambda a, b: a @ b)
def bmm(a, b):
    return mint.bmm(a, b)


@case(F, V, ref=lambda a, b: a @ b)
def mv(a, b):
    return mint.mv(a, b)


@case(V, W, ref=lambda a, b: np.float32(a @ b))
def dot(a, b):
    return mint.dot(a, b)


@case(V, W, ref=lambda a, b: np.float32(a @ b))
def vdot(a, b):
    return mint.vdot(a, b)


@case(V, W[:2], ref=np.outer)
def outer(a, b):
    return mint.outer(a, b)


@case(F, F, M3, ref=lambda x, a, b: 0.5 * x + 2 * (a @ b))
def addmm(x, a, b):
    return mint.addmm(x, a, b, beta=0.5, alpha=2)


@case(V[:2], F, V, ref=lambda x, a, b: x + a @ b)
def addmv(x, a, b):
    return mint.addmv(x, a, b)


@case(T[:, :, :3], T, T.swapaxes(1, 2)[:, :, :3],
      ref=lambda x, a, b: 2 * x + 0.5 * (a @ b))
def baddbmm(x, a, b):
    return mint.baddbmm(x, a, b, beta=2, alpha=0.5)


@case(F[:, :2] * 0 + np.float32(1), T.swapaxes(1, 2)[:, :2], T[:, :, :2],
      ref=lambda x, a, b: x[:2, :2] + (a @ b).sum(0), name="addbmm")
def _addbmm(x, a, b):
    return mint.addbmm(x[:, :2], a, b)
