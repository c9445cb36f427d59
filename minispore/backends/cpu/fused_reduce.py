"""The O1 kernel of a FUSED node that ends with a reduction (ir.Reduction): loops/fused_reduce.py's
definition rendered by render/numba_source.py as a numba kernel (one per expression, broadcast
pattern, reduction and dtypes; its extents are the arrays' shapes, so one compiled kernel serves
every shape of the pattern, through numba's disk cache across processes too). The native sink
renders the same definition into LLVM IR (native_reduce.fused_reduce), so O1 and O2 agree bit for
bit.

Accumulation (loops/fused_reduce.py): sum and mean accumulate in float64 whatever the value dtype
(each value is first rounded to the group's dtype, exactly as the unfused elementwise kernel would
store it), and the result is rounded once to the output dtype; the unfused float32 reduction
(numpy's pairwise float32 sum) has an error of a few float32 ulps, the float64 accumulator is
exact to well within that, so fused and unfused agree to float32 tolerance (not bit for bit; O0,
which never fuses, stays bit-identical to PyNative). max and min compare in the value dtype and
propagate NaN as numpy does. The loops run serially (see elementwise.py on prange at these
sizes); LANES register chains over an innermost reduced axis, else float64 accumulators in memory
order. Groups compute in float32 or float64 (passes/fuse.py leaves half precision unfused), and
the native lowering refuses any other output dtype.
"""
from __future__ import annotations

import numpy as np

from ...core.graph import ir
from ...core.shape import size_of
from .kernel_abi import cpu_np, entry_point
from .loops import fused_reduce as loops_fused_reduce
from .render import numba_source

_modules: dict = {}             # (repr of the expression, params but expr) -> rendered module


def definition_params(expr, in_shapes: list, red: ir.Reduction, dtype, compute) -> dict:
    """loops/fused_reduce.fused_reduce's parameters for inputs of the (loop-rank, broadcast)
    `in_shapes` of a reduction `red` whose loop shape is `red.shape` (0-d: one element) into
    `dtype`, computing in `compute` (numpy dtypes or names)."""
    shape = tuple(red.shape) or (1,)
    if not in_shapes or any(len(s) != len(shape) for s in in_shapes) or \
            tuple(np.broadcast_shapes(*in_shapes)) != shape:
        raise ValueError(f"fused {red.kind}: inputs {in_shapes} do not broadcast to the loop "
                         f"shape {shape}")
    pattern = tuple(tuple(1 if d == 1 else 2 for d in s) for s in in_shapes)   # 2: not size 1
    return {"expr": expr, "kind": red.kind, "axes": tuple(red.axes), "pattern": pattern,
            "compute": np.dtype(compute).name, "dtype": np.dtype(dtype).name}


def loop_shapes(in_shapes: list, red: ir.Reduction) -> list:
    """The inputs' shapes at the loop's rank (leading size-1 axes added)."""
    r = len(tuple(red.shape) or (1,))
    return [(1,) * (r - len(s)) + tuple(s) for s in in_shapes]


def kernel_module(params: dict):
    """The numba rendering of the definition with `params` (built once per process)."""
    key = (repr(params["expr"]),) + tuple((k, v) for k, v in sorted(params.items())
                                          if k != "expr")
    mod = _modules.get(key)
    if mod is None:
        mod = _modules[key] = numba_source.module(loops_fused_reduce.fused_reduce, **params)
    return mod


def fused_reduce_kernel(expr, in_metas, red: ir.Reduction, out_meta):
    """The O1 kernel of a FUSED node with reduction `red`: the definition's numba rendering, one
    loop nest and no intermediate array; `run(*inputs)` returns the reduced output. The values
    are computed in the first float input's compute dtype (the output's if none is float)."""
    in_shapes = loop_shapes([m.shape for m in in_metas], red)
    floats = [cpu_np(m.dtype) for m in in_metas if m.dtype.is_float]
    dtype = np.dtype(out_meta.dtype.np)
    params = definition_params(expr, in_shapes, red, dtype, floats[0] if floats else dtype)
    fn = entry_point(kernel_module(params).kernel,
                     [np.empty((1,) * len(s), m.dtype.np) for s, m in zip(in_shapes, in_metas)])
    out_shape = tuple(out_meta.shape)
    if size_of(out_shape) != size_of([d for k, d in enumerate(tuple(red.shape) or (1,))
                                      if k not in red.axes]):
        raise ValueError(f"fused {red.kind}: output {out_shape} of a reduction {red}")

    def run(*bufs):
        return fn(*[b.reshape(s) for b, s in zip(bufs, in_shapes)]).reshape(out_shape)
    return run
