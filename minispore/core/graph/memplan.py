"""Memory planning: liveness over a graph. For every node, the values whose last use it is, so
the executor drops them right after it and the allocator hands their memory to the next buffer
of that size (kernels allocate their outputs; buffers are immutable, so dropping the last
reference is the whole of freeing). Also the planned peak of live intermediate bytes against the
sum of all intermediates (what keeping every value alive would cost)."""
from __future__ import annotations

from dataclasses import dataclass

from ..shape import size_of
from . import ir


@dataclass
class MemoryPlan:
    free_after: dict            # node index in g.nodes -> [Value] whose last use it is
    peak_bytes: int             # most intermediate bytes alive at once, following the plan
    total_bytes: int            # all intermediate bytes (no reuse)


def _nbytes(v: ir.Value) -> int:
    return size_of(v.shape) * v.dtype.itemsize


def _reads(n: ir.Node) -> list:
    """Values a node reads, its subgraphs' free values included."""
    from .cf_grad import free_values
    vals = list(n.inputs)
    for sg in n.subgraphs:
        vals.extend(free_values(sg))
    return vals


def plan(g: ir.Graph) -> MemoryPlan:
    keep = {v.id for v in g.outputs} | {v.id for v in g.inputs} | {v.id for v, _ in g.params}
    last: dict = {}
    for i, n in enumerate(g.nodes):
        for v in _reads(n):
            last[v.id] = i
    produced = {v.id: v for n in g.nodes for v in n.outputs}
    free_after: dict = {}
    for vid, i in last.items():
        if vid in produced and vid not in keep and g.nodes[i].op != ir.ASSIGN:
            free_after.setdefault(i, []).append(produced[vid])
    live = peak = total = 0
    for i, n in enumerate(g.nodes):
        if n.op == ir.CONST:
            continue
        for v in n.outputs:
            live += _nbytes(v)
            total += _nbytes(v)
        peak = max(peak, live)
        for v in free_after.get(i, ()):
            live -= _nbytes(v)
        for v in n.outputs:                      # produced but never read
            if v.id not in last and v.id not in keep:
                live -= _nbytes(v)
    return MemoryPlan(free_after, peak, total)
