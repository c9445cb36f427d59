"""How the CPU backend configures numba, without importing it.

A graph that runs as one native program (jit_level O2: LLVM IR through llvmlite) never needs
numba, and importing numba costs a process ~20-35 MB before it compiles anything. So nothing on
the CPU backend's import path imports numba: the modules that define numba functions are imported
when a kernel that needs them is first built, and `install()` arranges that the moment numba's
dispatcher module has run (whoever imports it: minispore or the user's own code), before any
module can define a numba function:
- minispore's functions with cache=True cache through kernel_cache's verified cache
  (kernel_cache.patch_dispatcher);
- numba's parallel loops use its workqueue threading layer unless NUMBA_THREADING_LAYER is set
  (elementwise.py's docstring says why the OpenMP layer is far worse on a small machine).
When numba is already loaded, both are applied at once.
"""
from __future__ import annotations

import os
import sys

DISPATCHER = "numba.core.dispatcher"


def install() -> None:
    """Apply `_configure` now if numba's dispatcher is loaded, else when it loads."""
    mod = sys.modules.get(DISPATCHER)
    if mod is not None and hasattr(mod, "Dispatcher"):
        _configure(mod)
    elif not any(isinstance(f, _ConfigureOnLoad) for f in sys.meta_path):
        sys.meta_path.insert(0, _ConfigureOnLoad())


def _configure(dispatcher_module) -> None:
    from . import kernel_cache
    if "NUMBA_THREADING_LAYER" not in os.environ:
        sys.modules["numba.core.config"].THREADING_LAYER = "workqueue"
    kernel_cache.patch_dispatcher(dispatcher_module.Dispatcher)


class _ConfigureOnLoad:
    """A meta-path finder that finds nothing itself: for numba's dispatcher module it returns the
    ordinary spec with a loader that runs `_configure` right after the module has run, then it
    takes itself off sys.meta_path."""

    def find_spec(self, name, path=None, target=None):
        if name != DISPATCHER:
            return None
        from importlib.machinery import PathFinder
        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            _configure(module)
        spec.loader.exec_module = exec_module
        return spec


def num_threads() -> int:
    """numba's NUMBA_NUM_THREADS (the size of its thread pool), read from numba when it is loaded
    and otherwise computed as numba computes it: the environment variable, else the CPUs this
    process may run on."""
    if "numba" in sys.modules:
        return int(sys.modules["numba"].config.NUMBA_NUM_THREADS)
    env = os.environ.get("NUMBA_NUM_THREADS")
    if env:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)
