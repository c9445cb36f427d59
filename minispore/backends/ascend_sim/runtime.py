"""The simulated device runtime: host and device clocks, streams and events, launch modes,
host<->device copies, counters, and the timeline (exportable as a Chrome trace).

Time is simulated, never measured: the host clock advances by the profile's launch costs, each
stream's clock by its tasks' modelled durations. A task starts when both the host has issued it
and its stream is free, so eager mode shows host-bound dispatch (the device idles between tiny
kernels) and sink mode shows device-bound execution.

Launch modes (the device's `mode`):
- EAGER (PyNative): each op costs the host `host_launch_eager` (infer, tiling, launch); extra
  tasks an op submits (its TransData) cost `host_task_submit` each.
- KBK (graph O0/O1, MindSpore's KernelByKernel): each kernel costs the host `host_launch_kbk`.
- SINK (graph O2): the host pays one launch per graph run; the device pays
  `graph_execute_head` once and `task_dispatch` per task, with no host involvement.

Streams: 0 computes, 1 copies, 2 communicates (HCCL); an H2D copy records an event the compute
stream waits for. A collective (`collective`) starts on stream 2 once the host has issued it,
the compute stream has produced its input (an event) and the stream is free; it lasts its
modelled time (collectives.py) and records an end event that the compute stream waits for at
once (a blocking collective) or later (an async one: compute in between overlaps it).
"""
from __future__ import annotations

import json
import weakref
from collections import deque

import numpy as np

from .cost import PCIE, pcie
from .memory import DeviceArray, MemoryPool
from .profile import DeviceProfile

EAGER, KBK, SINK = "eager", "kbk", "sink"
TIMELINE_LEN = 200_000          # most recent records kept (a long run does not grow memory)


class Stream:
    __slots__ = ("id", "name", "t")

    def __init__(self, sid: int, name: str):
        self.id, self.name, self.t = sid, name, 0.0


class Event:
    """A point on a stream: `record` takes the stream's current time, `wait` makes another
    stream start no earlier."""
    __slots__ = ("t",)

    def __init__(self):
        self.t = 0.0

    def record(self, stream: Stream) -> "Event":
        self.t = stream.t
        return self

    def wait(self, stream: Stream) -> None:
        if stream.t < self.t:
            stream.t = self.t


