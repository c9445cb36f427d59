"""Fused groups that end with a reduction (a FUSED node with an ir.Reduction) on the CPU: the loop
nest that evaluates the group's scalar expression and folds it into accumulators (`loop_lines`),
as the O1 kernel (`fused_reduce_kernel`, a generated numba function per expression, broadcast
pattern and reduction). The native sink's `_fused_reduce` lowering writes the same loop nest in
LLVM IR: two copies of one algorithm, kept bit-identical by tests/graph/test_fusion_reduce.py
(the row family shows the single-source form: loops/rows.py rendered both ways).

Accumulation: sum and mean accumulate in float64 whatever the value dtype (each value is first
rounded to the group's dtype, exactly as the unfused elementwise kernel would store it), and the
result is rounded once to the output dtype; the unfused float32 reduction (numpy's pairwise
float32 sum) has an error of a few float32 ulps, the float64 accumulator is exact to well within
that, so fused and unfused agree to float32 tolerance (not bit for bit; O0, which never fuses,
stays bit-identical to PyNative). max and min compare in the value dtype (exact) and propagate
NaN as numpy does. The loops run serially (see elementwise.py on prange at these sizes).

Loop order: when the reduced axes are the innermost ones (axis=-1, all axes, the usual case),
each output element is accumulated in registers over a contiguous inner loop, unrolled into LANES
independent accumulators (one chain of dependent adds is latency-bound: ~1 element per ns on
these machines, slower than the unfused elementwise kernel + numpy's pairwise sum; four chains
are not), combined at the end; otherwise the loops follow memory order and accumulate into a
float64 array of the output's size (then rounded), where consecutive elements are independent.
"""
from __future__ import annotations

import numpy as np

from ...core.graph import ir
from ...core.shape import size_of
from .codegen import HEADER_IMPORTS, module_for, render
from .kernel_abi import cpu_np, entry_point

_INIT = {"sum": "0.0", "mean": "0.0", "max": "-np.inf", "min": "np.inf"}
LANES = 4        # independent accumulators over the innermost reduced axis (see the docstring)


def _prod(dims) -> str:
    return f"({' * '.join(dims)})" if dims else "1"


def loop_lines(kind: str, bounds: list, axes: tuple, loads: list, body: str, val_np: str,
               out: str, tmp: str) -> list:
    """Source lines (indent level, text) computing reduction `kind` over `axes` of the values
    `body` on the loop shape `bounds` (source expressions of the loop sizes), into the flat
    output array `out` (one element per kept index, row-major). `loads(idx)` gives the lines
    (text) binding the body's arguments for loop index variables idx; `val_np` is the value
    dtype's numpy name (np.float32); `tmp` prefixes the generated local names."""
    r = len(bounds)
    idx = [f"{tmp}i{k}" for k in range(r)]
    kept = [k for k in range(r) if k not in axes]
    count = _prod([bounds[k] for k in axes])
    acc_np = val_np if kind in ("max", "min") else "np.float64"
    acc, v, q = f"{tmp}acc", f"{tmp}v", f"{tmp}q"
    lines = []

    def combine(ind, dst, src):
        if kind in ("sum", "mean"):
            lines.append((ind, f"{dst} += {acc_np}({src})"))
        else:                                       # NaN wins, as in numpy
            lines.append((ind, f"if {src} {'>' if kind == 'max' else '<'} {dst} or "
                               f"{src} != {src}:"))
            lines.append((ind + 1, f"{dst} = {src}"))

    def fold(ind, dst, at=idx):
        lines.extend((ind, t) for t in loads(at))
        lines.append((ind, f"{v} = {val_np}({body})"))
        combine(ind, dst, v)

    def result(src):
        return f"{src} / {count}" if kind == "mean" else src
    if all(k < a for k in kept for a in axes):          # reduced axes innermost: registers
        lines.append((0, f"{q} = 0"))
        for d, k in enumerate(kept):
            lines.append((d, f"for {idx[k]} in range({bounds[k]}):"))
        ind = len(kept)
        lanes = [f"{acc}{u}" for u in range(LANES)] if axes else [acc]
        for a in lanes:
            lines.append((ind, f"{a} = {acc_np}({_INIT[kind]})"))
        for d, k in enumerate(axes[:-1]):
            lines.append((ind + d, f"for {idx[k]} in range({bounds[k]}):"))
        if not axes:
            fold(ind, acc)
        else:                   # the innermost axis in LANES independent chains, then the rest
            inner, last, j = ind + len(axes) - 1, axes[-1], f"{tmp}j"
            b = bounds[last]
            lines.append((inner, f"for {j} in range(0, {b} - {b} % {LANES}, {LANES}):"))
            for u, a in enumerate(lanes):
                fold(inner + 1, a, idx[:last] + [f"({j} + {u})"] + idx[last + 1:])
            lines.append((inner, f"for {idx[last]} in range({b} - {b} % {LANES}, {b}):"))
            fold(inner + 1, acc + "0")
            for a in lanes[1:]:
                combine(ind, lanes[0], a)
            acc = lanes[0]
        lines.append((ind, f"{out}[{q}] = {result(acc)}"))
        lines.append((ind, f"{q} += 1"))
        return lines
    n_out = _prod([bounds[k] for k in kept])            # accumulators in memory order
    lines.append((0, f"{acc} = np.empty(({n_out},), {acc_np})"))
    lines.append((0, f"for {q} in range({n_out}):"))
    lines.append((1, f"{acc}[{q}] = {_INIT[kind]}"))
    for k in range(r):
        lines.append((k, f"for {idx[k]} in range({bounds[k]}):"))
    flat = " + ".join(f"{idx[k]} * ({_prod([bounds[j] for j in kept if j > k])})"
                      for k in kept)
    lines.append((r, f"{q} = {flat}"))
    fold(r, f"{acc}[{q}]")
    lines.append((0, f"for {q} in range({n_out}):"))
    lines.append((1, f"{out}[{q}] = {result(f'{acc}[{q}]')}"))
    return lines


