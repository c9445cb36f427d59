"""Op-database entries (see opdb.py) for core/ops/attention.py: attention_weights over
(batch, heads, L, d) and unbatched (L, d) operands, masks of every broadcast form
nn.MultiheadAttention passes ((1, 1, L, S), (B, H, 1, S), (B, H, L, S), a 0-d zero), a
-inf-masked key (its weight is exactly 0; finite differences cannot cross the -inf, so the
sample is kept out of the gradient check), one key (weights all 1), head sizes whose fourth
root is and is not exact (4, 3), and empty queries. The mask's gradient is checked too: a
float mask is an input like the others."""
from __future__ import annotations

import numpy as np

from minispore.core import dtype as dt

from helpers import rand_default

f32, f64 = dt.float32, dt.float64

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


def attention_cases(OpCase, Sample):
    return [
        # float32 at 1e-3: the simulated Ascend's Cube reads the scores' matmul operands as fp16
        # (errors up to 3e-4 here); helpers.CUBE_OPS lists only the Cube primitives themselves
        OpCase("attention_weights", attention_weights_samples(Sample), dtypes=(f32, f64),
               accum=True, tol={f32: (1e-3, 1e-3)}),
    ]
