"""The CuPy runtime of the GPU backend: the one module that imports cupy (only when the backend
is first used, never at minispore import).

Owns: device memory (CuPy's default memory pool; host arrays uploaded once and kept while the
host array lives, MindSpore's lazy device address), the kernel caches (cupy.ElementwiseKernel per
generated elementwise body, cupy.RawKernel per generated fused kernel: compiled by NVRTC on first
launch and cached on disk by CuPy under ~/.cupy/kernel_cache), the matmul precision (float32
matmul computes in float32 on cuBLAS, TF32 off unless MINISPORE_GPU_TF32=1), and CUDA-graph
capture for the O2 sink (graph.py).

Capture follows CUDA's rules for stream capture: no host synchronisation and no allocation from
the memory other code uses. CuPy also refuses any cuBLAS call on a capturing stream
(NotImplementedError from cupy_backends' cublas.setStream), so while a graph is captured, and in
its warm-up run, `in_graph` is set and float matmuls run on the generator's GEMM kernel (`gemm`)
instead of cupy.matmul. Every kernel is compiled (and CUB initialised) by that warm-up run on the
capture stream first; then the step is captured on that (non-blocking) stream with a private
memory pool, so no address the graph writes can ever be handed to another tensor; the pool lives
as long as the graph. Replays launch on the current stream, so they are ordered with the eager
work around them.

Run on an H200 with CuPy 14.2 and CUDA 13 (docs/architecture.md, "Design details": "The GPU backend").
"""
from __future__ import annotations

import os
import weakref

import numpy as np

from . import cuda_codegen, cuda_source
from .buffers import GpuArray, storage_of


class CapturedGraph:
    """A captured CUDA graph and the private memory pool its addresses live in."""

    def __init__(self, graph, pool, stream):
        self.graph, self.pool, self.stream = graph, pool, stream

    def launch(self) -> None:
        self.graph.launch()               # on the current stream


