"""Machine code from LLVM IR without numba: optimize, emit, cache on disk, load, call.

The native sink (native_sink.py) writes its program as LLVM IR text with llvmlite.ir. This file
turns that text into a callable: LLVM's O3 pipeline (loop and SLP vectorisation on) for the host
CPU, an object file emitted by the target machine, and MCJIT to load it. Nothing here touches
numba's target context, whose initialisation (typing registries, importing scipy.linalg for its
BLAS) costs ~0.9 s in a fresh process: that was the floor of a warm start through numba's cache.

Disk cache: object files under <MINISPORE_CACHE_DIR>/native/, named by a hash of the IR text, the
target CPU name and features and the llvmlite version, sealed (kernel_cache.seal) with that whole
key and their content hash: a truncated or corrupt entry, or one written under another key, is
compiled again and rewritten (atomically), never loaded; an unwritable cache keeps it in memory.

External symbols the programs call: `minispore_sgemm`, `_dgemm`, `_sgemv`, ... (gemm, gemv, dot,
syrk), bound to the CBLAS routines of numpy's own OpenBLAS (the library numpy.matmul calls:
PyNative and the native sink multiply with the same code), `minispore_scipy_...` to scipy's (the
conv kernels', with its openblas_set_num_threads_local: blas_threads.py), libm's functions and
pthreads (resolved in the process).
"""
from __future__ import annotations

import ctypes
import functools
import glob
import hashlib
import os
import threading

import llvmlite
import llvmlite.binding as llvm

from . import kernel_cache

_lock = threading.Lock()
_state: dict = {}


class NativeUnavailable(NotImplementedError):
    """The native path cannot run here (no CBLAS found in numpy's libraries)."""


BLAS_ROUTINES = ("gemm", "gemv", "dot", "syrk")
SET_THREADS_LOCAL = "minispore_scipy_set_threads_local"      # blas_threads.py


def _find_cblas(paths: list, prefix: str) -> dict | None:
    """{minispore_<prefix><t><routine>: address} of the first library in `paths` exporting the
    CBLAS routines (ILP64 builds suffix them 64_; scipy-openblas builds prefix them scipy_),
    and the integer width of their dimension arguments; None when none does."""
    for path in paths:
        lib = ctypes.CDLL(path)
        for pre, suf, bits in (("scipy_cblas_", "64_", 64), ("cblas_", "64_", 64),
                               ("scipy_cblas_", "", 32), ("cblas_", "", 32)):
            try:
                fns = {f"minispore_{prefix}{t}{r}": getattr(lib, f"{pre}{t}{r}{suf}")
                       for t in "sd" for r in BLAS_ROUTINES}
            except AttributeError:
                continue
            addr = {n: ctypes.cast(f, ctypes.c_void_p).value for n, f in fns.items()}
            return {"symbols": addr, "int_bits": bits, "lib": lib}
    return None


@functools.lru_cache(maxsize=None)
def _blas_symbols() -> dict:
    """The CBLAS routines (s/d gemm, gemv, dot, syrk) of the two OpenBLAS builds the eager
    kernels call: {"numpy": ..., "scipy": ...} as _find_cblas gives them.

    numpy's (np.matmul, the eager matmul) is bound as minispore_sgemm etc.; scipy's (numba's
    np.dot calls scipy.linalg.cython_blas: the eager conv kernels) as minispore_scipy_sgemm etc.
    Each lowering calls the library its eager kernel calls: the same numbers, and one thread
    pool per kernel family -- a native conv calling numpy's OpenBLAS while eager convs run on
    scipy's left two pools spinning against each other on the cores (a PyNative CNN step with
    a compiled backward went from 2.6 to 14 ms). Without scipy's, numpy's serves both."""
    import numpy as np
    root = os.path.dirname(os.path.dirname(np.__file__))
    libs = glob.glob(os.path.join(root, "numpy.libs", "*openblas*")) + \
        glob.glob(os.path.join(os.path.dirname(np.__file__), ".dylibs", "*openblas*"))
    found = _find_cblas(libs, "")
    if found is None:
        raise NativeUnavailable("no CBLAS gemm/gemv/dot/syrk in numpy's bundled libraries")
    out = {"numpy": found}
    try:
        import scipy
        sroot = os.path.dirname(os.path.dirname(scipy.__file__))
        slibs = glob.glob(os.path.join(sroot, "scipy.libs", "*openblas*")) + \
            glob.glob(os.path.join(os.path.dirname(scipy.__file__), ".dylibs", "*openblas*"))
    except ImportError:
        slibs = []
    out["scipy"] = _find_cblas(slibs, "scipy_") or dict(
        found, symbols={n.replace("minispore_", "minispore_scipy_"): a
                        for n, a in found["symbols"].items()})
    return out


_PROBE = """
import sys
import llvmlite.binding as llvm
llvm.initialize_native_target()
llvm.initialize_native_asmprinter()
tm = llvm.Target.from_default_triple().create_target_machine(cpu=sys.argv[1],
                                                             features=sys.argv[2], opt=0)
mod = llvm.parse_assembly("define i64 @f(i64 %x) {\\n  ret i64 %x\\n}")
mod.triple = llvm.get_default_triple()
tm.emit_object(mod)
"""


