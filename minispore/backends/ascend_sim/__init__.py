"""The simulated Ascend NPU backend (`device_target="Ascend"`): always available, never hardware.

It computes real numbers (the CPU backend's kernels under the device's precision rules,
kernels.py) and models the rest as its own: device memory (memory.py), host and device clocks,
streams and copies (runtime.py), a per-kernel cost model over one profile table (cost.py,
profile.py), FRACTAL_NZ formats with TransData (formats.py), and graph sinking with a format
assignment pass (graph.py), and collectives as HCCL tasks on a communication stream, timed
by the interconnect model (collectives.py). All times it reports are SIMULATED model time.

Configuration (set_context): `ascend_config={"precision_mode": ..., "device_profile": ...}` and
`max_device_memory="2GB"` (the simulated HBM capacity, as MindSpore's key sets its pool).
"""
from __future__ import annotations

import contextlib

import numpy as np

from ...core import context
from ...core.device import Backend
from . import kernels
from .profile import DEFAULT, PROFILES
from .memory import DeviceArray
from .runtime import Device


class AscendBackend(Backend):
    name = "Ascend"

    def __init__(self):
        super().__init__()
        from ..cpu import get as cpu_backend
        self.cpu = cpu_backend()
        self.format_pass = True          # graph mode: keep FRACTAL_NZ between Cube ops
        self.pending: dict = {}          # async collective ticket -> its end event on stream 2
        self.configure()

    def configure(self) -> None:
        """(Re)build the device from the context: a new profile or capacity gives a fresh
        device (clocks, streams) that keeps the old one's memory pool, so live tensors stay
        valid and counted; a new precision mode drops the cached kernels."""
        cfg = context._state.get("ascend_config") or {}
        profile = PROFILES[cfg.get("device_profile", DEFAULT)]
        capacity = context.max_device_memory_bytes()
        dev = getattr(self, "device", None)
        if dev is None or dev.profile is not profile or dev.pool.capacity != (
                capacity or profile.hbm_bytes):
            self.device = Device(profile, capacity, pool=None if dev is None else dev.pool)
        self.precision_mode = cfg.get("precision_mode", kernels.DEFAULT_PRECISION_MODE)
        self.cube_dtype = kernels.PRECISION_MODES[self.precision_mode]
        self.plans.clear()

    # -- Backend interface --------------------------------------------------------------------
    def has_kernel(self, op) -> bool:
        return self.cpu.has_kernel(op)

    def kernel(self, op, in_metas, attrs, out_meta):
        return kernels.build(self, op, in_metas, attrs, out_meta)

    fuses_reductions = True              # UB fusion: a trailing reduction joins the group

    def fused_kernel(self, expr, in_metas, out_meta, reduce=None):
        return kernels.fused(self, expr, in_metas, out_meta, reduce=reduce)

    def to_device(self, array):
        return self.device.upload(array)

    def owns(self, buffer) -> bool:
        return isinstance(buffer, (np.ndarray, DeviceArray))     # host arrays are uploaded

    def to_host(self, buffer):
        return buffer.to_host() if hasattr(buffer, "to_host") else buffer

    def synchronize(self) -> None:
        self.device.synchronize()

    def validate_graph(self, graph) -> None:
        from .graph import check_float64
        check_float64(graph)

    def program(self, graph):
        """jit_level O0/O1: kernel by kernel, each launched by the host (MindSpore's KBK)."""
        from .graph import AscendProgram
        return AscendProgram(graph, self, sink=False)

    def sink(self, graph):
        """jit_level O2: the graph as a task list sunk to the device, one host launch a run."""
        from .graph import AscendProgram
        return AscendProgram(graph, self, sink=True)

    def run_collective(self, who, buf, run, comm, phase):
        """A collective on the simulated device (core/ops/collective.py's run_on_device): the
        numbers come from `run` on the host (MPI), the time from the interconnect model on the
        communication stream; no PCIe copy is charged (HCCL reads and writes device memory).
        "sync": the compute stream waits for the collective at once; "start": the collective
        is modelled now, its end event kept under the returned ticket; "wait": the compute
        stream waits for the ticket's event, and the result is returned."""
        from .collectives import estimate, task_name
        dev = self.device
        host = buf.data if isinstance(buf, DeviceArray) else np.asarray(buf)
        if phase == "wait":
            key = tuple(np.asarray(host).ravel().tolist())
            event = self.pending.pop(key, None)
            out = np.asarray(run(host), order="C")
            if event is not None:
                event.wait(dev.compute)
            return dev.alloc(out, what=f"the output of {who}")
        if phase not in ("sync", "start"):
            raise ValueError(f"For '{who}', the collective phase must be 'sync', 'start' or "
                             f"'wait', but got {phase!r}")
        gathers = who in ("all_gather", "collective_gather")     # n: the gathered whole
        nbytes = host.nbytes * (comm.size if gathers else 1)
        est = estimate(who, nbytes, comm.size, dev.profile)
        event = dev.collective(task_name(who, nbytes, comm.size), est.seconds, nbytes)
        out = np.asarray(run(host), order="C")
        if phase == "sync":
            event.wait(dev.compute)
        else:
            self.pending[tuple(out.ravel().tolist())] = event
        return dev.alloc(out, what=f"the output of {who}")

    @contextlib.contextmanager
    def loop_sink(self, batches):
        """ms.data_sink on the device: one host launch for the whole loop and one H2D transfer
        of every batch (a device data queue); each sunk step then dequeues its batch on the
        device, waiting only for that batch's bytes (graph.py, runtime.Device.dequeue)."""
        dev = self.device
        dev.graph_launch("data_sink loop")
        sizes = []
        for batch in batches:
            n = 0
            for t in batch:
                if isinstance(t._buf, np.ndarray):
                    dev.upload(t._buf, copy_event=False)
                    n += t._buf.nbytes
            sizes.append(n)
        dev.queue_batches(sizes)
        prev, dev.loop_sink = dev.loop_sink, True
        try:
            yield
        finally:
            dev.loop_sink = prev


_backend: AscendBackend | None = None


def available() -> tuple[bool, str]:
    return True, ""


def get() -> AscendBackend:
    global _backend
    if _backend is None:
        _backend = AscendBackend()
    return _backend


def device() -> Device:
    """The simulated device (clocks, memory pool, counters, timeline) of the current profile."""
    return get().device
