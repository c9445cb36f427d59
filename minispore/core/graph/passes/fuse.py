"""Elementwise fusion: chains and trees of elementwise nodes become one FUSED node whose scalar
expression is the composition of the members' templates, so a backend runs them as one loop that
reads each input once and writes one output (no intermediate arrays). A group may end with one
reduction (ir.REDUCTION_KINDS: sum, mean, max, min of a float32/float64 value): a reduction
whose input is the result of a group (or of one fusable node) read by nothing else is absorbed
as the FUSED node's ir.Reduction, so the loop accumulates and the group's elementwise result is
never materialised. A group read twice (two reductions, or a reduction and anything else) is
absorbed by none of them.

A node joins the group of its consumer when every read of its result is by that consumer (once,
or several times as in `d * d`: the expression then reads the shared subexpression twice), in
the same (sub)graph. Members compute in float32/float64 (bools from comparisons allowed, and
bool<->float casts); integer and half-precision arithmetic is left unfused, so a fused loop never
changes integer semantics. Intermediate results inside a group may be broadcast to the group's
output shape (each input is indexed with its own broadcast strides).
"""
from __future__ import annotations

from ... import dtype as dt
from ... import scalar_expr as E
from ...primitive import ELEMENTWISE, OpDef, attrs_dict
from ...shape import size_of
from .. import ir
from ._util import new_graph

_OK_DTYPES = (dt.float32, dt.float64, dt.bool_)


def _fusable(n: ir.Node) -> bool:
    if not isinstance(n.op, OpDef) or len(n.outputs) != 1:
        return False
    if not all(v.dtype in _OK_DTYPES for v in n.inputs + n.outputs):
        return False
    if n.op.name == "cast":
        a, o = n.inputs[0].dtype, n.outputs[0].dtype
        return a is o or dt.bool_ in (a, o)
    if n.op.kind != ELEMENTWISE or n.op.scalar is None:
        return False
    cdts, _ = n.op.compute(tuple(v.dtype for v in n.inputs))
    return all(c is v.dtype for c, v in zip(cdts, n.inputs))


def _absorbable(n: ir.Node) -> bool:
    """A reduction a fused group may end with: a plain fold of a float value (same dtype out)."""
    if not isinstance(n.op, OpDef) or n.op.name not in ir.REDUCTION_KINDS or len(n.inputs) != 1:
        return False
    x, o = n.inputs[0], n.outputs[0]
    return x.dtype in (dt.float32, dt.float64) and o.dtype is x.dtype and size_of(x.shape) > 0


def _reduction(n: ir.Node) -> ir.Reduction:
    from ...ops.reduce import reduction_axes
    a = attrs_dict(n.attrs)
    x = n.inputs[0]
    return ir.Reduction(n.op.name, reduction_axes(n.op.name, a["axis"], len(x.shape)),
                        bool(a["keep_dims"]), x.shape)


def _expr_of(n: ir.Node, args: list) -> E.Expr:
    if n.op.name == "cast":
        a, o = n.inputs[0].dtype, n.outputs[0].dtype
        x = args[0]
        if a is o:
            return x
        return E.where(x, 1.0, 0.0) if a is dt.bool_ else x.ne(0)
    expr = E.lift(n.op.scalar(*args, **attrs_dict(n.attrs)))
    if n.outputs[0].dtype is dt.bool_ and expr.op not in _BOOL_VALUED:
        # a bool member's arithmetic (add: or, mul: and) stored as a bool, as the unfused node
        # stores it: a template renders `x + y` on bools as an integer (True + True is 2), and
        # a consumer inside the group (eq, xor, ...) must read True, not 2
        expr = expr.ne(0)
    return expr


# template results that are 0 or 1 whenever their arguments are (no rounding to bool needed)
_BOOL_VALUED = ("arg", "lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not", "isnan",
                "band", "bor", "bxor")


def _uses(g: ir.Graph) -> dict:
    """How many times each value is read in g (subgraph reads and graph outputs included)."""
    count: dict = {}

    def use(v):
        count[v.id] = count.get(v.id, 0) + 1

    def walk(h):
        for n in h.nodes:
            for v in n.inputs:
                use(v)
            for sg in n.subgraphs:
                walk(sg)
        for v in h.outputs:
            use(v)
    walk(g)
    return count


def fuse(g: ir.Graph, _uses_root: dict | None = None) -> ir.Graph:
    uses = _uses(g) if _uses_root is None else _uses_root
    producer = {v.id: n for n in g.nodes for v in n.outputs}
    group: dict = {}                      # id(node) -> root node of its group
    for n in reversed(g.nodes):
        if not _fusable(n):
            continue
        group.setdefault(id(n), n)
        root = group[id(n)]
        for v in n.inputs:
            p = producer.get(v.id)
            # every read of v is by n (once, or several times as in d * d): p joins n's group
            reads_by_n = sum(1 for u in n.inputs if u.id == v.id)
            if p is not None and id(p) not in group and uses.get(v.id) == reads_by_n and \
                    _fusable(p):
                group[id(p)] = root
    members: dict = {}
    for n in g.nodes:
        r = group.get(id(n))
        if r is not None:
            members.setdefault(id(r), []).append(n)
    absorbed: dict = {}                   # id(group root) -> the reduction that ends the group
    for n in g.nodes:
        if _absorbable(n):
            p = producer.get(n.inputs[0].id)
            if p is not None and group.get(id(p)) is p and uses.get(n.inputs[0].id) == 1:
                absorbed[id(p)] = n
    tails = {id(r) for r in absorbed.values()}
    nodes = []
    for n in g.nodes:
        subs = tuple(fuse(sg, uses) for sg in n.subgraphs)
        r = group.get(id(n))
        if id(n) in tails:
            continue                       # emitted as the end of its group
        if r is None or (len(members[id(r)]) == 1 and id(r) not in absorbed):
            nodes.append(ir.Node(n.op, list(n.inputs), n.attrs, list(n.outputs), n.loc, subs)
                         if subs else n)
            continue
        if r is not n:
            continue                       # emitted as part of its root
        nodes.append(_fused_node(n, members[id(n)], absorbed.get(id(n))))
    return new_graph(g, nodes, list(g.outputs))


def _fused_node(root: ir.Node, group: list, tail: ir.Node | None = None) -> ir.Node:
    """The FUSED node of `group` (topological order, ending at `root`), folded by the reduction
    node `tail` when given (the node then takes tail's output and source location)."""
    inside = {v.id for m in group for v in m.outputs}
    inputs, index, exprs = [], {}, {}

    def arg(v):
        if v.id in inside:
            return exprs[v.id]
        if v.id not in index:
            index[v.id] = len(inputs)
            inputs.append(v)
        return E.arg(index[v.id])
    for m in group:                                    # topological order within the graph
        exprs[m.outputs[0].id] = _expr_of(m, [arg(v) for v in m.inputs])
    names = tuple(m.op.name for m in group)
    attrs = (("expr", exprs[root.outputs[0].id], E.Expr),
             ("members", names + ((tail.op.name,) if tail else ()), tuple))
    if tail is None:
        return ir.Node(ir.FUSED, inputs, attrs, list(root.outputs), root.loc)
    return ir.Node(ir.FUSED, inputs, attrs + (("reduce", _reduction(tail), ir.Reduction),),
                   list(tail.outputs), tail.loc)
