"""The CPU backend: buffers are C-contiguous numpy arrays; elementwise kernels are generated numba
loops (elementwise.py, codegen.py); the rest is in kernels.py. At jit_level O2 a graph becomes one
native program (native_sink.py, LLVM IR through llvmlite, no numba: a glue function calling
one kernel per distinct node computation, native_split.py); a graph holding a node that
sink cannot lower runs kernel by kernel (as O1: the eager kernels) with a RuntimeWarning naming
the node (core/graph/compile.py). MINISPORE_NATIVE_SINK=0 turns native programs off: O2 graphs
run kernel by kernel without a warning, PyNative's backward keeps the eager bprops and the eager
kernels of native_kernels.py their numpy fallbacks (native_jit.native_sink_enabled). Always
available."""
from __future__ import annotations

from ...core.device import Backend
from . import numba_setup

numba_setup.install()       # configures numba when (if ever) it is imported

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

    def compiles_kernel(self, op) -> bool:
        """An op with a native lowering and no eager kernel of its own runs that lowering
        eagerly (native_kernels.py): on the CPU a new opaque op is one lowering."""
        from .native_kernels import has_lowering
        return has_lowering(op.name)

    def compiled_kernel(self, op, in_metas, attrs, out_meta):
        from .native_kernels import native_factory
        return native_factory(op.name, None)(in_metas, attrs, out_meta)

    def sink(self, graph):
        """jit_level O2: the whole graph as one native program (a NativeProgram). Raises
        NotImplementedError when there is none: NativeUnsupported naming the node the native
        sink cannot lower, NativeUnavailable when the native path cannot run here (no CBLAS in
        numpy's libraries); the compiler then runs the graph kernel by kernel with a warning
        saying so. With MINISPORE_NATIVE_SINK=0 the graph's program is
        the kernel-by-kernel one, without a warning (the user asked for it)."""
        from .native_jit import NativeUnavailable, native_sink_enabled
        if not native_sink_enabled():
            return self.program(graph)
        from .native_sink import NativeProgram
        try:
            return NativeProgram(graph, self)
        except NativeUnavailable as e:
            raise NativeUnavailable(f"any graph on this machine: {e}") from None

    def bprop_program(self, graph):
        """PyNative's compiled backward: the native sink's program of the tape (compiled in
        ~0.1 s, cached on disk), or None (the eager bprops run) when the native sink is off
        (MINISPORE_NATIVE_SINK=0), unavailable here, or has no lowering for a node."""
        from .native_jit import NativeUnavailable, native_sink_enabled
        if not native_sink_enabled():
            return None
        from .native_sink import NativeProgram, NativeUnsupported
        try:
            return NativeProgram(graph, self)
        except (NativeUnsupported, NativeUnavailable):
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
