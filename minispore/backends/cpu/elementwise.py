"""Eager elementwise kernels on the CPU: pick the generated numba variant for one call site.

Per (op, attrs, input types) the plan decides once: casts to the compute dtype (half types compute
in float32 on the CPU, as PyTorch's CPU kernels do), the dispatch variant (flat contiguous loop,
one-element inputs hoisted out of the loop, or the rank-r broadcasting loop (codegen's bc<r>)) and
serial vs prange. Measured on the 2-core machine (numba 0.68, workqueue layer): a prange region
costs ~70-100 us to wake the pool, a float32 add pays off only from ~4 Mi elements (1.3x) and
tanh from ~1 Mi (1.1x); interleaved with BLAS calls (every training step) prange loses at every
size. With numba's default OpenMP layer it is far worse: OpenBLAS's spinning threads and
libgomp's fight for the 2 cores and a 64 Ki-element add after a matmul took 8 ms instead of
0.15 ms. So minispore selects numba's workqueue layer (numba_setup.py, unless
NUMBA_THREADING_LAYER is set) and keeps kernels serial below 8 Mi / 2 Mi elements;
MINISPORE_CPU_PARALLEL_MIN overrides both.
"""
from __future__ import annotations

import os

import numpy as np

from ...core import scalar_expr as E
from ...core import scalar_math
from ...core.shape import size_of
from .codegen import MAX_ND, elementwise_source, module_for
from .fused_reduce import fused_reduce_kernel
from .kernel_abi import cpu_np, entry_point

_PAR_ENV = os.environ.get("MINISPORE_CPU_PARALLEL_MIN")
PARALLEL_MIN_CHEAP = int(_PAR_ENV or 1 << 23)
PARALLEL_MIN_TRANSCENDENTAL = int(_PAR_ENV or 1 << 21)
_TRANSCENDENTAL = {*scalar_math.names("decomposed"), "pow", "sqrt"}


# a template that is ONE of these operations on its two arguments computes, under broadcasting,
# exactly what numpy's ufunc computes (one IEEE operation per element, no intermediate rounding),
# and the ufunc broadcasts in C: ~2.5 us for a (32, 128) + (128,) bias add (the strided numba
# loop over broadcast_to views it replaced took ~12 us)
_EXACT_UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}


def _exact_ufunc(expr: E.Expr, cnp, out_np):
    """numpy's ufunc for `arg0 (op) arg1` when it gives the loop's result bit for bit."""
    fn = _EXACT_UFUNC.get(expr.op)
    if fn is None or len(cnp) != 2 or cnp[0] != cnp[1] or cnp[0] != out_np:
        return None
    if [a.op for a in expr.args] != ["arg", "arg"] or [a.args[0] for a in expr.args] != [0, 1]:
        return None
    if out_np.kind != "f" and not (out_np.kind in "iu" and expr.op != "div"):
        return None
    return fn


def _has_transcendental(e: E.Expr) -> bool:
    return e.op in _TRANSCENDENTAL or any(
        _has_transcendental(a) for a in e.args if isinstance(a, E.Expr))


def kernel_module(op, attrs: dict, const_dtype: str, variant: str):
    """The generated module of one variant of op's kernel (its function is named `variant`)."""
    return module_for(op.name, elementwise_source(_expr(op, attrs), op.arity, const_dtype,
                                                  variant))


def _expr(op, attrs):
    return E.build(lambda *xs: op.scalar(*xs, **attrs), op.arity)


def elementwise_kernel(op, in_metas, attrs, out_meta):
    """The kernel of one elementwise primitive (its template, its dtype rule)."""
    cdts, _ = op.compute(tuple(m.dtype for m in in_metas))
    return expr_kernel(op.name, _expr(op, attrs), in_metas, cdts, out_meta)


def fused_kernel(expr, in_metas, out_meta, reduce=None):
    """The kernel of a fused group: one loop evaluating `expr` over the inputs' own dtypes;
    with `reduce` (an ir.Reduction) the loop folds the values instead (fused_reduce.py)."""
    if reduce is not None:
        return fused_reduce_kernel(expr, in_metas, reduce, out_meta)
    return expr_kernel("fused", expr, in_metas, tuple(m.dtype for m in in_metas), out_meta)


