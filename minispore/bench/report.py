"""What `python -m minispore bench` shows and writes: the rich table, the JSON file and the
`--plot` PNG (matplotlib, an optional extra: `pip install 'minispore[plot]'`).

Times are wall time per step (median, min-max over the repeats); the simulated Ascend's rows
also show the SIMULATED device time per step from the simulator's model, always labelled so.
When a row has a FLOP count (mlp-1024) the table gains a column of GFLOP/s and its share of the
sgemm peak measured in the same run.
"""
from __future__ import annotations

import json
import os
import shutil


def fmt_s(x: float | None) -> str:
    """Seconds in a readable unit with about 3 significant digits."""
    if x is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(x) >= scale or unit == "ns":
            v = x / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return str(x)


def _label(r: dict) -> str:
    return f"minispore {r['backend']}" if r["impl"] == "minispore" else r["impl"]


def table(result: dict):
    """One rich Table: a section per workload, a line per row; backends and peers that could not
    run are listed once in the caption instead of a skipped line per row."""
    from rich.table import Table
    from rich.text import Text
    rows = result["rows"]
    unusable = {b for b, v in result["backends"].items() if not v["usable"]}
    missing = {p for p, v in result["peers"].items() if not v["importable"]}
    t = Table(title=f"minispore bench{' (--quick)' if result['options']['quick'] else ''}: wall "
                    f"time per step, median (min–max) of {result['options']['repeats']} repeats",
              title_justify="left")
    peak = result.get("sgemm_peak_gflops")
    heads = [("workload", "left"), ("implementation", "left"), ("mode", "left"),
             ("time / step", "right"), ("first call", "right"),
             ("launches / step", "right"), ("vs PyNative", "right"),
             ("Ascend device / step (SIMULATED)", "right")]
    if peak:
        heads.append(("GFLOP/s (% of sgemm peak)", "right"))
    for h, j in heads:
        t.add_column(h, justify=j, overflow="fold")
    blank = [""] * (len(heads) - 4)
    last = None
    skipped: dict = {}
    for r in rows:
        if (r["impl"] == "minispore" and r["backend"] in unusable) or r["impl"] in missing:
            continue
        if r["status"] == "skipped":
            skipped.setdefault(r["reason"], []).append(f"{r['workload']} {_label(r)} "
                                                       f"{r['mode']}")
            continue
        w = r["workload"] if r["workload"] != last else ""
        if r["workload"] != last and last is not None:
            t.add_section()
        last = r["workload"]
        if r["status"] != "ok":
            t.add_row(w, _label(r), r["mode"], Text(f"{r['status']}: {r['reason']}"), *blank)
            continue
        spread = f"{fmt_s(r['median_s'])} ({fmt_s(r['min_s'])}–{fmt_s(r['max_s'])})"
        lps = r.get("launches_per_step")
        ratio = r.get("speedup_vs_pynative")
        sim = ""
        if "sim_step_s" in r:
            sim = f"{fmt_s(r['sim_step_s'])} sim"
            if r.get("sim_speedup_vs_pynative") and r["mode"] != "pynative":
                sim += f" ({r['sim_speedup_vs_pynative']:.2f}x)"
        cells = [w, _label(r) + (f" {r['version']}" if r.get("version") else ""), r["mode"],
                 spread, fmt_s(r["first_call_s"]), "-" if lps is None else f"{lps:g}",
                 "-" if ratio is None or r["mode"] == "pynative" else f"{ratio:.2f}x", sim]
        if peak:
            cells.append("" if "gflops" not in r else f"{r['gflops']:.1f}" + (
                f" ({r['of_sgemm_peak']:.0%})" if "of_sgemm_peak" in r else ""))
        t.add_row(*cells)
    notes = [f"{b}: skipped, {result['backends'][b]['reason']}" for b in sorted(unusable)
             if b in result["options"]["backends"]]
    notes += [f"{p}: skipped, {result['peers'][p]['reason']}" for p in sorted(missing)]
    notes += [f"not run: {', '.join(what)} ({why})" for why, what in skipped.items()]
    notes.append("vs PyNative: PyNative median / this median on the same backend (> 1 = "
                 "faster). first call: parse + compile + first run, not in the samples. Ascend "
                 "rows: wall = what simulating took here; SIMULATED = the simulator's model "
                 "time, not hardware.")
    if peak:
        notes.append(f"GFLOP/s: the step's matrix-product FLOPs / median wall time; % of the "
                     f"sgemm peak (rows run on this CPU) = {peak:.1f} GFLOP/s "
                     f"({result['sgemm_peak_method']}), measured in this run.")
    t.caption = "\n".join(notes)
    t.caption_justify = "left"
    return t


