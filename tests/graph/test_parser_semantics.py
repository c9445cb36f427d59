"""Python semantics the graph parser keeps: functools.wraps decorators run their wrapper, builtin
iterators leave a graph as MindSpore's tuples/lists, a multi-element tensor has no truth value in
either mode, a variable bound on one path of a tensor `if` (or only in a tensor `while` body) is
reported by name, and recursion that cannot end at compile time is a GraphSyntaxError."""
from __future__ import annotations

import collections
import functools

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops
from minispore.core.errors import GraphSyntaxError
from frontend_helpers import (F32, assert_same, fresh_cache,  # noqa: F401 (autouse fixture)
                              graph_vs_pynative, line_of, t)


# ---------------------------------------------------------------- functools.wraps ----------------
def doubled(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs) * 2
    return wrapper


def plus_ten(f):
    @functools.wraps(f)
    def wrapper(x):
        return f(x) + 10
    return wrapper


@doubled
def _helper_doubled(x):
    return x + 1


@plus_ten
def _helper_plus_ten(x):
    return x + 1


class _DoubledConstruct(nn.Cell):
    @doubled
    def construct(self, x):
        return x + 1


class _CallsDoubledHelper(nn.Cell):
    def construct(self, x):
        return _helper_doubled(x) + _helper_plus_ten(x)


def test_wraps_decorator_on_construct_runs_the_wrapper():
    out = graph_vs_pynative(_DoubledConstruct(), t([1.0, 2.0]))
    np.testing.assert_array_equal(out.asnumpy(), np.array([4.0, 6.0], F32))


def test_wraps_decorator_on_a_helper_runs_the_wrapper():
    # two functions share the decorator's wrapper code: each keeps its own inner function
    out = graph_vs_pynative(_CallsDoubledHelper(), t([1.0, 2.0]))
    np.testing.assert_array_equal(out.asnumpy(), np.array([16.0, 19.0], F32))


def test_wraps_decorator_under_jit_runs_the_wrapper():
    @ms.jit
    @doubled
    def f(x):
        return x + 1
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(f(t([1.0, 2.0])).asnumpy(), np.array([4.0, 6.0], F32))
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_array_equal(f(t([1.0, 2.0])).asnumpy(), np.array([4.0, 6.0], F32))


def test_jit_function_called_inside_a_graph_is_inlined():
    @ms.jit
    def inner(x):
        return x * 3

    class Net(nn.Cell):
        def construct(self, x):
            return inner(x) + 1
    out = graph_vs_pynative(Net(), t([1.0, 2.0]))
    np.testing.assert_array_equal(out.asnumpy(), np.array([4.0, 7.0], F32))


class _JitConstruct(nn.Cell):
    @ms.jit
    def construct(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def test_jit_decorated_construct_compiles_in_both_modes():
    # ms.jit's own wrapper runs as it is (it compiles, or inlines, the construct it wraps)
    out = graph_vs_pynative(_JitConstruct(), t([1.0, 2.0]))
    np.testing.assert_array_equal(out.asnumpy(), np.array([2.0, 4.0], F32))


def test_wraps_decorator_without_source_names_the_decorator():
    namespace: dict = {}
    exec("import functools\n"
         "def traced(f):\n"
         "    @functools.wraps(f)\n"
         "    def tracer(x):\n"
         "        return f(x)\n"
         "    return tracer\n", namespace)

    @namespace["traced"]
    def g(x):
        return x + 1
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError) as info:
        ms.jit(g)(t([1.0]))
    msg = str(info.value)
    assert "tracer" in msg and "g" in msg and "decorator" in msg, msg


def guarded(f):
    @functools.wraps(f)
    def guard(*args):
        try:
            return f(*args)
        finally:
            pass
    return guard


class _GuardedConstruct(nn.Cell):
    @guarded
    def construct(self, x):
        return x + 1


def test_wraps_decorator_the_graph_cannot_run_is_rejected_naming_it():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError) as info:
        _GuardedConstruct()(t([1.0]))
    msg = str(info.value)
    assert "try" in msg and "guarded.<locals>.guard" in msg and "_GuardedConstruct.construct" \
        in msg and "decorator" in msg, msg
    assert f"line {line_of(guarded, 'try:')}" in msg, msg


# ---------------------------------------------------------------- iterators at the output --------
class _Returns(nn.Cell):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def construct(self, x):
        k = self.kind
        if k == "map":
            return map(lambda a: a + 1, (1, 2, 3))
        if k == "zip":
            return zip((1, 2), (3, 4))
        if k == "filter":
            return filter(lambda a: a > 1, (1, 2, 3))
        if k == "enumerate":
            return enumerate((5, 6))
        if k == "range":
            return range(3)
        if k == "listcomp":
            return [a for a in range(3)]
        if k == "np_tuple":
            return tuple(np.array([1, 2]))
        if k == "map_twice":
            m = map(lambda a: a + 1, (1, 2, 3))
            return sum(m), sum(m)
        if k == "nested":
            return x, zip((1, 2), (3, 4))
        if k == "items":
            return {"a": 1}.items()
        return None


@pytest.mark.parametrize("kind, want", [
    ("map", (2, 3, 4)), ("zip", ((1, 3), (2, 4))), ("filter", [2, 3]),
    ("enumerate", ((0, 5), (1, 6))), ("range", (0, 1, 2)), ("listcomp", [0, 1, 2]),
    ("np_tuple", (1, 2)), ("map_twice", (9, 9)), ("items", [("a", 1)])])
def test_builtin_iterators_leave_a_graph_as_mindspore_containers(kind, want):
    ms.set_context(mode=ms.GRAPH_MODE)
    out = _Returns(kind)(t([1.0]))
    assert out == want and type(out) is type(want), out
    for leaf in out:
        for v in (leaf if isinstance(leaf, tuple) else (leaf,)):
            assert type(v) in (int, str), (kind, type(v))


