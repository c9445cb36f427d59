"""The Backend interface and the registry of backends (DESIGN.md, "Tensors and devices").

A backend is a package under `minispore/backends/` with a `BACKEND` object implementing the
interface below. Backends are listed here explicitly and imported lazily, so importing minispore
never imports cupy; `get_backend` raises DeviceError (a RuntimeError) naming why a backend is not
usable, and never falls back to another device.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

from .errors import DeviceError, KernelNotFound
from .primitive import ELEMENTWISE, Meta, OpDef

# device_target -> module holding BACKEND
BACKEND_MODULES = {
    "CPU": "minispore.backends.cpu",
    "GPU": "minispore.backends.gpu",
    "Ascend": "minispore.backends.ascend_sim",
}


class Backend:
    """What every device provides. Buffers are the backend's own array type.

    kernel(op, in_metas, attrs, out_meta) -> callable(*in_buffers) -> out buffer(s)
        one launchable kernel, specialised for these static input types and attributes;
    counters: launches, host<->device bytes and device time (real or simulated).
    """

    name: str = "?"

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
                                            and self.elementwise_supported())

    def elementwise_supported(self) -> bool:
        return False

    def kernel(self, op: OpDef, in_metas: tuple, attrs: dict, out_meta) -> Callable:
        factory = self._kernels.get(op.name)
        if factory is not None:
            return factory(in_metas, attrs, out_meta)
        if op.kind == ELEMENTWISE and op.scalar is not None and self.elementwise_supported():
            return self.elementwise_kernel(op, in_metas, attrs, out_meta)
        others = [t for t in BACKEND_MODULES if t != self.name]
        raise KernelNotFound(f"no kernel for '{op.name}' on backend '{self.name}'; it is declared "
                             f"in minispore.core.ops; other backends: {', '.join(others)}")

    def elementwise_kernel(self, op: OpDef, in_metas: tuple, attrs: dict, out_meta: Meta):
        raise NotImplementedError

    def validate_graph(self, graph) -> None:
        """Raise if the parsed graph breaks a rule of this device (before any pass runs)."""

    def program(self, graph):
        """jit_level O0/O1: the optimized graph run kernel by kernel with this backend's kernels
        (a backend with its own launch model or formats returns its own Program)."""
        from .graph.execute import Program
        return Program(graph, self)


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
