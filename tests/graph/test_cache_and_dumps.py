"""The graph compile cache (core/graph/compile.py) and save_graphs dumps: a second call with the
same input signature neither re-parses nor recompiles; a new shape, dtype, Python scalar argument,
Cell instance or context option does; save_graphs writes the IR after every pass stage with op
names and source locations (DESIGN.md "Graph mode")."""
from __future__ import annotations

import inspect
import os
import re

import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, Tensor, nn, ops
from minispore.core.graph import compile as graph_compile
from minispore.core.graph.passes import PIPELINE

THIS_FILE = os.path.basename(__file__)
F32 = np.float32


@pytest.fixture(autouse=True)
def graph_mode():
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    graph_compile.clear_cache()


def t(a, dtype=F32):
    return Tensor(np.asarray(a, dtype))


class Counter:
    """compile.stats deltas since construction."""

    def __init__(self):
        self.base = dict(graph_compile.stats)

    @property
    def compiles(self):
        return graph_compile.stats["compiles"] - self.base["compiles"]

    @property
    def parses(self):
        return graph_compile.stats["parses"] - self.base["parses"]


class Net(nn.Cell):
    def __init__(self, w=1.0):
        super().__init__()
        self.w = Parameter(t([w, 2 * w, 3 * w]), name="w")

    def construct(self, x):
        y = x * self.w
        if y.sum() > 0:
            y = y + 1
        return ops.tanh(y)


def eager(fn, *args, **kwargs):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        return fn(*args, **kwargs)
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)


def same(a, b):
    a, b = a.asnumpy(), b.asnumpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- cache --------------------------
def test_second_call_neither_parses_nor_compiles():
    net, x = Net(), t([1.0, -2.0, 0.5])
    c = Counter()
    out1 = net(x)
    assert (c.compiles, c.parses) == (1, 1)
    assert len(graph_compile.cache.entries()) == 1
    stats = dict(graph_compile.stats)
    out2 = net(t([3.0, 4.0, 5.0]))              # same signature, other values
    out3 = net(x)
    assert graph_compile.stats == stats and len(graph_compile.cache.entries()) == 1
    same(out1, out3)
    same(out2, eager(net, t([3.0, 4.0, 5.0])))


def test_new_shape_or_dtype_recompiles_and_old_ones_stay_cached():
    @ms.jit
    def f(x):
        return ops.exp(x) * 2 + x.sum()

    c = Counter()
    f(t([1.0, 2.0]))
    f(t([3.0, 4.0]))
    assert c.compiles == 1
    f(t([1.0, 2.0, 3.0]))                       # new shape
    assert (c.compiles, c.parses) == (2, 2)
    f(t([[1.0, 2.0]]))                          # new rank
    assert c.compiles == 3
    out = f(t([1.0, 2.0], np.float64))          # new dtype
    assert c.compiles == 4 and out.dtype == ms.float64
    for x in (t([5.0, 6.0]), t([1.0, 2.0, 3.0]), t([[0.0, 1.0]]), t([0.5, 1.5], np.float64)):
        same(f(x), eager(f.__wrapped_jit__, x))
    assert (c.compiles, c.parses) == (4, 4)
    assert len(graph_compile.cache.entries()) == 4


def test_python_scalar_arguments_are_part_of_the_key():
    @ms.jit
    def f(x, n, scale=1.0):
        for _ in range(n):
            x = x * scale + 1
        return x

    x = t([1.0, 2.0])
    c = Counter()
    f(x, 2)
    f(t([0.0, 0.0]), 2)
    assert c.compiles == 1
    out = f(x, 3)                               # another scalar: recompiles (loop unrolls more)
    assert c.compiles == 2
    same(out, eager(f.__wrapped_jit__, x, 3))
    f(x, 3, scale=2.0)                          # another keyword scalar
    assert c.compiles == 3
    f(x, 3, scale=2.0)
    f(x, 2)
    assert c.compiles == 3


