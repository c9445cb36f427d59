"""The Python values a compiled graph depends on, as part of its compile-cache key.

The parser computes Python values at compile time: a `self.` attribute, a global, a closure
variable or a default argument becomes a constant of the graph. So that a later change compiles
a new graph (as a new input shape does) instead of silently running the old one, compile.py keys
its cache on a *snapshot* of every such value:

- `Location`s say where a value lives: an attribute of an object (`AttrLoc`), a module global
  (`GlobalLoc`), a closure cell of a function (`ClosureLoc`), or a path from the called function
  itself (`RootLoc`: its closure cells and defaults, followed into the functions they hold, so a
  fresh lambda with the same code and equal captured values finds the same graph).
- `snapshot(value)` is a hashable picture of a value: numbers, strings and containers of them by
  value; a Tensor by its identity and its buffer's (a Tensor rebinds its buffer when written, so
  `t[0] = 1` changes the snapshot); a small numpy array by its bytes; every other object by
  identity: its id(), which stays unique because a stored key naming an object is dropped when
  the object dies (compile.py, cache.py), so a snapshot never keeps a Cell or its Parameters
  alive. Containers of more than `MAX_ITEMS` items, and numpy arrays over `MAX_ARRAY_BYTES`, are
  compared by identity only: changing them in place is not seen.
- `Recorder` collects, while one graph is built, the locations the parser read or wrote, with
  their value when first touched. After the build, a location whose value changed is a Python
  side effect of the graph (`self.n += 1`, a setattr on self, appending to a global list): it
  ran once, while compiling, and the cached graph will not run it again, so a UserWarning naming
  the value and the source line says so (once per line).

Reads by minispore's own code (a built-in Cell's construct runs as Python, not parsed) are not
recorded one by one: compile.py guards the `training` flag of every Cell the graph called and every
attribute of each built-in one (`builtin_cell_locations`: `dropout.p = 0.2` recompiles).
"""
from __future__ import annotations

import sys
import types
import warnings
import weakref

import numpy as np

from ..tensor import Parameter, Tensor

MAX_ITEMS = 256             # containers longer than this are compared by identity
MAX_ARRAY_BYTES = 4096      # numpy arrays larger than this are compared by identity
_MAX_DEPTH = 8              # nesting depth of containers / closures followed
MISSING = ("<missing>",)    # the snapshot of a location that has no value


class Ident:
    """The object a Location reads from, held weakly where it can (a Location never keeps a Cell
    alive): hashable, and equal to another Ident only while both refer to the same live object."""

    __slots__ = ("_ref", "_strong", "_hash")

    def __init__(self, obj):
        self._hash = id(obj)
        try:
            self._ref, self._strong = weakref.ref(obj), None
        except TypeError:
            self._ref, self._strong = None, obj

    def get(self):
        return self._strong if self._ref is None else self._ref()

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, Ident) or other._hash != self._hash:
            return False
        a = self.get()
        return a is not None and a is other.get()


_KINDS: dict = {}            # type -> how snapshot() pictures its values
_ID_TAGS = frozenset({"O", "P", "T", "A", "M", "B"})


def _kind(t) -> str:
    k = _KINDS.get(t)
    if k is not None:
        return k
    if t in (type(None), bool, int, str, bytes, complex, type(Ellipsis)):
        k = "const"
    elif issubclass(t, (float, np.floating)):
        k = "float"
    elif issubclass(t, Parameter):
        k = "param"
    elif issubclass(t, Tensor):
        k = "tensor"
    elif issubclass(t, np.ndarray):
        k = "array"
    elif issubclass(t, (tuple, list)):
        k = "seq"
    elif issubclass(t, dict):
        k = "dict"
    elif issubclass(t, (set, frozenset)):
        k = "set"
    elif t is types.MethodType:
        k = "method"
    elif t in (types.BuiltinMethodType, types.MethodWrapperType):
        k = "builtin"
    elif issubclass(t, (types.FunctionType, type, types.ModuleType)) or \
            t.__hash__ is None or t.__hash__ is object.__hash__:
        k = "ident"
    else:
        k = "hashable"              # a value type: a dtype, an enum, a user's frozen value
    _KINDS[t] = k
    return k


_FLAGS = {True: ("C", bool, True), False: ("C", bool, False), None: ("C", type(None), None)}


