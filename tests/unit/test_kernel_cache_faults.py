"""Faults in the on-disk compile caches (backends/cpu/kernel_cache.py): a corrupt, truncated,
mis-keyed or directory entry of any cache (generated modules, numba's .nbi/.nbc, .pyc files, the
native sink's .o) is rebuilt with a one-line KernelCacheWarning and never run; a cache directory
that cannot be written (not a directory, full) compiles in memory with one warning. Every fault
runs in a subprocess with its own MINISPORE_CACHE_DIR: a crash must not take pytest with it."""
import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
import textwrap

import pytest

import minispore

# the subprocesses import this checkout's minispore, not an installed copy
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(minispore.__file__)))


def _env(cache, extra=None):
    """numba's files beside the generated modules (no NUMBA_CACHE_DIR) unless `extra` says."""
    path = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    return dict(env, MINISPORE_CACHE_DIR=str(cache), PYTHONPATH=path, **(extra or {}))

SCRIPT = textwrap.dedent("""
    import numpy as np, minispore as ms
    from minispore import ops
    from minispore.core.graph import compile as graph_compile
    from minispore.core.ops.math import MUL
    from minispore.backends.cpu.elementwise import kernel_module

    ms.set_context(mode=ms.PYNATIVE_MODE)
    a = ms.Tensor(np.arange(5, dtype=np.float32))
    assert (a * a).asnumpy().tolist() == [0, 1, 4, 9, 16]
    st = kernel_module(MUL, {}, "float32", "flat_vv").flat_vv.stats

    def f(x):
        return ops.tanh(x) * 3 + 1

    def g(x):
        return x * x - 2

    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    np.testing.assert_allclose(ms.jit(f)(ms.Tensor(x)).asnumpy(), np.tanh(x) * 3 + 1, rtol=1e-6)
    np.testing.assert_allclose(ms.jit(g)(ms.Tensor(x)).asnumpy(), x * x - 2, rtol=1e-6)
    native = [e.program.lib.from_cache for e in graph_compile.cache.entries()
              if hasattr(e.program, "lib")]
    assert len(native) == 2, native
    print(sum(st.cache_hits.values()), sum(st.cache_misses.values()), sum(native))
""")

# the cache directory is full: every atomic rename into it fails with ENOSPC
FULL = textwrap.dedent("""
    import errno, os
    _replace, _root = os.replace, os.environ["MINISPORE_CACHE_DIR"]
    def replace(src, dst, *a, **k):
        if str(dst).startswith(_root):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return _replace(src, dst, *a, **k)
    os.replace = replace
""")


def _run(cache, prelude="", env=None, where=None):
    """(numba cache hits, misses, native objects loaded from disk, warning lines) of SCRIPT, run
    from a file beside `cache` (graph mode reads the source of the functions it compiles)."""
    script = (where or cache.parent) / "fault_script.py"
    script.write_text(prelude + SCRIPT)
    out = subprocess.run([sys.executable, str(script)], env=_env(cache, env),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"rc={out.returncode}\n{out.stderr[-3000:]}"
    hits, misses, loaded = (int(v) for v in out.stdout.split())
    warns = [ln for ln in out.stderr.splitlines() if "KernelCacheWarning" in ln]
    return hits, misses, loaded, warns


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory):
    """A cache SCRIPT has filled once (generated modules, numba's files, native objects), for
    the tests that damage a full cache: each copies it rather than filling its own in a
    subprocess of its own (the copy keeps the files' times: numba's index holds its source's)."""
    cache = tmp_path_factory.mktemp("filled") / "cache"
    _run(cache)
    return cache


def _filled(tmp_path, filled_cache):
    """tmp_path/cache: a copy of the filled cache, SCRIPT beside it as _run writes it."""
    cache = tmp_path / "cache"
    shutil.copytree(filled_cache, cache, symlinks=True)
    return cache


def _files(root, pattern):
    found = sorted(root.rglob(pattern))
    assert found, f"no {pattern} under {root}"
    return found