def test_equal_scalars_of_another_type_are_another_key():
    @ms.jit
    def g(x, k):
        if isinstance(k, bool):
            return x - 1
        if isinstance(k, int):
            return x + k
        return x * k

    x = t([1.0, 2.0])
    c = Counter()
    outs = [g(x, k) for k in (2, 2.0, 1, True)]     # 2 == 2.0 and 1 == True as dict keys
    assert c.compiles == 4
    for k, out in zip((2, 2.0, 1, True), outs):
        same(out, eager(g.__wrapped_jit__, x, k))


def test_tuple_and_string_arguments_are_part_of_the_key():
    @ms.jit
    def f(pair, act):
        a, b = pair
        return ops.relu(a - b) if act == "relu" else ops.tanh(a - b)

    x, y = t([1.0, -2.0]), t([0.5, 0.5])
    c = Counter()
    f((x, y), "relu")
    f((y, x), "relu")
    assert c.compiles == 1
    same(f((x, y), "tanh"), eager(f.__wrapped_jit__, (x, y), "tanh"))
    assert c.compiles == 2
    f((x, t([0.5, 0.5, 0.5])[:2]), "tanh")      # same shapes inside the tuple: cached
    assert c.compiles == 2
    f((x, t([[0.5, 0.5]])), "tanh")             # a new shape inside the tuple
    assert c.compiles == 3


def test_two_instances_of_a_cell_class_compile_separately():
    a, b = Net(1.0), Net(-2.0)
    x = t([1.0, 1.0, 1.0])
    c = Counter()
    out_a, out_b = a(x), b(x)
    assert c.compiles == 2 and len(graph_compile.cache.entries()) == 2
    same(out_a, eager(a, x))
    same(out_b, eager(b, x))
    a(x), b(x)
    assert c.compiles == 2
    graphs = [e.graph for e in graph_compile.cache.entries()]
    bound = [{p for _, p in g.params} for g in graphs]
    assert {id(p) for s in bound for p in s} == {id(a.w), id(b.w)}


def test_parameter_values_are_not_part_of_the_key():
    net, x = Net(), t([1.0, 2.0, 3.0])
    net(x)
    c = Counter()
    net.w.set_data(t([-1.0, -1.0, -1.0]))
    out = net(x)
    assert c.compiles == 0
    same(out, eager(net, x))


def test_parameter_dtype_change_recompiles():
    net, x = Net(), t([1.0, 2.0, 3.0])
    net(x)
    net.w.set_data(np.array([1.0, 2.0, 3.0], np.float64))
    out = net(x)
    same(out, eager(net, x))


def test_numpy_array_argument_changed_in_place_is_not_stale():
    def f(x, a):
        return x * a[0]

    jf = ms.jit(f)
    x, a = t([1.0, 2.0]), np.array([1.0], F32)
    jf(x, a)
    a[0] = 5.0
    same(jf(x, a), eager(f, x, a))


def test_context_options_are_part_of_the_key():
    net, x = Net(), t([1.0, 2.0, 3.0])
    c = Counter()
    net(x)
    ms.set_context(jit_level="O1")
    net(x)
    assert c.compiles == 2
    ms.set_context(jit_level="O0")
    net(x)
    assert c.compiles == 2


def test_pynative_calls_do_not_compile_and_clear_cache_recompiles():
    net, x = Net(), t([1.0, 2.0, 3.0])
    c = Counter()
    eager(net, x)
    assert c.compiles == 0 and not graph_compile.cache.entries()
    net(x)
    graph_compile.clear_cache()
    net(x)
    assert (c.compiles, c.parses) == (2, 2)


def test_grad_function_is_compiled_once_per_signature():
    net = Net()
    grad_fn = ms.value_and_grad(net, 0, net.trainable_params())
    x = t([1.0, -2.0, 0.5])
    c = Counter()
    v1, g1 = grad_fn(x)
    grad_fn(t([4.0, 5.0, 6.0]))
    assert c.compiles == 1
    v2, g2 = eager(grad_fn, x)
    same(v1, v2)
    same(g1[0], g2[0])
    same(g1[1][0], g2[1][0])


