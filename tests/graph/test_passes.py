"""Graph passes (minispore/core/graph/passes), one by one: each keeps `verify`, keeps the
interpreted result bit for bit, is idempotent, leaves its input graph untouched
(passes_helpers.check) and does its job (node counts). Control flow and effects:
test_passes_control.py; random programs: test_passes_random.py (notes/testing.md 6.4-6.5)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore.core.graph import ir
from minispore.core.graph.builder import GraphBuilder
from minispore.core.graph.interpret import interpret
from minispore.core.graph.passes import cse, dce, fold, simplify
from minispore.core.primitive import REGISTRY, Meta, OpDef

from passes_helpers import X3, build, check, const, count, f32, i32, ops


# ---------------------------------------------------------------- dce ----------------------------
def test_dce_removes_dead_chains():
    def f(b, x):
        ops.tanh(ops.exp(x) * 3.0)          # dead, transitively
        return ops.neg(x)
    g = build(f, ((3,), f32))
    out = check(dce, g, [X3])
    assert [n.name for n in out.nodes] == ["neg"]


# ---------------------------------------------------------------- cse ----------------------------
def test_cse_merges_duplicates_and_substitutes_outputs():
    def f(b, x):
        a, c = ops.exp(x) * 2.0, ops.exp(x) * 2.0
        return a + c, c, ops.reshape(x, (1, 3)), ops.reshape(x, (3, 1))
    g = build(f, ((3,), f32))
    out = check(cse, g, [X3])
    assert count(g, "exp") == 2 and count(out, "exp") == 1 and count(out, "mul") == 1
    assert count(out, "reshape") == 2                       # different attrs stay apart
    add = next(n for n in out.nodes if n.name == "add")
    assert add.inputs[0] is add.inputs[1] is out.outputs[1]


def test_cse_constants_compare_by_dtype_and_bytes():
    with GraphBuilder("f") as b:
        x = b.input((3,), f32)
        outs = [x + const(b, 0.0), x + const(b, -0.0), x + const(b, 0.0, ms.float64),
                x + const(b, [0.0, 0.0, 0.0])]
        # a second +0.0 constant, which the builder's memo would have shared
        z = ir.Value((), f32)
        b.root.nodes.insert(0, ir.Node(ir.CONST, [], (("value", np.zeros((), np.float32)),), [z]))
        w = ir.Value((3,), f32)
        b.root.nodes.append(ir.Node(REGISTRY["add"], [x._buf, z], (), [w]))
        b.root.outputs = [t._buf for t in outs] + [w]
    g = b.root
    ir.verify(g)
    out = check(cse, g, [X3])
    assert count(g, "const") == 5 and count(out, "const") == 4
    assert count(out, "add") == 4 and out.outputs[4] is out.outputs[0]


def test_cse_typed_attrs():
    g = build(lambda b, x: (ops.sum(x, 0), ops.sum(x, 0), ops.sum(x, 1), ops.sum(x, 0, True)),
              ((2, 3), f32))
    out = check(cse, g, [np.ones((2, 3), np.float32)])
    assert count(out, "sum") == 3


def test_cse_signed_zero_and_typed_attrs_stay_apart():
    fill = REGISTRY["fill"]
    with GraphBuilder("f") as b:
        outs = []
        for value in (0.0, -0.0, 0.0, 0, False):
            v = ir.Value((2,), f32)
            # by hand, not normalize_attrs: its memo hands back a cached 0.0 for -0.0
            attrs = (("shape", (2,), tuple), ("value", value, type(value)),
                     ("dtype", f32, type(f32)))
            b.root.nodes.append(ir.Node(fill, [], attrs, [v]))
            outs.append(v)
        b.root.outputs = outs
    out = check(cse, b.root, [])
    assert count(out, "fill") == 4 and out.outputs[2] is out.outputs[0]


# ---------------------------------------------------------------- fold ---------------------------
def test_fold_cascades_and_keeps_values_and_loc():
    def f(b, x):
        k = ops.exp(const(b, [0.0, 1.0, 2.0])) * 2.0 + const(b, 1.0)
        return x * ops.reshape(ops.tanh(k), (3,))
    g = build(f, ((3,), f32))
    loc = ir.Loc("net.py", 7)
    g.nodes = [ir.Node(n.op, n.inputs, n.attrs, n.outputs, loc, n.subgraphs) for n in g.nodes]
    out = check(fold, g, [X3])
    assert [n.name for n in out.nodes if n.name != "const"] == ["mul"]
    folded = {v.id: n for n in out.nodes if n.op == ir.CONST for v in n.outputs}
    for n in g.nodes:
        if n.name == "tanh":
            assert n.outputs[0].id in folded and folded[n.outputs[0].id].loc == loc
    out = dce(out)
    assert count(out) == 2


def test_fold_limits_and_failures():
    with GraphBuilder("f") as b:
        big = ops.exp(const(b, np.zeros(2 ** 16 + 1, np.float32)))
        small = ops.exp(const(b, np.zeros(2 ** 16, np.float32)))
        bad = ops.gather(const(b, [1.0, 2.0]), const(b, [5], i32))   # ref raises: run time's
        b.root.outputs = [ops.sum(big)._buf, ops.sum(small)._buf, bad._buf]
    g = b.root
    out = fold(g)
    ir.verify(out)
    assert [n.name for n in out.nodes if n.name != "const"] == ["exp", "gather", "sum"]
    with pytest.raises(IndexError):
        interpret(g, [])


def test_fold_creation_ops_and_multi_output():
    def f(b, x):
        a, c = ops.split(ops.arange(0, 6, 1, dtype=f32), (2, 4))
        return x + ops.sum(c), a
    g = build(f, ((3,), f32))
    out = check(fold, g, [X3])
    assert count(out, "split") == 0 and count(dce(out)) == 3


def test_fold_checks_ref_results_against_recorded_types():
    """A ref that returns float64 for a float32 output is cast; one that gets the shape wrong (a
    bug elsewhere) is not folded, so the wrong constant never enters the graph."""
    wide = OpDef("wide", infer=lambda x: Meta(x.shape, x.dtype),
                 ref=lambda x: x.astype(np.float64) / 3, arity=1, differentiable=False)
    flat = OpDef("flat", infer=lambda x: Meta(x.shape, x.dtype),
                 ref=lambda x: x.reshape(-1), arity=1, differentiable=False)
    with GraphBuilder("f") as b:
        c = const(b, [[1.0, 2.0]])
        b.root.outputs = [ms.core.primitive.apply(op, c)._buf for op in (wide, flat)]
    out = fold(b.root)
    ir.verify(out)
    folded = [n for n in out.nodes if n.op == ir.CONST and n.outputs[0] is out.outputs[0]]
    assert folded[0].attr("value").dtype == np.float32
    np.testing.assert_array_equal(folded[0].attr("value"), np.float32([[1 / 3, 2 / 3]]))
    assert out.nodes[-1].op is flat


# ---------------------------------------------------------------- simplify -----------------------
SIMPLE = [  # (name, fn, simplified away?)
    ("x*1", lambda b, x: x * const(b, 1.0), True),
    ("1*x", lambda b, x: const(b, [1.0, 1.0, 1.0]) * x, True),
    ("x*1 int const", lambda b, x: x * const(b, 1, i32), True),
    ("x/1", lambda b, x: x / const(b, 1.0), True),
    ("1/x", lambda b, x: const(b, 1.0) / x, False),
    ("x+(-0)", lambda b, x: x + const(b, -0.0), True),
    ("(-0)+x", lambda b, x: const(b, -0.0) + x, True),
    ("x+0 (not exact for -0.0)", lambda b, x: x + const(b, 0.0), False),
    ("x-0", lambda b, x: x - const(b, 0.0), True),
    ("x-(-0)", lambda b, x: x - const(b, -0.0), False),
    ("0-x", lambda b, x: const(b, 0.0) - x, False),
    ("x*0", lambda b, x: x * const(b, 0.0), False),
    ("x*[1,2,1]", lambda b, x: x * const(b, [1.0, 2.0, 1.0]), False),
    ("broadcast x*ones(2,3)", lambda b, x: x * const(b, np.ones((2, 3))), False),
    ("dtype x*1 (f64)", lambda b, x: x * const(b, 1.0, ms.float64), False),
    ("neg neg", lambda b, x: ops.neg(ops.neg(x)), True),
    ("neg neg neg", lambda b, x: ops.neg(ops.neg(ops.neg(x))), None),
    ("reshape same", lambda b, x: ops.reshape(x, (3,)), True),
    ("reshape chain", lambda b, x: ops.reshape(ops.reshape(ops.reshape(x, (1, 3)), (3, 1)),
                                                (3,)), True),
    ("cast same", lambda b, x: ops.cast(x, f32), True),
    ("cast other", lambda b, x: ops.cast(x, ms.float64), False),
    ("stop_gradient kept", lambda b, x: ops.stop_gradient(x), False),
]


@pytest.mark.parametrize("name,fn,gone", SIMPLE, ids=[s[0] for s in SIMPLE])
def test_simplify_rules(name, fn, gone):
    g = build(fn, ((3,), f32))
    out = check(simplify, g, [X3])
    if gone is True:
        assert out.outputs[0] is g.inputs[0]
    elif gone is False:
        assert out.outputs[0] is g.outputs[0]
    else:
        assert count(dce(out)) == 1


def test_simplify_int_zero_and_chains():
    g = build(lambda b, x: (x + const(b, 0, i32)) * const(b, 1, i32) - const(b, 0, i32),
              ((4,), i32))
    out = check(simplify, g, [np.array([1, -2, 3, 2 ** 31 - 1], np.int32)])
    assert out.outputs[0] is g.inputs[0]
    g = build(lambda b, x: x * const(b, 1.0), ((4,), i32))    # int * float: promotes to f32
    assert check(simplify, g, [np.arange(4, dtype=np.int32)]).outputs[0] is g.outputs[0]


def test_simplify_reshape_and_transpose_compose():
    def f(b, x):
        r = ops.reshape(ops.reshape(x, (6, 4)), (4, 6))
        t = ops.transpose(ops.transpose(x, (1, 2, 0)), (2, 0, 1))     # identity
        u = ops.transpose(ops.transpose(x, (1, 0, 2)), (0, 2, 1))
        return r, t, u
    g = build(f, ((2, 3, 4), f32))
    out = check(simplify, g, [np.arange(24, dtype=np.float32).reshape(2, 3, 4)])
    assert out.outputs[1] is g.inputs[0]
    out = dce(out)
    assert [n.name for n in out.nodes] == ["reshape", "transpose"]
    assert out.nodes[0].inputs[0] is g.inputs[0] and out.nodes[1].attr("perm") == (1, 2, 0)
