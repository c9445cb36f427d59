"""The Backend interface and the registry of backends (DESIGN.md, "Tensors and devices").

A backend is a package under `minispore/backends/` with a `BACKEND` object implementing the
interface below. minispore/backends/__init__.py registers each by module name
(`register_backend`); the module is imported on first use, so importing minispore never imports
cupy; `get_backend` raises DeviceError (a RuntimeError) naming why a backend is not
usable, and never falls back to another device.
"""
from __future__ import annotations

import functools
import importlib
from typing import Any, Callable

from .errors import DeviceError, KernelNotFound
from .primitive import ELEMENTWISE, Meta, OpDef

# device_target -> name of the module holding the backend, in registration order
BACKEND_MODULES: dict[str, str] = {}


def register_backend(target: str, module: str) -> None:
    """Make `device_target=target` use the backend of `module` (imported on first use): the
    module's `available() -> (usable, reason)` and `get() -> Backend`."""
    BACKEND_MODULES[target] = module


class ProfileHooks:
    """Where the Profiler (minispore/profiler/) sees kernels: when they are MADE, never when they
    run. See Note [Profiling hook].

    Note [Profiling hook]: the kernel factories of every backend (`kernel`, `fused_kernel`) and
    its program makers (`program`, `sink`) are wrapped once, at class creation. While no profiler
    runs (`active is None`) a wrapper calls the factory and returns its kernel untouched, so a
    launched kernel is exactly the backend's own and the hot path pays nothing; the one extra
    test happens when a kernel is made (an eager plan-cache miss, a graph compile). While a
    profiler runs it returns a timing wrapper instead. The profiler clears the eager plan caches
    (`Backend.plans`) when it starts and again when it stops, and swaps each compiled program for
    a recording one and back (profiler/__init__.py), so kernels made while profiling are only
    reached while profiling. A factory called inside another (the simulated Ascend computes with
    the CPU backend's kernels) or inside `node_kernel` is not wrapped again (`depth`). Graph
    nodes are wrapped by the O0/O1 executor (graph/execute.py) through `node_kernel`, which also
    covers the kernels a backend's Program makes itself (the simulated Ascend's TransData and
    FRACTAL_NZ kernels). A backend added later (GPU) is hooked by subclassing Backend."""

    active: Any = None          # the running profiler session, or None
    depth = 0                   # > 0 while a hooked factory runs inside another

    def node_kernel(self, program, node):
        """program.node_kernel(node), wrapped by the active session (graph/execute.py)."""
        self.depth += 1
        try:
            k = program.node_kernel(node)
        finally:
            self.depth -= 1
        return self.active.wrap_node(program, node, k)


hooks = ProfileHooks()

# factory method -> what it makes (the profiler's wrap(kind, ...) argument). The program makers
# also tell the observers of `on_program_made` (graph/compile.py registers the save_graphs
# picture writer, graph/dot.py's save_final).
_HOOKED = {"kernel": "kernel", "fused_kernel": "fused", "program": "program", "sink": "sink"}

# What the graph layer above injects (device.py never imports it): the Program that runs a graph
# kernel by kernel (graph/execute.py registers it), and the observers told of every program a
# backend makes.
_default_program: list = []
_program_observers: list[Callable] = []


def register_default_program(program_cls) -> None:
    """Install `program_cls(graph, backend)`, what Backend.program returns by default."""
    _default_program[:] = [program_cls]


def on_program_made(observer: Callable) -> None:
    """Call `observer(program)` for each program or sink a backend makes (once per observer)."""
    if observer not in _program_observers:
        _program_observers.append(observer)


def _hooked(kind: str, fn: Callable) -> Callable:
    if getattr(fn, "_profile_hooked", False):
        return fn
    if kind in ("program", "sink"):
        @functools.wraps(fn)
        def make_program(self, *args, **kwargs):
            prog = fn(self, *args, **kwargs)
            for observe in _program_observers:       # e.g. the picture of the graph it runs
                observe(prog)
            session = hooks.active
            return prog if session is None else session.wrap(kind, self, prog, args, kwargs)
        make_program._profile_hooked = True
        return make_program

    @functools.wraps(fn)
    def factory(self, *args, **kwargs):
        session = hooks.active
        if session is None or hooks.depth:
            return fn(self, *args, **kwargs)
        hooks.depth += 1
        try:
            made = fn(self, *args, **kwargs)
        finally:
            hooks.depth -= 1
        return session.wrap(kind, self, made, args, kwargs)
    factory._profile_hooked = True
    return factory


