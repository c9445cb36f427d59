"""The GPU backend's O2 program (backends/gpu/graph.py: the step as captured CUDA graphs, split
at host control flow, with copy-in / launch / copy-out per replay) on the CPU, through
recording_runtime.RecordingRuntime: a numpy test double that records a capture instead of
running it, poisons the captured outputs, and replays the recorded kernels into the captured
buffers. Results must equal PyNative on the CPU step after step (MLP training, a tensor
While/If), the graph must be captured once and launched once per call per segment, and a failed
capture must warn and still give the right numbers. It checks the program's logic only; the CUDA
side (runtime.capture) needs a GPU (tests marked `gpu`)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops
from minispore.backends.gpu import GPUBackend
from minispore.backends.gpu.graph import CudaGraphProgram
from minispore.core import device
from minispore.core.graph import compile as graph_compile

from golden_models import MLP, TrainStep, chain
from recording_runtime import RecordingRuntime


@pytest.fixture
def fake_gpu():
    """The GPU backend over the recording runtime, as the current backend, at O2."""
    rt = RecordingRuntime()
    b = GPUBackend(rt)
    saved = device.current.backend
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    device.current.backend = b
    try:
        yield b
    finally:
        device.current.backend = saved
        graph_compile.clear_cache()


def _entry():
    (e,) = graph_compile.cache.entries()
    return e


def _mlp_run(steps=4):
    step = TrainStep(MLP())
    r = np.random.default_rng(1)
    xs = [Tensor(r.standard_normal((5, 6)).astype(np.float32)) for _ in range(steps)]
    y = Tensor(np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]])
    losses = [step(x, y).asnumpy() for x in xs]       # a new batch each step
    return step, np.array(losses), [p.asnumpy() for p in step.params]


def test_mlp_step_is_one_graph_replayed(fake_gpu):
    step, losses, params = _mlp_run()
    prog = _entry().program
    assert isinstance(prog, CudaGraphProgram)
    st = prog.stats()
    assert st["segments"] == 1 and st["captured"] == 1 and st["host_steps"] == 0, st
    rt = fake_gpu.rt
    assert rt.counters["captures"] == 1 and rt.counters["graph_launches"] == 4
    assert rt.graphs[0].launches == 4
    seg = prog.segments[0]
    assert len(seg.assigns) == 3 and len(seg.reads) >= 5      # x, y and the three Parameters
    # the three Parameters stay in the graph's buffers: only the loss is copied out
    assert [p.name for _, _, p in seg.resident] == [p.name for p in step.params]
    assert len(seg.escapes) == 1
    assert all(p._buf is seg.static[r] for r, _, p in seg.resident)
    # the captured matmuls (and their warm-up) ran on the runtime's GEMM, never cupy.matmul:
    # CuPy refuses cuBLAS calls during stream capture (the recording's replays rerun the
    # routines outside any capture, so the count is the warm-up's plus the capture's)
    assert rt.gemm_calls > 0 and rt.gemm_calls % 2 == 0 and not rt.in_graph

    device.current.backend = None
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    _, want_losses, want_params = _mlp_run()
    np.testing.assert_allclose(losses, want_losses, rtol=2e-5, atol=1e-6)
    for g, w in zip(params, want_params):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


def _momentum_run(steps=3):
    """The bench CLI's MLP workload (digits_demo's MLP, sparse softmax cross-entropy, Momentum):
    each moment is assigned, then its buffer's last use comes later in the same segment."""
    from minispore.bench import workloads
    cell = workloads.train_cell("mlp")
    r = np.random.default_rng(2)
    xs = [Tensor(r.standard_normal((8, 64)).astype(np.float32)) for _ in range(steps)]
    y = Tensor(r.integers(0, 10, 8).astype(np.int32))
    losses = [cell(x, y).asnumpy() for x in xs]
    return np.array(losses), [p.asnumpy() for p in cell.optimizer.parameters]


def test_momentum_step_keeps_assigned_values_alive_in_the_capture(fake_gpu):
    """Found on an H200: an assigned value freed later in the same segment was gone after the
    capture (AttributeError on None), so the bench CLI's MLP/CNN rows failed at O2."""
    losses, params = _momentum_run()
    assert _entry().program.stats()["captured"] == 1
    device.current.backend = None
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    want_losses, want_params = _momentum_run()
    np.testing.assert_allclose(losses, want_losses, rtol=2e-5, atol=1e-6)
    for g, w in zip(params, want_params):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


def two_kernels(x):
    """The fused chain, then a matmul: two kernels, one segment (a single kernel is never
    captured)."""
    y = chain(x)
    return ops.matmul(y.reshape(8, -1), y.reshape(-1, 8))


def test_resident_parameters_read_between_steps_are_current(fake_gpu):
    """Eager reads of the Parameters between replays see each step's values (they live in the
    graph's static buffers, updated in place), as PyNative's do on the CPU."""
    step = TrainStep(MLP())
    r = np.random.default_rng(4)
    xs = [Tensor(r.standard_normal((5, 6)).astype(np.float32)) for _ in range(3)]
    y = Tensor(np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]])
    got = []
    for x in xs:
        step(x, y)
        got.append([(p * 1.0).asnumpy() for p in step.params])     # an eager kernel reads p
    device.current.backend = None
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ref = TrainStep(MLP())
    for x, g in zip(xs, got):
        ref(x, y)
        for a, b in zip(g, (p.asnumpy() for p in ref.params)):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