# ---------------------------------------------------------------- save_graphs --------------------
class DumpNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(t([0.5, 1.5, -1.0]), name="w")

    def construct(self, x):
        unused = ops.exp(x) * 3                       # noqa: F841 (dead: DCE removes it)
        y = x * self.w + 0                            # simplify removes the + 0
        z = ops.sin(x) * ops.sin(x)                   # CSE shares the sin
        if y.sum() > 0:
            y = y * 2
        else:
            y = ops.relu(y)
        return y + z


def line_of(needle: str) -> int:
    lines, start = inspect.getsourcelines(DumpNet.construct)
    for i, text in enumerate(lines):
        if needle in text:
            return start + i
    raise AssertionError(needle)


def dump_files(path):
    return sorted(p for p in path.iterdir() if p.is_file())


def test_save_graphs_writes_one_ir_file_per_pass_stage(tmp_path):
    ms.set_context(save_graphs=True, save_graphs_path=str(tmp_path), jit_level="O0")
    net, x = DumpNet(), t([1.0, 2.0, 3.0])
    out = net(x)
    same(out, eager(net, x))
    files = [p for p in dump_files(tmp_path) if p.suffix == ".ir"]
    stages = [p.__name__ for p in PIPELINE]
    assert len(files) == len(stages) + 1, [p.name for p in files]       # + the parsed graph
    names = " ".join(p.name for p in files)
    assert "DumpNet" in names and "parsed" in names
    for st in stages:
        assert sum(st in p.name for p in files) == 1, (st, names)
    by_stage = {st: next(p for p in files if st in p.name).read_text() for st in stages}
    parsed = next(p for p in files if "parsed" in p.name).read_text()

    # op names and source locations of this file
    for text in [parsed] + list(by_stage.values()):
        assert "graph DumpNet" in text and "If(" in text and "then:" in text
        assert "mul(" in text and "sin(" in text
        assert f"{THIS_FILE}:{line_of('y = x * self.w + 0')}" in text, text
        assert f"{THIS_FILE}:{line_of('y = y * 2')}" in text, text
        assert "param 'w'" in text
    assert "exp(" in parsed and f"{THIS_FILE}:{line_of('unused =')}" in parsed
    # the passes did their jobs, visible stage by stage
    assert parsed.count("sin(") == 2 and by_stage["cse"].count("sin(") == 1
    assert "exp(" not in by_stage["dce"]
    assert len(parsed.splitlines()) > len(by_stage["dce"].splitlines())


def test_save_graphs_is_off_by_default_and_cached_calls_do_not_rewrite(tmp_path):
    ms.set_context(save_graphs_path=str(tmp_path), jit_level="O0")
    net, x = DumpNet(), t([1.0, 2.0, 3.0])
    net(x)
    assert dump_files(tmp_path) == []
    graph_compile.clear_cache()
    ms.set_context(save_graphs=True)
    net(x)
    files = dump_files(tmp_path)
    mtimes = {p: p.stat().st_mtime_ns for p in files}
    for p in files:
        p.write_text("sentinel")
    net(x)                                          # cached: nothing is rewritten
    assert all(p.read_text() == "sentinel" for p in files)
    assert {p: p.stat().st_mtime_ns for p in files}.keys() == mtimes.keys()


def test_save_graphs_names_functions_and_grad_graphs(tmp_path):
    ms.set_context(save_graphs=True, save_graphs_path=str(tmp_path / "sub"),   # created
                   jit_level="O0")

    @ms.jit
    def scaled_add(x, y):
        return x * 2 + y

    scaled_add(t([1.0]), t([2.0]))
    net = DumpNet()
    ms.grad(net)(t([1.0, 2.0, 3.0]))
    files = [p.name for p in dump_files(tmp_path / "sub") if p.suffix == ".ir"]
    assert any("scaled_add" in f for f in files), files
    grads = [f for f in files if f.startswith("grad_")]
    assert len(grads) == len(PIPELINE) + 1, files
    text = (tmp_path / "sub" / sorted(grads)[-1]).read_text()
    assert re.search(rf"{THIS_FILE}:\d+", text)
    assert "cos(" in text                           # the backward of sin is in the same graph


