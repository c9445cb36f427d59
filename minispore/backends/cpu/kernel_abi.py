"""What the CPU backend's generated numba kernels share, below the modules that generate them
(elementwise.py, fused_reduce.py): the numpy dtype a buffer of a minispore dtype computes in on
the CPU (`cpu_np`) and the call of a compiled kernel without numba's dispatcher (`entry_point`)."""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt


def cpu_np(d: dt.DType) -> np.dtype:
    """The compute dtype of `d`: half types compute in float32 on the CPU (as PyTorch's CPU
    kernels do), every other dtype in itself."""
    return np.dtype(np.float32) if d in (dt.float16, dt.bfloat16) else d.np


def entry_point(dispatcher, sample_args):
    """The compiled function for the argument types of `sample_args`, called without numba's
    dispatcher (which costs ~0.25 us per call to resolve types). Safe because a plan is built for
    fixed dtypes and ranks, and Tensor buffers are always C-contiguous, aligned and writeable
    (tensor.py), exactly the types of `sample_args`."""
    import numba                    # a dispatcher exists, so numba is loaded already
    dispatcher.compile(tuple(numba.typeof(a) for a in sample_args))
    sig = tuple(numba.typeof(a) for a in sample_args)
    return dispatcher.overloads[sig].entry_point
