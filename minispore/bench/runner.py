"""Running the bench: every requested (workload, backend, mode) of minispore and every peer row,
measured in this process with one method (benchmarks/_harness.py's, in small):

- the first call (parse + compile + kernel generation + one run) is timed alone and reported as
  `first_call_s`, never mixed into the samples; a second call finishes the warm-up (for
  minispore, calls up to the one where PyNative queues the compile of a repeated backward,
  bprop_graph.HOT); minispore's compiles queued in the background (the CPU's O2 programs,
  PyNative's compiled backward) are waited for after each of these calls, so the samples time
  the steady state and no build runs on into the next row;
- then calls are timed in repeats of n calls (n chosen so that a repeat lasts about
  `target_s`; asynchronous frameworks are synchronised once per repeat): one sample per repeat,
  seconds per step; the row reports the median and the min and max (noise);
- then one more call runs under ms.Profiler for the launches, kernels and device tasks per step
  (outside the timed samples: the profiler's wrappers cost time);
- on the simulated Ascend, the simulated clock's advance per step over the same repeats:
  SIMULATED model time, reported beside the wall time the simulation took;
- workloads with a FLOP count (workloads.flops: mlp-1024) give each row `gflops` = FLOPs a
  step / median wall time, and each row computed on this CPU (minispore's CPU rows and the
  peers) `of_sgemm_peak` = that / `sgemm_peak_gflops`, the best of 5 numpy float32
  1024x1024 @ 1024x1024 products measured in the same run (2*1024^3 FLOPs each).

A backend that is not usable here (availability()) gets its rows as skipped, with the reason;
so does a peer that is not importable in this interpreter, and a mode a workload lacks.
"""
from __future__ import annotations

import gc
import platform
import statistics
import time
from dataclasses import dataclass, field

from . import data_parallel
from . import peers as P
from . import workloads
from .data_parallel import DP_WORKLOADS


@dataclass
class Options:
    backends: list
    modes: list
    workloads: list
    peers: list
    ranks: list = field(default_factory=lambda: [1, 2, 4, 8])
    mpi_ranks: int = 0
    quick: bool = False
    repeat: int | None = None
    target_s: float | None = None
    progress: bool = True
    notes: list = field(default_factory=list)

    @property
    def repeats(self) -> int:
        return self.repeat if self.repeat else (3 if self.quick else 5)

    @property
    def target(self) -> float:
        return self.target_s if self.target_s is not None else (0.05 if self.quick else 0.3)


MAX_CALLS = 100_000              # per repeat


def _sync(out):
    """Wait for a minispore result (asnumpy synchronises the device)."""
    while isinstance(out, (tuple, list)) and out:
        out = out[0]
    if hasattr(out, "asnumpy"):
        out.asnumpy()
    return out


def timed(call, sync, steps: int, opts: Options, clock=None, settle=None,
          warmup: int = 1) -> dict:
    """first call, `warmup` more calls (`settle()` after each, and after the first), then
    repeats (module docstring); `clock()` -> simulated seconds."""
    settle = settle or (lambda: None)
    pc = time.perf_counter
    t0 = pc()
    sync(call())
    first = pc() - t0
    settle()
    for _ in range(warmup - 1):
        sync(call())
        settle()
    t0 = pc()
    sync(call())
    one = pc() - t0
    settle()
    n = max(1, min(MAX_CALLS, int(opts.target / max(one, 1e-9))))
    samples, sims = [], []
    for _ in range(opts.repeats):
        s0 = clock() if clock else 0.0
        t0 = pc()
        out = None
        for _ in range(n):
            out = call()
        sync(out)
        samples.append((pc() - t0) / (n * steps))
        if clock:
            sims.append((clock() - s0) / (n * steps))
    row = {"status": "ok", "first_call_s": first, "calls_per_repeat": n,
           "steps_per_call": steps, "repeats": opts.repeats, "samples_s": samples,
           "median_s": statistics.median(samples), "min_s": min(samples),
           "max_s": max(samples)}
    if clock:
        row.update(sim_step_s=statistics.median(sims), sim_min_s=min(sims), sim_max_s=max(sims),
                   sim_label="SIMULATED model time (not hardware)")
    return row


