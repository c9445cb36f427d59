"""`python -m minispore bench` smoke tests: on the CPU and the simulated Ascend with
--quick and tiny repeats, the JSON has its structure and a row for every requested (workload,
backend, mode) and peer; unusable backends, missing peers and modes a workload lacks are rows
skipped with the reason. Timings are not checked (tests assert behaviour, not speed)."""
from __future__ import annotations

import json

import pytest

from minispore import cli
from minispore.bench import report
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
    assert res["options"]["workloads"] == ["dispatch", "fused", "matmul", "mlp", "cnn"]
    assert len(rows) == 5 * len(modes)
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
