"""What the Profiler makes of a session: per-op summary rows, the rich table, per-backend totals,
and the Chrome trace (trace-event JSON, for Perfetto or chrome://tracing) with host and device
tracks.

Clocks: host tracks are wall time (time.perf_counter since the profiler started). A CPU kernel
runs synchronously on the calling thread, so the CPU device track shows the same intervals. The
GPU's device track is measured by CUDA events around each call, placed on the host clock at the
profiler's first GPU event. The simulated Ascend's tracks are SIMULATED model time (the
simulator's clock since the profiler started; runtime.py), never a measurement, and every label
that shows them says so.
"""
from __future__ import annotations

import csv
import io
import json

from .session import GRAPH, KERNEL, PYNATIVE, Session

SIM = "SIMULATED"
EVENTS = "CUDA events"


def clock(info) -> str:
    """What a kernel's device time is: SIMULATED, measured by device events, or the host's."""
    return SIM if info.simulated else EVENTS if info.measured else "= host (synchronous)"


def op_summary(s: Session, kind: str = KERNEL) -> list[dict]:
    """One row per (backend, mode, op name), sorted by total host time (largest first)."""
    groups: dict = {}
    for c in s.calls:
        i = c.info
        if i.kind != kind:
            continue
        key = (i.backend, i.mode, i.name)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"name": i.name, "backend": i.backend, "mode": i.mode,
                               "calls": 0, "host_s": 0.0,
                               "device_s": 0.0 if i.simulated or i.measured else None,
                               "device_time": clock(i),
                               "tasks": 0, "bytes": 0, "launches": 0, "locs": set()}
        g["calls"] += 1
        g["host_s"] += c.t1 - c.t0
        if g["device_s"] is not None and c.device_s is not None:
            g["device_s"] += c.device_s
        g["tasks"] += c.tasks
        g["bytes"] += i.nbytes
        g["launches"] += c.launches
        if i.loc:
            g["locs"].add(i.loc)
    total = sum(g["host_s"] for g in groups.values()) or 1.0
    rows = sorted(groups.values(), key=lambda g: -g["host_s"])
    for g in rows:
        g["host_pct"] = 100.0 * g["host_s"] / total
        g["host_mean_us"] = 1e6 * g["host_s"] / g["calls"]
        g["locs"] = sorted(g["locs"])
    return rows


def totals(s: Session) -> dict:
    """Per backend: kernel calls, host launches, kernel host time, device tasks and device time
    (simulated devices: from the device's own counters over the window, which also count work
    outside any kernel, e.g. a loop sink's launch and data queue; the GPU: the CUDA-event times of
    its graph runs and eager kernels)."""
    out: dict = {}
    for c in s.calls:
        i = c.info
        t = out.setdefault(i.backend, {"kernel_calls": 0, "graph_runs": 0, "launches": 0,
                                       "kernel_host_s": 0.0, "device_s": None, "tasks": 0})
        t["launches"] += c.launches
        if i.kind == KERNEL:
            t["kernel_calls"] += 1
            t["kernel_host_s"] += c.t1 - c.t0
        else:
            t["graph_runs"] += 1
        # measured device time: graph runs (their kernels are inside them) and eager kernels
        if i.measured and c.device_s is not None and (i.kind == GRAPH or i.mode == PYNATIVE):
            t["device_s"] = (t["device_s"] or 0.0) + c.device_s
            t["device_time"] = EVENTS
    for w in s.windows:
        t = out.setdefault(w.backend, {"kernel_calls": 0, "graph_runs": 0, "launches": 0,
                                       "kernel_host_s": 0.0, "device_s": None, "tasks": 0})
        spans = sum(c.launches for c in s.calls
                    if c.info.backend == w.backend and c.info.kind == GRAPH)
        t["launches"] += w.delta["graph_launches"] - spans      # launches outside any program
        t["device_s"] = w.delta["device_s"]
        t["tasks"] = w.delta["tasks"]
        t["device_time"] = SIM
    for name, n in s.launch_delta.items():
        out.setdefault(name, {"kernel_calls": 0, "graph_runs": 0, "launches": 0,
                              "kernel_host_s": 0.0, "device_s": None, "tasks": 0})
        out[name]["eager_launch_counter"] = n
    return out


def table(rows: list[dict], title: str = "", limit: int | None = None):
    """A rich Table of op_summary rows (device time on the simulated Ascend is marked sim)."""
    from rich.table import Table
    from rich.text import Text
    t = Table(title=title or None, title_justify="left",
              caption=f"device µs: {SIM} model time on Ascend (sim); on the GPU measured by "
                      f"{EVENTS}; on the CPU a kernel runs on the calling thread (device = "
                      f"host)", caption_justify="left")
    heads = ("op", "backend/mode", "calls", "host ms", "host %", "µs/call", "device µs",
             "tasks", "launches", "MB", "source")
    for h in heads:
        t.add_column(h, justify="left" if h in ("op", "backend/mode", "source") else "right",
                     overflow="fold", max_width=48 if h == "op" else None)
    for r in rows[:limit]:
        dev = "-" if r["device_s"] is None else f"{r['device_s'] * 1e6:.1f}" + (
            " sim" if r["device_time"] == SIM else "")
        t.add_row(Text(r["name"]), f"{r['backend']} {r['mode']}", str(r["calls"]),
                  f"{r['host_s'] * 1e3:.3f}", f"{r['host_pct']:.1f}", f"{r['host_mean_us']:.1f}",
                  dev, str(r["tasks"]), str(r["launches"]), f"{r['bytes'] / 1e6:.3f}",
                  ", ".join(r["locs"][:2]) + (" ..." if len(r["locs"]) > 2 else ""))
    return t


