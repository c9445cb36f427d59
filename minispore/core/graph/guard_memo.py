"""A call site's guard snapshots, recomputed only for the locations whose value changed.

Every call of a compiled function reads the snapshot of each location its graphs depend on
(guards.py) to find its cache key: a training step's TrainOneStepCell guards ~90 attributes (every
setting of the built-in Cells), which cost ~100 us a call, half the step of a small MLP. Most of
those values never change between calls, and a snapshot of most values is fixed for as long as the
value is the same object:

- SAME: an immutable value (a number, a string, None, a bool), whose snapshot is by value, or a
  tuple (a ParameterTuple too) of such values and of objects snapshotted by identity, which keeps
  them alive: the same object gives the same snapshot. The memo holds it; a tuple held so keeps
  its items (Parameters, say) alive until the value changes or the call site's guards are
  dropped, which happens when the Cell the site is keyed on dies (cache.py).
- WEAK: an object snapshotted by identity (a Cell, a Parameter, a function, any plain object):
  the same live object gives the same snapshot. The memo holds it weakly, so a snapshot still
  never keeps a Cell or its Parameters alive, and a dead one's id cannot be mistaken for a new
  object's.
- every other value (a Tensor, whose buffer a write rebinds; a numpy array, a list, a dict, a
  set, a bound method, anything weakref cannot hold) is snapshotted again on every call.

`Guards` is the list of Locations of one call site (cache.set_guards stores one); `snapshots(fn)`
reads the values (the attributes of one object in one `operator.attrgetter` call), and
recomputes the snapshot of a location only where its value is not the one the memo holds. When
nothing changed it returns the same tuple object as the call before, whose hash is kept, so the
cache lookup that follows compares by identity. Where reading an object's attributes raises (a
missing one, a property), or the object died, its locations' own `snap` is called. The result always equals
`tuple(loc.snap(fn) for loc in locations)`.
"""
from __future__ import annotations

import operator
import weakref

from .guards import _KINDS, _MAX_DEPTH, MAX_ITEMS, MISSING, AttrLoc, _kind

_SAME, _WEAK, _AGAIN = 0, 1, 2
_NONE = object()            # the held value of an _AGAIN entry (never a value's identity)


class Snapshots(tuple):
    """A tuple of snapshots that computes its hash once (the key of every call of a site)."""

    def __hash__(self):
        h = self.__dict__.get("h")
        if h is None:
            h = self.__dict__["h"] = tuple.__hash__(self)
        return h


def _mode(v, depth: int = 0) -> int:
    if v is True or v is False or v is None or v is MISSING:
        return _SAME
    k = _KINDS.get(type(v)) or _kind(type(v))
    if k == "const" or k == "float":
        return _SAME
    if k == "ident" or k == "param":
        return _WEAK
    if k == "seq" and isinstance(v, tuple) and type(v).__iter__ is tuple.__iter__ and \
            len(v) <= MAX_ITEMS and depth < _MAX_DEPTH and all(_mode(x, depth + 1) != _AGAIN for x in v):
        return _SAME        # its items cannot change, and it keeps them alive
    return _AGAIN


class Guards(list):
    """The Locations of one call site, with the memo of their last values and snapshots."""

    def snapshots(self, fn) -> tuple:
        memo = self.__dict__.get("memo")
        if memo is None:
            memo = self.__dict__["memo"] = _Memo(self)
        return memo.snapshots(self, fn)


class _Memo:
    __slots__ = ("groups", "others", "modes", "held", "snaps")

    def __init__(self, locs: list):
        groups: dict = {}
        self.others = []
        for j, loc in enumerate(locs):
            owner = loc.obj.get() if type(loc) is AttrLoc else None
            if owner is None:
                self.others.append(j)
                continue
            g = groups.get(id(owner))
            if g is None:
                g = groups[id(owner)] = (loc.obj, [], [])
            g[1].append(loc.name)
            g[2].append(j)
        self.groups = [(ident, operator.attrgetter(*names), len(names) == 1, tuple(js))
                       for ident, names, js in groups.values()]
        self.snaps = None

    def _hold(self, j: int, v) -> None:
        mode = _mode(v)
        if mode == _WEAK:
            try:
                v = weakref.ref(v)
            except TypeError:
                mode, v = _AGAIN, _NONE
        elif mode == _AGAIN:
            v = _NONE
        self.modes[j], self.held[j] = mode, v

    def fresh(self, locs, fn) -> tuple:
        """Every snapshot computed; the values held first (a value changed in between is then
        not the held one, and is snapshotted again at the next call)."""
        n = len(locs)
        self.modes, self.held = [_AGAIN] * n, [_NONE] * n
        for ident, get, single, js in self.groups:
            owner = ident.get()
            if owner is None:
                continue
            try:
                vals = get(owner)
            except Exception:       # noqa: BLE001 - its locations' snap reads MISSING
                continue
            for j, v in zip(js, (vals,) if single else vals):
                self._hold(j, v)
        snaps = self.snaps = Snapshots(loc.snap(fn) for loc in locs)
        return snaps

    def snapshots(self, locs, fn) -> tuple:
        snaps = self.snaps
        if snaps is None:
            return self.fresh(locs, fn)
        modes, held = self.modes, self.held
        changed = None
        for ident, get, single, js in self.groups:
            owner = ident.get()
            try:
                vals = get(owner) if owner is not None else _NONE
            except Exception:           # noqa: BLE001 - a missing attribute, a raising property
                vals = _NONE
            if vals is _NONE:           # each location's own snap says what it reads now
                for j in js:
                    modes[j], held[j] = _AGAIN, _NONE
                    snap = locs[j].snap(fn)
                    if snap != snaps[j]:
                        changed = changed or {}
                        changed[j] = snap
                continue
            if single:
                vals = (vals,)
            for j, v in zip(js, vals):
                m = modes[j]
                if held[j] is v if m == _SAME else (m == _WEAK and v is not None and
                                                       held[j]() is v):
                    continue
                self._hold(j, v)
                snap = locs[j].snap(fn)
                if snap != snaps[j]:
                    changed = changed or {}
                    changed[j] = snap
        for j in self.others:
            snap = locs[j].snap(fn)
            if snap != snaps[j]:
                changed = changed or {}
                changed[j] = snap
        if changed:
            new = list(snaps)
            for j, snap in changed.items():
                new[j] = snap
            snaps = self.snaps = Snapshots(new)
        return snaps
