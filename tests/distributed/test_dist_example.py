"""examples/15_data_parallel.py under `python -m minispore run -n N`: two ranks train the
digits to the same loss curve and test accuracy as one process (the same global batch), in
GRAPH_MODE and PyNative, on the CPU and on the simulated Ascend."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from dist_job import ROOT, _env, need_mpi

EXAMPLE = os.path.join(ROOT, "examples", "15_data_parallel.py")


def _run(n, mode, device="CPU"):
    need_mpi()
    job = subprocess.run([sys.executable, "-m", "minispore", "run", "-n", str(n), EXAMPLE,
                          "--mode", mode, "--device", device, "--epochs", "2"],
                         capture_output=True, text=True, timeout=240, env=_env(), cwd=ROOT)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    assert f"OK data parallel: ranks={n} mode={mode} device={device}" in job.stdout, job.stdout
    loss = float(re.search(r"final loss: ([0-9.]+)", job.stdout).group(1))
    acc = float(re.search(r"test accuracy: ([0-9.]+)", job.stdout).group(1))
    return loss, acc


@pytest.mark.parametrize("device", ["CPU", "Ascend"])
def test_two_ranks_train_as_one_process(device):
    one = _run(1, "graph", device)
    two = _run(2, "graph", device)
    # float32 on the CPU; the simulated Ascend computes matmuls in float16 by default
    # (precision_mode allow_fp32_to_fp16), where a shard's roundings differ from the full
    # batch's a little more
    rel = 1e-5 if device == "CPU" else 5e-3
    assert two[0] == pytest.approx(one[0], rel=rel) and two[1] == one[1], (one, two)
    if device == "CPU":
        assert _run(2, "pynative") == pytest.approx(two, rel=1e-5)
    assert one[0] < 1.5 and one[1] > 0.6              # it trained (the first loss is ~2.3)