def snapshot(v, keep: list | None = None, depth: int = 0):
    """A hashable picture of `v`: equal for two values a graph would compile the same. Objects
    are named by id(); `keep` (when given) collects them, so that compile.py can drop a stored
    key when one dies (no later object can then take its id while the key exists)."""
    if v is True or v is False or v is None:        # the common flags (Cell.training)
        return _FLAGS[v]
    k = _KINDS.get(type(v)) or _kind(type(v))
    if k == "const":
        return ("C", type(v), v)
    if k == "ident":
        if keep is not None:
            keep.append(v)
        return ("O", id(v))
    if k == "float":
        return ("f", type(v), float(v).hex())        # NaN equals NaN, -0.0 differs from 0.0
    if k == "param":                                 # a graph input, bound by reference
        if keep is not None:
            keep.append(v)
        return ("P", id(v))
    if k == "tensor":                # a Tensor rebinds its buffer when written: the buffer's id
        buf = v._buf
        if keep is not None:
            keep.extend((v, buf))
        return ("T", id(v), id(buf))
    if k == "array":
        if keep is not None:
            keep.append(v)
        small = v.nbytes <= MAX_ARRAY_BYTES
        return ("A", id(v), v.shape, v.dtype.str, v.tobytes() if small else None)
    if k == "hashable":
        try:
            hash(v)
            return ("C", type(v), v)
        except TypeError:
            pass
    elif depth < _MAX_DEPTH and (k not in ("seq", "dict", "set") or len(v) <= MAX_ITEMS):
        d = depth + 1
        if k == "seq":
            return (type(v), tuple(snapshot(x, keep, d) for x in v))
        if k == "dict":
            return (type(v), tuple((snapshot(a, keep, d), snapshot(x, keep, d))
                                   for a, x in v.items()))
        if k == "set":
            return (type(v), frozenset(snapshot(x, keep, d) for x in v))
        if k == "method":
            if keep is not None:
                keep.append(v.__func__)
            return ("M", snapshot(v.__self__, keep, d), id(v.__func__))
        if k == "builtin" and not isinstance(getattr(v, "__self__", None), types.ModuleType):
            if keep is not None:
                keep.append(v.__self__)
            return ("B", id(v.__self__), v.__name__)
    if keep is not None:
        keep.append(v)
    return ("O", id(v))


class Location:
    """Where a Python value the graph depends on lives."""

    def value(self, fn):
        """The value now (`fn` is the function being called), or MISSING."""
        raise NotImplementedError

    def snap(self, fn, keep: list | None = None):
        try:
            v = self.value(fn)
        except Exception:               # e.g. a property that raises: no value
            return MISSING
        return MISSING if v is MISSING else snapshot(v, keep)

    def alive(self) -> bool:
        return True


class AttrLoc(Location):
    def __init__(self, obj, name):
        self.obj, self.name = Ident(obj), name
        self.ident = ("attr", self.obj, name)

    def value(self, fn):
        o = self.obj.get()
        return MISSING if o is None else getattr(o, self.name, MISSING)

    def snap(self, fn, keep: list | None = None):     # Location.snap, inlined: the hot path
        o = self.obj.get()
        if o is None:
            return MISSING
        try:
            v = getattr(o, self.name, MISSING)
        except Exception:
            return MISSING
        return MISSING if v is MISSING else snapshot(v, keep)

    def alive(self):
        return self.obj.get() is not None

    def describe(self):
        o = self.obj.get()
        return f"attribute '{self.name}' of {type(o).__name__ if o is not None else 'an object'}"


class GlobalLoc(Location):
    def __init__(self, globals_, name):
        self.globals, self.name = globals_, name
        self.ident = ("global", id(globals_), name)

    def value(self, fn):
        return self.globals.get(self.name, MISSING)

    def describe(self):
        return f"global '{self.name}' of module {self.globals.get('__name__', '?')}"


class ClosureLoc(Location):
    def __init__(self, func, index):
        self.func, self.index = Ident(func), index
        self.name = func.__code__.co_freevars[index]
        self.ident = ("closure", self.func, index)

    def value(self, fn):
        f = self.func.get()
        if f is None:
            return MISSING
        try:
            return f.__closure__[self.index].cell_contents
        except (ValueError, IndexError, TypeError):
            return MISSING

    def alive(self):
        return self.func.get() is not None

    def describe(self):
        f = self.func.get()
        return f"variable '{self.name}' captured by {getattr(f, '__qualname__', 'a function')}"


