"""benchmarks/data_parallel.py --smoke: the driver starts its MPI jobs (the all-reduce at 2 ranks,
the data-parallel training step at 1 and 2 ranks), collects rank 0's JSON and prints both
tables and the target lines, every row measured (none skipped). Timings are not checked (tests
assert behaviour, not speed); the all-reduce results are checked against mpi4py's sum."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "benchmarks", "data_parallel.py")


def test_smoke_mode_prints_every_row(tmp_path):
    pytest.importorskip("mpi4py", reason='mpi4py is not installed (pip install "minispore[mpi]")')
    out_json = tmp_path / "dp.json"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))}
    env["COLUMNS"] = "200"
    proc = subprocess.run([sys.executable, SCRIPT, "--smoke", "--json", str(out_json)],
                          capture_output=True, text=True, timeout=150, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout
    assert "Sum all-reduce of float32 buffers, 2 ranks" in text, text
    assert "4 KB" in text and "skipped" not in text, text
    for row in ("minispore PyNative", "minispore GRAPH (O2)"):
        assert row in text, text
    assert "torch DDP" not in text                      # --smoke runs no peers
    assert "all-reduce minispore / mpi4py (target >= 0.9x): pynative 4 KB" in text, text
    assert "weak scaling 2-rank / 1-rank step time (target <= 1.25x): minispore PyNative" in text

    result = json.loads(out_json.read_text())
    ways = result["allreduce"]["launcher"]["sizes"]["4096"]
    assert set(ways) == {"mpi4py", "pynative", "graph"}
    assert ways["pynative"]["matches_mpi4py"] is True and ways["graph"]["matches_mpi4py"] is True
    for ranks in ("1", "2"):
        job = result["train"][ranks]
        assert job["status"] == "ok" and job["ranks"] == int(ranks), job
        for mode in ("pynative", "graph"):
            step = job["modes"][mode]
            assert len(step["step_s"]) == 2 and step["median"] > 0
    # the 2-rank job reduced its gradients: one fused all-reduce per step in each mode
    assert result["train"]["2"]["modes"]["graph"]["all_reduce_calls_per_step"] == 1
    assert result["train"]["2"]["modes"]["pynative"]["all_reduce_calls_per_step"] == 1
    assert result["train"]["1"]["modes"]["graph"]["all_reduce_calls_per_step"] == 0
