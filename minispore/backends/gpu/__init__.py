"""The GPU backend (`device_target="GPU"`): every primitive on an NVIDIA GPU through CuPy.

- Probing is lazy: importing minispore never imports cupy; `available()` imports it on first call
  and answers (True, "") only when CuPy imports, the CUDA driver works and a device exists,
  otherwise (False, why): no CuPy (with the install command), no driver, no device.
- Eager kernels: elementwise templates as generated cupy.ElementwiseKernels (elementwise.py);
  every other primitive from the routine table (routines.py, routines_nn.py), which uses CuPy's
  own routines (cuBLAS matmul, CuPy reductions). Tensors live in device memory (runtime.py);
  `to_host` synchronises and copies back.
- Graph mode: O0/O1 run kernel by kernel (fused groups as generated RawKernels); O2 captures the
  step as CUDA graphs, split at tensor-conditioned control flow (graph.py).
Hardware status (docs/architecture.md, "Design details": "The GPU backend"): tested without a GPU (host shim, numpy test
doubles) and run on an H200 (the `gpu`-marked tests and the op database's GPU cells pass).
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import warnings

import numpy as np

from ...core.device import Backend

INSTALL = ("pip install -e .[gpu] (CuPy for CUDA 12; .[gpu13] for CUDA 13) on a machine with an "
           "NVIDIA GPU and driver")
_probe: tuple | None = None


def _why_not(e: Exception) -> str:
    msg = f"{type(e).__name__}: {e}"
    if "NoDevice" in msg or "no CUDA-capable device" in msg:
        return f"no CUDA device is visible ({msg})"
    if "InsufficientDriver" in msg or "driver" in msg.lower() or "libcuda" in msg:
        return (f"no usable NVIDIA driver: CuPy cannot initialise CUDA ({msg}); install the "
                f"NVIDIA driver, or a CuPy build for the CUDA version it supports")
    return f"CuPy cannot reach a CUDA device ({msg})"


def available() -> tuple[bool, str]:
    """(usable, reason); probed once per process, quietly (library warnings are swallowed)."""
    global _probe
    if _probe is not None:
        return _probe
    if importlib.util.find_spec("cupy") is None:
        _probe = (False, f"CuPy is not installed; {INSTALL}")
        return _probe
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            import cupy
        except Exception as e:                    # a broken install (missing CUDA libraries)
            _probe = (False, f"CuPy is installed but cannot be imported ({type(e).__name__}: "
                             f"{e}); {INSTALL}")
            return _probe
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:                    # no driver, no device
            _probe = (False, _why_not(e))
            return _probe
    _probe = (True, "") if n > 0 else (False, "no CUDA device is visible (getDeviceCount() is "
                                              "0; check CUDA_VISIBLE_DEVICES)")
    return _probe


class GPUBackend(Backend):
    """The Backend interface over a runtime: CupyRuntime on the device (runtime.py); the tests
    of the O2 program logic pass a recording numpy runtime instead (never device_target)."""
    name = "GPU"
    fuses_reductions = True            # fused groups may end in a reduction (block-tree kernel)

    def __init__(self, rt):
        super().__init__()
        self.rt = rt
        from . import routines
        for op_name in routines.TABLE:
            self.register(op_name)(self._routine(op_name))

    def _routine(self, op_name: str):
        from . import routines
        from .buffers import launcher
        rt = self.rt

        def factory(in_metas, attrs, out_meta):
            fn = routines.build(rt.xp, rt, op_name, in_metas, attrs, out_meta)
            return launcher(rt, fn, out_meta, len(in_metas))
        return factory

    def elementwise_supported(self) -> bool:
        return True

    def elementwise_kernel(self, op, in_metas, attrs, out_meta):
        return self.rt.eager_elementwise(op, in_metas, attrs, out_meta)

    def fused_kernel(self, expr, in_metas, out_meta, reduce=None):
        return self.rt.fused(expr, in_metas, out_meta, reduce)

    def to_device(self, array):
        return self.rt.upload(np.asarray(array))

    def owns(self, buffer) -> bool:
        from .buffers import GpuArray
        return isinstance(buffer, (np.ndarray, GpuArray))     # host arrays are uploaded

    def to_host(self, buffer):
        return self.rt.to_host(buffer)

    def synchronize(self) -> None:
        self.rt.synchronize()

    def device_timer(self):
        """The Profiler's device clock (profiler/session.py): CUDA events on the current stream,
        or None where the runtime has no device (the tests' recording runtime)."""
        return self.rt.event_timer() if hasattr(self.rt, "event_timer") else None

    def sink(self, graph):
        """jit_level O2: the step as captured CUDA graphs, replayed (graph.py)."""
        from .graph import CudaGraphProgram
        return CudaGraphProgram(graph, self)


_backend: GPUBackend | None = None


def get() -> GPUBackend:
    global _backend
    if _backend is None:
        ok, why = available()
        if not ok:
            raise RuntimeError(f"device_target='GPU' cannot be used: {why}")
        from .runtime import CupyRuntime
        _backend = GPUBackend(CupyRuntime())
    return _backend