class Backend:
    """What every device provides. Buffers are the backend's own array type.

    kernel(op, in_metas, attrs, out_meta) -> callable(*in_buffers) -> out buffer(s)
        one launchable kernel, specialised for these static input types and attributes;
    counters: launches, host<->device bytes and device time (real or simulated).
    """

    name: str = "?"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        for name, kind in _HOOKED.items():       # Note [Profiling hook]
            if name in cls.__dict__:
                setattr(cls, name, _hooked(kind, cls.__dict__[name]))

    def __init__(self) -> None:
        self.plans: dict = {}            # eager executor's cache: (op, attrs, metas) -> plan
        self.counters: dict[str, float] = {"launches": 0}
        self._kernels: dict[str, Callable] = {}

    # -- availability and memory --------------------------------------------------------------
    def available(self) -> tuple[bool, str]:
        return True, ""

    def to_device(self, array) -> Any:
        return array

    def owns(self, buffer) -> bool:
        """Whether this backend's kernels can read `buffer` (host numpy arrays by default)."""
        import numpy as np
        return isinstance(buffer, np.ndarray)

    def to_host(self, buffer) -> Any:
        return buffer

    def synchronize(self) -> None:
        pass

    # -- kernels ------------------------------------------------------------------------------
    def register(self, op_name: str):
        """Decorator: `@BACKEND.register("matmul") def factory(in_metas, attrs, out_meta)`."""
        def deco(factory):
            self._kernels[op_name] = factory
            return factory
        return deco

    def has_kernel(self, op: OpDef) -> bool:
        return op.name in self._kernels or (op.kind == ELEMENTWISE and op.scalar is not None
                                            and self.elementwise_supported()) or \
            self.compiles_kernel(op)

    def compiles_kernel(self, op: OpDef) -> bool:
        """Whether this backend makes `op`'s eager kernel from its graph compiler's lowering
        (`compiled_kernel`) when no kernel is registered for it."""
        return False

    def compiled_kernel(self, op: OpDef, in_metas: tuple, attrs: dict, out_meta):
        """The eager kernel of an op with no registered kernel, compiled from the lowering
        the backend's graph compiler has for it (one implementation serves both), or None."""
        return None

    def elementwise_supported(self) -> bool:
        return False

    def kernel(self, op: OpDef, in_metas: tuple, attrs: dict, out_meta) -> Callable:
        host = getattr(op, "host_kernel", None)      # a host callback (core/custom_op.py)
        if host is not None:
            return host(self, in_metas, attrs, out_meta)
        factory = self._kernels.get(op.name)
        if factory is not None:
            return factory(in_metas, attrs, out_meta)
        if op.kind == ELEMENTWISE and op.scalar is not None and self.elementwise_supported():
            return self.elementwise_kernel(op, in_metas, attrs, out_meta)
        if self.compiles_kernel(op):
            compiled = self.compiled_kernel(op, in_metas, attrs, out_meta)
            if compiled is not None:
                return compiled
            raise KernelNotFound(f"'{op.name}' on backend '{self.name}': its only kernel is "
                                 f"compiled from the graph lowering, which declines inputs "
                                 f"{', '.join(f'{m.dtype}{list(m.shape)}' for m in in_metas)}; "
                                 f"cast them to a dtype the op takes")
        others = [t for t in BACKEND_MODULES if t != self.name]
        raise KernelNotFound(f"no kernel for '{op.name}' on backend '{self.name}'; it is declared "
                             f"in minispore.core.ops; other backends: {', '.join(others)}")

    def elementwise_kernel(self, op: OpDef, in_metas: tuple, attrs: dict, out_meta: Meta):
        raise NotImplementedError

    def validate_graph(self, graph) -> None:
        """Raise if the parsed graph breaks a rule of this device (before any pass runs)."""

    def bprop_program(self, graph):
        """PyNative's compiled backward (core/bprop_graph.py): a program for `graph`, or None
        when this backend has none worth its compile time (the eager bprops then run)."""
        return None

    def program(self, graph):
        """jit_level O0/O1: the optimized graph run kernel by kernel with this backend's kernels
        (a backend with its own launch model or formats returns its own Program)."""
        if not _default_program:
            raise RuntimeError(f"{self.name} backend: no graph Program is registered; import "
                               f"minispore.core.graph.execute (import minispore does)")
        return _default_program[0](graph, self)


for _name, _kind in _HOOKED.items():
    if _name in Backend.__dict__:
        setattr(Backend, _name, _hooked(_kind, Backend.__dict__[_name]))

_cache: dict[str, Backend] = {}


class current:
    """The backend of the current device_target (set by set_context; None until first use)."""
    backend: Backend | None = None


def get_backend(target: str) -> Backend:
    """The usable backend for `target`; DeviceError (RuntimeError) saying why if it is not."""
    b = _cache.get(target)
    if b is not None:
        return b
    if target not in BACKEND_MODULES:
        raise ValueError(f"device_target {target!r} is not valid; choose one of "
                         f"{', '.join(BACKEND_MODULES)}")
    mod = importlib.import_module(BACKEND_MODULES[target])
    ok, why = mod.available()
    if not ok:
        raise DeviceError(f"device_target={target!r} cannot be used on this machine: {why}")
    b = mod.get()
    _cache[target] = b
    return b


def availability() -> dict[str, tuple[bool, str]]:
    """{target: (usable, reason)} for every backend, without raising."""
    out = {}
    for t, m in BACKEND_MODULES.items():
        try:
            out[t] = importlib.import_module(m).available()
        except Exception as e:          # a broken backend package is reported, not raised
            out[t] = (False, f"{type(e).__name__}: {e}")
    return out
