"""The simulated Ascend device: its cost model from first principles, memory pool, formats,
precision rules, launch modes and timeline. Times here are SIMULATED model time,
compared with what the profile's numbers imply, never with wall time."""
from __future__ import annotations

import json

import numpy as np
import pytest

import minispore as ms
from minispore import ops
from minispore.backends import ascend_sim
from minispore.backends.ascend_sim import cost
from minispore.backends.ascend_sim.formats import nd_to_nz, nz_shape, nz_to_nd
from minispore.backends.ascend_sim.memory import MemoryPool, OutOfDeviceMemory
from minispore.backends.ascend_sim.profile import ASCEND_310P, ASCEND_910B, PROFILES

P = ASCEND_910B


@pytest.fixture
def dev():
    ms.set_context(device_target="Ascend", mode=ms.PYNATIVE_MODE)
    d = ascend_sim.device()
    d.synchronize()
    d.reset_counters()
    return d


def f32(*shape, seed=0):
    return ms.Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _elapsed(d, fn):
    d.synchronize()
    t0 = d.now()
    out = fn()
    d.synchronize()
    return d.now() - t0, out


# ---------------------------------------------------------------- the cost model --------------
def test_large_matmul_is_cube_bound_at_the_profile_rate():
    m = n = k = 4096
    t, nbytes, flops = cost.cube(P, 1, m, n, k, 2, 4, fp32=False)
    ideal = 2.0 * m * n * k / P.peak_cube_flops
    assert ideal <= t <= 1.05 * ideal, (t, ideal)          # waves of 128x128 tiles on 24 cores
    assert flops == 2.0 * m * n * k
    fp32, _, _ = cost.cube(P, 1, m, n, k, 4, 4, fp32=True)
    assert fp32 == pytest.approx(P.cube_fp32_slowdown * t, rel=0.05)


def test_small_matmul_cannot_fill_the_cube_cores():
    """One 16x16 output tile runs on one core: far below peak, at least the minimum duration."""
    t, _, flops = cost.cube(P, 1, 16, 16, 16, 2, 4, fp32=False)
    assert t == P.kernel_min_duration
    assert flops / t < 0.01 * P.peak_cube_flops


def test_large_elementwise_is_hbm_bound():
    n = 16 * 2**20
    t = cost.vector(P, n, 2 * 4 * n, 4 * n, ops_per_element=1)
    assert t == pytest.approx(3 * 4 * n / P.hbm_bw, rel=1e-9)


def test_eager_kernels_take_the_cost_model_durations(dev):
    x, w = f32(512, 256), f32(256, 384, seed=1)
    ops.matmul(x, w)
    mm = [r for r in dev.records() if r["name"] == "MatMul"][-1]
    want, _, _ = cost.cube(P, 1, 512, 384, 256, 2, 4, fp32=False)
    assert mm["duration_s"] == pytest.approx(want) and mm["unit"] == "Cube"
    a = f32(1024, 1024)
    a + a
    add = [r for r in dev.records() if r["name"] == "add"][-1]
    n = 1024 * 1024
    assert add["duration_s"] == pytest.approx(cost.vector(P, n, 8 * n, 4 * n))


def test_tiny_eager_ops_are_host_launch_bound(dev):
    x = f32(8)

    def run():
        y = x
        for _ in range(1000):
            y = ops.softmax(y)
        return y
    t, _ = _elapsed(dev, run)
    assert 1000 * P.host_launch_eager <= t <= 1000 * P.host_launch_eager + 200e-6
    assert dev.busy < 0.25 * t                           # the device mostly waits for the host


def _softmax_chain(x):
    for _ in range(200):
        x = ops.softmax(x)
    return x


def test_the_same_ops_sunk_cost_dispatch_plus_one_launch(dev):
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    x = f32(8)
    chain = ms.jit(_softmax_chain)
    chain(x)                                              # compile; x is now resident
    dev.reset_counters()
    t, out = _elapsed(dev, lambda: chain(x))
    # the scheduler dispatches a task while the one before runs: per task the larger of the
    # dispatch and the (minimum) kernel duration
    per_task = max(P.task_dispatch, P.kernel_min_duration)
    want = P.host_launch_eager + P.graph_execute_head + P.task_dispatch + 200 * per_task
    assert dev.tasks == 200 and dev.counts["graph_launches"] == 1
    assert t == pytest.approx(want, rel=1e-9)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    t_eager, ref = _elapsed(dev, lambda: _softmax_chain(x))
    assert t_eager > 2.5 * t                              # why sinking exists
    np.testing.assert_array_equal(out.asnumpy(), ref.asnumpy())


