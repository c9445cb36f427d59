"""MindSpore's overloaded functions and sequence maps: `MultitypeFuncGraph`, `HyperMap`, `Map`.

`MultitypeFuncGraph(name)` holds functions registered under MindSpore type names
(`@fg.register("Number", "Tensor")`); a call runs the first registration (in registration order)
whose types the arguments are instances of, by MindSpore's type lattice: "Number" takes Python
bool/int/float, "Int"/"Int64" an int, "Float"/"Float64" a float, "Bool" a bool, "Tensor" any
Tensor (a Parameter too), "Tensor[Float32]" a float32 Tensor, "Tuple"/"List"/"Dictionary"/
"String"/"None", "Function" a function, Cell or Primitive, "TypeType" a dtype. When several
registrations fit, graph mode takes the one naming the more exact types (MindSpore's graph
compiler does, where PyNative takes the first registered). As in MindSpore,
an object with a single registration calls it without checking the types, a numpy array is a
TypeError, and no match raises (MindSpore raises ValueError; the error here is a TypeError too).

`HyperMap(ops)` applies `ops` to the leaves of nested tuples/lists (a leaf: anything that is
not a tuple or list; in graph mode a dict's values are mapped too, as MindSpore's graph
compiler does), `Map(ops)` to the items of one level; without `ops` at construction the
first call argument is the function. The result of mapping a tuple is a tuple; a list gives a
tuple in PyNative and a list in graph mode, as in MindSpore.

Graph mode: the registered functions, and a plain function mapped by HyperMap/Map, are user
code: while a graph is built they are parsed and inlined by the graph parser (the dispatch
itself runs at compile time, on the arguments' static types), so their tensor `if`s and loops
compile as anywhere in a construct.
"""
from __future__ import annotations

import functools
import types

from .cells import is_cell
from .dtype import DType
from .errors import MinisporeError, ShapeError
from .tensor import Tensor


class MultitypeMatchError(MinisporeError, TypeError, ValueError):
    """No registration of a MultitypeFuncGraph fits the arguments' types (MindSpore raises
    ValueError)."""


class MapTypeError(MinisporeError, TypeError, RuntimeError):
    """HyperMap/Map over a tuple and a list together in graph mode (MindSpore raises
    RuntimeError there; PyNative maps them)."""


_SCALARS = {"Bool": bool, "Int": int, "Int64": int, "Float": float, "Float64": float}
_NOTHING = frozenset({                 # valid MindSpore names that no minispore value has
    "Int8", "Int16", "Int32", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Float16",
    "Float32", "BFloat16", "Complex64", "Complex128", "RowTensor", "COOTensor", "CSRTensor",
    "UMonad", "IOMonad", "Problem", "EnvType", "RefKey", "Undetermined", "Keyword"})
_NAMED = {"Tuple": tuple, "List": list, "Dictionary": dict, "String": str,
          "None": type(None), "Slice": slice, "Ellipsis": type(Ellipsis)}
_DTYPE_NAMES = None


def _dtype_names() -> dict:
    global _DTYPE_NAMES
    if _DTYPE_NAMES is None:
        from . import dtype as dt
        _DTYPE_NAMES = {v.name: v for v in vars(dt).values() if isinstance(v, DType)}
    return _DTYPE_NAMES


def _check_name(name) -> str:
    """A registration type as its MindSpore name (a dtype object stands for its scalar name)."""
    if isinstance(name, DType):
        return name.name
    if not isinstance(name, str):
        raise TypeError(f"For 'MultitypeFuncGraph', register only supports type names (str) or "
                        f"dtypes, but got {name!r}")
    if name in ("Number", "Tensor", "Function", "TypeType") or name in _SCALARS or \
            name in _NOTHING or name in _NAMED:
        return name
    if name.startswith("Tensor[") and name.endswith("]") and name[7:-1] in _dtype_names():
        return name
    raise RuntimeError(f"For 'MultitypeFuncGraph', unsupported type name: {name!r}")


def is_function(x) -> bool:
    from .primitive import Primitive
    return isinstance(x, (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
                          functools.partial, MultitypeFuncGraph, HyperMap, Map, Primitive)) or \
        is_cell(x) or type(x).__name__ in ("InlineCall", "ParsedLambda")