class ReturnsItsUpdate(nn.Cell):
    """Assigns a Parameter and returns the new value: the output must not be the buffer the
    next replay overwrites, so this Parameter is not kept resident."""

    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(Tensor(np.ones(4, np.float32)), name="w")

    def construct(self, x):
        new = ops.tanh(self.w * x) - 0.5 * x
        ops.assign(self.w, new)
        return new


def test_an_assigned_value_that_is_also_returned_is_not_kept_resident(fake_gpu, monkeypatch):
    monkeypatch.setattr(CudaGraphProgram, "MIN_KERNELS", 1)     # its one fused kernel too
    net = ReturnsItsUpdate()
    x = Tensor(np.linspace(-1, 1, 4, dtype=np.float32))
    r1 = net(x)
    first = r1.asnumpy().copy()
    r2 = net(x)
    seg = _entry().program.segments[0]
    assert seg.graph is not None and seg.resident == []
    np.testing.assert_array_equal(r1.asnumpy(), first)          # not overwritten by call 2
    np.testing.assert_array_equal(net.w.asnumpy(), r2.asnumpy())


def test_outputs_survive_the_next_replay(fake_gpu):
    f = ms.jit(two_kernels)
    a = np.linspace(-4, 4, 64, dtype=np.float32)
    r1 = f(Tensor(a))
    r2 = f(Tensor(a * 0.5))                  # replays into the same graph buffers
    np.testing.assert_allclose(r1.asnumpy(), two_kernels(Tensor(a)).asnumpy(), rtol=2e-6,
                               atol=1e-6)
    np.testing.assert_allclose(r2.asnumpy(), two_kernels(Tensor(a * 0.5)).asnumpy(), rtol=2e-6,
                               atol=1e-6)
    assert fake_gpu.rt.counters["graph_launches"] == 2


def test_a_single_kernel_is_launched_not_captured(fake_gpu):
    a = np.linspace(-4, 4, 64, dtype=np.float32)
    r = [ms.jit(chain)(Tensor(a)).asnumpy() for _ in range(2)]
    st = _entry().program.stats()
    assert st["segments"] == 1 and st["kernels"] == [1] and st["captured"] == 0, st
    assert fake_gpu.rt.counters["captures"] == 0 and fake_gpu.rt.counters["graph_launches"] == 0
    for g in r:
        np.testing.assert_allclose(g, chain(Tensor(a)).asnumpy(), rtol=2e-6, atol=1e-6)


def control(x, n):
    i = ops.zeros((), ms.int32)
    y = x * 2.0 + 1.0
    while i < n:
        # 0.5, not 0: these inputs make some sums exactly 0 in exact arithmetic, where float32
        # and float64 accumulation (CPU reductions accumulate in float64) round to either sign
        if y.sum() > 0.5:
            y = y * 0.5 - 1
        else:
            y = ops.exp(y) + y
        i = i + 1
    return y, (y * y).mean(axis=0)


def test_control_flow_splits_the_capture(fake_gpu, monkeypatch):
    monkeypatch.setattr(CudaGraphProgram, "MIN_KERNELS", 1)     # capture even one-kernel runs
    x = np.linspace(-1, 2, 12, dtype=np.float32).reshape(4, 3)
    got = [t.asnumpy() for t in ms.jit(control)(Tensor(x), Tensor(np.int32(3)))]
    got2 = [t.asnumpy() for t in ms.jit(control)(Tensor(-x), Tensor(np.int32(2)))]
    st = _entry().program.stats()
    assert st["host_steps"] >= 1 and st["captured"] >= 1, st
    device.current.backend = None
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    for g, w in zip(got + got2, list(control(Tensor(x), Tensor(np.int32(3)))) +
                    list(control(Tensor(-x), Tensor(np.int32(2))))):
        np.testing.assert_allclose(g, w.asnumpy(), rtol=2e-6, atol=1e-6)


def test_a_failed_capture_warns_and_runs_kernel_by_kernel(fake_gpu, monkeypatch):
    def refuse(prepare, body):
        raise RuntimeError("cudaErrorStreamCaptureUnsupported (simulated)")
    monkeypatch.setattr(fake_gpu.rt, "capture", refuse)
    a = np.linspace(-4, 4, 64, dtype=np.float32)
    with pytest.warns(RuntimeWarning, match=r"capturing a segment .* failed .*simulated"):
        r = ms.jit(two_kernels)(Tensor(a))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)        # warned once, not every call
        r2 = ms.jit(two_kernels)(Tensor(a))
    want = two_kernels(Tensor(a)).asnumpy()
    np.testing.assert_allclose(r.asnumpy(), want, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(r2.asnumpy(), want, rtol=2e-6, atol=1e-6)
    assert _entry().program.stats()["captured"] == 0
