"""The CPU backend's on-disk compile caches: where they live and when an entry is trusted.

Three caches, all rebuilt from what the process already has when an entry is not trusted:
- generated numba modules, <MINISPORE_CACHE_DIR>/cpu_kernels/*.py (codegen.module_for): an entry
  is used only when its bytes equal the source it is named for; it is compiled from that source
  in memory, so no .pyc is ever read;
- numba's machine code of every minispore function compiled with cache=True (.nbi index and
  .nbc data files, in the __pycache__ beside the source or numba's cache directory): `patch_dispatcher`
  gives those functions VerifiedFunctionCache, numba's FunctionCache whose files are sealed.
  numba's own files are unverified pickles: a flipped byte in an .nbc is loaded as machine code
  and crashes every later process, a truncated one raises in every later process;
- the native sink's object files, <MINISPORE_CACHE_DIR>/native/*.o (native_jit): sealed entries
  of `load_or_build`, named by the hash of their key (the IR and the target).

A sealed entry is MAGIC, the SHA-256 of the key it was written under, the SHA-256 of its payload,
the payload (a numba index has a pickled marker string before it: _INDEX_HEAD). `unseal` checks
all three before the payload is used (unpickled, loaded as code), so
a flipped byte, a truncation or an entry copied under another key's name is rebuilt, never run.
An entry that is a directory or cannot be read is removed and rebuilt. Each bad entry is rebuilt
with a one-line KernelCacheWarning; an entry in a format this code never writes (numba's own, an
older minispore's) is rebuilt silently. Writes are atomic (a temporary file, then os.replace), and
a numba index is extended under a lock on its directory (processes sharing the cache). A
cache directory that cannot be written (read-only, full, not a directory) never makes an op fail:
the code is compiled in memory and one KernelCacheWarning per process says so.
"""
from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import pickle
import shutil
import threading
import warnings
from pathlib import Path

MAGIC = b"MINISPORE-CACHE-1\n"
_DIGEST = 32                                   # bytes of a SHA-256
_PICKLE = (b"\x80",)                           # numba's own .nbi/.nbc files start with a pickle
# a sealed numba index starts with a pickled string where numba's starts with its version: numba's
# own reader (a process of an older minispore sharing the cache) takes it for another numba
# version's index and ignores it instead of failing on the sealed bytes
_INDEX_HEAD = pickle.dumps("minispore-sealed-index", protocol=4)
_warned: set = set()


class KernelCacheWarning(UserWarning):
    """A compile-cache entry was bad (it is rebuilt) or the cache directory cannot be written
    (the code is compiled in memory). A category of its own, not a RuntimeWarning: it is news
    about the machine's cache, not about the program, so code that watches RuntimeWarnings for a
    graph that did not sink (the O2 fallback) is not disturbed by a stale cache entry."""


def cache_root() -> Path:
    """MINISPORE_CACHE_DIR, default ~/.cache/minispore."""
    return Path(os.environ.get("MINISPORE_CACHE_DIR", Path.home() / ".cache" / "minispore"))


def _warn(once_key, message: str) -> None:
    if once_key not in _warned:
        _warned.add(once_key)
        warnings.warn(message, KernelCacheWarning, stacklevel=4)


def warn_bad(path, why: str) -> None:
    """One warning per bad entry and process: `path` `why`, and that it is rebuilt."""
    _warn(("bad", str(path)), f"minispore compile cache: {path} {why}; rebuilding it")


def warn_unwritable(where, err) -> None:
    """One warning per process: the cache cannot be written, code is compiled in memory."""
    _warn("unwritable", f"minispore compile cache: cannot write {where} ({err}); compiling in "
          "memory (set MINISPORE_CACHE_DIR to a writable directory to keep compiled code)")


