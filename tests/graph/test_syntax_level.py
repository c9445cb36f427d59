"""set_context(jit_syntax_level=...): MindSpore's STRICT / COMPATIBLE / LAX levels (core/context.py).
Expected behaviour was observed running MindSpore 2.10: the default is LAX (2); syntax the
graph compiler does not support (try/except, import, a set literal...) is rejected at every
level; code over Python values runs at compile time at every level."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn
from minispore.core.errors import GraphSyntaxError
from minispore.core.graph import compile as graph_compile

X = Tensor(np.array([1.0, -2.0, 3.0], np.float32))


@pytest.fixture(autouse=True)
def _graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.GRAPH_MODE, jit_syntax_level=ms.LAX)


def test_levels_and_default_are_mindspores():
    # MindSpore: STRICT 0, COMPATIBLE 1, LAX 2; get_context('jit_syntax_level') == 2 by default
    assert (ms.STRICT, ms.COMPATIBLE, ms.LAX) == (0, 1, 2)
    assert (ms.context.STRICT, ms.context.COMPATIBLE, ms.context.LAX) == (0, 1, 2)
    assert ms.get_context("jit_syntax_level") == ms.LAX
    for level in (ms.STRICT, ms.COMPATIBLE, ms.LAX):
        ms.set_context(jit_syntax_level=level)
        assert ms.get_context("jit_syntax_level") == level


def test_bad_levels_raise_mindspores_errors():
    # MindSpore: ValueError "For 'jit_syntax_level', the value should be context.STRICT or
    # context.LAX, but got 3."; TypeError "The parameter 'jit_syntax_level' must be <class 'int'>,
    # but got <class 'str'>"
    with pytest.raises(ValueError, match=r"For 'jit_syntax_level', the value should be "
                                         r"context.STRICT or context.LAX, but got 3\."):
        ms.set_context(jit_syntax_level=3)
    with pytest.raises(TypeError, match=r"The parameter 'jit_syntax_level' must be <class 'int'>"
                                        r", but got <class 'str'>"):
        ms.set_context(jit_syntax_level="LAX")
    assert ms.get_context("jit_syntax_level") == ms.LAX


class _Obj:
    def __init__(self):
        self.k = 3

    def scale(self, v):
        return v * self.k


def _python_values(x):
    a = np.array([1, 2, 3])
    s = int(np.sum(a))
    d = {"a": 1}
    d["b"] = 2
    d.update({"c": 3})
    o = _Obj()
    return x * s + len(d) + o.scale(1), isinstance(o, _Obj), f"v{s}"


def _uses_try(x):
    try:
        y = x + 1
    except ValueError:
        y = x
    return y


def _uses_set(x):
    return x * len({1, 2})


@pytest.mark.parametrize("level", [ms.STRICT, ms.LAX])
def test_python_values_run_at_compile_time_at_every_level(level):
    # MindSpore (both levels): ([12. -6. 24.], True, 'v6')
    ms.set_context(jit_syntax_level=level)
    before = graph_compile.stats["compiles"]
    out, flag, text = ms.jit(_python_values)(X)
    assert graph_compile.stats["compiles"] == before + 1
    assert out.asnumpy().tolist() == [12.0, -6.0, 24.0] and flag is True and text == "v6"


@pytest.mark.parametrize("level", [ms.STRICT, ms.LAX])
def test_unsupported_syntax_is_rejected_at_every_level(level):
    # MindSpore (both levels): RuntimeError "Unsupported statement 'Try'." / "Unsupported
    # expression 'Set'."
    ms.set_context(jit_syntax_level=level)
    with pytest.raises(GraphSyntaxError, match="try/except"):
        ms.jit(_uses_try)(X)
    with pytest.raises(GraphSyntaxError, match="set literal"):
        ms.jit(_uses_set)(X)


class _Scaled(nn.Cell):
    def construct(self, x):
        return x * 2


def test_the_level_is_part_of_the_compile_key():
    net = _Scaled()
    ms.set_context(jit_syntax_level=ms.LAX)
    net(X)
    before = graph_compile.stats["compiles"]
    ms.set_context(jit_syntax_level=ms.STRICT)
    assert net(X).asnumpy().tolist() == [2.0, -4.0, 6.0]
    assert graph_compile.stats["compiles"] == before + 1


class _ReadsValue(nn.Cell):
    def construct(self, x):
        return Tensor(x.asnumpy() * 2)


def test_reading_a_tensor_value_is_strict_error_and_lax_runtime_fallback():
    # MindSpore: STRICT raises AttributeError ("In JIT strict mode, cannot get attributes
    # asnumpy"); LAX runs it at run time: [ 2. -4.  6.]
    ms.set_context(jit_syntax_level=ms.STRICT)
    with pytest.raises(GraphSyntaxError) as strict:
        _ReadsValue()(X)
    assert "JIT Fallback" not in str(strict.value)
    ms.set_context(jit_syntax_level=ms.LAX)
    with pytest.warns(UserWarning, match="MindSpore's JIT Fallback"):
        out = _ReadsValue()(X)
    assert out.asnumpy().tolist() == [2.0, -4.0, 6.0]