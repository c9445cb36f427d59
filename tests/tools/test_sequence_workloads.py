"""The sequence-model workloads: `python -m minispore bench --workloads lstm,transformer` (rows
for both modes, asked for by name, not in the default set) and `python -m minispore demo
--models lstm,transformer` (the character models train on the CPU in both modes and on the
simulated Ascend, the CPU's two loss curves agreeing). Timings are not checked."""
from __future__ import annotations

import json

import numpy as np
import pytest

from minispore import cli, sequence_demo
from minispore.bench import workloads
from minispore.core.graph import compile as graph_compile

FAST = ["--quick", "--repeat", "1", "--target-ms", "1", "--no-progress"]


@pytest.fixture(autouse=True)
def fresh_compile_cache():
    graph_compile.clear_cache()
    yield
    graph_compile.clear_cache()


def test_sequence_workloads_are_asked_for_by_name():
    assert set(workloads.SEQUENCE) == {"lstm", "transformer"}
    assert not set(workloads.SEQUENCE) & set(workloads.DEFAULT_WORKLOADS)
    assert not set(workloads.SEQUENCE) & set(workloads.DP_WORKLOADS)
    assert not set(workloads.SEQUENCE) & set(workloads.BY_NAME)
    # the data-parallel workloads (bench/data_parallel.py) and the heavier single-process rows
    # are asked for by name too
    assert set(workloads.DEFAULT_WORKLOADS) | set(workloads.SEQUENCE) | set(
        workloads.DP_WORKLOADS) | set(workloads.BY_NAME) == set(workloads.WORKLOADS)


def test_bench_times_the_lstm_and_transformer_steps_in_both_modes(tmp_path):
    path = tmp_path / "bench.json"
    assert cli.main(["bench", *FAST, "--json", str(path), "--backends", "CPU",
                     "--workloads", "lstm,transformer", "--modes", "pynative,graph,loop-sink",
                     "--peers", "numpy"]) == 0
    rows = {(r["workload"], r["impl"], r["mode"]): r
            for r in json.loads(path.read_text())["rows"]}
    for w in ("lstm", "transformer"):
        for mode in ("pynative", "graph"):
            r = rows[(w, "minispore", mode)]
            assert r["status"] == "ok" and r["median_s"] > 0, r
        assert rows[(w, "minispore", "loop-sink")]["status"] == "skipped"
        assert "numpy has no autodiff" in rows[(w, "numpy", "eager")]["reason"]


def test_demo_refuses_an_unknown_model():
    with pytest.raises(SystemExit):
        cli.main(["demo", "--models", "lstm,resnet"])


def test_character_models_train_in_both_modes_and_on_the_simulated_ascend(capsys):
    rows = sequence_demo.run(models=("lstm", "transformer"), steps=3)
    assert [(r["model"], r["backend"], r["mode"]) for r in rows] == [
        (m, b, mode) for m in ("lstm", "transformer")
        for b, mode in (("CPU", "GRAPH"), ("CPU", "PYNATIVE"), ("Ascend", "GRAPH"))]
    for r in rows:
        assert len(r["losses"]) == 3 and np.all(np.isfinite(r["losses"])), r
    for m in ("lstm", "transformer"):
        g, p = (np.array(r["losses"]) for r in rows
                if r["model"] == m and r["backend"] == "CPU")
        np.testing.assert_allclose(g, p, rtol=1e-5)
    out = capsys.readouterr().out
    assert "GRAPH vs PYNATIVE loss curves on the CPU differ by at most" in out
    assert "simulated" in out.lower()