def _rebuilt_then_clean(cache, n_bad, what):
    """After the fault: this run rebuilds with one warning per bad entry, the next one is clean
    and loads everything from disk."""
    hits, misses, loaded, warns = _run(cache)
    assert len(warns) == n_bad, warns
    assert all(what in w for w in warns), warns
    hits, misses, loaded, warns = _run(cache)
    assert warns == [] and misses == 0 and hits >= 1 and loaded == 2


def test_a_flipped_byte_in_numba_machine_code_is_rebuilt_not_run(tmp_path, filled_cache):
    tmp_path = _filled(tmp_path, filled_cache)
    nbc = _files(tmp_path / "cpu_kernels", "*.nbc")
    for p in nbc:
        blob = bytearray(p.read_bytes())
        blob[len(blob) * 2 // 3] ^= 0x5A
        p.write_bytes(bytes(blob))
    _rebuilt_then_clean(tmp_path, len(nbc), "content hash")


@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
def test_a_truncated_numba_cache_file_is_rebuilt(tmp_path, suffix, filled_cache):
    tmp_path = _filled(tmp_path, filled_cache)
    files = _files(tmp_path / "cpu_kernels", f"*{suffix}")
    for p in files:
        p.write_bytes(p.read_bytes()[:40])
    _rebuilt_then_clean(tmp_path, len(files), "truncated")


def test_a_truncated_pyc_beside_a_generated_module_is_never_read(tmp_path, filled_cache):
    tmp_path = _filled(tmp_path, filled_cache)
    for py in _files(tmp_path / "cpu_kernels", "_minispore_k_*.py"):
        pyc = importlib.util.cache_from_source(str(py))
        if not os.path.exists(pyc):
            py_compile.compile(str(py), cfile=pyc)
        with open(pyc, "rb") as fh:
            head = fh.read(40)
        with open(pyc, "wb") as fh:
            fh.write(head)                            # header intact, code object cut short
    hits, misses, loaded, warns = _run(tmp_path)
    assert warns == [] and misses == 0 and hits >= 1


def test_a_generated_module_that_is_not_utf8_is_rewritten(tmp_path, filled_cache):
    tmp_path = _filled(tmp_path, filled_cache)
    mods = _files(tmp_path / "cpu_kernels", "_minispore_k_mul_*.py")
    for p in mods:
        p.write_bytes(b"\xff\xfe\x00 not a kernel \x80\n")
    hits, misses, loaded, warns = _run(tmp_path)
    assert len(warns) == len(mods) and all("does not hold the source" in w for w in warns)
    assert all(p.read_text().startswith("# generated by minispore") for p in mods)


def test_a_flipped_byte_in_a_native_object_is_rebuilt_not_run(tmp_path, filled_cache):
    tmp_path = _filled(tmp_path, filled_cache)
    objs = _files(tmp_path / "native", "*.o")
    for p in objs:
        blob = bytearray(p.read_bytes())
        blob[len(blob) * 2 // 3] ^= 0x5A             # inside the machine code, past the seal
        p.write_bytes(bytes(blob))
    _rebuilt_then_clean(tmp_path, len(objs), "content hash")


@pytest.mark.parametrize("keep", [8, 60])
def test_a_truncated_native_object_is_rebuilt(tmp_path, keep, filled_cache):
    """Cut inside the header (8 bytes) and inside the digests (60 bytes)."""
    tmp_path = _filled(tmp_path, filled_cache)
    objs = _files(tmp_path / "native", "*.o")
    for p in objs:
        p.write_bytes(p.read_bytes()[:keep])
    _rebuilt_then_clean(tmp_path, len(objs), "truncated")


def test_a_native_object_under_another_key_is_rebuilt_not_run(tmp_path, filled_cache):
    tmp_path = _filled(tmp_path, filled_cache)
    a, b = _files(tmp_path / "native", "*.o")[:2]     # (glue and kernel objects)
    blob_a, blob_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(blob_b)                             # each intact, each under the other's key
    b.write_bytes(blob_a)
    _rebuilt_then_clean(tmp_path, 2, "another key")


def test_cache_entries_that_are_directories_are_replaced(tmp_path, filled_cache):
    tmp_path = _filled(tmp_path, filled_cache)
    entries = [p for pat in ("_minispore_k_*.py", "*.nbi", "*.nbc", "*.o")
               for p in _files(tmp_path, pat)]
    for p in entries:
        p.unlink()
        (p / "inner").mkdir(parents=True)
    hits, misses, loaded, warns = _run(tmp_path)
    # an index that is a directory sends numba to compile without reading its data files: those
    # are replaced silently when the new ones are written
    assert warns and all("cannot be read" in w for w in warns), warns
    assert all(p.is_file() for p in entries)
    hits, misses, loaded, warns = _run(tmp_path)
    assert warns == [] and misses == 0 and loaded == 2


def test_a_cache_directory_that_cannot_be_created_compiles_in_memory(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    hits, misses, loaded, warns = _run(blocker / "cache", where=tmp_path)
    assert len(warns) == 1 and "cannot write" in warns[0] and "compiling in memory" in warns[0]
    assert loaded == 0


def test_a_full_cache_directory_compiles_in_memory(tmp_path):
    tmp_path = tmp_path / "cache"
    hits, misses, loaded, warns = _run(tmp_path, prelude=FULL)
    assert len(warns) == 1 and "No space left" in warns[0], warns
    assert not list(tmp_path.rglob("*.nbc")) and not list(tmp_path.rglob("*.o"))
    hits, misses, loaded, warns = _run(tmp_path)          # space again: the cache fills
    assert warns == [] and loaded == 0
    hits, misses, loaded, warns = _run(tmp_path)
    assert warns == [] and misses == 0 and loaded == 2


def test_numba_cache_files_of_the_package_kernels_are_verified(tmp_path):
    """The backend's own numba kernels (the conv kernels of windows.py & co., which conv2d runs
    when native programs are off) cache beside their source or in NUMBA_CACHE_DIR: their .nbc
    files are sealed too."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba"), "MINISPORE_NATIVE_SINK": "0"}
    script = ("import numpy as np, minispore as ms\nfrom minispore import ops\n"
              "x = ms.Tensor(np.ones((1, 1, 4, 4), np.float32))\n"
              "w = ms.Tensor(np.ones((1, 1, 3, 3), np.float32))\n"
              "y = ops.conv2d(x, w).asnumpy()\n"
              "assert y.tolist() == [[[[9.0, 9.0], [9.0, 9.0]]]], y\n")

    def run():
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env=_env(tmp_path, env),
                             timeout=600)
        assert out.returncode == 0, f"rc={out.returncode}\n{out.stderr[-3000:]}"
        return [ln for ln in out.stderr.splitlines() if "KernelCacheWarning" in ln]
    run()
    nbc = [p for p in _files(tmp_path / "numba", "*.nbc") if "_minispore_k_" not in p.name]
    assert nbc, "conv2d ran no cached package kernel"
    for p in nbc:
        blob = bytearray(p.read_bytes())
        blob[len(blob) // 2] ^= 0xFF
        p.write_bytes(bytes(blob))
    warns = run()
    assert len(warns) == len(nbc) and all("content hash" in w for w in warns), warns


def test_numbas_own_reader_ignores_a_sealed_index(tmp_path, filled_cache):
    """A process whose numba reads the cache unsealed (an older minispore sharing it) takes a
    sealed index for another numba version's and compiles, rather than failing on it."""
    from numba.core.caching import IndexDataCacheFile
    tmp_path = _filled(tmp_path, filled_cache)
    for nbi in _files(tmp_path / "cpu_kernels", "*.nbi"):
        plain = IndexDataCacheFile(str(nbi.parent), nbi.name[:-len(".nbi")], b"stamp")
        assert plain._load_index() == {}
