"""The native CPU sink (backends/cpu/native_sink.py): a graph as one native call with an arena
laid out by the memory plan, compiled without numba, cached on disk as an object file; graphs it
cannot lower run kernel by kernel (the O1 Program) with a RuntimeWarning naming the node
(test_sink_ops.py)."""
import re
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, ops
from minispore.backends.cpu import native_jit
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.core.graph import compile as graph_compile
from minispore.core.graph.execute import Program
from minispore.core.graph.memplan import ALIGN

from golden_models import MLP, TrainStep, control  # noqa: E402

_alive: list = []


def _compile(fn, *args, allow=()):
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for a in allow:          # warnings the caller expects: categories or message regexes
            if isinstance(a, str):
                warnings.filterwarnings("always", message=a)
            else:
                warnings.simplefilter("always", a)
        out = fn(*args)
    (entry,) = graph_compile.cache.entries()
    return out, entry


def _steps(n=4):
    step = TrainStep(MLP())
    _alive[:] = [step]
    r = np.random.default_rng(1)
    x = Tensor(r.standard_normal((5, 6)).astype(np.float32))
    y = Tensor(np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]])
    return step, [step(x, y).asnumpy() for _ in range(n)], [p.asnumpy() for p in step.params]


def test_training_step_is_native_and_equals_pynative_bit_for_bit():
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    _, native_losses, native_params = _steps()
    (entry,) = graph_compile.cache.entries()
    assert isinstance(entry.program, NativeProgram)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    _, eager_losses, eager_params = _steps()
    np.testing.assert_array_equal(native_losses, eager_losses)      # README: bit for bit
    for a, b in zip(native_params, eager_params):
        np.testing.assert_array_equal(a, b)


def test_arena_offsets_never_overlap_for_values_alive_together():
    """Every pair of arena values whose live ranges intersect occupy disjoint bytes, and the
    arena is smaller than all intermediates laid end to end (buffers are reused)."""
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    _steps(1)
    (entry,) = graph_compile.cache.entries()
    prog, g = entry.program, entry.graph
    assert isinstance(prog, NativeProgram)
    alias = {}
    for n in g.nodes:
        if n.outputs and n.outputs[0].id in prog.alias_of:
            alias[n.outputs[0].id] = prog.alias_of[n.outputs[0].id]
    span = {}
    for i, n in enumerate(g.nodes):
        for v in n.outputs:
            if v.id in prog.offsets:
                span[v.id] = [i, i]
        for v in n.inputs:
            r = alias.get(v.id, v.id)
            if r in span:
                span[r][1] = max(span[r][1], i)
    sizes = {v.id: int(np.prod(v.shape)) * v.dtype.itemsize for n in g.nodes for v in n.outputs}
    vals = sorted(span)
    assert len(vals) >= 5
    for i, a in enumerate(vals):
        assert prog.offsets[a] % ALIGN == 0
        for b in vals[i + 1:]:
            (s1, e1), (s2, e2) = span[a], span[b]
            if s1 <= e2 and s2 <= e1:                   # alive at the same time
                lo1, lo2 = prog.offsets[a], prog.offsets[b]
                assert lo1 + sizes[a] <= lo2 or lo2 + sizes[b] <= lo1, (a, b)
    assert 0 < prog.arena_bytes < sum(sizes[v] for v in vals)


def test_a_second_program_loads_the_object_file_and_a_corrupt_one_is_rebuilt(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setenv("MINISPORE_CACHE_DIR", str(tmp_path))

    def f(x):
        return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x * x / 3
    x = Tensor(np.linspace(-3, 3, 50, dtype=np.float32))
    want = f(x).asnumpy()                                      # PyNative
    first, e1 = _compile(ms.jit(f), x)
    assert isinstance(e1.program, NativeProgram) and not e1.program.lib.from_cache
    objs = list((tmp_path / "native").glob("*.o"))
    assert len(objs) == 2 == e1.program.lib.compiled            # the glue and one fused kernel
    again, e2 = _compile(ms.jit(f), x)
    assert e2.program.lib.from_cache
    for obj in objs:
        obj.write_bytes(obj.read_bytes()[:-7] + b"garbage")  # corrupt: compiled again
    from minispore.backends.cpu.kernel_cache import KernelCacheWarning
    with pytest.warns(KernelCacheWarning, match="content hash"):
        third, e3 = _compile(ms.jit(f), x, allow=(KernelCacheWarning,))
    assert not e3.program.lib.from_cache
    for got in (first, again, third):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-6, atol=1e-6)


