"""Convolutions and pools in the native sink (backends/cpu/native_windows.py): each op's graph at
O2 is one NativeProgram whose results equal PyNative's (windows.py's numba kernels) bit for bit,
over strides, padding modes, dilation, groups, vector-shaped products (BLAS gemv/dot), NaN and
ties; and the digits CNN's training step is one NativeProgram equal to PyNative's bit for bit."""
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.core import dtype as dt
from minispore.core.graph import compile as graph_compile
from minispore.core.graph.execute import Program
from minispore.core.primitive import REGISTRY, Meta

from helpers import as_tuple, run_op

DTYPES = [np.float32, np.float64]

# (x shape, w shape, attrs)
CONV = [
    ((2, 3, 6, 6), (4, 3, 3, 3), {}),
    ((2, 3, 7, 6), (4, 3, 3, 3), {"stride": (2, 2), "pad_mode": "same"}),
    ((1, 4, 7, 6), (4, 2, 3, 2), {"dilation": (2, 2), "group": 2, "pad_mode": "pad",
                                  "pad": (1, 0, 2, 1)}),
    ((2, 2, 5, 5), (2, 1, 3, 3), {"group": 2, "pad_mode": "pad", "pad": (1, 1, 1, 1)}),  # gemv
    ((1, 2, 3, 3), (1, 2, 3, 3), {}),                   # 1x1 output, one filter: dot
    ((1, 3, 4, 4), (5, 3, 4, 4), {"stride": (2, 1)}),   # one output column: gemv
]
POOL = [
    ((2, 3, 6, 6), {"kernel_size": (2, 2), "stride": (2, 2)}),
    ((2, 2, 5, 5), {"kernel_size": (3, 3), "stride": (1, 1), "pad_mode": "pad",
                    "pad": (1, 1, 1, 1)}),
    ((1, 2, 5, 4), {"kernel_size": (3, 2), "stride": (2, 1), "pad_mode": "same"}),
    ((1, 2, 5, 5), {"kernel_size": (3, 3), "stride": (1, 1)}),     # overlapping, no padding
]


def _shape(name, shapes, dtype, attrs):
    op = REGISTRY[name]
    metas = [Meta(s, dt.to_dtype(np.dtype(dtype))) for s in shapes]
    return op.infer(*metas, **{**op.attrs, **attrs}).shape


