"""The recording side of the Profiler: the timing wrappers it hands out while it runs, and what
they record.

The backends call `Session.wrap` when they MAKE a kernel or a program and
`graph/execute.py` calls `Session.wrap_node` for each node of a graph it prepares (device.py,
Note [Profiling hook]); nothing here runs when no profiler is active. Each call of a wrapped
kernel appends one `Call` tuple: (info, wall start, wall end, device seconds, device tasks,
host launches). Device seconds and tasks come from the simulated Ascend's counters (SIMULATED
model time, never measured); on the GPU from CUDA events recorded on the stream before and after
each call (measured; resolved when the session stops, so recording never waits for the device);
a CPU kernel runs synchronously on the calling thread, so its device time is its host time and
is recorded as None. The simulated devices' own timelines (tasks, copies, graph launches) are
kept for the window the profiler ran (`DeviceWindow`).
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..core import context
from ..core.graph import ir
from ..core.primitive import Meta
from ..core.shape import size_of

KERNEL, GRAPH = "kernel", "graph"
PYNATIVE, KBK, SINK = "PyNative", "Graph KBK", "Graph sink"


@dataclass
class KernelInfo:
    """What is static about one made kernel (or program)."""
    name: str
    backend: str
    mode: str             # PYNATIVE, KBK (jit_level O0/O1, one host launch per kernel), SINK (O2)
    kind: str             # KERNEL, or GRAPH: one run of a whole graph (encloses its kernels)
    nbytes: int           # bytes of the kernel's inputs and outputs (read + written once)
    launches: int         # host launches per call (0: a task of a graph sunk to the device)
    jit_level: str = ""
    loc: str = ""         # source line of a graph node
    types: str = ""       # output type(s), e.g. f32[32,10]
    simulated: bool = False
    measured: bool = False    # device time from the device's own events (CUDA events on the GPU)


class Call(NamedTuple):
    info: KernelInfo
    t0: float             # wall clock (time.perf_counter)
    t1: float
    device_s: float | None    # simulated device busy time (Ascend); None where device = host
    tasks: int                # device tasks submitted (Ascend)
    launches: int             # host launches of this call
    device_t0: float | None = None   # measured devices: start on the device's clock, seconds
    #                                  since the profiler started (aligned at its first event)


def _bytes(metas) -> int:
    n = 0
    for m in metas:
        if isinstance(m, (Meta, ir.Value)):
            n += size_of(m.shape) * m.dtype.itemsize
        elif isinstance(m, (tuple, list)):
            n += _bytes(m)
    return n


def sim_device(backend):
    """The simulated device of a backend that has one (its counters are model time), else None."""
    dev = getattr(backend, "device", None)
    return dev if hasattr(dev, "busy") and hasattr(dev, "timeline") else None


def device_timer(backend):
    """(record, elapsed) of a backend whose device times itself (the GPU: CUDA events), else
    None: record() marks the stream now, elapsed(a, b) the device seconds between two marks."""
    timer = getattr(backend, "device_timer", None)
    return timer() if timer is not None else None


class DeviceWindow:
    """Where a simulated device's timeline and counters stood when the profiler first saw it;
    `close` keeps the timeline entries added since (the device keeps its most recent
    runtime.TIMELINE_LEN entries: `truncated` says when older ones of the window are gone)."""

    def __init__(self, backend_name: str, device):
        self.backend = backend_name
        self.device = device
        tl = device.timeline
        self.marker = tl[-1] if tl else None
        self.sim_t0 = device.now()
        self.start = (device.busy, device.tasks, device.counts["graph_launches"])
        self.entries: list = []
        self.truncated = False
        self.delta = {"device_s": 0.0, "tasks": 0, "graph_launches": 0}

    def close(self) -> None:
        dev, tl = self.device, self.device.timeline
        out = []
        for e in reversed(tl):
            if e is self.marker:
                break
            out.append(e)
        else:
            self.truncated = self.marker is not None or len(tl) == tl.maxlen
        out.reverse()
        self.entries = out
        b, n, g = self.start
        self.delta = {"device_s": dev.busy - b, "tasks": dev.tasks - n,
                      "graph_launches": dev.counts["graph_launches"] - g}

    def records(self) -> list[dict]:
        """The window's entries as the device's own record dicts (runtime.Device.records)."""
        holder = type("_Window", (), {"timeline": self.entries})()
        return type(self.device).records(holder)


class Session:
    """One start..stop of a Profiler."""

    def __init__(self):
        self.calls: list[Call] = []
        self.recording = True
        self.t0 = time.perf_counter()
        self.t1: float | None = None
        self.windows: list[DeviceWindow] = []
        self._seen: dict = {}              # id(backend) -> (backend, launches counter at start)
        self._devices: set = set()
        self.launch_delta: dict[str, int] = {}
        self._pending: list = []           # (call index, start mark, end mark, elapsed)
        self._anchors: dict = {}           # backend name -> (first mark, host time then)

    # -- what the profiler has seen -----------------------------------------------------------
    def see(self, backend) -> None:
        """Note a backend's counters the first time one of its kernels is made (or at start)."""
        if id(backend) not in self._seen:
            self._seen[id(backend)] = (backend, backend.counters["launches"])
        dev = sim_device(backend)
        if dev is not None and id(dev) not in self._devices:
            self._devices.add(id(dev))
            self.windows.append(DeviceWindow(backend.name, dev))

    def close(self) -> None:
        self.recording = False
        self.t1 = time.perf_counter()
        for w in self.windows:
            w.close()
        for backend, n0 in self._seen.values():
            self.launch_delta[backend.name] = backend.counters["launches"] - n0
        for k, m0, m1, elapsed, name in self._pending:      # waits for the device once, here
            anchor, host = self._anchors[name]
            if m0 is None or m1 is None or anchor is None:    # a call inside a capture
                continue
            self.calls[k] = self.calls[k]._replace(
                device_s=elapsed(m0, m1), device_t0=host - self.t0 + elapsed(anchor, m0))
        self._pending.clear()

    def _marks(self, backend, timer, info: KernelInfo, call, *args):
        """call(*args) between two device marks; the Call's device time is filled in at close."""
        record, elapsed = timer
        if self._anchors.get(backend.name, (None,))[0] is None:
            self._anchors[backend.name] = (record(), time.perf_counter())
        m0 = record()
        t0 = time.perf_counter()
        r = call(*args)
        t1 = time.perf_counter()
        self._pending.append((len(self.calls), m0, record(), elapsed, backend.name))
        self.calls.append(Call(info, t0, t1, None, 0, info.launches))
        return r

    # -- wrapping (device.py calls these) -----------------------------------------------------
    def wrap(self, kind: str, backend, made, args: tuple, kwargs: dict):
        self.see(backend)
        if kind in ("program", "sink"):
            return ProfiledProgram(self, backend, made, kind)
        if kind == "kernel":
            op, in_metas, _attrs, out_meta = (list(args) + [None] * 4)[:4]
            name = op.name
        else:                                  # fused_kernel(expr, in_metas, out_meta, ...)
            _expr, in_metas, out_meta = (list(args) + [None] * 3)[:3]
            name = "Fused"
        info = KernelInfo(name, backend.name, PYNATIVE, KERNEL,
                          _bytes(in_metas or ()) + _bytes((out_meta,)), 1,
                          simulated=sim_device(backend) is not None,
                          measured=device_timer(backend) is not None)
        return self.timed(backend, info, made)

    def wrap_node(self, program, node: ir.Node, made):
        backend = program.backend
        self.see(backend)
        sink = is_sunk(program)
        name = node.name
        if node.op == ir.FUSED:
            name = "Fused[" + "+".join(node.attr("members")) + "]"
        info = KernelInfo(name, backend.name, SINK if sink else KBK, KERNEL,
                          _bytes(node.inputs) + _bytes(node.outputs), 0 if sink else 1,
                          jit_level=context._state["jit_level"],
                          loc=node.loc.short() if node.loc else "",
                          types=", ".join(v.type_str() for v in node.outputs),
                          simulated=sim_device(backend) is not None,
                          measured=device_timer(backend) is not None)
        return self.timed(backend, info, made)

    def timed(self, backend, info: KernelInfo, k):
        """`k` with each call recorded while this session records (a kernel made while profiling
        and still held after stop runs untimed)."""
        calls, pc, session = self.calls, time.perf_counter, self
        timer = device_timer(backend)
        if timer is not None:
            def run(*bufs):
                if not session.recording:
                    return k(*bufs)
                return session._marks(backend, timer, info, k, *bufs)
        elif sim_device(backend) is None:
            def run(*bufs):
                if not session.recording:
                    return k(*bufs)
                t0 = pc()
                r = k(*bufs)
                calls.append(Call(info, t0, pc(), None, 0, info.launches))
                return r
        else:
            def run(*bufs):
                if not session.recording:
                    return k(*bufs)
                d = backend.device
                b0, n0 = d.busy, d.tasks
                t0 = pc()
                r = k(*bufs)
                calls.append(Call(info, t0, pc(), d.busy - b0, d.tasks - n0, info.launches))
                return r
        run.profiled = info
        return run


