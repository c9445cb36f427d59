"""Dead code elimination: `dce(g)` drops every node none of whose outputs is used (transitively)
by the graph's outputs, keeping side-effecting nodes (PRINT, ASSIGN, and If/While nodes whose
subgraphs hold one). It recurses into the subgraphs of the nodes it keeps, whose roots are their
outputs and their own side effects; values a subgraph reads from an enclosing graph are live.

A kept If/While node keeps all its outputs (and a While all its carried values): pruning them
would change the node's signature. Graph inputs and params are left as they are.
"""
from __future__ import annotations

from .. import ir
from ._util import copy_node, has_effect, new_graph


def dce(g: ir.Graph) -> ir.Graph:
    return _dce(g, set())


def _dce(g: ir.Graph, live: set) -> ir.Graph:
    """`live` holds the ids of values used later; one set serves every nesting level because
    value ids are unique."""
    live.update(v.id for v in g.outputs)
    kept = []
    for n in reversed(g.nodes):
        if not (has_effect(n) or any(v.id in live for v in n.outputs)):
            continue
        subs = tuple(_dce(sg, live) for sg in n.subgraphs)
        live.update(v.id for v in n.inputs)
        kept.append(copy_node(n, subgraphs=subs))
    kept.reverse()
    return new_graph(g, kept, list(g.outputs))
