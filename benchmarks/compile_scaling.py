"""Compile time against graph size: the first call of a training step, cold and warm, per model.

    python benchmarks/compile_scaling.py --quick
    python benchmarks/compile_scaling.py --models mlp2,mlp64,resnet18 --json OUT.json --plot OUT.png

Models (batch 32, float32, softmax cross-entropy, Momentum(0.01, 0.9) through
nn.TrainOneStepCell): `mlpN` = N Dense layers (256 inputs, hidden 256, 10 classes, ReLU between),
N in 2, 8, 32, 64; `lenet` = LeNet-5 on 3x32x32; `resnet18` (and `resnet50`, not in --quick) =
the CIFAR-10 ResNet (3x3 stem, no max pool) on 3x32x32. Each row is a fresh process:

- minispore GRAPH O2: a cold process (empty MINISPORE_CACHE_DIR), then a warm one (same dir).
  The first call is broken down by timers wrapped around the library's functions from outside
  (monkeypatched in the child, compile_scaling_cases.py): parse (graph build less the passes),
  passes, memory plan, native IR emission, LLVM (parse the IR, optimise, machine code), loading
  the object, other (cache keys, guards, the step itself); node counts before and after the
  passes.
- minispore PyNative: steps 1, 2 and 3 timed apart (PyNative compiles its backward at step 3),
  cold and (not with --quick) warm cache.
- MindSpore GRAPH (TrainOneStepCell, `launch_blocking()`, the same model source with the import
  changed), torch.compile (default inductor, fresh cache dir) and jax.jit (value_and_grad +
  momentum; BatchNorm on batch statistics without running averages), each skipped when missing.

Steady = median of single-step times after the first 3 steps. Imports are not in the first call.
--quick without --models leaves out the rows in QUICK_LEFT_OUT (printed as skipped).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import Runner, fresh_cache_dir, locate, machine_info, print_table  # noqa: E402

from compile_scaling_cases import (JAX_CASE, MINDSPORE_CASE, MINISPORE_CASE,  # noqa: E402
                                   TORCH_CASE)

ALL_MODELS = ["mlp2", "mlp8", "mlp32", "mlp64", "lenet", "resnet18", "resnet50"]
QUICK_MODELS = ALL_MODELS[:-1]
ROWS = ["O2", "pynative", "mindspore", "torch", "jax"]
PHASES = ["parse", "passes", "memplan", "emit", "llvm_parse", "llvm_opt", "llvm_codegen", "load",
          "other"]


def case_code(row: str, model: str, budget_s: float) -> tuple[str | None, str]:
    """(peer, code) of one row for one model."""
    head = f"MODEL = {model!r}\nBUDGET_S = {budget_s!r}\n"
    if row in ("O2", "pynative"):
        return "minispore", head + f"ROW = {row!r}\n" + MINISPORE_CASE
    return row, head + {"mindspore": MINDSPORE_CASE, "torch": TORCH_CASE, "jax": JAX_CASE}[row]


# --quick without --models leaves out rows to stay near 4 minutes: MindSpore GRAPH's and
# torch.compile's ResNet-18 (minutes each on 2 cores), minispore PyNative's (its step 3 compiles
# the backward: ~40 s), and torch.compile of the middle MLPs (~10 s each, mostly fixed cost)
QUICK_LEFT_OUT = {("resnet18", "mindspore"), ("resnet18", "torch"), ("resnet18", "pynative"),
                  ("mlp8", "torch"), ("mlp32", "torch")}


def run_row(runner: Runner, row: str, model: str, args, tmp_root: str) -> dict:
    if args.quick and not args.models and (model, row) in QUICK_LEFT_OUT:
        return {"skipped": "not in --quick (run --models " + model + ")"}
    peer, code = case_code(row, model, args.budget_s)
    python, how, sys_path = locate(peer)
    if python is None:
        return {"skipped": how}
    phases = ["cold", "warm"] if row in ("O2", "pynative") else ["cold"]
    if row == "pynative" and args.quick:
        phases = ["cold"]
    cache: dict = {}

    def env_for(ph):
        def env(_attempt):
            if ph == "cold":          # every attempt (a retry under load too) starts empty
                cache["dir"] = fresh_cache_dir(tmp_root)
            return {"MINISPORE_CACHE_DIR": cache["dir"],
                    "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache["dir"], "inductor")}
        return env
    out: dict = {}
    for ph in phases:
        print(f"  {model} {row} {ph} ...", file=sys.stderr, flush=True)
        res = runner.run(f"{model}-{row}-{ph}", python, code, [], sys_path,
                         env_for_attempt=env_for(ph), target_s=0.01, repeats=1)
        if res["status"] != "ok":
            out[ph] = {"skipped": res["reason"]}
            if ph == "cold":
                return {"skipped": res["reason"]}
            continue
        ex = dict(res.get("extra", {}))
        ex["foreign_load"] = res.get("foreign_load")
        ex["versions"] = res.get("versions", {})
        out[ph] = ex
    return out


def fmt(x, unit="s") -> str:
    if x is None:
        return "-"
    if unit == "ms":
        return f"{x * 1e3:.3g}"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def report(results: dict, models: list[str]) -> None:
    headers = ["model", "row", "nodes (parsed/opt)", "first call cold s", "warm s",
               "steps 2/3 s", "steady ms", "cold / O2 cold", "steady / O2 steady"]
    rows = []
    for m in models:
        base = results[m].get("O2", {}).get("cold", {})
        for r in ROWS:
            res = results[m].get(r)
            if res is None:
                continue
            if "skipped" in res:
                rows.append([m, r, "", f"skipped: {res['skipped']}"[:60], "", "", "", "", ""])
                continue
            c, w = res.get("cold", {}), res.get("warm", {})
            nodes = f"{c['nodes_parsed']}/{c['nodes']}" if "nodes" in c else ""
            steps = "/".join(f"{s:.2g}" for s in c.get("steps_s", [])[1:])
            first = c.get("steps_s", [None])[0]
            rc = (first / base["steps_s"][0]) if first and base.get("steps_s") else None
            rs = (c.get("steady_s") / base["steady_s"]) if c.get("steady_s") and \
                base.get("steady_s") else None
            rows.append([m, r, nodes, fmt(first), fmt((w.get("steps_s") or [None])[0]),
                         steps, fmt(c.get("steady_s"), "ms"),
                         f"{rc:.2f}" if rc else "-", f"{rs:.2f}" if rs else "-"])
    print_table(headers, rows, "Training step: first call, warm cache, steady")
    headers = ["model", "nodes", "cold total s"] + PHASES
    rows = []
    for m in models:
        c = results[m].get("O2", {}).get("cold", {})
        if "breakdown" not in c:
            continue
        b = c["breakdown"]
        rows.append([m, str(c["nodes"]), fmt(c["steps_s"][0])] + [fmt(b.get(p, 0.0))
                                                                  for p in PHASES])
        w = results[m]["O2"].get("warm", {})
        if "breakdown" in w:
            rows.append([m + " (warm)", str(w["nodes"]), fmt(w["steps_s"][0])]
                        + [fmt(w["breakdown"].get(p, 0.0)) for p in PHASES])
    print_table(headers, rows, "minispore GRAPH O2 first call, by phase (seconds)")
    pts = [(results[m]["O2"]["cold"]["nodes"], results[m]["O2"]["cold"]["steps_s"][0], m)
           for m in models if "nodes" in results[m].get("O2", {}).get("cold", {})]
    print("compile time vs node count (O2 cold): "
          + ", ".join(f"{m}: {n} nodes {t:.2f} s ({t / n * 1e3:.2f} ms/node)" for n, t, m in pts))


def plot(results: dict, models: list[str], path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot: matplotlib is not installed, no picture", file=sys.stderr)
        return
    fig, ax = plt.subplots()
    for ph, mark in (("cold", "o"), ("warm", "x")):
        pts = [(results[m]["O2"][ph]["nodes"], results[m]["O2"][ph]["steps_s"][0])
               for m in models if "nodes" in results[m].get("O2", {}).get(ph, {})]
        if pts:
            ax.plot(*zip(*pts), mark, label=f"minispore O2 {ph}")
    ax.set_xlabel("graph nodes (after passes)")
    ax.set_ylabel("first call s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend()
    fig.savefig(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", default=None, help=f"comma list of {','.join(ALL_MODELS)}")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"comma list of {','.join(ROWS)}")
    ap.add_argument("--json", default=None)
    ap.add_argument("--plot", default=None)
    args = ap.parse_args(argv)
    models = args.models.split(",") if args.models else (QUICK_MODELS if args.quick
                                                         else ALL_MODELS)
    bad = [m for m in models if m not in ALL_MODELS]
    rows = args.rows.split(",")
    bad += [r for r in rows if r not in ROWS]
    if bad:
        ap.error(f"unknown model or row: {', '.join(bad)}")
    args.budget_s = 1.0 if args.quick else 5.0      # steady-state sampling time per process
    args.target_s, args.repeats = 0.01, 1
    runner = Runner(args, timeout=150 if args.quick else 900)
    runner.quiet_wait_s = 1 if args.quick else 20
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="minispore-compile-") as tmp_root:
        for m in models:
            results[m] = {r: run_row(runner, r, m, args, tmp_root) for r in rows}
    report(results, models)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"machine": machine_info(), "models": models, "results": results}, f,
                      indent=1)
    if args.plot:
        plot(results, models, args.plot)
    loads = [x for x in runner.loads if x is not None]
    if loads:
        print(f"foreign CPU load: median {statistics.median(loads):.0%}, max {max(loads):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
