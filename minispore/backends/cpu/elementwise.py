"""Eager elementwise kernels on the CPU: pick the generated numba variant for one call site.

Per (op, attrs, input types) the plan decides once: casts to the compute dtype (half types compute
in float32 on the CPU, as PyTorch's CPU kernels do), the dispatch variant (flat contiguous loop,
one-element inputs hoisted out of the loop, or the rank-r strided loop for real broadcasting) and
serial vs prange (prange costs ~0.1 ms per call on 2 cores, so it is used only from PARALLEL_MIN
elements up; see benchmarks/eager_dispatch.py)."""
from __future__ import annotations

import os

import numba
import numpy as np

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.shape import size_of
from .codegen import MAX_ND, elementwise_source, module_for

PARALLEL_MIN = int(os.environ.get("MINISPORE_CPU_PARALLEL_MIN", 1 << 18))


def cpu_np(d: dt.DType) -> np.dtype:
    return np.dtype(np.float32) if d in (dt.float16, dt.bfloat16) else d.np


def entry_point(dispatcher, sample_args):
    """The compiled function for the argument types of `sample_args`, called without numba's
    dispatcher (which costs ~0.25 us per call to resolve types). Safe because a plan is built for
    fixed dtypes and ranks, and Tensor buffers are always C-contiguous, aligned and writeable
    (tensor.py), exactly the types of `sample_args`."""
    dispatcher.compile(tuple(numba.typeof(a) for a in sample_args))
    sig = tuple(numba.typeof(a) for a in sample_args)
    return dispatcher.overloads[sig].entry_point


def kernel_module(op, attrs: dict):
    expr = E.build(lambda *xs: op.scalar(*xs, **attrs), op.arity)
    return module_for(op.name, elementwise_source(expr, op.arity))


def elementwise_kernel(op, in_metas, attrs, out_meta):
    mod = kernel_module(op, attrs)
    shape = tuple(out_meta.shape)
    n = size_of(shape)
    cdts, _ = op.compute(tuple(m.dtype for m in in_metas))
    cnp = [cpu_np(c) for c in cdts]
    final_np = out_meta.dtype.np
    out_np = cpu_np(out_meta.dtype)
    casts = [np.dtype(m.dtype.np) != c for m, c in zip(in_metas, cnp)]
    if n == 0:
        return lambda *bufs: np.empty(shape, final_np)

    pattern = []
    for m in in_metas:
        s = tuple(m.shape)
        pattern.append("v" if s == shape else "s" if size_of(s) == 1 else "b")

    if "b" in pattern:
        r = len(shape)
        if r > MAX_ND:
            raise NotImplementedError(f"{op.name}: broadcasting over rank {r} > {MAX_ND} is not "
                                      f"supported by the CPU kernels")
        fn = getattr(mod, f"nd{r}")

        def run(*bufs):
            args = [np.broadcast_to(b.astype(c) if k else b, shape)
                    for b, c, k in zip(bufs, cnp, casts)]
            out = np.empty(shape, out_np)
            fn(*args, out)
            return out if out_np == final_np else out.astype(final_np)
        return run

    pat = "".join(pattern)
    fn = entry_point(getattr(mod, ("par_" if n >= PARALLEL_MIN else "flat_") + pat),
                     [np.empty(1, c) for c in cnp] + [np.empty(1, out_np)])
    direct = (not any(casts) and out_np == final_np and len(shape) == 1
              and all(len(m.shape) == 1 for m in in_metas))
    if direct and op.arity == 2:                  # the hot path: x + y on vectors
        def run2(a, b):
            out = np.empty(shape, out_np)
            fn(a, b, out)
            return out
        return run2
    if direct and op.arity == 1:
        def run1(a):
            out = np.empty(shape, out_np)
            fn(a, out)
            return out
        return run1

    def run(*bufs):
        args = [(b.astype(c) if k else b).reshape(-1) for b, c, k in zip(bufs, cnp, casts)]
        out = np.empty(n, out_np)
        fn(*args, out)
        out = out.reshape(shape)
        return out if out_np == final_np else out.astype(final_np)
    return run