# ---------------------------------------------------------------- formats and TransData -------
@pytest.mark.parametrize("shape", [(8, 100, 30), (1, 1), (16, 16), (3, 33, 17)])
def test_fractal_nz_round_trip(shape):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    z = nd_to_nz(a)
    assert z.shape == nz_shape(shape)
    np.testing.assert_array_equal(nz_to_nd(z, shape), a)
    assert nz_shape((8, 100, 30)) == (8, 2, 112, 16)       # the CANN documentation's example


def _mlp_step_graph(x, w1, w2):
    h = ops.relu(ops.matmul(x, w1))
    y = ops.matmul(h, w2)
    return ops.sum(y * y)


def test_eager_pays_transdata_around_every_matmul(dev):
    x, w = f32(32, 64), f32(64, 16, seed=1)
    ops.matmul(x, w)
    assert dev.counts["transdata"] == 3


def test_format_pass_eliminates_transdata(dev):
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    x, w1, w2 = f32(64, 128), f32(128, 128, seed=1), f32(128, 32, seed=2)
    backend = ascend_sim.get()
    grad = ms.grad(_mlp_step_graph, grad_position=(1, 2))
    results = {}
    from minispore.core.graph import compile as graph_compile
    graph_compile.clear_cache()
    for on in (True, False):
        backend.format_pass = on
        ms.set_context(ascend_config={"device_profile": "Ascend910B"})   # new compile key
        dev = ascend_sim.device()       # the profile's device (an earlier test may have left another)
        try:
            grad(x, w1, w2)                                   # compile + resident inputs
            dev.reset_counters()
            t, g = _elapsed(dev, lambda: grad(x, w1, w2))
            results[on] = (t, dev.tasks, dev.counts["transdata"], [a.asnumpy() for a in g])
        finally:
            backend.format_pass = True
        graph_compile.clear_cache()
    (t_on, k_on, td_on, g_on), (t_off, k_off, td_off, g_off) = results[True], results[False]
    assert td_on < td_off and k_on < k_off and t_on < t_off, results
    for a, b in zip(g_on, g_off):
        np.testing.assert_array_equal(a, b)                  # re-layouts are exact


# ---------------------------------------------------------------- memory ----------------------
def test_pool_reuses_coalesces_and_reports_fragmentation():
    pool = MemoryPool(10 * 512, 512)
    a, sa = pool.alloc(512)
    b, sb = pool.alloc(1000)                  # rounded up to 1024
    c, sc = pool.alloc(512)
    assert (sa, sb, sc) == (512, 1024, 512) and pool.allocated == 2048
    pool.free(b, sb)
    d, sd = pool.alloc(1024)                  # same-size reuse
    assert d == b
    pool.free(a, sa)
    pool.free(d, sd)
    st = pool.stats()                         # free: [0, 1536) and [2048, 5120)
    assert st["allocated"] == 512 and st["largest_free_block"] == 3072
    assert st["fragmentation"] == pytest.approx(1 - 3072 / 4608)
    with pytest.raises(OutOfDeviceMemory, match=r"needs 4096 bytes.*largest free block 3072"):
        pool.alloc(8 * 512)                   # 4608 bytes free, but not in one piece
    assert pool.stats() == {**st, "allocations": st["allocations"]}     # nothing changed
    pool.free(c, sc)
    f, sf = pool.alloc(8 * 512)               # everything free again: one block from 0
    assert f == 0 and pool.allocated == 4096 and pool.peak == 4096


def test_the_pool_holds_the_collector_off_while_it_rebuilds_its_free_lists(monkeypatch):
    """A buffer in a reference cycle is freed by the garbage collector, which can run inside any
    allocation: a block freed between reading the free lists and rebuilding them would be lost,
    so the slow path, adopt and stats read them with the collector held off, and restore it."""
    import gc
    pool = MemoryPool(4 * 512, 512)
    seen = []
    real = pool._free_blocks
    monkeypatch.setattr(pool, "_free_blocks", lambda: seen.append(gc.isenabled()) or real())
    pool.alloc(512)
    b, sb = pool.alloc(3 * 512)
    pool.free(b, sb)
    pool.alloc(2 * 512)                       # the bump pointer is at the end: the slow path
    pool.stats()
    pool.adopt(8 * 512, 512, None)
    assert seen == [False, False, False] and gc.isenabled()
    gc.disable()
    try:
        pool.stats()
        assert not gc.isenabled()             # a disabled collector stays disabled
    finally:
        gc.enable()