def collapse_broadcast(shape: tuple, ranked: list) -> tuple:
    """The broadcast of C-contiguous operands `ranked` (each of len(shape) axes) to `shape`, with
    the output's size-1 axes dropped and neighbouring axes merged where every operand either
    spans both or is 1 on both (their elements stay in the same C order, so the operands and the
    output only reshape). Returns (output shape, operand shapes)."""
    out: list = []
    ops: list = [[] for _ in ranked]
    prev = None
    for i, d in enumerate(shape):
        if d == 1:
            continue
        mask = tuple(s[i] != 1 for s in ranked)
        if mask == prev:
            out[-1] *= d
            for o, s in zip(ops, ranked):
                o[-1] *= s[i]
        else:
            out.append(d)
            for o, s in zip(ops, ranked):
                o.append(s[i])
            prev = mask
    return tuple(out), [tuple(o) for o in ops]


def expr_kernel(tag, expr, in_metas, cdts, out_meta):
    """A launchable kernel for scalar expression `expr` (argument i is input i, converted to
    compute dtype cdts[i]) producing out_meta; picks the variant as the module docstring says."""
    arity = len(in_metas)
    cnp = [cpu_np(c) for c in cdts]
    floats = [c for c in cnp if c.kind == "f"]
    const_dtype = (floats[0] if floats else cnp[0] if cnp else np.dtype(np.float64)).name

    def variant_fn(variant):
        return getattr(module_for(tag, elementwise_source(expr, arity, const_dtype, variant)),
                       variant)
    shape = tuple(out_meta.shape)
    n = size_of(shape)
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
        ufunc = _exact_ufunc(expr, cnp, out_np) if not any(casts) else None
        if ufunc is not None and out_np == final_np:
            return lambda a, b: ufunc(a, b)
        r = len(shape)
        ranked = [(1,) * (r - len(m.shape)) + tuple(m.shape) for m in in_metas]
        if r > MAX_ND:                  # fewer axes that broadcast the same way: same elements
            shape_k, ranked = collapse_broadcast(shape, ranked)
            r = len(shape_k)
            if r > MAX_ND:              # still too many: expand the operands, one flat loop
                flat = entry_point(variant_fn("flat_" + "v" * arity),
                                   [np.empty(1, c) for c in cnp] + [np.empty(1, out_np)])

                def run_expanded(*bufs):
                    args = [np.ascontiguousarray(np.broadcast_to(b.astype(c) if k else b,
                                                                 shape)).reshape(-1)
                            for b, c, k in zip(bufs, cnp, casts)]
                    out = np.empty(n, out_np)
                    flat(*args, out)
                    out = out.reshape(shape)
                    return out if out_np == final_np else out.astype(final_np)
                return run_expanded
        else:
            shape_k = shape
        masks = ["".join("0" if d == 1 else "1" for d in s) for s in ranked]
        fn = variant_fn(f"bc{r}_" + "_".join(masks))

        def run(*bufs):
            args = [(b.astype(c) if k else b).reshape(s)
                    for b, c, k, s in zip(bufs, cnp, casts, ranked)]
            out = np.empty(shape_k, out_np)
            fn(*args, out)
            out = out.reshape(shape)
            return out if out_np == final_np else out.astype(final_np)
        return run

    pat = "".join(pattern)
    par_min = PARALLEL_MIN_TRANSCENDENTAL if _has_transcendental(expr) else PARALLEL_MIN_CHEAP
    fn = entry_point(variant_fn(("par_" if n >= par_min else "flat_") + pat),
                     [np.empty(1, c) for c in cnp] + [np.empty(1, out_np)])
    direct = (not any(casts) and out_np == final_np and len(shape) == 1
              and all(len(m.shape) == 1 for m in in_metas))
    if direct and arity == 2:                  # the hot path: x + y on vectors
        def run2(a, b):
            out = np.empty(shape, out_np)
            fn(a, b, out)
            return out
        return run2
    if direct and arity == 1:
        def run1(a):
            out = np.empty(shape, out_np)
            fn(a, out)
            return out
        return run1

    if arity == 2 and not any(casts) and out_np == final_np:   # e.g. x * 2, x + bias
        ra, rb = (len(m.shape) != 1 for m in in_metas)
        if len(shape) == 1 and not ra:                             # vector (op) scalar
            def run2v(a, b):
                out = np.empty(shape, out_np)
                fn(a, b.reshape(1) if rb else b, out)
                return out
            return run2v

        def run2f(a, b):
            out = np.empty(n, out_np)
            fn(a.reshape(-1) if ra else a, b.reshape(-1) if rb else b, out)
            return out.reshape(shape)
        return run2f

    def run(*bufs):
        args = [(b.astype(c) if k else b).reshape(-1) for b, c, k in zip(bufs, cnp, casts)]
        out = np.empty(n, out_np)
        fn(*args, out)
        out = out.reshape(shape)
        return out if out_np == final_np else out.astype(final_np)
    return run
