"""Python semantics the parser keeps where graph mode differs from running the code as is:
builtin iterators become MindSpore's containers (`materialised`, at the call, so they can be
iterated again as in MindSpore), values leave a graph as MindSpore returns them (`as_output`),
a multi-element tensor has no truth value (`truth_error`, PyNative's error), a name bound on one
path only is reported by name where it is read (`unbound_message`), and recursion that cannot end
at compile time stops with a GraphSyntaxError before Python's own stack does
(`check_call_depth`); an error in a functools.wraps wrapper names the decorator (`in_wrapper`)."""
from __future__ import annotations

import ast
import sys

import numpy as np

from .source import error as _error

# what MindSpore's graph mode returns for these builtins (their Python results are one-shot
# iterators; MindSpore's are containers, so e.g. `sum(m), sum(m)` of one map counts twice)
_CONTAINER_OF = {map: tuple, zip: tuple, enumerate: tuple, filter: list}

MAX_CALL_DEPTH = 200
_STACK_MARGIN = 250          # Python frames kept free below the recursion limit for the error


def materialised(func, result):
    """`result` of calling `func` in parsed code, as MindSpore's graph mode gives it."""
    try:
        kind = _CONTAINER_OF.get(func)
    except TypeError:                       # an unhashable callable
        return result
    return kind(result) if kind is not None else result


def as_output(v):
    """A graph's Python-value result as MindSpore returns it: ranges and dict keys/values as
    tuples, dict items as a list, builtin iterators as their containers, numpy scalars as Python
    numbers (containers are converted item by item; a namedtuple keeps its type)."""
    if isinstance(v, tuple):
        items = [as_output(x) for x in v]
        return type(v)(*items) if hasattr(type(v), "_fields") else tuple(items)
    if isinstance(v, list):
        return [as_output(x) for x in v]
    if isinstance(v, dict):
        return {k: as_output(x) for k, x in v.items()}
    if isinstance(v, range) or isinstance(v, (type({}.keys()), type({}.values()))):
        return tuple(as_output(x) for x in v)
    if isinstance(v, type({}.items())):
        return [as_output(x) for x in v]
    for it, kind in _CONTAINER_OF.items():
        if isinstance(v, it):
            return as_output(kind(v))
    if isinstance(v, np.generic):
        return v.item()
    return v


def truth_error(v, node, frame):
    """The error PyNative raises for `bool(v)` of a multi-element tensor, shown at `node`."""
    try:
        type(v).__bool__(v)
    except ValueError as e:
        return _error(frame.src, node, str(e), ValueError,
                      hint="reduce it to one element first, e.g. (x > 0).all() or x.sum() > 0")
    return _error(frame.src, node, f"the truth value of a tensor of shape {v.shape} is "
                  f"ambiguous", ValueError)


def first_store(stmts, name):
    """The first node in `stmts` that assigns `name` (None if none does)."""
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                return n
    return None


def unbound_message(name, frame, where, stmt, store, consequence) -> str:
    """Why `name` has no value after `stmt`: it is assigned only `where` (e.g. "in the
    then-branch of the tensor `if`"), at the node `store`; `consequence` says on which path."""
    at = frame.src.loc(stmt)
    assigned = ""
    if store is not None:
        loc = frame.src.loc(store)
        assigned = f" (line {loc.line}: {loc.text.strip()})"
    return (f"'{name}' is assigned only {where} at line {at.line} ({at.text.strip()})"
            f"{assigned}, so it has no value here {consequence}; graph mode compiles both "
            f"paths")


def check_call_depth(parser, fdef, frame, site, active) -> None:
    """Raise a GraphSyntaxError when a call nests too deep to parse: more than MAX_CALL_DEPTH
    user calls, or near Python's recursion limit. `active` lists the (function node, open
    tensor-control regions) of the activations on the parser's stack; `site` is the (node,
    frame) of the call being made."""
    limit = sys.getrecursionlimit() - _STACK_MARGIN
    deep = parser.depth > MAX_CALL_DEPTH
    if not deep:
        try:
            sys._getframe(limit)
            deep = True
        except ValueError:
            pass
    if not deep:
        return
    name = fdef.name if isinstance(fdef, ast.FunctionDef) else "a lambda"
    regions = len(getattr(parser.ex, "stack", ()))
    mine = [r for f, r in active if f is fdef]
    node, fr = site
    if mine and min(mine) < regions:
        raise _error(fr.src, node, f"graph mode: `{name}` calls itself under a tensor "
                     f"condition ({len(mine)} nested calls so far); recursion on a tensor "
                     f"condition cannot end at compile time",
                     hint="recursion in graph mode must end on a Python condition (a number, "
                          "a shape); loop on a tensor condition with `while <condition>:` "
                          "instead, or run in PyNative mode")
    raise _error(fr.src, node, f"graph mode: the call depth exceeds the limit "
                 f"({parser.depth} nested calls of user functions"
                 + (f", {len(mine)} of them `{name}`" if mine else "") + ")",
                 hint="recursion must end at compile time within the limit; use a loop instead")


def in_wrapper(e, fn, src):
    """`e` (raised while parsing `fn`, a functools.wraps wrapper) with a note naming the
    decorator when it points into the wrapper's own lines; None otherwise."""
    line = getattr(e, "lineno", None)
    if (getattr(e, "filename", None) != src.file or line is None
            or not src.first <= line < src.first + len(src.lines)
            or getattr(e, "_ms_in_wrapper", False)):
        return None
    inner = getattr(fn.__wrapped__, "__qualname__", repr(fn.__wrapped__))
    note = (f"\n  note: `{fn.__code__.co_qualname}` is the wrapper a decorator puts around "
            f"`{inner}` (functools.wraps); graph mode runs the wrapper's code too: make it "
            f"graph-compatible, or apply the decorator only in PyNative mode")
    try:
        new = type(e)(e.args[0] + note)
    except Exception:
        return None
    new.filename, new.lineno, new.offset = e.filename, e.lineno, getattr(e, "offset", None)
    new._ms_located = new._ms_in_wrapper = True
    return new
