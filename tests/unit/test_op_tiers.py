"""The two op tiers: primitives (a kernel or lowering on every backend) and composites (written
with other ops, run as their parts). The counts are a watched number written in README.md, so
adding a primitive is a visible decision; a composite never reaches a backend or a graph's IR,
raises its own errors under its own name, and is differentiated by its declared bprop or else
through its parts."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import minispore as ms
from minispore import ops
from minispore.core.errors import DTypeError, ShapeError
from minispore.core.graph import compile as graph_compile
from minispore.core.pynative import EagerExecutor
from minispore.core.ops.rounding import truncate_div
from minispore.core.primitive import REGISTRY, OpDef, composites, primitives

from helpers import graph_runs, in_graph

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_primitive_and_composite_counts_match_the_readme():
    m = re.search(r"(\d+) primitives \(kernels on every backend\) and (\d+) composites",
                  README.read_text())
    assert m, "README.md's supported-ops part must say 'N primitives (kernels on every " \
              "backend) and M composites'"
    want = int(m.group(1)), int(m.group(2))
    got = len(primitives()), len(composites())
    assert got == want, (f"the registry holds {got[0]} primitives and {got[1]} composites; "
                         f"README.md says {want[0]} and {want[1]}: a new primitive needs a kernel "
                         f"on every backend, so update the README line when that is the intent")
    assert got[0] + got[1] == len(REGISTRY)


def _composite_calls(x):
    return ops.square(x) + ops.div(x, 0.75, rounding_mode="trunc")


def test_a_composite_reaches_no_backend(monkeypatch):
    """PyNative: the backend is asked for kernels of the parts only."""
    asked = []
    backend = EagerExecutor.backend()
    real = backend.kernel

    def spy(op, *rest):
        asked.append(op.name)
        return real(op, *rest)
    monkeypatch.setattr(backend, "kernel", spy)
    monkeypatch.setattr(backend, "plans", {})
    ms.set_context(mode=ms.PYNATIVE_MODE)
    x = ms.Tensor(np.array([1.5, -2.5, 4.0], np.float32))
    _composite_calls(x)
    names = {op.name for op in composites()}
    assert asked and not names & set(asked), asked
    assert {"mul", "div", "floor", "ceil", "where"} <= set(asked)


def test_a_graph_holds_the_parts_of_a_composite():
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O0")
    try:
        x = ms.Tensor(np.array([1.5, -2.5, 4.0], np.float32))
        got = in_graph(_composite_calls, x)
        graph = graph_compile.last_compiled().graph
        in_ir = {n.op.name for n in graph.all_nodes() if isinstance(n.op, OpDef)}
        assert not in_ir & {op.name for op in composites()}, in_ir
        assert {"mul", "div", "floor", "ceil", "where"} <= in_ir
        ms.set_context(mode=ms.PYNATIVE_MODE)
        np.testing.assert_array_equal(got.asnumpy(), _composite_calls(x).asnumpy())
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def _fusable_calls(x):
    return ops.square(x) * 2.0 + ops.reciprocal(x)


def test_the_parts_of_composites_fuse_with_their_neighbours():
    """At O1 square, reciprocal and the ops around them become one fused loop."""
    from minispore.core.graph import ir
    x = ms.Tensor(np.array([1.5, -2.5, 4.0], np.float32))
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O1")
    try:
        got = in_graph(_fusable_calls, x)
        kinds = [n.op if isinstance(n.op, str) else n.op.name
                 for n in graph_compile.last_compiled().graph.all_nodes()]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert [k for k in kinds if k != ir.CONST] == [ir.FUSED], kinds
    np.testing.assert_array_equal(got.asnumpy(), _fusable_calls(x).asnumpy())


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_a_composite_raises_its_own_errors(mode):
    ms.set_context(mode=mode, jit_level="O0")
    try:
        with pytest.raises(DTypeError, match=r"^square: dtype Bool"):
            _in_mode(ops.square, ms.Tensor(np.array([True, False])))
        with pytest.raises(ShapeError, match=r"^truncate_div: "):
            _in_mode(truncate_div, ms.Tensor(np.ones(3, np.float32)),
                     ms.Tensor(np.ones(4, np.float32)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def _in_mode(fn, *args):
    return in_graph(fn, *args) if ms.get_context("mode") == ms.GRAPH_MODE else fn(*args)


@pytest.fixture
def cube():
    """A composite declared only for these tests (and removed after them), with a bprop."""
    from minispore.core.ops.declare import composite_elementwise
    from minispore.core.ops.math import mul
    op = composite_elementwise("tier_test_cube", 1, lambda x: x * x * x, lambda x: x ** 3,
                               lambda i, o, g: (mul(g, mul(mul(i[0], i[0]), 3)),))
    try:
        yield op
    finally:
        del REGISTRY[op.name]


def test_the_tape_records_a_composite_with_a_bprop_and_the_parts_of_one_without():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    taped = {}

    def f(x):
        y = ops.square(x)
        z = truncate_div(x, 0.75)
        taped["square"] = y._node[0].op.name
        taped["truncate_div"] = z._node[0].op.name
        return (y + z).sum()
    x = ms.Tensor(np.array([1.5, -2.5, 4.0], np.float32))
    g = ms.grad(f)(x)
    assert taped == {"square": "square", "truncate_div": "where"}
    np.testing.assert_array_equal(g.asnumpy(), 2 * x.asnumpy())


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_a_declared_bprop_tapes_the_composite(cube, mode):
    """The parts run untaped and the composite's own bprop gives the gradient (3 x^2 g, not
    the parts' x*x*g + (x*g)*x + ...), in PyNative and while a graph is built."""
    from minispore.core.primitive import apply
    taped = []

    def f(x):
        y = apply(cube, x)
        if ms.get_context("mode") == ms.PYNATIVE_MODE:
            taped.append(y._node[0].op.name)
        return y.sum()
    x = ms.Tensor(np.array([1.5, -2.5, 4.0, 0.1], np.float32))
    ms.set_context(mode=mode, jit_level="O0")
    try:
        gs = [ms.grad(f)(x).asnumpy() for _ in range(3)]   # a repeated tape is compiled
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    xs = x.asnumpy()
    for g in gs:
        np.testing.assert_array_equal(g, (xs * xs) * np.float32(3))
    np.testing.assert_array_equal(apply(cube, x).asnumpy(), xs * xs * xs)
    assert taped == ([cube.name] * 3 if mode == ms.PYNATIVE_MODE else [])