def test_graphs_it_cannot_lower_run_kernel_by_kernel_with_a_warning(monkeypatch):
    """A node without a native lowering (matmul's, removed here) makes the graph run kernel by
    kernel (the O1 Program: the eager kernels), and a RuntimeWarning names the node."""
    from minispore.backends.cpu import native_registry
    monkeypatch.delitem(native_registry.LOWER, "matmul")

    def f(x):
        return ops.matmul(x, x) * 2
    with pytest.warns(RuntimeWarning, match=r"runs kernel by kernel \(as O1\) because the CPU "
                                            r"sink cannot lower node 'matmul'"):
        out, entry = _compile(ms.jit(f), Tensor(np.eye(3, dtype=np.float32)),
                              allow=(RuntimeWarning,))
    assert type(entry.program) is Program
    np.testing.assert_array_equal(out.asnumpy(), 2 * np.eye(3))


def test_without_a_native_path_every_graph_runs_kernel_by_kernel_with_a_warning(monkeypatch):
    """Where the native path cannot run (no CBLAS in numpy's libraries: NativeUnavailable), an
    O2 graph runs as the O1 Program with a warning saying so, and PyNative's backward has no
    compiled program (the eager bprops run)."""
    from minispore.backends import cpu
    from minispore.backends.cpu import native_sink
    from minispore.backends.cpu.native_jit import NativeUnavailable

    def unavailable(graph, backend=None):
        raise NativeUnavailable("no CBLAS gemm/gemv/dot/syrk in numpy's bundled libraries")
    monkeypatch.setattr(native_sink, "NativeProgram", unavailable)

    def f(x):
        return ops.relu(x) * 2
    with pytest.warns(RuntimeWarning, match=r"runs kernel by kernel \(as O1\) because the CPU "
                                            r"sink cannot lower any graph on this machine: no "
                                            r"CBLAS"):
        out, entry = _compile(ms.jit(f), Tensor(np.array([-1.0, 2.0], np.float32)),
                              allow=(RuntimeWarning,))
    assert type(entry.program) is Program
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 4.0])
    assert cpu.get().bprop_program(entry.graph) is None


def _rotate(a, b):
    """Carried values that trade places: the next state must not overwrite what it reads."""
    i = ops.zeros((), ms.int32)
    while i < 3:
        a, b = b, a + b
        i = i + 1
    return a, b


def _doubling(x):
    while x.sum() < 10:
        x = x * 2
    return x


@pytest.mark.parametrize("fn,args", [
    (control, (Tensor(np.linspace(-1, 2, 12).reshape(4, 3)), Tensor(np.int32(3)))),
    (_rotate, (Tensor(np.ones(2, np.float32)), Tensor(np.full(2, 2.0, np.float32)))),
    (_doubling, (Tensor(np.ones(3, np.float32)),)),
], ids=["while-if", "rotating-state", "one-carried-value"])
def test_tensor_control_flow_is_native_and_equals_pynative(fn, args):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = fn(*args)
    got, entry = _compile(ms.jit(fn), *args)
    assert isinstance(entry.program, NativeProgram)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


