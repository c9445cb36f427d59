"""Fusion of a trailing reduction (passes/fuse.py, ir.Reduction): a sum/mean/max/min whose input
is a fused elementwise group read only by it becomes part of that FUSED node, and every consumer
of FUSED nodes handles it: the O1 kernel and the O2 sink (both renderings of
backends/cpu/loops/fused_reduce.py; tests/unit/test_loops_fused_reduce.py checks they agree bit
for bit), the O0 Program's fallback for backends without fused reductions, the text printer, DOT
and verify(). Results are compared with PyNative (O0 bit for bit, O1/O2 to float tolerance)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, ops
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.core.graph import compile as graph_compile
from minispore.core.graph import ir
from minispore.core.graph.dot import to_dot
from minispore.core.graph.passes.fuse import fuse

from passes_helpers import build, count, f32

RTOL = {np.float32: 2e-5, np.float64: 1e-12}
R = np.random.default_rng(7)


def a(*shape, dtype=np.float32):
    return Tensor(R.standard_normal(shape).astype(dtype))


def sum_axis1(x):
    return ops.sum((x * 1.5 + 0.3) * x, axis=1)


def mse(p, y):
    return ops.mean((p - y) ** 2)


def sum_axis0_keep(x):                       # reduced axis outermost: accumulators in memory
    return ops.sum(ops.exp(x) * x - 1, axis=0, keep_dims=True)


def max_middle_kept(x, y):                   # axes (0, 2) of rank 3, y broadcast inside
    return ops.amax(ops.tanh(x * y), axis=(0, 2))


def min_outer_broadcast(x, y):               # the group broadcasts (3,1) and (1,5) to (3,5)
    return ops.amin(x - y * 2, axis=-1, keep_dims=True)


def mean_f64(x, y):
    return ops.mean(ops.sigmoid(x) * y + x, axis=(1, 2), keep_dims=True)


def sum_scalar(x):                           # a 0-d group reduced over no axis
    return ops.sum(x * 2 + 1)


def max_nan(x):
    return ops.amax(x * 2, axis=1), ops.amin(x + 1), ops.amin(x[2:] - 1)


# NaN in an unrolled accumulator lane (row 0), in the remainder loop (row 1), nowhere (row 2)
NAN_X = Tensor(np.array([[1.0, np.nan, 3.0, 0.5, 2.0, -1.0], [-1.0, 4.0, 2.0, 7.0, 1.0, np.nan],
                         [0.0, -3.0, 9.0, 2.0, 5.0, 1.0]], np.float32))
def mse_shared(x, y):
    d = x - y                  # read twice by one node: still one fused loop
    return ops.mean(d * d)


CASES = [
    (sum_axis1, lambda: (a(4, 5),)),
    (mse_shared, lambda: (a(3, 4), a(3, 4))),
    (mse, lambda: (a(3, 4), a(3, 4))),
    (sum_axis0_keep, lambda: (a(6, 3),)),
    (max_middle_kept, lambda: (a(2, 3, 4), a(1, 3, 1))),
    (min_outer_broadcast, lambda: (a(3, 1), a(1, 5))),
    (mean_f64, lambda: (a(2, 3, 4, dtype=np.float64), a(3, 1, dtype=np.float64))),
    (sum_scalar, lambda: (a(),)),
    (max_nan, lambda: (NAN_X,)),
]


def _outs(r):
    return [o.asnumpy() for o in (r if isinstance(r, tuple) else (r,))]


def _compiled(fn, args, level):
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)      # O2 must really sink these
        out = _outs(ms.jit(fn)(*args))
        again = _outs(ms.jit(fn)(*args))                    # cached program, same result
    (entry,) = graph_compile.cache.entries()
    for x, y in zip(out, again):
        np.testing.assert_array_equal(x, y)
    return out, entry


def _fused_reductions(g: ir.Graph) -> list:
    return [n for n in g.all_nodes() if n.op == ir.FUSED and n.attr("reduce") is not None]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_fused_reduction_matches_pynative_at_every_level(fn, make):
    args = make()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = _outs(fn(*args))
    o0, entry = _compiled(fn, args, "O0")
    assert count(entry.graph, ir.FUSED) == 0                # O0 does not fuse
    for x, y in zip(o0, eager):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)
    n_red = len(eager)
    for level in ("O1", "O2"):
        got, entry = _compiled(fn, args, level)
        fused = _fused_reductions(entry.graph)
        # every reduction is absorbed: one FUSED node per output, no reduction primitive left
        assert len(fused) == n_red == count(entry.graph, ir.FUSED)
        assert not [n for n in entry.graph.all_nodes() if n.name in ir.REDUCTION_KINDS]
        for n in fused:
            assert n.attr("members")[-1] == n.attr("reduce").kind
        assert isinstance(entry.program, NativeProgram) == (level == "O2"), level
        for x, y in zip(got, eager):
            assert x.dtype == y.dtype and x.shape == y.shape, level
            np.testing.assert_allclose(x, y, rtol=RTOL[y.dtype.type], atol=1e-6, err_msg=level)


def test_o2_sink_accumulates_without_materialising_the_group():
    """The native program folds the fused group into its sum as it computes it: its arena
    (every intermediate) is far smaller than the (64, 50) group would be."""
    x = a(64, 50)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = _outs(sum_axis1(x))
    got, entry = _compiled(sum_axis1, (x,), "O2")
    assert isinstance(entry.program, NativeProgram)
    assert len(_fused_reductions(entry.graph)) == 1
    assert entry.program.arena_bytes < 64 * 50 * 4 // 8
    np.testing.assert_allclose(got[0], eager[0], rtol=RTOL[np.float32], atol=1e-6)


def test_a_group_read_by_two_reductions_is_absorbed_by_neither():
    def two(x):
        h = x * x + 1
        return h.sum(), h.mean(axis=0)
    x = a(3, 4)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = _outs(two(x))
    for level in ("O1", "O2"):
        got, entry = _compiled(two, (x,), level)
        g = entry.graph
        assert not _fused_reductions(g)
        assert count(g, ir.FUSED) == 1 and count(g, "sum") == 1 and count(g, "mean") == 1
        for p, q in zip(got, eager):
            np.testing.assert_allclose(p, q, rtol=2e-5)


def test_a_reduction_whose_input_is_also_returned_does_not_absorb_it():
    def both(x):
        h = ops.exp(x) * 2 + 1
        return h.sum(axis=1), h
    x = a(3, 4)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = _outs(both(x))
    got, entry = _compiled(both, (x,), "O1")
    assert not _fused_reductions(entry.graph) and count(entry.graph, "sum") == 1
    for p, q in zip(got, eager):
        np.testing.assert_allclose(p, q, rtol=2e-5)


@pytest.mark.parametrize("dtype", [ms.int32, ms.float16])
def test_integer_and_half_groups_stay_unfused(dtype):
    g = build(lambda b, x: ops.sum(x * 2 + 1, axis=0), ((3, 4), dtype))
    out = fuse(g)
    assert count(out, ir.FUSED) == 0 and count(out, "sum") == 1


def test_pass_output_verifies_prints_and_is_idempotent():
    g = build(lambda b, x, y: ops.mean((x - y) * (x - y), axis=1, keep_dims=True),
              ((3, 4), f32), ((1, 4), f32))
    out = fuse(g)
    ir.verify(out)
    (n,) = out.nodes[-1:]
    assert n.op == ir.FUSED and n.outputs[0] is g.outputs[0] and len(out.nodes) == 1
    red = n.attr("reduce")
    assert (red.kind, red.axes, red.keep_dims, red.shape) == ("mean", (1,), True, (3, 4))
    assert n.attr("members") == ("sub", "sub", "mul", "mean")
    assert "fused[sub+sub+mul+mean](%" in out.text() and \
        "reduce=mean(axes=(1,), keep_dims) over [3,4])" in out.text()
    assert "-> mean(axes=(1,), keep_dims) over [3,4]" in to_dot(out)
    assert fuse(out).text() == out.text()
    assert count(g, "mean") == 1 and count(g, ir.FUSED) == 0          # input untouched


@pytest.mark.parametrize("bad", [
    ir.Reduction("sum", (1,), False, (3, 5)),           # does not produce the output shape
    ir.Reduction("prod", (1,), True, (3, 4)),           # not a fusable fold
    ir.Reduction("sum", (2,), True, (3, 4)),            # axis out of range
    ir.Reduction("sum", (1,), True, (4, 4)),            # an input does not broadcast to it
])
def test_verify_rejects_malformed_reductions(bad):
    g = fuse(build(lambda b, x: ops.sum(x * x, axis=1, keep_dims=True), ((3, 4), f32)))
    (n,) = g.nodes
    n.attrs = tuple(t for t in n.attrs if t[0] != "reduce") + (("reduce", bad, ir.Reduction),)
    with pytest.raises(ir.VerifyError):
        ir.verify(g)


def test_program_falls_back_to_two_kernels_on_a_backend_without_fused_reductions():
    from minispore.backends import cpu
    from minispore.core.graph.execute import Program

    class NoFusedReductions(cpu.CPUBackend):
        fuses_reductions = False

        def fused_kernel(self, expr, in_metas, out_meta, reduce=None):
            assert reduce is None
            return super().fused_kernel(expr, in_metas, out_meta)
    backend = NoFusedReductions()
    cpu.kernels.register_all(backend)
    g = fuse(build(lambda b, x: ops.amax(ops.tanh(x) * 3, axis=0), ((4, 3), f32)))
    assert _fused_reductions(g)
    x = R.standard_normal((4, 3)).astype(np.float32)
    (out,), _ = Program(g, backend).run([x])
    np.testing.assert_allclose(out, np.max(np.tanh(x) * np.float32(3), axis=0), rtol=2e-6)


def test_gradients_of_a_fused_loss_match_pynative():
    w = ms.Parameter(a(4, 3), name="w")
    x, y = a(5, 4), a(5, 3)

    def loss(x, y):
        return ops.mean((ops.matmul(x, w) - y) ** 2) + ops.sum(ops.tanh(w) * w)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = ms.value_and_grad(loss, None, [w])(x, y)
    for level in ("O1", "O2"):
        graph_compile.clear_cache()
        ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
        got = ms.value_and_grad(loss, None, [w])(x, y)
        (entry,) = graph_compile.cache.entries()
        assert len(_fused_reductions(entry.graph)) >= 2, entry.graph.text()
        np.testing.assert_allclose(got[0].asnumpy(), eager[0].asnumpy(), rtol=2e-5)
        np.testing.assert_allclose(got[1][0].asnumpy(), eager[1][0].asnumpy(), rtol=2e-5,
                                   atol=1e-6)


def test_mlp_training_step_fuses_its_loss_and_still_matches():
    from test_jit_levels import _mlp_losses
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = _mlp_losses()
    for level in ("O1", "O2"):
        graph_compile.clear_cache()
        ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
        got = _mlp_losses()
        (entry,) = graph_compile.cache.entries()
        assert [n.attr("reduce").kind for n in _fused_reductions(entry.graph)] == ["sum"]
        np.testing.assert_allclose(got, eager, rtol=2e-5, atol=1e-6, err_msg=level)
