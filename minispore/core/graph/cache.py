"""The compile cache of graph calls (compile.py builds the entries): its keys, its size bound,
forgetting entries whose objects die, and the warning for a function that keeps recompiling.

A key is `(function, id(Cell) or None, input signature, context options, snapshots)`:

- the function is named by its code object and globals (`fn_id`), not by the function object,
  so a fresh `lambda` or `ms.grad(lambda ...)` built in a loop finds the graph compiled for an
  earlier one when its captured values and defaults are equal (they are part of the snapshots);
- the snapshots (guards.py) picture every Python value the graph read while it was built (`self.`
  attributes, globals, closure cells, defaults, the `training` flags of the Cells it called), in
  the order `_guards[base]` lists their locations for the call site `base` (the key without
  snapshots): a change of any of them compiles a new graph, as a new input shape does.

The cache keeps the `cache_size()` most recently used entries (an LRU, as JAX's and PyTorch's
compile caches are bounded): environment variable MINISPORE_COMPILE_CACHE_SIZE, default 1024;
0 or less means unbounded. A call site (function and Cell) that compiles more than
`recompile_limit()` times warns once (PyTorch's recompile limit, default 8, likewise):
MINISPORE_RECOMPILE_LIMIT, default 8; 0 or less never warns.
"""
from __future__ import annotations

import os
import types
import warnings
import weakref
from collections import OrderedDict

DEFAULT_CACHE_SIZE = 1024
DEFAULT_RECOMPILE_LIMIT = 8

_cache: OrderedDict = OrderedDict()   # key -> Compiled, least recently used first
# call site (key without snapshots) -> the Locations (guards.py) whose snapshots complete its keys
_guards: dict = {}
_by_object: dict = {}                 # id(object) -> cache keys that name it by identity
_objects_of: dict = {}                # cache key -> ids of the objects it names (for eviction)
_compiles_of: dict = {}               # (function id, Cell id) -> [compiles, last key, warned]
_held: dict = {}                      # cache key -> the objects it names that die with it only
# A death is seen by a weakref finalizer, which may run inside any allocation (a garbage
# collection), even while this module iterates its tables: then (`_busy`) the finalizer only
# notes the id in `_dead`, and the next operation drops its entries before anything else
_dead: list = []
_busy = [0]


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not an integer; set it to a "
                         f"whole number (default {default})") from None


def cache_size() -> int:
    """How many compiled graphs the cache keeps (MINISPORE_COMPILE_CACHE_SIZE, default 1024;
    0 or less: no bound)."""
    return _env_int("MINISPORE_COMPILE_CACHE_SIZE", DEFAULT_CACHE_SIZE)


def recompile_limit() -> int:
    """After how many compiles of one call site the recompile warning shows
    (MINISPORE_RECOMPILE_LIMIT, default 8; 0 or less: never)."""
    return _env_int("MINISPORE_RECOMPILE_LIMIT", DEFAULT_RECOMPILE_LIMIT)


def fn_id(fn, objs: list):
    """The function part of a key: a Python function by its code and globals (its closure and
    defaults are guarded by value, guards.root_locations); any other callable by identity (it is
    appended to `objs`, so its entries go when it dies)."""
    if isinstance(fn, types.FunctionType):
        return ("F", fn.__code__, id(fn.__globals__))
    objs.append(fn)
    return ("O", type(fn).__name__, id(fn))


def _settle() -> None:
    """Drop the entries of the objects that died while the tables were busy (`_dead`), before
    any lookup: a new object at a dead one's id must not find its graphs."""
    while _dead:
        _forget(_dead.pop())


def _on_death(oid: int) -> None:
    if _busy[0]:
        _dead.append(oid)
    else:
        _forget(oid)


def guards_of(base):
    """The Locations whose snapshots complete the keys of call site `base` (None before its
    first compile)."""
    _settle()
    return _guards.get(base)


def set_guards(base, locations) -> None:
    from .guard_memo import Guards
    _guards[base] = Guards(locations)


def entries() -> list:
    """The cached Compiled entries, least recently used first."""
    _settle()
    return list(_cache.values())


def items() -> list:
    """(key, Compiled entry) of every cached graph, least recently used first."""
    _settle()
    return list(_cache.items())


def get(key):
    """The entry for `key` (now the most recently used), or None."""
    if _dead:
        _settle()
    entry = _cache.get(key)
    if entry is not None:
        _cache.move_to_end(key)
    return entry


