"""ms.Profiler (minispore/profiler/): every kernel is recorded in both modes on every backend
(the counts match the backends' own launch counters and the simulated device's task counter),
the Chrome trace is valid trace-event JSON with host and device tracks, and nothing of the
profiler stays on the hot path once it has stopped."""
from __future__ import annotations

import json

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops
from minispore.core import device as core_device
from minispore.core.graph import compile as graph_compile
from minispore.profiler import GRAPH, KBK, KERNEL, PYNATIVE, SINK

TARGETS = ("CPU", "Ascend")


@pytest.fixture(autouse=True)
def fresh_compile_cache():
    graph_compile.clear_cache()
    yield
    graph_compile.clear_cache()


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        r = np.random.default_rng(0)
        self.w = ms.Parameter(ms.Tensor(r.standard_normal((6, 4)).astype(np.float32)), name="w")

    def construct(self, x):
        return ops.tanh(ops.matmul(x, self.w) * 1.5 + 0.3).sum()


def x6():
    return ms.Tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6))


def eager_work():
    a = ms.Tensor(np.arange(8, dtype=np.float32))
    b = a + a
    c = ops.tanh(b * 2.0) - a
    d = ops.matmul(c.reshape(2, 4), c.reshape(4, 2))
    return d.sum()


def kernels(prof, mode=None):
    return [r for r in prof.records() if r["kind"] == KERNEL and (mode is None or
                                                                  r["mode"] == mode)]


@pytest.mark.parametrize("target", TARGETS)
def test_eager_kernel_records_equal_the_backends_launch_counter(target, tmp_path):
    ms.set_context(device_target=target, mode=ms.PYNATIVE_MODE)
    b = core_device.get_backend(target)
    eager_work()                                   # kernels cached before the profiler starts
    n0 = b.counters["launches"]
    with ms.Profiler(output_path=str(tmp_path)) as prof:
        out = eager_work()
        out.asnumpy()
    launched = b.counters["launches"] - n0
    recs = kernels(prof, PYNATIVE)
    assert len(recs) == launched > 0
    assert prof.totals()[target]["eager_launch_counter"] == launched
    assert {r["backend"] for r in recs} == {target}
    names = {r["name"] for r in recs}
    assert {"add", "mul", "tanh", "matmul", "sum"} <= names, names
    assert all(r["host_s"] >= 0 and r["launches"] == 1 and r["bytes"] > 0 for r in recs)
    if target == "Ascend":                        # simulated device time, labelled as such
        assert all(r["simulated"] and r["device_s"] is not None for r in recs)
        assert any(r["device_s"] > 0 for r in recs)
    else:
        assert all(not r["simulated"] and r["device_s"] is None for r in recs)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("level", ["O0", "O1"])
def test_graph_kernel_by_kernel_records_every_kernel_of_every_run(target, level, tmp_path):
    ms.set_context(device_target=target, mode=ms.GRAPH_MODE, jit_level=level)
    net, x = Net(), x6()
    net(x)                                         # compiled before the profiler starts
    (entry,) = [e for e in graph_compile.cache.entries()]
    before = entry.program
    with ms.Profiler(output_path=str(tmp_path)) as prof:
        for _ in range(3):
            net(x)
    assert entry.program is before                 # the backend's own program is back
    recs = kernels(prof)
    assert all(r["mode"] == KBK and r["jit_level"] == level for r in recs)
    runs = [r for r in prof.records() if r["kind"] == GRAPH]
    assert len(runs) == 3
    if target == "CPU":
        assert len(recs) == 3 * before.kernel_launches
    assert all(r["source"].startswith("test_profiler.py:") for r in recs
               if r["name"] not in ("TransData",)), recs
    if level == "O1":
        assert any(r["name"].startswith("Fused[") for r in recs)


def test_cpu_o2_program_is_one_kernel_per_run(tmp_path):
    ms.set_context(device_target="CPU", mode=ms.GRAPH_MODE, jit_level="O2")
    net, x = Net(), x6()
    net(x)
    with ms.Profiler(output_path=str(tmp_path)) as prof:
        for _ in range(2):
            net(x)
    recs = kernels(prof)
    assert len(recs) == 2 and all(r["mode"] == SINK and r["launches"] == 1 for r in recs)
    assert prof.totals()["CPU"]["launches"] == 2


