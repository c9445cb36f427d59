"""The pooling family of backends/cpu/loops/pool.py and the protocol nodes it adds (a guarded
block `b.when`, a value in a buffer's dtype `like`, the range test `within`): a guarded nest
rendered by numba and by LLVM gives the same bits, the eager pool kernels and the native
lowerings are rendered from the same definitions, and over the op database's samples of the
pools, and over NaN, inf and ties, PyNative and jit_level O2 (the native program) agree bit for
bit."""

import numpy as np
import pytest

import minispore as ms
from minispore.backends.cpu import windows
from minispore.backends.cpu.loops import pool
from minispore.backends.cpu.loops.builder import definition, like, maximum, within
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.backends.cpu.render import numba_source
from minispore.core import dtype as dt
from minispore.core.graph import compile as graph_compile
from minispore.core.primitive import REGISTRY, Meta
from loops_harness import llvm_run, same_bits
from helpers import as_tuple, run_op
from opdb import CASES, rng_for

POOL_OPS = tuple(pool.DEFINITIONS)


@definition
def padded_row_max(b, k: int, pad: int):
    """A 1-D max pool of window k, stride 1, `pad` elements of padding on the left: the taps
    outside the row are skipped by a guarded block, the running max starts at -inf in x's own
    dtype, and a guarded store keeps the index of the first maximum."""
    x = b.input("x", 2)
    wo = b.scalar("wo", "int64")
    R, W = x.dims
    out = b.output("out", (R, wo), like=x)
    arg = b.output("arg", (R, wo), dtype="int64")
    with b.loop(R, "r") as r, b.loop(wo, "o") as o:
        best = b.var("best", like(x, float("-inf")))
        at = b.var("at", -1)
        with b.loop(k, "j") as j:
            t = b.var("t", o + j - pad)
            with b.when(within(t, W)):
                v = b.var("v", x[r, t])
                with b.when(v > best):
                    b.set(at, t)
                b.set(best, maximum(best, v))
        b.store(out, (r, o), best)
        b.store(arg, (r, o), at)


def _out_shape(x, attrs) -> tuple:
    op = REGISTRY["max_pool2d"]
    return op.infer(Meta(x.shape, dt.to_dtype(x.dtype)), **{**op.attrs, **attrs}).shape


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_a_guarded_nest_rendered_by_numba_and_by_llvm_gives_thesame_bits(np_dtype):
    x = np.array([[3, 1, 3, -2, np.nan, 0, 5], [-np.inf] * 7, [2, 2, 2, 1, 1, 1, 0]], np_dtype)
    k, pad = 3, 2
    wo = x.shape[1] + pad - k + 1
    mod = numba_source.module(padded_row_max, k=k, pad=pad)
    assert "if (0 <= t < x.shape[1]):" in mod.SOURCE and "x.dtype.type(" in mod.SOURCE
    eager = mod.kernel(x, wo)
    native = llvm_run(padded_row_max, {"k": k, "pad": pad}, {"x": x},
                       {"out": ((3, wo), np_dtype), "arg": ((3, wo), np.int64)}, {"wo": wo})
    assert eager[0].dtype == np_dtype and eager[1].dtype == np.int64
    assert eager[1][0].tolist() == [0, 0, 0, 2, 2, 5, 6] and (eager[1][1] == -1).all()
    assert (eager[0][1] == -np.inf).all()             # a window of -inf only: -inf, no index
    for a, b in zip(eager, native):
        assert same_bits(a, b)


def test_a_guarded_block_skips_its_statements_both_ways():
    @definition
    def count_positive(b):
        x = b.input("x", 1)
        out = b.output("out", (1,), like=x)
        s = b.var("s", like(x, 0.0))
        with b.loop(x.dims[0], "i") as i:
            with b.when(x[i] > 0.0):
                b.set(s, s + x[i])
        b.store(out, 0, s)
    x = np.array([1.5, -2.0, np.nan, 0.25, -0.0], np.float32)
    eager = numba_source.module(count_positive).kernel(x)
    (native,) = llvm_run(count_positive, {}, {"x": x}, {"out": ((1,), np.float32)}, {})
    assert eager[0] == 1.75 and same_bits(eager, native)


_ATTRS = dict(kernel_size=(3, 2), stride=(2, 1), pad_mode="pad", pad=(1, 1, 0, 1))