def _both(name, args, attrs):
    """(PyNative results, O2 results) of one op; asserts the O2 graph ran natively."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = [t.asnumpy() for t in as_tuple(run_op(name, args, attrs))]
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = [t.asnumpy() for t in as_tuple(run_op(name, args, attrs))]
    (entry,) = graph_compile.cache.entries()
    assert isinstance(entry.program, NativeProgram), type(entry.program)
    return eager, got


def _check(name, args, attrs):
    eager, got = _both(name, args, attrs)
    for a, b in zip(eager, got):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", CONV, ids=[f"conv{k}" for k in range(len(CONV))])
def test_conv_family_equals_pynative_bit_for_bit(spec, dtype):
    xs, ws, a = spec
    r = np.random.default_rng(len(xs) + ws[0])
    x, w = r.standard_normal(xs).astype(dtype), r.standard_normal(ws).astype(dtype)
    ys = _shape("conv2d", (xs, ws), dtype, a)
    dy = r.standard_normal(ys).astype(dtype)
    _check("conv2d", (x, w), a)
    _check("conv2d_backprop_input", (dy, w), {**a, "input_shape": xs})
    _check("conv2d_backprop_filter", (x, dy), {**a, "filter_shape": ws})


@pytest.mark.parametrize("unroll", [0, 10 ** 6], ids=["loops", "straight_line"])
@pytest.mark.parametrize("spec", CONV, ids=[f"conv{k}" for k in range(len(CONV))])
def test_conv_copies_equal_pynative_on_both_paths(spec, unroll, monkeypatch):
    """The conv copies as loops (_taps_rows) and as straight-line code per (channel, image)
    (_plane_copies), forced for every geometry above."""
    from minispore.backends.cpu import native_windows
    monkeypatch.setattr(native_windows, "UNROLL_PLANE", unroll)
    test_conv_family_equals_pynative_bit_for_bit(spec, np.float32)


def _pool_input(r, xs, dtype, special):
    if not special:
        return r.standard_normal(xs).astype(dtype)
    x = r.integers(-1, 2, xs).astype(dtype)           # many ties
    flat = x.reshape(-1)
    flat[::7] = np.nan
    flat[3::11] = -np.inf
    x[0, 0, :2, :2] = -np.inf                          # a window of -inf only: no maximum
    return x


@pytest.mark.parametrize("special", [False, True], ids=["random", "nan_ties"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", POOL, ids=[f"pool{k}" for k in range(len(POOL))])
def test_max_pools_equal_pynative_bit_for_bit(spec, dtype, special):
    xs, a = spec
    r = np.random.default_rng(xs[2] * 10 + xs[3])
    x = _pool_input(r, xs, dtype, special)
    ys = _shape("max_pool2d", (xs,), dtype, a)
    _check("max_pool2d", (x,), a)
    _check("max_pool2d_grad", (x, r.standard_normal(ys).astype(dtype)), a)
    _check("max_pool2d_gather", (x, r.standard_normal(xs).astype(dtype)), a)


@pytest.mark.parametrize("include_pad", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", POOL, ids=[f"pool{k}" for k in range(len(POOL))])
def test_avg_pools_equal_pynative_bit_for_bit(spec, dtype, include_pad):
    xs, a = spec
    a = {**a, "count_include_pad": include_pad}
    r = np.random.default_rng(xs[2] * 10 + xs[3] + 1)
    x = r.standard_normal(xs).astype(dtype)
    ys = _shape("avg_pool2d", (xs,), dtype, a)
    _check("avg_pool2d", (x,), a)
    _check("avg_pool2d_grad", (r.standard_normal(ys).astype(dtype),), {**a, "input_shape": xs})


def test_a_window_op_of_mixed_dtypes_is_not_lowered_natively():
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 4)).astype(np.float32)
    dy = np.ones((1, 1, 2, 2), np.float64)
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    with pytest.warns(RuntimeWarning, match="cannot lower node 'max_pool2d_grad'"):
        run_op("max_pool2d_grad", (x, dy), {"kernel_size": (2, 2), "stride": (2, 2)})
    (entry,) = graph_compile.cache.entries()
    assert type(entry.program) is Program                   # kernel by kernel, as O1


_alive: list = []


def _digits_losses(n=3):
    from minispore.digits_demo import LeNet
    ms.set_seed(1)
    net = LeNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    _alive[:] = [step]
    r = np.random.default_rng(3)
    losses = []
    for _ in range(n):
        x = Tensor(r.random((32, 1, 8, 8)).astype(np.float32))
        y = Tensor(r.integers(0, 10, 32).astype(np.int32))
        losses.append(step(x, y).asnumpy())
    return losses, [p.asnumpy() for p in net.trainable_params()]


def test_digits_cnn_training_step_is_one_native_program_equal_to_pynative_bit_for_bit():
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    native, native_params = _digits_losses()
    (entry,) = graph_compile.cache.entries()
    assert isinstance(entry.program, NativeProgram)
    names = {n.op.name for n in entry.graph.nodes if hasattr(n.op, "name")}
    assert {"conv2d", "conv2d_backprop_filter", "max_pool2d", "max_pool2d_grad"} <= names
    ms.set_context(mode=ms.PYNATIVE_MODE)                 # README: PyNative's steps bit for bit
    eager, eager_params = _digits_losses()
    np.testing.assert_array_equal(native, eager)
    for a, b in zip(native_params, eager_params):
        np.testing.assert_array_equal(a, b)