def test_gradients_through_if_and_while_are_native():
    def f(x):
        return control(x, Tensor(np.int32(2)))[1].sum()
    x = Tensor(np.linspace(-1, 2, 12).reshape(4, 3))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = ms.grad(f)(x).asnumpy()
    got, entry = _compile(ms.jit(ms.grad(f)), x)
    assert isinstance(entry.program, NativeProgram)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_broadcast_reductions_and_softmax_against_numpy(dtype):
    def f(a, b, c):
        h = ops.matmul(a, b) + c
        return (ops.log_softmax(h, -1), ops.softmax(h, 0), h.sum(axis=0), h.mean(),
                ops.amax(h, axis=1, keep_dims=True), ops.transpose(h, (1, 0)),
                ops.matmul(ops.transpose(a, (1, 0)), a))
    r = np.random.default_rng(3)
    a = r.standard_normal((4, 5)).astype(dtype)
    b = r.standard_normal((5, 3)).astype(dtype)
    c = r.standard_normal(3).astype(dtype)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = [t.asnumpy() for t in f(Tensor(a), Tensor(b), Tensor(c))]
    got, entry = _compile(ms.jit(f), Tensor(a), Tensor(b), Tensor(c))
    assert isinstance(entry.program, NativeProgram)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for g, e in zip(got, eager):
        g = g.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def test_step_counter_in_integers_and_data_sink_is_one_call():
    acc = ms.Parameter(Tensor(np.zeros(3, np.float32)), name="acc")
    count = ms.Parameter(Tensor(np.zeros((), np.int32)), name="count")

    def step(x):
        ops.assign(acc, acc + x * 2)
        ops.assign(count, count + 1)
        return acc.sum()
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = ms.data_sink(step, [(x,) for x in xs], sink_size=4)()
    (entry,) = graph_compile.cache.entries()
    assert isinstance(entry.program, NativeProgram)
    np.testing.assert_array_equal(acc.asnumpy(), xs.sum(0) * 2)
    assert int(count.asnumpy()) == 4
    assert float(out.asnumpy()) == float(xs.sum() * 2)


def test_a_large_elementwise_loop_is_split_over_threads_with_the_same_result(monkeypatch):
    """Above native_lower's thresholds a flat loop runs in chunks on pthreads (lowered here to
    1000 elements and 3 threads), bit-identical to the serial loop, remainder chunk included."""
    from minispore.backends.cpu import native_lower

    def f(x):
        return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x * x / 3
    x = Tensor(np.linspace(-5, 5, 4096 * 3 + 77, dtype=np.float32))     # 4 chunks of 4096
    serial, e1 = _compile(ms.jit(f), x)
    assert "pthread_create" not in e1.program.ir_text
    monkeypatch.setattr(native_lower, "PARALLEL_MIN_TRANSCENDENTAL", 1000)
    monkeypatch.setattr(native_jit, "threads", lambda: 3)
    split, e2 = _compile(ms.jit(f), x)
    assert e2.program.ir_text.count("call i32 @\"pthread_create\"") == 2      # 3 threads
    np.testing.assert_array_equal(split.asnumpy(), serial.asnumpy())


def test_save_graphs_writes_the_native_program_llvm_ir(tmp_path):
    ms.set_context(save_graphs=True, save_graphs_path=str(tmp_path))

    def f(x):
        return ops.relu(x) * 2
    # a host without Graphviz gets DOT files only, and a warning saying so
    _compile(ms.jit(f), Tensor(np.ones(3, np.float32)),
             allow=("save_graphs: Graphviz's `dot` is not installed",))
    (ll,) = tmp_path.glob("*_native.ll")
    assert 'define i32 @"graph"(i8** noalias' in ll.read_text()


