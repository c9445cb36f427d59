"""Eager per-op dispatch latency of ``c = a + b`` (float32), minispore against its peers.

Usage (from the repository root)::

    python benchmarks/eager_dispatch.py [--quick] [--json PATH] [--only KEY,KEY]

This file owns the eager-dispatch benchmark: what each row runs is in ``CASES`` below; timing,
peer discovery, subprocesses and table printing are in ``_harness.py``.  Every row runs in a
fresh process; in each, ``run(n)`` is a Python loop of n ``c = a + b`` on shapes (8,) and
(256, 256), timed with ``time.perf_counter`` (N auto-chosen so that one repeat lasts ~0.1-0.3 s,
several repeats, warm-up excluded).  Reported: µs per op, median (min–max over every repeat of
every round), ratios of medians to numpy and to torch eager.  Asynchronous frameworks are
synchronised once per repeat (jax ``block_until_ready``, MindSpore and minispore ``asnumpy``),
so the figure is the dispatch throughput a Python loop sees.

The ``minispore-grad`` row times ``ms.grad(f)(a, b)`` where ``f`` runs the loop of n adds and
returns ``c.sum()`` of the last one, divided by n: the per-op cost of dispatching while the tape
records, plus the one-off grad set-up, one ``sum`` and the backward pass spread over the n ops
(and, if the backward visits every recorded node rather than only those reaching the output,
that too).  N is capped so that at most ~256 MiB of outputs can be kept alive by the tape.

The last line compares minispore's (8,) latency with torch eager (no_grad): the target is a
ratio <= 2.0.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402
from _harness import LOAD_LIMIT, Runner, resolve  # noqa: E402

SHAPES = [(8,), (256, 256)]
TARGET_RATIO = 2.0
_INPUTS = """
import numpy as np
def inputs(shape):
    rng = np.random.default_rng(0)
    return (rng.standard_normal(shape, dtype=np.float32),
            rng.standard_normal(shape, dtype=np.float32))
"""

_MINISPORE = _INPUTS + """
import minispore as ms
ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
VERSIONS = {"minispore": getattr(ms, "__version__", "?"), "numpy": np.__version__}
"""

# key, label, peer (None: this interpreter), code defining make(shape) -> run(n)
CASES = [
    ("numpy", "numpy `a + b`", None, _INPUTS + """
VERSIONS = {"numpy": np.__version__}
def make(shape):
    a, b = inputs(shape)
    def run(n):
        for _ in range(n):
            c = a + b
    return run
"""),
    ("minispore", "minispore PyNative CPU `a + b`", "minispore", _MINISPORE + """
def make(shape):
    a, b = (ms.Tensor(x) for x in inputs(shape))
    def run(n):
        for _ in range(n):
            c = a + b
        c.asnumpy()
    return run
"""),
    ("minispore-grad", "minispore PyNative, recording (inside ms.grad)", "minispore",
     _MINISPORE + """