def test_out_of_memory_names_the_request_and_leaves_the_device_usable(dev):
    import gc
    gc.collect()                  # no earlier test's garbage left in the pool to fragment it
    ms.set_context(max_device_memory="1MB")
    d = ascend_sim.device()
    assert d.pool.capacity == 2**20
    big = ms.Tensor(np.ones((512, 1024), np.float32))       # 2 MiB
    with pytest.raises(RuntimeError, match=r"out of memory: a host->device copy needs 2097152 "
                                           r"bytes .* free \d+ bytes.*peak \d+") as info:
        big + 1.0
    assert isinstance(info.value, OutOfDeviceMemory)
    before = d.pool.allocated
    small = f32(16, 16)
    y = small * 2.0
    np.testing.assert_allclose(y.asnumpy(), small.asnumpy() * 2.0)
    del y
    x = ms.Tensor(np.ones((256, 512), np.float32))           # 512 KiB: fits
    with pytest.raises(RuntimeError, match=r"the output of add needs 524288 bytes"):
        z = x + x
        w = z + z                                              # 3 x 512 KiB do not fit
        del w
    assert d.pool.allocated >= before


class _Cycle:
    """A tensor held only by a reference cycle: garbage that CPython frees at some later
    collection, not when the last name goes."""

    def __init__(self, t):
        self.t, self.me = t, self


def test_blocks_that_only_garbage_cycles_hold_are_freed_before_out_of_memory(dev):
    import gc
    gc.collect()                     # no earlier test's garbage left in the pool to fragment it
    gc.disable()                     # the cycles stay uncollected until the pool asks
    try:
        ms.set_context(max_device_memory="3MB")
        d = ascend_sim.device()
        _Cycle(ms.Tensor(np.ones((320, 1024), np.float32)) + 1.0)      # 1.25 MiB of garbage
        x = ms.Tensor(np.ones((320, 1024), np.float32))                # 1.25 MiB in, 1.25 out:
        y = x * 2.0                                                    # the garbage's room
        np.testing.assert_array_equal(y.asnumpy()[0, :3], [2.0, 2.0, 2.0])
        del x, y
        _Cycle(ms.Tensor(np.ones((320, 1024), np.float32)) + 1.0)      # 1.25 MiB of garbage
        assert d.pool.allocated > 2**20
        ms.set_context(max_device_memory="1MB")                        # fits once it is freed
        assert d.pool.capacity == 2**20 and d.pool.allocated < 2**20
        assert not gc.isenabled()
    finally:
        gc.enable()


# ---------------------------------------------------------------- numerics --------------------
def test_cube_reads_fp16_unless_the_precision_mode_keeps_fp32(dev):
    rng = np.random.default_rng(3)
    a = (1 + rng.random((16, 64)) * 1e-3).astype(np.float32)   # bits fp16 does not keep
    b = rng.standard_normal((64, 8)).astype(np.float32)
    want16 = a.astype(np.float16).astype(np.float32) @ b.astype(np.float16).astype(np.float32)
    got = ops.matmul(ms.Tensor(a), ms.Tensor(b)).asnumpy()
    np.testing.assert_allclose(got, want16, rtol=1e-6, atol=1e-6)
    ms.set_context(ascend_config={"precision_mode": "force_fp32"})
    got32 = ops.matmul(ms.Tensor(a), ms.Tensor(b)).asnumpy()
    np.testing.assert_allclose(got32, a @ b, rtol=1e-6, atol=1e-6)
    assert np.abs(got32 - got).max() > 1e-4
    with pytest.raises(ValueError, match="precision_mode.*choose one of"):
        ms.set_context(ascend_config={"precision_mode": "fast"})


def test_float64_is_refused_with_a_fix(dev):
    with pytest.raises(TypeError, match=r"^exp: float64 is not supported on "
                                        r"device_target='Ascend'.*float32"):
        ops.exp(ms.Tensor(np.ones(3)))
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(TypeError, match=r"input 0 is a float64 tensor of shape \(3,\)"):
        ms.jit(_mlp_step_graph)(ms.Tensor(np.ones(3)), f32(3, 3), f32(3, 3))


def _train_step(x, y, w1, w2):
    def loss(w1, w2):
        h = ops.relu(ops.matmul(x, w1))
        d = ops.matmul(h, w2) - y
        return ops.mean(d * d)
    return ms.value_and_grad(loss, grad_position=(0, 1))(w1, w2)