def _as_python(x):
    """A variable scalar of a graph (an ms.mutable number) stands for a Python number of its
    kind: MindSpore dispatches it as a Number, not as a Tensor."""
    if isinstance(x, Tensor) and type(x) is not Tensor:
        from .mutable import SymScalar
        if isinstance(x, SymScalar):
            return x.kind(1)
    return x


def type_name(x) -> str:
    """MindSpore's name of the type of `x` (as its errors print it)."""
    x = _as_python(x)
    if isinstance(x, Tensor):
        return f"Tensor[{x.dtype.name}]"
    if isinstance(x, bool):
        return "Bool"
    if isinstance(x, int):
        return "Int64"
    if isinstance(x, float):
        return "Float64"
    if isinstance(x, DType):
        return "TypeType"
    for n, t in _NAMED.items():
        if isinstance(x, t):
            return n
    if is_function(x):
        return "Function"
    return type(x).__name__


def matches(x, name: str) -> bool:
    """Whether `x` is an instance of the MindSpore type `name`."""
    x = _as_python(x)
    if name == "Tensor":
        return isinstance(x, Tensor)
    if name.startswith("Tensor["):
        return isinstance(x, Tensor) and x.dtype.name == name[7:-1]
    if isinstance(x, Tensor):
        return False
    if name == "Number":
        return isinstance(x, (bool, int, float))
    if name in _SCALARS:
        t = _SCALARS[name]
        return isinstance(x, t) and (t is bool or not isinstance(x, bool))
    if name in _NAMED:
        return isinstance(x, _NAMED[name])
    if name == "Function":
        return is_function(x)
    if name == "TypeType":
        return isinstance(x, DType)
    return False


def _exactness(name: str) -> int:
    """How exact a type name is: Number < Int/Float < Int64/Float64/Bool; Tensor < Tensor[X]."""
    if name in ("Int64", "Float64", "Bool"):
        return 2
    return 1 if name in ("Int", "Float") or name.startswith("Tensor[") else 0


def _building_graph() -> bool:
    from .graph.builder import GraphBuilder
    from .primitive import executor
    return isinstance(executor.current, GraphBuilder)


def call_user(fn, args: tuple):
    """fn(*args); while a graph is built, a user function is parsed and inlined instead."""
    from .graph.builder import GraphBuilder
    from .graph.parser import is_user_function
    from .primitive import executor
    parser = getattr(executor.current, "parser", None)
    if isinstance(executor.current, GraphBuilder) and parser is not None:
        if is_user_function(fn):
            return parser.call_function(fn, args, {})
        if isinstance(fn, functools.partial) and is_user_function(fn.func):
            return parser.call_function(fn.func, fn.args + tuple(args), dict(fn.keywords))
    return fn(*args)


class MultitypeFuncGraph:
    """MindSpore's `ops.MultitypeFuncGraph(name, read_value=False)`: a function overloaded on
    its arguments' MindSpore types, registered with `@fg.register(*type_names)`."""

    def __init__(self, name, read_value=False):
        if not isinstance(name, str):
            raise TypeError(f"MultitypeFuncGraph: 'name' must be a str, but got {name!r}")
        self.name_ = name
        self.read_value = bool(read_value)  # graph-mode aliasing hint; values are never aliased
        self.entries: list = []

    def register(self, *type_names):
        types_ = tuple(_check_name(n) for n in type_names)

        def deco(fn):
            self.entries.append((types_, fn))
            return fn
        return deco

    def __call__(self, *args):
        import numpy as np
        for a in args:
            if isinstance(a, np.ndarray):
                raise TypeError("For 'MultitypeFuncGraph', the input can not be numpy.ndarray")
        if len(self.entries) == 1:
            return call_user(self.entries[0][1], args)
        hits = [(sig, fn) for sig, fn in self.entries
                if len(sig) == len(args) and all(matches(a, n) for a, n in zip(args, sig))]
        if hits:
            if len(hits) > 1 and _building_graph():
                # MindSpore's graph compiler takes another match than PyNative's first one when
                # several fit: the registration naming the more exact types ("Int64" before
                # "Number", "Tensor[Float32]" before "Tensor"), as observed
                best = max(sum(map(_exactness, sig)) for sig, _ in hits)
                hits = [h for h in hits if sum(map(_exactness, h[0])) == best]
            return call_user(hits[0][1], args)
        regs = ", ".join("(" + ", ".join(s) + ")" for s, _ in self.entries) or "none"
        raise MultitypeMatchError(
            f"For 'MultitypeFuncGraph' '{self.name_}', cannot find fn match given args: the "
            f"arguments' types are ({', '.join(type_name(a) for a in args)}); the registered "
            f"signatures are {regs}")

    def __repr__(self) -> str:
        return f"MultitypeFuncGraph({self.name_!r})"


