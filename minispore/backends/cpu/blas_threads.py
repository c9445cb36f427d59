"""Which conv GEMMs of the PyNative path run on the calling thread: the thread-count policy for
scipy's OpenBLAS (the library numba's np.dot, hence every conv kernel, calls).

OpenBLAS splits a GEMM of more than ~256K multiply-adds over its thread pool, and each worker it
wakes then spins for ~0.1 s waiting for the next call before it sleeps. In PyNative the Python
thread that dispatches the next ops shares the cores with that spinning worker: on the 2-core
machines of this project a LeNet-style digits step (conv GEMMs of 0.3-2.4 M multiply-adds) took
1.48-2.05 ms with the pool and 1.36-1.53 ms with conv GEMMs on the calling thread (the largest
GEMM alone: 76 us on two threads, 101 us on one). So the eager conv kernels and PyNative's
compiled backward run a conv whose GEMM is below PARALLEL_MIN_MACS on the calling thread
(OpenBLAS's per-thread `openblas_set_num_threads_local`, restored after the call); larger ones,
and graph mode's sunk programs (no interpreter between its calls), keep OpenBLAS's own choice.
MINISPORE_BLAS_PARALLEL_MIN overrides the threshold (0: always OpenBLAS's choice).
"""
from __future__ import annotations

import ctypes
import os
import threading

from ...core.shape import size_of

PARALLEL_MIN_MACS = int(os.environ.get("MINISPORE_BLAS_PARALLEL_MIN", 1 << 24))
_state: dict = {}
_lock = threading.Lock()


def _setter():
    """scipy OpenBLAS's openblas_set_num_threads_local, or None (another BLAS, no scipy)."""
    if "set" not in _state:
        with _lock:
            if "set" not in _state:
                fn = None
                try:
                    from .native_jit import _blas_symbols
                    lib = _blas_symbols()["scipy"]["lib"]
                    fn = lib.openblas_set_num_threads_local
                    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
                except Exception:       # noqa: BLE001 - no such library or symbol: no policy
                    fn = None
                _state["set"] = fn
    return _state["set"]


def conv_macs(name: str, in_shapes: tuple, out_shape: tuple, attrs: dict) -> int:
    """Multiply-adds of the GEMMs of one conv2d-family node: (N*Ho*Wo) * O * (C/group*kh*kw),
    the same for the forward and both adjoints."""
    if name == "conv2d_backprop_filter":
        filt, dy = tuple(attrs["filter_shape"]), in_shapes[1]
    else:
        filt = in_shapes[1]
        dy = out_shape if name == "conv2d" else in_shapes[0]
    return size_of(dy) * size_of(filt[1:])


def serial(macs: int) -> bool:
    """Whether GEMMs of `macs` multiply-adds should run on the calling thread."""
    return macs < PARALLEL_MIN_MACS and _setter() is not None


def call_serial(fn, *args):
    """fn(*args) with scipy's OpenBLAS limited to the calling thread, restored afterwards."""
    setter = _setter()
    setter(1)
    try:
        return fn(*args)
    finally:
        setter(0)                   # 0: the thread follows OpenBLAS's global count again
