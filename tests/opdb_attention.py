"""Op-database entries (see opdb.py) for core/ops/attention.py.

attention_weights over
(batch, heads, L, d) and unbatched (L, d) operands, masks of every broadcast form
nn.MultiheadAttention passes ((1, 1, L, S), (B, H, 1, S), (B, H, L, S), a 0-d zero), a
-inf-masked key (its weight is exactly 0; finite differences cannot cross the -inf, so the
sample is kept out of the gradient check), one key (weights all 1), head sizes whose fourth
root is and is not exact (4, 3), and empty queries. The mask's gradient is checked too: a
float mask is an input like the others.

scaled_attention over the same forms with value head sizes of their own, several scales, and
half-precision operands (computed in float32, rounded once)."""
from __future__ import annotations

import numpy as np

from minispore.core import dtype as dt

from helpers import rand_default

f16, bf16, f32, f64 = dt.float16, dt.bfloat16, dt.float32, dt.float64

# (query shape, key shape, mask shape)
SPECS = (
    ((2, 2, 3, 4), (2, 2, 5, 4), (1, 1, 3, 5)),
    ((1, 2, 3, 3), (1, 2, 2, 3), (1, 2, 1, 2)),       # head size 3: an inexact fourth root
    ((2, 1, 2, 4), (2, 1, 3, 4), (2, 1, 2, 3)),
    ((3, 4), (5, 4), ()),                               # unbatched, no mask (a 0-d zero)
    ((2, 3, 1, 8), (2, 3, 1, 8), (1, 1, 1, 1)),        # one key: every weight is 1
    ((1, 2, 0, 4), (1, 2, 3, 4), (1, 1, 1, 3)),        # no queries
)


def attention_weights_samples(Sample):
    def gen(rng, dtype):
        out = []
        for qs, ks, ms in SPECS:
            mask = np.zeros(ms, dtype.np) if ms == () else rand_default(rng, ms, dtype)
            out.append(Sample((rand_default(rng, qs, dtype), rand_default(rng, ks, dtype),
                               mask), {}, f"q{qs} k{ks} mask{ms}"))
        mask = np.zeros((1, 1, 3, 4), dtype.np)
        mask[..., 1] = -np.inf
        mask[..., 0, 3] = -np.inf
        out.append(Sample((rand_default(rng, (2, 2, 3, 4), dtype),
                           rand_default(rng, (2, 2, 4, 4), dtype), mask), {},
                          "-inf-masked keys", grad=False))
        return out
    return gen


# (query shape, key shape, value shape, bias shape, scale)
SCALED_SPECS = (
    ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), (1, 1, 3, 5), 0.5),
    ((1, 2, 3, 3), (1, 2, 2, 3), (1, 2, 2, 6), (1, 2, 1, 2), 1.0),
    ((3, 4), (5, 4), (5, 2), (), 0.25),
    ((2, 1, 2, 4), (2, 1, 1, 4), (2, 1, 1, 4), (2, 1, 2, 1), 2.0),   # one key
    ((1, 2, 0, 4), (1, 2, 3, 4), (1, 2, 3, 4), (), 1.0),               # no queries
)


def scaled_attention_samples(Sample):
    def gen(rng, dtype):
        out = []
        for qs, ks, vs, bs, scale in SCALED_SPECS:
            bias = np.zeros(bs, dtype.np) if bs == () else rand_default(rng, bs, dtype)
            out.append(Sample(tuple(rand_default(rng, s, dtype) for s in (qs, ks, vs)) +
                              (bias,), {"scale": scale},
                              f"q{qs} k{ks} v{vs} bias{bs} scale={scale}"))
        bias = np.zeros((1, 1, 3, 4), dtype.np)
        bias[..., 2] = -np.inf
        out.append(Sample(tuple(rand_default(rng, s, dtype) for s in
                                ((2, 2, 3, 4), (2, 2, 4, 4), (2, 2, 4, 4))) + (bias,),
                          {"scale": 0.5}, "-inf-masked key", grad=False))
        return out
    return gen


def attention_cases(OpCase, Sample):
    return [
        # the simulated Ascend's Cube reads the matmul operands as fp16: helpers.CUBE_OPS names
        # both ops, so float32 there is held to the Cube's bound, elsewhere tight
        OpCase("attention_weights", attention_weights_samples(Sample), dtypes=(f32, f64),
               accum=True),
        # half types compute in float32 and round once, as the reference does
        OpCase("scaled_attention", scaled_attention_samples(Sample),
               dtypes=(f16, bf16, f32, f64), accum=True),
    ]
