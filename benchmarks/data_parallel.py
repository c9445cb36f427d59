"""Data parallelism on one machine: the all-reduce bandwidth of minispore's collectives against
raw mpi4py on the same buffers, and the data-parallel training step at 1 and 2 ranks (weak
scaling) beside torch.distributed (gloo) DDP and MindSpore under msrun.

Usage (from the repository root)::

    python benchmarks/data_parallel.py [--quick | --smoke] [--json PATH]
                                       [--only allreduce,train,torch,mindspore]

The driver starts each job itself, the rank scripts of ``benchmarks/dp_ranks/``:

1. **All-reduce** (``dp_ranks/allreduce.py``, one job of 2 ranks under the mpiexec command line
   that ``python -m minispore run`` uses, ``minispore.communication.launcher.mpiexec_command``):
   the float32 sum all-reduce of 4 KB, 256 KB, 4 MB and 32 MB buffers, as raw
   ``MPI.COMM_WORLD.Allreduce(x, out)`` into a preallocated buffer, minispore PyNative
   ``ops.AllReduce()(tensor)``, and the op inside a GRAPH_MODE ``@ms.jit`` function; the three are
   sampled in turn on the same data. The cell is the algorithm bandwidth, bytes / time (GB/s),
   median (min-max) over the samples, and the ratio minispore / mpi4py (target >= 0.9x). A last
   column runs the raw mpi4py loop again in a job whose Open MPI uses its shared-memory transport
   alone (``--mca btl self,sm`` instead of the launcher's ``self,sm,tcp``).
2. **Training step** (``dp_ranks/train_step.py``; ``dp_ranks/torch_ddp.py`` for torch): MLP
   64-1024-1024-10 (ReLU), batch 256 PER RANK (weak scaling: 2 ranks do twice the work), softmax
   cross-entropy, Momentum; minispore's ``nn.TrainOneStepCell`` under
   ``set_auto_parallel_context(parallel_mode=DATA_PARALLEL, gradients_mean=True)`` (the
   DistributedGradReducer: one fused all-reduce of the 4.3 MB of gradients per step, on the
   communicator's asynchronous stream) in PYNATIVE
   and GRAPH_MODE (``MINISPORE_TIERED=0``: the native program is built in the first step), and
   torch ``DistributedDataParallel`` (gloo, ``init_method=file://``) on the same model. ms/step
   median (min-max) over the timed steps (each synchronised, the slowest rank's), at 1 and 2 ranks,
   the ratio 2-rank / 1-rank (target <= 1.25x), the time per step inside the gradients' MPI calls
   at 2 ranks (the Allreduce, and the communicator's shape check before it: one small Allgather,
   where a rank also waits for the slower one to finish its backward; both on the communication
   thread, so they may overlap the step), and the first step apart.
   The row "GRAPH, a bucket per layer" sets ``all_reduce_fusion_config=[2, 4]`` (3 buckets,
   the later ones overlapping the rest of the backward) where the other rows have MindSpore's
   default fusion (one 64 MB bucket: here one bucket of every gradient, after the backward); its
   1-rank column is the plain GRAPH step's. The row "GRAPH, 2 ranks not reducing" runs the
   2-rank job's GRAPH step without the all-reduce (parallel_mode STAND_ALONE), beside the
   1-rank step: what sharing the machine (memory bandwidth, caches) costs apart from the
   communication.

Every rank process runs with ONE BLAS/OpenMP/numba thread (``OMP_NUM_THREADS=1`` etc., torch
``set_num_threads(1)``), at 1 rank as at 2: on a 2-core machine a 2-rank job has a core per rank,
and the 1-rank job must not use both cores for weak scaling to compare like with like.

MindSpore's rows (``dp_ranks/mindspore_train.py``, the same model with MindSpore 2.x) run under
its own launcher, msrun (``--worker_num=N --local_worker_num=N``; its CPU collectives need
msrun's scheduler), found beside the MindSpore peer's python; MindSpore gets the same
one-thread variables, but its own thread pool may not follow them. ``--smoke`` (the test's
mode) runs one small size, a tiny MLP for 2 steps and no peers. Speed is measured, not
asserted. The machine may be shared: before each job the driver waits (up to 3 s with --quick)
for quiet CPUs, measures the CPU other processes used meanwhile, repeats a job once when that
exceeded 25% and flags a row still loaded with '!'.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402

RANKS_DIR = os.path.join(H.BENCH_DIR, "dp_ranks")
SINGLE_THREAD = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                  "NUMBA_NUM_THREADS")}
KB, MB = 1 << 10, 1 << 20
PLANS = {   # sizes (bytes), timing target per sample (s), samples, timed steps, MLP, batch
    "full": dict(sizes=[4 * KB, 256 * KB, 4 * MB, 32 * MB], target_s=0.2, repeats=7, steps=20,
                 widths="64,1024,1024,10", batch=256, timeout=600),
    "quick": dict(sizes=[4 * KB, 256 * KB, 4 * MB, 32 * MB], target_s=0.08, repeats=3,
                  steps=15, widths="64,1024,1024,10", batch=256, timeout=180),
    "smoke": dict(sizes=[4 * KB], target_s=0.005, repeats=1, steps=2, widths="64,32,10",
                  batch=16, timeout=60),
}
SECTIONS = ("allreduce", "train", "torch", "mindspore")


# --------------------------------------------------------------------------- running jobs

def _env(extra: dict | None = None) -> dict:
    env = dict(os.environ, **SINGLE_THREAD, **H.CHILD_ENV, MINISPORE_TIERED="0",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (H.REPO_ROOT, env.get("PYTHONPATH")) if p)
    for k in [k for k in env if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))]:
        del env[k]                  # a driver run under mpirun must not leak its rank variables
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra or {})
    return env


def mpi_command(ranks: int, script: str, args: list, transport: str | None = None) -> list:
    """What `python -m minispore run -n ranks` runs; `transport` replaces Open MPI's btl list."""
    from minispore.communication.launcher import mpiexec_command
    cmd = mpiexec_command(ranks, os.path.join(RANKS_DIR, script), args)
    if transport is not None:
        if "btl" not in cmd:
            raise RuntimeError("not Open MPI: no btl transport list to replace")
        cmd[cmd.index("btl") + 1] = transport
    return cmd


