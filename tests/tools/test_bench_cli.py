"""`python -m minispore bench` smoke tests: on the CPU and the simulated Ascend with
--quick and tiny repeats, the JSON has its structure and a row for every requested (workload,
backend, mode) and peer; unusable backends, missing peers and modes a workload lacks are rows
skipped with the reason. Timings are not checked (tests assert behaviour, not speed)."""
from __future__ import annotations

import json

import pytest

from minispore import cli
from minispore.bench import peers, report, workloads
from minispore.core.device import availability
from minispore.core.graph import compile as graph_compile

FAST = ["--quick", "--repeat", "1", "--target-ms", "1", "--no-progress"]


@pytest.fixture(autouse=True)
def fresh_compile_cache():
    graph_compile.clear_cache()
    yield
    graph_compile.clear_cache()


def bench(tmp_path, *args) -> dict:
    path = tmp_path / "bench.json"
    assert cli.main(["bench", *FAST, "--json", str(path), *args]) == 0
    return json.loads(path.read_text())


def rows_by_key(result) -> dict:
    out = {}
    for r in result["rows"]:
        key = (r["workload"], r["impl"], r["backend"], r["mode"])
        assert key not in out, key
        out[key] = r
    return out


def check_ok_row(r, repeats=1):
    assert r["status"] == "ok", r
    assert r["min_s"] <= r["median_s"] <= r["max_s"]
    assert len(r["samples_s"]) == r["repeats"] == repeats
    assert r["first_call_s"] > 0 and r["calls_per_repeat"] >= 1 and r["steps_per_call"] >= 1


def test_cpu_rows_peers_and_skipped_backends(tmp_path, capsys):
    res = bench(tmp_path, "--backends", "CPU,GPU", "--workloads", "dispatch,fused,mlp",
                "--modes", "pynative,graph-O1", "--peers", "numpy,torch")
    for key in ("tool", "minispore_version", "machine", "options", "backends", "peers",
                "workloads", "method", "rows"):
        assert key in res, key
    assert set(res["workloads"]) == {"dispatch", "fused", "mlp"}
    rows = rows_by_key(res)
    gpu_ok, gpu_why = availability()["GPU"]
    for w in ("dispatch", "fused", "mlp"):
        for m in ("pynative", "graph-O1"):
            r = rows[(w, "minispore", "CPU", m)]
            check_ok_row(r)
            assert r["launches_per_step"] >= 1 and r["kernels_per_step"] >= 1
            assert "sim_step_s" not in r
            if not gpu_ok:
                g = rows[(w, "minispore", "GPU", m)]
                assert g["status"] == "skipped" and gpu_why in g["reason"]
        assert rows[(w, "minispore", "CPU", "graph-O1")]["speedup_vs_pynative"] > 0
        check_ok_row(rows[(w, "numpy", "CPU", "eager")])
        t = rows[(w, "torch", "CPU", "eager")]
        assert t["status"] == "ok" if res["peers"]["torch"]["importable"] else \
            "not importable" in t["reason"]
    # eager dispatch of `a + b` is one launch per step; the fused chain eight in PyNative
    assert rows[("dispatch", "minispore", "CPU", "pynative")]["launches_per_step"] == 1
    assert rows[("fused", "minispore", "CPU", "pynative")]["launches_per_step"] == 8
    assert rows[("fused", "minispore", "CPU", "graph-O1")]["launches_per_step"] == 1
    out = capsys.readouterr().out
    assert "minispore bench" in out and "dispatch" in out and "results:" in out


def test_ascend_rows_carry_simulated_device_time(tmp_path):
    modes = ["pynative", "graph", "loop-sink"]
    res = bench(tmp_path, "--backends", "Ascend", "--modes", ",".join(modes), "--peers", "none")
    rows = rows_by_key(res)
    assert res["options"]["workloads"] == ["dispatch", "dispatch-large", "fused", "chain-b",
                                           "matmul", "mlp", "cnn"]
    assert len(rows) == 7 * len(modes)
    for w in res["options"]["workloads"]:
        for m in modes:
            r = rows[(w, "minispore", "Ascend", m)]
            if m == "loop-sink" and w not in ("mlp", "cnn"):
                assert r["status"] == "skipped" and "loop sink" in r["reason"]
                continue
            check_ok_row(r)
            assert r["sim_step_s"] > 0 and "SIMULATED" in r["sim_label"]
            assert r["tasks_per_step"] > 0
    mlp = {m: rows[("mlp", "minispore", "Ascend", m)] for m in modes}
    assert mlp["graph"]["launches_per_step"] == 1                 # one sunk graph a step
    assert mlp["loop-sink"]["launches_per_step"] < 1              # one launch per loop
    assert mlp["pynative"]["launches_per_step"] > 10


SPEED = ["dispatch-large", "dispatch-grad", "chain-b", "mlp-256", "mlp-1024"]


