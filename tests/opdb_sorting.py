"""Op-database entries (see opdb.py) for sort, topk, cumsum and cumprod (core/ops/sorting.py): several ranks
and axes (negative ones too), descending, ties (a stable order), NaN and -0.0 among the values,
lines of odd and power-of-two lengths (the native merge sort's last run), a size-0 tensor, and
the scans' exclusive and reverse forms. Gradient samples have distinct values (a tie moves no
finite-difference probe across another value)."""
from __future__ import annotations

import numpy as np

from minispore.core import dtype as dt

from helpers import rand_default, rand_distinct

f16, f32, f64, i32, i64, u8, i8 = (dt.float16, dt.float32, dt.float64, dt.int32, dt.int64,
                                   dt.uint8, dt.int8)

SORT_SHAPES = (((5,), 0), ((2, 3, 4), 1), ((3, 8), -1), ((9, 2), 0), ((2, 17), 1), ((0, 3), 1))


def _with_ties(dtype, shape, rng):
    v = rng.integers(0 if dtype.kind == "u" else -2, 3, shape)
    if not dtype.is_float:
        return v.astype(dtype.np)
    x = v * 0.5
    x[rng.random(shape) < 0.2] = np.nan
    x[rng.random(shape) < 0.15] = -0.0
    return x.astype(dtype.np)


def sort_samples(Sample):
    def gen(rng, dtype):
        out = []
        for shape, axis in SORT_SHAPES:
            for desc in (False, True):
                out.append(Sample((rand_distinct(rng, shape, dtype),),
                                  {"axis": axis, "descending": desc},
                                  f"x{shape} axis={axis} descending={desc}"))
        for shape, axis in (((4, 6), 1), ((13,), 0)):
            for desc in (False, True):
                out.append(Sample((_with_ties(dtype, shape, rng),),
                                  {"axis": axis, "descending": desc},
                                  f"ties/NaN x{shape} axis={axis} descending={desc}",
                                  grad=False))
        return out
    return gen


def cumsum_samples(Sample):
    def gen(rng, dtype):
        out = []
        for shape, axis in (((5,), 0), ((2, 3, 4), 1), ((3, 4), -1), ((4, 3), 0), ((0, 3), 1)):
            for exc, rev in ((False, False), (True, False), (False, True), (True, True)):
                out.append(Sample((rand_default(rng, shape, dtype),),
                                  {"axis": axis, "exclusive": exc, "reverse": rev},
                                  f"x{shape} axis={axis} exclusive={exc} reverse={rev}"))
        if dtype.is_float:
            x = np.array([[-0.0, 1.5, np.nan, 2.0], [-0.0, -0.0, np.inf, -np.inf]], dtype.np)
            out.append(Sample((x,), {"axis": 1, "exclusive": False, "reverse": False},
                              "-0.0/NaN/inf x(2, 4)", grad=False))
        return out
    return gen


def cumprod_samples(Sample):
    def gen(rng, dtype):
        out = []
        for shape, axis in (((5,), 0), ((2, 3, 4), 1), ((3, 4), -1), ((0, 3), 1)):
            for exc, rev in ((False, False), (True, False), (False, True), (True, True)):
                x = rand_default(rng, shape, dtype)
                if dtype.is_float:       # away from 0: the gradient divides by x
                    x = (np.sign(x) + (x == 0)) * (0.5 + np.abs(x) / 2)
                    x = x.astype(dtype.np)
                out.append(Sample((x,), {"axis": axis, "exclusive": exc, "reverse": rev},
                                  f"x{shape} axis={axis} exclusive={exc} reverse={rev}"))
        if dtype.is_float:
            x = np.array([[-0.0, 1.5, np.nan, 2.0], [0.0, -3.0, np.inf, 0.5]], dtype.np)
            out.append(Sample((x,), {"axis": 1, "exclusive": False, "reverse": False},
                              "-0.0/NaN/inf x(2, 4)", grad=False))
        return out
    return gen


def topk_samples(Sample):
    """Rows of several lengths, k from 1 to the whole row (both of the selection's paths: the
    stable sort past n // 2, nth_element below), sorted and not, heavy ties (MindSpore's tie
    order) and NaN (no gradient: ties move under a probe)."""
    def gen(rng, dtype):
        out = []
        for shape, k in (((5,), 2), ((2, 7), 4), ((3, 9), 1), ((2, 3, 6), 6), ((0, 4), 2),
                         ((2, 40), 7)):
            for srt in (True, False):
                out.append(Sample((rand_distinct(rng, shape, dtype),), {"k": k, "sorted": srt},
                                  f"x{shape} k={k} sorted={srt}"))
        for shape, k in (((3, 20), 5), ((2, 33), 17), ((4, 8), 3)):
            for srt in (True, False):
                out.append(Sample((_with_ties(dtype, shape, rng),), {"k": k, "sorted": srt},
                                  f"ties x{shape} k={k} sorted={srt}", grad=False))
        return out
    return gen


def sorting_cases(OpCase, Sample):
    return [
        OpCase("sort", sort_samples(Sample), (f32, f64, i32, f16, u8, i64)),
        OpCase("topk", topk_samples(Sample), (f32, f64, i32, f16, u8, i64)),
        OpCase("cumsum", cumsum_samples(Sample), (f32, f64, i32, f16, i8, dt.uint32), accum=True),
        OpCase("cumprod", cumprod_samples(Sample), (f32, f64, i32, f16, i64), accum=True),
    ]
