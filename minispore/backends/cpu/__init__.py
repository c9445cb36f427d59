"""The CPU backend: buffers are C-contiguous numpy arrays; elementwise kernels are generated numba
loops (elementwise.py, codegen.py); the rest is in kernels.py. At jit_level O2 a graph becomes one
native function (native_sink.py, LLVM IR without numba) or, when it holds a node that sink cannot
lower, one numba function (sink.py) with a RuntimeWarning naming that node;
MINISPORE_NATIVE_SINK=0 forces the numba sink (no warning). Always available."""
from __future__ import annotations

from ...core.device import Backend
from . import kernel_cache

kernel_cache.install()      # before any module below defines a numba function with cache=True

from . import kernels  # noqa: E402
from .elementwise import elementwise_kernel, fused_kernel  # noqa: E402


class CPUBackend(Backend):
    name = "CPU"
    fuses_reductions = True          # fused_kernel takes reduce= (see graph/execute.py)

    def elementwise_supported(self) -> bool:
        return True

    def elementwise_kernel(self, op, in_metas, attrs, out_meta):
        return elementwise_kernel(op, in_metas, attrs, out_meta)

    def fused_kernel(self, expr, in_metas, out_meta, reduce=None):
        return fused_kernel(expr, in_metas, out_meta, reduce)

    def sink(self, graph):
        """jit_level O2: the whole graph as one native function (native_sink.py, LLVM IR) when
        it has a lowering for every node, else as one numba function (sink.py)."""
        native = self._native(graph, warn=True)
        if native is not None:
            return native
        from . import blas_threads
        from .sink import SunkProgram
        program = SunkProgram(graph, self)
        program.serial_blas = blas_threads.graph_serial(graph)
        return program

    def bprop_program(self, graph):
        """PyNative's compiled backward: the native sink only (compiled in ~0.1 s, cached on
        disk); a tape it cannot lower keeps the eager bprops rather than pay numba's seconds."""
        return self._native(graph)

    def _native(self, graph, warn: bool = False):
        """The graph as a NativeProgram; None when MINISPORE_NATIVE_SINK=0, when the native path
        is unavailable here, or when a node has no native lowering. With `warn` (the O2 sink),
        the last two say so in a RuntimeWarning naming the node: the numba sink that takes the
        graph instead is another program (other code, seconds of compile), never silently."""
        import os
        if os.environ.get("MINISPORE_NATIVE_SINK", "1") == "0":
            return None
        from .native_jit import NativeUnavailable
        from .native_sink import NativeProgram, NativeUnsupported
        try:
            return NativeProgram(graph, self)
        except (NativeUnsupported, NativeUnavailable) as e:
            if warn:
                import warnings
                warnings.warn(f"jit_level O2: the native CPU sink could not lower graph "
                              f"'{graph.name}' ({e}); it runs as one numba function (the numba "
                              f"sink) instead", RuntimeWarning, stacklevel=2)
            return None


_backend: CPUBackend | None = None


def available() -> tuple[bool, str]:
    return True, ""


def get() -> CPUBackend:
    global _backend
    if _backend is None:
        _backend = CPUBackend()
        kernels.register_all(_backend)
    return _backend