def put(key, entry, objs) -> None:
    """Store `entry`; it is dropped when one of `objs` (the objects its key names by id) dies,
    or when it is the least recently used and the cache is full."""
    _settle()
    _busy[0] += 1
    try:
        _store(key, entry, objs)
    finally:
        _busy[0] -= 1
    _settle()


def _store(key, entry, objs) -> None:
    _cache[key] = entry
    _cache.move_to_end(key)
    for o in objs:
        _forget_when_gone(o, key)
    limit = cache_size()
    while limit > 0 and len(_cache) > limit:
        old, _ = _cache.popitem(last=False)
        _held.pop(old, None)
        for oid in _objects_of.pop(old, ()):
            keys = _by_object.get(oid)
            if keys is not None:
                keys.discard(old)
    if 0 < limit < len(_guards) // 2:      # call sites none of whose graphs are left
        live = {k[:4] for k in _cache}
        for base in [b for b in _guards if b not in live]:
            del _guards[base]


def _forget_when_gone(obj, key) -> None:
    """Drop `key` when `obj` (a Cell, or another object compared by identity) dies: a compiled
    graph holds the Cell's Parameters, so it would keep their memory (device memory included)
    alive, and a new object at the same id must not find it."""
    oid = id(obj)
    keys = _by_object.get(oid)
    if keys is None:
        try:
            weakref.finalize(obj, _on_death, oid)
        except TypeError:
            # not weak-referenceable (a list, a dict): the key holds it, so its id stays its own
            _held.setdefault(key, {})[oid] = obj
            return
        keys = _by_object[oid] = set()
    keys.add(key)
    _objects_of.setdefault(key, set()).add(oid)


def _forget(oid: int) -> None:
    _busy[0] += 1
    try:
        _drop_entries_of(oid)
    finally:
        _busy[0] -= 1
    if not _busy[0]:
        _settle()         # the objects that died with the dropped entries


def _drop_entries_of(oid: int) -> None:
    for k in _by_object.pop(oid, ()):
        _cache.pop(k, None)
        _objects_of.pop(k, None)
        _held.pop(k, None)
    for k in [k for k in _guards if k[1] == oid]:
        del _guards[k]
    for k in [k for k in _compiles_of if k[1] == oid]:
        del _compiles_of[k]


def note_compile(site, key, name: str, locations) -> None:
    """Count a compile of call site `site` (function id, Cell id); past the recompile limit,
    warn once, saying what changed since its previous compile."""
    rec = _compiles_of.get(site)
    if rec is None:
        rec = _compiles_of[site] = [0, None, False]
    rec[0] += 1
    previous, rec[1] = rec[1], key
    limit = recompile_limit()
    if rec[2] or limit <= 0 or rec[0] <= limit:
        return
    rec[2] = True
    warnings.warn(
        f"graph '{name}' has been compiled {rec[0]} times (more than "
        f"MINISPORE_RECOMPILE_LIMIT={limit}): {_what_changed(previous, key, locations)}. Each "
        f"new value compiles and caches a new graph. Pass values that change between calls as "
        f"Tensor inputs, keep input shapes fixed, or raise MINISPORE_RECOMPILE_LIMIT if this is "
        f"intended.", UserWarning, stacklevel=user_stacklevel())


def user_stacklevel() -> int:
    """The warnings.warn stacklevel of the innermost caller outside minispore (the user's line
    that made the call)."""
    import sys
    f, level = sys._getframe(1), 1
    while f is not None and (f.f_globals.get("__name__") or "").startswith("minispore."):
        f, level = f.f_back, level + 1
    return level


def _what_changed(previous, key, locations) -> str:
    if previous is None:
        return "its cache key changed"
    if previous[2] != key[2]:
        return "the input shapes, dtypes or Python-value arguments changed"
    if previous[3] != key[3]:
        return "the context options (device, jit_level...) changed"
    if previous[:4] == key[:4] and len(previous) > 4 and len(key) > 4:
        old, new = previous[4], key[4]
        names = [loc.describe() for loc, a, b in zip(locations, old, new) if a != b]
        if names:
            return "a Python value it reads changed: " + ", ".join(names[:3])
    return "its cache key changed"


def clear() -> None:
    _dead.clear()
    _cache.clear()
    _guards.clear()
    _by_object.clear()
    _objects_of.clear()
    _compiles_of.clear()
    _held.clear()
