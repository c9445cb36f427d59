"""The CPU backend's BLAS binding: which OpenBLAS builds its code multiplies with, their CBLAS
routines and their per-thread thread count. Every other module reaches BLAS through this one.

Two builds, one per kernel family, each used by the eager kernels and by the lowerings of the
same ops (the same library gives the same numbers, and one thread pool per family: a native conv
calling numpy's OpenBLAS while eager convs ran on scipy's left two pools spinning against each
other on the cores, and a PyNative CNN step with a compiled backward went from 2.6 to 14 ms):
- "numpy": the OpenBLAS bundled with numpy, the library np.matmul calls (the eager matmul,
  kernels.py); the native sink calls its routines as `minispore_sgemm`, `minispore_dgemv`, ...
- "scipy": the OpenBLAS bundled with scipy, the library numba's np.dot calls (through
  scipy.linalg.cython_blas: the eager conv kernels, windows.py); the native sink calls its
  routines as `minispore_scipy_sgemm`, ... and its openblas_set_num_threads_local as
  SET_THREADS_LOCAL. Without scipy's build, numpy's serves both names.

The thread-count control (`set_threads_local`) is scipy's build's: the conv GEMMs' library,
whose thread policy is blas_threads.py's.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os
import threading

ROUTINES = ("gemm", "gemv", "dot", "syrk")
SET_THREADS_LOCAL = "minispore_scipy_set_threads_local"
_state: dict = {}
_lock = threading.Lock()


class BlasUnavailable(NotImplementedError):
    """numpy's bundled libraries export no CBLAS routines: code that calls BLAS directly (the
    native sink) cannot run here."""


def _find_cblas(paths: list, prefix: str) -> dict | None:
    """{minispore_<prefix><t><routine>: address} of the first library in `paths` exporting the
    CBLAS routines (ILP64 builds suffix them 64_; scipy-openblas builds prefix them scipy_),
    the integer width of their dimension arguments and the library; None when none does."""
    for path in paths:
        lib = ctypes.CDLL(path)
        for pre, suf, bits in (("scipy_cblas_", "64_", 64), ("cblas_", "64_", 64),
                               ("scipy_cblas_", "", 32), ("cblas_", "", 32)):
            try:
                fns = {f"minispore_{prefix}{t}{r}": getattr(lib, f"{pre}{t}{r}{suf}")
                       for t in "sd" for r in ROUTINES}
            except AttributeError:
                continue
            addr = {n: ctypes.cast(f, ctypes.c_void_p).value for n, f in fns.items()}
            return {"symbols": addr, "int_bits": bits, "lib": lib}
    return None


def _bundled(module) -> list:
    """The OpenBLAS libraries a wheel of `module` bundles (<name>.libs/ on Linux, .dylibs/ on
    macOS)."""
    here = os.path.dirname(module.__file__)
    name = os.path.basename(here)
    return glob.glob(os.path.join(os.path.dirname(here), f"{name}.libs", "*openblas*")) + \
        glob.glob(os.path.join(here, ".dylibs", "*openblas*"))


@functools.lru_cache(maxsize=None)
def libraries() -> dict:
    """{"numpy": ..., "scipy": ...}, each as _find_cblas gives it (see the module docstring);
    BlasUnavailable when numpy's libraries export no CBLAS."""
    import numpy as np
    found = _find_cblas(_bundled(np), "")
    if found is None:
        raise BlasUnavailable("no CBLAS gemm/gemv/dot/syrk in numpy's bundled libraries")
    try:
        import scipy
        scipy_libs = _bundled(scipy)
    except ImportError:
        scipy_libs = []
    scipy_found = _find_cblas(scipy_libs, "scipy_") or dict(
        found, symbols={n.replace("minispore_", "minispore_scipy_"): a
                        for n, a in found["symbols"].items()})
    return {"numpy": found, "scipy": scipy_found}


def int_bits(lib: str = "numpy") -> int:
    """The integer width (32 or 64) of the dimension arguments of library `lib`'s routines."""
    return libraries()[lib]["int_bits"]


def _set_threads_fn():
    """scipy's build's openblas_set_num_threads_local as a ctypes function, or None (another
    BLAS, or no CBLAS at all)."""
    if "set" not in _state:
        with _lock:
            if "set" not in _state:
                try:
                    fn = libraries()["scipy"]["lib"].openblas_set_num_threads_local
                    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
                except (BlasUnavailable, AttributeError, OSError):
                    fn = None
                _state["set"] = fn
    return _state["set"]


def has_thread_control() -> bool:
    """Whether the conv library's thread count can be set per calling thread."""
    return _set_threads_fn() is not None


def set_threads_local(n: int) -> int:
    """Run the conv library's calls from this thread on `n` threads (0: its global count
    again); returns the previous setting. Only where has_thread_control()."""
    return _set_threads_fn()(n)


def thread_count(lib: str = "scipy") -> int:
    """The number of threads library `lib` runs a call on from this thread."""
    handle = libraries()[lib]["lib"]
    for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                 "openblas_get_num_threads64_", "openblas_get_num_threads"):
        fn = getattr(handle, name, None)
        if fn is not None:
            return fn()
    raise BlasUnavailable(f"{lib}'s BLAS has no openblas_get_num_threads")


def jit_symbols() -> dict:
    """{symbol name: address} of everything compiled code may call: every routine of both
    libraries and, where there is one, SET_THREADS_LOCAL."""
    out = {}
    for lib in libraries().values():
        out.update(lib["symbols"])
    fn = _set_threads_fn()
    if fn is not None:
        out[SET_THREADS_LOCAL] = ctypes.cast(fn, ctypes.c_void_p).value
    return out
