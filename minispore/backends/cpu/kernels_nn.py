"""CPU kernels of the conv/pool/norm/random primitives (core/ops/conv.py, norm.py, random.py).

conv2d and its two adjoints and the four pooling ops (and their gradients) call the SAME
numba-compiled helpers as the O2 sink (sink_nn.py: im2col + BLAS for the convolutions, window
loops for the pools), so eager, O0 and O2 run one implementation, compiled once and cached on
disk. Measured on the LeNet-style CNN's shapes (batch 32, 2 cores), against the numpy im2col /
tap-fold / reference kernels these replace: conv2d 74 vs 183 us and 333 vs 538 us, its input
adjoint 277 vs 645 us, its filter adjoint 336 vs 986 us, max_pool2d_grad ~0.2 vs 1.1 ms.
The rest (batch_norm, layer_norm, random ops) run their numpy reference, which is vectorised
over the tensor. `register(backend, ref_kernel)` is called by kernels.register_all.
"""
from __future__ import annotations

import numpy as np

from ...core.ops import conv as C
from ...core.primitive import REGISTRY
from . import sink_nn as S

REF_OPS = ("batch_norm", "layer_norm", "random_uniform", "random_normal", "random_randint",
           "dropout")


def compute_dtype(out_meta):
    d = out_meta.dtype.np
    return np.dtype(np.float32) if d.itemsize < 4 else d


def conv_factory(kind):
    """A kernel factory for conv2d / conv2d_backprop_input / conv2d_backprop_filter."""
    def factory(in_metas, attrs, out_meta):
        c, odt = compute_dtype(out_meta), out_meta.dtype.np
        s, d, grp = attrs["stride"], attrs["dilation"], attrs["group"]
        if kind == "conv2d":
            shapes = (in_metas[0].shape, in_metas[1].shape)
        elif kind == "input":
            shapes = (tuple(attrs["input_shape"]), in_metas[1].shape)
        else:
            shapes = (in_metas[0].shape, tuple(attrs["filter_shape"]))
        pads, o = C.conv_geometry("conv2d", *shapes, s, attrs["pad_mode"], attrs["pad"], d, grp)
        geo = (s[0], s[1], pads[0], pads[2], d[0], d[1], grp)
        if kind == "conv2d":
            fn, extra = S.nn_conv2d, geo + tuple(o)
        elif kind == "input":
            fn, extra = S.nn_conv2d_bpi, shapes[0] + geo
        else:
            fn, extra = S.nn_conv2d_bpf, shapes[1] + geo

        def run(a, b):
            return np.ascontiguousarray(fn(np.ascontiguousarray(a, c),
                                           np.ascontiguousarray(b, c), *extra), odt)
        return run
    return factory


def pool_factory(name):
    """A kernel factory for max_pool2d, max_pool2d_grad, max_pool2d_gather, avg_pool2d and
    avg_pool2d_grad (arguments laid out as sink_nn's lowering lays them out)."""
    def factory(in_metas, attrs, out_meta):
        c, odt = compute_dtype(out_meta), out_meta.dtype.np
        k, s = attrs["kernel_size"], attrs["stride"]
        x_shape = tuple(attrs["input_shape"]) if name == "avg_pool2d_grad" else in_metas[0].shape
        pads, o = C.pool_geometry(name, x_shape, k, s, attrs["pad_mode"], attrs["pad"])
        geo = (k[0], k[1], s[0], s[1], pads[0], pads[2])
        inc = bool(attrs.get("count_include_pad"))
        fn, extra = {
            "max_pool2d": (S.nn_max_pool, geo + tuple(o)),
            "max_pool2d_grad": (S.nn_max_pool_grad, geo),
            "max_pool2d_gather": (S.nn_max_pool_gather, geo + tuple(o)),
            "avg_pool2d": (S.nn_avg_pool, geo + tuple(o) + (inc,)),
            "avg_pool2d_grad": (S.nn_avg_pool_grad, tuple(x_shape[2:]) + geo + (inc,)),
        }[name]

        def run(*bufs):
            return np.ascontiguousarray(fn(*[np.ascontiguousarray(b, c) for b in bufs], *extra),
                                        odt)
        return run
    return factory


def register(backend, ref_kernel) -> None:
    for name in REF_OPS:
        backend.register(name)(ref_kernel(REGISTRY[name]))
    backend.register("conv2d")(conv_factory("conv2d"))
    backend.register("conv2d_backprop_input")(conv_factory("input"))
    backend.register("conv2d_backprop_filter")(conv_factory("filter"))
    for name in ("max_pool2d", "max_pool2d_grad", "max_pool2d_gather", "avg_pool2d",
                 "avg_pool2d_grad"):
        backend.register(name)(pool_factory(name))
