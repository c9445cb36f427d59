"""A test double of the GPU backend's CupyRuntime on numpy, for the O2 CUDA-graph program's logic
(backends/gpu/graph.py) on a machine without a GPU. Tests only: it never serves
device_target="GPU".

It keeps CUDA-graph semantics that the program relies on: between `capture` and its end every
kernel launch is recorded with its input and output arrays, and the recorded outputs are then
poisoned (NaN / a marker value), because a captured graph has not run yet; `launch` replays the
recorded kernels, writing each result INTO the recorded output arrays (the captured addresses),
so a replay reads whatever the program copied into the static inputs, and overwrites the buffers
of the previous replay. Elementwise and fused kernels are the CPU backend's (numba); every other
kernel is the GPU backend's own routine table run with numpy."""
from __future__ import annotations

import numpy as np

from minispore.backends.cpu import get as cpu_backend
from minispore.backends.gpu.buffers import GpuArray, launcher, storage_of


class RecordingGraph:
    def __init__(self, records):
        self.records = records
        self.launches = 0

    def launch(self):
        self.launches += 1
        for fn, args, out in self.records:
            r = fn(*args)
            for dst, src in zip(out if isinstance(out, tuple) else (out,),
                                r if isinstance(r, tuple) else (r,)):
                if dst is not src:
                    np.copyto(dst, src)


def _poison(a):
    if a.dtype.kind == "f":
        a[...] = np.nan
    elif a.dtype.kind in "iu":
        a[...] = 7
    else:
        a[...] = True


class RecordingRuntime:
    name = "recording-numpy"
    xp = np

    def __init__(self):
        self.checks = True
        self.in_graph = False        # as CupyRuntime: True in a capture and its warm-up
        self.gemm_calls = 0
        self.counters = {"h2d_bytes": 0, "uploads": 0, "captures": 0, "graph_launches": 0}
        self._rec = None
        self.graphs: list = []
        self.cpu = cpu_backend()

    def upload(self, host):
        self.counters["uploads"] += 1
        return GpuArray(np.array(storage_of(host), copy=True), np.dtype(host.dtype))

    def const(self, host):
        return np.array(host, copy=True)

    def to_host(self, buf):
        return buf.to_host() if isinstance(buf, GpuArray) else buf

    def synchronize(self):
        pass

    def event_timer(self):
        """As CupyRuntime.event_timer, with the host clock for the device's: a mark is the time
        it was made (None inside a capture), elapsed the difference."""
        import time

        def record():
            return None if self.in_graph else time.perf_counter()
        return record, lambda a, b: b - a

    def launch(self, fn, args):
        r = fn(*args)
        if self._rec is not None:
            self._rec.append((fn, list(args), r))
        return r

    def gemm(self, a, b):
        """The runtime's cuBLAS-free matmul (matmul.matmul while in_graph), on numpy."""
        assert a.ndim == b.ndim == 3 and a.flags.c_contiguous and b.flags.c_contiguous
        assert a.dtype == b.dtype and a.dtype.kind == "f"
        self.gemm_calls += 1
        return np.matmul(a, b)

    def copy_into(self, dst, src):
        """A copy made while capturing is a node of the graph (as a stream's memcpy is): it
        runs at each launch, not now."""
        s = src.a if isinstance(src, GpuArray) else storage_of(src)
        if self._rec is not None:
            self._rec.append((lambda d=dst.a, s=s: np.copyto(d, s), [], ()))
        else:
            np.copyto(dst.a, s)

    def copy_out(self, src):
        return GpuArray(np.array(src.a, copy=True), src.dtype)

    def fresh(self, buf):
        if isinstance(buf, GpuArray):
            return self.copy_out(buf)
        return GpuArray(np.array(storage_of(buf), copy=True), np.dtype(buf.dtype))

    def eager_elementwise(self, op, in_metas, attrs, out_meta):
        k = self.cpu.elementwise_kernel(op, in_metas, attrs, out_meta)
        return launcher(self, k, out_meta, len(in_metas))

    def fused(self, expr, in_metas, out_meta, reduce=None):
        k = self.cpu.fused_kernel(expr, in_metas, out_meta, reduce)
        return launcher(self, k, out_meta, len(in_metas))

    def capture(self, prepare, body):
        state = prepare()
        self.in_graph = True
        try:
            body(state)                        # the warm-up
            self.checks, self._rec = False, []
            result = body(state)
            records = self._rec
        finally:
            self.checks, self.in_graph, self._rec = True, False, None
        for _, args, out in records:           # the capture has not run anything yet
            for a in out if isinstance(out, tuple) else (out,):
                # a kernel's own new buffer (not a view or one of its inputs, not a constant)
                if args and a.size and a.base is None and not any(a is x for x in args):
                    _poison(a)
        g = RecordingGraph(records)
        self.graphs.append(g)
        self.counters["captures"] += 1
        return g, (state, result)