def _branchy(x):
    if x.sum() > 0:
        y = ops.square(x) + truncate_div(x, 0.75) * x
    else:
        y = ops.reciprocal(x)
    return y.sum()


def _loopy(x):
    i = ops.zeros((), ms.int32)
    while i < 3:
        x = ops.reciprocal(x) + 1.0
        i = i + 1
    return x.sum()


@pytest.mark.parametrize("fn,sign", [(_branchy, 1.0), (_branchy, -1.0), (_loopy, 1.0)],
                         ids=["if-then", "if-else", "while"])
def test_composites_under_graph_control_flow(fn, sign):
    """The gradient of a tensor `if`/`while` in a compiled graph replays the branch: a composite
    without a bprop (truncate_div) through its parts, one with a bprop (square, reciprocal's
    -g*(o*o)) as itself: the numbers of PyNative's tape."""
    x = ms.Tensor(np.array([1.5, 2.5, 4.0], np.float32) * sign)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = ms.grad(fn)(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O0")
    try:
        with graph_runs("grad through control flow"):
            got = ms.grad(fn)(x).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(got, want)
    if fn is _branchy:
        xs = x.asnumpy()
        trunc = np.trunc(xs / np.float32(0.75))
        o = np.float32(1) / xs
        np.testing.assert_array_equal(want, 2 * xs + trunc if sign > 0 else -(o * o))


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_primitive_class_and_parameter_inputs_of_a_composite(mode):
    """ops.Square() (MindSpore's Primitive class) runs the composite, on a Parameter too."""
    p = ms.Parameter(ms.Tensor(np.array([1.5, -2.0], np.float32)), name="p")

    def f():
        return ops.Square()(p) + ops.square(p)
    ms.set_context(mode=mode, jit_level="O0")
    try:
        got = _in_mode(f).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(got, np.array([4.5, 8.0], np.float32))


def test_a_non_differentiable_composite_tapes_nothing():
    """Its outputs carry no gradient, whatever its parts would give (x * 3 here)."""
    from minispore.core.ops.declare import composite_elementwise
    from minispore.core.primitive import apply
    op = composite_elementwise("tier_test_triple_nodiff", 1, lambda x: x * 3, lambda x: x * 3,
                               differentiable=False)
    try:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        x = ms.Tensor(np.array([1.5, -2.5], np.float32))
        g = ms.grad(lambda t: (apply(op, t) + t).sum())(x)
        np.testing.assert_array_equal(g.asnumpy(), np.ones(2, np.float32))
    finally:
        del REGISTRY[op.name]


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_tensor_operators_hand_the_executor_primitives(mode):
    """Tensor's binary operators pass their op straight to the executor's binary/apply, which
    runs kernels: each of those ops must stay a primitive (a composite there would find none)."""
    ints = ms.Tensor(np.array([6, 3], np.int32)), ms.Tensor(np.array([2, 1], np.int32))
    floats = ms.Tensor(np.array([1.5, -2.0], np.float32)), ms.Tensor(np.array([0.5, 4.0],
                                                                              np.float32))
    bools = ms.Tensor(np.array([True, False])), ms.Tensor(np.array([True, True]))

    def f(i, j, x, y, p, q):
        return (i + j, i - j, i * j, x / y, i // j, i % j, x ** y, i & j, i | j, i ^ j, i << j,
                i >> j, p & q, p | q, p ^ q, x < y, x <= y, x > y, x >= y, x == y, x != y,
                1 - x, 2 / x)
    ms.set_context(mode=mode, jit_level="O0")
    try:
        outs = _in_mode(f, *ints, *floats, *bools)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert len(outs) == 23