def print_table(renderable) -> None:
    import shutil

    from rich.console import Console
    Console(width=max(150, shutil.get_terminal_size().columns)).print(renderable)


def render_text(renderable, width: int = 170) -> str:
    from rich.console import Console
    buf = io.StringIO()
    Console(file=buf, width=width, no_color=True).print(renderable)
    return buf.getvalue()


def kernel_csv(s: Session) -> str:
    """Every recorded call, one line each (start relative to the profiler's start)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["name", "kind", "backend", "mode", "jit_level", "start_us", "host_us",
                "device_us", "device_time", "tasks", "bytes", "launches", "types", "source"])
    for c in s.calls:
        i = c.info
        w.writerow([i.name, i.kind, i.backend, i.mode, i.jit_level,
                    f"{(c.t0 - s.t0) * 1e6:.3f}", f"{(c.t1 - c.t0) * 1e6:.3f}",
                    "" if c.device_s is None else f"{c.device_s * 1e6:.3f}",
                    SIM if i.simulated else EVENTS if i.measured else "host", c.tasks,
                    i.nbytes, c.launches, i.types,
                    i.loc])
    return buf.getvalue()


def summary_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    keys = ["name", "backend", "mode", "calls", "host_s", "host_pct", "host_mean_us",
            "device_s", "device_time", "tasks", "bytes", "launches"]
    w.writerow(keys + ["source"])
    for r in rows:
        w.writerow([r[k] if r[k] is not None else "" for k in keys] + [" ".join(r["locs"])])
    return buf.getvalue()


# -- Chrome trace ------------------------------------------------------------------------------
HOST_PID = 1


def chrome_trace(s: Session) -> dict:
    """The session as Chrome trace-event JSON: process 1 is the host (wall clock; graph runs
    enclose their kernels), one device process per backend: the CPU's kernels (= host time) and
    each simulated Ascend's streams and launches (SIMULATED model time)."""
    ev: list[dict] = [_meta("process_name", HOST_PID, None, "host (wall clock)"),
                      _meta("thread_name", HOST_PID, 1, "python: kernels and graph runs")]
    pids: dict = {}
    for c in s.calls:
        i = c.info
        args = {"backend": i.backend, "mode": i.mode, "bytes": i.nbytes, "launches": c.launches}
        if i.jit_level:
            args["jit_level"] = i.jit_level
        if i.types:
            args["types"] = i.types
        if i.loc:
            args["source"] = i.loc
        if c.device_s is not None:
            args[f"device_us ({SIM if i.simulated else EVENTS})"] = c.device_s * 1e6
            if i.simulated:
                args["device_tasks"] = c.tasks
        ts, dur = (c.t0 - s.t0) * 1e6, (c.t1 - c.t0) * 1e6
        ev.append({"name": i.name, "cat": f"{i.backend},{i.mode},{i.kind}", "ph": "X",
                   "ts": ts, "dur": dur, "pid": HOST_PID, "tid": 1, "args": args})
        if (i.kind == KERNEL or i.measured) and not i.simulated:
            if i.backend not in pids:
                pid = pids[i.backend] = HOST_PID + 1 + len(pids)
                what = (f"{EVENTS}, aligned to the host clock at the profiler's first event"
                        if i.measured else "kernels run on the host thread: wall clock")
                ev.append(_meta("process_name", pid, None, f"{i.backend} device ({what})"))
                ev.append(_meta("thread_name", pid, 1, "kernels"))
                ev.append(_meta("thread_name", pid, 2, "graph runs"))
            if i.measured and c.device_t0 is not None:
                ts, dur = c.device_t0 * 1e6, c.device_s * 1e6
            ev.append({"name": i.name, "cat": f"{i.backend},{i.mode}", "ph": "X", "ts": ts,
                       "dur": dur, "pid": pids[i.backend], "tid": 1 if i.kind == KERNEL else 2,
                       "args": {"bytes": i.nbytes}})
    for k, w in enumerate(s.windows):
        pid = 100 + k
        prof = w.device.profile.name
        ev.append(_meta("process_name", pid, None,
                        f"{w.backend} {prof} device ({SIM} model time)"))
        names = {0: "stream 0 (compute)", 1: "stream 1 (copy)", 2: "stream 2 (communication)",
                 "host": f"host launches ({SIM})", "scheduler": "task scheduler"}
        tids = {0: 0, 1: 1, 2: 3, "host": 2}
        for key, tid in tids.items():
            ev.append(_meta("thread_name", pid, tid, names[key]))
        recs = w.records()
        # the simulated host may lag the streams: the window starts at its earliest record
        t0 = min([w.sim_t0] + [r["start_s"] for r in recs])
        for r in recs:
            tid = tids.get(r["track"], 0)
            ev.append({"name": r["name"], "cat": f"{w.backend},{r['unit']},{SIM}", "ph": "X",
                       "ts": (r["start_s"] - t0) * 1e6, "dur": r["duration_s"] * 1e6,
                       "pid": pid, "tid": tid,
                       "args": {"bytes": r["bytes"], "flops": r["flops"], "clock": SIM}})
        if w.truncated:
            ev.append({"name": "older simulated records dropped (device timeline limit)",
                       "ph": "i", "s": "p", "ts": 0.0, "pid": pid, "tid": 0})
    return {"traceEvents": ev, "displayTimeUnit": "ms",
            "otherData": {"producer": "minispore.Profiler",
                          "clocks": f"host: wall clock; GPU device: {EVENTS}; Ascend device: "
                                    f"{SIM} model time"}}


def _meta(kind: str, pid: int, tid, name: str) -> dict:
    e = {"name": kind, "ph": "M", "pid": pid, "args": {"name": name}}
    if tid is not None:
        e["tid"] = tid
    return e


def write_json(obj, path) -> None:
    with open(path, "w") as f:
        json.dump(obj, f)
