"""Eager CPU kernels of the random primitives (core/ops/random.py): uniform, normal, randint and
dropout are loops/random.py's definitions rendered by render/numba_source.py (one numba kernel
per output dtype, disk-cached, serving every seed and shape); native_random.py renders the same
definitions into the O2 sink, so PyNative, O0 and O2 draw the same bits.

A draw runs flat over its n elements and is reshaped to the op's shape. A half-precision draw is
computed in float64 and rounded once (as the references' astype); a half dropout computes in
float32 (cpu_np, the reference's ref_array_dtype) and rounds its outputs once.
`register(backend)` is called by kernels_nn.register.
"""
from __future__ import annotations

import numpy as np

from ...core.ops.random import _UNIT_BITS
from ...core.shape import size_of
from .kernel_abi import cpu_np
from .loops import random as family
from .render import numba_source

_MASK64 = 0xFFFFFFFFFFFFFFFF


def _finish(out, odt, shape):
    return (out if out.dtype == odt else out.astype(odt)).reshape(shape)


def _key(key):
    return np.ascontiguousarray(key, np.int64)


def _generator(name: str):
    """The kernel factory of random_uniform, random_normal or random_randint."""
    def factory(in_metas, attrs, out_meta):
        d, shape = attrs["dtype"], tuple(out_meta.shape)
        odt, n, seed = d.np, np.int64(size_of(shape)), np.uint64(attrs["seed"] & _MASK64)
        if name == "random_uniform":
            mod = numba_source.module(family.uniform, nbits=_UNIT_BITS[d.name],
                                      dtype=family.draw_dtype(d.np.name))
            extra = ()
        elif name == "random_normal":
            mod, extra = numba_source.module(family.normal, dtype=family.draw_dtype(d.np.name)), ()
        else:
            mod = numba_source.module(family.randint, dtype=odt.name)
            extra = (np.uint64(attrs["high"] - attrs["low"]), np.int64(attrs["low"]))
        kernel = mod.kernel

        def run(key):
            return _finish(kernel(_key(key), seed, n, *extra), odt, shape)
        return run
    return factory


def _dropout(in_metas, attrs, out_meta):
    x_dtype, shape = in_metas[0].dtype, tuple(in_metas[0].shape)
    c, odt = cpu_np(x_dtype), x_dtype.np
    kernel = numba_source.module(family.dropout, dtype=c.name).kernel
    seed = np.uint64(attrs["seed"] & _MASK64)
    keep_prob = np.float64(attrs["keep_prob"])
    scale = c.type(1.0 / attrs["keep_prob"])

    def run(x, key):
        y, mask = kernel(np.ascontiguousarray(x, c).reshape(-1), _key(key), seed, keep_prob,
                         scale)
        return _finish(y, odt, shape), _finish(mask, odt, shape)
    return run


OPS = ("random_uniform", "random_normal", "random_randint", "dropout")


def register(backend) -> None:
    for name in OPS[:3]:
        backend.register(name)(_generator(name))
    backend.register("dropout")(_dropout)
