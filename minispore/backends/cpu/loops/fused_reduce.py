"""The fused reductions, written once: a FUSED node that ends with an ir.Reduction (sum, mean,
max or min over axes of an elementwise scalar_expr template of broadcast inputs) as one loop
nest. backends/cpu/fused_reduce.py renders it as the O1 numba kernel, native_reduce.py as the
native sink's LLVM lowering, so O1 and O2 run the same algorithm and agree bit for bit.

The inputs have the loop's rank (leading size-1 axes added); `pattern[i][k]` is 1 where input i
has size 1 on axis k (it is indexed with 0 there: broadcast) and 2 elsewhere. The loop extent of
axis k is the size of the first input that is not broadcast along it (1 if none is), so one
rendering serves every shape of the pattern.

Each value is the template computed in the group's compute dtype and rounded to the output dtype
(builder.template: exactly as the unfused elementwise kernel would store it). sum and mean
accumulate those values in float64 and round the result once (mean divides by the count first);
max and min compare in the value dtype and a NaN wins, as numpy's (`v > acc or v != v`).

Loop order: when the reduced axes are the innermost ones (axis=-1, all axes, the usual case),
each output element is accumulated in variables over the innermost axis, unrolled into LANES
independent accumulators (one chain of dependent adds is latency-bound, ~1 element per ns; four
are not) over its first n - n % LANES elements, the remainder into the first one, combined in
lane order at the end; otherwise the loops follow memory order and accumulate into a scratch
row of one slot per output element (consecutive elements are independent; float64 for sum and
mean, the value dtype for max and min), rounded to the output at the end.
"""
from __future__ import annotations

from ....core import scalar_expr as E
from .builder import definition, f64, product, template

LANES = 4        # independent accumulators over the innermost reduced axis (module docstring)
KINDS = ("sum", "mean", "max", "min")
_INIT = {"sum": 0.0, "mean": 0.0, "max": float("-inf"), "min": float("inf")}


@definition
def fused_reduce(b, expr, kind: str, axes: tuple, pattern: tuple, compute: str, dtype: str):
    """Inputs a0.. of rank len(pattern[i]) (see the module docstring); `expr` over arg(i) = ai,
    computed in the float dtype `compute` and rounded to `dtype`, reduced by `kind` over the
    sorted `axes` -> out: the kept elements flat in row-major order, of `dtype`."""
    if kind not in KINDS:
        raise ValueError(f"fused reduction: kind {kind!r} is not one of {KINDS}")
    rank = len(pattern[0]) if pattern else 0
    ins = [b.input(f"a{i}", rank) for i in range(len(pattern))]

    def extent(k):
        return next((x.dims[k] for x, p in zip(ins, pattern) if p[k] != 1), E.lift(1))
    bounds = [extent(k) for k in range(rank)]
    kept = [k for k in range(rank) if k not in axes]
    count = product(bounds[k] for k in axes)
    out = b.output("out", (product(bounds[k] for k in kept),), dtype=dtype)

    def value(at):
        """The template's value at loop indices `at`, bound to v."""
        xs = [b.var(f"x{i}", x[tuple(E.lift(0) if p[k] == 1 else at[k] for k in range(rank))])
              for i, (x, p) in enumerate(zip(ins, pattern))]
        return b.var("v", template(expr, xs, compute, dtype))

    def combine(acc, v):
        if kind in ("sum", "mean"):
            return acc + f64(v)
        better = v > acc if kind == "max" else v < acc
        return E.where(E.logical_or(better, E.isnan(v)), v, acc)

    def result(acc):
        return acc / count if kind == "mean" else acc

    def nest(ks, at, body):
        if not ks:
            return body()
        with b.loop(bounds[ks[0]], f"i{ks[0]}") as i:
            at[ks[0]] = i
            nest(ks[1:], at, body)

    at = [None] * rank
    if all(k < a for k in kept for a in axes):          # reduced axes innermost: variables
        q = b.var("q", 0)

        def per_output():
            init = f64(_INIT[kind]) if kind in ("sum", "mean") else \
                template(E.lift(_INIT[kind]), (), dtype, dtype)
            lanes = [b.var(f"acc{u}", init) for u in range(LANES if axes else 1)]

            def fold(lane, where):
                b.set(lanes[lane], combine(lanes[lane], value(where)))

            def reduced():
                if not axes:
                    return fold(0, at)
                last = axes[-1]
                n = bounds[last]
                with b.loop(n - n % LANES, "j", step=LANES) as j:
                    for u in range(LANES):
                        fold(u, at[:last] + [j + u] + at[last + 1:])
                with b.loop(n, f"i{last}", start=n - n % LANES) as i:
                    fold(0, at[:last] + [i] + at[last + 1:])
            nest(list(axes[:-1]), at, reduced)
            for lane in lanes[1:]:
                b.set(lanes[0], combine(lanes[0], lane))
            b.store(out, q, result(lanes[0]))
            b.set(q, q + 1)
        nest(kept, at, per_output)
        return
    n_out = product(bounds[k] for k in kept)           # accumulators in memory order
    acc = b.scratch("acc", n_out, dtype="float64" if kind in ("sum", "mean") else dtype)
    with b.loop(n_out, "q") as q:
        b.store(acc, q, _INIT[kind])

    def fold():
        slot = None                                     # the kept indices, row-major
        for k in kept:
            slot = at[k] if slot is None else slot * bounds[k] + at[k]
        b.store(acc, slot, combine(acc[slot], value(at)))
    nest(list(range(rank)), at, fold)
    with b.loop(n_out, "q") as q:
        b.store(out, q, result(acc[q]))
