"""Shared by the graph-pass tests (test_passes*.py): the generic per-pass check (verify, bit-equal
interpretation, idempotence, input untouched), node counting and small graph builders."""
from __future__ import annotations

import numpy as np

import minispore as ms
from minispore.core.graph import ir
from minispore.core.graph.builder import GraphBuilder, sym
from minispore.core.graph.interpret import interpret
from minispore.core.graph.passes import cse, dce, fold, simplify

ops = ms.ops
f32, i32 = ms.float32, ms.int32
PASSES = [simplify, fold, cse, dce]
X3 = np.array([1.5, -0.0, np.inf], np.float32)


def snapshot(g: ir.Graph):
    """Everything a pass could mutate in place: object identities and list contents."""
    return (id(g), g.name, [id(v) for v in g.inputs], [(id(v), id(p)) for v, p in g.params],
            [id(v) for v in g.outputs],
            [(id(n), n.op, [id(v) for v in n.inputs], id(n.attrs), [id(v) for v in n.outputs],
              n.loc, [snapshot(s) for s in n.subgraphs]) for n in g.nodes])


def same_bits(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        for x, y in zip(a, b))


def check(p, g: ir.Graph, args: list) -> ir.Graph:
    """Run pass p on g with every generic check; return its result."""
    text, snap = g.text(), snapshot(g)
    before = interpret(g, args)
    out = p(g)
    assert out is not g
    ir.verify(out)
    assert g.text() == text and snapshot(g) == snap, f"{p.__name__} changed its input"
    ir.verify(g)
    after = interpret(out, args)
    assert same_bits(before, after), f"{p.__name__}: {before} != {after}\n{out.text()}"
    assert p(out).text() == out.text(), f"{p.__name__} is not idempotent"
    scramble(p(g))
    assert g.text() == text and snapshot(g) == snap, f"{p.__name__}'s output aliases its input"
    return out


def scramble(g: ir.Graph) -> None:
    """Mutate every list of g in place (as a later in-place pass might)."""
    for n in list(g.all_nodes()):
        n.inputs.clear()
        n.outputs.clear()
        for sg in n.subgraphs:
            sg.inputs.clear()
            sg.outputs.clear()
    for lst in (g.inputs, g.params, g.nodes, g.outputs):
        lst.clear()


def count(g: ir.Graph, name: str | None = None) -> int:
    return sum(1 for n in g.all_nodes() if name is None or n.name == name)


def build(fn, *in_types):
    """A graph whose inputs have in_types and whose outputs are fn(*inputs) (a tensor or tuple)."""
    with GraphBuilder("f") as b:
        xs = [b.input(s, d) for s, d in in_types]
        r = fn(b, *xs)
        b.root.outputs = [t._buf for t in (r if isinstance(r, (tuple, list)) else (r,))]
    ir.verify(b.root)
    return b.root


def const(b, value, dtype=f32):
    return sym(b.const(np.asarray(value, dtype.np), dtype))
