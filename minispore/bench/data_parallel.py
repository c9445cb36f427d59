"""The bench's data-parallel workloads on the simulated Ascend: dp-mlp and dp-cnn, the digits
MLP and LeNet-style CNN (workloads.py's mlp, cnn) trained data-parallel (parallel_mode
DATA_PARALLEL, gradients_mean=True: TrainOneStepCell all-reduces the gradients).

Weak scaling: every rank trains on its own batch of PER_RANK_BATCH digits, so p ranks process
p x 32 samples a step, and the scaling efficiency is the 1-rank step time / the p-rank step
time (1.0 = the collectives cost nothing). All step times are SIMULATED model time of the
simulated Ascend (HCCL over HCCS/RoCE from collectives.py); each row also reports the wall
time the simulation took per step here.

Which rank counts run how (`--mpi-ranks`, default: this machine's CPU count):
- up to that count, a real job of p MPI ranks (`python -m minispore run`), each rank's
  simulated device timing its own collectives; a row reports the slowest rank;
- beyond it, the model: this process alone as rank 0 of a modelled world of p devices
  (ascend_sim/cluster.py), whose timeline is rank 0's of a p-rank job with each collective
  costed for p devices. Both give one number where both can run (the tests check that).
Every rank runs the same fixed number of steps (MPI ranks must meet in each collective).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

DP_WORKLOADS = {
    "dp-mlp": "data-parallel MLP 64-128-10 training step, digits batch 32 per rank, Momentum "
              "(simulated Ascend, weak scaling)",
    "dp-cnn": "data-parallel LeNet-style CNN training step, digits batch 32 per rank, "
              "Momentum (simulated Ascend, weak scaling)",
}
DP_MODES = ("pynative", "graph-O0", "graph-O1", "graph")
DEFAULT_RANKS = (1, 2, 4, 8)
PER_RANK_BATCH = 32
SIM_LABEL = "SIMULATED model time (not hardware)"
RANK_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dp_rank.py")


def supported(mode: str) -> tuple[bool, str]:
    if mode not in DP_MODES:
        return False, f"the data-parallel workloads run in {', '.join(DP_MODES)}"
    return True, ""


def machine_ranks() -> int:
    """How many MPI ranks this machine runs at once (its CPUs)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def mpi_usable() -> tuple[bool, str]:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False, "mpi4py is not installed (pip install \"minispore[mpi]\")"
    from ..communication.launcher import _find_mpiexec
    try:
        _find_mpiexec()
    except FileNotFoundError as e:
        return False, str(e)
    return True, ""


def measure(workload: str, mode: str, steps: int, repeats: int, rank: int = 0) -> dict:
    """Train `workload` data-parallel in `mode` on the simulated Ascend in the current world
    (MPI's, a modelled one, or the single process's): 2 warm-up steps (compile), then
    `repeats` x `steps` steps, synchronised after each repeat. Per step: the simulated time
    (median, min, max over the repeats), the communication stream's busy time and the wall
    time the simulation took."""
    import minispore as ms
    from ..backends import ascend_sim
    from . import workloads
    ctx, level = workloads.MODES[mode]
    ms.set_context(device_target="Ascend", jit_level=level,
                   mode=ms.GRAPH_MODE if ctx == "GRAPH" else ms.PYNATIVE_MODE)
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                 gradients_mean=True)
    try:
        cell = workloads.train_cell(workload[len("dp-"):])
    finally:
        ms.reset_auto_parallel_context()
    batches = [(ms.Tensor(x), ms.Tensor(y)) for x, y in workloads.digits_batches(2)]
    dev = ascend_sim.device()
    state = {"i": rank}

    def step():
        i = state["i"]
        state["i"] = i + 1
        return cell(*batches[i % len(batches)])

    pc = time.perf_counter
    t0 = pc()
    step().asnumpy()
    first = pc() - t0
    step().asnumpy()
    sims, walls, comms = [], [], []
    for _ in range(repeats):
        dev.synchronize()
        s0, c0, t0 = dev.now(), dev.comm_busy, pc()
        for _ in range(steps):
            loss = step()
        loss.asnumpy()
        walls.append((pc() - t0) / steps)
        sims.append((dev.now() - s0) / steps)
        comms.append((dev.comm_busy - c0) / steps)
    return {"status": "ok", "sim_step_s": statistics.median(sims), "sim_min_s": min(sims),
            "sim_max_s": max(sims), "sim_comm_s": statistics.median(comms),
            "median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
            "first_call_s": first, "steps": steps * repeats, "sim_label": SIM_LABEL}


