"""Constant folding: `fold(g)` evaluates each primitive node whose inputs all come from CONST nodes
(primitives without inputs, such as fill and arange, included) and whose outputs hold at most
`MAX_ELEMENTS` elements in all, with the op's numpy reference `ref`, and replaces it by one CONST
node per output, which keeps the output Value (so every use stays valid) and the node's `loc`.

Folding cascades in one pass: a folded node's outputs are constants for the nodes after it.
A node whose `ref` raises (say a gather out of range) is left alone: the error belongs to run
time. Primitives in NONDETERMINISTIC are never folded. Constants of enclosing graphs are visible
inside subgraphs, so loop-invariant constant expressions in a While body fold too.
"""
from __future__ import annotations

import math

import numpy as np

from .. import ir
from ...primitive import attrs_dict
from ._util import NONDETERMINISTIC, copy_node, is_prim, rewrite

MAX_ELEMENTS = 2 ** 16


def evaluate(n: ir.Node, arrays: list) -> list | None:
    """The node's output arrays as its ref computes them, checked against (and cast to) the
    recorded output types; None when ref fails or disagrees on a shape."""
    try:
        with np.errstate(all="ignore"):
            r = n.op.ref(*arrays, **attrs_dict(n.attrs))
    except Exception:               # noqa: BLE001 - any failure is the run time's to report
        return None
    rs = list(r) if isinstance(r, (tuple, list)) else [r]
    if len(rs) != len(n.outputs):
        return None
    out = []
    for a, v in zip(rs, n.outputs):
        a = np.array(a, copy=True)              # never alias the input constants
        if a.shape != v.shape:
            return None
        if a.dtype != v.dtype.np:
            a = a.astype(v.dtype.np)
        out.append(a)
    return out


def fold(g: ir.Graph) -> ir.Graph:
    def visit(n: ir.Node, consts):
        if n.op == ir.CONST:
            consts[n.outputs[0].id] = n.attr("value")
            return n
        if not is_prim(n) or n.op.name in NONDETERMINISTIC or n.subgraphs:
            return n
        if sum(math.prod(v.shape) for v in n.outputs) > MAX_ELEMENTS:
            return n
        if not all(v.id in consts for v in n.inputs):
            return n
        arrays = evaluate(n, [consts[v.id] for v in n.inputs])
        if arrays is None:
            return n
        new = []
        for a, v in zip(arrays, n.outputs):
            consts[v.id] = a
            new.append(copy_node(n, op=ir.CONST, inputs=[], attrs=(("value", a),), outputs=[v],
                                 subgraphs=()))
        return new

    return rewrite(g, visit, {})
