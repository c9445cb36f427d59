"""Algebraic simplification: `simplify(g)` applies rewrite rules that are exact in floating point
(bit for bit, NaN, infinities and signed zeros included), each only when the replacement has the
very shape and dtype of the node's output (so broadcasting or promotion never changes a type):

    x*1, 1*x, x/1            -> x
    x+(-0.0), (-0.0)+x, x-0.0 -> x     for floats: +0.0 + -0.0 = +0.0, so x+0.0 is NOT x (and
                                       x-(-0.0) is not either); any zero for integers and bools
    neg(neg(x))              -> x
    reshape(reshape(x, a), b) -> reshape(x, b);  reshape(x) to x's own shape -> x
    transpose(transpose(x, p), q) -> transpose(x, p∘q);  identity perm -> x
    cast(x) to x's own dtype -> x

The constants must be CONST nodes whose every element qualifies. Rules apply repeatedly to a node
(reshape(reshape(x, a), x.shape) -> x), and to the rewritten producers of its inputs, so one pass
reaches a fixed point. x*0 -> 0 is not exact (NaN, inf, -0.0) and is not done; stop_gradient is
kept (it matters to autodiff). Nodes made dead are left to DCE.
"""
from __future__ import annotations

import numpy as np

from .. import ir
from ...primitive import REGISTRY, normalize_attrs
from ._util import copy_node, is_prim, rewrite

_OPS = ("mul", "div", "add", "sub", "neg", "reshape", "transpose", "cast")


def _const(v: ir.Value, defs) -> np.ndarray | None:
    n = defs.get(v.id)
    return n.attr("value") if n is not None and n.op == ir.CONST else None


def _all(v: ir.Value, defs, test) -> bool:
    a = _const(v, defs)
    if a is None or a.size == 0:
        return False
    a = np.asarray(a).reshape(-1)
    with np.errstate(all="ignore"):              # the first element first: big constants are
        return bool(test(a[:1].astype(np.float64))[0]) and \
            bool(np.all(test(a.astype(np.float64))))   # rarely all ones or zeros


def _is_one(v, defs) -> bool:
    return _all(v, defs, lambda a: a == 1)


def _is_zero(v, defs, negative: bool, out: ir.Value) -> bool:
    """Every element is a zero that leaves x unchanged: for float outputs it must have the given
    sign (an integer or bool zero computes as +0.0)."""
    if not out.dtype.is_float:
        return _all(v, defs, lambda a: a == 0)
    return _all(v, defs, lambda a: (a == 0) & (np.signbit(a) == negative))


def _same_type(a: ir.Value, b: ir.Value) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _rule(n: ir.Node, defs):
    """One rewrite of `n`: a Value that replaces its output, a new Node, or None."""
    op = n.op
    out = n.outputs[0]
    name = op.name
    if name in ("mul", "add", "sub", "div"):
        x, y = n.inputs
        if name == "mul":
            cands = [(x, _is_one(y, defs)), (y, _is_one(x, defs))]
        elif name == "div":
            cands = [(x, _is_one(y, defs))]
        elif name == "add":
            cands = [(x, _is_zero(y, defs, True, out)), (y, _is_zero(x, defs, True, out))]
        else:
            cands = [(x, _is_zero(y, defs, False, out))]
        for v, ok in cands:
            if ok and _same_type(v, out):
                return v
        return None
    x = n.inputs[0]
    p = defs.get(x.id)
    same_op = p is not None and p.op is op and len(p.outputs) == 1
    if name == "neg":
        if same_op and _same_type(p.inputs[0], out):
            return p.inputs[0]
    elif name == "reshape":
        if x.shape == out.shape:
            return x
        if same_op:
            return copy_node(n, inputs=[p.inputs[0]])
    elif name == "transpose":
        perm = tuple(int(i) for i in n.attr("perm"))
        if perm == tuple(range(len(perm))):
            return x
        if same_op:
            inner = tuple(int(i) for i in p.attr("perm"))
            q = tuple(inner[i] for i in perm)
            return copy_node(n, inputs=[p.inputs[0]], attrs=normalize_attrs(op, {"perm": q}))
    elif name == "cast":
        if x.dtype == out.dtype and x.shape == out.shape:
            return x
    return None


def simplify(g: ir.Graph) -> ir.Graph:
    subst: dict = {}
    ops = {REGISTRY[k] for k in _OPS if k in REGISTRY}

    def visit(n: ir.Node, defs):
        while is_prim(n) and n.op in ops and len(n.outputs) == 1:
            r = _rule(n, defs)
            if r is None:
                break
            if isinstance(r, ir.Value):
                subst[n.outputs[0].id] = r
                return None
            n = r
        for v in n.outputs:
            defs[v.id] = n
        return n

    return rewrite(g, visit, subst)
