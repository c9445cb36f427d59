"""Op-database entries (see opdb.py) for core/ops/pool_nd.py: window pools over 1, 2 and 3
trailing axes (stride > 1, dilation, asymmetric and ceil_mode padding, a window covering the
whole axis, extra leading axes), their first-maximum indices, average pools with and without
counted padding and a divisor override, adaptive pools with equal and uneven bins (and an axis
kept), and group norm from one group to one channel per group, 2-D to 5-D, a size-0 batch.
Max-pool gradient samples have distinct values (no tie moves under a finite-difference
probe)."""
from __future__ import annotations

from minispore.core import dtype as dt

from helpers import rand_default, rand_distinct

f16, f32, f64, i32 = dt.float16, dt.float32, dt.float64, dt.int32

# (x shape, kernel_size, stride, dilation, pads (before, after per axis))
WINDOW_SPECS = [
    ((2, 7), (3,), (2,), (1,), (0, 0)),
    ((1, 2, 7), (2,), (1,), (2,), (1, 1)),
    ((1, 2, 7), (2,), (2,), (1,), (0, 1)),                  # a ceil_mode tail
    ((1, 1, 4, 5), (2, 3), (1, 2), (1, 1), (1, 0, 1, 1)),
    ((1, 2, 4, 5, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1, 1, 1, 1)),
    ((2, 3, 4, 3), (2, 2, 3), (1, 2, 1), (1, 1, 1), (0, 0, 0, 0, 0, 0)),   # unbatched, W whole
    ((1, 1, 3, 4, 4), (2, 2, 2), (1, 1, 1), (2, 1, 2), (0, 0, 1, 0, 0, 1)),
]
# (x shape, kernel_size, stride, pads, counted, count_include_pad, divisor_override)
AVG_SPECS = [
    ((2, 7), (3,), (2,), (0, 0), (0, 0), True, 0),
    ((1, 2, 7), (3,), (2,), (1, 1), (1, 1), False, 0),
    ((1, 2, 7), (2,), (2,), (0, 1), (0, 0), True, 0),       # ceil_mode tail: not counted
    ((1, 2, 4, 5, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1), True, 0),
    ((1, 2, 4, 5, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1), False, 0),
    ((1, 1, 4, 5, 5), (3, 3, 3), (2, 2, 2), (1, 0, 1, 1, 0, 1), (1, 0, 1, 1, 0, 1), True, 5),
    ((1, 1, 3, 4), (2, 2), (1, 1), (2, 0, 0, 0), (2, 0, 0, 0), False, 0),  # padding-only rows
    ((1, 1, 3, 5), (2, 2), (2, 2), (0, 1, 0, 1), (0, 0, 0, 0), True, 0),   # 'valid' + ceil_mode
]
# (x shape, output_size)
ADAPTIVE_SPECS = [
    ((1, 2, 6), (3,)),
    ((1, 2, 7), (3,)),
    ((1, 2, 5, 7), (3, 4)),
    ((2, 5, 7), (5, 2)),                                    # H kept
    ((1, 2, 3, 5, 4), (2, 3, 2)),
    ((2, 3, 5, 4), (1, 1, 1)),
]
# (x shape, num_groups)
GROUP_SPECS = [((3, 4), 2), ((2, 4, 3, 2), 2), ((2, 4, 3, 2), 4), ((1, 2, 2, 2, 3), 1),
               ((2, 6, 5), 3), ((0, 4, 3), 2)]


def _fmt(d):
    return " ".join(f"{k}={v}" for k, v in d.items())


def window_samples(Sample):
    def gen(rng, dtype):
        out = []
        for xs, k, s, d, p in WINDOW_SPECS:
            a = {"kernel_size": k, "stride": s, "dilation": d, "pads": p}
            out.append(Sample((rand_distinct(rng, xs, dtype),), a, f"x{xs} {_fmt(a)}"))
        a = {"kernel_size": (2,), "stride": (1,), "dilation": (1,), "pads": (0, 0)}
        out.append(Sample((rand_distinct(rng, (0, 2, 4), dtype),), a, f"x(0, 2, 4) {_fmt(a)}",
                          grad=False))
        # windows over padding only (MindSpore allows before + after = kernel): -inf there
        a = {"kernel_size": (2, 2), "stride": (1, 1), "dilation": (1, 1), "pads": (2, 0, 0, 0)}
        out.append(Sample((rand_distinct(rng, (1, 1, 3, 4), dtype),), a,
                          f"x(1, 1, 3, 4) {_fmt(a)}", grad=False))
        return out
    return gen


def avg_samples(Sample):
    def gen(rng, dtype):
        out = []
        for xs, k, s, p, c, cip, div in AVG_SPECS:
            a = {"kernel_size": k, "stride": s, "pads": p, "counted": c,
                 "count_include_pad": cip, "divisor_override": div}
            out.append(Sample((rand_default(rng, xs, dtype),), a, f"x{xs} {_fmt(a)}"))
        return out
    return gen


def adaptive_samples(Sample):
    def gen(rng, dtype):
        return [Sample((rand_distinct(rng, xs, dtype),), {"output_size": o},
                       f"x{xs} output_size={o}") for xs, o in ADAPTIVE_SPECS]
    return gen


def group_norm_samples(Sample):
    def gen(rng, dtype):
        out = []
        for xs, g in GROUP_SPECS:
            C = xs[1]
            out.append(Sample((rand_default(rng, xs, dtype), rand_default(rng, (C,), dtype),
                               rand_default(rng, (C,), dtype)),
                              {"num_groups": g, "eps": 1e-5}, f"x{xs} num_groups={g}"))
        return out
    return gen


def pool_nd_cases(OpCase, Sample):
    FL = (f32, f64, f16)
    MAXES = FL + (i32,)         # the max pools take integers (MindSpore's 3-D ones do)
    return [
        OpCase("max_pool_nd", window_samples(Sample), MAXES),
        OpCase("max_pool_nd_argmax", window_samples(Sample), MAXES, grad=False),
        # float16 means: the parts round each axis's partial means (the reference rounds once)
        OpCase("avg_pool_nd", avg_samples(Sample), FL, accum=True, tol={f16: (5e-3, 5e-3)}),
        OpCase("adaptive_avg_pool_nd", adaptive_samples(Sample), FL, accum=True,
               tol={f16: (5e-3, 5e-3)}),
        OpCase("adaptive_max_pool_nd", adaptive_samples(Sample), MAXES),
        OpCase("adaptive_max_pool_nd_argmax", adaptive_samples(Sample), MAXES, grad=False),
        OpCase("group_norm", group_norm_samples(Sample), (f32, f64), accum=True),
    ]
