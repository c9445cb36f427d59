"""Op-database entries (see opdb.py) for core/ops/array_nd.py and core/ops/resample.py: pad in
every border mode (negative pads cropping, one and several axes, 1-D to 4-D), resize in every
mode and coordinate transform on non-integer ratios (5 -> 7, 7 -> 5, 3 -> 2 and a 2-D and a
3-D grid), gather_nd/scatter_nd/tensor_scatter_add/update with full and partial index tuples, repeated
tuples (summed gradients) and empty index sets, masked_fill with broadcast masks, tril/triu with positive,
negative and out-of-range diagonals, and einsum equations (matmul, implicit output, trace,
diagonal, '...', outer product, three operands)."""
from __future__ import annotations

import numpy as np

from minispore.core import dtype as dt

from helpers import rand_default

f16, f32, f64, i32, i64 = dt.float16, dt.float32, dt.float64, dt.int32, dt.int64

PAD_SPECS = [
    ((2, 5), (1, 2), "constant", 0),
    ((2, 5), (2, 1), "reflect", 0),
    ((2, 3, 4), (1, 2, 2, 0), "replicate", 0),
    ((2, 3, 4), (3, 1, 1, 2), "circular", 0),
    ((1, 3, 4), (2, 3, 1, 3), "symmetric", 0),
    ((3, 4), (-1, 2, 1, -1), "constant", 1.5),
    ((1, 2, 5), (-1, 2), "reflect", 0),
    ((1, 2, 5), (-2, 2), "circular", 0),
    ((2, 2, 2, 3), (1, 1, 1, 0, 0, 1), "replicate", 0),
    ((4,), (0, 2), "constant", 0),
    ((0, 3), (1, 1), "replicate", 0),
]

# (x shape, sizes, mode, coordinate)
RESIZE_SPECS = [
    ((1, 1, 5), (7,), "nearest", "half_pixel"),
    ((1, 2, 7), (5,), "nearest", "half_pixel"),
    ((1, 1, 5), (7,), "nearest_exact", "half_pixel"),
    ((2, 1, 7), (5,), "linear", "half_pixel"),
    ((1, 1, 5), (7,), "linear", "align_corners"),
    ((1, 1, 7), (3,), "linear", "asymmetric"),
    ((1, 1, 3, 5), (4, 7), "linear", "half_pixel"),
    ((1, 2, 3, 5), (2, 3), "linear", "asymmetric"),
    ((1, 1, 3, 5), (4, 7), "cubic", "half_pixel"),
    ((1, 1, 3, 5), (5, 3), "cubic", "align_corners"),
    ((1, 1, 3, 5), (4, 7), "cubic_tabulated", "half_pixel"),
    ((1, 2, 3, 5), (2, 3), "cubic_tabulated", "align_corners"),
    ((1, 1, 3, 5), (4, 7), "area", "half_pixel"),
    ((1, 1, 7), (3,), "area", "half_pixel"),
    ((1, 2, 8, 6), (4, 3), "area", "half_pixel"),       # equal windows: the reshape path
    ((1, 1, 6), (6,), "area", "half_pixel"),
    ((1, 1, 2, 3, 4), (3, 2, 5), "linear", "half_pixel"),
    ((1, 1, 4), (1,), "linear", "align_corners"),
    ((1, 1, 3, 5), (4, 7), "nearest_round", "half_pixel"),
    ((1, 1, 5), (1,), "nearest_round", "half_pixel"),
]


def _fmt(d):
    return " ".join(f"{k}={v}" for k, v in d.items())


def pad_samples(Sample):
    def gen(rng, dtype):
        return [Sample((rand_default(rng, shape, dtype),),
                       {"padding": p, "mode": m, "value": v if dtype.is_float else int(v)},
                       f"x{shape} padding={p} mode={m} value={v}")
                for shape, p, m, v in PAD_SPECS]
    return gen


def resize_samples(Sample):
    def gen(rng, dtype):
        out = [Sample((rand_default(rng, shape, dtype),),
                      {"sizes": s, "mode": m, "coordinate": c},
                      f"x{shape} sizes={s} mode={m} coordinate={c}")
               for shape, s, m, c in RESIZE_SPECS]
        out.append(Sample((rand_default(rng, (1, 1, 4), dtype),),
                          {"sizes": (6,), "mode": "linear", "coordinate": "half_pixel",
                           "scales": (0.5,)}, "x(1, 1, 4) sizes=(6,) scales=(0.5,)"))
        return out
    return gen


def _idx(a, dtype=np.int32):
    return np.asarray(a, dtype)


def gather_nd_samples(Sample):
    def gen(rng, dtype):
        x = rand_default(rng, (3, 4, 2), dtype)
        return [
            Sample((x, _idx([[0, 1, 1], [2, 3, 0]])), {}, "full tuples x(3, 4, 2)"),
            Sample((x, _idx([[2], [0], [2]], np.int64)), {}, "k=1, a repeated row (int64)"),
            Sample((x, _idx([[[1, 2], [0, 0]], [[1, 2], [2, 3]]])), {},
                   "k=2, batched, repeated"),
            Sample((x, np.zeros((0, 2), np.int32)), {}, "no index tuples"),
            Sample((rand_default(rng, (4,), dtype), _idx([3])), {}, "1-D indices: a 0-D out"),
        ]
    return gen


