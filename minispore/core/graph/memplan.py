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
    vals = list(n.inputs)
    for sg in n.subgraphs:
        vals.extend(ir.free_values(sg))
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


ALIGN = 64


def aligned(nbytes: int) -> int:
    """nbytes rounded up to a multiple of ALIGN (the arena's and the native scratch's grain)."""
    return -(-nbytes // ALIGN) * ALIGN


def assign_offsets(g: ir.Graph, fixed: set, alias: dict, scratch: dict) -> tuple[dict, int]:
    """Buffer assignment for a program that owns one arena (the native sink): every value a node
    produces, except those in `fixed` (bound to caller buffers) and those in `alias` (value id ->
    the value whose storage it shares), gets an offset in the arena, live from its node to the
    last read of it or of any alias of it; `scratch` maps nodes to bytes they need only while
    they run, and the values of a control-flow node's subgraphs live while that node runs.
    First fit over the free gaps, 64-byte aligned; an output never shares memory with the inputs
    of its own node. Returns ({value id or node: offset}, arena bytes)."""
    root = {vid: r.id for vid, r in alias.items()}
    last: dict = {}
    for i, n in enumerate(g.nodes):
        for v in _reads(n):
            last[root.get(v.id, v.id)] = i
    for v in g.outputs:                   # an output aliasing an arena value is copied out,
        last[root.get(v.id, v.id)] = len(g.nodes)      # so keep it to the end to be safe
    free: list = []                       # sorted [start, end) gaps below `top`
    top = 0
    offsets: dict = {}
    dying: dict = {}

    def alloc(nbytes: int) -> int:
        nonlocal top
        nbytes = max(ALIGN, aligned(nbytes))
        for j, (s, e) in enumerate(free):
            if e - s >= nbytes:
                free[j] = (s + nbytes, e)
                if free[j][0] == e:
                    free.pop(j)
                return s
        s, top = top, top + nbytes
        return s

    def release(off: int, nbytes: int):
        nbytes = max(ALIGN, aligned(nbytes))
        free.append((off, off + nbytes))
        free.sort()
        merged: list = []
        for s, e in free:
            if merged and merged[-1][1] == s:
                merged[-1] = (merged[-1][0], e)
            else:
                merged.append((s, e))
        free[:] = merged

    for i, n in enumerate(g.nodes):
        if n.op == ir.CONST:
            continue
        for v in n.outputs:
            if v.id in fixed or v.id in alias:
                continue
            offsets[v.id] = alloc(_nbytes(v))
            dying.setdefault(max(last.get(v.id, i), i), []).append((offsets[v.id], _nbytes(v)))
        inner = _inner_buffers(n, fixed, alias, scratch)
        for key, nb in inner:              # a control-flow node's subgraph values (and their
            offsets[key] = alloc(nb)       # nodes' scratch) live while the node runs
        for key, nb in inner:
            release(offsets[key], nb)
        for off, nb in dying.pop(i, ()):
            release(off, nb)
    return offsets, top


def _inner_buffers(n: ir.Node, fixed: set, alias: dict, scratch: dict) -> list:
    """(key, bytes) a node needs only while it runs: its scratch, and every value produced in
    its subgraphs (recursively) with their nodes' scratch."""
    out = [(n, scratch[n])] if n in scratch else []
    for sg in n.subgraphs:
        for m in sg.all_nodes():
            if m.op == ir.CONST:
                continue
            out.extend((v.id, _nbytes(v)) for v in m.outputs
                       if v.id not in fixed and v.id not in alias)
            if m in scratch:
                out.append((m, scratch[m]))
    return out