def test_speed_rows_on_cpu_with_numpy_and_gflops(tmp_path, capsys):
    res = bench(tmp_path, "--backends", "CPU", "--workloads", ",".join(SPEED),
                "--modes", "pynative,graph,loop-sink", "--peers", "numpy")
    rows = rows_by_key(res)
    assert len(rows) == len(SPEED) * 4
    for w in SPEED:
        for m in ("pynative", "graph"):
            check_ok_row(rows[(w, "minispore", "CPU", m)])
        sink = rows[(w, "minispore", "CPU", "loop-sink")]
        if w.startswith("mlp"):
            check_ok_row(sink)
            assert sink["steps_per_call"] == 4                 # the --quick batches, one call
        else:
            assert sink["status"] == "skipped" and "loop sink" in sink["reason"]
        npy = rows[(w, "numpy", "CPU", "eager")]
        if w == "dispatch-grad":
            assert npy["status"] == "skipped" and "no autodiff" in npy["reason"]
        else:
            check_ok_row(npy)
    # one call of dispatch-grad records GRAD_OPS adds and counts one step each
    grad = rows[("dispatch-grad", "minispore", "CPU", "pynative")]
    assert grad["steps_per_call"] == workloads.GRAD_OPS
    assert grad["launches_per_step"] >= 1
    assert rows[("dispatch-large", "minispore", "CPU", "pynative")]["launches_per_step"] == 1
    assert rows[("chain-b", "minispore", "CPU", "pynative")]["launches_per_step"] == 6
    assert rows[("chain-b", "minispore", "CPU", "graph")]["launches_per_step"] == 1
    # mlp-1024 (batch 256 with --quick) carries GFLOP/s and its share of the sgemm peak
    assert "batch 256" in res["workloads"]["mlp-1024"]
    assert res["sgemm_peak_gflops"] > 0
    flops = workloads.mlp_step_flops(workloads.MLP_LAYERS["mlp-1024"], 256)
    for r in res["rows"]:
        if r["workload"] == "mlp-1024" and r["status"] == "ok":
            assert r["backend"] == "CPU" and r["flops_per_step"] == flops
            assert r["gflops"] > 0 and r["of_sgemm_peak"] > 0
            assert r["gflops"] == pytest.approx(flops / r["median_s"] / 1e9)
        else:
            assert "gflops" not in r
    out = capsys.readouterr().out
    assert "GFLOP/s" in out and "sgemm peak" in out


def test_mlp_step_flops_counts_three_gemms_a_layer_but_two_for_the_first():
    B, D, H, C = 1024, 64, 1024, 10
    assert workloads.mlp_step_flops((D, H, H, C), B) == \
        2 * B * (2 * D * H + 3 * H * H + 3 * H * C)
    assert workloads.mlp_step_flops((D, C), B) == 2 * 2 * B * D * C


def test_peers_share_the_workloads_constants():
    # peers.py imports only numpy, so it repeats these; they must agree
    assert peers.GRAD_OPS == workloads.GRAD_OPS
    assert set(peers.MLP) == set(workloads.MLP_LAYERS)


@pytest.mark.parametrize("w", sorted(workloads.MLP_LAYERS))
def test_numpy_mlp_peer_learns(w):
    data = workloads.inputs(w, quick=True)
    assert data["layers"] == workloads.MLP_LAYERS[w]
    x, y = data["batches"][0]
    assert x.shape[1:] == (1, 8, 8) and x.dtype.name == "float32" and y.dtype.name == "int32"
    assert len(x) == workloads.sizes(True)["batch"][w]
    data["batches"] = data["batches"][:1]
    step = peers._numpy_mlp(data)
    losses = [float(step()) for _ in range(10)]
    assert losses[-1] < 0.8 * losses[0]


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(SystemExit, match="--backends: TPU not valid"):
        cli.main(["bench", "--backends", "TPU", "--json", str(tmp_path / "x.json")])
    with pytest.raises(SystemExit, match="--modes"):
        cli.main(["bench", "--modes", "eager", "--json", str(tmp_path / "x.json")])


def fake_result() -> dict:
    row = {"workload": "dispatch", "impl": "minispore", "backend": "Ascend", "mode": "graph",
           "status": "ok", "median_s": 2e-5, "min_s": 1.8e-5, "max_s": 3e-5,
           "first_call_s": 0.01, "sim_step_s": 3e-5, "sim_min_s": 3e-5, "sim_max_s": 3e-5}
    return {"options": {"workloads": ["dispatch"], "quick": True, "repeats": 1,
                        "backends": ["Ascend"]},
            "workloads": {"dispatch": "a + b"}, "rows": [row, dict(row, impl="numpy",
                                                                   backend="CPU")],
            "backends": {"Ascend": {"usable": True, "reason": ""}}, "peers": {}}


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is an optional extra "
                                             "(minispore[plot]); --plot then says so")
    path = report.plot(fake_result(), str(tmp_path / "b.png"))
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_so(tmp_path, monkeypatch, capsys):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert report.plot(fake_result(), str(tmp_path / "b.png")) is None
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert not (tmp_path / "b.png").exists()
