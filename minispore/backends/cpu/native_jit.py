"""Machine code from LLVM IR without numba: optimize, emit, cache on disk, load, call.

The native sink (native_sink.py) writes its program as LLVM IR text with llvmlite.ir. This file
turns that text into a callable: LLVM's O3 pipeline (loop and SLP vectorisation on) for the host
CPU, an object file emitted by the target machine, and MCJIT to load it. Nothing here touches
numba's target context, whose initialisation (typing registries, importing scipy.linalg for its
BLAS) costs ~0.9 s in a fresh process: that was the floor of a warm start through numba's cache.

Disk cache: object files under <MINISPORE_CACHE_DIR>/native/, entries of kernel_cache.load_or_build
(the one verified mechanism of the CPU caches) keyed by the IR text, the target CPU name and
features and the llvmlite version: named by the key's hash, sealed with the key and their content
hash; a truncated or corrupt entry, or one written under another key, is compiled again with a
KernelCacheWarning and rewritten (atomically), never loaded; an unwritable cache keeps it in
memory.

External symbols the programs call: the CBLAS routines and the conv BLAS's per-thread thread count
as blas.py binds them (`minispore_sgemm`, `minispore_scipy_sgemm`, ..., blas.SET_THREADS_LOCAL),
libm's functions and pthreads (resolved in the process).
"""
from __future__ import annotations

import functools
import os
import threading

import llvmlite
import llvmlite.binding as llvm

from . import blas, kernel_cache, llvm_compile

_lock = threading.Lock()
_state: dict = {}


class NativeUnavailable(NotImplementedError):
    """The native path cannot run here (no CBLAS found in numpy's libraries: blas.py)."""


def native_sink_enabled() -> bool:
    """MINISPORE_NATIVE_SINK: "1" (the default) lowers O2 graphs and PyNative's compiled
    backward natively, "0" runs them kernel by kernel; any other value is an error."""
    value = os.environ.get("MINISPORE_NATIVE_SINK", "1")
    if value not in ("0", "1"):
        raise ValueError(f"MINISPORE_NATIVE_SINK must be '1' (the native CPU sink, the default) "
                         f"or '0' (O2 graphs run kernel by kernel, as O1), got {value!r}")
    return value == "1"


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
    every feature `feats` turns on and x86-64's float calling convention stays intact. LLVM
    only prints an unknown name and goes on (or aborts the process), so a throwaway process
    compiles one function for the target first."""
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
    """LLVM's native target initialised, the bound symbols added and the cache tag, once per
    process."""
    if not _state:
        with _lock:
            if not _state:
                llvm.initialize_native_target()
                llvm.initialize_native_asmprinter()
                cpu, feats = target()
                try:
                    symbols = blas.jit_symbols()
                except blas.BlasUnavailable as e:
                    raise NativeUnavailable(str(e)) from e
                for name, addr in symbols.items():
                    llvm.add_symbol(name, addr)
                tag = f"{llvmlite.__version__}|{cpu}|{feats}|{llvm.get_default_triple()}"
                _state.update(tag=tag)
    return _state


def threads() -> int:
    """Threads a native program may split a large loop over: numba's NUMBA_NUM_THREADS (the
    O1 kernels' prange uses as many), without importing numba."""
    from .numba_setup import num_threads
    return max(1, min(num_threads(), 64))


def blas_int_bits(lib: str = "numpy") -> int:
    """The integer width of library `lib`'s BLAS dimension arguments (blas.int_bits; state()
    raises NativeUnavailable first where there is no CBLAS)."""
    state()
    return blas.int_bits(lib)


def triple() -> str:
    return llvm.get_default_triple()


def _compile(ir_text: str, speed: int = 3) -> bytes:
    """Object code of one module at LLVM level `speed` (llvm_compile.compile_module)."""
    state()
    return llvm_compile.compile_module(llvm, _machine(speed), ir_text, speed)


def _new_machine(speed: int = 3):
    """A target machine for target() at LLVM level `speed`."""
    cpu, feats = target()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=cpu, features=feats, opt=speed, jit=True)


_machine = functools.lru_cache(maxsize=None)(_new_machine)     # the compiles', one per level


def _key(ir_text: str, speed: int) -> str:
    level = "" if speed == 3 else f"O{speed}\n"
    return f"{state()['tag']}\n{level}{ir_text}"


def _cached_objects(modules: list) -> list:
    """[(object code, from the disk cache)] of each (IR text, speed): the misses compiled as one
    batch (llvm_compile.compile_batch: helper processes share a large one), then cached."""
    found = [kernel_cache.load("native", _key(t, s), ".o", legacy=(b"\x7fELF",))
             for t, s in modules]
    missing = [j for j, obj in enumerate(found) if obj is None]
    built = llvm_compile.compile_batch([modules[j] for j in missing], _compile, target()) \
        if missing else []
    for j, obj in zip(missing, built):
        kernel_cache.store("native", _key(*modules[j]), obj, ".o")
        found[j] = obj
    hits = set(range(len(modules))) - set(missing)
    return [(obj, j in hits) for j, obj in enumerate(found)]


class NativeLibrary:
    """Loaded machine code of one or several modules (`ir_text`, compiled at O3, or `modules`:
    (IR text, optimisation level) pairs whose functions may call each other's);
    `address(name)` of their functions. Keeps the engine (which owns the code) alive as long
    as the library is referenced. `from_cache`: every module's object came from the disk
    cache; `compiled`: how many modules were compiled here."""

    def __init__(self, ir_text: str | None = None, modules: list | None = None):
        state()
        modules = list(modules or []) + ([(ir_text, 3)] if ir_text is not None else [])
        objects = _cached_objects(modules)
        self.from_cache = all(hit for _, hit in objects)
        self.compiled = sum(not hit for _, hit in objects)
        empty = llvm.parse_assembly("")
        empty.triple = llvm.get_default_triple()
        # the engine owns (and disposes) the target machine it is given: its own one
        self.engine = llvm.create_mcjit_compiler(empty, _new_machine())
        for obj, _ in objects:
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise KeyError(f"native library has no function {name!r}")
        return addr
