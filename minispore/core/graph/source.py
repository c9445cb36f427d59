"""Where parsed code comes from and how its names resolve: `Source` (a function's ast, file and
first line, cached per code object), `Frame` (one activation's locals, then closure, globals and
builtins) and `error` (a GraphSyntaxError or other exception that shows the user's file, line,
source line with a caret, and a hint)."""
from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap

from ..errors import GraphSyntaxError
from . import ir
from .guards import record_name


class Source:
    """A function's parsed source: its FunctionDef/Lambda, file and first line."""

    _cache: dict = {}

    def __init__(self, fn):
        code = fn.__code__
        self.file = code.co_filename
        try:
            # the code object's own source: inspect would follow a functools.wraps decorator's
            # __wrapped__ to the inner function and skip the wrapper's work
            lines, start = inspect.getsourcelines(code)
        except (OSError, TypeError) as e:
            inner = getattr(fn, "__wrapped__", None)
            what = (f"{code.co_name}, the decorator's wrapper around {inner.__qualname__} (the "
                    f"graph runs the wrapper's code too)" if inner is not None
                    else fn.__qualname__)
            raise GraphSyntaxError(
                f"graph mode needs the Python source of {what}, which is not available ({e}); "
                f"define it in a .py file or run in PyNative mode") from None
        try:
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except SyntaxError:
            if code.co_name != "<lambda>":
                raise
            # a lambda inside an expression that spans lines (an argument of a call, an item of
            # a list): its own lines are no statement, so parse the whole file and find it there
            lines, start = linecache.getlines(self.file), 1
            tree = ast.parse("".join(lines))
        self.lines = lines
        self.first = start
        ast.increment_lineno(tree, start - 1)
        # the columns textwrap.dedent removed (the common indent of the non-blank lines)
        self.indent = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()),
                          default=0)
        self.node = self._find(tree, fn, self.indent)

    @staticmethod
    def _find(tree, fn, indent=0):
        """The def or lambda of `fn` in its source lines (several lambdas may share a line:
        match the line and the parameter names, then the columns of the code's body)."""
        code = fn.__code__
        params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        if code.co_name != "<lambda>":          # not fn.__name__: functools.wraps copies it
            defs = [n for n in ast.walk(tree)
                    if isinstance(n, ast.FunctionDef) and n.name == code.co_name]
            for n in defs:
                first = min([n.lineno] + [d.lineno for d in n.decorator_list])
                if first == code.co_firstlineno:
                    return n
            if defs:
                return defs[0]
        lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
        candidates = []
        for n in lambdas:
            names = [a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs]
            if n.lineno == code.co_firstlineno and names == params:
                candidates.append(n)
        if len(candidates) > 1:
            positions = [(ln, c) for ln, _, c, _ in code.co_positions()
                         if ln is not None and c is not None]
            for n in candidates:
                b = n.body
                lo = (b.lineno, b.col_offset + indent)
                hi = (b.end_lineno, b.end_col_offset + indent)
                if any(lo <= p < hi for p in positions):
                    return n
        if candidates:
            return candidates[0]
        if lambdas:
            return lambdas[0]
        raise GraphSyntaxError(f"cannot find the source of {fn.__qualname__} in "
                               f"{code.co_filename}:{code.co_firstlineno}")

    @classmethod
    def of(cls, fn) -> "Source":
        s = cls._cache.get(fn.__code__)
        if s is None:
            s = cls._cache[fn.__code__] = Source(fn)
        return s

    def loc(self, node) -> ir.Loc:
        line = getattr(node, "lineno", self.first)
        text = self.lines[line - self.first] if 0 <= line - self.first < len(self.lines) else ""
        return ir.Loc(self.file, line, getattr(node, "col_offset", 0) + self.indent,
                      text.rstrip("\n"))


class Frame:
    """Name resolution for one function activation: locals, then closure, globals, builtins."""

    def __init__(self, fn, source: Source, local: dict):
        self.fn, self.src, self.local = fn, source, local
        self.locs: dict = {}                 # name -> ir.Loc of its latest assignment
        self.unbound: dict = {}              # name -> (why it has no value, hint)
        self.closure = {}
        if getattr(fn, "__closure__", None):
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    self.closure[name] = cell.cell_contents
                except ValueError:
                    pass
        self.globals = fn.__globals__

    def lookup(self, name, node):
        if name not in self.local and name in self.unbound:  # bound on another path only
            why, hint = self.unbound[name]
            raise error(self.src, node, why, hint=hint)
        if name in self.local:
            return self.local[name]
        for d in (self.closure, self.globals):
            if name in d:
                v = d[name]
                # a compile-time constant of the graph: part of its cache key (guards.py)
                record_name(self, name, v, node)
                return v
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise error(self.src, node, f"name '{name}' is not defined", NameError)

    def copy(self) -> "Frame":
        f = Frame.__new__(Frame)
        f.fn, f.src, f.closure, f.globals = self.fn, self.src, self.closure, self.globals
        f.local = dict(self.local)
        f.locs = dict(self.locs)
        f.unbound = dict(self.unbound)
        return f


def error(src: Source, node, msg: str, cls=GraphSyntaxError, hint: str | None = None):
    loc = src.loc(node)
    e = cls(f"{msg}\n{loc.caret()}" + (f"\n  hint: {hint}" if hint else ""))
    e._ms_located = True
    if isinstance(e, SyntaxError):
        # no .text: the message already shows the line and a caret, and Python's traceback
        # would print them a second time
        e.filename, e.lineno, e.offset = loc.file, loc.line, loc.col + 1
    return e