class RootLoc(Location):
    """A value reached from the called function: `path` is a sequence of ("closure", i),
    ("defaults", i) and ("kwdefaults", name) steps, each taken in the function the previous one
    reached."""

    def __init__(self, path, name):
        self.path, self.name = tuple(path), name
        self.ident = ("root", self.path)

    def value(self, fn):
        v = fn
        for kind, i in self.path:
            if not isinstance(v, types.FunctionType):
                return MISSING
            try:
                if kind == "closure":
                    v = v.__closure__[i].cell_contents
                elif kind == "defaults":
                    v = v.__defaults__[i]
                else:
                    v = v.__kwdefaults__[i]
            except (ValueError, IndexError, TypeError, KeyError):
                return MISSING
        return v

    def snap(self, fn, keep: list | None = None):
        v = self.value(fn)
        if isinstance(v, types.FunctionType):       # followed by its own RootLocs: by code
            return ("F", v.__code__, id(v.__globals__))
        return MISSING if v is MISSING else snapshot(v, keep)

    def describe(self):
        return f"'{self.name}' (captured or defaulted by the compiled function)"


def root_locations(fn) -> tuple[list, set, tuple]:
    """(RootLocs of every closure cell and default of `fn`, followed into the functions they
    hold; the ids of the functions covered this way; their code objects, `fn`'s first)."""
    locs, covered, codes = [], set(), []

    def walk(f, path, depth):
        if not isinstance(f, types.FunctionType) or id(f) in covered or depth > _MAX_DEPTH:
            return
        covered.add(id(f))
        code = f.__code__
        codes.append(code)
        for i, cell in enumerate(f.__closure__ or ()):
            p = path + (("closure", i),)
            locs.append(RootLoc(p, code.co_freevars[i]))
            try:
                walk(cell.cell_contents, p, depth + 1)
            except ValueError:                      # an empty cell
                pass
        for i, d in enumerate(f.__defaults__ or ()):
            p = path + (("defaults", i),)
            locs.append(RootLoc(p, f"default {i} of {f.__qualname__}"))
            walk(d, p, depth + 1)
        for k, d in (f.__kwdefaults__ or {}).items():
            p = path + (("kwdefaults", k),)
            locs.append(RootLoc(p, f"default of {k}"))
            walk(d, p, depth + 1)
    walk(fn, (), 0)
    return locs, covered, tuple(codes)


_LIBRARIES = frozenset(sys.stdlib_module_names) | {"minispore", "mindspore", "numpy"}


def _skip_attr_owner(obj) -> bool:
    """Objects whose attributes need no guard: their own snapshot already covers them (tensors,
    arrays, containers, numbers), or they are library modules (ops.add, np.float32; a user's
    own module, such as a config module, is guarded)."""
    if isinstance(obj, types.ModuleType):
        return (getattr(obj, "__name__", None) or "").split(".")[0] in _LIBRARIES
    return isinstance(obj, (Tensor, np.ndarray, tuple, list, dict, set, frozenset, str, bytes,
                            int, float, complex, type(None)))


def _computed(obj, name) -> bool:
    """Whether `obj.name` is computed by a descriptor of its class (a property), rather than
    stored in the object or a method."""
    for klass in type(obj).__mro__:
        d = klass.__dict__.get(name)
        if d is not None:
            return hasattr(d, "__get__") and not isinstance(
                d, (types.FunctionType, staticmethod, classmethod, types.MemberDescriptorType,
                    types.GetSetDescriptorType))
    return False


def _reads_the_same(obj, name, value) -> bool:
    """Whether reading the property `obj.name` again gives the same picture as `value`."""
    try:
        return snapshot(getattr(obj, name)) == snapshot(value)
    except Exception:
        return False


def _has_identity(snap) -> bool:
    """Whether a snapshot names an object by identity (somewhere inside)."""
    if isinstance(snap, frozenset):
        return any(_has_identity(s) for s in snap)
    if not isinstance(snap, tuple) or not snap:
        return False
    if isinstance(snap[0], str) and snap[0] in _ID_TAGS:
        return True
    return any(_has_identity(s) for s in snap if isinstance(s, (tuple, frozenset)))