@pytest.mark.parametrize("mkn", [(1, 300, 70), (70, 300, 1), (1, 300, 1), (70, 1, 50), (5, 30, 7)],
                         ids=["vector-matrix", "matrix-vector", "dot", "outer", "matrix"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_picks_numpys_blas_routine_so_it_equals_pynative_bit_for_bit(mkn, ta, tb):
    """gemv for a vector side, dot for 1x1, numpy's own loop for K = 1, gemm otherwise (gemm for
    a vector side differs from np.matmul in the last bits)."""
    M, K, N = mkn
    r = np.random.default_rng(5)
    a = Tensor(r.standard_normal((K, M) if ta else (M, K)).astype(np.float32))
    b = Tensor(r.standard_normal((N, K) if tb else (K, N)).astype(np.float32))

    def f(a, b):
        return ops.matmul(a, b, transpose_a=ta, transpose_b=tb)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = f(a, b).asnumpy()
    got, entry = _compile(ms.jit(f), a, b)
    assert isinstance(entry.program, NativeProgram)
    np.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("shape,ta,tb", [((50, 30), False, True), ((50, 30), True, False),
                                         ((3, 20, 10), False, True)])
def test_a_matrix_times_its_own_transpose_uses_syrk_like_numpy(shape, ta, tb):
    x = Tensor(np.random.default_rng(6).standard_normal(shape).astype(np.float32))

    def f(x):
        return ops.matmul(x, x, transpose_a=ta, transpose_b=tb)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = f(x).asnumpy()
    got, entry = _compile(ms.jit(f), x)
    assert "minispore_ssyrk" in entry.program.ir_text
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_batch_norm_and_layer_norm_are_native_and_equal_pynative():
    """Training and inference batch norm (and its running statistics) and layer norm: the
    native program equals PyNative bit for bit (whose norm kernels are the same lowering)."""
    from minispore import nn
    r = np.random.default_rng(8)
    x4 = Tensor(r.standard_normal((4, 3, 5, 5)).astype(np.float32))
    x3 = Tensor(r.standard_normal((4, 6, 8)).astype(np.float32))
    got = {}
    for mode in (ms.GRAPH_MODE, ms.PYNATIVE_MODE):
        graph_compile.clear_cache()
        ms.set_context(mode=mode, jit_level="O2")
        bn, ln = nn.BatchNorm2d(3), nn.LayerNorm((8,), begin_norm_axis=-1,
                                                  begin_params_axis=-1)
        _alive[:] = [bn, ln]
        bn.set_train(True)
        train = bn(x4).asnumpy()
        bn.set_train(False)
        got[mode] = (train, bn(x4).asnumpy(), ln(x3).asnumpy(), bn.moving_mean.asnumpy(),
                     bn.moving_variance.asnumpy(),
                     {type(e.program).__name__ for e in graph_compile.cache.entries()})
    native, eager = got[ms.GRAPH_MODE], got[ms.PYNATIVE_MODE]
    assert native[5] == {"NativeProgram"} and eager[5] == set()
    for a, b in zip(native[:5], eager[:5]):
        np.testing.assert_array_equal(a, b)


def test_random_ops_and_dropout_are_native_and_equal_pynative_bit_for_bit():
    x = Tensor(np.random.default_rng(9).standard_normal((64, 33)).astype(np.float32))

    def f(x):
        return (ops.rand(5, 7, seed=3), ops.randn(4, 9, seed=5), ops.randint(2, 9, (6,), seed=7),
                ops.dropout(x, p=0.3, seed=11))
    ms.set_seed(1)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = [o.asnumpy() for o in f(x)]
    ms.set_seed(1)
    out, entry = _compile(ms.jit(f), x)
    assert isinstance(entry.program, NativeProgram)
    for a, b in zip(out, want):
        np.testing.assert_array_equal(a.asnumpy(), b)


def test_indexing_is_native_and_an_index_out_of_range_raises_like_pynative():
    """gather with an index out of range: the native program returns an error code and the
    same IndexError as PyNative is raised; the Parameter assigned in that graph is unchanged."""
    table = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    acc = ms.Parameter(Tensor(np.zeros(3, np.float32)), name="acc")

    def f(t, i):
        ops.assign(acc, acc + 1)
        return ops.gather(t, i, 0), ops.concat((t, t * 2), 1)[1:3, ::2], ops.argmax(t, 1)
    ok = Tensor(np.array([3, -1, 0], np.int32))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = [o.asnumpy() for o in f(table, ok)]
    acc.set_data(Tensor(np.zeros(3, np.float32)))
    got, entry = _compile(ms.jit(f), table, ok)
    assert isinstance(entry.program, NativeProgram)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w)
    before = acc.asnumpy().copy()
    with pytest.raises(IndexError, match=r"^gather: index 4 is out of range for axis 0 of size "
                                         r"4; valid indices are -4 to 3\n"):
        ms.jit(f)(table, Tensor(np.array([0, 4, 1], np.int32)))
    np.testing.assert_array_equal(acc.asnumpy(), before)


def _gather_twice(x, i):
    y = x * 2.0
    return ops.gather(y, i, 1)


@pytest.mark.parametrize("level", ["O2", "O1", "O0"])
@pytest.mark.parametrize("index", [5, -5])
def test_compiled_index_errors_name_the_axis_the_index_the_range_and_the_line(level, index):
    """An index out of range in a compiled graph raises PyNative's IndexError (the op, the
    axis, the bad index, the valid range), followed by the user's source line of the node, in
    the native O2 program and in the kernel-by-kernel executor of O0/O1."""
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    bad = Tensor(np.array([0, index, 1], np.int32))
    head = (rf"gather: index {index} is out of range for axis 1 of size 4; valid indices are "
            rf"-4 to 3")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(IndexError, match="^" + head + "$"):
        _gather_twice(x, bad)
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    with pytest.raises(IndexError) as info:
        ms.jit(_gather_twice)(x, bad)
    assert type(graph_compile.last_compiled().program) is \
        (NativeProgram if level == "O2" else Program)
    msg = str(info.value)
    assert re.match("^" + head + r'\n  File ".*test_native_sink\.py", line \d+\n'
                    r"    return ops\.gather\(y, i, 1\)\n", msg), msg


def test_logic_on_bools_and_logsumexp_are_native():
    def f(a, b, x):
        return ops.logical_and(a, ops.logical_not(b)), ops.logsumexp(x, 1)
    r = np.random.default_rng(10)
    a, b = (Tensor(r.random(6) > 0.5) for _ in range(2))
    x = Tensor(r.standard_normal((3, 5)))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = [o.asnumpy() for o in f(a, b, x)]
    got, entry = _compile(ms.jit(f), a, b, x)
    assert isinstance(entry.program, NativeProgram)
    np.testing.assert_array_equal(got[0].asnumpy(), want[0])
    np.testing.assert_allclose(got[1].asnumpy(), want[1], rtol=1e-14)


@pytest.mark.parametrize("c", [3.0, 0.1, -7.0, 1e-38, 3e38, 1e-45, 0.0, -0.0, np.inf, np.nan])
def test_float32_division_by_a_constant_is_the_division_bit_for_bit(c):
    """x / c with c known at compile time is a float64 multiply by 1/c rounded once to float32
    (no divider): the same bits as IEEE division on random bit patterns, subnormals, zeros,
    infinities and NaNs."""
    r = np.random.default_rng(7)
    bits = r.integers(0, 2**32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), np.float32(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4028235e38, 1.1754944e-38])])
    cf = np.float32(c)

    def f(v):
        return v / cf
    out, entry = _compile(ms.jit(f), Tensor(x))
    assert isinstance(entry.program, NativeProgram)
    assert "fdiv" not in entry.program.ir_text
    with np.errstate(all="ignore"):
        want = x / cf
    got = out.asnumpy()
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def test_a_transcendental_loop_asks_llvm_to_interleave_vector_iterations():
    def f(x):
        return ops.tanh(x) * 2

    def g(x):
        return x * 2 + 1
    x = Tensor(np.ones(64, np.float32))
    _, e1 = _compile(ms.jit(f), x)
    _, e2 = _compile(ms.jit(g), x)
    assert '"llvm.loop.interleave.count", i32 4' in e1.program.ir_text
    assert "interleave.count" not in e2.program.ir_text