def _cpu_of_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_job(commands: list, out_path: str, timeout: float) -> dict:
    """Start the processes of one job (one mpiexec, or one process per torch rank), wait, and
    return rank 0's JSON with `wall_s` and `foreign_load`; a failure becomes a skip."""
    busy0, cpu0, t0 = H._busy_jiffies(), _cpu_of_children(), time.perf_counter()
    procs = []
    with tempfile.TemporaryDirectory(prefix="minispore-dp-bench-") as scratch:
        try:
            for cmd, env in commands:
                procs.append(subprocess.Popen(cmd, cwd=scratch, env=env, text=True,
                                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
            deadline = time.monotonic() + timeout
            logs = [p.communicate(timeout=max(1.0, deadline - time.monotonic()))[0]
                    for p in procs]
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
                p.wait()
            return {"status": "skipped", "reason": f"timed out after {timeout:.0f} s"}
        except OSError as exc:
            return {"status": "skipped", "reason": H._one_line(exc)}
    wall = time.perf_counter() - t0
    codes = [p.returncode for p in procs]
    if any(codes) or not os.path.exists(out_path):
        tail = [ln for ln in "".join(logs).splitlines() if ln.strip() and "PMIX" not in ln]
        return {"status": "skipped", "reason": f"exit codes {codes}: "
                f"{(tail or ['no output'])[-1][:300]}", "log": "".join(logs)[-4000:]}
    with open(out_path) as f:
        result = json.load(f)
    os.remove(out_path)
    result.update(status="ok", wall_s=wall, foreign_load=None)
    busy1 = H._busy_jiffies()
    if busy0 is not None and busy1 is not None and wall > 0:
        foreign = (busy1 - busy0) / os.sysconf("SC_CLK_TCK") - (_cpu_of_children() - cpu0)
        result["foreign_load"] = max(0.0, foreign / (wall * (os.cpu_count() or 1)))
    return result


def run_with_retry(name: str, make_commands, out_path: str, plan: dict, quiet_s: float) -> dict:
    """One job, repeated once when other processes loaded the machine meanwhile (not in the
    smoke plan, whose numbers mean nothing)."""
    for attempt in range(1 if plan is PLANS["smoke"] else 2):
        H.wait_for_quiet(quiet_s)
        out = run_job(make_commands(), out_path, plan["timeout"])
        if (out["status"] != "ok" or attempt == 1 or plan is PLANS["smoke"]
                or (out["foreign_load"] or 0) <= H.LOAD_LIMIT):
            break
        print(f"    {name}: foreign load {out['foreign_load']:.0%}, repeating once",
              file=sys.stderr, flush=True)
    load = out.get("foreign_load")
    how = "" if load is None else f" (wall {out['wall_s']:.1f} s, foreign load {load:.0%})"
    print(f"  {name}: {out['status']} {out.get('reason', '')}{how}", file=sys.stderr, flush=True)
    return out


# --------------------------------------------------------------------------- the jobs

def allreduce_jobs(plan: dict, tmp: str, quiet_s: float, smoke: bool) -> dict:
    """The 2-rank all-reduce job (mpi4py, PyNative, GRAPH) and, unless smoke, raw mpi4py over
    Open MPI's shared-memory transport."""
    out_path = os.path.join(tmp, "allreduce.json")
    args = ["--sizes", ",".join(str(s) for s in plan["sizes"]), "--target-s",
            str(plan["target_s"]), "--repeats", str(plan["repeats"]), "--out", out_path]
    jobs = {"launcher": run_with_retry(
        "all-reduce, 2 ranks", lambda: [(mpi_command(2, "allreduce.py", args), _env())],
        out_path, plan, quiet_s)}
    if not smoke:
        def shared_memory():
            return [(mpi_command(2, "allreduce.py", args + ["--ways", "mpi4py"], "self,sm"),
                     _env())]
        jobs["shared_memory"] = run_with_retry("all-reduce mpi4py over btl self,sm, 2 ranks",
                                               shared_memory, out_path, plan, quiet_s)
    return jobs


def train_args(plan: dict, out_path: str) -> list:
    return ["--widths", plan["widths"], "--batch", str(plan["batch"]), "--steps",
            str(plan["steps"]), "--warmup", "1" if plan is PLANS["smoke"] else "2",
            "--out", out_path]


def train_jobs(plan: dict, tmp: str, quiet_s: float) -> dict:
    """minispore's data-parallel step (PyNative and GRAPH in one job) at 1 and 2 ranks."""
    out_path = os.path.join(tmp, "train.json")
    args = train_args(plan, out_path)

    def commands(n):
        alone = n == 2 and plan is not PLANS["smoke"]
        modes = "pynative,graph" + (",graph_alone,graph_buckets" if alone else "")
        return [(mpi_command(n, "train_step.py", args + ["--modes", modes]), _env())]
    return {n: run_with_retry(f"minispore training step, {n} rank(s)", lambda n=n: commands(n),
                              out_path, plan, quiet_s)
            for n in (1, 2)}


def torch_jobs(plan: dict, tmp: str, quiet_s: float) -> dict:
    """torch DDP (gloo) at 1 and 2 ranks, one process per rank, or why it was skipped."""
    python, how = H.find_peer("torch", "torch")
    if python is None:
        return {"skipped": how}
    out_path = os.path.join(tmp, "torch.json")
    script = os.path.join(RANKS_DIR, "torch_ddp.py")
    jobs: dict = {"python": python}
    for n in (1, 2):
        def commands(n=n):
            init_file = tempfile.mktemp(prefix="gloo-init-", dir=tmp)   # must not exist yet
            return [([python, script, str(r), str(n), init_file, *train_args(plan, out_path)],
                     _env()) for r in range(n)]
        jobs[n] = run_with_retry(f"torch DDP gloo, {n} rank(s)", commands, out_path, plan,
                                 quiet_s)
    return jobs


def _free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def mindspore_jobs(plan: dict, tmp: str, quiet_s: float) -> dict:
    """MindSpore's data-parallel step at 1 and 2 ranks under its own launcher msrun (its CPU
    collectives need msrun's scheduler), or why it was skipped."""
    python, how = H.find_peer("mindspore", "mindspore")
    if python is None:
        return {"skipped": how}
    bindir = os.path.dirname(python)
    msrun = os.path.join(bindir, "msrun")
    if not os.path.exists(msrun):
        return {"skipped": f"no msrun beside {python}"}
    out_path = os.path.join(tmp, "mindspore.json")
    script = os.path.join(RANKS_DIR, "mindspore_train.py")
    jobs: dict = {"python": python}
    for n in (1, 2):
        def commands(n=n):
            env = _env({"PATH": bindir + os.pathsep + os.environ.get("PATH", "")})
            return [([msrun, f"--worker_num={n}", f"--local_worker_num={n}",
                      f"--master_port={_free_port()}", "--join=True",
                      f"--log_dir={tempfile.mkdtemp(prefix='msrun-', dir=tmp)}", script,
                      *train_args(plan, out_path)], env)]
        jobs[n] = run_with_retry(f"MindSpore msrun, {n} rank(s)", commands, out_path, plan,
                                 quiet_s)
    return jobs


# --------------------------------------------------------------------------- the report

def _why(job: dict | None) -> str:
    if not job:
        return "not run"
    return job.get("skipped") or job.get("reason") or "?"


def _flag(job: dict) -> str:
    return " !" if (job.get("foreign_load") or 0) > H.LOAD_LIMIT else ""


def _bandwidth(nbytes: int, way: dict | None) -> tuple | None:
    if not way:
        return None
    return nbytes / way["median"] / 1e9, nbytes / way["max"] / 1e9, nbytes / way["min"] / 1e9


def _gbs_cell(bw: tuple) -> str:
    """'median (min-max)' in GB/s, with enough digits for a 4 KB buffer's small figure."""
    def num(x):
        return f"{x:.4f}" if x < 0.01 else H.fmt_num(x)
    return f"{num(bw[0])} ({num(bw[1])}\u2013{num(bw[2])})"


def _size_name(nbytes: int) -> str:
    return f"{nbytes // MB} MB" if nbytes >= MB else f"{nbytes // KB} KB"


def report_allreduce(jobs: dict, lines: list) -> None:
    job, sm = jobs["launcher"], jobs.get("shared_memory") or {}
    if job["status"] != "ok":
        print(f"all-reduce: skipped: {_why(job)}")
        return
    rows = []
    for key, ways in job["sizes"].items():
        nbytes = int(key)
        raw = _bandwidth(nbytes, ways.get("mpi4py"))
        cells = [_size_name(nbytes), _gbs_cell(raw) + _flag(job)]
        for way in ("pynative", "graph"):
            bw = _bandwidth(nbytes, ways.get(way))
            cells += [_gbs_cell(bw), f"{bw[0] / raw[0]:.2f}x"]
            lines.append((way, _size_name(nbytes), bw[0] / raw[0]))
            if ways[way].get("matches_mpi4py") is False:
                cells[-1] += " (WRONG SUM)"
        cells.append(" / ".join(f"{ways[w]['median'] * 1e6:.0f}" for w in
                                ("mpi4py", "pynative", "graph")))
        sm_way = ((sm.get("sizes") or {}).get(key) or {}).get("mpi4py")
        cells.append(_gbs_cell(_bandwidth(nbytes, sm_way)) + _flag(sm) if sm_way else
                     ("skipped: " + _why(sm) if sm else "-"))
        rows.append(cells)
    H.print_table(["size", "mpi4py GB/s", "PyNative GB/s", "vs mpi4py", "GRAPH GB/s",
                   "vs mpi4py", "us/call mpi4py / PyN / GRAPH", "mpi4py btl sm GB/s"], rows,
                  title=f"Sum all-reduce of float32 buffers, 2 ranks, "
                        f"{job['versions']['mpi'].split(',')[0]} over the launcher's btl "
                        f"self,sm,tcp; GB/s = bytes / time")


def _step(job: dict | None, mode: str) -> dict | None:
    if not job or job.get("status") != "ok":
        return None
    return job["modes"].get(mode)


def report_train(train: dict, torch: dict, mindspore: dict, plan: dict, lines: list) -> None:
    rows = []
    impls = [("minispore PyNative", train, "pynative"), ("minispore GRAPH (O2)", train, "graph"),
             ("torch DDP gloo", torch, "ddp"),
             ("MindSpore PyNative (msrun)", mindspore, "pynative"),
             ("MindSpore GRAPH (msrun)", mindspore, "graph")]
    if _step((train or {}).get(2), "graph_alone"):
        impls.insert(2, ("minispore GRAPH, 2 ranks not reducing", train, "graph_alone"))
        impls.insert(3, ("minispore GRAPH, a bucket per layer", train, "graph_buckets"))
    for name, jobs, mode in impls:
        if not jobs:
            continue
        if "skipped" in jobs:
            rows.append([name, f"skipped: {jobs['skipped']}", "", "", "", ""])
            continue
        one = _step(jobs.get(1), mode.replace("_alone", "").replace("_buckets", ""))
        two = _step(jobs.get(2), mode)
        cells = [name]
        for n, step in ((1, one), (2, two)):
            cells.append(H.fmt_cell(step["median"] * 1e3, step["min"] * 1e3, step["max"] * 1e3)
                         + _flag(jobs[n]) if step else f"skipped: {_why(jobs.get(n))}")
        scale = H.ratio(two and two["median"], one and one["median"])
        cells.append("-" if scale is None else f"{scale:.2f}x")
        if scale is not None and mode != "graph_alone":
            lines.append((name, "", scale))
        comm = (two or {}).get("comm_per_step_s")
        cells.append("-" if not comm or not two["all_reduce_calls_per_step"] else
                     f"{comm['all_reduce'] * 1e3:.1f} + {comm['check_same_shape'] * 1e3:.1f}")
        cells.append(" / ".join("-" if s is None else f"{s['first_step_s']:.2f}"
                                for s in (one, two)))
        rows.append(cells)
    params = sum(a * b + b for a, b in zip(*(lambda w: (w, w[1:]))(
        [int(w) for w in plan["widths"].split(",")])))
    H.print_table(["training step", "1 rank ms/step", "2 ranks ms/step", "2 / 1 rank",
                   "2 ranks: in Allreduce + shape check ms", "first step s (1 / 2)"], rows,
                  title=f"Data-parallel step, weak scaling: MLP {plan['widths'].replace(',', '-')}"
                        f", batch {plan['batch']} per rank, {params * 4 / MB:.1f} MB of "
                        f"gradients, 1 thread per rank")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="fewer samples and steps (~2 min)")
    group.add_argument("--smoke", action="store_true",
                       help="one small size, a tiny MLP for 2 steps, no peers (the test's mode)")
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help="sections, comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    if only - set(SECTIONS):
        ap.error(f"--only: unknown section(s) {sorted(only - set(SECTIONS))}; "
                 f"choose from {','.join(SECTIONS)}")
    kind = "smoke" if args.smoke else "quick" if args.quick else "full"
    plan = PLANS[kind]
    quiet_s = 0 if args.smoke else 3 if args.quick else 20
    results: dict = {"machine": H.machine_info(), "plan": kind, "settings": plan}
    with tempfile.TemporaryDirectory(prefix="minispore-dp-bench-") as tmp:
        if "allreduce" in only:
            results["allreduce"] = allreduce_jobs(plan, tmp, quiet_s, args.smoke)
        if "train" in only:
            results["train"] = train_jobs(plan, tmp, quiet_s)
        if "torch" in only and not args.smoke:
            results["torch"] = torch_jobs(plan, tmp, quiet_s)
        if "mindspore" in only and not args.smoke:
            results["mindspore"] = mindspore_jobs(plan, tmp, quiet_s)
    lines: list = []
    if "allreduce" in results:
        report_allreduce(results["allreduce"], lines)
    if {"train", "torch", "mindspore"} & set(results):
        report_train(results.get("train"), results.get("torch"), results.get("mindspore"),
                     plan, lines)
    collective = [f"{way} {size} {r:.2f}x" for way, size, r in lines if size]
    scaling = [f"{name} {r:.2f}x" for name, size, r in lines if not size]
    if collective:
        print("all-reduce minispore / mpi4py (target >= 0.9x): " + ", ".join(collective))
    if scaling:
        print("weak scaling 2-rank / 1-rank step time (target <= 1.25x): " + ", ".join(scaling))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