class Recorder:
    """The locations one build read or wrote, with their snapshot and source line when first
    touched. `active` is the recorder of the build in progress (the parser reports to it)."""

    active: "Recorder | None" = None

    def __init__(self, covered=(), codes=()):
        self.covered = set(covered)
        self.codes = codes              # the code of the called function and those it holds
        self.touched: dict = {}         # ident -> (location, first snapshot, ir.Loc or None)
        self.fresh: dict = {}           # id -> object made by the build (a Cell in construct)

    def touch_root(self, locs, fn):
        """The called function's closure cells and defaults, as they are before the build."""
        for loc in locs:
            self.touched.setdefault(loc.ident, (loc, loc.snap(fn), None))

    def touch(self, loc, value, where=None):
        if loc.ident not in self.touched:
            self.touched[loc.ident] = (loc, MISSING if value is MISSING else snapshot(value),
                                       where)

    def attribute(self, obj, name, value, frame=None, node=None):
        """`obj.name` read (or about to be written: `value` is then the old value) at `node`."""
        from .builder import is_symbolic
        if _skip_attr_owner(obj) or is_symbolic(value) or id(obj) in self.fresh:
            return
        loc = AttrLoc(obj, name)
        if loc.ident in self.touched:
            return
        if _computed(obj, name) and _has_identity(snapshot(value)) and \
                not _reads_the_same(obj, name, value):
            return                          # a property making a new object on every read
        self.touch(loc, value, _where(frame, node))

    def name(self, frame, name, value, node=None):
        """A name read in `frame` (locals and builtins need no guard)."""
        if name in frame.local:
            return
        fn = frame.fn
        if name in frame.closure:
            if id(fn) in self.covered:      # the called function's own: its RootLocs
                return
            try:
                loc = ClosureLoc(fn, fn.__code__.co_freevars.index(name))
            except (ValueError, AttributeError):
                return
        elif name in frame.globals:
            loc = GlobalLoc(frame.globals, name)
        else:
            return
        if loc.ident not in self.touched:
            self.touch(loc, value, _where(frame, node))

    def locations(self) -> list:
        return [t[0] for t in self.touched.values()]

    def side_effects(self, fn, graph_name):
        """Warn (once per source line) for each touched value that changed while compiling."""
        for loc, before, where in self.touched.values():
            if not loc.alive() or loc.snap(fn) == before:   # (an object made while compiling)
                continue
            line = (where.file, where.line) if where is not None else None
            once = (line, loc.ident[0], getattr(loc, "name", ""))
            if once in _warned:
                continue
            _warned.add(once)
            at = f" at {where.file}:{where.line}: {where.text.strip()}" if where else ""
            msg = (f"graph '{graph_name}': the {loc.describe()} changed while compiling{at}. "
                   f"This Python side effect ran once, at compile time; the compiled graph "
                   f"does not run it again on later calls (MindSpore treats it the same way). "
                   f"Keep such state in a Parameter and assign to it, or change it outside "
                   f"the graph.")
            if where is not None:           # shown at the user's line, not minispore's
                warnings.warn_explicit(msg, UserWarning, where.file, where.line)
            else:
                from .cache import user_stacklevel
                warnings.warn(msg, UserWarning, stacklevel=user_stacklevel())


_warned: set = set()


def _where(frame, node):
    return frame.src.loc(node) if frame is not None and node is not None else None


def record_attribute(obj, name, value, frame=None, node=None):
    """The parser read `obj.name` (got `value`), or is about to assign it (`value`: the old
    value, or MISSING), in the build in progress."""
    r = Recorder.active
    if r is not None:
        r.attribute(obj, name, value, frame, node)


def record_dynamic_attribute(obj, name, frame=None, node=None):
    """getattr/hasattr/setattr(obj, name, ...) called in parsed code: `obj.name` as it is now."""
    if Recorder.active is not None:
        try:
            value = getattr(obj, name, MISSING)
        except Exception:               # a property that raises: the call will report it
            return
        record_attribute(obj, name, value, frame, node)


def record_fresh(obj):
    """`obj` was made by the build in progress (a Cell created in construct): it lives with the
    graph only, so its attributes are no guard of the cache."""
    r = Recorder.active
    if r is not None:
        r.fresh[id(obj)] = obj          # (held until the build's recorder goes: ids stay unique)


def record_name(frame, name, value, node=None):
    """The parser resolved `name` in `frame` to `value` in the build in progress."""
    r = Recorder.active
    if r is not None:
        r.name(frame, name, value, node)


_CELL_INTERNALS = frozenset({"_params", "_cells", "_param_tuples", "training"})


def builtin_cell_locations(cells) -> list:
    """AttrLocs of every attribute of the Cells among `cells` whose construct is minispore's own
    (nn.Dense, nn.Dropout, the optimizers...): it runs as Python, not parsed, so its reads are
    not recorded, and any of its settings (`dropout.p = 0.2`) may be a constant of the graph."""
    from .parser import is_user_function
    out = []
    for c in cells:
        construct = getattr(type(c), "construct", None)
        if construct is None or is_user_function(construct) or hasattr(construct,
                                                                        "__wrapped_jit__"):
            continue
        out.extend(AttrLoc(c, name) for name in vars(c) if name not in _CELL_INTERNALS)
    return out


def merge(known: list, new: list) -> list:
    """`known` (dead ones dropped) followed by the locations of `new` not among them: a key's
    snapshot tuple reads the same locations in the same order for every entry of one call site."""
    out: dict = {}
    for loc in known:
        if loc.alive():
            out.setdefault(loc.ident, loc)
    for loc in new:
        if loc.alive():
            out.setdefault(loc.ident, loc)
    return list(out.values())