def test_eager_pool_kernels_and_native_lowerings_render_the_same_definitions():
    """The eager kernel of each pooling op is the numba rendering of its loops/pool.py
    definition, and the native program of a graph holding the op renders the same definition
    in LLVM, giving PyNative's bits."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    ys = _out_shape(x, _ATTRS)
    args = {"max_pool2d": (x,), "max_pool2d_grad": (x, rng.standard_normal(ys).astype(np.float32)),
            "max_pool2d_gather": (x, rng.standard_normal(x.shape).astype(np.float32)),
            "avg_pool2d": (x,), "avg_pool2d_grad": (rng.standard_normal(ys).astype(np.float32),)}
    for name, defn in pool.DEFINITIONS.items():
        attrs = dict(_ATTRS)
        if name.startswith("avg"):
            attrs["count_include_pad"] = False
        if name == "avg_pool2d_grad":
            attrs["input_shape"] = x.shape
        mod, fname, _ = windows.pool_kernel(name, x.shape, attrs)
        assert fname == "kernel" and mod.DEFINITION == defn.name, name
        ms.set_context(mode=ms.PYNATIVE_MODE)
        eager = run_op(name, args[name], attrs).asnumpy()
        before = defn.renders["llvm"]
        graph_compile.clear_cache()
        ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
        native = run_op(name, args[name], attrs).asnumpy()
        assert isinstance(graph_compile.last_compiled().program, NativeProgram), name
        assert defn.renders["llvm"] == before + 1, name
        assert same_bits(eager, native), name


def test_a_window_geometry_is_compiled_in_and_shapes_are_run_time_values():
    """One eager kernel per window geometry, serving every image size whose padding is the
    same; a small max pool window is unrolled, each tap tested only on the sides where it may
    fall in the padding; a large one keeps constant-count loops with both tests."""
    valid = dict(kernel_size=(2, 2), stride=(2, 2), pad_mode="valid", pad=(0, 0, 0, 0))
    m1, _, e1 = windows.pool_kernel("max_pool2d", (1, 1, 4, 4), valid)
    m2, _, e2 = windows.pool_kernel("max_pool2d", (3, 2, 10, 8), valid)
    m3, _, _ = windows.pool_kernel("max_pool2d", (1, 1, 4, 4), dict(valid, stride=(1, 1)))
    assert m1 is m2 and m1 is not m3 and (e1, e2) == ((2, 2), (5, 4))
    assert "for i in" not in m1.SOURCE and "if (" not in m1.SOURCE.split("def kernel")[1]
    m4, _, _ = windows.pool_kernel("max_pool2d", (1, 1, 4, 4),
                                   dict(valid, pad_mode="pad", pad=(1, 0, 0, 0)))
    body = m4.SOURCE.split("def kernel")[1]
    assert body.count("if (y >= 0):") == 1 and "< x.shape" not in body and "xx >= 0" not in body
    big = dict(kernel_size=(9, 8), stride=(1, 1), pad_mode="same", pad=(0, 0, 0, 0))
    assert 9 * 8 > pool.UNROLL_TAPS
    m5, _, _ = windows.pool_kernel("max_pool2d", (1, 1, 12, 12), big)
    assert "for i in range(9):" in m5.SOURCE and "(0 <= y < x.shape[2])" in m5.SOURCE
    x = np.random.default_rng(5).standard_normal((1, 2, 12, 12)).astype(np.float32)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = run_op("max_pool2d", (x,), big).asnumpy()
    np.testing.assert_array_equal(eager, REGISTRY["max_pool2d"].ref(x, **big))
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    assert same_bits(eager, run_op("max_pool2d", (x,), big).asnumpy())
    assert isinstance(graph_compile.last_compiled().program, NativeProgram)


def _pool_cases():
    return [c for c in CASES if c.name in POOL_OPS]


@pytest.mark.parametrize("case", _pool_cases(), ids=[c.name for c in _pool_cases()])
def test_pool_family_pynative_and_o2_give_thesame_bits(case):
    for dtype in case.dtypes:
        for s in case.samples(rng_for("forward", case.name, dtype), dtype):
            ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O0")
            eager = [t.asnumpy() for t in as_tuple(run_op(case.name, s.args, s.attrs))]
            graph_compile.clear_cache()
            ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
            native = [t.asnumpy() for t in as_tuple(run_op(case.name, s.args, s.attrs))]
            assert isinstance(graph_compile.last_compiled().program, NativeProgram), \
                (case.name, dtype, s.desc)
            for k, (a, b) in enumerate(zip(eager, native)):
                assert same_bits(a, b), f"{case.name} {dtype} {s.desc} out {k}"


def _nonfinite(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 2, shape).astype(dtype)       # ties
    flat = x.reshape(-1)
    at = rng.permutation(flat.size)
    flat[at[: flat.size // 6]] = np.nan
    flat[at[flat.size // 6: flat.size // 3]] = -np.inf
    flat[at[flat.size // 3: flat.size // 2]] = np.inf
    x[0, 0] = -np.inf                                   # a plane of -inf: windows with no maximum
    return x


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16])
def test_max_pools_route_to_the_first_maximum_with_nan_inf_and_ties(np_dtype):
    """max_pool2d (NaN if a tap is NaN, -inf for a window of -inf) against its numpy
    reference; max_pool2d_grad and max_pool2d_gather route to the first maximum (a NaN counting
    as the maximum; a window of -inf to its first tap, as MindSpore's MaxPoolGrad and the
    reference do); PyNative and O2 bit for bit. avg_pool2d
    gives the same values both ways (inf - inf is a NaN whose sign bit LLVM leaves
    unspecified)."""
    for seed, (shape, attrs) in enumerate([
            ((2, 2, 7, 6), _ATTRS),
            ((1, 3, 6, 6), dict(kernel_size=(2, 2), stride=(2, 2), pad_mode="valid",
                                pad=(0, 0, 0, 0))),
            ((1, 2, 5, 5), dict(kernel_size=(3, 3), stride=(1, 1), pad_mode="same",
                                pad=(0, 0, 0, 0))),
            ((1, 2, 12, 11), dict(kernel_size=(9, 8), stride=(2, 1), pad_mode="same",
                                  pad=(0, 0, 0, 0)))]):          # more than UNROLL_TAPS taps
        x = _nonfinite(shape, np_dtype, seed)
        ys = _out_shape(x, attrs)
        rng = np.random.default_rng(seed + 10)
        dy = rng.standard_normal(ys).astype(np_dtype)
        g = rng.standard_normal(shape).astype(np_dtype)
        for name, args in (("max_pool2d", (x,)), ("max_pool2d_grad", (x, dy)),
                           ("max_pool2d_gather", (x, g)), ("avg_pool2d", (x,))):
            a = dict(attrs, count_include_pad=False) if name == "avg_pool2d" else attrs
            ms.set_context(mode=ms.PYNATIVE_MODE)
            eager = run_op(name, args, a).asnumpy()
            if name in ("max_pool2d", "avg_pool2d"):
                with np.errstate(invalid="ignore"):        # inf - inf in the reference
                    ref = REGISTRY[name].ref(*args, **{**REGISTRY[name].attrs, **a})
                np.testing.assert_allclose(eager, ref, rtol=1e-3 if np_dtype == np.float16
                                           else 1e-6)
            else:                    # the plane of -inf routes to each window's first tap
                ref = REGISTRY[name].ref(*args, **{**REGISTRY[name].attrs, **a})
                tol = 1e-2 if np_dtype == np.float16 else 1e-5   # dy summed in another order
                np.testing.assert_allclose(eager, ref, rtol=tol, atol=tol)
            graph_compile.clear_cache()
            ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
            native = run_op(name, args, a).asnumpy()
            assert isinstance(graph_compile.last_compiled().program, NativeProgram), name
            if name.startswith("max"):
                assert same_bits(eager, native), (name, shape)
            else:
                assert np.array_equal(eager, native, equal_nan=True), (name, shape)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_a_window_of_minus_inf_sends_its_gradient_to_its_first_tap_as_mindspore(mode):
    """MindSpore 2.10's MaxPoolGrad (run on MindSpore) starts a window's argmax at its first tap
    and moves it only to a larger value: a window of -inf routes dy there, or nowhere when that
    first tap is padding ('same')."""
    from minispore import nn
    x = np.full((1, 1, 5, 5), -np.inf, np.float32)
    x[0, 0, 3:, 3:] = [[1, 2], [3, 4]]
    want = {"same": np.zeros((5, 5), np.float32), "valid": np.zeros((5, 5), np.float32)}
    want["same"][3:, 3:] = 1
    want["valid"][0, 0] = want["valid"][0, 2] = want["valid"][2, 0] = want["valid"][4, 4] = 1
    ms.set_context(mode=mode)
    for pad_mode, expected in want.items():
        pool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode=pad_mode)

        def loss(t):
            return pool(t).sum()
        np.testing.assert_array_equal(ms.grad(loss)(ms.Tensor(x)).asnumpy()[0, 0], expected)
