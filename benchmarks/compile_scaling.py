"""Compile time against graph size: the first call of a training step, cold and warm, per model.

    python benchmarks/compile_scaling.py --quick
    python benchmarks/compile_scaling.py --models mlp2,mlp64,resnet18 --json OUT.json --plot OUT.png

Models (batch 32, float32, softmax cross-entropy, Momentum(0.01, 0.9) through
nn.TrainOneStepCell): `mlpN` = N Dense layers (256 inputs, hidden 256, 10 classes, ReLU between),
N in 2, 8, 32, 64; `lenet` = LeNet-5 on 3x32x32; `resnet18` and `resnet50` = the CIFAR-10 ResNet
(3x3 stem, no max pool) on 3x32x32. Each row is a fresh process:

- minispore GRAPH O2 (MINISPORE_TIERED=0: the native program is built before the first call, so
  the first call is the whole compile): a cold process (empty MINISPORE_CACHE_DIR), then a warm
  one (same dir). The first call is broken down by timers wrapped around the library's functions
  from outside (monkeypatched in the child, compile_scaling_cases.py): parse (graph build less
  the passes), passes, memory plan, kernel lowering, glue (the glue function's IR and the kernel
  signatures), LLVM (the batch of uncached modules, wall time, helper processes included),
  loading the objects, other (cache keys, guards, the step itself); node counts before and after
  the passes; kernel calls, distinct kernels and modules compiled.
- minispore tiered (the default): the same with the O1 program serving calls until the native
  build is done; which program ran each of the first steps.
- minispore PyNative: steps 1, 2 and 3 timed apart (PyNative compiles its backward at step 3, on
  the background worker), cold and (not with --quick) warm cache.
- MindSpore GRAPH (TrainOneStepCell, `launch_blocking()`, the same model source with the import
  changed), torch.compile (default inductor, fresh cache dir) and jax.jit (value_and_grad +
  momentum; BatchNorm on batch statistics without running averages), each skipped when missing.

Steady = median of single-step times after the first 3 steps. Imports are not in the first call.
--quick without --models leaves out the rows in QUICK_LEFT_OUT (printed as skipped). The last
line states the targets' ratios this run measured (ResNet-50's first step against MindSpore's
and jax.jit's, its warm first step, the depth-64 MLP's compile against the depth-8 one's, the
slowest PyNative step 2-3 against its steady step).
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
QUICK_MODELS = ALL_MODELS
ROWS = ["O2", "tiered", "pynative", "mindspore", "torch", "jax"]
PHASES = ["parse", "passes", "memplan", "lower", "glue", "llvm", "load", "other"]


def case_code(row: str, model: str, budget_s: float) -> tuple[str | None, str]:
    """(peer, code) of one row for one model."""
    head = f"MODEL = {model!r}\nBUDGET_S = {budget_s!r}\n"
    if row in ("O2", "tiered", "pynative"):
        return "minispore", head + f"ROW = {row!r}\n" + MINISPORE_CASE
    return row, head + {"mindspore": MINDSPORE_CASE, "torch": TORCH_CASE, "jax": JAX_CASE}[row]


# --quick without --models leaves out rows to stay near 6 minutes: MindSpore GRAPH's and
# torch.compile's ResNets (minutes each on 2 cores), minispore PyNative's ResNet-50, the tiered
# row's small models (their native build is ready before the first call would run O1), and
# torch.compile of the middle MLPs (~10 s each, mostly fixed cost)
QUICK_LEFT_OUT = {("resnet18", "mindspore"), ("resnet18", "torch"), ("resnet50", "mindspore"),
                  ("resnet50", "torch"), ("resnet50", "pynative"), ("mlp8", "torch"),
                  ("mlp32", "torch"), ("mlp2", "tiered"), ("mlp8", "tiered"),
                  ("mlp32", "tiered")}


def run_row(runner: Runner, row: str, model: str, args, tmp_root: str) -> dict:
    if args.quick and not args.models and (model, row) in QUICK_LEFT_OUT:
        return {"skipped": "not in --quick (run --models " + model + ")"}
    peer, code = case_code(row, model, args.budget_s)
    python, how, sys_path = locate(peer)
    if python is None:
        return {"skipped": how}
    phases = ["cold", "warm"] if row in ("O2", "tiered", "pynative") else ["cold"]
    if row == "pynative" and args.quick:
        phases = ["cold"]
    cache: dict = {}

    def env_for(ph):
        def env(_attempt):
            if ph == "cold":          # every attempt (a retry under load too) starts empty
                cache["dir"] = fresh_cache_dir(tmp_root)
            # the O2 row builds the native program before its first call (MINISPORE_TIERED=0):
            # its first call is the compile; the tiered row is the default
            return {"MINISPORE_CACHE_DIR": cache["dir"],
                    "MINISPORE_TIERED": "0" if row == "O2" else "1",
                    "MINISPORE_KERNEL_KEY_CHECK": "0",          # the test suite's check: off
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
            if c.get("tier_by_step"):           # the tiered row: which program ran each step
                steps += " (" + ",".join(str(t) for t in c["tier_by_step"][:3]) + ")"
            first = c.get("steps_s", [None])[0]
            rc = (first / base["steps_s"][0]) if first and base.get("steps_s") else None
            rs = (c.get("steady_s") / base["steady_s"]) if c.get("steady_s") and \
                base.get("steady_s") else None
            rows.append([m, r, nodes, fmt(first), fmt((w.get("steps_s") or [None])[0]),
                         steps, fmt(c.get("steady_s"), "ms"),
                         f"{rc:.2f}" if rc else "-", f"{rs:.2f}" if rs else "-"])
    print_table(headers, rows, "Training step: first call, warm cache, steady")
    headers = ["model", "nodes", "kernel calls/distinct/compiled", "first call s"] + PHASES
    rows = []
    for m in models:
        for ph in ("cold", "warm"):
            c = results[m].get("O2", {}).get(ph, {})
            if "breakdown" not in c:
                continue
            b = c["breakdown"]
            k = "/".join(str(c.get(x, "-")) for x in ("kernel_calls", "kernels",
                                                        "modules_compiled"))
            rows.append([m + (" (warm)" if ph == "warm" else ""), str(c["nodes"]), k,
                         fmt(c["steps_s"][0])] + [fmt(b.get(p, 0.0)) for p in PHASES])
    print_table(headers, rows, "minispore GRAPH O2 first call, by phase (seconds; lower: "
                               "kernel lowering, glue: the glue's IR and signatures, llvm: "
                               "the batch's wall time, helper processes included)")
    targets(results, models)
    pts = [(results[m]["O2"]["cold"]["nodes"], results[m]["O2"]["cold"]["steps_s"][0], m)
           for m in models if "nodes" in results[m].get("O2", {}).get("cold", {})]
    print("compile time vs node count (O2 cold): "
          + ", ".join(f"{m}: {n} nodes {t:.2f} s ({t / n * 1e3:.2f} ms/node)" for n, t, m in pts))


def _first(results, m, row, ph="cold"):
    return (results.get(m, {}).get(row, {}).get(ph, {}).get("steps_s") or [None])[0]


def targets(results: dict, models: list[str]) -> None:
    """The ratios the compile-time work is judged by (those this run could measure)."""
    out = []
    r50 = _first(results, "resnet50", "O2")
    for peer in ("mindspore", "jax"):
        p = _first(results, "resnet50", peer)
        if r50 and p:
            out.append(f"ResNet-50 first step O2 cold / {peer} = {r50 / p:.2f}")
    w = _first(results, "resnet50", "O2", "warm")
    if w:
        out.append(f"ResNet-50 first step O2 warm = {w:.2f} s")
    comp = {}
    for m in ("mlp8", "mlp64"):
        c = results.get(m, {}).get("O2", {}).get("cold", {})
        if c.get("steps_s") and c.get("steady_s"):
            comp[m] = c["steps_s"][0] - c["steady_s"]
    if len(comp) == 2:
        out.append(f"compile mlp64 / mlp8 = {comp['mlp64'] / comp['mlp8']:.2f} "
                   f"({comp['mlp64']:.2f} / {comp['mlp8']:.2f} s, first call less a steady step)")
    for m in models:
        c = results.get(m, {}).get("pynative", {}).get("cold", {})
        if c.get("steps_s") and c.get("steady_s"):
            worst = max(c["steps_s"][1:])
            out.append(f"PyNative {m}: slowest of steps 2-3 / steady = {worst / c['steady_s']:.2f}")
    if out:
        print("targets: " + "; ".join(out))


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