NOTE = "time of ms.grad(f)(a, b) / n; f = loop of n adds, returns last c.sum()"
def make(shape):
    a, b = (ms.Tensor(x) for x in inputs(shape))
    def run(n):
        def f(x, y):
            for _ in range(n):
                c = x + y
            return c.sum()
        ms.grad(f)(a, b).asnumpy()
    return {"run": run, "max_n": max(1, (256 << 20) // (4 * int(np.prod(shape))))}
"""),
    ("torch", "torch eager `a + b` (no_grad)", "torch", _INPUTS + """
import torch
VERSIONS = {"torch": torch.__version__, "threads": torch.get_num_threads()}
def make(shape):
    a, b = (torch.from_numpy(x) for x in inputs(shape))
    def run(n):
        with torch.no_grad():
            for _ in range(n):
                c = a + b
    return run
"""),
    ("torch-grad", "torch eager, requires_grad=True", "torch", _INPUTS + """
import torch
VERSIONS = {"torch": torch.__version__, "threads": torch.get_num_threads()}
def make(shape):
    a, b = (torch.from_numpy(x).requires_grad_(True) for x in inputs(shape))
    def run(n):
        for _ in range(n):
            c = a + b
    return run
"""),
    ("jax", "jax eager (block_until_ready per repeat)", "jax", _INPUTS + """
import jax, jax.numpy as jnp
VERSIONS = {"jax": jax.__version__, "backend": jax.default_backend()}
def make(shape):
    a, b = (jnp.asarray(x) for x in inputs(shape))
    def run(n):
        for _ in range(n):
            c = a + b
        c.block_until_ready()
    return run
"""),
    ("mindspore", "MindSpore PyNative + launch_blocking()", "mindspore", _INPUTS + """
import mindspore as ms
ms.runtime.launch_blocking()   # on 2 cores the async pipeline stalls ~4 ms per op without it
ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")
VERSIONS = {"mindspore": ms.__version__, "numpy": np.__version__}
def make(shape):
    a, b = (ms.Tensor(x) for x in inputs(shape))
    def run(n):
        for _ in range(n):
            c = a + b
        c.asnumpy()
    return run
"""),
]
def collect(cases, args) -> dict:
    """Run every case ``args.rounds`` times, interleaved (A B C ... A B C ...), through the
    shared quiet-wait / retry-once-under-load runner (_harness.Runner)."""
    runner = Runner(args, timeout=60 if args.quick else 180)
    results = {key: {"label": label, "runs": []} for key, label, _, _ in cases}
    for rnd in range(args.rounds):
        for key, label, peer, code in cases:
            res = results[key]
            if res.get("skipped"):
                continue
            found = resolve(res, peer)
            if found is None:
                continue
            python, sys_path = found
            print(f"  [round {rnd + 1}/{args.rounds}] {key} ...", file=sys.stderr, flush=True)
            retried = runner.retried
            out = runner.run(key, python, code, SHAPES, sys_path)
            if runner.retried > retried:
                res["retried"] = res.get("retried", 0) + 1
            if out["status"] != "ok":
                res["skipped"] = out["reason"]
                res["traceback"] = out.get("traceback", "")
                continue
            res["runs"].append(out)
    for res in results.values():      # pool samples of all rounds per shape
        res["stats"] = {}
        for shape in map(str, SHAPES):
            samples = [s for run in res["runs"] for s in run["shapes"].get(shape, {}).get(
                "samples", [])]
            errors = [run["shapes"][shape]["error"] for run in res["runs"]
                      if "error" in run["shapes"].get(shape, {})]
            if samples:
                med, lo, hi = H.summarize([s * 1e6 for s in samples])
                res["stats"][shape] = {"median_us": med, "min_us": lo, "max_us": hi}
            elif errors:
                res["stats"][shape] = {"error": errors[0]}
        loads = [r["foreign_load"] for r in res["runs"] if r.get("foreign_load") is not None]
        res["max_foreign_load"] = max(loads) if loads else None
    return results


def median_of(results, key, shape):
    return results.get(key, {}).get("stats", {}).get(shape, {}).get("median_us")


def report(results: dict, args) -> str:
    """Print the table and the target line; return the target line."""
    headers = ["implementation"]
    for shape in SHAPES:
        headers += [f"{shape} \u00b5s/op median (min\u2013max)", "\u00d7 numpy", "\u00d7 torch"]
    rows, skipped, flagged = [], [], False
    for key, res in results.items():
        if res.get("skipped") and not res["runs"]:
            skipped.append(f"{key}: skipped: {res['skipped']}")
            continue
        mark = ""
        if res["max_foreign_load"] is not None and res["max_foreign_load"] > LOAD_LIMIT:
            mark, flagged = " !", True
        row = [res["label"] + mark]
        for shape in map(str, SHAPES):
            st = res["stats"].get(shape, {})
            if "median_us" not in st:
                row += [f"error: {st.get('error', 'no data')}"[:40], "-", "-"]
                continue
            med = st["median_us"]
            row += [H.fmt_cell(med, st["min_us"], st["max_us"]),
                    H.fmt_num(H.ratio(med, median_of(results, "numpy", shape))),
                    H.fmt_num(H.ratio(med, median_of(results, "torch", shape)))]
        rows.append(row)
    mode = "quick" if args.quick else "full"
    H.print_table(headers, rows, title=f"Eager dispatch latency, c = a + b, float32 ({mode}: "
                  f"{args.rounds} round(s) x {args.repeats} repeats, ~{args.target_s} s each)")
    for line in skipped:
        print(line)
    for key, res in results.items():
        if res.get("skipped") and res["runs"]:
            print(f"{key}: a later round failed and was dropped: {res['skipped']}")
    if flagged:
        print(f"! = another process used > {LOAD_LIMIT:.0%} of the CPUs during a run of this row")
    loads = [r["foreign_load"] for res in results.values() for r in res["runs"]
             if r.get("foreign_load") is not None]
    if loads:
        retried = sum(res.get("retried", 0) for res in results.values())
        print(f"foreign CPU load during runs: median {statistics.median(loads):.0%}, "
              f"max {max(loads):.0%}; {retried} run(s) repeated because of load")
    small = str(SHAPES[0])
    r = H.ratio(median_of(results, "minispore", small), median_of(results, "torch", small))
    verdict = "n/a (needs both the minispore and the torch rows)" if r is None else (
        f"{H.fmt_num(r)} (target <= {TARGET_RATIO}): {'met' if r <= TARGET_RATIO else 'NOT met'}")
    target_line = f"minispore small-op latency / torch eager = {verdict}"
    print(target_line)
    return target_line


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="1 round, 3 repeats (~1 minute)")
    p.add_argument("--json", metavar="PATH", help="also write all samples and metadata here")
    p.add_argument("--only", metavar="KEYS",
                   help="comma-separated row keys: " + ",".join(k for k, *_ in CASES))
    p.add_argument("--rounds", type=int, help="processes per row, interleaved (default 3)")
    p.add_argument("--repeats", type=int, help="timed repeats per process (default 5)")
    p.add_argument("--target-s", type=float, help="seconds per repeat (default 0.2)")
    args = p.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.target_s = args.target_s or (0.1 if args.quick else 0.2)
    cases = CASES
    if args.only:
        keep = set(args.only.split(","))
        unknown = keep - {k for k, *_ in CASES}
        if unknown:
            p.error(f"unknown row key(s) {sorted(unknown)}")
        cases = [c for c in CASES if c[0] in keep]
    results = collect(cases, args)
    target_line = report(results, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "eager_dispatch", "machine": H.machine_info(),
                       "settings": {k: getattr(args, k) for k in
                                    ("quick", "rounds", "repeats", "target_s")},
                       "shapes": [str(s) for s in SHAPES], "results": results,
                       "target": target_line}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
