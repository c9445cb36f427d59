"""The compile cache runs the right graph: ms.jit compiles the user's own function (decorated
constructs, helpers, partials, bound methods, Cells, ops), a compiled graph is keyed on the Python
values it read (attributes, globals, closures: a change recompiles) and warns about Python side
effects that only ran while compiling, and the cache stays bounded with fresh lambdas in a loop
(graph/cache.py, graph/guards.py, core/jit.py)."""
import functools
import types

import numpy as np
import pytest

import minispore as ms
from helpers import warnings_as_errors
from minispore import nn, ops
from minispore.core.graph import compile as graph_compile


@pytest.fixture(autouse=True)
def _graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.GRAPH_MODE)


def t(v):
    return ms.Tensor(np.asarray(v, np.float32))


X = t([1.0, 2.0, 3.0])


def val(out):
    return out.asnumpy().tolist()


# ------------------------------------------------------------- the function that runs ---------
class AddOne(nn.Cell):
    @ms.jit
    def construct(self, x):
        return x + 1


class TimesTen(nn.Cell):
    @ms.jit
    def construct(self, x):
        return ops.mul(x, 10)          # `ops` is this module's global, not core/jit.py's


@pytest.mark.parametrize("mode", [ms.GRAPH_MODE, ms.PYNATIVE_MODE])
def test_each_jit_decorated_construct_runs_its_own_body(mode):
    ms.set_context(mode=mode)
    assert val(AddOne()(X)) == [2.0, 3.0, 4.0]
    assert val(TimesTen()(X)) == [10.0, 20.0, 30.0]
    assert val(AddOne()(X)) == [2.0, 3.0, 4.0]


@ms.jit
def _double(x):
    return x * 2


@ms.jit
def _triple(x):
    return x * 3


class TwoHelpers(nn.Cell):
    def construct(self, x):
        return _double(x), _triple(x)


def test_two_jit_helpers_called_in_one_cell_each_run_their_own_body():
    a, b = TwoHelpers()(X)
    assert val(a) == [2.0, 4.0, 6.0] and val(b) == [3.0, 6.0, 9.0]


class UsesUndefined(nn.Cell):
    @ms.jit
    def construct(self, x):
        return x + undefined_name_here  # noqa: F821


def test_a_name_error_in_a_jit_construct_names_the_users_file_and_line():
    with pytest.raises(NameError) as e:
        UsesUndefined()(X)
    msg = str(e.value)
    assert "undefined_name_here" in msg and "test_jit_cache_keys.py" in msg
    assert "jit.py" not in msg


def _scaled(x, k, shift=0.0):
    if x.sum() > 0:                     # a tensor condition: the source must be parsed
        return x * k + shift
    return x - k


def test_jit_of_a_functools_partial_compiles_its_function_with_the_bound_arguments():
    assert val(ms.jit(functools.partial(_scaled, k=5.0))(X)) == [5.0, 10.0, 15.0]
    f = ms.jit(functools.partial(_scaled, X, shift=1.0))
    assert val(f(2.0)) == [3.0, 5.0, 7.0]
    assert val(f(k=3.0)) == [4.0, 7.0, 10.0]


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        if x.sum() > 0:
            return x * self.k
        return -x

    def __call__(self, x):
        return self.apply(x) + 1


def test_jit_of_a_bound_method_and_of_a_callable_object_parses_their_source():
    assert val(ms.jit(Scaler(7.0).apply)(X)) == [7.0, 14.0, 21.0]
    assert val(ms.jit(Scaler(2.0))(X)) == [3.0, 5.0, 7.0]
    assert val(ms.jit(Scaler(2.0).apply)(t([-1.0]))) == [1.0]


class Model:
    def __init__(self):
        self.k = 4.0

    @ms.jit
    def predict(self, x):
        return ops.mul(x, self.k)


def test_a_jit_decorated_method_of_a_plain_class_reads_its_instance():
    m = Model()
    assert val(m.predict(X)) == [4.0, 8.0, 12.0]
    m.k = 0.5
    assert val(m.predict(X)) == [0.5, 1.0, 1.5]
    assert val(Model().predict(X)) == [4.0, 8.0, 12.0]


class Statics:
    @ms.jit
    @staticmethod
    def six(x):
        return x * 6

    @staticmethod
    def four(x):
        return x * 4


def test_jit_of_a_static_method_above_or_below_staticmethod():
    assert val(Statics.six(X)) == [6.0, 12.0, 18.0]
    assert val(Statics().six(X)) == [6.0, 12.0, 18.0]
    assert val(ms.jit(Statics.four)(X)) == [4.0, 8.0, 12.0]
    with pytest.raises(TypeError, match="classmethod"):
        ms.jit(classmethod(_scaled))


def test_jit_of_a_minispore_op_and_of_a_cell():
    np.testing.assert_allclose(ms.jit(ops.exp)(X).asnumpy(), np.exp([1.0, 2.0, 3.0]),
                               rtol=1e-6)
    net = TimesTen()
    assert val(ms.jit(net)(X)) == [10.0, 20.0, 30.0]


