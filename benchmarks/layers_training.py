"""Training steps of sequence models built from minispore's recurrent and attention layers: an
LSTM and a small GPT-style transformer, minispore PyNative and GRAPH O2 beside torch eager,
torch.compile, jax.jit and MindSpore.

Usage (from the repository root)::

    python benchmarks/layers_training.py [--quick] [--json PATH] [--only KEY,KEY] [--steps N]

Workloads (batch 32, softmax cross-entropy (sparse, mean), Momentum(lr 0.05, momentum 0.9)):

- ``lstm``: ``nn.LSTM(256, 256, num_layers=2, batch_first=True)`` over a float32 (32, 64, 256)
  sequence, ``nn.Dense(256, 10)`` on the last step's output;
- ``transformer``: a character-level GPT: token and position ``nn.Embedding`` (vocabulary 64, width
  128, context 64), two ``nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0,
  batch_first=True)`` under a causal mask, ``nn.LayerNorm``, ``nn.Dense(128, 64)``; the loss
  over every position.

Every row runs in a fresh process (``_harness.Runner``); minispore runs with an empty kernel
cache and ``MINISPORE_TIERED=0`` (the native program is built before the first step, so the
first step is the whole cold compile and the timed steps are the O2 program's, not the O1 steps
that tiering runs while the build competes for the two cores). The minispore and MindSpore rows run the SAME model
source with only the import changed; torch writes the same layers with ``torch.nn`` and JAX by
hand (``lax.scan`` over time for the LSTM), each with its own initialisers (the rows compare
speed, not losses). Columns: steady step time median (min-max) over the timed steps, each step
synchronised (the loss read back); the first step (parse + compile + run) apart; the ratio of
the peers' median step times to this row's (> 1 = minispore is faster).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402
from _harness import LOAD_LIMIT, Runner, fresh_cache_dir, resolve  # noqa: E402
from graph_vs_eager import _LOADER, verdict  # noqa: E402

sys.path.insert(0, H.REPO_ROOT)
from minispore.bench import peers_sequence as PS  # noqa: E402
from minispore.bench import sequence_models as SM  # noqa: E402
from minispore.bench.sequence_models import (BATCH, CONTEXT, HEADS, LAYERS,  # noqa: E402
                                             LR, LSTM_HIDDEN, LSTM_LAYERS, MOMENTUM, SEQ,
                                             WIDTH)

SIZES = {k: getattr(SM, k) for k in ("BATCH", "CLASSES", "CONTEXT", "FFN", "HEADS", "LAYERS",
                                     "LR", "LSTM_HIDDEN", "LSTM_IN", "LSTM_LAYERS", "MOMENTUM",
                                     "SEQ", "VOCAB", "WIDTH")}

MODELS = {"lstm": f"LSTM {LSTM_LAYERS}x{LSTM_HIDDEN}, seq {SEQ}",
          "transformer": f"GPT-style, {LAYERS} layers, {HEADS} heads, width {WIDTH}, "
                         f"context {CONTEXT}"}

# --------------------------------------------------------------------------- case code (child)
_COMMON = _LOADER + """
import json, resource, time
import numpy as np
CFG = json.loads(@CFG@)
_D = np.load(CFG["data"])
X, Y = _D[CFG["model"] + ":x"], _D[CFG["model"] + ":y"]
EXTRA = {}
def run_steps(step, sync):
    t = time.perf_counter()
    sync(step(0))
    first = time.perf_counter() - t
    for k in range(CFG["warm"]):
        sync(step(k + 1))
    times, losses = [], []
    for k in range(CFG["steps"]):
        t = time.perf_counter()
        losses.append(sync(step(k)))
        times.append(time.perf_counter() - t)
    EXTRA.update(first_s=first, step_s=times, final_loss=losses[-1],
                 peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""

# minispore's model file; MindSpore's is the same text with the import changed
_MODEL_SRC = open(SM.__file__).read()

_CELL_ROW = """
M = load_source("bench_layers_model", %r)
trainer = M.build(CFG["model"], %r, %r)
XS = [ms.Tensor(x) for x in X]
YS = [ms.Tensor(y) for y in Y]
run_steps(lambda k: trainer(XS[k %% len(XS)], YS[k %% len(YS)]), lambda l: float(l.asnumpy()))
""" % (_MODEL_SRC.replace("minispore", "{PKG}"), LR, MOMENTUM)


def _minispore(context: str) -> str:
    return _COMMON + f"""
import minispore as ms
{context}
VERSIONS = {{"minispore": getattr(ms, "__version__", "?"), "numpy": np.__version__}}
""" + _CELL_ROW.replace("{PKG}", "minispore")


def _mindspore(mode: str) -> str:
    blocking = "ms.runtime.launch_blocking()   # 2 cores: the async pipeline stalls without it"
    return _COMMON + f"""
import mindspore as ms
ms.set_device("CPU")
{blocking if mode == "PYNATIVE_MODE" else ""}
ms.set_context(mode=ms.{mode})
VERSIONS = {{"mindspore": ms.__version__, "numpy": np.__version__}}
""" + _CELL_ROW.replace("{PKG}", "mindspore")


# the peers' models (minispore/bench/peers_sequence.py, numpy-only at the top) run as text
_PEERS_SRC = open(PS.__file__).read() + f"""
BATCHES = list(zip(X, Y))
SIZES = {SIZES!r}
"""
_TORCH = _COMMON + _PEERS_SRC + """
step, sync, version = torch_step(CFG["model"], BATCHES, SIZES, compile=CFG.get("compile", False))
VERSIONS = {"torch": version}
run_steps(step, sync)
"""
_JAX = _COMMON + _PEERS_SRC + """
step, sync, version = jax_step(CFG["model"], BATCHES, SIZES)
VERSIONS = {"jax": version}
run_steps(step, sync)
"""

_PYNATIVE = 'ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")'
_GRAPH = 'ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", jit_level="O2")'

# (key, label, peer, code, extra CFG)
CASES = [
    ("minispore-graph", "minispore CPU GRAPH O2", "minispore", _minispore(_GRAPH), {}),
    ("minispore-pynative", "minispore CPU PYNATIVE", "minispore", _minispore(_PYNATIVE), {}),
    ("torch", "torch eager", "torch", _TORCH, {}),
    ("torch-compile", "torch.compile(net)", "torch", _TORCH, {"compile": True}),
    ("jax", "jax.jit", "jax", _JAX, {}),
    ("mindspore-graph", "MindSpore CPU GRAPH", "mindspore", _mindspore("GRAPH_MODE"), {}),
    ("mindspore-pynative", "MindSpore PyNative", "mindspore", _mindspore("PYNATIVE_MODE"), {}),
]
ALL_KEYS = [c[0] for c in CASES]
PEERS_OF = {"graph": ("jax", "torch-compile"), "pynative": ("torch",)}


def write_inputs(path: str) -> None:
    """Four seeded batches per workload (sequence_models.inputs): every row trains on the same
    arrays."""
    arrays = {}
    for model in MODELS:
        pairs = SM.inputs(model)
        arrays[model + ":x"] = np.stack([x for x, _ in pairs])
        arrays[model + ":y"] = np.stack([y for _, y in pairs])
    np.savez(path, **arrays)


def collect(runner, keys, models, steps, warm, data, tmp_root) -> dict:
    results = {m: {k: {"label": lab, "runs": []} for k, lab, *_ in CASES if k in keys}
               for m in models}
    for model in models:
        for key, label, peer, code, cfg in CASES:
            res = results[model].get(key)
            if res is None:
                continue
            found = resolve(res, peer)
            if found is None:
                continue
            python, sys_path = found
            print(f"  {model} {key} ...", file=sys.stderr, flush=True)
            env = None
            if peer == "minispore":   # an empty kernel cache per process; the native program
                env = (lambda _a: {"MINISPORE_CACHE_DIR": fresh_cache_dir(tmp_root),  # first
                                   "MINISPORE_TIERED": "0"})
            conf = dict(cfg, data=data, model=model, steps=steps, warm=warm)
            case = code.replace("@CFG@", repr(json.dumps(conf)))
            out = runner.run(f"{model} {key}", python, case, [], sys_path, env_for_attempt=env,
                             target_s=0.1, repeats=1, timeout=600)
            ex = out.get("extra") or {}
            if out["status"] != "ok" or "step_s" not in ex:
                res["skipped"] = out.get("reason") or "no result"
                res["traceback"] = out.get("traceback", "")
                continue
            res["runs"].append(out)
    return results


def step_median(rows, key):
    runs = (rows.get(key) or {}).get("runs") or []
    times = [t for r in runs for t in r["extra"]["step_s"]]
    return statistics.median(times) if times else None


def report(model: str, rows: dict, steps: int) -> None:
    headers = ["row", "step ms med (min\u2013max)", "1st step s", "loss", "RSS MB",
               "\u00d7torch", "\u00d7torch.compile", "\u00d7jax.jit", "\u00d7MS G"]
    ref = {k: step_median(rows, k) for k in ("torch", "torch-compile", "jax", "mindspore-graph")}
    table, notes = [], []
    for key, res in rows.items():
        if not res["runs"]:
            notes.append(f"{model} {key}: skipped: {res.get('skipped', 'no data')}")
            continue
        ex = res["runs"][0]["extra"]
        t = step_median(rows, key)
        mark = " !" if (res["runs"][0].get("foreign_load") or 0) > LOAD_LIMIT else ""
        table.append([res["label"] + mark, H.fmt_cell(*(1e3 * v for v in
                                                        H.summarize(ex["step_s"]))),
                      f"{ex['first_s']:.3g}", f"{ex['final_loss']:.4f}",
                      f"{ex['peak_rss_mb']:.0f}"] +
                     [H.fmt_num(H.ratio(ref[k], t)) for k in ref])
    H.print_table(headers, table, title=f"{MODELS[model]}, batch {BATCH}, Momentum(lr {LR}, "
                                        f"{MOMENTUM}); {steps} timed steps per row")
    for line in notes:
        print(line)


def target_lines(results: dict) -> list[str]:
    lines = []
    for model, rows in results.items():
        for mode, peers in PEERS_OF.items():
            mine = step_median(rows, f"minispore-{mode}")
            for peer in peers:
                r = H.ratio(step_median(rows, peer), mine)
                lines.append(f"{model}: minispore {mode} vs {peer} per step: {H.fmt_num(r)}x "
                             f"(target >= 1x): {verdict(r, 1.0)}")
        runs = (rows.get("minispore-graph") or {}).get("runs") or []
        if runs:
            first = runs[0]["extra"]["first_s"]
            lines.append(f"{model}: minispore GRAPH first step (cold compile + run) "
                         f"{first:.2f} s (target <= 2 s): {verdict(2.0 / first, 1.0)}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="5 timed steps per row")
    p.add_argument("--json", metavar="PATH", help="also write all results and metadata here")
    p.add_argument("--only", metavar="KEYS", help="comma-separated row keys and/or models "
                   f"({', '.join(MODELS)}): " + ",".join(ALL_KEYS))
    p.add_argument("--steps", type=int, help="timed steps per row (default 5 quick, 20 full)")
    args = p.parse_args(argv)
    args.steps = args.steps or (5 if args.quick else 20)
    only = set(args.only.split(",")) if args.only else set()
    unknown = only - set(ALL_KEYS) - set(MODELS)
    if unknown:
        p.error(f"unknown row key or model {sorted(unknown)}")
    keys = [k for k in ALL_KEYS if k in only] or ALL_KEYS
    models = [m for m in MODELS if m in only] or list(MODELS)
    runner = Runner(args)
    tmp_root = tempfile.mkdtemp(prefix="minispore-layers-bench-")
    try:
        data = os.path.join(tmp_root, "layers.npz")
        write_inputs(data)
        results = collect(runner, keys, models, args.steps, 2, data, tmp_root)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    print()
    for model, rows in results.items():
        report(model, rows, args.steps)
        print()
    print("ratios = the peer's median step time / this row's (> 1 = faster); each step is "
          "synchronised (its loss read back).")
    lines = target_lines(results)
    print("targets:")
    for line in lines:
        print("  " + line)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"benchmark": "layers_training", "machine": H.machine_info(),
                       "settings": {"quick": args.quick, "steps": args.steps, "batch": BATCH},
                       "results": results, "targets": lines}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
