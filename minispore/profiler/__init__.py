"""`ms.Profiler`: records every kernel minispore runs, on every backend and in every mode, as
MindSpore 2.x's `mindspore.Profiler` does (`Profiler(output_path=...)`, `.start()`, `.stop()`,
`.analyse()`, or a `with` block).

    prof = ms.Profiler(output_path="./prof")       # starts recording (start_profile=True)
    train_step(x, y)
    prof.analyse()        # stops; prints the per-op table; writes the trace and CSV files

Each kernel call is recorded with its name, backend, mode (PyNative; Graph KBK = jit_level O0/O1,
one host launch per kernel; Graph sink = O2), host (wall) time, device time (SIMULATED model time
on the simulated Ascend; measured by CUDA events on the GPU; on the CPU the kernel runs on the
calling thread, so its device time is its host time), device tasks, bytes of its inputs and
outputs, host launches, and for graph nodes the output types and source line. Graph runs are recorded as spans enclosing their kernels; the
CPU's O2 program, one native function for the whole graph, is one kernel.

Cost: none on the hot path while no profiler runs (device.py, Note [Profiling hook]): kernels are
wrapped when they are made. Starting a profiler drops the eager plan caches (eager kernels are made
again, timed) and swaps each compiled graph's program for a recording one (an O0/O1 program's
kernels are made again; nothing is recompiled); stopping it drops the plans again and puts the
backends' own programs back. The simulated Ascend's counters are read, never reset; resetting
them (`device().reset_counters()`) while profiling makes its device totals wrong.

Files written by `analyse()` into output_path: `op_statistic.csv` (the per-op table),
`kernel_details.csv` (every call), `trace_view.json` (Chrome trace events: open it in Perfetto
or chrome://tracing), `summary.txt` (the table as text).
"""
from __future__ import annotations

import os

from ..core import device as _device
from . import report
from .session import (GRAPH, KBK, KERNEL, PYNATIVE, SINK, Session, profile_program,
                      unprofile_program)

__all__ = ["Profiler", "KERNEL", "GRAPH", "PYNATIVE", "KBK", "SINK"]


def _drop_eager_plans() -> None:
    """Forget every cached eager kernel, so the next ones are made anew (timed while profiling,
    the backends' own after it)."""
    for b in list(_device._cache.values()):
        b.plans.clear()


def _cached_programs():
    """(compile-cache entry, its backend) for every compiled graph; the backend is the program's
    own, or the one its cache key names (core/graph/compile.py: key[3] = the context options,
    device target first)."""
    from ..core.graph import compile as graph_compile
    for key, entry in graph_compile.cache.items():
        b = getattr(entry.program, "backend", None)
        if b is None:
            try:
                b = _device._cache[key[3][0]]
            except (IndexError, KeyError, TypeError):
                continue                          # unknown layout: left as it is
        yield entry, b


def _profile_compiled(session: Session) -> list:
    """Compiled graphs record their runs while profiling, without compiling again (a new compile
    of the CPU's O2 function can take seconds): each cached program is swapped for a recording
    one; returns what to put back."""
    swapped = []
    for entry, backend in _cached_programs():
        swapped.append((entry, entry.program))
        entry.program = profile_program(session, entry.program, backend)
    return swapped


def _unprofile_compiled(swapped: list) -> None:
    """Put the backends' own programs back: the originals of graphs compiled before the profiler
    started, and for graphs compiled while it ran, their programs with kernels made anew."""
    from .session import ProfiledProgram
    originals = {id(e): p for e, p in swapped}
    for entry, _ in _cached_programs():
        if id(entry) in originals:
            entry.program = originals[id(entry)]
        elif isinstance(entry.program, ProfiledProgram):
            entry.program = unprofile_program(entry.program)