@functools.lru_cache(maxsize=None)
def _check_target(cpu: str, feats: str) -> None:
    """Raise ValueError unless LLVM knows CPU `cpu` and every feature in `feats`, the host has
    every feature `feats` turns on and x86-64's float calling convention stays intact. LLVM only prints an unknown name and goes on (or aborts
    the process), so a throwaway process compiles one function for the target first."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _PROBE, cpu, feats], capture_output=True,
                         text=True)
    msgs = [ln.strip() for ln in out.stderr.splitlines() if "not a recognized" in ln
            or "LLVM ERROR" in ln]
    if out.returncode != 0 or msgs:
        why = (msgs or out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[0]
        raise ValueError(f"MINISPORE_LLVM_CPU={cpu!r} MINISPORE_LLVM_FEATURES={feats!r}: LLVM "
                         f"cannot compile for this target ({why}); use an LLVM CPU name (e.g. "
                         "x86-64, haswell, znver4) and features such as '-avx512f' or '+avx2'")
    flags = [f.strip() for f in feats.split(",") if f.strip()]
    abi = [f for f in flags if f in ("-sse", "-sse2")]
    if abi and llvm.get_default_triple().startswith("x86_64"):
        raise ValueError(f"MINISPORE_LLVM_FEATURES={feats!r} turns off {', '.join(abi)}: "
                         "x86-64 passes float arguments (the BLAS calls' alpha and beta) in SSE "
                         "registers, so the native code would compute garbage; SSE2 is the "
                         "narrowest x86-64 target (MINISPORE_LLVM_CPU=x86-64)")
    host = llvm.get_host_cpu_features()
    lacking = [f for f in flags if f.startswith("+") and not host.get(f[1:], False)]
    if lacking:
        raise ValueError(f"MINISPORE_LLVM_FEATURES={feats!r} turns on {', '.join(lacking)}, which "
                         f"this host's CPU ({llvm.get_host_cpu_name()}) lacks: the native code "
                         "would stop on an illegal instruction; turn on only features it has")


def target() -> tuple[str, str]:
    """(CPU name, LLVM feature string) the native JIT compiles for. The host's, unless
    MINISPORE_LLVM_CPU (an LLVM CPU name: x86-64, haswell, skylake-avx512, znver4, ...; its own
    features) or MINISPORE_LLVM_FEATURES (an LLVM feature string applied on top of that CPU's,
    or the host's, features: '-avx512f', '+avx2,+fma', ...) is set: code for another CPU, to
    check what LLVM makes of the native programs there. The code runs on this host, so the
    target must be one it can run; a name LLVM does not know raises ValueError. numba's kernels
    follow numba's own NUMBA_CPU_NAME and NUMBA_CPU_FEATURES."""
    cpu = os.environ.get("MINISPORE_LLVM_CPU", "")
    feats = os.environ.get("MINISPORE_LLVM_FEATURES")
    if not cpu and feats is None:
        return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    cpu = cpu or llvm.get_host_cpu_name()
    _check_target(cpu, feats or "")
    return cpu, feats or ""


def state() -> dict:
    """The target machine and the bound symbols, made once per process."""
    if not _state:
        with _lock:
            if not _state:
                llvm.initialize_native_target()
                llvm.initialize_native_asmprinter()
                cpu, feats = target()

                def machine():
                    return llvm.Target.from_default_triple().create_target_machine(
                        cpu=cpu, features=feats, opt=3, jit=True)
                tm = machine()
                blas = _blas_symbols()
                for lib in blas.values():
                    for name, addr in lib["symbols"].items():
                        llvm.add_symbol(name, addr)
                from .blas_threads import setter_address
                setter = setter_address()
                if setter:                  # the conv BLAS's per-thread thread count
                    llvm.add_symbol(SET_THREADS_LOCAL, setter)
                tag = f"{llvmlite.__version__}|{cpu}|{feats}|{llvm.get_default_triple()}"
                _state.update(tm=tm, machine=machine, tag=tag, blas=blas)
    return _state


def threads() -> int:
    """Threads a native program may split a large loop over: numba's NUMBA_NUM_THREADS (the
    O1 kernels' prange uses as many)."""
    import numba
    return max(1, min(int(numba.config.NUMBA_NUM_THREADS), 64))


def blas_int_bits(lib: str = "numpy") -> int:
    return state()["blas"][lib]["int_bits"]


def triple() -> str:
    return llvm.get_default_triple()


def _compile(ir_text: str) -> bytes:
    st = state()
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(st["tm"], pto)
    pb.getModulePassManager().run(mod, pb)
    return st["tm"].emit_object(mod)


def _cached_object(ir_text: str) -> tuple[bytes, bool]:
    """(object code, whether it came from the disk cache)."""
    st = state()
    key = f"{st['tag']}\n{ir_text}"
    path = kernel_cache.cache_root() / "native" / f"{hashlib.sha1(key.encode()).hexdigest()[:24]}.o"
    blob = kernel_cache.read_entry(path)
    if blob is not None:
        # an ELF file is an entry of the unsealed format this code wrote before: rebuilt silently
        obj = kernel_cache.unseal(blob, key, path, legacy=(b"\x7fELF",))
        if obj is not None:
            return obj, True
    obj = _compile(ir_text)
    kernel_cache.write_entry(path, kernel_cache.seal(key, obj))
    return obj, False


class NativeLibrary:
    """Loaded machine code of one module; `address(name)` of its functions. Keeps the engine
    (which owns the code) alive as long as the library is referenced."""

    def __init__(self, ir_text: str):
        st = state()
        obj, self.from_cache = _cached_object(ir_text)
        empty = llvm.parse_assembly("")
        empty.triple = llvm.get_default_triple()
        # the engine owns (and disposes) the target machine it is given: its own one
        self.engine = llvm.create_mcjit_compiler(empty, st["machine"]())
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise KeyError(f"native library has no function {name!r}")
        return addr