def dp_table(result: dict):
    """The data-parallel rows (bench/data_parallel.py): per workload, mode and number of
    simulated devices, the SIMULATED step time, communication time and scaling efficiency,
    which ranks produced it (real MPI ranks or the model), and the wall time simulating took."""
    from rich.table import Table
    t = Table(title="data parallel on the simulated Ascend (weak scaling: batch 32 per "
                    "device): SIMULATED model time per step, not hardware",
              title_justify="left")
    for h, j in (("workload", "left"), ("mode", "left"), ("devices", "right"),
                 ("run by", "left"), ("step (SIMULATED)", "right"),
                 ("HCCL / step (SIMULATED)", "right"), ("scaling efficiency (SIMULATED)",
                                                         "right"),
                 ("samples/s (SIMULATED)", "right"), ("wall / step (simulation)", "right")):
        t.add_column(h, justify=j, overflow="fold")
    last, skipped = None, {}
    for r in result.get("dp_rows", []):
        if r["status"] == "skipped":
            skipped.setdefault(r["reason"], []).append(f"{r['workload']} {r['mode']}")
            continue
        if last is not None and (r["workload"], r["mode"]) != last:
            t.add_section()
        w = r["workload"] if last is None or r["workload"] != last[0] else ""
        last = (r["workload"], r["mode"])
        if r["status"] != "ok":
            t.add_row(w, r["mode"], str(r["ranks"]), r.get("source", ""),
                      f"{r['status']}: {r['reason']}", *[""] * 4)
            continue
        eff = r.get("scaling_efficiency")
        sps = r.get("sim_samples_per_s")
        t.add_row(w, r["mode"], str(r["ranks"]), r["source"] + (f" ({r['note']})"
                                                                 if r.get("note") else ""),
                  f"{fmt_s(r['sim_step_s'])} sim", f"{fmt_s(r['sim_comm_s'])} sim",
                  "-" if eff is None else f"{eff:.1%} sim",
                  "-" if sps is None else f"{sps:,.0f} sim",
                  f"{fmt_s(r['median_s'])} ({fmt_s(r['min_s'])}–{fmt_s(r['max_s'])})")
    notes = [f"not run: {', '.join(what)} ({why})" for why, what in skipped.items()]
    notes.append("sim = SIMULATED model time of the simulated Ascend (HCCS/RoCE figures marked "
                 "[E] in `python -m minispore info --profile`), not hardware. scaling "
                 "efficiency: the 1-device step / this step. run by: MPI (N ranks) = a real "
                 "N-rank job, slowest rank shown; model = one process as rank 0 of N modelled "
                 "devices. wall: what simulating took here.")
    t.caption = "\n".join(notes)
    t.caption_justify = "left"
    return t


def print_table(result: dict) -> None:
    from rich.console import Console
    console = Console(width=max(150, shutil.get_terminal_size().columns))
    if result["rows"] or not result.get("dp_rows"):
        console.print(table(result))
    if result.get("dp_rows"):
        console.print(dp_table(result))


def write_json(result: dict, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    return path


COLORS = {"CPU": "#1f77b4", "Ascend": "#ff7f0e", "GPU": "#2ca02c"}


def plot(result: dict, path: str) -> str | None:
    """A PNG bar chart: one panel per workload, one horizontal bar per row (median wall time
    per step, log scale, whiskers min-max), value written at the bar's end; the simulated
    Ascend's device time as a hatched bar labelled SIMULATED. Returns None (and says why) when
    matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        print("--plot skipped: matplotlib is not installed (pip install 'minispore[plot]')")
        return None
    ok = [r for r in result["rows"] if r["status"] == "ok"]
    names = [w for w in result["options"]["workloads"] if any(r["workload"] == w for r in ok)]
    if not names:
        print("--plot skipped: no row was measured")
        return None
    bars = {w: [] for w in names}
    for r in ok:
        label = f"{_label(r)} {r['mode']}"
        color = COLORS.get(r["backend"], "#1f77b4") if r["impl"] == "minispore" else "#9e9e9e"
        bars[r["workload"]].append((label, r["median_s"], r["min_s"], r["max_s"], color, ""))
        if "sim_step_s" in r:
            bars[r["workload"]].append((f"{label}: device (SIMULATED)", r["sim_step_s"],
                                        r["sim_min_s"], r["sim_max_s"], color, "//"))
    heights = [max(1.6, 0.38 * len(bars[w]) + 0.9) for w in names]
    fig, axes = plt.subplots(len(names), 1, figsize=(10, sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, w in zip(axes[:, 0], names):
        items = bars[w][::-1]                              # first row at the top
        ys = range(len(items))
        vals = [b[1] for b in items]
        lo = [b[1] - b[2] for b in items]
        hi = [b[3] - b[1] for b in items]
        ax.barh(ys, vals, xerr=[lo, hi], color=[b[4] for b in items],
                hatch=None, edgecolor="white", capsize=2, error_kw={"elinewidth": 0.8})
        for y, b in zip(ys, items):
            if b[5]:
                ax.barh([y], [b[1]], color="white", edgecolor=b[4], hatch=b[5])
            ax.text(b[3] * 1.08, y, fmt_s(b[1]), va="center", fontsize=8)
        ax.set_yticks(list(ys))
        ax.set_yticklabels([b[0] for b in items], fontsize=8)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt_s(v)))
        ax.set_xlim(min(b[2] for b in items) / 2, max(b[3] for b in items) * 6)
        ax.set_title(result["workloads"][w], fontsize=9, loc="left")
        ax.grid(axis="x", which="major", alpha=0.3)
    axes[-1, 0].set_xlabel("time per step (log scale; shorter is faster). Hatched: simulated "
                           "Ascend device time (model, not hardware)", fontsize=8)
    fig.suptitle(f"minispore bench{' --quick' if result['options']['quick'] else ''}: median "
                 f"wall time per step, whiskers min–max", fontsize=10, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / sum(heights)))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
