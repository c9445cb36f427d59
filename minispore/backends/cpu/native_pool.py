"""Pooling lowerings of the native sink: loops/pool.py's definitions (max_pool2d,
max_pool2d_grad, max_pool2d_gather, avg_pool2d, avg_pool2d_grad) rendered by render/llvm.py,
the definitions windows.pool_kernel renders as the eager numba kernels, so PyNative and O2 run
the same algorithm (the window geometry and every extent constants here) and agree bit for bit.

Only float32/float64 nodes whose inputs and output share the dtype, with no empty tensor, are
lowered (native_windows.float_type); anything else raises NativeUnsupported. Registered with
half_as_float32: kernels_nn.window_factory runs a half node's float32 kernel (compute_dtype) and
rounds once, so a half node is lowered as its float32 twin.
"""
from __future__ import annotations

from .loops import pool
from .native_registry import register
from .native_windows import float_type
from .render.llvm import emit

# the definition's buffer names: the node's inputs, then its output
_BUFFERS = {"max_pool2d": ("x", "out"), "max_pool2d_grad": ("x", "dy", "dx"),
            "max_pool2d_gather": ("x", "g", "out"), "avg_pool2d": ("x", "out"),
            "avg_pool2d_grad": ("dy", "dx")}


def _pool(e, n, a):
    float_type(n)
    defn, params, scalars = pool.plan(n.op.name, tuple(n.inputs[0].shape), a)
    values = n.inputs + n.outputs[:1]
    buffers = {k: (v, tuple(v.shape)) for k, v in zip(_BUFFERS[n.op.name], values)}
    emit(e, defn, params, buffers, n, scalars)


register(tuple(_BUFFERS), _pool, half_as_float32=True)
