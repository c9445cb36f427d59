"""Op-database entries (see opdb.py) for the conv/pool/norm/random primitives of
core/ops/conv.py, norm.py and random.py: tiny NCHW shapes covering stride > 1, dilation, groups,
'same' padding with even kernels, explicit asymmetric padding, 1x1 images and 1x1 kernels.

Random ops are pure functions of their int64 key, so their forward check is the usual equality
with the numpy reference (bit-exact for uniform/randint/dropout); they are not differentiable
(dropout is, in its input, and is checked like any op). Seeding and the distributions' moments
are tested in tests/ops/test_random.py.
"""
from __future__ import annotations

import numpy as np

from minispore.core import dtype as dt
from minispore.core.primitive import Meta, REGISTRY

import opdb_special
from helpers import rand_default, rand_distinct

f32, f64, i32, i64 = dt.float32, dt.float64, dt.int32, dt.int64

# (x shape, w shape, attrs)
CONV_SPECS = [
    ((1, 2, 4, 4), (3, 2, 3, 3), {}),
    ((2, 2, 5, 4), (2, 2, 2, 2), {"stride": (2, 2), "pad_mode": "same"}),      # even kernel
    ((1, 4, 5, 5), (4, 2, 3, 2), {"dilation": (2, 1), "group": 2, "pad_mode": "pad",
                                  "pad": (1, 0, 2, 1)}),
    ((1, 3, 1, 1), (2, 3, 3, 3), {"pad_mode": "same"}),                          # 1x1 image
    ((1, 2, 3, 3), (2, 1, 1, 1), {"group": 2, "stride": (2, 1)}),               # 1x1 kernel
]
POOL_SPECS = [
    ((1, 2, 4, 4), {"kernel_size": (2, 2), "stride": (2, 2)}),
    ((1, 1, 5, 4), {"kernel_size": (3, 2), "stride": (1, 2), "pad_mode": "same"}),
    ((2, 1, 3, 3), {"kernel_size": (2, 2), "stride": (1, 1), "pad_mode": "pad",
                    "pad": (1, 0, 0, 1)}),
    ((1, 1, 1, 1), {"kernel_size": (3, 3), "stride": (1, 1), "pad_mode": "same"}),
]


def _S():
    from opdb import Sample
    return Sample


def _fmt(d):
    return " ".join(f"{k}={v}" for k, v in d.items())


def _out_shape(name, metas, attrs):
    op = REGISTRY[name]
    return op.infer(*metas, **{**op.attrs, **attrs}).shape


def conv_samples(rng, dtype):
    S = _S()
    return [S((rand_default(rng, xs, dtype), rand_default(rng, ws, dtype)), a,
              f"x{xs} w{ws} {_fmt(a)}") for xs, ws, a in CONV_SPECS]


def conv_bpi_samples(rng, dtype):
    S, out = _S(), []
    for xs, ws, a in CONV_SPECS:
        ys = _out_shape("conv2d", (Meta(xs, dtype), Meta(ws, dtype)), a)
        out.append(S((rand_default(rng, ys, dtype), rand_default(rng, ws, dtype)),
                     {**a, "input_shape": xs}, f"dy{ys} w{ws} x{xs} {_fmt(a)}"))
    return out


def conv_bpf_samples(rng, dtype):
    S, out = _S(), []
    for xs, ws, a in CONV_SPECS:
        ys = _out_shape("conv2d", (Meta(xs, dtype), Meta(ws, dtype)), a)
        out.append(S((rand_default(rng, xs, dtype), rand_default(rng, ys, dtype)),
                     {**a, "filter_shape": ws}, f"x{xs} dy{ys} w{ws} {_fmt(a)}"))
    return out


def pool_samples(extra=({},)):
    def gen(rng, dtype):
        S = _S()
        return [S((rand_distinct(rng, xs, dtype),), {**a, **e}, f"x{xs} {_fmt(a)} {_fmt(e)}")
                for xs, a in POOL_SPECS for e in extra]
    return gen


def maxpool_pair_samples(second_is_input_shaped):
    """(x, dy) for max_pool2d_grad, (x, g) for max_pool2d_gather: differentiate the second."""
    def gen(rng, dtype):
        S, out = _S(), []
        for xs, a in POOL_SPECS:
            ys = _out_shape("max_pool2d", (Meta(xs, dtype),), a)
            second = xs if second_is_input_shaped else ys
            out.append(S((rand_distinct(rng, xs, dtype), rand_default(rng, second, dtype)), a,
                         f"x{xs} {_fmt(a)}", diff=(1,)))
        return out
    return gen


