"""Scheduling of asynchronous collectives: `schedule(g)` reorders the top-level nodes so that
each op marked `schedule = "early"` (all_reduce_start) runs as soon as its inputs exist and
each op marked `schedule = "late"` (all_reduce_wait) as late as its first use allows. In a
data-parallel training step this makes each gradient bucket's all-reduce start while the rest
of the backward is still being computed, and the waits come just before the optimizer needs
the reduced gradients: the overlap of communication with compute that PyTorch DDP and
MindSpore's backend get by the same placement.

The new order is a topological order of the same nodes; a graph without such ops is returned as
it is. Nodes are only moved within a region between barriers, which keep their place: side
effects (Print, Assign), If/While nodes (their subgraphs read enclosing values) and other host
callbacks (a blocking collective, a Custom pyfunc), so no effect is reordered and blocking
collectives keep their order on every rank. Within a region:
- a start moves, with the nodes that exist only for it (its bucket's reshapes and
  concatenation), to right after the last node it needs from elsewhere (the last gradient of
  its bucket);
- a wait moves to right before its first use;
- every other node keeps its place.
Every rank compiles the same graph to the same order, so ranks submit their buckets to the
communication stream in one order."""
from __future__ import annotations

from .. import ir
from ...primitive import OpDef
from ._util import has_effect, new_graph


def _mark(n: ir.Node):
    return getattr(n.op, "schedule", None) if isinstance(n.op, OpDef) else None


def _barrier(n: ir.Node) -> bool:
    if n.subgraphs or has_effect(n):
        return True
    return (isinstance(n.op, OpDef) and getattr(n.op, "host_kernel", None) is not None
            and _mark(n) is None)


def schedule(g: ir.Graph) -> ir.Graph:
    if not any(_mark(n) for n in g.nodes):
        return g
    uses: dict = {}                     # every read of a value, subgraphs' and outputs' included
    for n in g.all_nodes():
        for v in n.inputs:
            uses[v.id] = uses.get(v.id, 0) + 1
    for v in g.outputs:
        uses[v.id] = uses.get(v.id, 0) + 1
    order, region = [], []
    for n in g.nodes:
        if _barrier(n):
            order.extend(_order_region(region, uses))
            order.append(n)
            region = []
        else:
            region.append(n)
    order.extend(_order_region(region, uses))
    return new_graph(g, order, list(g.outputs))


def _order_region(nodes: list, uses: dict) -> list:
    if not any(_mark(n) for n in nodes):
        return nodes
    n_nodes = len(nodes)
    producer = {v.id: i for i, n in enumerate(nodes) for v in n.outputs}
    deps = [{producer[v.id] for v in n.inputs if v.id in producer} for n in nodes]
    users: list = [[] for _ in nodes]
    here: dict = {}
    for i, n in enumerate(nodes):
        for j in deps[i]:
            users[j].append(i)
        for v in n.inputs:
            here[v.id] = here.get(v.id, 0) + 1
    # owner[i]: the start that node i exists for (all its uses lead to that start only), from
    # the end, since a node's users come after it
    owner: list = [None] * n_nodes
    for i in range(n_nodes - 1, -1, -1):
        if _mark(nodes[i]) == "early":
            owner[i] = i
            continue
        if not users[i] or any(uses.get(v.id, 0) > here.get(v.id, 0) for v in nodes[i].outputs):
            continue                    # unused here, or read outside the region
        owners = {owner[u] for u in users[i]}
        if len(owners) == 1 and None not in owners:
            owner[i] = owners.pop()
    # each start with its own nodes goes right after the last node it needs from outside
    after: dict = {}
    for s in sorted({o for o in owner if o is not None}):
        members = [i for i in range(n_nodes) if owner[i] == s]
        outside = {j for i in members for j in deps[i] if owner[j] != s}
        after.setdefault(max(outside, default=-1), []).extend(members)
    hoisted = []
    hoisted.extend(after.get(-1, ()))
    for i in range(n_nodes):
        if owner[i] is None:
            hoisted.append(i)
            hoisted.extend(after.get(i, ()))
    # each wait right before its first use; waits used by no later node of the region last
    out, pending = [], set()
    for i in hoisted:
        if _mark(nodes[i]) == "late":
            pending.add(i)
            continue
        for j in sorted(deps[i] & pending):
            out.append(j)
            pending.discard(j)
        out.append(i)
    out.extend(sorted(pending))
    assert len(out) == n_nodes and len(set(out)) == n_nodes, "schedule: lost a node"
    return [nodes[i] for i in out]