def run_minispore(backend: str, workload: str, mode: str, data: dict, opts: Options) -> dict:
    import minispore as ms
    from ..profiler import Profiler
    ok, why = workloads.supported(workload, mode)
    if not ok:
        return {"status": "skipped", "reason": why}
    gc.collect()
    ctx, level = workloads.MODES[mode]
    ms.set_context(device_target=backend, jit_level=level,
                   mode=ms.GRAPH_MODE if ctx == "GRAPH" else ms.PYNATIVE_MODE)
    case = workloads.build(workload, mode, data)
    clock = None
    if backend == "Ascend":
        from ..backends import ascend_sim
        dev = ascend_sim.device()

        def clock():
            dev.synchronize()
            return dev.now()
    from ..core import bprop_graph
    from ..core.graph import tiered
    row = timed(case.call, _sync, case.steps, opts, clock, settle=tiered.wait_all,
                warmup=bprop_graph.HOT)
    prof = Profiler(output_path=".")
    _sync(case.call())
    prof.stop()
    tiered.wait_all()                # nothing it queued runs on into the next row
    tot = prof.totals().get(backend, {})
    row["launches_per_step"] = tot.get("launches", 0) / case.steps
    row["kernels_per_step"] = tot.get("kernel_calls", 0) / case.steps
    if tot.get("device_s") is not None:
        row["tasks_per_step"] = tot["tasks"] / case.steps
        row["sim_busy_s"] = tot["device_s"] / case.steps
    return row


def run_peer(peer: str, workload: str, mode: str, data: dict, opts: Options) -> dict:
    try:
        call, steps, sync, label, version = P.make(peer, workload, data, mode)
    except P.Skip as e:
        return {"status": "skipped", "reason": str(e)}
    gc.collect()
    row = timed(call, sync or (lambda r: r), steps, opts)
    row["version"] = version
    return row


SGEMM_N, SGEMM_REPEATS = 1024, 5


def sgemm_peak_gflops(n: int = SGEMM_N, repeats: int = SGEMM_REPEATS) -> float:
    """This machine's float32 GEMM rate: numpy float32 (n, n) @ (n, n) into a preallocated
    output, the best of `repeats` timed products after one untimed, as 2*n^3 / seconds / 1e9."""
    import numpy as np
    r = np.random.default_rng(0)
    a = r.standard_normal((n, n), dtype=np.float32)
    b = r.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    np.matmul(a, b, out=c)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


def tasks(opts: Options) -> list:
    """(kind, workload, backend or peer, mode) in the order rows are measured and shown."""
    out = []
    for w in opts.workloads:
        if w in DP_WORKLOADS:               # data_parallel.run measures these
            continue
        for b in opts.backends:
            for m in opts.modes:
                out.append(("minispore", w, b, m))
        for p in opts.peers:
            for m in P.modes(p):
                out.append((p, w, "CPU", m))
    return out