def _divmod_inputs(dtype):
    if np.dtype(dtype).kind == "f":
        v = np.array([7.5, -7.5, 3.0, -3.0, 0.0, -0.0, 1e-30, 5e30, np.inf, -np.inf, np.nan, 2.5],
                     dtype)
    elif np.dtype(dtype).kind == "u":
        v = np.array([7, 3, 0, 1, 255, 5, 2, 128], dtype)
    else:
        info = np.iinfo(dtype)
        v = np.array([7, -7, 3, -3, 0, 1, -1, info.min, info.max, 5, 2, -2], dtype)
    x, y = np.meshgrid(v, v, indexing="ij")
    return Tensor(x.ravel().copy()), Tensor(y.ravel().copy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8,
                                   np.uint8])
def test_floor_div_and_mod_lower_natively_as_pynative_computes_them(dtype):
    """numba's float_divmod port (signed zeros, NaN, inf, x // 0 = x / 0, x % 0 = fmod) and
    integer floor division (0 for a zero divisor and for MIN // -1): the native program agrees
    with PyNative's kernels bit for bit and raises nothing."""
    def f(x, y):
        return x // y, x % y
    x, y = _divmod_inputs(dtype)
    with np.errstate(all="ignore"):
        (q, r), entry = _compile(ms.jit(f), x, y)
        assert isinstance(entry.program, NativeProgram)
        ms.set_context(mode=ms.PYNATIVE_MODE)
        nq, nr = f(x, y)
    for got, want in ((q, nq), (r, nr)):
        g, w = got.asnumpy(), want.asnumpy()
        np.testing.assert_array_equal(np.isnan(g) if g.dtype.kind == "f" else g == g,
                                      np.isnan(w) if w.dtype.kind == "f" else w == w)
        ok = ~np.isnan(w) if w.dtype.kind == "f" else np.ones(w.shape, bool)
        np.testing.assert_array_equal(g[ok].view(f"u{g.itemsize}"), w[ok].view(f"u{w.itemsize}"))