@pytest.mark.parametrize("jit_level", ["O0", "O1", "O2"])
def test_eager_and_graph_agree_on_the_device_and_with_the_cpu(dev, jit_level):
    x, y = f32(32, 16), f32(32, 8, seed=1)
    w1, w2 = f32(16, 32, seed=2), f32(32, 8, seed=3)
    eager = _train_step(x, y, w1, w2)
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=jit_level)
    graph = ms.jit(_train_step)(x, y, w1, w2)
    flat = lambda r: [r[0]] + list(r[1])                      # noqa: E731
    for e, g in zip(flat(eager), flat(graph)):
        np.testing.assert_allclose(g.asnumpy(), e.asnumpy(), rtol=2e-6, atol=1e-6)
    ms.set_context(device_target="CPU")
    cpu = ms.jit(_train_step)(x, y, w1, w2)
    for e, c in zip(flat(eager), flat(cpu)):                  # fp16 Cube operands
        np.testing.assert_allclose(e.asnumpy(), c.asnumpy(), rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------- profiles, sink, timeline ----
def test_a_second_profile_changes_every_figure(dev):
    x, w = f32(1024, 1024), f32(1024, 1024, seed=1)
    ops.matmul(x, w)
    t910 = [r for r in dev.records() if r["name"] == "MatMul"][-1]["duration_s"]
    ms.set_context(ascend_config={"device_profile": "Ascend310P"})
    d310 = ascend_sim.device()
    assert d310.profile is ASCEND_310P and d310.pool.capacity == ASCEND_310P.hbm_bytes
    ops.matmul(x, w)
    t310 = [r for r in d310.records() if r["name"] == "MatMul"][-1]["duration_s"]
    assert t310 > t910
    for p in PROFILES.values():
        for name, value, unit, source in p.rows():
            assert unit and source and value is not None, name


def test_loop_sink_launches_once_and_transfers_the_batches_once(dev):
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    w1, w2 = f32(16, 32, seed=2), f32(32, 8, seed=3)
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((32, 16)).astype(np.float32),
             rng.standard_normal((32, 8)).astype(np.float32)) for _ in range(10)]

    def step(x, y):
        loss, _ = _train_step(x, y, w1, w2)
        return loss
    sink = ms.data_sink(step, data, sink_size=10)
    sink()
    dev.reset_counters()
    t_sink, last = _elapsed(dev, sink)
    assert dev.counts["graph_launches"] == 1 and dev.counts["h2d"] == 1
    jitted = ms.jit(step)
    dev.reset_counters()
    t_steps, ref = _elapsed(dev, lambda: [jitted(ms.Tensor(x), ms.Tensor(y))
                                          for x, y in data][-1])
    assert dev.counts["graph_launches"] == 10 and dev.counts["h2d"] == 20
    assert t_sink < t_steps
    np.testing.assert_allclose(last.asnumpy(), ref.asnumpy(), rtol=1e-6)


def test_chrome_trace_has_host_and_device_tracks(dev, tmp_path):
    x = f32(64, 64)
    ops.matmul(x, x).asnumpy()
    path = tmp_path / "trace.json"
    dev.export_chrome_trace(path)
    trace = json.loads(path.read_text())
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in events} == {0, 1}
    for e in events:
        assert set(e) >= {"name", "ph", "ts", "dur", "pid", "tid"}
        assert e["dur"] >= 0 and e["ts"] >= 0
    names = {e["name"] for e in events}
    assert {"MatMul", "TransData", "H2D", "D2H"} <= names


def test_a_device_tensor_used_on_the_cpu_says_how_to_move_it(dev):
    a = f32(4) * 2.0
    ms.set_context(device_target="CPU")
    with pytest.raises(RuntimeError, match=r"^add: input 0 \(shape \(4,\), Float32\) lives on "
                                           r"the Ascend \(simulated\) device but device_target "
                                           r"is 'CPU'; copy it with ms.Tensor\(x.asnumpy\(\)\)"):
        a + a
    b = ms.Tensor(a.asnumpy())
    np.testing.assert_array_equal((b + b).asnumpy(), 2 * a.asnumpy())


def _mse(a, b):
    return ops.mean(ops.square(a - b))


def test_a_fused_reduction_is_one_vector_kernel_in_graph_mode(dev):
    """UB fusion: the MSE's subtract, square and mean run as one task at O1/O2."""
    a, b = f32(64, 32), f32(64, 32, seed=1)
    ref = _mse(a, b).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    mse = ms.jit(_mse)
    mse(a, b)
    dev.reset_counters()
    got = mse(a, b)
    names = [r["name"] for r in dev.records() if r["track"] == 0]
    assert names[-1] == "Fused" and dev.tasks == 1, names
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-6)


def test_eager_assign_keeps_the_parameter_on_the_device(dev):
    p = ms.Parameter(f32(8, 8), name="p")
    ops.assign(p, p * 2.0)
    dev.reset_counters()
    ops.assign(p, p * 2.0)
    assert dev.counts["h2d"] == 0 and dev.counts["d2h"] == 0


def test_a_host_tensors_device_copy_dies_with_it(dev):
    """The device copy made on first use is the device's own: when the host tensor and every
    result are gone, the pool has its memory back."""
    import gc
    before = dev.pool.allocated
    x = ms.Tensor(np.ones((256, 256), np.float32))
    y = x * 2.0
    assert dev.pool.allocated >= before + 2 * 256 * 256 * 4
    del x, y
    gc.collect()
    assert dev.pool.allocated <= before + 512          # (a cached 0-d scalar may remain)
