"""The GPU backend itself. Without a usable GPU: importing minispore never imports cupy, the probe
says why the GPU cannot be used (no CuPy: the install command; no driver; no device) and
selecting it raises that as a RuntimeError. With one (tests marked `gpu`, skipped with the
probe's reason otherwise): tensors live in device memory, TF32 is off, bfloat16 round-trips, and
the MLP training step, the fused chain and tensor control flow agree with the CPU in PyNative and
at O0/O1/O2, O2 being one captured CUDA graph replayed once per step. (The op database runs on
the GPU through the `backend` parameter of tests/ops, also marked `gpu`.)"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor
from minispore.backends import gpu
from minispore.core.graph import compile as graph_compile

from golden_models import MLP, TrainStep, chain

OK, WHY = gpu.available()
needs_gpu = [pytest.mark.gpu,
             pytest.mark.skipif(not OK, reason=f"backend GPU not available: {WHY}")]


def test_importing_minispore_does_not_import_cupy():
    code = "import sys, minispore; import minispore.backends.gpu; print('cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


@pytest.mark.skipif(OK, reason="a GPU is usable here")
def test_unusable_gpu_says_why():
    assert any(s in WHY for s in ("pip install -e .[gpu]", "driver", "no CUDA device",
                                  "cannot")), WHY
    with pytest.raises(RuntimeError, match="device_target='GPU' cannot be used"):
        ms.set_context(device_target="GPU")


def test_probe_names_the_install_command_without_cupy(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(gpu, "_probe", None)
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "cupy" else real(name, *a))
    ok, why = gpu.available()
    assert not ok and "pip install -e .[gpu]" in why


# ------------------------------------------------------------------------- on a GPU
def _mlp(steps=4):
    step = TrainStep(MLP())
    r = np.random.default_rng(1)
    y = Tensor(np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]])
    losses = [step(Tensor(r.standard_normal((5, 6)).astype(np.float32)), y).asnumpy()
              for _ in range(steps)]
    return step, np.array(losses), [p.asnumpy() for p in step.params]


def _on(target, mode=ms.PYNATIVE_MODE, level="O0"):
    graph_compile.clear_cache()
    ms.set_context(device_target=target, mode=mode, jit_level=level)


@pytest.mark.parametrize("m", [pytest.param(0, marks=needs_gpu)])
def test_tensors_live_in_device_memory(m):
    import cupy
    _on("GPU")
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = (x * 2 + 1).sum(axis=1)
    assert isinstance(y._buf, gpu.buffers.GpuArray) and isinstance(y._buf.a, cupy.ndarray)
    np.testing.assert_allclose(y.asnumpy(), [9.0, 27.0])
    b = Tensor(np.array([1.0, 2.5, -3.0], np.float32)).astype(ms.bfloat16)
    assert b._buf.a.dtype == np.uint16 and b.dtype is ms.bfloat16
    np.testing.assert_array_equal(b.asnumpy().astype(np.float32), [1.0, 2.5, -3.0])


@pytest.mark.parametrize("m", [pytest.param(0, marks=needs_gpu)])
def test_tf32_is_off_by_default(m):
    from cupy._core import _routines_linalg as cupy_linalg
    _on("GPU")
    r = np.random.default_rng(0)
    a, b = (r.standard_normal((256, 256)).astype(np.float32) for _ in range(2))
    got = ms.ops.matmul(Tensor(a), Tensor(b)).asnumpy()
    assert cupy_linalg.get_compute_type(np.float32) == cupy_linalg.COMPUTE_TYPE_FP32
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(got - want).max() < 1e-4 * np.abs(want).max()     # TF32 errs ~1e-3


@pytest.mark.parametrize("level", [pytest.param(lv, marks=needs_gpu)
                                   for lv in ("pynative", "O0", "O1", "O2")])
def test_mlp_step_agrees_with_the_cpu(level):
    _on("CPU")
    _, want_l, want_p = _mlp()
    if level == "pynative":
        _on("GPU")
    else:
        _on("GPU", ms.GRAPH_MODE, level)
    keep, got_l, got_p = _mlp()
    np.testing.assert_allclose(got_l, want_l, rtol=1e-4, atol=1e-5)
    for g, w in zip(got_p, want_p):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    if level == "O2":
        from minispore.backends.gpu.graph import CudaGraphProgram
        (entry,) = graph_compile.cache.entries()
        assert isinstance(entry.program, CudaGraphProgram)
        st = entry.program.stats()
        assert st["segments"] == 1 and st["captured"] == 1 and not st["failed"], st
    del keep


@pytest.mark.parametrize("level", [pytest.param(lv, marks=needs_gpu) for lv in ("O1", "O2")])
def test_fused_chain_and_control_flow(level):
    from test_graph_capture import control
    x = np.linspace(-4, 4, 4096, dtype=np.float32)
    xc = np.linspace(-1, 2, 12, dtype=np.float32).reshape(4, 3)
    _on("CPU")
    want = [chain(Tensor(x)).asnumpy()] + [t.asnumpy() for t in
                                           control(Tensor(xc), Tensor(np.int32(3)))]
    _on("GPU", ms.GRAPH_MODE, level)
    got = [ms.jit(chain)(Tensor(x)).asnumpy()]
    got += [t.asnumpy() for t in ms.jit(control)(Tensor(xc), Tensor(np.int32(3)))]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


# ------------------------------------------------------------------------- without a GPU
class _StubCuda:
    """The slice of cupy.cuda that CupyRuntime.capture uses, recording the calls in order and
    keeping the rules CuPy enforces: no synchronize while capturing, end_capture only after
    begin_capture."""

    def __init__(self, log):
        self.log, rt = log, self

        class Stream:
            def __init__(self, non_blocking=False, name="capture"):
                self.name, self.capturing = name, False

            def __enter__(self):
                rt.current.append(self)
                log.append(f"enter {self.name}")
                return self

            def __exit__(self, *exc):
                rt.current.pop()
                log.append(f"exit {self.name}")

            def record(self):
                log.append(f"record {self.name}")
                return self.name

            def wait_event(self, ev):
                log.append(f"{self.name} waits {ev}")

            def synchronize(self):
                assert not self.capturing, "cudaErrorStreamCaptureUnsupported"
                log.append(f"sync {self.name}")

            def begin_capture(self):
                self.capturing = True
                log.append("begin_capture")

            def end_capture(self):
                assert self.capturing
                self.capturing = False
                log.append("end_capture")
                return "graph"

        class MemoryPool:
            def malloc(self, n):
                raise AssertionError("not called by the stub")

        self.Stream, self.MemoryPool = Stream, MemoryPool
        self.current = [Stream(name="null")]

    def get_current_stream(self):
        return self.current[-1]

    def using_allocator(self, malloc):
        import contextlib
        log = self.log

        @contextlib.contextmanager
        def cm():
            log.append("pool allocator on")
            yield
            log.append("pool allocator off")
        return cm()


def _stub_runtime():
    from types import SimpleNamespace
    from minispore.backends.gpu.runtime import CupyRuntime
    log: list = []
    rt = CupyRuntime.__new__(CupyRuntime)           # no cupy: only what capture() touches
    rt.cp = SimpleNamespace(cuda=_StubCuda(log))
    rt.checks, rt.in_graph = True, False
    rt.counters = {"captures": 0}
    return rt, log


def test_capture_order_and_flags_with_a_stub_cupy():
    rt, log = _stub_runtime()
    seen = []

    def prepare():
        log.append("prepare")
        return {"x": 1}

    def body(state):
        seen.append((rt.checks, rt.in_graph, rt.cp.cuda.get_current_stream().name))
        log.append("body")
        return "result"
    g, (state, result) = rt.capture(prepare, body)
    assert (state, result, g.graph) == ({"x": 1}, "result", "graph")
    # warm-up: host checks allowed, no cuBLAS (in_graph); the capture: neither
    assert seen == [(True, True, "capture"), (False, True, "capture")]
    assert (rt.checks, rt.in_graph) == (True, False)
    assert log == ["record null", "capture waits null", "pool allocator on", "enter capture",
                   "prepare", "body", "sync capture", "begin_capture", "body", "end_capture",
                   "exit capture", "pool allocator off", "record capture",
                   "null waits capture"]


def test_a_failing_capture_ends_it_and_resets_the_flags():
    rt, log = _stub_runtime()

    def body(state):
        if rt.cp.cuda.get_current_stream().capturing:
            raise NotImplementedError("calling cuBLAS API during stream capture is currently "
                                      "unsupported")
    with pytest.raises(NotImplementedError, match="cuBLAS"):
        rt.capture(dict, body)
    assert "end_capture" in log and (rt.checks, rt.in_graph) == (True, False)
    assert not rt.cp.cuda.get_current_stream().capturing and rt.counters["captures"] == 0


@pytest.mark.parametrize("m", [pytest.param(0, marks=needs_gpu)])
def test_profiler_measures_device_time_with_cuda_events(m, tmp_path):
    """The Profiler's GPU device time: CUDA events around eager kernels and graph runs (an O2
    replay included), resolved at stop; kernels inside the capture get none."""
    _on("GPU")
    x = Tensor(np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32))
    with ms.Profiler(output_path=str(tmp_path)) as prof:
        (ms.ops.matmul(x, x) * 2.0).sum().asnumpy()
        _on("GPU", ms.GRAPH_MODE, "O2")
        _mlp(3)
    recs = prof.records()
    eager = [r for r in recs if r["mode"] == "PyNative" and r["kind"] == "kernel"]
    graphs = [r for r in recs if r["kind"] == "graph"]
    assert eager and graphs
    for r in eager + graphs:
        assert r["measured"] and r["device_s"] is not None and r["device_s"] > 0, r
    matmul = [r for r in eager if r["name"] == "matmul"]
    assert matmul and matmul[0]["device_s"] > 1e-6          # 2*512^3 flops take microseconds
    assert prof.totals()["GPU"]["device_time"] == "CUDA events"
    prof.analyse(print_summary=False)