def test_shifts_lower_natively():
    def f(x, s):
        return x << s, x >> s
    x = Tensor(np.array([1, -8, 1000, -1, 7], np.int32))
    s = Tensor(np.array([0, 1, 3, 4, 2], np.int32))
    (l, r), entry = _compile(ms.jit(f), x, s)
    assert isinstance(entry.program, NativeProgram)
    np.testing.assert_array_equal(l.asnumpy(), x.asnumpy() << s.asnumpy())
    np.testing.assert_array_equal(r.asnumpy(), x.asnumpy() >> s.asnumpy())


def test_print_inside_a_native_loop_prints_every_iteration_and_in_data_sink_steps(capsys):
    """A Print node calls back into Python from the native code, inside a While and in every
    step of a data sink's native N-step loop, with O0's text."""
    def f(x):
        while x.sum() < 4:
            print("x =", x, "flag", x > 1)
            x = x + 1
        return x
    x = Tensor(np.array([0.5, 1.0], np.float32))
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O0")
    graph_compile.clear_cache()
    ms.jit(f)(x)
    want = capsys.readouterr().out
    out, entry = _compile(ms.jit(f), x)
    assert isinstance(entry.program, NativeProgram)
    assert capsys.readouterr().out == want and want.count("x =\nTensor(shape=[2]") == 2

    acc = ms.Parameter(Tensor(np.zeros(2, np.float32)), name="acc_print")

    def step(b):
        print("batch", b)
        ops.assign(acc, acc + b)
        return acc.sum()
    graph_compile.clear_cache()
    ms.data_sink(step, [(np.full(2, k, np.float32),) for k in range(3)], sink_size=3)()
    (entry,) = graph_compile.cache.entries()
    assert isinstance(entry.program, NativeProgram)
    from minispore.core.graph.execute import _fmt
    assert capsys.readouterr().out.splitlines() == [      # one argument a line
        line for k in range(3) for line in ("batch", _fmt(np.full(2, k, np.float32)))]
    np.testing.assert_array_equal(acc.asnumpy(), [3.0, 3.0])