def is_sunk(program) -> bool:
    """Whether a graph program runs sunk (O2): the generic O0/O1 executor never is (also where
    O2 fell back to it); a backend's own program says so (`sink`), or is one at O2."""
    from ..core.graph.execute import Program
    if type(program) is Program:
        return False
    return bool(getattr(program, "sink", context._state["jit_level"] == "O2"))


def rebuild_steps(program):
    """A copy of an O0/O1 program (graph/execute.py) whose kernels are made again: wrapped while
    a profiler runs, the backend's own after it. Constants are the same device buffers (the
    simulated Ascend keeps one device copy per host array), so nothing is uploaded again."""
    p = copy.copy(program)
    p.steps = p._compile(p.graph)
    return p


def profile_program(session: "Session", program, backend):
    """A program compiled before the profiler started, made to record its runs (and, for an
    O0/O1 program, its kernels) without compiling the graph again."""
    from ..core.graph.execute import Program
    session.see(backend)
    if isinstance(program, Program):
        kind = "sink" if is_sunk(program) else "program"
        return ProfiledProgram(session, backend, rebuild_steps(program), kind)
    return ProfiledProgram(session, backend, program, "sink")


def unprofile_program(program):
    """The backend's own program behind a ProfiledProgram made while profiling."""
    from ..core.graph.execute import Program
    inner = program._program
    return rebuild_steps(inner) if isinstance(inner, Program) else inner