def _seq_out(items: list, like):
    """The mapped sequence: a tuple, except a list in graph mode for a list input."""
    if isinstance(like, list) and _building_graph():
        return items
    return tuple(items)


class _Mapper:
    def __init__(self, ops=None, reverse=False):
        if ops is not None and not isinstance(ops, MultitypeFuncGraph):
            raise TypeError(f"For '{type(self).__name__}', 'ops' must be a MultitypeFuncGraph "
                            f"or None, but got {type(ops).__name__} (pass a plain function as "
                            f"the first call argument instead)")
        if not isinstance(reverse, bool):
            raise TypeError(f"For '{type(self).__name__}', 'reverse' must be a bool, but got "
                            f"{reverse!r}")
        self.ops, self.reverse = ops, reverse

    def __call__(self, *args):
        func, seqs = (self.ops, args) if self.ops is not None else (args[0] if args else None,
                                                                   args[1:])
        if func is None or not seqs:
            raise TypeError(f"{type(self).__name__}: call it with "
                            f"{'the function and ' if self.ops is None else ''}at least one "
                            f"sequence")
        if not callable(func):
            raise TypeError(f"{type(self).__name__}: the function to apply is not callable: "
                            f"{func!r}")
        return self._map(func, seqs)

    def _items(self, func, seqs, each):
        name = type(self).__name__
        lens = set()
        for s in seqs:
            if not isinstance(s, (tuple, list)):
                raise TypeError(f"For '{name}', the inputs must be all tuples/lists when the "
                                f"first is, but got {type_name(s)}")
            lens.add(len(s))
        if _building_graph() and len({type(s) is list for s in seqs}) > 1:
            raise MapTypeError(f"For '{name}', the sequences must be all tuples or all lists in "
                               f"graph mode (MindSpore's graph compiler), but got "
                               f"{', '.join(type_name(s) for s in seqs)}")
        if len(lens) > 1:
            raise ShapeError(f"For '{name}', the sequences must have the same length, but got "
                             f"lengths {[len(s) for s in seqs]}")     # MindSpore: RuntimeError
        n = lens.pop()
        order = range(n - 1, -1, -1) if self.reverse else range(n)
        out = [None] * n
        for i in order:
            out[i] = each(func, tuple(s[i] for s in seqs))
        return _seq_out(out, seqs[0])


class HyperMap(_Mapper):
    """MindSpore's `ops.HyperMap(ops=None, reverse=False)`: `ops` applied to the leaves of
    nested tuples/lists (reverse: the items are visited last to first)."""

    def _map(self, func, seqs):
        if isinstance(seqs[0], dict) and _building_graph():     # graph mode maps dict values
            keys = list(seqs[0])
            if any(not isinstance(s, dict) or list(s) != keys for s in seqs):
                raise TypeError("For 'HyperMap', dicts are mapped only with dicts of the same "
                                "keys")
            return {k: self._map(func, tuple(s[k] for s in seqs)) for k in keys}
        if not isinstance(seqs[0], (tuple, list)):      # a leaf
            return call_user(func, seqs)
        return self._items(func, seqs, self._map)


class Map(_Mapper):
    """MindSpore's `ops.Map(ops=None, reverse=False)`: `ops` applied to the items of the
    sequences (one level)."""

    def _map(self, func, seqs):
        if not isinstance(seqs[0], (tuple, list)):
            raise TypeError(f"For 'Map', the inputs must be tuples or lists, but got "
                            f"{type_name(seqs[0])}")
        return self._items(func, seqs, call_user)
