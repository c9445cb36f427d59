"""Which conv GEMMs run on the calling thread: the thread-count policy for the conv kernels' BLAS
(scipy's OpenBLAS, the library numba's np.dot, hence every conv kernel and lowering, calls; the
binding and its per-thread thread count are blas.py's).

OpenBLAS splits a GEMM of more than ~256K multiply-adds over its thread pool, and each worker it
wakes then spins for ~0.1 s waiting for the next call before it sleeps. In PyNative the Python
thread that dispatches the next ops shares the cores with that spinning worker: alternating the
two policies epoch by epoch in one process, a PyNative LeNet-style digits epoch (conv GEMMs of
0.3-2.4 M multiply-adds) took 10-12% longer with the pool (the largest GEMM alone: 76 us on two
threads, 101 us on one).

So a conv whose GEMMs have fewer than PARALLEL_MIN_MACS multiply-adds runs them on the calling
thread (OpenBLAS's per-thread `openblas_set_num_threads_local`, back to the global count after the
call) -- in EVERY mode, because OpenBLAS's result depends on its thread count (the CNN's
(32x144)@(144x512) forward GEMM differs in ~9000 of 16384 elements between one and two threads),
and PyNative and graph mode must give the same numbers:
- eager kernels (PyNative, O0, O1): kernels_nn wraps the conv kernel call (`call_serial`);
- the native sink (O2, PyNative's compiled backward): the lowering brackets the node's BLAS calls
  with blas.SET_THREADS_LOCAL (native_windows._blas_on_calling_thread), per node.
MINISPORE_BLAS_PARALLEL_MIN overrides the threshold (0: always OpenBLAS's choice).
"""
from __future__ import annotations

import os

from ...core.shape import size_of
from . import blas

PARALLEL_MIN_MACS = int(os.environ.get("MINISPORE_BLAS_PARALLEL_MIN", 1 << 24))


def conv_macs(name: str, in_shapes: tuple, out_shape: tuple, attrs: dict) -> int:
    """Multiply-adds of the GEMMs of one conv2d-family node: (N*Ho*Wo) * O * (C/group*kh*kw),
    the same for the forward and both adjoints."""
    if name == "conv2d_backprop_filter":
        filt, dy = tuple(attrs["filter_shape"]), in_shapes[1]
    else:
        filt = in_shapes[1]
        dy = out_shape if name == "conv2d" else in_shapes[0]
    return size_of(dy) * size_of(filt[1:])


def node_macs(n) -> int:
    """conv_macs of a conv2d-family graph node."""
    from ...core.primitive import attrs_dict
    return conv_macs(n.op.name, tuple(v.shape for v in n.inputs), n.outputs[0].shape,
                     attrs_dict(n.attrs))


def serial(macs: int) -> bool:
    """Whether GEMMs of `macs` multiply-adds should run on the calling thread (never when the
    conv BLAS has no per-thread setting: then every mode leaves it to OpenBLAS)."""
    return macs < PARALLEL_MIN_MACS and blas.has_thread_control()


def call_serial(fn, *args):
    """fn(*args) with scipy's OpenBLAS limited to the calling thread, restored afterwards."""
    blas.set_threads_local(1)
    try:
        return fn(*args)
    finally:
        blas.set_threads_local(0)   # 0: the thread follows OpenBLAS's global count again