class ProfiledProgram:
    """A backend's program whose runs are recorded: a GRAPH span enclosing its node kernels, or,
    for a program that is one kernel itself (the CPU's O2 numba function), a KERNEL call with one
    host launch. Everything else is the program's own (attribute access is delegated)."""

    def __init__(self, session: Session, backend, program, kind: str):
        from ..core.graph.execute import Program
        self._session, self._program, self._backend = session, program, backend
        g = getattr(program, "graph", None) or ir.Graph("?")
        one_kernel = not isinstance(program, Program)
        sunk = kind == "sink"
        self._info = KernelInfo(f"graph {g.name}", backend.name, SINK if sunk else KBK,
                                KERNEL if one_kernel else GRAPH,
                                _bytes(g.inputs) + _bytes(g.outputs), 1 if one_kernel else 0,
                                jit_level=context._state["jit_level"],
                                types=", ".join(v.type_str() for v in g.outputs),
                                simulated=sim_device(backend) is not None,
                                measured=device_timer(backend) is not None)

    def run(self, args: list):
        return self._record(self._program.run, args)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._program, name)
        if name == "run_steps":             # the CPU sink's multi-step program (data_sink)
            return lambda stacked: self._record(attr, stacked)
        return attr

    def _record(self, call, arg):
        """call(arg) -- a run, or a sink's run_steps -- recorded as one call of the program."""
        s, info = self._session, self._info
        if not s.recording:
            return call(arg)
        dev = sim_device(self._backend)
        pc = time.perf_counter
        timer = device_timer(self._backend)
        if timer is not None:
            return s._marks(self._backend, timer, info, call, arg)
        if dev is None:
            t0 = pc()
            r = call(arg)
            s.calls.append(Call(info, t0, pc(), None, 0, info.launches))
            return r
        b0, n0, l0 = dev.busy, dev.tasks, dev.counts["graph_launches"]
        t0 = pc()
        r = call(arg)
        s.calls.append(Call(info, t0, pc(), dev.busy - b0, dev.tasks - n0,
                            dev.counts["graph_launches"] - l0))
        return r