class Profiler:
    """MindSpore's Profiler: `Profiler(output_path="./data", start_profile=True)`.

    Only one profiler records at a time (a second `start()` raises RuntimeError)."""

    def __init__(self, output_path: str = "./data", start_profile: bool = True):
        if not isinstance(output_path, (str, os.PathLike)):
            raise TypeError(f"Profiler: output_path must be a path, got "
                            f"{type(output_path).__name__}")
        self.output_path = os.fspath(output_path)
        self._session: Session | None = None
        self._running = False
        self._swapped: list = []
        if start_profile:
            self.start()

    # -- recording ----------------------------------------------------------------------------
    def start(self) -> None:
        if _device.hooks.active is not None:
            raise RuntimeError("Profiler.start: another Profiler is already recording; stop it "
                               "first (only one records at a time)")
        s = Session()
        for b in list(_device._cache.values()):
            s.see(b)
        _device.hooks.active = s
        self._session, self._running = s, True
        _drop_eager_plans()
        self._swapped = _profile_compiled(s)

    def stop(self) -> None:
        if not self._running:
            raise RuntimeError("Profiler.stop: the profiler is not recording (call start() "
                               "first)")
        _device.hooks.active = None
        self._running = False
        self._session.close()
        _drop_eager_plans()
        _unprofile_compiled(self._swapped)
        self._swapped = []

    def __enter__(self) -> "Profiler":
        if not self._running:
            self.start()
        return self

    def __exit__(self, *exc) -> bool:
        if self._running:
            self.stop()
        return False

    # -- results ------------------------------------------------------------------------------
    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("Profiler: nothing recorded yet (call start())")
        return self._session

    def _finished(self) -> Session:
        if self._running:
            self.stop()
        return self.session

    def op_summary(self) -> list[dict]:
        """Per (backend, mode, op): calls, host_s, host_pct, host_mean_us, device_s (SIMULATED
        on Ascend, None on the CPU), tasks, bytes, launches, source lines; largest first."""
        return report.op_summary(self._finished())

    def graph_summary(self) -> list[dict]:
        """The same for graph runs (spans that enclose their kernels)."""
        return report.op_summary(self._finished(), GRAPH)

    def totals(self) -> dict:
        """Per backend: kernel_calls, graph_runs, launches (host), kernel_host_s, tasks,
        device_s (simulated devices), eager_launch_counter (the backend's own counter's
        change: equals its PyNative kernel calls)."""
        return report.totals(self._finished())

    def records(self) -> list[dict]:
        """Every recorded call, in order."""
        s = self._finished()
        return [{"name": c.info.name, "kind": c.info.kind, "backend": c.info.backend,
                 "mode": c.info.mode, "jit_level": c.info.jit_level,
                 "start_s": c.t0 - s.t0, "host_s": c.t1 - c.t0, "device_s": c.device_s,
                 "simulated": c.info.simulated, "measured": c.info.measured,
                 "device_start_s": c.device_t0, "tasks": c.tasks, "bytes": c.info.nbytes,
                 "launches": c.launches, "types": c.info.types, "source": c.info.loc}
                for c in s.calls]

    def chrome_trace(self) -> dict:
        return report.chrome_trace(self._finished())

    def export_chrome_trace(self, path) -> str:
        report.write_json(self.chrome_trace(), path)
        return os.fspath(path)

    def table(self, limit: int | None = 25):
        """The per-op summary as a rich Table."""
        rows = self.op_summary()
        hidden = f" (top {limit} of {len(rows)})" if limit and len(rows) > limit else ""
        return report.table(rows, "minispore Profiler: kernels by host time" + hidden, limit)

    def analyse(self, print_summary: bool = True) -> dict:
        """Stop if recording, write the files (module docstring) into output_path, print the
        per-op table; returns {what: path}."""
        s = self._finished()
        os.makedirs(self.output_path, exist_ok=True)
        p = {k: os.path.join(self.output_path, f) for k, f in (
            ("op_statistic", "op_statistic.csv"), ("kernel_details", "kernel_details.csv"),
            ("trace", "trace_view.json"), ("summary", "summary.txt"))}
        rows = report.op_summary(s)
        with open(p["op_statistic"], "w", newline="") as f:
            f.write(report.summary_csv(rows))
        with open(p["kernel_details"], "w", newline="") as f:
            f.write(report.kernel_csv(s))
        report.write_json(report.chrome_trace(s), p["trace"])
        text = report.render_text(report.table(rows, "minispore Profiler: kernels by host "
                                                     "time"))
        tot = report.totals(s)
        lines = [f"{b}: {t['kernel_calls']} kernel calls, {t['launches']} host launches, "
                 f"{t['graph_runs']} graph runs, kernels {t['kernel_host_s'] * 1e3:.3f} ms host"
                 + ((f", device {t['device_s'] * 1e3:.3f} ms {report.SIM} model time, "
                     f"{t['tasks']} tasks" if t.get("device_time") == report.SIM else
                     f", device {t['device_s'] * 1e3:.3f} ms ({t.get('device_time')})")
                    if t["device_s"] is not None else "")
                 for b, t in tot.items() if t["kernel_calls"] or t["graph_runs"]]
        with open(p["summary"], "w") as f:
            f.write(text + "\n".join(lines) + "\n")
        if print_summary:
            report.print_table(self.table())
            print("\n".join(lines))
            print(f"trace: {p['trace']} (open in Perfetto or chrome://tracing); files in "
                  f"{self.output_path}")
        return p