def test_iterator_nested_in_the_output_is_materialised():
    ms.set_context(mode=ms.GRAPH_MODE)
    x, z = _Returns("nested")(t([1.0]))
    assert z == ((1, 3), (2, 4))
    np.testing.assert_array_equal(x.asnumpy(), np.array([1.0], F32))


_Pair = collections.namedtuple("_Pair", "tensor number")


def test_namedtuple_output_keeps_its_type():
    def f(x):
        return _Pair(x + 1, 2)
    out = graph_vs_pynative(f, t([1.0]))
    assert type(out) is _Pair and out.number == 2


def test_zip_over_tensors_in_a_graph_is_reiterable():
    def f(x, y):
        pairs = zip((x, y), (y, x))
        first = [a + b for a, b in pairs]
        second = [a - b for a, b in pairs]
        return len(first), len(second)
    ms.set_context(mode=ms.GRAPH_MODE)
    assert ms.jit(f)(t([1.0]), t([2.0])) == (2, 2)


# ---------------------------------------------------------------- truth of a tensor --------------
def _not(x):
    return not x


def _if(x):
    if x:
        return x + 1
    return x


def _and(x):
    return x and x + 1


def _or(x):
    return x or x + 1


def _ifexp(x):
    return x + 1 if x else x


def _while(x):
    while x:
        x = x - 1
    return x


@pytest.mark.parametrize("fn", [_not, _if, _and, _or, _ifexp, _while])
def test_truth_of_a_multi_element_tensor_raises_the_pynative_error_in_graph_mode(fn):
    x = t([1.0, 0.0])
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(ValueError) as eager:
        fn(x)
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(ValueError) as graph:
        ms.jit(fn)(x)
    first = str(eager.value).splitlines()[0]
    assert str(graph.value).splitlines()[0] == first, (str(graph.value), first)
    assert "shape (2,)" in first


class _IfConstantTensor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mask = t([1.0, 0.0])               # a constant (not a Parameter): known now

    def construct(self, x):
        if self.mask:
            return x + 1
        return x


def test_truth_of_a_multi_element_constant_tensor_shows_the_line():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(ValueError) as info:
        _IfConstantTensor()(t([1.0]))
    msg = str(info.value)
    assert "shape (2,)" in msg and "ambiguous" in msg, msg
    assert f"line {line_of(_IfConstantTensor, 'if self.mask:')}" in msg, msg


def test_not_of_a_one_element_tensor_is_a_bool_tensor_in_graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    out = ms.jit(_not)(t([1.0]))
    assert out.dtype == ms.bool_ and out.asnumpy().tolist() == [False]


# ---------------------------------------------------------------- one-path variables -------------
def _then_only(x):
    if x.sum() > 0:
        y = x + 1
    else:
        z = x - 1
    return y + z


def _unused_then_only(x):
    if x.sum() > 0:
        y = x + 1
    return x


_y = 100.0        # a global of the same name must not stand in for the unbound local


def _then_only_shadows_global(x):
    if x.sum() > 0:
        _y = x + 1
    return _y


def _then_returns(x):
    if x.sum() > 0:
        y = x + 1
        if y.sum() > 100:
            return y
    return y


def _while_only(x):
    i = ops.zeros((), ms.int32)
    while i < 3:
        w = x * 2
        i = i + 1
    return w


def test_variable_set_in_one_branch_of_a_tensor_if_names_it():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError) as info:
        ms.jit(_then_only)(t([1.0]))
    msg = str(info.value)
    assert "'y'" in msg and "then-branch" in msg, msg
    assert f"line {line_of(_then_only, 'y = x + 1')}" in msg, msg
    assert f"line {line_of(_then_only, 'return y + z')}" in msg, msg
    assert "before the `if`" in msg, msg


def test_variable_set_in_one_branch_and_unused_compiles():
    ms.set_context(mode=ms.GRAPH_MODE)
    assert_same(ms.jit(_unused_then_only)(t([1.0])), t([1.0]))


def test_variable_set_in_one_branch_does_not_fall_back_to_a_global():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError, match="'_y'"):
        ms.jit(_then_only_shadows_global)(t([1.0]))


def test_variable_set_on_one_path_of_a_returning_tensor_if_names_it():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError) as info:
        ms.jit(_then_returns)(t([1.0]))
    msg = str(info.value)
    assert "'y'" in msg and "then-branch" in msg and "before the `if`" in msg, msg


def test_variable_set_only_in_a_tensor_while_body_names_it():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError) as info:
        ms.jit(_while_only)(t([1.0]))
    msg = str(info.value)
    assert "'w'" in msg and "while" in msg and "before the loop" in msg, msg


# ---------------------------------------------------------------- recursion ----------------------
def _rec_tensor(x):
    if x.sum() > 100:
        return x
    return _rec_tensor(x * 2)


def _rec_python(x, n):
    if n == 0:
        return x
    return _rec_python(x + 1, n - 1)


def test_recursion_on_a_tensor_condition_is_a_graph_syntax_error():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError) as info:
        ms.jit(_rec_tensor)(t([1.0]))
    msg = str(info.value)
    assert "_rec_tensor" in msg and "recursion" in msg and "tensor condition" in msg, msg
    assert f"line {line_of(_rec_tensor, 'return _rec_tensor(x * 2)')}" in msg, msg


def test_recursion_ending_on_a_python_condition_compiles():
    ms.set_context(mode=ms.GRAPH_MODE)
    out = ms.jit(_rec_python)(t([1.0]), 50)
    np.testing.assert_array_equal(out.asnumpy(), np.array([51.0], F32))