def input_index(in_shape: tuple, loop_rank: int, idx: list) -> str:
    """The subscript of an input (right-aligned against the loop, size-1 axes broadcast)."""
    lead = loop_rank - len(in_shape)
    return ", ".join("0" if d == 1 else idx[lead + k] for k, d in enumerate(in_shape))


def _source(expr, in_shapes: list, red: ir.Reduction, val_np: str, const_np: str) -> str:
    r = len(red.shape)
    args = [f"a{i}" for i in range(len(in_shapes))]
    bounds = [f"n{k}" for k in range(r)]
    names = [f"x{i}" for i in range(len(in_shapes))]

    def loads(idx):
        return [f"x{i} = a{i}[{input_index(s, r, idx)}]" for i, s in enumerate(in_shapes)]
    body = render(expr, names)
    lines = loop_lines(red.kind, bounds, red.axes, loads, body, val_np, "out", "")
    src = ["# generated by minispore.backends.cpu.fused_reduce: do not edit", HEADER_IMPORTS,
           f"DT = np.{const_np}\n",
           '@njit(cache=True, error_model="numpy", nogil=True)',
           f"def fused_reduce({', '.join(args + ['out'] + bounds)}):"]
    src += ["    " * (ind + 1) + text for ind, text in lines]
    return "\n".join(src) + "\n"


def fused_reduce_kernel(expr, in_metas, red: ir.Reduction, out_meta):
    """The O1 kernel of a FUSED node with reduction `red`: one generated loop nest, no
    intermediate array. The source depends on the expression, the ranks, which input axes have
    size 1 and the reduction, not on the sizes (passed as arguments), so the compiled kernel is
    shared by every shape of that pattern (through numba's disk cache, across processes too)."""
    shape = tuple(red.shape) or (1,)                   # a 0-d loop runs once over one element
    r = len(shape)
    in_shapes = [(1,) * (r - len(m.shape)) + tuple(m.shape) for m in in_metas]
    pattern = [tuple(1 if d == 1 else 2 for d in s) for s in in_shapes]   # 2: "not size 1"
    val_np = np.dtype(out_meta.dtype.np).name
    floats = [cpu_np(m.dtype) for m in in_metas if m.dtype.is_float]
    const_np = (floats[0] if floats else np.dtype(val_np)).name
    red_eff = ir.Reduction(red.kind, red.axes, red.keep_dims, shape)
    mod = module_for(f"fusedred_{red.kind}", _source(expr, pattern, red_eff, f"np.{val_np}",
                                                     const_np))
    fn = entry_point(mod.fused_reduce,
                     [np.empty((1,) * r, m.dtype.np) for m in in_metas]
                     + [np.empty(1, val_np)] + [0] * r)
    out_shape = tuple(out_meta.shape)
    n_out = size_of(out_shape)
    val = np.dtype(val_np)

    def run(*bufs):
        out = np.empty(n_out, val)
        fn(*[b.reshape(s) for b, s in zip(bufs, in_shapes)], out, *shape)
        return out.reshape(out_shape)
    return run