class Device:
    def __init__(self, profile: DeviceProfile, capacity: int | None = None,
                 pool: MemoryPool | None = None):
        """`pool`: the memory of the device this one replaces; its live buffers are kept."""
        if pool is None:
            pool = MemoryPool(capacity or profile.hbm_bytes, profile.mem_align, self)
        else:
            pool.adopt(capacity or profile.hbm_bytes, profile.mem_align, self)
        self.profile = profile
        self.pool = pool
        self.compute = Stream(0, "compute")
        self.copy = Stream(1, "copy")
        self.comm = Stream(2, "communication")
        self.host_t = 0.0
        self.sched_t = 0.0                   # the device task scheduler (SINK mode)
        self.timeline: deque = deque(maxlen=TIMELINE_LEN)
        self.loop_sink = False              # inside ms.data_sink: steps need no host launch
        self.queue: deque = deque()         # loop sink: when each queued batch is on the device
        self._resident: dict = {}            # id(host array) -> (weakref, DeviceArray)
        self.reset_counters()
        self.set_mode(EAGER)

    # -- modes and counters -------------------------------------------------------------------
    def set_mode(self, mode: str) -> str:
        """Switch the launch mode; returns the previous one."""
        prev = getattr(self, "mode", EAGER)
        p = self.profile
        self.mode = mode
        self.sunk = mode == SINK
        self._dispatch = p.task_dispatch
        if mode == EAGER:
            self._host_op, self._host_task = p.host_launch_eager, p.host_task_submit
        else:
            self._host_op = self._host_task = p.host_launch_kbk
        return prev

    def reset_counters(self) -> None:
        self.tasks = 0
        self.busy = 0.0                      # device seconds spent in kernels
        self.comm_busy = 0.0                 # device seconds spent in collectives (stream 2)
        self.counts: dict[str, int] = {"transdata": 0, "h2d": 0, "d2h": 0, "graph_launches": 0,
                                       "collectives": 0}
        self.bytes: dict[str, int] = {"h2d": 0, "d2h": 0}

    def now(self) -> float:
        """Simulated seconds since the device was created (host or device, whichever is later)."""
        return max(self.host_t, self.compute.t, self.copy.t, self.comm.t)

    def synchronize(self) -> None:
        """The host waits for every stream (`asnumpy()`, `ms.runtime.synchronize()`)."""
        t = self.now()
        self.host_t = t

    # -- tasks --------------------------------------------------------------------------------
    def task(self, name: str, dur: float, unit: str, nbytes: int = 0, flops: float = 0.0,
             first: bool = True) -> None:
        """One kernel on the compute stream (see the module docstring for who pays what). In
        SINK mode the device's task scheduler dispatches tasks one after another, overlapping
        the dispatch of a task with the execution of the one before."""
        s = self.compute
        if self.sunk:
            self.sched_t = start = self.sched_t + self._dispatch
            if s.t > start:
                start = s.t
            h0 = None
        else:
            h0 = self.host_t
            self.host_t = h = h0 + (self._host_op if first else self._host_task)
            start = h if h > s.t else s.t
        s.t = start + dur
        self.busy += dur
        self.tasks += 1
        self.timeline.append((name, 0, start, dur, nbytes, flops, unit, h0,
                              None if h0 is None else self.host_t - h0))

    def collective(self, name: str, dur: float, nbytes: int, unit: str = "HCCL") -> Event:
        """One collective on the communication stream (module docstring); returns its end
        event. The host issues it as it issues a kernel (in SINK mode the device's scheduler
        dispatches it); it waits for the compute stream's work so far (its input)."""
        dur = max(dur, self.profile.kernel_min_duration)
        c = self.comm
        if self.sunk:
            self.sched_t = ready = self.sched_t + self._dispatch
            h0 = None
        else:
            h0 = self.host_t
            self.host_t = ready = h0 + self._host_op
        start = max(ready, self.compute.t, c.t)   # the input's event on the compute stream
        c.t = start + dur
        self.comm_busy += dur
        self.counts["collectives"] += 1
        self.timeline.append((name, 2, start, dur, nbytes, 0.0, unit, h0,
                              None if h0 is None else self.host_t - h0))
        return Event().record(c)

    def graph_launch(self, name: str) -> None:
        """One host launch of a sunk graph; the device's scheduler then pays the model-execute
        head before it dispatches the graph's tasks."""
        p = self.profile
        h0 = self.host_t
        self.host_t += p.host_launch_eager
        self.timeline.append(("graph " + name, "host", h0, p.host_launch_eager, 0, 0.0,
                              "launch", None, None))
        start = max(self.host_t, self.compute.t, self.sched_t)
        self.sched_t = start + p.graph_execute_head
        self.timeline.append(("execute head " + name, 0, start, p.graph_execute_head, 0, 0.0,
                              "scheduler", None, None))
        self.counts["graph_launches"] += 1

    # -- memory and copies --------------------------------------------------------------------
    def alloc(self, data: np.ndarray, fmt: str = "ND", what: str = "a tensor") -> DeviceArray:
        addr, size = self.pool.alloc(data.nbytes, what)
        return DeviceArray(data, addr, size, self.pool, fmt)

    def upload(self, arr: np.ndarray, copy_event: bool = True) -> DeviceArray:
        """The device copy of a host array, made once and kept while the host array lives
        (MindSpore's lazy device address): an async H2D copy on the copy stream that the compute
        stream waits for (`copy_event=False`: the caller accounts the transfer, e.g. one queue
        transfer for many batches)."""
        key = id(arr)
        ent = self._resident.get(key)
        if ent is not None and ent[0]() is arr:
            return ent[1]
        # the device's own copy: sharing the host array's memory would keep it alive through
        # the DeviceArray, and the weak entry below could then never let either go
        d = self.alloc(np.array(arr, order="C", copy=True), what="a host->device copy")
        if copy_event:
            self._copy_in(arr.nbytes, "H2D")
        resident = self._resident
        resident[key] = (weakref.ref(arr, lambda _r, k=key: resident.pop(k, None)), d)
        return d

    def queue_batches(self, sizes: list[int]) -> None:
        """The data queue of a loop sink: one H2D transfer of every batch on the copy stream;
        batch i is ready when its bytes have arrived, and the step that dequeues it waits for
        that (`dequeue`), so later batches arrive while earlier steps compute."""
        p = self.profile
        self.host_t += p.host_task_submit
        c = self.copy
        start = max(self.host_t, c.t)
        ready, done = [], start + p.pcie_latency
        for n in sizes:
            done += n / p.pcie_bw
            ready.append(done)
        c.t = done
        total = sum(sizes)
        self.counts["h2d"] += 1
        self.bytes["h2d"] += total
        self.timeline.append(("H2D queue", 1, start, done - start, total, 0.0, PCIE, None, None))
        self.queue = deque(ready)

    def dequeue(self) -> None:
        """GetNext of a sunk step: a device task that waits for its batch to have arrived."""
        ready = self.queue.popleft() if self.queue else 0.0
        if self.compute.t < ready:
            self.compute.t = ready
        self.task("GetNext", self.profile.kernel_min_duration, "scheduler")

    def _copy_in(self, nbytes: int, name: str) -> None:
        dur = pcie(self.profile, nbytes)
        self.host_t += self.profile.host_task_submit
        c = self.copy
        start = max(self.host_t, c.t)
        c.t = start + dur
        Event().record(c).wait(self.compute)
        self.counts["h2d"] += 1
        self.bytes["h2d"] += nbytes
        self.timeline.append((name, 1, start, dur, nbytes, 0.0, PCIE, None, None))

    def download(self, d: DeviceArray) -> np.ndarray:
        """Synchronise, then a blocking D2H copy of a (user-visible, ND) buffer."""
        self.synchronize()
        nbytes = d.data.nbytes
        dur = pcie(self.profile, nbytes)
        start = self.host_t
        self.host_t = self.copy.t = start + dur
        self.counts["d2h"] += 1
        self.bytes["d2h"] += nbytes
        self.timeline.append(("D2H", 1, start, dur, nbytes, 0.0, PCIE, None, None))
        return d.data

    # -- reporting ----------------------------------------------------------------------------
    def stats(self) -> dict:
        return {"profile": self.profile.name, "simulated_time_s": self.now(),
                "device_busy_s": self.busy, "comm_busy_s": self.comm_busy, "tasks": self.tasks,
                **self.counts,
                "h2d_bytes": self.bytes["h2d"], "d2h_bytes": self.bytes["d2h"],
                "memory": self.pool.stats()}

    def records(self) -> list[dict]:
        """The timeline as dicts: name, track ('host' or a stream id), start_s, duration_s,
        bytes, flops, unit ('launch' on the host track: the host issuing a kernel or graph).
        A kernel the host launched itself is stored once, with its launch's start; it becomes
        two records here (host launch, then the kernel on its stream)."""
        keys = ("name", "track", "start_s", "duration_s", "bytes", "flops", "unit")
        out = []
        for name, track, start, dur, nbytes, flops, unit, h0, hdur in self.timeline:
            if h0 is not None:
                out.append(dict(zip(keys, (name, "host", h0, hdur, 0, 0.0, "launch"))))
            out.append(dict(zip(keys, (name, track, start, dur, nbytes, flops, unit))))
        return out

    def export_chrome_trace(self, path) -> None:
        """The timeline as Chrome trace-event JSON (open in Perfetto / chrome://tracing): the host
        as one process, the device's streams as threads of another; times are SIMULATED."""
        ev = [{"name": "process_name", "ph": "M", "pid": 0,
               "args": {"name": "host (simulated time)"}},
              {"name": "process_name", "ph": "M", "pid": 1,
               "args": {"name": f"{self.profile.name} device (simulated time)"}},
              {"name": "thread_name", "ph": "M", "pid": 1, "tid": 0,
               "args": {"name": "stream 0 (compute)"}},
              {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1,
               "args": {"name": "stream 1 (copy)"}},
              {"name": "thread_name", "ph": "M", "pid": 1, "tid": 2,
               "args": {"name": "stream 2 (communication)"}}]
        for r in self.records():
            host = r["track"] == "host"
            ev.append({"name": ("launch " if host else "") + r["name"], "ph": "X",
                       "pid": 0 if host else 1, "tid": 0 if host else r["track"],
                       "ts": r["start_s"] * 1e6, "dur": r["duration_s"] * 1e6,
                       "cat": r["unit"], "args": {"bytes": r["bytes"], "flops": r["flops"]}})
        with open(path, "w") as f:
            json.dump({"traceEvents": ev, "displayTimeUnit": "ns"}, f)