def scatter_nd_samples(Sample):
    def gen(rng, dtype):
        return [
            Sample((_idx([[0], [2]]), rand_default(rng, (2, 3), dtype)), {"shape": (4, 3)},
                   "rows into (4, 3)"),
            Sample((_idx([[0, 1], [0, 1], [1, 0]]), rand_default(rng, (3,), dtype)),
                   {"shape": (2, 2)}, "repeated tuples sum"),
            Sample((_idx([[[1, 0, 1]], [[0, 2, 0]]], np.int64), rand_default(rng, (2, 1, 2),
                                                                              dtype)),
                   {"shape": (2, 3, 2, 2)}, "batched k=3 of rank 4 (int64)"),
            Sample((np.zeros((0, 2), np.int32), rand_default(rng, (0,), dtype)),
                   {"shape": (2, 2)}, "no updates"),
        ]
    return gen


def tensor_scatter_samples(Sample):
    """Distinct index tuples for the update (which of repeated tuples wins is the kernel's
    order) and repeated ones for the add."""
    def gen(rng, dtype):
        return [
            Sample((rand_default(rng, (3, 4), dtype), _idx([[0, 1], [2, 3]]),
                    rand_default(rng, (2,), dtype)), {}, "elements of (3, 4)"),
            Sample((rand_default(rng, (4, 2), dtype), _idx([[3], [1]], np.int64),
                    rand_default(rng, (2, 2), dtype)), {}, "rows of (4, 2) (int64)"),
            Sample((rand_default(rng, (2, 3, 2), dtype), _idx([[[1, 2]], [[0, 0]]]),
                    rand_default(rng, (2, 1, 2), dtype)), {}, "batched k=2 of rank 3"),
            Sample((rand_default(rng, (2, 2), dtype), np.zeros((0, 2), np.int32),
                    rand_default(rng, (0,), dtype)), {}, "no updates"),
        ]
    return gen


def tensor_scatter_add_samples(Sample):
    base = tensor_scatter_samples(Sample)

    def gen(rng, dtype):
        out = base(rng, dtype)
        out.append(Sample((rand_default(rng, (2, 2), dtype), _idx([[0, 1], [0, 1], [1, 0]]),
                           rand_default(rng, (3,), dtype)), {}, "repeated tuples sum"))
        return out
    return gen


def masked_fill_samples(Sample):
    def gen(rng, dtype):
        def val():
            return np.asarray(rand_default(rng, (), dtype))
        return [
            Sample((rand_default(rng, (3, 4), dtype), rng.random((3, 4)) < 0.5, val()), {},
                   "same shapes"),
            Sample((rand_default(rng, (3, 4), dtype), rng.random((4,)) < 0.5, val()), {},
                   "mask broadcast"),
            Sample((rand_default(rng, (4,), dtype), rng.random((2, 4)) < 0.5, val()), {},
                   "input broadcast up"),
            Sample((rand_default(rng, (), dtype), np.array(True), val()), {}, "0-D"),
            Sample((rand_default(rng, (0, 3), dtype), np.zeros((0, 3), bool), val()), {},
                   "empty"),
        ]
    return gen


def triangle_samples(Sample):
    def gen(rng, dtype):
        return [Sample((rand_default(rng, shape, dtype),), {"diagonal": d},
                       f"x{shape} diagonal={d}")
                for shape, d in (((3, 4), 0), ((4, 3), 1), ((3, 4), -1), ((2, 3, 3), 2),
                                 ((3, 4), 5), ((3, 4), -5), ((0, 3), 0))]
    return gen


EINSUM_SPECS = [
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("ij,jk", ((2, 3), (3, 4))),
    ("ii->i", ((3, 3),)),
    ("ii", ((3, 3),)),
    ("ij->", ((2, 3),)),
    ("ji", ((2, 3),)),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 4))),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (3, 3, 4))),
    ("i,j->ij", ((2,), (3,))),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
    ("iij->j", ((2, 2, 3),)),
    ("bn,anm,bm->ba", ((2, 3), (4, 3, 5), (2, 5))),
    ("Ij,jK->KI", ((2, 3), (3, 2))),
    ("ij,ij->i", ((3, 4), (3, 4))),
    ("...ij->ij", ((4, 2, 3),)),                # '...' left out of the output is summed
    ("b...,b...->b", ((2, 3, 1), (2, 1, 4))),
]


def einsum_samples(Sample):
    def gen(rng, dtype):
        return [Sample(tuple(rand_default(rng, s, dtype) for s in shapes), {"equation": eq},
                       f"{eq} {shapes}") for eq, shapes in EINSUM_SPECS]
    return gen


def array_nd_cases(OpCase, Sample):
    return [
        OpCase("pad", pad_samples(Sample), (f32, f64, i32, f16)),
        OpCase("resize", resize_samples(Sample), (f32, f64, f16),
               tol={f16: (2e-3, 2e-3)}, accum=True),
        OpCase("gather_nd", gather_nd_samples(Sample), (f32, f64, i32, i64)),
        OpCase("scatter_nd", scatter_nd_samples(Sample), (f32, f64, i32, dt.bool_)),
        OpCase("tensor_scatter_add", tensor_scatter_add_samples(Sample), (f32, f64, i32)),
        OpCase("tensor_scatter_update", tensor_scatter_samples(Sample), (f32, f64, i32)),
        OpCase("masked_fill", masked_fill_samples(Sample), (f32, f64, i32, f16)),
        OpCase("tril", triangle_samples(Sample), (f32, f64, i32)),
        OpCase("triu", triangle_samples(Sample), (f32, f64, i32)),
        # einsum contracts with matmul, which the simulated Ascend runs on its Cube (fp16
        # operands): helpers.CUBE_OPS lists it, so only that backend gets the Cube's bound
        OpCase("einsum", einsum_samples(Sample), (f32, f64, f16), accum=True),
    ]