def modelled(workload: str, mode: str, p: int, steps: int, repeats: int) -> dict:
    """`measure` as rank 0 of a modelled world of p simulated devices (module docstring)."""
    from ..backends.ascend_sim.cluster import modelled_world
    with modelled_world(p):
        return {**measure(workload, mode, steps, repeats), "source": "model"}


def mpi_job(p: int, cases: list, steps: int, repeats: int, timeout: float) -> dict:
    """{(workload, mode): row} measured by a real job of p MPI ranks (dp_rank.py); a row holds
    the slowest rank's times."""
    spec = json.dumps({"cases": cases, "steps": steps, "repeats": repeats})
    import minispore
    home = os.path.dirname(os.path.dirname(os.path.abspath(minispore.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(x for x in (home, env.get("PYTHONPATH")) if x)
    for k in [k for k in env if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))]:
        del env[k]                  # a bench started under mpirun must not leak its rank
    cmd = [sys.executable, "-m", "minispore", "run", "-n", str(p), "--timeout", str(timeout),
           RANK_SCRIPT, spec]
    try:
        job = subprocess.run(cmd, capture_output=True, text=True, env=env,
                             timeout=timeout + 30)
        out, err, rc = job.stdout, job.stderr, job.returncode
    except subprocess.TimeoutExpired:
        out, err, rc = "", "", 124
    got: dict = {}
    prefix = "RESULT "
    for line in out.splitlines():
        if line.startswith("[rank ") and prefix in line:
            r = json.loads(line.split(prefix, 1)[1])
            got.setdefault((r["workload"], r["mode"]), []).append(r)
    rows = {}
    for w, m in cases:
        ranks = got.get((w, m), [])
        if len(ranks) != p or any(r["status"] != "ok" for r in ranks):
            why = next((r["reason"] for r in ranks if r["status"] != "ok"),
                       f"the {p}-rank job exited with {rc} after {len(ranks)} of {p} ranks' "
                       f"results" + (f": {err.strip()[-300:]}" if rc not in (0, 124)
                                     else ""))
            rows[(w, m)] = {"status": "error", "reason": why, "source": f"MPI ({p} ranks)"}
            continue
        slow = max(ranks, key=lambda r: r["sim_step_s"])
        row = {k: v for k, v in slow.items() if k not in ("workload", "mode", "rank")}
        wall = max(ranks, key=lambda r: r["median_s"])      # the slowest rank's wall time
        row.update(median_s=wall["median_s"], min_s=wall["min_s"], max_s=wall["max_s"])
        row["source"] = f"MPI ({p} ranks)"
        rows[(w, m)] = row
    return rows


def run(workloads_: list, modes: list, ranks: list, mpi_ranks: int, quick: bool,
        repeats: int, progress=None) -> list:
    """The data-parallel rows: one per (workload, mode, ranks), with the scaling efficiency
    against the 1-rank row (measured even when 1 is not asked for)."""
    steps = 2 if quick else 4
    cases = [(w, m) for w in workloads_ for m in modes if supported(m)[0]]
    counts = sorted(set(ranks) | {1})
    ok, why = mpi_usable()
    real = [p for p in counts if 1 < p <= mpi_ranks] if ok else []
    measured: dict = {}
    for p in real:
        if progress:
            progress(f"data-parallel: {p} MPI ranks")
        for key, row in mpi_job(p, cases, steps, repeats, timeout=300).items():
            measured[key + (p,)] = row
    for w, m in cases:
        for p in counts:
            if (w, m, p) in measured:
                continue
            if progress:
                progress(f"{w} {m}: {p} rank(s), modelled" if p > 1 else f"{w} {m}: 1 rank")
            try:
                if p == 1:
                    row = {**measure(w, m, steps, repeats), "source": "1 process"}
                else:
                    row = modelled(w, m, p, steps, repeats)
            except Exception as e:        # one failing case never hides the others
                row = {"status": "error", "reason": f"{type(e).__name__}: {e}",
                       "source": "model"}
            measured[(w, m, p)] = row
    rows = []
    for w in workloads_:
        for m in modes:
            good, reason = supported(m)
            base = {"workload": w, "impl": "minispore", "backend": "Ascend", "mode": m}
            if not good:
                rows.append({**base, "ranks": None, "status": "skipped", "reason": reason})
                continue
            one = measured[(w, m, 1)]
            for p in ranks:
                row = {**base, "ranks": p, **measured[(w, m, p)]}
                if row["status"] == "ok" and one["status"] == "ok":
                    row["scaling_efficiency"] = one["sim_step_s"] / row["sim_step_s"]
                    row["sim_samples_per_s"] = p * PER_RANK_BATCH / row["sim_step_s"]
                if not ok and p > 1 and p <= mpi_ranks:
                    row["note"] = f"modelled: no MPI here ({why})"
                rows.append(row)
    return rows