def remove_entry(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError:
        pass


def read_entry(path: Path) -> bytes | None:
    """The bytes of cache entry `path`, None when there is none. An entry that is a directory or
    cannot be read is removed (with a warning) so that the rebuilt one can take its place."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):    # no entry (or no cache directory)
        return None
    except OSError as e:                       # IsADirectoryError, PermissionError, EIO
        warn_bad(path, f"cannot be read ({e.strerror or e})")
        remove_entry(path)
        return None


def write_entry(path: Path, data: bytes) -> bool:
    """Write `data` to `path` atomically: a concurrent reader sees the old entry or the new one,
    never half of one. False (and one warning per process) when the directory cannot be written:
    the caller goes on with what it holds in memory."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return True
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        warn_unwritable(path.parent, e.strerror or e)
        return False


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def seal(key: str, payload: bytes) -> bytes:
    """A cache entry holding `payload`, bound to `key` and to its own content."""
    return MAGIC + _sha(key.encode()) + _sha(payload) + payload


def unseal(blob: bytes, key: str, path, legacy: tuple = ()) -> bytes | None:
    """The payload of sealed `blob` when it was written under `key` and is intact, else None
    (with a warning naming what is wrong; silent for a blob starting with one of `legacy`, a
    format this code does not write)."""
    head = len(MAGIC) + 2 * _DIGEST
    if not blob.startswith(MAGIC):
        if MAGIC.startswith(blob):
            warn_bad(path, "is truncated")
        elif not (legacy and blob.startswith(legacy)):
            warn_bad(path, "is not a minispore cache entry (bad header)")
        return None
    if len(blob) < head:
        warn_bad(path, "is truncated")
        return None
    if blob[len(MAGIC):len(MAGIC) + _DIGEST] != _sha(key.encode()):
        warn_bad(path, "was written under another key")
        return None
    payload = blob[head:]
    if _sha(payload) != blob[len(MAGIC) + _DIGEST:head]:
        warn_bad(path, "is corrupt (its content hash does not match)")
        return None
    return payload


def entry_path(subdir: str, key: str, suffix: str = "") -> Path:
    """The file of the sealed entry for `key` under <MINISPORE_CACHE_DIR>/<subdir>/: named by the
    hash of the key, so each key has one entry."""
    return cache_root() / subdir / f"{hashlib.sha1(key.encode()).hexdigest()[:24]}{suffix}"


def load(subdir: str, key: str, suffix: str = "", legacy: tuple = ()) -> bytes | None:
    """The payload of the sealed entry for `key` when it unseals (intact, written under `key`),
    else None (a damaged entry is warned about by unseal)."""
    path = entry_path(subdir, key, suffix)
    blob = read_entry(path)
    return None if blob is None else unseal(blob, key, path, legacy)


def store(subdir: str, key: str, payload: bytes, suffix: str = "") -> None:
    """Write the entry for `key`, sealed (atomically; nothing when the cache cannot be
    written)."""
    write_entry(entry_path(subdir, key, suffix), seal(key, payload))


def load_or_build(subdir: str, key: str, build, suffix: str = "",
                  legacy: tuple = ()) -> tuple[bytes, bool]:
    """(payload, whether it came from the disk cache) of the entry for `key`: the sealed entry
    at entry_path when it unseals, else `build()`'s bytes, written there sealed (kept in memory
    only when the cache cannot be written). An entry starting with one of `legacy` (a format
    this code does not write) is rebuilt silently."""
    payload = load(subdir, key, suffix, legacy)
    if payload is not None:
        return payload, True
    payload = build()
    store(subdir, key, payload, suffix)
    return payload, False


# ------------------------------------------------------------ numba's cache files, sealed ---------
_LOCK_NAME = ".minispore-index.lock"


@contextlib.contextmanager
def _directory_lock(directory):
    """An exclusive advisory lock (flock) on `directory`'s lock file while the block runs, so
    that processes sharing a cache (parallel test workers, several ranks) update a numba index
    one at a time. Where there is no flock (Windows) or the lock file cannot be opened (the
    directory cannot be written: the write then warns), the block runs unlocked."""
    try:
        import fcntl
        fd = os.open(os.path.join(directory, _LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                           # closing the descriptor releases the lock


def _numba_classes():
    from numba.core.caching import FunctionCache, IndexDataCacheFile

    class VerifiedCacheFile(IndexDataCacheFile):
        """numba's index/data cache files, sealed: the index is bound to its file name, a data
        file to its name and holds the overload key it was written for (compared with numba's
        equality, as the index lookup does), so a data file of another signature is not run."""

        def _index_key(self):
            return f"numba-index|{self._index_name}"

        def _load_index(self):
            path = Path(self._index_path)
            blob = read_entry(path)
            if blob is None:
                return {}
            if blob.startswith(_INDEX_HEAD):
                payload = unseal(blob[len(_INDEX_HEAD):], self._index_key(), path)
            elif _INDEX_HEAD.startswith(blob):
                payload = None
                warn_bad(path, "is truncated")
            elif MAGIC in blob[:len(_INDEX_HEAD) + len(MAGIC)] or not blob.startswith(_PICKLE):
                payload = None
                warn_bad(path, "is not a minispore cache entry (bad header)")
            else:
                payload = None                  # numba's own index: rebuilt silently
            if payload is None:
                return {}
            try:
                version, stamp, overloads = pickle.loads(payload)
            except Exception as e:             # intact bytes numba cannot read back
                warn_bad(path, f"cannot be unpickled ({type(e).__name__})")
                return {}
            if version != self._version or stamp != self._source_stamp:
                return {}                      # another numba, or the source changed: stale
            return overloads

        def _save_index(self, overloads) -> bool:
            payload = self._dump((self._version, self._source_stamp, overloads))
            return write_entry(Path(self._index_path),
                               _INDEX_HEAD + seal(self._index_key(), payload))

        def save(self, key, data):
            # read, extend and write the index under the directory's lock: two processes saving
            # two signatures of one function at once would otherwise pick the same data file
            # name (one's machine code under the other's key) and the later index would drop
            # the earlier entry
            with _directory_lock(self._cache_path):
                overloads = self._load_index()
                name = overloads.get(key)
                if name is None:
                    used = set(overloads.values())
                    name = next(n for n in map(self._data_name, itertools.count(1))
                                if n not in used)
                    overloads[key] = name
                blob = seal(f"numba-data|{name}", self._dump((key, data)))
                if write_entry(Path(self._data_path(name)), blob):
                    self._save_index(overloads)    # the index names only data already written

        def load(self, key):
            name = self._load_index().get(key)
            if name is None:
                return None
            path = Path(self._data_path(name))
            blob = read_entry(path)
            payload = None if blob is None else unseal(blob, f"numba-data|{name}", path, _PICKLE)
            if payload is None:
                return None
            try:
                stored_key, data = pickle.loads(payload)
            except Exception as e:
                warn_bad(path, f"cannot be unpickled ({type(e).__name__})")
                return None
            if stored_key != key:
                warn_bad(path, "holds the machine code of another signature")
                return None
            return data

    class VerifiedFunctionCache(FunctionCache):
        """numba's FunctionCache with VerifiedCacheFile; a cache directory it cannot write makes
        it warn once and keep the compiled code in memory (numba's would raise)."""

        def __init__(self, py_func):
            super().__init__(py_func)
            self._cache_file = VerifiedCacheFile(
                cache_path=self._cache_path, filename_base=self._impl.filename_base,
                source_stamp=self._impl.locator.get_source_stamp())

        def save_overload(self, sig, data):
            try:
                super().save_overload(sig, data)
            except OSError as e:
                warn_unwritable(self._cache_path, e.strerror or e)

    return VerifiedCacheFile, VerifiedFunctionCache


def _is_minispore(py_func) -> bool:
    mod = getattr(py_func, "__module__", None) or ""
    return mod.startswith(("minispore.", "_minispore_k_"))


def patch_dispatcher(Dispatcher) -> None:
    """Make every minispore function compiled with numba's cache=True cache through
    VerifiedFunctionCache (other code's numba functions keep numba's cache). Applied by
    numba_setup.py to numba's Dispatcher class as soon as numba's dispatcher module has run,
    before any module can define a numba function."""
    if getattr(Dispatcher.enable_caching, "minispore_verified", False):
        return
    original = Dispatcher.enable_caching
    _, verified = _numba_classes()

    def enable_caching(self):
        if not _is_minispore(self.py_func):
            return original(self)
        try:
            self._cache = verified(self.py_func)
        except (RuntimeError, OSError) as e:  # numba found no writable cache directory
            if not self.py_func.__code__.co_filename.startswith("<"):
                warn_unwritable(self.py_func.__code__.co_filename, e)
            # a kernel compiled in memory (its module could not be written) was warned about
    enable_caching.minispore_verified = True
    Dispatcher.enable_caching = enable_caching