@pytest.mark.parametrize("mode,level", [("pynative", "O0"), ("graph", "O0"), ("graph", "O2")])
def test_ascend_recorded_tasks_equal_the_devices_task_counter(mode, level, tmp_path):
    ms.set_context(device_target="Ascend", jit_level=level,
                   mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
    dev = core_device.get_backend("Ascend").device
    net, x = Net(), x6()
    net(x)
    t0 = dev.tasks
    with ms.Profiler(output_path=str(tmp_path)) as prof:
        net(x)
        net(x).asnumpy()
    tasks = dev.tasks - t0
    recs = kernels(prof)
    assert sum(r["tasks"] for r in recs) == tasks > 0
    tot = prof.totals()["Ascend"]
    assert tot["tasks"] == tasks and tot["device_time"] == "SIMULATED"
    assert tot["device_s"] == pytest.approx(sum(r["device_s"] for r in recs))
    if level == "O2" and mode == "graph":          # sunk: one host launch per run
        assert tot["launches"] == 2 and all(r["launches"] == 0 for r in recs)
        assert any(r["name"] == "TransData" for r in recs)


def test_loop_sink_on_ascend_is_one_host_launch(tmp_path):
    ms.set_context(device_target="Ascend", mode=ms.GRAPH_MODE, jit_level="O2")
    net = Net()
    data = [(np.full((4, 6), i, np.float32),) for i in range(3)]
    sink = ms.data_sink(net, data, sink_size=3)
    sink()
    with ms.Profiler(output_path=str(tmp_path)) as prof:
        sink()
    assert prof.totals()["Ascend"]["launches"] == 1
    assert len([r for r in prof.records() if r["kind"] == GRAPH]) == 3


def validate_chrome_trace(doc) -> list:
    """The trace-event format's rules that viewers rely on (JSON object form)."""
    assert isinstance(doc, dict) and isinstance(doc["traceEvents"], list)
    assert doc.get("displayTimeUnit", "ms") in ("ms", "ns")
    for e in doc["traceEvents"]:
        assert isinstance(e["name"], str) and e["ph"] in ("X", "M", "i", "B", "E", "C")
        assert isinstance(e["pid"], int)
        if e["ph"] == "X":
            assert isinstance(e["tid"], int)
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
            assert e["dur"] >= 0 and e["ts"] >= -1e-6
            assert isinstance(e.get("args", {}), dict)
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name", "process_sort_index",
                                 "thread_sort_index")
            assert isinstance(e["args"]["name"], str)
    return doc["traceEvents"]


def test_chrome_trace_has_host_and_device_tracks_and_files(tmp_path):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    prof = ms.Profiler(output_path=str(tmp_path / "prof"))
    for target in TARGETS:
        ms.set_context(device_target=target)
        eager_work().asnumpy()
    paths = prof.analyse(print_summary=False)
    events = validate_chrome_trace(json.loads(open(paths["trace"]).read()))
    procs = [e["args"]["name"] for e in events if e["name"] == "process_name"]
    assert any(p.startswith("host") for p in procs)
    assert any(p.startswith("CPU device") for p in procs)
    assert any(p.startswith("Ascend") and "SIMULATED" in p for p in procs)
    sim = [e for e in events if e["ph"] == "X" and "SIMULATED" in e.get("cat", "")]
    assert any(e["name"] == "MatMul" for e in sim)
    host = [e for e in events if e["ph"] == "X" and e["pid"] == 1]
    assert {"CPU", "Ascend"} <= {e["args"]["backend"] for e in host}
    rows = prof.op_summary()
    assert [r["host_s"] for r in rows] == sorted((r["host_s"] for r in rows), reverse=True)
    for key in ("op_statistic", "kernel_details", "summary"):
        assert open(paths[key]).read().strip()
    assert "SIMULATED" in open(paths["summary"]).read()


def test_not_profiling_leaves_the_backends_own_kernels(tmp_path):
    ms.set_context(device_target="CPU", mode=ms.PYNATIVE_MODE)
    b = core_device.get_backend("CPU")
    a = ms.Tensor(np.ones(8, np.float32))
    a + a
    raw = [fn for fn, _ in b.plans.values()]
    assert raw and not any(hasattr(fn, "profiled") for fn in raw)
    prof = ms.Profiler(output_path=str(tmp_path))
    a + a
    assert all(hasattr(fn, "profiled") for fn, _ in b.plans.values())
    prof.stop()
    assert core_device.hooks.active is None and not b.plans
    a + a
    assert not any(hasattr(fn, "profiled") for fn, _ in b.plans.values())
    assert len(prof.records()) == 1


def test_start_stop_rules(tmp_path):
    prof = ms.Profiler(output_path=str(tmp_path), start_profile=False)
    with pytest.raises(RuntimeError, match="not recording"):
        prof.stop()
    prof.start()
    with pytest.raises(RuntimeError, match="already recording"):
        ms.Profiler(output_path=str(tmp_path))
    prof.stop()
    with pytest.raises(TypeError):
        ms.Profiler(output_path=3)