def run(opts: Options) -> dict:
    from ..core.device import availability
    import minispore
    avail = availability()
    peers_ok = {p: P.importable(p) for p in opts.peers}
    todo = tasks(opts)
    rows = []
    data_cache: dict = {}
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, \
        TimeElapsedColumn
    progress = Progress(TextColumn("[bold]bench[/]"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TextColumn("{task.description}"),
                        transient=True, disable=not opts.progress)
    with progress:
        bar = progress.add_task("", total=len(todo))
        for impl, w, b, m in todo:
            progress.update(bar, description=f"{w} · {impl} {b} {m}")
            base = {"workload": w, "impl": impl, "backend": b, "mode": m}
            if impl == "minispore" and not avail.get(b, (False, "unknown backend"))[0]:
                row = {"status": "skipped",
                       "reason": f"device_target {b!r} is not usable here: {avail[b][1]}"
                       if b in avail else f"unknown backend {b!r}"}
            elif impl != "minispore" and not peers_ok[impl][0]:
                row = {"status": "skipped", "reason": peers_ok[impl][1]}
            else:
                if w not in data_cache:
                    data_cache[w] = workloads.inputs(w, opts.quick)
                try:
                    row = (run_minispore(b, w, m, data_cache[w], opts) if impl == "minispore"
                           else run_peer(impl, w, m, data_cache[w], opts))
                except Exception as e:        # one failing case never hides the others
                    row = {"status": "error", "reason": f"{type(e).__name__}: {e}"}
            rows.append({**base, **row})
            progress.advance(bar)
    _ratios(rows)
    peak = _gflops(rows, opts)
    dp = [w for w in opts.workloads if w in DP_WORKLOADS]
    dp_rows = []
    if dp and "Ascend" not in opts.backends:
        opts.notes.append(f"{', '.join(dp)}: not run, the data-parallel workloads run on the "
                          f"simulated Ascend: add Ascend to --backends")
    elif dp:
        def say(what):
            if opts.progress:
                print(f"bench: {what}", flush=True)
        dp_rows = data_parallel.run(dp, opts.modes, opts.ranks, opts.mpi_ranks, opts.quick,
                                    opts.repeats, say)
    return {"tool": "python -m minispore bench", "minispore_version": minispore.__version__,
            "created": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": {"python": platform.python_version(), "platform": platform.platform(),
                        "processor": platform.processor() or platform.machine()},
            "options": {"backends": opts.backends, "modes": opts.modes,
                        "workloads": opts.workloads, "peers": opts.peers, "quick": opts.quick,
                        "repeats": opts.repeats, "target_s": opts.target,
                        "ranks": opts.ranks, "mpi_ranks": opts.mpi_ranks},
            "backends": {t: {"usable": ok, "reason": why} for t, (ok, why) in avail.items()},
            "peers": {p: {"importable": ok, "reason": why} for p, (ok, why) in peers_ok.items()},
            "workloads": {w: workloads.describe(w, opts.quick) for w in opts.workloads},
            "method": __doc__.split("\n\n", 1)[1].strip(),
            "sgemm_peak_gflops": peak,
            "sgemm_peak_method": None if peak is None else (
                f"numpy float32 ({SGEMM_N},{SGEMM_N}) @ ({SGEMM_N},{SGEMM_N}), best of "
                f"{SGEMM_REPEATS}, 2*n^3 FLOPs"),
            "rows": rows, "dp_rows": dp_rows, "notes": opts.notes}


def _ratios(rows: list) -> None:
    """speedup_vs_pynative: the PyNative row's median / this row's (same workload and backend;
    > 1 = faster), and the same of the simulated step time on Ascend."""
    eager = {(r["workload"], r["backend"]): r for r in rows
             if r["impl"] == "minispore" and r["mode"] == "pynative" and r["status"] == "ok"}
    for r in rows:
        e = eager.get((r["workload"], r["backend"]))
        if r["impl"] != "minispore" or r["status"] != "ok" or e is None:
            continue
        r["speedup_vs_pynative"] = e["median_s"] / r["median_s"]
        if "sim_step_s" in r and e.get("sim_step_s"):
            r["sim_speedup_vs_pynative"] = e["sim_step_s"] / r["sim_step_s"]


def _gflops(rows: list, opts: Options) -> float | None:
    """gflops on the ok rows of workloads with a FLOP count, and of_sgemm_peak on those that
    ran on this CPU; the sgemm peak (measured only when such a row exists), else None."""
    counted = [(r, workloads.flops(r["workload"], opts.quick)) for r in rows
               if r["status"] == "ok"]
    counted = [(r, f) for r, f in counted if f]
    if not counted:
        return None
    gc.collect()
    peak = sgemm_peak_gflops()
    for r, f in counted:
        r["flops_per_step"] = f
        r["gflops"] = f / r["median_s"] / 1e9
        if r["backend"] == "CPU":
            r["of_sgemm_peak"] = r["gflops"] / peak
    return peak
