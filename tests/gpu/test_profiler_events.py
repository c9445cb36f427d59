"""ms.Profiler on the GPU backend without a GPU: the GPU backend over the recording runtime
(recording_runtime.py), whose event timer stands in for CUDA events. Every eager kernel and every
graph run gets a measured device time (labelled CUDA events, never SIMULATED), calls made inside
a CUDA-graph capture get none (an event recorded there would be a node of the graph), and the
trace has a GPU device track on the device clock. On a GPU the same path runs with real events
(tests/gpu/test_gpu_runtime.py's profiler test)."""
from __future__ import annotations

import json

import numpy as np

import minispore as ms
from minispore import Tensor, ops
from minispore.backends.gpu import GPUBackend
from minispore.core import device
from minispore.core.graph import compile as graph_compile
from minispore.profiler import GRAPH, KERNEL, PYNATIVE, report

from golden_models import MLP, TrainStep
from recording_runtime import RecordingRuntime


def _on_fake_gpu(mode):
    b = GPUBackend(RecordingRuntime())
    graph_compile.clear_cache()
    ms.set_context(mode=mode, jit_level="O2")
    device.current.backend = b
    return b


def test_gpu_calls_get_measured_device_time(tmp_path):
    saved = device.current.backend
    try:
        _on_fake_gpu(ms.PYNATIVE_MODE)
        step = TrainStep(MLP())
        x = Tensor(np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32))
        y = Tensor(np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]])
        with ms.Profiler(output_path=str(tmp_path)) as prof:
            a = Tensor(np.arange(8, dtype=np.float32))
            (ops.tanh(a * 2.0) - a).sum().asnumpy()
            ms.set_context(mode=ms.GRAPH_MODE)
            for _ in range(3):                      # capture on the first call, then replays
                step(x, y).asnumpy()
        recs = prof.records()
        eager = [r for r in recs if r["mode"] == PYNATIVE and r["kind"] == KERNEL]
        graphs = [r for r in recs if r["kind"] == GRAPH]
        assert eager and len(graphs) == 3
        for r in eager + graphs[1:]:
            assert r["measured"] and not r["simulated"], r
            assert r["device_s"] is not None and r["device_s"] >= 0, r
            assert r["device_start_s"] is not None and r["device_start_s"] >= 0, r
        # the first graph run holds the capture: its marks are made outside it, so it is timed;
        # kernels run inside the capture (or its warm-up) are not
        inside = [r for r in recs if r["mode"] != PYNATIVE and r["kind"] == KERNEL]
        assert inside and all(r["device_s"] is None for r in inside), inside
        tot = prof.totals()["GPU"]
        assert tot["device_time"] == report.EVENTS
        assert tot["device_s"] == sum(r["device_s"] for r in eager + graphs)
        rows = prof.op_summary()
        assert {r["device_time"] for r in rows if r["mode"] == PYNATIVE} == {report.EVENTS}
        text = report.render_text(prof.table())
        assert "CUDA events" in text and " sim" not in text.split("device µs:")[0]
        trace = json.loads(json.dumps(prof.chrome_trace()))
        names = [e["args"]["name"] for e in trace["traceEvents"] if e.get("name") ==
                 "process_name"]
        assert any(n.startswith("GPU device (CUDA events") for n in names), names
        assert not any("SIMULATED" in n for n in names if n.startswith("GPU")), names
    finally:
        device.current.backend = saved
        graph_compile.clear_cache()
        ms.set_context(mode=ms.PYNATIVE_MODE)
