"""Graph passes on hand-made control flow and effects (If with Print, While with loop-invariant
constants, Assign), run_pipeline (dump, verify) and the reference interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore.core.graph import ir
from minispore.core.graph.builder import GraphBuilder, sym
from minispore.core.graph.interpret import InterpretError, interpret
from minispore.core.graph.passes import cse, dce, fold, run_pipeline, simplify
from minispore.core.primitive import Meta

from passes_helpers import PASSES, X3, build, check, const, count, f32, i32, ops, same_bits


# ---------------------------------------------------------------- control flow and effects -------
def if_graph(print_in_else: bool = True, use_result: bool = True):
    """e = exp(x); if sum(x) < 0: then (exp(x)*1 + tanh(x), dead sin(x)) else (tanh(x) - 0.0,
    maybe print x); after it: tanh(x) again."""
    with GraphBuilder("f") as b:
        x = b.input((3,), f32)
        e = ops.exp(x)
        c = ops.less(ops.sum(x), 0.0)
        with b.region("then") as tg:
            ops.sin(x)                                           # dead
            tg.outputs = [(ops.exp(x) * 1.0 + ops.tanh(x))._buf]  # exp merges with e
        with b.region("else") as eg:
            if print_in_else:
                b.emit(ir.PRINT, [x._buf], (("parts", (("s", "x ="), ("t", 0)), tuple),
                                            ("sep", " ", str)), [])
            eg.outputs = [(ops.tanh(x) - 0.0)._buf]
        (r,) = b.emit(ir.IF, [c._buf], (), [Meta((3,), f32)], [tg, eg])
        t = ops.tanh(x)                                          # not merged into a branch's
        b.root.outputs = [(sym(r) + e + t)._buf] if use_result else [(e + t)._buf]
    ir.verify(b.root)
    return b.root


@pytest.mark.parametrize("p", PASSES, ids=lambda p: p.__name__)
@pytest.mark.parametrize("x", [X3, -X3], ids=["else", "then"])
def test_if_graph_each_pass(p, x):
    check(p, if_graph(), [x])


def test_if_graph_scoping_and_effects(capsys):
    g = if_graph()
    out = cse(g)
    assert count(g, "exp") == 2 and count(out, "exp") == 1     # the branch's exp is the outer one
    assert count(out, "tanh") == 3                              # nothing crosses scopes outward
    out = dce(g)
    assert count(out, "sin") == 0 and count(out, "Print") == 1
    interpret(g, [X3])
    assert capsys.readouterr().out.startswith("x = Tensor(shape=[3], dtype=Float32, value=")
    # an If whose result is unused goes if it prints nothing, stays if it prints
    assert count(dce(if_graph(False, use_result=False)), "If") == 0
    kept = dce(if_graph(True, use_result=False))
    assert count(kept, "If") == 1 and count(kept, "tanh") == 3    # both branches are kept whole
    assert count(kept, "less") == 1 and count(kept, "sum") == 1


def while_graph():
    """i, acc = 0, x; while i < 5: i, acc = i + 1, (acc*1) * 2 + tanh(neg(neg(y)))   (dead: sin)."""
    with GraphBuilder("w") as b:
        x = b.input((3,), f32)
        y = ops.exp(const(b, [0.0, 1.0, -1.0]))                 # a foldable loop invariant
        i0 = const(b, 0, i32)
        cv, bv = [ir.Value((), i32), ir.Value((3,), f32)], [ir.Value((), i32), ir.Value((3,), f32)]
        with b.region("cond") as cg:
            cg.inputs = cv
            cg.outputs = [ops.less(sym(cv[0]), const(b, 5, i32))._buf]
        with b.region("body") as bg:
            bg.inputs = bv
            ops.sin(sym(bv[1]))
            nxt = (sym(bv[1]) * 1.0) * 2.0 + ops.tanh(ops.neg(ops.neg(y)))
            bg.outputs = [(sym(bv[0]) + const(b, 1, i32))._buf, nxt._buf]
        i, acc = b.emit(ir.WHILE, [i0._buf, x._buf], (), [Meta((), i32), Meta((3,), f32)],
                        [cg, bg])
        b.root.outputs = [acc, i]
    ir.verify(b.root)
    return b.root


@pytest.mark.parametrize("p", PASSES, ids=lambda p: p.__name__)
def test_while_graph_each_pass(p):
    out = check(p, while_graph(), [X3])
    if p is simplify:
        assert count(out, "neg") == 1 and count(dce(out), "neg") == 0
    if p is fold:
        assert count(out, "tanh") == 0 and count(out, "exp") == 0
    if p is dce:
        assert count(out, "sin") == 0 and count(out, "While") == 1


def test_while_interpret():
    i_out = interpret(while_graph(), [X3])
    assert i_out[1] == 5
    y = np.tanh(np.exp(np.array([0.0, 1.0, -1.0], np.float32)))
    acc = X3
    for _ in range(5):
        acc = acc * np.float32(2) + y
    assert same_bits([i_out[0]], [acc])


def test_assign_kept_and_params():
    w = ms.Parameter(ms.Tensor(np.array([1.0, 2.0, 3.0], np.float32)), name="w")
    with GraphBuilder("step") as b:
        x = b.input((3,), f32)
        new = w - x * 0.5
        ops.exp(new)                                             # dead
        b.assign(w, new)
        b.root.outputs = [(x * 1.0)._buf]
    g = b.root
    ir.verify(g)
    assert "param='w'" in g.text()
    for p in PASSES:
        check(p, g, [X3])
    out = run_pipeline(g, verify_each=True)
    assert [n.name for n in out.nodes if n.name != "const"] == ["mul", "sub", "Assign"]
    assert out.outputs[0] is g.inputs[0]
    zero = np.zeros(3, np.float32)
    assert same_bits(interpret(build(lambda b, x: x + w, ((3,), f32)), [zero], {"w": zero}), [zero])
    np.testing.assert_array_equal(w.asnumpy(), [1, 2, 3])        # the interpreter assigns nothing


# ---------------------------------------------------------------- pipeline and interpreter ------
def test_run_pipeline_dump_and_verify(monkeypatch):
    g = if_graph()
    seen = []
    out = run_pipeline(g, verify_each=True, dump=lambda name, gr: seen.append((name, gr)))
    assert [s[0] for s in seen] == ["simplify", "fold", "cse", "dce", "schedule"] and seen[-1][1] is out
    assert same_bits(interpret(g, [X3]), interpret(out, [X3]))
    bad = ir.Graph("bad", outputs=[ir.Value((), f32)])
    monkeypatch.setenv("MINISPORE_VERIFY", "1")
    with pytest.raises(ir.VerifyError, match="after pass simplify"):
        run_pipeline(bad)


def test_interpret_checks_types():
    g = build(lambda b, x: ops.exp(x), ((3,), f32))
    with pytest.raises(InterpretError, match="takes 1 inputs"):
        interpret(g, [])
    with pytest.raises(InterpretError, match="f32"):
        interpret(g, [np.zeros(3, np.float64)])
