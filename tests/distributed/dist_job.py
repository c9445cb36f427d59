"""Launching a small MPI job from a test: `launch(script, n)` runs a rank script of
rank_scripts/ under `python -m minispore run -n N` (or plain mpiexec) with a timeout, and
`results(out)` reads each rank's `RESULT <json>` lines. Tests skip, saying why, where mpi4py
or mpiexec is missing (pip install "minispore[mpi]")."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMEOUT = 120


def mpiexec() -> str | None:
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.exists(here) else shutil.which("mpiexec")


def need_mpi():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (pip install \"minispore[mpi]\")")
    if mpiexec() is None:
        pytest.skip("no mpiexec on PATH (pip install \"minispore[mpi]\" installs Open MPI)")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for k in [k for k in env if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))]:
        del env[k]              # a test run under mpirun must not leak its own rank variables
    return env


def launch(script: str, n: int, *args, plain=False) -> subprocess.CompletedProcess:
    """Run rank_scripts/<script> as a job of n ranks: through `python -m minispore run`, or
    with plain=True as `mpiexec -n N python script` (the user's own mpirun)."""
    need_mpi()
    path = os.path.join(HERE, "rank_scripts", script)
    if plain:
        env = {**_env(), "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        cmd = [mpiexec(), "-n", str(n), "--oversubscribe", "--mca", "btl", "self,tcp",
               sys.executable, path, *args]
    else:
        env = _env()
        cmd = [sys.executable, "-m", "minispore", "run", "-n", str(n), path, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                          cwd=ROOT)


def results(out: str) -> dict:
    """{rank: [parsed RESULT payloads]} from the launcher's rank-prefixed stdout."""
    got: dict = {}
    for line in out.splitlines():
        m = re.match(r"^\[rank (\d+)\] RESULT (.*)$", line)
        if m:
            got.setdefault(int(m.group(1)), []).append(json.loads(m.group(2)))
    return got
