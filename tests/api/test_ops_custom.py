"""ops.Custom(func_type="pyfunc"): a Python function on numpy arrays as an op, forward and
gradient (a user bprop) in PyNative and graph mode. Expected values were observed running
MindSpore 2.10 (CPU) on the same calls; they are numpy's."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops, Tensor

X = np.array([1., 2., 3.], np.float32)
Y = np.array([4., 5., 6.], np.float32)


def _fwd(x, y):
    assert isinstance(x, np.ndarray) and x.dtype == np.float32
    return x * y + 1


def _bp_np(x, y, out, dout):
    return dout * y, dout * x


_BP = ops.Custom(_bp_np, out_shape=lambda a, b, c, d: (a, b), out_dtype=lambda a, b, c, d: (a, b))


def _bprop(x, y, out, dout):
    return _BP(x, y, out, dout)


def _mul_add():
    return ops.Custom(_fwd, out_shape=lambda a, b: a, out_dtype=lambda a, b: a,
                      func_type="pyfunc", bprop=_bprop)


class _Net(nn.Cell):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def construct(self, a, b):
        return self.op(a, b) * 2


@pytest.fixture(autouse=True)
def _quiet_o2():
    with warnings.catch_warnings():          # O2's "runs kernel by kernel" note
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def test_custom_forward_and_grad(mode):
    net = _Net(_mul_add())
    x, y = Tensor(X), Tensor(Y)
    # MindSpore, both modes: [10, 22, 38]; grads (2y, 2x) = [8, 10, 12], [2, 4, 6]
    assert net(x, y).asnumpy().tolist() == [10., 22., 38.]
    gx, gy = ms.grad(net, grad_position=(0, 1))(x, y)
    assert gx.asnumpy().tolist() == [8., 10., 12.] and gy.asnumpy().tolist() == [2., 4., 6.]


def test_custom_pynative_direct_call():
    cus = _mul_add()
    x, y = Tensor(X), Tensor(Y)
    r = cus(x, y)
    assert r.dtype == ms.float32 and r.asnumpy().tolist() == [5., 11., 19.]
    gx, gy = ms.grad(lambda a, b: cus(a, b).sum(), grad_position=(0, 1))(x, y)
    assert gx.asnumpy().tolist() == [4., 5., 6.] and gy.asnumpy().tolist() == [1., 2., 3.]
    # out_shape / out_dtype as values; func_type defaults to "pyfunc" (MindSpore 2.10)
    c2 = ops.Custom(_fwd, out_shape=[3], out_dtype=ms.float32)
    assert c2(x, y).asnumpy().tolist() == [5., 11., 19.]


def test_custom_shape_callable_gets_lists():
    seen = []

    def shp(a):
        seen.append(a)
        return a
    c = ops.Custom(lambda x: x * 2, out_shape=shp, out_dtype=lambda d: d)
    assert c(Tensor(np.ones((2, 3), np.float32))).shape == (2, 3)
    assert seen[0] == [2, 3] and isinstance(seen[0], list)      # MindSpore: a list


def test_custom_two_outputs_grad(mode):
    def two(x):
        return x + 1, x * 2

    def two_bp(x, out, dout):
        assert isinstance(out, tuple) and isinstance(dout, tuple) and len(dout) == 2
        return (dout[0] + dout[1] * 2,)
    c3 = ops.Custom(two, out_shape=lambda s: (s, s), out_dtype=lambda d: (d, d), bprop=two_bp)

    class Both(nn.Cell):
        def construct(self, a):
            p, q = c3(a)
            return p.sum() + 3 * q.sum()

    class First(nn.Cell):
        def construct(self, a):
            return c3(a)[0].sum()
    x = Tensor(np.array([1., 2.], np.float32))
    # MindSpore: [7, 7], and [1, 1] when only the first output is used
    assert ms.grad(Both())(x).asnumpy().tolist() == [7., 7.]
    assert ms.grad(First())(x).asnumpy().tolist() == [1., 1.]
    p, q = c3(x)
    assert p.asnumpy().tolist() == [2., 3.] and q.asnumpy().tolist() == [2., 4.]


def test_custom_mixed_output_dtypes():
    c = ops.Custom(lambda x: (x + 1, (x * 2).astype(np.int32)), out_shape=lambda s: (s, s),
                   out_dtype=lambda d: (d, ms.int32))
    p, q = c(Tensor(X))
    assert q.dtype == ms.int32 and q.asnumpy().tolist() == [2, 4, 6]
    assert p.asnumpy().tolist() == [2., 3., 4.]


def test_custom_graph_calls_back_every_run():
    ms.set_context(mode=ms.GRAPH_MODE)
    calls = []

    def f(x):
        calls.append(1)
        return x + 1
    c = ops.Custom(f, out_shape=lambda s: s, out_dtype=lambda d: d)

    class Net(nn.Cell):
        def construct(self, a):
            return c(a) + c(ops.ones((3,), ms.float32))   # a constant input: not folded
    net = Net()
    for k in range(3):
        assert net(Tensor(X)).asnumpy().tolist() == [4., 5., 6.]
    assert len(calls) == 6


def test_custom_graph_o2(mode):
    ms.set_context(jit_level="O2")
    net = _Net(_mul_add())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)     # no kernel-by-kernel fallback
        assert net(Tensor(X), Tensor(Y)).asnumpy().tolist() == [10., 22., 38.]
        gx, gy = ms.grad(net, grad_position=(0, 1))(Tensor(X), Tensor(Y))
    assert gx.asnumpy().tolist() == [8., 10., 12.] and gy.asnumpy().tolist() == [2., 4., 6.]


def test_custom_in_the_cpu_native_sink():
    """O2 on the CPU: the whole graph is one native program that calls back into Python for
    the Custom node; what the function raises is raised by the run."""
    from minispore.backends.cpu.native_sink import NativeProgram
    from minispore.core.graph import compile as graph_compile
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    calls = []

    def f(x, y):
        calls.append(1)
        return x * y + 1, (x > 1).astype(np.int32)
    c = ops.Custom(f, out_shape=lambda a, b: (a, a), out_dtype=lambda a, b: (a, ms.int32))

    class Net(nn.Cell):
        def construct(self, a, b):
            p, q = c(a * 1.5, b)
            return ops.sin(p) * 2 + q.astype(ms.float32)
    net = Net()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = [net(Tensor(X), Tensor(Y)).asnumpy() for _ in range(2)]
    assert isinstance(graph_compile.ran["last"]().program, NativeProgram) and len(calls) == 2
    x = X * 1.5
    for v in r:
        np.testing.assert_allclose(v, np.sin(x * Y + 1) * 2 + (x > 1), rtol=1e-6)
    bad = ops.Custom(lambda a: a[:1], out_shape=lambda s: s, out_dtype=lambda d: d)

    class Bad(nn.Cell):
        def construct(self, a):
            return bad(a) + 1
    for _ in range(2):
        with pytest.raises(ValueError, match=r"shape \(1,\).*\(3,\)"):
            Bad()(Tensor(X))


def test_custom_without_bprop_gradient_is_an_error(mode):
    c = ops.Custom(_fwd, out_shape=lambda a, b: a, out_dtype=lambda a, b: a)
    # MindSpore: RuntimeError "Illegal primitive Custom's bprop not defined"
    with pytest.raises(RuntimeError, match="Custom op '_fwd'.*no bprop"):
        ms.grad(_Net(c))(Tensor(X), Tensor(Y))


def test_custom_errors():
    x = Tensor(X)
    with pytest.raises(NotImplementedError, match="func_type='aot'.*pyfunc"):
        ops.Custom("./x.so:f", out_shape=[3], out_dtype=ms.float32, func_type="aot")
    with pytest.raises(NotImplementedError, match="hybrid"):
        ops.Custom(_fwd, out_shape=[3], out_dtype=ms.float32, func_type="hybrid")
    with pytest.raises(TypeError, match="out_shape"):
        ops.Custom(_fwd)
    with pytest.raises(NotImplementedError, match="reg_info"):
        ops.Custom(_fwd, out_shape=[3], out_dtype=ms.float32, reg_info={"x": 1})
    bad_dtype = ops.Custom(lambda a: a.astype(np.float64), out_shape=lambda a: a,
                           out_dtype=ms.float32)
    with pytest.raises(TypeError, match="float64.*Float32"):
        bad_dtype(x)
    bad_shape = ops.Custom(lambda a: a[:2], out_shape=lambda a: a, out_dtype=ms.float32)
    with pytest.raises(ValueError, match=r"shape \(2,\).*\(3,\)"):
        bad_shape(x)
    with pytest.raises(TypeError, match="must be a Tensor"):
        bad_shape(np.ones(3))
    wrong_count = ops.Custom(_fwd, out_shape=lambda a, b: a, out_dtype=lambda a, b: a,
                             bprop=lambda a, b, out, dout: (dout,))
    with pytest.raises(RuntimeError, match="one gradient per input"):
        ms.grad(lambda a, b: wrong_count(a, b).sum())(x, Tensor(Y))


def test_custom_stays_on_the_host_in_a_captured_gpu_graph():
    """GPU O2 captures runs of kernels as CUDA graphs: the callback is a host step between
    them (checked on the CPU through the GPU tests' recording runtime)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))
    from recording_runtime import RecordingRuntime
    from minispore.backends.gpu import GPUBackend
    from minispore.backends.gpu.graph import CudaGraphProgram
    from minispore.core import device
    from minispore.core.graph import compile as graph_compile

    calls = []

    def f(x):
        calls.append(1)
        return x * 3

    c = ops.Custom(f, out_shape=lambda s: s, out_dtype=lambda d: d)

    class Net(nn.Cell):
        def construct(self, a):
            b = ops.exp(a) + 1
            return ops.sin(c(b * 2)) + b

    rt = RecordingRuntime()
    saved = device.current.backend
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    device.current.backend = GPUBackend(rt)
    try:
        net = Net()
        outs = [net(Tensor(X)).asnumpy() for _ in range(3)]
        (entry,) = graph_compile.cache.entries()
        prog = entry.program
        assert isinstance(prog, CudaGraphProgram) and prog.stats()["host_steps"] >= 1
        assert all(not getattr(st[1], "host", False) for seg in prog.segments
                   for st in seg.steps if st[0] == "k")
    finally:
        device.current.backend = saved
        graph_compile.clear_cache()
    b = np.exp(X) + 1
    for o in outs:
        np.testing.assert_allclose(o, np.sin(b * 2 * 3) + b, rtol=1e-5)
    assert len(calls) == 3


def _sq(x):
    return x * x


def _sq_bprop(x, out, dout):
    return (2 * x * dout,)


_SQ = ops.Custom(_sq, out_shape=lambda s: s, out_dtype=lambda d: d, bprop=_sq_bprop)


class _Branchy(nn.Cell):
    def construct(self, x):
        if x.sum() > 0:
            y = _SQ(x) * 3
        else:
            y = x
        i = 0
        while i < 2:
            y = _SQ(y) * 0.5 + y
            i += 1
        return y.sum()


class _Loop(nn.Cell):
    def construct(self, x):
        k = Tensor(0, ms.int32)
        y = x
        while k < 2:
            y = _SQ(y) * 0.5
            k = k + 1
        return y.sum()


def test_custom_under_tensor_control_flow(mode):
    x = Tensor(np.array([0.5, -0.25], np.float32))
    # MindSpore 2.10, both modes
    np.testing.assert_allclose(_Branchy()(x).asnumpy(), 1.7890949, rtol=1e-6)
    np.testing.assert_allclose(ms.grad(_Branchy())(x).asnumpy(), [10.6640625, -2.1465454],
                               rtol=1e-6)
    np.testing.assert_allclose(_Branchy()(-x).asnumpy(), 0.016113281, rtol=1e-6)
    np.testing.assert_allclose(ms.grad(_Branchy())(-x).asnumpy(), [0.3125, 1.6015625], rtol=1e-6)
    np.testing.assert_allclose(_Loop()(x).asnumpy(), 0.008300781, rtol=1e-6)
    np.testing.assert_allclose(ms.grad(_Loop())(x).asnumpy(), [0.0625, -0.0078125], rtol=1e-6)


def test_custom_on_each_backend(backend, mode):
    net = _Net(_mul_add())
    x, y = Tensor(X), Tensor(Y)
    assert net(x, y).asnumpy().tolist() == [10., 22., 38.]
    gx, gy = ms.grad(net, grad_position=(0, 1))(x, y)
    assert gx.asnumpy().tolist() == [8., 10., 12.] and gy.asnumpy().tolist() == [2., 4., 6.]