class ExpAtO0(nn.Cell):
    @ms.jit(jit_level="O0")
    def construct(self, x):
        return ops.exp(x) * 2 + 1


def test_the_jit_level_of_a_decorated_construct_applies_to_its_cell():
    from minispore.core.graph.execute import Program
    saved = ms.get_context("jit_level")
    ms.set_context(jit_level="O2")
    try:
        net = ExpAtO0()
        net(X)
        assert type(graph_compile.last_compiled().program) is Program      # kernel by kernel, as O0
        ms.set_context(mode=ms.PYNATIVE_MODE)
        net(X)
        assert type(graph_compile.last_compiled().program) is Program
    finally:
        ms.set_context(jit_level=saved)


def test_jit_rejects_options_it_does_not_know():
    with pytest.raises(TypeError, match="unexpected keyword argument.*'donate'"):
        ms.jit(_scaled, donate=True)
    with pytest.raises(ValueError, match="backend='XLA'"):
        ms.jit(_scaled, backend="XLA")


# ------------------------------------------------------------- stale compiled graphs ----------
SCALE = 2.0


class Attrs(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = 1.0
        self.flag = True
        self.bias = t([0.5, 0.5, 0.5])

    def construct(self, x):
        y = x * self.a * SCALE
        if self.flag:
            y = y + self.bias
        return y


def test_a_changed_float_bool_tensor_attribute_or_global_compiles_a_new_graph():
    global SCALE
    net = Attrs()
    assert val(net(X)) == [2.5, 4.5, 6.5]
    net.a = 3.0
    assert val(net(X)) == [6.5, 12.5, 18.5]
    net.flag = False
    assert val(net(X)) == [6.0, 12.0, 18.0]
    net.flag = True
    net.bias = t([1.0, 1.0, 1.0])                  # another tensor
    assert val(net(X)) == [7.0, 13.0, 19.0]
    net.bias[0] = 0.0                              # the same tensor, written
    assert val(net(X)) == [6.0, 13.0, 19.0]
    SCALE = 1.0
    try:
        assert val(net(X)) == [3.0, 7.0, 10.0]
    finally:
        SCALE = 2.0
    compiles = graph_compile.stats["compiles"]
    net.a = 3.0                                    # values seen before find their graphs again
    assert val(net(X)) == [6.0, 13.0, 19.0]
    assert graph_compile.stats["compiles"] == compiles


class ByName(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def construct(self, x):
        if hasattr(self, "shift"):
            x = x + getattr(self, "shift")
        return x * getattr(self, "scale")


def test_an_attribute_read_by_getattr_or_hasattr_compiles_a_new_graph_when_changed():
    net = ByName()
    assert val(net(X)) == [2.0, 4.0, 6.0]
    net.scale = 3.0
    assert val(net(X)) == [3.0, 6.0, 9.0]
    net.shift = 1.0
    assert val(net(X)) == [6.0, 9.0, 12.0]


CFG = types.ModuleType("user_config")          # a user's settings module
CFG.SCALE = 2.0


@ms.jit
def _by_config(x):
    return x * CFG.SCALE


def test_a_changed_attribute_of_a_users_module_compiles_a_new_graph():
    assert val(_by_config(X)) == [2.0, 4.0, 6.0]
    CFG.SCALE = 4.0
    assert val(_by_config(X)) == [4.0, 8.0, 12.0]


def test_a_changed_closure_variable_compiles_a_new_graph():
    k = 2.0

    @ms.jit
    def f(x):
        return x * k

    assert val(f(X)) == [2.0, 4.0, 6.0]
    k = 5.0
    assert val(f(X)) == [5.0, 10.0, 15.0]


class Dropper(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        return self.drop(x)


def test_a_changed_setting_of_a_builtin_cell_compiles_a_new_graph():
    net = Dropper()
    net.set_train(True)
    ones = ms.Tensor(np.ones(64, np.float32))
    assert set(val(net(ones))) == {0.0, 2.0}
    net.drop.p = 0.0                               # nn.Dropout's construct is not parsed
    assert val(net(ones)) == [1.0] * 64
    compiles = graph_compile.stats["compiles"]
    net(ones)
    assert graph_compile.stats["compiles"] == compiles


class Counter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.n = 0

    def construct(self, x):
        self.n += 1
        return x + 1


LOG = []


@ms.jit
def _logs(x):
    LOG.append(1)
    return x * 2


def test_a_python_side_effect_that_runs_only_while_compiling_warns_once():
    net = Counter()
    with pytest.warns(UserWarning, match=r"attribute 'n' of Counter changed while compiling.*"
                                         r"self\.n \+= 1") as rec:
        net(X)
    assert any(r.filename.endswith("test_jit_cache_keys.py") for r in rec)
    with warnings_as_errors():
        net(X)                                     # the cached graph: no side effect, no warning
    assert net.n == 1
    with pytest.warns(UserWarning, match=r"global 'LOG'.*LOG\.append\(1\)"):
        _logs(X)
    assert LOG == [1]


class FreshOffset(nn.Cell):
    @property
    def offset(self):                   # a new Tensor on every read
        return t([1.0, 1.0, 1.0])

    def construct(self, x):
        return x + self.offset


def test_a_property_making_a_new_tensor_on_each_read_compiles_once_without_warning():
    net = FreshOffset()
    with warnings_as_errors():
        assert val(net(X)) == [2.0, 3.0, 4.0]
        compiles = graph_compile.stats["compiles"]
        assert val(net(X)) == [2.0, 3.0, 4.0]
    assert graph_compile.stats["compiles"] == compiles


class ActByProperty(nn.Cell):
    def __init__(self):
        super().__init__()
        self._act = nn.ReLU()

    @property
    def act(self):                      # the same Cell on every read, until it is replaced
        return self._act

    def construct(self, x):
        return self.act(x)


def test_a_property_returning_a_stored_cell_is_guarded_by_its_identity():
    net = ActByProperty()
    assert val(net(t([-1.0, 2.0]))) == [0.0, 2.0]
    net._act = nn.Tanh()
    np.testing.assert_allclose(net(t([-1.0, 2.0])).asnumpy(), np.tanh([-1.0, 2.0]), rtol=1e-6)


def test_a_graph_without_side_effects_does_not_warn():
    with warnings_as_errors():
        Attrs()(X)


# ------------------------------------------------------------- a bounded compile cache --------
def test_fresh_lambdas_in_a_loop_reuse_one_graph():
    compiles = graph_compile.stats["compiles"]
    for _ in range(30):
        g = ms.grad(lambda v: (v * v).sum())(X)
        y = ms.jit(lambda v: v * 2)(X)
    assert val(g) == [2.0, 4.0, 6.0] and val(y) == [2.0, 4.0, 6.0]
    assert graph_compile.stats["compiles"] - compiles == 2


def test_a_grad_operation_made_anew_each_step_reuses_one_graph():
    def loss(v):
        return (v * v * v).sum()

    compiles = graph_compile.stats["compiles"]
    for _ in range(5):
        g = ops.GradOperation()(loss)(X)
    assert val(g) == [3.0, 12.0, 27.0]
    assert graph_compile.stats["compiles"] - compiles == 1


def test_fresh_lambdas_capturing_different_values_get_their_own_graphs():
    outs = [val(ms.jit(lambda v: v * k)(X)) for k in (2.0, 3.0, 2.0)]
    assert outs == [[2.0, 4.0, 6.0], [3.0, 6.0, 9.0], [2.0, 4.0, 6.0]]


def test_the_compile_cache_keeps_at_most_its_size(monkeypatch):
    monkeypatch.setenv("MINISPORE_COMPILE_CACHE_SIZE", "4")
    monkeypatch.setenv("MINISPORE_RECOMPILE_LIMIT", "0")
    graph_compile.clear_cache()
    f = ms.jit(lambda v: v + 1)
    for n in range(1, 11):
        assert val(f(ms.Tensor(np.zeros(n, np.float32)))) == [1.0] * n
    assert len(graph_compile.cache.entries()) == 4
    compiles = graph_compile.stats["compiles"]
    f(ms.Tensor(np.zeros(10, np.float32)))         # the most recent ones are kept
    assert graph_compile.stats["compiles"] == compiles


def test_a_function_that_keeps_recompiling_warns_once(monkeypatch):
    monkeypatch.setenv("MINISPORE_RECOMPILE_LIMIT", "2")

    @ms.jit
    def f(x):
        return x - 1

    with warnings_as_errors():
        f(ms.Tensor(np.zeros(1, np.float32)))
        f(ms.Tensor(np.zeros(2, np.float32)))
    with pytest.warns(UserWarning, match="compiled 3 times.*input shapes") as rec:
        f(ms.Tensor(np.zeros(3, np.float32)))
    assert rec[0].filename.endswith("test_jit_cache_keys.py")
    with warnings_as_errors():
        f(ms.Tensor(np.zeros(4, np.float32)))


def test_the_recompile_warning_names_the_python_value_that_keeps_changing(monkeypatch):
    monkeypatch.setenv("MINISPORE_RECOMPILE_LIMIT", "2")
    net = Attrs()
    net(X)
    net.a = 2.0
    net(X)
    net.a = 3.0
    with pytest.warns(UserWarning, match="compiled 3 times.*attribute 'a' of Attrs"):
        net(X)


def test_a_nan_python_argument_finds_its_graph_again():
    f = ms.jit(lambda x, s: x * s)
    f(X, float("nan"))
    compiles = graph_compile.stats["compiles"]
    f(X, float("nan"))
    assert graph_compile.stats["compiles"] == compiles
