"""Common subexpression elimination: `cse(g)` merges a node into an earlier one with the same op,
the same input values and equal attributes (CONST nodes: equal dtype, shape and bytes, so 0.0 and
-0.0 stay apart while equal NaNs merge), and substitutes the earlier outputs for its outputs
everywhere after it: later nodes, subgraphs and graph outputs.

Scoping: a node inside a subgraph may be merged into an equal node of an enclosing graph that comes
before it (it is visible there), never the other way round, nor across sibling subgraphs. PRINT,
ASSIGN, If and While nodes and primitives in `NONDETERMINISTIC` are never merged.
"""
from __future__ import annotations

from .. import ir
from ._util import NONDETERMINISTIC, attrs_key, const_key, is_prim, rewrite

__all__ = ["cse", "NONDETERMINISTIC"]


def node_key(n: ir.Node):
    """The key under which equal nodes meet, or None for nodes that are never merged."""
    if n.subgraphs:
        return None
    if n.op == ir.CONST:
        v = n.outputs[0]
        return (ir.CONST, v.dtype.name, v.shape, const_key(n.attr("value")))
    if not is_prim(n) or n.op.name in NONDETERMINISTIC:
        return None
    a = attrs_key(n.attrs)
    if a is None:
        return None
    return (n.op.name, id(n.op), tuple(v.id for v in n.inputs), a)


def cse(g: ir.Graph) -> ir.Graph:
    subst: dict = {}

    def visit(n: ir.Node, seen):
        key = node_key(n)
        if key is None:
            return n
        prev = seen.get(key)
        if prev is not None and len(prev) == len(n.outputs):
            for o, p in zip(n.outputs, prev):
                subst[o.id] = p
            return None
        seen[key] = list(n.outputs)
        return n

    return rewrite(g, visit, subst)
