"""Device data formats: ND (row-major) and FRACTAL_NZ, and the real re-layout between them.

FRACTAL_NZ stores a matrix as 16x16 fractals, the unit the Cube consumes: ND `[..., m, n]`
becomes `[..., ceil(n/16), ceil(m/16)*16, 16]` (the column blocks outermost, each a column of
fractals), zero-padded (notes/ascend-gpu.md A4: `{8,100,30}` -> `{8,2,112,16}`). TransData is
the kernel that re-lays the bytes; these functions are its arithmetic.
"""
from __future__ import annotations

import numpy as np

C0 = 16


def nz_shape(shape: tuple) -> tuple:
    *batch, m, n = shape
    return (*batch, -(-n // C0), -(-m // C0) * C0, C0)


def nd_to_nz(a: np.ndarray) -> np.ndarray:
    *batch, m, n = a.shape
    n1, mp = -(-n // C0), -(-m // C0) * C0
    pad = np.zeros((*batch, mp, n1 * C0), a.dtype)
    pad[..., :m, :n] = a
    r = pad.reshape(*batch, mp, n1, C0)
    return np.ascontiguousarray(np.swapaxes(r, -3, -2))


def nz_to_nd(a: np.ndarray, shape: tuple) -> np.ndarray:
    *batch, m, n = shape
    *_, n1, mp, c0 = a.shape
    r = np.swapaxes(a, -3, -2).reshape(*batch, mp, n1 * c0)
    return np.ascontiguousarray(r[..., :m, :n])
