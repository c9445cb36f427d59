"""Op-database entries (see opdb.py) for core/ops/activation.py: every activation composite with
each variant attribute MindSpore's ops/nn and mint call it with, samples of the usual unary
shapes (0-d and size 0 included), integer dtypes where the op takes them, and values kept at
least 0.15 away from the op's kinks (relu6 at 0 and 6, hardswish/hardsigmoid at +-3,
hardtanh at its bounds, leaky_relu/prelu/elu at 0, the shrinks at +-lambd, threshold at its
threshold), so the float64 finite differences are smooth. The gradients AT the kinks are
checked against MindSpore 2.10's numbers in tests/nn/test_activation_layers.py."""
from __future__ import annotations

import numpy as np

from minispore.core import dtype as dt

from helpers import rand_default

f16, f32, f64, i32, i8 = dt.float16, dt.float32, dt.float64, dt.int32, dt.int8

SHAPES = ((2, 3), (), (5,), (0, 3))
# the composites round to half precision after each part (as MindSpore's compositions do in
# float16), the references once: a few units in the last place apart
HALF_PARTS = {f16: (4e-3, 2e-3)}


def away(lo, hi, kinks, gap=0.15):
    """Floats uniform in [lo, hi] moved at least `gap` from every kink (ints: rand_default)."""
    def domain(rng, shape, dtype):
        if not dtype.is_float:
            return rand_default(rng, shape, dtype)
        v = rng.uniform(lo, hi, shape)
        for k in kinks:
            near = np.abs(v - k) < gap
            v = np.where(near, k + np.where(v >= k, gap, -gap), v)
        return np.asarray(v).astype(dtype.np)
    return domain


def _fmt(attrs):
    return " ".join(f"{k}={v}" for k, v in attrs.items())


def unary(Sample, domain, attrs_list=({},), shapes=SHAPES):
    def gen(rng, dtype):
        return [Sample((domain(rng, s, dtype),), dict(a), f"x{s} {_fmt(a)}".strip())
                for a in attrs_list for s in shapes]
    return gen


def prelu_samples(Sample):
    dom = away(-2, 2, (0,))

    def gen(rng, dtype):
        out = []
        for xs, ws in (((2, 3, 4), (3,)), ((2, 3), (1,)), ((2, 3, 2, 2), (3,)), ((5,), (1,)),
                       ((), (1,)), ((0, 3), (3,)), ((2, 1, 3), (1,))):
            w = rng.uniform(0.1, 0.6, ws).astype(dtype.np)
            out.append(Sample((dom(rng, xs, dtype), w), {}, f"x{xs} weight{ws}"))
        return out
    return gen


def axis_samples(Sample, domain, specs):
    def gen(rng, dtype):
        return [Sample((domain(rng, s, dtype),), {"axis": a}, f"x{s} axis={a}")
                for s, a in specs]
    return gen


def activation_cases(OpCase, Sample):
    smooth = away(-3, 3, ())
    elu_variants = (
        {},                                                        # ops.elu: exp(x) - 1 below
        {"exact": False},
        {"alpha": 1.6732632423543772, "scale": 1.0507009873554805,  # ops.selu
         "positive_at_zero": True},
        {"alpha": 0.5, "input_scale": 2.0},                          # ops.celu(x, 0.5)
        {"alpha": 2.5},                                              # mint elu(x, 2.5)
    )
    return [
        OpCase("relu6", unary(Sample, away(-2, 8, (0, 6))), dtypes=(f16, f32, f64, i32)),
        OpCase("hardswish", unary(Sample, away(-5, 5, (-3, 3))),
               dtypes=(f16, f32, f64, i32, i8)),
        OpCase("hardsigmoid", unary(Sample, away(-5, 5, (-3, 3))),
               dtypes=(f16, f32, f64, i32, i8)),
        OpCase("hardtanh", unary(Sample, away(-3, 3, (-1, 1, -0.5, 2.0)), (
            {}, {"bounds": "zero"}, {"min_val": -0.5, "max_val": 2.0},
            {"min_val": -0.5, "max_val": 2.0, "bounds": "zero"})), dtypes=(f16, f32, f64, i32)),
        OpCase("leaky_relu", unary(Sample, away(-2, 2, (0,)), (
            {}, {"alpha": 1.5}, {"alpha": -0.5}, {"alpha": 0.01, "form": "select"})),
            dtypes=(f16, f32, f64, i32)),
        OpCase("prelu", prelu_samples(Sample), dtypes=(f16, f32, f64)),
        OpCase("elu", unary(Sample, away(-3, 3, (0,)), elu_variants), dtypes=(f16, f32, f64),
               tol=HALF_PARTS),
        OpCase("silu", unary(Sample, smooth), dtypes=(f16, f32, f64),
               tol=HALF_PARTS),
        OpCase("mish", unary(Sample, smooth), dtypes=(f16, f32, f64),
               tol=HALF_PARTS),
        OpCase("softsign", unary(Sample, away(-3, 3, (0,))), dtypes=(f16, f32, f64),
               tol=HALF_PARTS),
        OpCase("logsigmoid", unary(Sample, smooth, (
            {}, {"form": "reciprocal"}, {"form": "softplus"}))),
        OpCase("tanhshrink", unary(Sample, smooth), dtypes=(f16, f32, f64, i32),
               tol=HALF_PARTS),
        OpCase("fast_gelu", unary(Sample, away(-3, 3, (0,))), dtypes=(f16, f32, f64),
               tol=HALF_PARTS),
        OpCase("softshrink", unary(Sample, away(-2, 2, (-0.5, 0.5, -1.0, 1.0)), (
            {}, {"lambd": 1.0})), dtypes=(f16, f32, f64)),
        OpCase("hardshrink", unary(Sample, away(-2, 2, (-0.5, 0.5, -1.0, 1.0)), (
            {}, {"lambd": 1.0}, {"lambd": -1.0})), dtypes=(f16, f32, f64)),
        OpCase("threshold", unary(Sample, away(-2, 2, (0.5, 0.0)), (
            {"threshold": 0.5, "value": 9.0}, {"threshold": 0.0, "value": -1.5})),
            dtypes=(f16, f32, f64, i32)),
        OpCase("softmin", axis_samples(Sample, smooth, (
            ((2, 3), -1), ((2, 3), 0), ((5,), 0), ((2, 3, 4), 1), ((0, 3), -1)))),
        OpCase("glu", axis_samples(Sample, smooth, (
            ((2, 4), -1), ((4, 3), 0), ((6,), 0), ((2, 2, 3), 1), ((0, 4), -1)))),
    ]
