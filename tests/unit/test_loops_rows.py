"""The loop-nest definitions of backends/cpu/loops and their two renderers (render/numba_source.py,
render/llvm.py): a loop nest rendered both ways gives the same bits, the row family's eager
kernels and native lowerings are rendered from the same definitions, and over the op database's
samples of the row family PyNative and jit_level O2 (the native program) agree bit for bit."""

import numpy as np
import pytest

import minispore as ms
from minispore.backends.cpu import kernels_row
from minispore.backends.cpu.loops import rows
from minispore.backends.cpu.loops.builder import definition, f64, i64, maximum
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.backends.cpu.render import numba_source
from minispore.core import scalar_expr as E
from minispore.core.graph import compile as graph_compile
from minispore.core.primitive import REGISTRY, apply
from loops_harness import llvm_run, same_bits
from helpers import as_tuple, run_op
from opdb import CASES, rng_for

ROW_OPS = ("softmax", "log_softmax", "logsumexp", "sparse_softmax_cross_entropy",
           "sparse_softmax_cross_entropy_grad")


@definition
def scaled_row_stats(b, scale: float):
    """A small nest touching every part of the protocol: per row, the max, a conditional sum
    with a transcendental, a scratch row, an integer input and a comparison of indices; `aux`
    is arithmetic in the input's own dtype meeting a float literal (float64, as numba types
    it)."""
    x, pick = b.input("x", 2), b.input("pick", 1)
    R, C = x.dims
    out, aux = b.output("out", (R, C), like=x), b.output("aux", (R, C), like=x)
    row = b.scratch("row", C)
    with b.loop(R, "r") as r:
        m = b.var("m", float("-inf"))
        s = b.var("s", 0.0)
        p = b.var("p", i64(pick[r]))
        with b.loop(C, "c") as c:
            v = f64(x[r, c])
            b.set(m, maximum(m, v))
            b.store(row, c, E.where(v > 0.0, E.exp(-v) * scale, v * v))
            b.set(s, s + row[c])
        with b.loop(C, "c") as c:
            hit = E.where(E.logical_or(c.eq(p), E.isnan(row[c])), 1.0, 0.0)
            b.store(out, (r, c), row[c] / s - m + hit)
            b.store(aux, (r, c), x[r, c] * x[r, c] + 0.1)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_a_loop_nest_rendered_by_numba_and_by_llvm_gives_thesame_bits(np_dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((5, 9)) * 3).astype(np_dtype)
    x[1, 2], x[3, 0] = np.nan, -np.inf
    pick = np.array([0, 8, 3, -1, 9], np.int32)
    kernel = numba_source.module(scaled_row_stats, scale=0.75).kernel
    eager = kernel(x, pick)
    native = llvm_run(scaled_row_stats, {"scale": 0.75}, {"x": x, "pick": pick},
                       {"out": (x.shape, np_dtype), "aux": (x.shape, np_dtype)})
    assert eager[0].dtype == np_dtype and np.isfinite(eager[0]).any()
    for a, b in zip(eager, native):
        assert same_bits(a, b)


def test_the_numba_rendering_reads_its_extents_at_run_time():
    """One rendered kernel serves every shape: the loop extents are the arrays' shapes."""
    mod = numba_source.module(scaled_row_stats, scale=0.75)
    assert numba_source.module(scaled_row_stats, scale=0.75) is mod
    assert "range(x.shape[0])" in mod.SOURCE and "range(x.shape[1])" in mod.SOURCE
    for shape in ((1, 1), (3, 17), (0, 4)):
        x = np.linspace(-2, 2, int(np.prod(shape))).reshape(shape)
        pick = np.zeros(shape[0], np.int64)
        native = llvm_run(scaled_row_stats, {"scale": 0.75}, {"x": x, "pick": pick},
                           {"out": (shape, np.float64), "aux": (shape, np.float64)})
        for a, b in zip(mod.kernel(x, pick), native):
            assert same_bits(a, b)


def test_a_loop_index_reused_inside_its_own_loop_is_rejected():
    @definition
    def clash(b):
        x = b.input("x", 2)
        with b.loop(x.dims[0], "i"), b.loop(x.dims[1], "i"):
            pass
    with pytest.raises(ValueError, match="'i' is already taken"):
        clash.trace()


def _row_cases():
    return [c for c in CASES if c.name in ROW_OPS]


def _row_losses(t, labels):
    return (apply(REGISTRY["sparse_softmax_cross_entropy"], t, labels).sum()
            + ms.ops.logsumexp(t, 1).sum() + ms.ops.log_softmax(t, -1).sum()
            + (ms.ops.softmax(t, 0) * t).sum())


def test_eager_row_kernels_and_native_lowerings_render_the_same_definitions():
    """The eager kernels are the numba renderings of loops/rows.py's definitions, and the
    native program of a graph holding the row ops (and the cross-entropy's gradient op)
    renders the same definitions in LLVM."""
    module = kernels_row.numba_source.module
    assert module(rows.softmax, log=False).DEFINITION == rows.softmax.name
    assert module(rows.softmax, log=True).DEFINITION == rows.softmax.name
    for d in (rows.sparse_softmax_cross_entropy, rows.sparse_softmax_cross_entropy_grad):
        assert module(d).DEFINITION == d.name
    defs = (rows.softmax, rows.logsumexp, rows.sparse_softmax_cross_entropy,
            rows.sparse_softmax_cross_entropy_grad)
    before = {d.name: d.renders["llvm"] for d in defs}
    x = ms.Tensor(np.linspace(-3, 3, 12).reshape(3, 4).astype(np.float32))
    labels = ms.Tensor(np.array([0, 3, 1], np.int32))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = ms.grad(_row_losses)(x, labels).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    native = ms.grad(_row_losses)(x, labels).asnumpy()
    assert isinstance(graph_compile.last_compiled().program, NativeProgram)
    for d in defs:
        assert d.renders["llvm"] > before[d.name], d.name
    assert np.isfinite(eager).all() and same_bits(eager, native)


@pytest.mark.parametrize("case", _row_cases(), ids=[c.name for c in _row_cases()])
def test_row_family_pynative_and_o2_give_thesame_bits(case):
    for dtype in case.dtypes:
        for s in case.samples(rng_for("forward", case.name, dtype), dtype):
            ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O0")
            eager = [t.asnumpy() for t in as_tuple(run_op(case.name, s.args, s.attrs))]
            ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
            native = [t.asnumpy() for t in as_tuple(run_op(case.name, s.args, s.attrs))]
            program = graph_compile.last_compiled().program
            if dtype.is_float:
                assert isinstance(program, NativeProgram), (case.name, dtype, s.desc)
            for k, (a, b) in enumerate(zip(eager, native)):
                assert same_bits(a, b), f"{case.name} {dtype} {s.desc} out {k}"
