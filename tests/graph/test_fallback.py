"""JIT Fallback at run time (jit_syntax_level LAX, the default): Python code on a graph
tensor's value runs when the graph runs, on every backend and jit level. Expected values were
printed by MindSpore 2.10 (CPU, GRAPH_MODE) running the same functions."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, Tensor, nn, ops
from minispore.core.errors import GraphSyntaxError
from minispore.core.graph import compile as graph_compile

pytestmark = pytest.mark.filterwarnings("ignore:graph mode \\(jit_syntax_level LAX\\)")


def _add_one(x):
    y = x.asnumpy()
    y = np.add(y, 1)
    return ms.Tensor(y)


def _sum_then_add(x):
    z = x * 2
    s = np.sum(z.asnumpy()) + 1.0
    return z + ms.Tensor(s, ms.float32)


def _numpy_of_a_tensor(x):
    return Tensor(np.sqrt(x)) * 2


def _branch_on_a_value(x):
    if x.asnumpy().sum() > 1:
        return x
    return x * 2


def _loop_on_a_value(x):
    while x.asnumpy().sum() < 10:
        x = x * 2
    return x


def _conditional_expression(x):
    return x if x.asnumpy().max() > 2 else -x


def _centre(x):
    m = x.asnumpy().mean(axis=0)
    return x - Tensor(m)


def _returned(x):
    return x.asnumpy() * 2


def _float_of_a_value(x):
    return x * float(x.asnumpy().max())


CASES = [
    (_add_one, [0.0, 1.0, 2.0], [1.0, 2.0, 3.0]),
    (_sum_then_add, [0.0, 1.0, 2.0], [7.0, 9.0, 11.0]),
    (_numpy_of_a_tensor, [0.0, 1.0, 2.0], [0.0, 2.0, 2.828427]),
    (_branch_on_a_value, [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]),
    (_branch_on_a_value, [0.0, 0.5, 0.0], [0.0, 1.0, 0.0]),
    (_loop_on_a_value, [1.0, 1.0], [8.0, 8.0]),
    (_loop_on_a_value, [3.0, 3.0], [6.0, 6.0]),
    (_conditional_expression, [1.0, 1.0], [-1.0, -1.0]),
    (_conditional_expression, [3.0, 3.0], [3.0, 3.0]),
    (_returned, [1.0, 1.0], [2.0, 2.0]),
    (_float_of_a_value, [1.0, 3.0], [3.0, 9.0]),
]


@pytest.mark.parametrize("backend", ["CPU", "Ascend"])
@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("fn,x,expected", CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_python_on_a_tensor_value_runs_at_run_time(fn, x, expected, backend, level):
    ms.set_context(mode=ms.GRAPH_MODE, device_target=backend, jit_level=level)
    out = ms.jit(fn)(Tensor(np.array(x, np.float32)))
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(ms.Tensor(fn(Tensor(np.array(x, np.float32)))).asnumpy(),
                               expected, rtol=1e-6)


def _sum_then_add_once(x):
    z = x * 2
    s = np.sum(z.asnumpy()) + 1.0
    return z + ms.Tensor(s, ms.float32)


def test_one_compile_serves_every_value_and_each_call_runs_the_python_again():
    ms.set_context(mode=ms.GRAPH_MODE)
    f = ms.jit(_sum_then_add_once)
    before = graph_compile.stats["compiles"]
    with pytest.warns(UserWarning, match=r"test_fallback.py:\d+: `np.sum\(z.asnumpy\(\)\) \+ "):
        a = f(Tensor(np.zeros(3, np.float32)))
    b = f(Tensor(np.ones(3, np.float32)))
    assert graph_compile.stats["compiles"] == before + 1
    assert a.asnumpy().tolist() == [1.0, 1.0, 1.0] and b.asnumpy().tolist() == [9.0, 9.0, 9.0]


def _detaches(x):
    return (Tensor(x.asnumpy() * 2) * x).sum()


def test_no_gradient_flows_through_the_fallback_in_either_mode():
    # PyNative: asnumpy() leaves the tape, so d/dx (c * x).sum() = c = 2x. (MindSpore 2.10's
    # GRAPH_MODE cuts the whole expression and gives [0, 0]; minispore follows PyNative.)
    x = Tensor(np.array([1.0, 3.0], np.float32))
    eager = ms.grad(_detaches)(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = ms.grad(_detaches)(x).asnumpy()
    assert eager.tolist() == graph.tolist() == [2.0, 6.0]


def _data_dependent(x):
    return Tensor(np.unique(x.asnumpy()))


def test_a_data_dependent_shape_is_an_error_naming_the_line():
    # MindSpore 2.10 runs it with a dynamic shape ([1. 2.]); minispore's graphs have fixed
    # shapes, so it refuses, never reshaping silently
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError, match=r"test_fallback.py:\d+: `np.unique\(x.asnumpy"
                                               r"\(\)\)` gave shape \(2,\).*data-dependent"):
        ms.jit(_data_dependent)(Tensor(np.array([1.0, 1.0, 2.0], np.float32)))


class _ReadsParameter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.ones(3, np.float32)), name="w")

    def construct(self, x):
        return x * float(np.max(self.w.asnumpy()))


def test_a_parameter_value_read_in_a_graph_is_refused_as_in_mindspore():
    # MindSpore 2.10: RuntimeError "the 'Parameter' object's method 'asnumpy' is not supported
    # in 'construct'"; reading it while compiling would bake in today's value
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError, match="Parameter 'w''s method 'asnumpy' is not "
                                               "supported in construct"):
        _ReadsParameter()(Tensor(np.ones(3, np.float32)))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert _ReadsParameter()(Tensor(np.ones(3, np.float32))).asnumpy().tolist() == [1.0] * 3


def _length(x):
    return x * len(x.asnumpy())


def test_a_run_time_value_cannot_steer_compile_time_python():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(GraphSyntaxError, match=r"known only at run time \(JIT Fallback\), so "
                                               r"it cannot be used in len\(\)"):
        ms.jit(_length)(Tensor(np.ones(3, np.float32)))


def test_strict_refuses_reading_a_value():
    ms.set_context(mode=ms.GRAPH_MODE, jit_syntax_level=ms.STRICT)
    with pytest.raises(GraphSyntaxError, match="not known while the graph is compiled"):
        ms.jit(_add_one)(Tensor(np.ones(3, np.float32)))


def test_check_modes_agrees_on_a_fallback_function():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = ms.check_modes(_centre, Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
    assert report.ok, str(report)
