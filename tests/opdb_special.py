"""Non-finite samples of the op database (opdb.py, opdb_nn.py) for the reductions and row ops
(sum, mean, prod, max, min, logsumexp, argmax, argmin, softmax, log_softmax, the sparse
softmax cross-entropy pair, layer_norm, batch_norm): rows holding +inf, -inf and NaN, a row of
-inf only, +inf beside -inf, two +inf, so every backend and jit level is checked against the
op's numpy reference where the usual `x - max` shift is not finite. Test data only; grad=False
on every sample (finite differences through infinities mean nothing)."""
from __future__ import annotations

import numpy as np

INF, NAN = np.inf, np.nan
ROWS = (
    (INF, 1.0, 2.0, 0.5),          # +inf: logsumexp inf, softmax NaN where x - max is inf - inf
    (-INF, -INF, -INF, -INF),      # only -inf: logsumexp -inf, softmax NaN (0 / 0)
    (NAN, 1.0, 2.0, 0.5),          # NaN propagates (max, logsumexp, softmax, norms)
    (INF, -INF, 0.0, 1.0),         # both infinities
    (INF, INF, 1.0, 0.0),          # two +inf
    (-INF, 0.0, 1.0, -1.0),        # one -inf among finite values: a finite result
    (1.0, 2.0, 3.0, 0.25),         # finite, for contrast
)
# a label per row for the cross-entropy pair (class 0 is the +inf of rows 0, 3 and 4)
LABELS = (0, 1, 2, 1, 2, 0, 3)


def rows(dtype) -> np.ndarray:
    """ROWS (7, 4) in dtype (a float DType)."""
    return np.array(ROWS, np.float64).astype(dtype.np)


def _sample(args, attrs, desc):
    from opdb import Sample
    return Sample(tuple(args), dict(attrs), f"non-finite rows {desc}", grad=False)


def reduction_samples(dtype, arg: bool = False) -> list:
    """sum/mean/prod/max/min/logsumexp (argmax/argmin with `arg`) along the rows, down the
    columns and over everything; [] for non-float dtypes."""
    if not dtype.is_float:
        return []
    x = rows(dtype)
    specs = ((-1, False), (0, True)) + (() if arg else ((None, False),))
    return [_sample((x,), {"axis": a, "keep_dims": k}, f"x(7, 4) axis={a} keep_dims={k}")
            for a, k in specs]


def softmax_samples(dtype) -> list:
    x = rows(dtype)
    return [_sample((x,), {"axis": -1}, "x(7, 4) axis=-1"),
            _sample((np.ascontiguousarray(x.T),), {"axis": 0}, "x(4, 7) axis=0")]


def sce_samples(dtype, grad_op: bool) -> list:
    args = (rows(dtype), np.array(LABELS, np.int32))
    if grad_op:
        args += (np.linspace(0.5, 2.0, len(LABELS)).astype(dtype.np),)
    return [_sample(args, {}, f"logits(7, 4) labels={list(LABELS)}")]


def layer_norm_samples(dtype) -> list:
    x = rows(dtype)
    g, b = np.linspace(0.5, 2.0, 4).astype(dtype.np), np.linspace(-1.0, 1.0, 4).astype(dtype.np)
    return [_sample((x, g, b), {"begin_norm_axis": -1, "begin_params_axis": -1,
                                "epsilon": 1e-5}, "x(7, 4) begin_norm_axis=-1")]


def batch_norm_samples(dtype) -> list:
    """Channels are ROWS' rows (x is (4, 7): 4 samples of 7 channels), in training (batch
    statistics) and inference (the running statistics normalise the non-finite values)."""
    x = np.ascontiguousarray(rows(dtype).T)
    C = x.shape[1]
    scale, bias = np.linspace(0.5, 2.0, C).astype(dtype.np), np.zeros(C, dtype.np)
    mean = np.linspace(-1.0, 1.0, C).astype(dtype.np)
    var = np.linspace(0.5, 2.0, C).astype(dtype.np)
    return [_sample((x, scale, bias, mean, var), {"training": t, "epsilon": 1e-3},
                    f"x(4, 7) training={t}") for t in (True, False)]