def avgpool_grad_samples(rng, dtype):
    S, out = _S(), []
    for xs, a in POOL_SPECS:
        for cip in (True, False):
            ys = _out_shape("avg_pool2d", (Meta(xs, dtype),), a)
            out.append(S((rand_default(rng, ys, dtype),),
                         {**a, "input_shape": xs, "count_include_pad": cip},
                         f"dy{ys} x{xs} {_fmt(a)} count_include_pad={cip}"))
    return out


def batch_norm_samples(rng, dtype):
    S, out = _S(), []
    for xs in ((4, 3), (2, 3, 2, 2)):
        C = xs[1]
        for training in (True, False):
            args = (rand_default(rng, xs, dtype), rand_default(rng, (C,), dtype),
                    rand_default(rng, (C,), dtype), rand_default(rng, (C,), dtype),
                    (rng.uniform(0.5, 2.0, C)).astype(dtype.np))
            out.append(S(args, {"training": training, "epsilon": 1e-3},
                         f"x{xs} training={training}"))
    return out + opdb_special.batch_norm_samples(dtype)


def layer_norm_samples(rng, dtype):
    S, out = _S(), []
    for xs, bna, bpa in (((2, 5), -1, -1), ((2, 3, 4), 1, 1), ((2, 3, 4), 1, 2),
                         ((3, 1), 1, 1)):
        ps = xs[bpa % len(xs):]
        out.append(S((rand_default(rng, xs, dtype), rand_default(rng, ps, dtype),
                      rand_default(rng, ps, dtype)),
                     {"begin_norm_axis": bna, "begin_params_axis": bpa, "epsilon": 1e-5},
                     f"x{xs} begin_norm_axis={bna} begin_params_axis={bpa}"))
    return out + opdb_special.layer_norm_samples(dtype)


def _key(seed, counter):
    return np.array([seed, counter], np.int64)


def random_samples(int_range=False):
    def gen(rng, dtype):
        S, out = _S(), []
        for shape, seed, key in (((3, 4), 0, _key(7, 0)), ((5,), 3, _key(7, 1)),
                                 ((), 0, _key(-5, 2 ** 40)), ((0, 2), 0, _key(1, 1))):
            a = {"shape": shape, "dtype": dtype, "seed": seed}
            if int_range:
                a.update(low=-3, high=4)
            out.append(S((key,), a, f"shape={shape} seed={seed} key={tuple(key)}"))
        return out
    return gen


def dropout_samples(rng, dtype):
    S = _S()
    return [S((rand_default(rng, xs, dtype), _key(11, c)), {"keep_prob": kp, "seed": sd},
              f"x{xs} keep_prob={kp} seed={sd}", diff=(0,))
            for xs, kp, sd, c in (((4, 5), 0.5, 0, 0), ((2, 3), 0.8, 9, 1), ((3,), 1.0, 0, 2),
                                  ((), 0.5, 0, 3))]


def class_labels_samples(rng, dtype):
    """Labels in [0, C) (the check passes them through), ignore_index values, 0-d, empty; the
    labels out of range that raise are tests/nn/test_losses.py's."""
    S = _S()
    specs = (([0, 4, 2, 1], 5, None), ([[1, -100], [0, 2]], 3, -100), ([3, 7, 0], 4, 7),
             (2, 3, None), ([], 2, None))
    return [S((np.array(v, dtype.np),), {"classes": c, "ignore_index": ig,
                                          "caller": "cross_entropy"},
              f"labels={v} classes={c} ignore_index={ig}")
            for v, c, ig in specs]


def nn_cases(OpCase):
    FL2 = (f32, f64)
    return [
        OpCase("conv2d", conv_samples, FL2, accum=True),
        OpCase("conv2d_backprop_input", conv_bpi_samples, FL2, accum=True),
        OpCase("conv2d_backprop_filter", conv_bpf_samples, FL2, accum=True),
        OpCase("max_pool2d", pool_samples(), FL2),
        OpCase("max_pool2d_grad", maxpool_pair_samples(False), FL2),
        OpCase("max_pool2d_gather", maxpool_pair_samples(True), FL2),
        OpCase("avg_pool2d", pool_samples(({"count_include_pad": True},
                                           {"count_include_pad": False})), FL2, accum=True),
        OpCase("avg_pool2d_grad", avgpool_grad_samples, FL2, accum=True),
        OpCase("batch_norm", batch_norm_samples, FL2, accum=True),
        OpCase("layer_norm", layer_norm_samples, FL2, accum=True),
        OpCase("random_uniform", random_samples(), FL2, grad=False),
        OpCase("random_normal", random_samples(), FL2, grad=False, accum=True),
        OpCase("random_randint", random_samples(int_range=True), (i64, i32), grad=False),
        OpCase("dropout", dropout_samples, FL2),
        OpCase("check_class_labels", class_labels_samples, (i32, i64), grad=False),
    ]
