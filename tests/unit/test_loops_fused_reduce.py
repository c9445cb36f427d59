"""The fused reductions written once (backends/cpu/loops/fused_reduce.py): the loop-builder nodes
they add (a loop with a start and a step, the `template` value, a float32 scratch row) give the same bits rendered by
numba and by LLVM, the O1 kernel and the O2 native lowering are renderings of the one
definition, and over a set of fused reductions (dtypes, axes, keep_dims, broadcast inputs, NaN,
sizes around the LANES unroll) O1 and O2 agree bit for bit."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, ops
from minispore.backends.cpu import fused_reduce
from minispore.backends.cpu.loops import fused_reduce as loops_fused_reduce
from minispore.backends.cpu.loops.builder import definition, template
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.backends.cpu.render import llvm as render_llvm
from minispore.backends.cpu.render import numba_source
from minispore.core import scalar_expr as E
from minispore.core.graph import compile as graph_compile
from minispore.core.graph import ir
from loops_harness import llvm_run, same_bits


@definition
def strided_template(b, expr, compute: str, dtype: str):
    """out[r, c] = expr(x[r, c], m[r, c]) over columns in steps of 3, the remainder columns
    minus 1 (float64 arithmetic, rounded by the store)."""
    x, m = b.input("x", 2), b.input("m", 2)
    R, C = x.dims
    out = b.output("out", (R, C), dtype=dtype)
    with b.loop(R, "r") as r:
        with b.loop(C - C % 3, "j", step=3) as j:
            for u in range(3):
                b.store(out, (r, j + u), template(expr, (x[r, j + u], m[r, j + u]), compute,
                                                  dtype))
        with b.loop(C, "c", start=C - C % 3) as c:
            b.store(out, (r, c), template(expr, (x[r, c], m[r, c]), compute, dtype) - 1.0)


_EXPR = E.where(E.arg(1), E.exp(E.arg(0)) * 0.5, E.arg(0) / 3.0 + 1)


@pytest.mark.parametrize("np_dtype,compute,dtype", [
    (np.float32, "float32", "float32"), (np.float64, "float64", "float64"),
    (np.float64, "float64", "float32")])
def test_strided_loops_and_templates_rendered_by_numba_and_by_llvm_give_thesame_bits(
        np_dtype, compute, dtype):
    rng = np.random.default_rng(11)
    seen = []
    for shape in ((4, 9), (3, 7), (2, 2), (1, 0)):
        x = (rng.standard_normal(shape) * 4).astype(np_dtype)
        if x.size:
            x.flat[1] = np.nan
        m = rng.random(shape) < 0.5
        params = {"expr": _EXPR, "compute": compute, "dtype": dtype}
        mod = numba_source.module(strided_template, **params)
        assert "range(0, (x.shape[1] - (x.shape[1] % 3)), 3)" in mod.SOURCE
        eager = mod.kernel(x, m)
        (native,) = llvm_run(strided_template, params, {"x": x, "m": m},
                              {"out": (shape, np.dtype(dtype))})
        assert eager.dtype == np.dtype(dtype)
        assert same_bits(eager, native), shape
        seen.append(eager.reshape(-1))
    seen = np.concatenate(seen)
    assert np.isfinite(seen).any() and np.isnan(seen).any()


@definition
def column_min(b):
    """out[c] = 1.5 * min over rows of x[:, c] (NaN wins), the running minimum in a float32
    scratch row."""
    x = b.input("x", 2)
    R, C = x.dims
    out = b.output("out", (C,), like=x)
    low = b.scratch("low", C, dtype="float32")
    with b.loop(C, "c") as c:
        b.store(low, c, float("inf"))
    with b.loop(R, "r") as r, b.loop(C, "c") as c:
        v = x[r, c]
        b.store(low, c, E.where(E.logical_or(v < low[c], E.isnan(v)), v, low[c]))
    with b.loop(C, "c") as c:
        b.store(out, c, low[c] * 1.5)


def test_a_float32_scratch_row_rendered_by_numba_and_by_llvm_gives_thesame_bits():
    x = np.random.default_rng(2).standard_normal((6, 5)).astype(np.float32)
    x[3, 1] = np.nan
    mod = numba_source.module(column_min)
    assert "np.empty((x.shape[1], ), np.float32)" in mod.SOURCE
    eager = mod.kernel(x)
    (native,) = llvm_run(column_min, {}, {"x": x}, {"out": ((5,), np.float32)})
    assert np.isnan(eager[1]) and same_bits(eager, native)
    np.testing.assert_array_equal(np.delete(eager, 1), np.delete(x.min(0) * 1.5, 1))
    assert render_llvm.scratch_bytes(column_min, {}, {"x": (6, 5)}) == 24   # 20, 8-aligned


R = np.random.default_rng(5)


def a(*shape, dtype=np.float32):
    return Tensor(R.standard_normal(shape).astype(dtype))


def _nan_rows():
    x = R.standard_normal((5, 11)).astype(np.float32)
    x[0, 1] = x[1, 10] = x[3, 4] = np.nan            # an unrolled lane, the remainder, a row
    return Tensor(x)


CASES = [
    ("sum_exp_last", lambda x: ops.sum(ops.exp(x) * 2, -1), lambda: (a(7, 13),)),
    ("sum_exp_last_f64", lambda x: ops.sum(ops.exp(x) * 2, -1),
     lambda: (a(6, 9, dtype=np.float64),)),
    ("mean_outer_inner", lambda x: ops.mean(x * x + 1, axis=(0, 2)), lambda: (a(3, 5, 6),)),
    ("mean_outer_inner_keep_f64",
     lambda x: ops.mean(ops.tanh(x) - 0.5, axis=(0, 2), keep_dims=True),
     lambda: (a(3, 5, 6, dtype=np.float64),)),
    ("max_nan_last", lambda x: ops.amax(x * 2, axis=1), lambda: (_nan_rows(),)),
    ("min_nan_keep", lambda x: ops.amin(x + 1, axis=-1, keep_dims=True), lambda: (_nan_rows(),)),
    ("max_nan_first", lambda x: ops.amax(x * 2, axis=0), lambda: (_nan_rows(),)),
    ("min_nan_all", lambda x: ops.amin(x - 3), lambda: (_nan_rows(),)),
    ("sum_all", lambda x: ops.sum(x * 1.5 + 0.25), lambda: (a(17, 3),)),
    ("sum_broadcast", lambda x, y: ops.sum(x * y - y, axis=-1), lambda: (a(4, 1, 9), a(3, 1))),
    ("min_broadcast_keep", lambda x, y: ops.amin(x - y * 2, axis=-1, keep_dims=True),
     lambda: (a(3, 1), a(1, 5))),
    ("mean_broadcast_f64",
     lambda x, y: ops.mean(ops.sigmoid(x) * y + x, axis=(1, 2), keep_dims=True),
     lambda: (a(2, 3, 4, dtype=np.float64), a(3, 1, dtype=np.float64))),
    ("sum_first_keep", lambda x: ops.sum(ops.exp(x) * x - 1, axis=0, keep_dims=True),
     lambda: (a(6, 3),)),
    ("sum_lanes_1", lambda x: ops.sum(ops.exp(x) * 2, -1), lambda: (a(3, 1),)),
    ("sum_lanes_5", lambda x: ops.sum(ops.exp(x) * 2, -1), lambda: (a(3, 5),)),
    ("sum_lanes_8", lambda x: ops.sum(ops.exp(x) * 2, -1), lambda: (a(2, 8),)),
    ("sum_0d", lambda x: ops.sum(x * 2 + 1), lambda: (a(),)),
    ("sum_middle", lambda x: ops.sum(x * x, axis=1), lambda: (a(3, 6, 5),)),
    ("sum_bool_input", lambda x: ops.sum(ops.cast(x > 0, ms.float32) * x, -1),
     lambda: (a(5, 10),)),
]


def _run(fn, args, level):
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    out = ms.jit(fn)(*args).asnumpy()
    entry = graph_compile.last_compiled()
    fused = [n for n in entry.graph.all_nodes()
             if n.op == ir.FUSED and n.attr("reduce") is not None]
    assert len(fused) == 1, level
    return out, entry.program


@pytest.mark.parametrize("name,fn,make", CASES, ids=[c[0] for c in CASES])
def test_fused_reductions_at_o1_and_o2_give_thesame_bits(name, fn, make):
    args = make()
    o1, program1 = _run(fn, args, "O1")
    o2, program2 = _run(fn, args, "O2")
    assert not isinstance(program1, NativeProgram) and isinstance(program2, NativeProgram)
    assert same_bits(o1, o2), name
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = fn(*args).asnumpy()
    tol = 1e-12 if eager.dtype == np.float64 else 2e-5
    np.testing.assert_allclose(o1, eager, rtol=tol, atol=1e-6)


def test_the_o1_kernel_and_the_o2_lowering_render_the_same_definition():
    """A fused reduction compiled at O1 renders the definition with numba (its kernel module
    says which definition it is) and at O2 renders the same definition in LLVM."""
    defn = loops_fused_reduce.fused_reduce
    x = a(4, 6)

    def f(x):                          # a constant no other test uses: a new rendering
        return ops.sum(ops.exp(x) * 0.8125 + x, -1)
    before = dict(defn.renders)
    o1, _ = _run(f, (x,), "O1")
    assert defn.renders["numba"] == before.get("numba", 0) + 1
    o2, program = _run(f, (x,), "O2")
    assert isinstance(program, NativeProgram)
    assert defn.renders["llvm"] > before.get("llvm", 0)
    red = ir.Reduction("sum", (1,), False, (4, 6))
    expr = E.exp(E.arg(0)) * 0.8125 + E.arg(0)
    mod = fused_reduce.kernel_module(fused_reduce.definition_params(
        expr, [(4, 6)], red, np.float32, np.float32))
    assert mod.DEFINITION == defn.name
    assert same_bits(o1, o2)


def test_inputs_that_do_not_broadcast_to_the_loop_shape_are_rejected():
    red = ir.Reduction("sum", (1,), False, (4, 6))
    with pytest.raises(ValueError, match="do not broadcast to the loop shape"):
        fused_reduce.definition_params(E.arg(0), [(1, 6)], red, np.float32, np.float32)
