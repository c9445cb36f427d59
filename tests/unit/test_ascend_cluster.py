"""The simulated Ascend cluster: the interconnect figures of the profile, the HCCL cost model
(backends/ascend_sim/collectives.py) against hand-computed alpha-beta numbers, the
communication stream of the runtime (collectives overlap compute, events order them, the
Chrome trace shows them), collectives on the device in both modes, and the bench's
data-parallel rows (modelled ranks; the MPI-ranks rows are in
tests/distributed/test_dist_ascend_sim.py). These are model figures of minispore's own
simulator (beyond MindSpore): the expected numbers are computed by hand from the formulas."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

import minispore as ms
from minispore.backends import ascend_sim
from minispore.backends.ascend_sim.cluster import ModelledCommunicator, modelled_world
from minispore.backends.ascend_sim.collectives import collective_time, estimate, task_name
from minispore.backends.ascend_sim.profile import ASCEND_910B, PARAMS
from minispore.backends.ascend_sim.runtime import Device, Event
from minispore.core.ops import collective as C

P = ASCEND_910B
B, A = 56e9, 2e-6                     # HCCS per link, per step
RB, RA = 25e9, 5e-6                   # RoCE per NIC, per step
N = 6_000_000


@pytest.fixture(autouse=True)
def _ascend():
    prev = ms.get_context("device_target"), ms.get_context("mode")
    ms.set_context(device_target="Ascend")
    yield
    ms.set_context(device_target=prev[0], mode=prev[1])


def test_profile_has_the_interconnect_with_sources():
    assert (P.devices_per_node, P.hccs_bw, P.hccs_latency, P.roce_bw, P.roce_latency) == \
        (8, B, A, RB, RA)
    for name in ("devices_per_node", "hccs_bw", "hccs_latency", "roce_bw", "roce_latency"):
        assert PARAMS[name].source.startswith(("[V]", "[E]", "[D]")), name
    assert any(r[0] == "hccs_bw" for r in P.rows())


@pytest.mark.parametrize("op, p, expected, algorithm", [
    # ring (3 is not a power of two): 2(p-1)/p n/B + 2(p-1) alpha
    ("all_reduce", 3, 2 * 2 / 3 * N / B + 4 * A, "ring"),
    # halving-doubling for powers of two: 2(p-1)/p n/B + 2 log2(p) alpha
    ("all_reduce", 4, 2 * 3 / 4 * N / B + 4 * A, "halving-doubling"),
    ("all_reduce", 8, 2 * 7 / 8 * N / B + 6 * A, "halving-doubling"),
    ("all_reduce_async", 2, 2 * 1 / 2 * N / B + 2 * A, "halving-doubling"),
    ("all_gather", 3, 2 / 3 * N / B + 2 * A, "ring"),
    ("reduce_scatter", 4, 3 / 4 * N / B + 2 * A, "halving-doubling"),
    # broadcast of 6 MB: scatter + all-gather beats the tree (2 * (A + N/B) at p=4)
    ("collective_broadcast", 4, 2 * 3 / 4 * N / B + (2 + 3) * A, "scatter + all-gather"),
    ("all_to_all", 4, 3 * (A + N / (4 * B)), "pairwise"),
    ("all_reduce", 1, 0.0, "local"),
])
def test_flat_collectives_match_the_alpha_beta_formulas(op, p, expected, algorithm):
    est = estimate(op, N, p, P)
    assert est.seconds == pytest.approx(expected, rel=1e-12)
    assert est.algorithm == algorithm


def test_a_small_broadcast_takes_the_binomial_tree():
    n = 1000                          # latency-bound: ceil(log2 4) (alpha + n/B)
    est = estimate("collective_broadcast", n, 4, P)
    assert est.algorithm == "binomial tree"
    assert est.seconds == pytest.approx(2 * (A + n / B), rel=1e-12)


def test_beyond_one_server_the_collectives_are_hierarchical():
    p, k, m = 16, 8, 2
    rs_intra = 7 / 8 * N / B + 3 * A                   # halving-doubling over 8 NPUs
    ar_inter = 2 * 1 / 2 * (N / k) / RB + 2 * RA       # the n/8 shard between 2 servers
    est = estimate("all_reduce", N, p, P)
    assert est.algorithm == "hierarchical (HCCS x8, RoCE x2)"
    assert est.seconds == pytest.approx(2 * rs_intra + ar_inter, rel=1e-12)
    ag = (1 / 2 * (N / k) / RB + RA) + (7 / 8 * N / B + 3 * A)
    assert collective_time("all_gather", N, p, P) == pytest.approx(ag, rel=1e-12)
    assert collective_time("reduce_scatter", N, p, P) == pytest.approx(ag, rel=1e-12)
    a2a = (k - 1) * (A + N / (p * B)) + (p - k) * (RA + N / (p * RB))
    assert collective_time("all_to_all", N, p, P) == pytest.approx(a2a, rel=1e-12)
    # crossing servers costs more than the same bytes inside one
    assert collective_time("all_reduce", N, 16, P) > collective_time("all_reduce", N, 8, P)


def test_the_cost_model_names_what_it_cannot_model():
    with pytest.raises(ValueError, match="12 devices do not fill whole servers of 8"):
        estimate("all_reduce", N, 12, P)
    with pytest.raises(ValueError, match="unknown collective 'gather'"):
        estimate("gather", N, 2, P)
    with pytest.raises(ValueError, match=">= 1"):
        estimate("all_reduce", N, 0, P)
    assert task_name("all_reduce", 4_000_000, 4) == "hcclAllReduce 4.0 MB x4"


def test_the_communication_stream_overlaps_compute_and_events_order_it():
    dev = Device(P)
    dev.set_mode("sink")
    dev.task("matmul", 10e-6, "Cube")                  # produces the collective's input
    end = dev.collective("hcclAllReduce 1.0 MB x2", 30e-6, 1_000_000)
    (comm,) = [r for r in dev.records() if r["track"] == 2]
    (mm,) = [r for r in dev.records() if r["name"] == "matmul"]
    assert comm["start_s"] >= mm["start_s"] + mm["duration_s"]     # waits for its input
    dev.task("relu", 5e-6, "Vector")                   # independent compute overlaps it
    (relu,) = [r for r in dev.records() if r["name"] == "relu"]
    assert relu["start_s"] < comm["start_s"] + comm["duration_s"]
    end.wait(dev.compute)                              # the consumer waits for the event
    dev.task("add", 5e-6, "Vector")
    (add,) = [r for r in dev.records() if r["name"] == "add"]
    assert add["start_s"] == pytest.approx(comm["start_s"] + comm["duration_s"])
    assert dev.stats()["collectives"] == 1 and dev.comm_busy == pytest.approx(30e-6)
    assert isinstance(end, Event)


def test_the_chrome_trace_has_the_communication_stream(tmp_path):
    dev = Device(P)
    dev.collective("hcclAllGather 2.0 KB x4", 1e-6, 2000)
    path = tmp_path / "trace.json"
    dev.export_chrome_trace(path)
    ev = json.loads(path.read_text())["traceEvents"]
    assert {"name": "thread_name", "ph": "M", "pid": 1, "tid": 2,
            "args": {"name": "stream 2 (communication)"}} in ev
    (x,) = [e for e in ev if e["name"] == "hcclAllGather 2.0 KB x4"]
    assert x["tid"] == 2 and x["dur"] == pytest.approx(P.kernel_min_duration * 1e6)


def _comm_records(dev, since):
    return [r for r in dev.records()[since:] if r["track"] == 2]


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
def test_collectives_run_on_the_communication_stream_in_both_modes(mode):
    ms.set_context(mode=mode)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)

    def f(t):
        return (C.all_reduce(t * 2, "sum"), C.all_gather(t), C.reduce_scatter(t, "sum"),
                C.collective_broadcast(t, 0), C.all_to_all(t, 4, 0, 1))
    g = ms.jit(f) if mode == ms.GRAPH_MODE else f
    dev = ascend_sim.device()
    with modelled_world(4):
        since = len(dev.records())
        ar, ag, rs, bc, a2a = (o.asnumpy() for o in g(ms.Tensor(x)))
        comm = _comm_records(dev, since)
    # the numbers: four identical contributions (cluster.py), on the device as on the host
    np.testing.assert_array_equal(ar, x * 2 * 4)
    np.testing.assert_array_equal(ag, np.concatenate([x] * 4))
    np.testing.assert_array_equal(rs, (x * 4)[:1])
    np.testing.assert_array_equal(bc, x)
    np.testing.assert_array_equal(a2a, np.concatenate([x[:1]] * 4, axis=1))
    names = [r["name"] for r in comm]
    assert names == ["hcclAllReduce 96 B x4", "hcclAllGather 384 B x4",
                     "hcclReduceScatter 96 B x4", "hcclBroadcast 96 B x4",
                     "hcclAlltoAll 96 B x4"]
    want = collective_time("all_gather", 384, 4, P)
    assert comm[1]["duration_s"] == pytest.approx(max(want, P.kernel_min_duration))


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
def test_data_parallel_training_models_the_gradient_all_reduce(mode):
    """Two gradient buckets (all_reduce_fusion_config=[2]), each an async all-reduce (start
    ... wait) on stream 2; the loss equals the CPU's. In a graph (sunk, device-bound) the
    second bucket's backward runs while the first bucket's all-reduce is on the wire; in
    PyNative the host's launches are slower than the collective, so the next kernel starts
    after it ended (nothing to overlap)."""
    from minispore.bench import workloads
    x, y = workloads.digits_batches(1)[0]
    losses = {}
    for target in ("CPU", "Ascend"):
        ms.set_context(device_target=target, mode=mode, jit_level="O2")
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                     gradients_mean=True, all_reduce_fusion_config=[2])
        try:
            with modelled_world(2):
                cell = workloads.train_cell("mlp")
                dev = ascend_sim.device()
                since = len(dev.records())
                losses[target] = [float(cell(ms.Tensor(x), ms.Tensor(y)).asnumpy())
                                  for _ in range(2)]
                recs = dev.records()[since:]
        finally:
            ms.reset_auto_parallel_context()
    np.testing.assert_allclose(losses["Ascend"], losses["CPU"], rtol=1e-5)
    comm = [r for r in recs if r["track"] == 2]
    assert len(comm) == 4 and all(r["name"].startswith("hcclAllReduce") and
                                  r["name"].endswith(" x2") for r in comm)
    compute = [r for r in recs if r["track"] == 0]
    overlap = [c["name"] for h in comm for c in compute
               if c["start_s"] < h["start_s"] + h["duration_s"] and
               c["start_s"] + c["duration_s"] > h["start_s"]]
    if mode == ms.GRAPH_MODE:
        assert "MatMul" in overlap, "the backward's matmul does not overlap a collective"
    else:
        assert not overlap
        assert all(r["duration_s"] < P.host_launch_eager for r in comm)


def test_the_modelled_world_restores_the_process_world():
    from minispore.communication import get_group_size
    assert get_group_size() == 1
    with modelled_world(8) as w:
        assert isinstance(w, ModelledCommunicator) and get_group_size() == 8
    assert get_group_size() == 1
    with pytest.raises(ValueError, match=">= 1"):
        ModelledCommunicator(0)


def test_bench_prints_the_data_parallel_rows_labelled_simulated():
    from minispore import cli
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = cli.main(["bench", "--workloads", "dp-mlp", "--modes", "graph", "--ranks",
                       "1,2,4", "--mpi-ranks", "0", "--quick", "--repeat", "1",
                       "--no-progress", "--json", "/tmp/minispore-test-dp-bench.json"])
    assert rc == 0
    text = out.getvalue()
    assert "data parallel on the simulated Ascend" in text and "SIMULATED" in text
    result = json.loads(open("/tmp/minispore-test-dp-bench.json").read())
    rows = result["dp_rows"]
    assert [(r["ranks"], r["source"]) for r in rows] == [(1, "1 process"), (2, "model"),
                                                         (4, "model")]
    assert all(r["status"] == "ok" and r["sim_label"].startswith("SIMULATED") for r in rows)
    assert rows[0]["scaling_efficiency"] == 1.0 and rows[0]["sim_comm_s"] == 0.0
    assert rows[2]["sim_comm_s"] > rows[1]["sim_comm_s"] > 0
    for r in rows:
        assert r["sim_samples_per_s"] == pytest.approx(r["ranks"] * 32 / r["sim_step_s"])
        assert r["median_s"] > 0                       # the simulation's wall time beside


def test_bench_rejects_bad_rank_lists():
    from minispore import cli
    with pytest.raises(SystemExit, match="--ranks"):
        cli.main(["bench", "--workloads", "dp-mlp", "--ranks", "1,x"])
    with pytest.raises(SystemExit, match="--ranks"):
        cli.main(["bench", "--workloads", "dp-mlp", "--ranks", "0"])


def test_rooted_collectives_cost_as_their_duals():
    from minispore.backends.ascend_sim.collectives import estimate
    from minispore.backends.ascend_sim.profile import ASCEND_910B as prof
    n = 4 << 20
    for p in (2, 8, 16):
        bcast = estimate("collective_broadcast", n, p, prof).seconds
        gather = estimate("all_gather", n, p, prof).seconds
        assert estimate("reduce", n, p, prof).seconds == bcast
        assert estimate("broadcast_from_root", n, p, prof).seconds == bcast
        assert estimate("collective_gather", n, p, prof).seconds == gather
        assert estimate("collective_scatter", n, p, prof).seconds == gather