class CupyRuntime:
    name = "cupy"
    compiles_cuda = True                    # routines may launch generated kernels (raw_kernel)

    def __init__(self):
        import cupy
        self.cp = cupy
        self.xp = cupy
        self.checks = True                  # False while a graph is captured (no host syncs)
        self.in_graph = False               # True in a capture and its warm-up: no cuBLAS
        self._resident: dict = {}
        self._ew: dict = {}
        self._raw: dict = {}
        self._gemm: dict = {}
        self.counters = {"h2d_bytes": 0, "uploads": 0, "captures": 0, "graph_launches": 0}
        self.tf32 = os.environ.get("MINISPORE_GPU_TF32", "0") == "1"
        try:                                # float32 matmul: FP32 compute, or TF32 if asked
            from cupy._core import _routines_linalg as cupy_linalg
            cupy_linalg.set_compute_type(np.float32, cupy_linalg.COMPUTE_TYPE_TF32 if self.tf32
                                         else cupy_linalg.COMPUTE_TYPE_FP32)
        except (ImportError, AttributeError):
            if self.tf32:
                raise RuntimeError("MINISPORE_GPU_TF32=1 needs CuPy's compute-type switch "
                                   "(cupy._core._routines_linalg.set_compute_type)") from None

    # -- memory -----------------------------------------------------------------------------
    def upload(self, host) -> GpuArray:
        """The device copy of a host array, made once and kept while the host array lives."""
        key = id(host)
        ent = self._resident.get(key)
        if ent is not None and ent[0]() is host:
            return ent[1]
        src = storage_of(host)
        d = GpuArray(self.cp.asarray(src), np.dtype(host.dtype))
        self.counters["h2d_bytes"] += src.nbytes
        self.counters["uploads"] += 1
        resident = self._resident
        try:
            resident[key] = (weakref.ref(host, lambda _r, k=key: resident.pop(k, None)), d)
        except TypeError:                   # not weak-referenceable: not cached
            pass
        return d

    def const(self, host_storage: np.ndarray):
        """A constant device array (kernel factories: uploaded once, when the kernel is made)."""
        return self.cp.asarray(np.asarray(host_storage))

    def to_host(self, buf) -> np.ndarray:
        return buf.to_host() if isinstance(buf, GpuArray) else buf

    def synchronize(self) -> None:
        self.cp.cuda.get_current_stream().synchronize()

    @staticmethod
    def launch(fn, args):
        return fn(*args)

    def copy_into(self, dst: GpuArray, src) -> None:
        """dst's bytes := src's (a device buffer: async D2D on the current stream; host: H2D)."""
        if src.__class__ is GpuArray:
            n = src.a.nbytes
            if n:
                dst.a.data.copy_from_device_async(src.a.data, n)
        else:
            dst.a.set(storage_of(src))

    def copy_out(self, src: GpuArray) -> GpuArray:
        """A fresh device buffer holding src's bytes (async D2D on the current stream)."""
        a = self.cp.empty(src.a.shape, src.a.dtype)
        if a.nbytes:
            a.data.copy_from_device_async(src.a.data, a.nbytes)
        return GpuArray(a, src.dtype)

    def fresh(self, buf) -> GpuArray:
        """A new device buffer (from the current allocator) holding buf's value."""
        if buf.__class__ is GpuArray:
            return self.copy_out(buf)
        return GpuArray(self.cp.asarray(storage_of(buf)), np.dtype(buf.dtype))

    # -- kernels ----------------------------------------------------------------------------
    def eager_elementwise(self, op, in_metas, attrs, out_meta):
        from .elementwise import eager_kernel
        return eager_kernel(self, op, in_metas, attrs, out_meta)

    def fused(self, expr, in_metas, out_meta, reduce=None):
        from .elementwise import fused_kernel
        return fused_kernel(self, expr, in_metas, out_meta, reduce)

    def ew_kernel(self, ew: cuda_codegen.EwOperation):
        k = self._ew.get(ew.name)
        if k is None:
            k = self._ew[ew.name] = self.cp.ElementwiseKernel(
                ew.in_params, ew.out_params, ew.operation, ew.name, preamble=cuda_source.PREAMBLE)
        return k

    def gemm(self, a, b):
        """a @ b for C-contiguous float arrays (batch, m, k), (batch, k, n) of one dtype, on the
        generator's GEMM kernel (no cuBLAS: the matmul of captured graphs, matmul.matmul)."""
        (nb, m, k), n = a.shape, b.shape[2]
        key = (a.dtype.name, nb, m, k, n)
        ck = self._gemm.get(key)
        if ck is None:
            ck = self._gemm[key] = cuda_codegen.gemm_kernel(a.dtype.name, nb, m, k, n)
        out = self.cp.empty((nb, m, n), a.dtype)
        self.raw_kernel(ck)((ck.grid,), (ck.block,), (a, b, out))
        return out

    def event_timer(self):
        """(record, elapsed): record() puts a CUDA event on the current stream (None while a
        graph is captured or warmed up: an event recorded there would be a node of the graph);
        elapsed(a, b) waits for b and gives the device seconds from a to b."""
        cp = self.cp

        def record():
            if self.in_graph:
                return None
            e = cp.cuda.Event()
            e.record()
            return e

        def elapsed(a, b):
            b.synchronize()
            return cp.cuda.get_elapsed_time(a, b) / 1e3
        return record, elapsed

    def raw_kernel(self, ck: cuda_source.CudaKernel):
        k = self._raw.get(ck.name)
        if k is None:
            k = self._raw[ck.name] = self.cp.RawKernel(ck.source(), ck.name)
        return k

    # -- CUDA graphs ------------------------------------------------------------------------
    def capture(self, prepare, body):
        """(CapturedGraph, body's result): inside a private memory pool and a non-blocking
        stream, state = prepare() (the static input buffers), body(state) once as a warm-up,
        then body(state) captured. The graph has not run yet when this returns."""
        cp = self.cp
        pool = cp.cuda.MemoryPool()
        stream = cp.cuda.Stream(non_blocking=True)
        stream.wait_event(cp.cuda.get_current_stream().record())    # inputs made before
        with cp.cuda.using_allocator(pool.malloc), stream:
            state = prepare()
            self.in_graph = True                           # the warm-up runs what is captured
            try:
                body(state)                                # warm-up: compile, load, init
                stream.synchronize()
                self.checks = False
                stream.begin_capture()
                try:
                    result = body(state)
                except BaseException:
                    try:
                        stream.end_capture()
                    except Exception:                     # the capture is invalid anyway
                        pass
                    raise
                graph = stream.end_capture()
            finally:
                self.checks, self.in_graph = True, False
        self.counters["captures"] += 1
        # replays run on the current stream: it must not overtake what the capture stream did
        cp.cuda.get_current_stream().wait_event(stream.record())
        return CapturedGraph(graph, pool, stream), (state, result)