def test_save_graphs_writes_graphviz_dot_beside_each_ir_file(tmp_path):
    ms.set_context(save_graphs=True, save_graphs_path=str(tmp_path), jit_level="O0")
    DumpNet()(t([1.0, 2.0, 3.0]))
    irs = sorted(p.stem for p in dump_files(tmp_path) if p.suffix == ".ir")
    dots = [p for p in dump_files(tmp_path) if p.suffix == ".dot"]
    assert sorted(p.stem for p in dots) == irs
    for p in dots:
        text = p.read_text()
        assert re.match(r"\s*digraph\b", text), text[:200]
        assert text.rstrip().endswith("}")
        assert "mul" in text


def test_keyword_tensors_bind_to_their_own_inputs():
    """Keyword tensors given out of alphabetical order reach the right graph inputs."""
    def f(x, *, b, a):
        return x + b * 10 + a * 100
    ms.set_context(mode=ms.GRAPH_MODE)
    out = ms.jit(f)(t([1.0]), b=t([2.0]), a=t([3.0]))
    np.testing.assert_array_equal(out.asnumpy(), [321.0])
    out = ms.jit(f)(t([1.0]), a=t([3.0]), b=t([2.0]))
    np.testing.assert_array_equal(out.asnumpy(), [321.0])


def test_a_dead_cells_graphs_are_dropped_with_it():
    """The compile cache holds a Cell's Parameters: when the Cell dies, so do its entries (no
    memory kept alive, and a new Cell at the same id cannot find them)."""
    import gc
    import weakref

    import numpy as np
    import minispore as ms
    from minispore import nn
    from minispore.core.graph import compile as gc_mod

    class Lin(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.ones((2, 2), np.float32)), name="w")

        def construct(self, x):
            return ms.ops.matmul(x, self.w)

    ms.set_context(mode=ms.GRAPH_MODE)
    net = Lin()
    net(ms.Tensor(np.ones((1, 2), np.float32)))
    oid, w = id(net), weakref.ref(net.w)
    assert any(k[1] == oid for k in gc_mod.cache._cache)
    del net
    gc.collect()
    assert not any(k[1] == oid for k in gc_mod.cache._cache)
    assert w() is None


def test_a_cell_collected_while_the_cache_walks_its_tables_is_dropped_afterwards(monkeypatch):
    """A Cell in a reference cycle dies when the garbage collector runs, which can be inside
    any allocation, including while the cache evicts and prunes: its entries go once the walk is
    over (not in the middle of it, which broke the walk), and no later lookup finds them."""
    import gc
    import weakref

    import numpy as np
    import minispore as ms
    from minispore import nn
    from minispore.core.graph import cache
    from minispore.core.graph import compile as gc_mod

    class Cyclic(nn.Cell):
        def __init__(self):
            super().__init__()
            self.me = self                # only the collector frees it

        def construct(self, x):
            return x + 1

    class CollectsWhenHashed:
        """A call-site part whose hash runs the collector once armed, as an allocation inside
        the walk may."""
        armed = False

        def __hash__(self):
            if CollectsWhenHashed.armed:
                gc.collect()
            return 0

    monkeypatch.setenv("MINISPORE_COMPILE_CACHE_SIZE", "2")
    gc_mod.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE)
    net = Cyclic()
    net(ms.Tensor(np.ones(2, np.float32)))
    oid, alive = id(net), weakref.ref(net)
    assert any(k[1] == oid for k in cache._guards)
    for i in range(6):                    # call sites without graphs: put prunes them
        cache.set_guards(("site", CollectsWhenHashed(), i, None), ())
    gc.disable()
    try:
        del net
        assert alive() is not None        # in its cycle, waiting for the collector
        CollectsWhenHashed.armed = True
        cache.put(("F", "new", None, None), object(), [])
    finally:
        CollectsWhenHashed.armed = False
        gc.enable()
    assert alive() is None
    assert not any(k[1] == oid for k in cache._cache)
    assert not any(k[1] == oid for k in cache._guards)
    gc_mod.clear_cache()
