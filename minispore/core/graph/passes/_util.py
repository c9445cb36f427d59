"""Helpers shared by the graph passes (passes/*.py): value substitution, the forward rewriting walk
that rebuilds a graph without touching its input, side-effect detection, and the typed keys that
CSE uses to compare attributes and constants.

Every pass is a pure function Graph -> Graph. The walk below always builds new Graph and Node
objects (new lists; attrs tuples, constant arrays and ir.Value objects are shared, as they are
never mutated), so a pass's output can be edited in place without touching its input.
"""
from __future__ import annotations

import dataclasses
from collections import ChainMap
from typing import Callable

import numpy as np

from .. import ir
from ...primitive import OpDef

EFFECTS = (ir.PRINT, ir.ASSIGN)
CONTROL = (ir.IF, ir.WHILE)
# Names of primitives whose result may differ between two calls with equal inputs (random ops):
# never merged by CSE nor folded. None exist yet.
NONDETERMINISTIC: set = set()


def is_prim(n: ir.Node) -> bool:
    return isinstance(n.op, OpDef)


def resolve(v: ir.Value, subst: dict) -> ir.Value:
    """The value that `v` stands for after the substitutions made so far (followed to the end)."""
    while v.id in subst:
        v = subst[v.id]
    return v


def has_effect(n: ir.Node) -> bool:
    """PRINT and ASSIGN, and If/While nodes whose subgraphs (transitively) hold one."""
    if n.op in EFFECTS:
        return True
    return any(has_effect(m) for sg in n.subgraphs for m in sg.nodes)


def copy_node(n: ir.Node, **changes) -> ir.Node:
    """A new Node like `n` (new inputs/outputs lists), with `changes` applied."""
    changes.setdefault("inputs", list(n.inputs))
    changes.setdefault("outputs", list(n.outputs))
    return dataclasses.replace(n, **changes)


def new_graph(g: ir.Graph, nodes: list, outputs: list) -> ir.Graph:
    return ir.Graph(g.name, list(g.inputs), list(g.params), nodes, outputs)


# visit(node, scope) -> a Node, a list of Nodes (emitted in order), or None (dropped: the visitor
# has recorded substitutions for its outputs). `node` is already a fresh copy with its inputs
# substituted and its subgraphs rewritten, so the visitor may return it as is.
Visitor = Callable[[ir.Node, ChainMap], "ir.Node | list | None"]


def rewrite(g: ir.Graph, visit: Visitor, subst: dict, scope: ChainMap | None = None) -> ir.Graph:
    """Walk `g` forward. `scope` holds what the visitor learned about the values visible at this
    point; a subgraph gets a child scope, so what it learns does not leak out of it (its values are
    not visible after it). `subst` maps value ids to replacements; values are unique, so one dict
    serves every nesting level."""
    scope = ChainMap() if scope is None else scope
    nodes = []
    for n in g.nodes:
        subs = tuple(rewrite(sg, visit, subst, scope.new_child()) for sg in n.subgraphs)
        n = copy_node(n, inputs=[resolve(v, subst) for v in n.inputs], subgraphs=subs)
        r = visit(n, scope)
        if r is None:
            continue
        nodes.extend(r if isinstance(r, list) else [r])
    return new_graph(g, nodes, [resolve(v, subst) for v in g.outputs])


# ---------------------------------------------------------------- keys for CSE -----------------
def typed_key(v):
    """A hashable key equal only for attribute values that are the same value of the same type
    (1, 1.0 and True differ; 0.0 and -0.0 differ; arrays compare by dtype, shape and bytes)."""
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(typed_key(x) for x in v))
    if isinstance(v, (float, np.floating)):
        return (type(v), float(v).hex())
    if isinstance(v, np.ndarray):
        return const_key(v)
    if isinstance(v, dict):
        return (dict, tuple(sorted((k, typed_key(x)) for k, x in v.items())))
    return (type(v), v)


def const_key(a: np.ndarray) -> tuple:
    a = np.asarray(a)
    return (np.ndarray, a.dtype.str, a.shape, np.ascontiguousarray(a).tobytes())


def attrs_key(attrs: tuple):
    """The key of a node's attribute tuple, or None when it cannot be hashed."""
    try:
        key = tuple((k, typed_key(v)) for k, v, *_ in attrs)
        hash(key)
    except TypeError:
        return None
    return key
