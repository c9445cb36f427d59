"""Python source -> IR by partial evaluation over the `ast` (DESIGN.md, "Graph mode").

`Parser.call_function(fn, args, kwargs)` evaluates the *source* of `fn` statement by statement:
Python values (numbers, strings, tuples, shapes, dtypes, `self.` attributes, ranges, cells...)
are computed now, at compile time; tensor values are symbolic and every op on them goes through
the current executor, so it becomes an IR node (the same parser drives the eager executor when a
jitted function runs under an eager gradient). User functions, methods, lambdas and Cells are
parsed and inlined; minispore's own functions (ops, grad) run as they are, through the builder.

Control flow: `if`/`while` on a Python value run at compile time (branch picked, loop unrolled);
on a tensor they become If/While nodes with subgraphs (control.py). `for` loops over Python
iterables unroll. Anything else raises GraphSyntaxError showing the user's line and a fix.
Statements and calls are here; expressions are evaluated by the Expressions mixin
(expressions.py). Where graph mode's Python semantics depart from running the code as is
(builtin iterators, the truth of a tensor, names bound on one path only, recursion limits,
decorators' wrappers), the rules are in semantics.py.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
import types

from ..cells import is_cell, is_cell_class
from ..errors import GraphSyntaxError, MinisporeError
from ..mutable import SCALAR_BUILTINS, scalar_builtin
from ..tensor import Tensor
from .builder import is_symbolic
from .expressions import _BINOPS, Expressions, ParsedLambda
from .fallback import condition as fallback_condition
from .semantics import check_call_depth, in_wrapper, materialised, truth_error
from .source import Frame, Source
from .source import error as _error

_UNSUPPORTED = {
    ast.Try: "try/except", ast.With: "with", ast.AsyncWith: "async with", ast.Delete: "del",
    ast.Global: "global", ast.Nonlocal: "nonlocal", ast.ClassDef: "a class definition",
    ast.Import: "import", ast.ImportFrom: "import", ast.AsyncFor: "async for",
    ast.AsyncFunctionDef: "an async function", ast.Yield: "yield", ast.YieldFrom: "yield from",
    ast.Await: "await", ast.Set: "a set literal", ast.SetComp: "a set comprehension",
    ast.NamedExpr: "the walrus operator :=", ast.Match: "match",
}
_HINT = ("run this code in PyNative mode (ms.set_context(mode=ms.PYNATIVE_MODE)) or rewrite it "
         "with the supported forms")


class _Flow:
    """How a block ended: normally (None), or by return/break/continue."""
    __slots__ = ("kind", "value")

    def __init__(self, kind, value=None):
        self.kind, self.value = kind, value


BREAK, CONTINUE = _Flow("break"), _Flow("continue")


class InlineCall:
    """A user function handed to minispore's own code (e.g. ms.grad(f)): calls are parsed."""

    def __init__(self, parser, fn):
        self.parser, self.fn = parser, fn
        self.__name__ = getattr(fn, "__name__", "fn")

    def __call__(self, *args, **kwargs):
        return self.parser.call_function(self.fn, args, kwargs)


def is_user_function(fn) -> bool:
    """A Python function outside minispore (judged by the module that defines its code:
    functools.wraps copies the wrapped function's __module__ onto a wrapper such as ms.jit's)."""
    return isinstance(fn, types.FunctionType) and not (
        fn.__globals__.get("__name__") or "").startswith("minispore.")


# a tensor `if` leaving a range() loop with more iterations left than this makes the loop a
# While (unrolled, each exit nests the rest of the function in an If): control.unroll_or_loop
LONG_UNROLL = 64


class Parser(Expressions):
    MAX_UNROLL = 100_000

    def __init__(self, executor):
        self.ex = executor                  # GraphBuilder, or the eager executor
        self.depth = 0
        # What runs after the current statement, innermost last: ("block", statements),
        # ("for", loop, remaining items), ("while", loop). A `return` under a tensor `if` needs
        # "the rest of the function" as the other path (see finish()); one stack per activation.
        self.conts: list = []
        self.site = None                    # (node, frame) of the call being made
        self.active: list = []              # (function node, open regions) per activation
        self.long_ranges: set = set()       # ids of the long range() loops being unrolled

    # -- entry points --------------------------------------------------------------------------
    def call_function(self, fn, args, kwargs=None):
        if not is_user_function(fn):        # e.g. an @ms.jit construct: its wrapper inlines it
            return fn(*args, **(kwargs or {}))
        src = Source.of(fn)
        frame = Frame(fn, src, {})
        if getattr(fn, "__wrapped__", None) is None:
            return self._invoke(src.node, frame, args, kwargs or {}, fn)
        try:                                # a decorator's wrapper: its errors name it
            return self._invoke(src.node, frame, args, kwargs or {}, fn)
        except GraphSyntaxError as e:
            new = in_wrapper(e, fn, src)
            if new is None:
                raise
            raise new from None

    def call_parsed(self, node, frame, args, kwargs, defaults=None):
        return self._invoke(node, frame.copy(), args, kwargs, None, defaults)

    def call_cell(self, cell, args, kwargs=None, run_hooks=True):
        seen = getattr(self, "called_cells", None)
        if seen is not None and id(cell) not in getattr(self, "made_cells", ()):
            seen[id(cell)] = cell           # compile.run keys its cache on their `training`
        from .. import custom_bprop, hooks
        hooks.guard()                       # a hook registered later recompiles
        if run_hooks and hooks.cell_hooks(cell) is not None:
            return hooks.call(cell, tuple(args), kwargs or {},
                              lambda *a, **k: self.call_cell(cell, a, k, run_hooks=False))
        fn = type(cell).construct
        from ..pynative import TAPE
        if TAPE.depth and custom_bprop.has_bprop(cell):   # a gradient through the Cell's bprop
            return custom_bprop.call(cell, tuple(args), kwargs or {},
                                     lambda *a: self.call_function(fn, (cell,) + a, kwargs))
        return self.call_function(fn, (cell,) + tuple(args), kwargs)

    def _invoke(self, fdef, frame, args, kwargs, fn, defaults=None):
        site = self.site or (fdef, frame)
        self.depth += 1
        try:
            check_call_depth(self, fdef, frame, site, self.active)
        except GraphSyntaxError:
            self.depth -= 1
            raise
        self.active.append((fdef, len(getattr(self.ex, "stack", ()))))
        saved_conts, self.conts = self.conts, []
        try:
            self._bind(fdef.args, frame, args, kwargs, fn, defaults)
            if isinstance(fdef, ast.Lambda):
                return self.eval(fdef.body, frame)
            flow = self.exec_block(fdef.body, frame)
            return flow.value if flow is not None and flow.kind == "return" else None
        finally:
            self.depth -= 1
            self.active.pop()
            self.conts = saved_conts

    def finish(self, frame: Frame, flow=None):
        """Run the rest of the function from here (the continuation stack, innermost first) in
        `frame`, starting from `flow` (None: the current block ended normally, or a pending
        break/continue). Returns the function's return flow, or None if it falls off the end."""
        stack = self.conts
        try:
            for j in range(len(stack) - 1, -1, -1):
                if flow is not None and flow.kind in ("return", "iter_end"):
                    break
                self.conts = stack[:j]               # what encloses entry j
                kind, *data = stack[j]
                if kind == "loop":                   # the end of a tensor while's iteration
                    return flow
                if kind == "block":
                    if flow is None:
                        flow = self.exec_block(data[0], frame)
                elif flow is BREAK:
                    flow = None                      # leave this loop, skip its else
                elif kind == "for":
                    flow = self._iterate(data[0], data[1], frame)
                else:
                    from .control import run_while
                    flow = run_while(self, data[0], frame)
        finally:
            self.conts = stack
        return flow if flow is not None and flow.kind in ("return", "iter_end") else None

    def innermost_loop(self):
        """The continuation entry of the innermost loop being run, if any."""
        for entry in reversed(self.conts):
            if entry[0] in ("for", "while", "loop"):
                return entry
        return None

    def loop_mark(self):
        """The mark of the innermost tensor while whose body is being built, if any."""
        for kind, *data in reversed(self.conts):
            if kind == "loop":
                return data[0]
        return None

    def _bind(self, a: ast.arguments, frame, args, kwargs, fn, defaults=None):
        if fn is not None:
            try:
                # the parsed code's own parameters, not those of a function it wraps
                bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
            except TypeError as e:
                raise _error(frame.src, frame.src.node, f"{fn.__qualname__}(): {e}",
                             TypeError) from None
            bound.apply_defaults()
            frame.local.update(bound.arguments)
            return
        if defaults is None:
            defaults = ([self.eval(d, frame) for d in a.defaults],
                        {k.arg: self.eval(d, frame) for k, d in zip(a.kwonlyargs, a.kw_defaults)
                         if d is not None})
        pos_defaults, kw_defaults = defaults
        names = [x.arg for x in a.posonlyargs + a.args]
        kwonly = [x.arg for x in a.kwonlyargs]
        if len(args) > len(names) and not a.vararg:
            raise _error(frame.src, frame.src.node, f"takes {len(names)} positional "
                         f"argument(s) but {len(args)} were given", TypeError)
        vals = dict(zip(names[len(names) - len(pos_defaults):], pos_defaults))
        vals.update(kw_defaults)
        vals.update(zip(names, args))
        extra = {}
        for k, v in kwargs.items():
            if k in names or k in kwonly:
                vals[k] = v
            else:
                extra[k] = v
        if extra and not a.kwarg:
            raise _error(frame.src, frame.src.node, f"got unexpected keyword argument(s) "
                         f"{sorted(extra)}", TypeError)
        if a.vararg:
            vals[a.vararg.arg] = tuple(args[len(names):])
        if a.kwarg:
            vals[a.kwarg.arg] = extra
        missing = [n for n in names + kwonly if n not in vals]
        if missing:
            raise _error(frame.src, frame.src.node, f"missing argument(s) {missing}", TypeError)
        frame.local.update(vals)

    # -- statements ----------------------------------------------------------------------------
    def exec_block(self, stmts, frame: Frame):
        for i, st in enumerate(stmts):
            self._at(frame, st)
            if isinstance(st, ast.If):
                cond = fallback_condition(self.eval(st.test, frame))
                if is_symbolic(cond):
                    from .control import tensor_if
                    return tensor_if(self, st, cond, stmts[i + 1:], frame)
                branch = st.body if self.truth(cond, st, frame) else st.orelse
                flow = self._nested(branch, stmts[i + 1:], frame,
                                    lambda b=branch: self.exec_block(b, frame))
            elif isinstance(st, ast.While):
                from .control import run_while
                flow = self._nested(st.body, stmts[i + 1:], frame,
                                    lambda s=st: run_while(self, s, frame))
            elif isinstance(st, ast.For):
                flow = self._nested(st.body, stmts[i + 1:], frame, lambda s=st: self._for(s, frame))
            else:
                flow = self.exec_stmt(st, frame)
            if flow is not None:
                return flow
        return None

    def _nested(self, body, rest, frame, run):
        """Run a compound statement with `rest` (the statements after it) on the continuation
        stack, which only a `return` inside it can need."""
        return self.continued(has_exit(body), ("block", rest), run)

    def continued(self, track: bool, entry, run):
        """run() with `entry` on the continuation stack while it runs, when `track` (a `return`
        under a tensor `if` inside may need it: see finish())."""
        if not track:
            return run()
        self.conts.append(entry)
        try:
            return run()
        finally:
            self.conts.pop()

    def exec_stmt(self, st, frame: Frame):
        if isinstance(st, ast.Return):
            return _Flow("return", None if st.value is None else self.eval(st.value, frame))
        if isinstance(st, ast.Assign):
            value = self.eval(st.value, frame)
            for t in st.targets:
                self.assign(t, value, frame)
        elif isinstance(st, ast.AugAssign):
            op = _BINOPS[type(st.op)]
            cur = self.eval(_as_load(st.target), frame)
            self.assign(st.target, self._native(op, (cur, self.eval(st.value, frame)), {}, st,
                                                frame), frame)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.assign(st.target, self.eval(st.value, frame), frame)
        elif isinstance(st, ast.Expr):
            self.eval(st.value, frame)
        elif isinstance(st, ast.Pass):
            pass
        elif isinstance(st, ast.Break):
            return BREAK
        elif isinstance(st, ast.Continue):
            return CONTINUE
        elif isinstance(st, ast.Assert):
            test = self.eval(st.test, frame)
            if is_symbolic(test):
                raise _error(frame.src, st, "assert on a tensor value cannot be checked at "
                             "compile time", hint=_HINT)
            if not test:
                msg = self.eval(st.msg, frame) if st.msg is not None else ""
                raise _error(frame.src, st, f"AssertionError: {msg}", AssertionError)
        elif isinstance(st, ast.Raise):
            exc = self.eval(st.exc, frame) if st.exc is not None else RuntimeError()
            raise exc
        elif isinstance(st, ast.FunctionDef):
            frame.local[st.name] = ParsedLambda(self, st, frame)
        else:
            self.unsupported(st, frame)
        return None

    def unsupported(self, node, frame):
        what = _UNSUPPORTED.get(type(node), f"'{type(node).__name__}'")
        raise _error(frame.src, node, f"graph mode does not support {what}", hint=_HINT)

    def _for(self, st: ast.For, frame: Frame):
        from .control_while import TensorRange, iterable, tensor_while
        it = iterable(self, st.iter, frame)
        if isinstance(it, TensorRange):     # range() with a tensor bound: a While on the device
            return tensor_while(self, st, frame, it)
        if is_symbolic(it):
            it = [it[i] for i in range(it.shape[0])] if it.shape else None
            if it is None:
                raise _error(frame.src, st.iter, "cannot iterate over a 0-d tensor")
        try:
            items = []
            for item in it:
                items.append(item)
                if len(items) > self.MAX_UNROLL:
                    raise _error(frame.src, st, f"for loop unrolled more than "
                                 f"{self.MAX_UNROLL} times",
                                 hint="loop over a tensor condition with while instead")
        except TypeError:
            raise _error(frame.src, st.iter, f"cannot iterate over {type(it).__name__}",
                         TypeError) from None
        if not isinstance(it, range) or len(items) <= LONG_UNROLL:
            return self._iterate(st, items, frame)
        from .control import unroll_or_loop   # a long range(): a While if a tensor `if` leaves it
        self.long_ranges.add(id(st))
        try:
            return unroll_or_loop(self, st, frame, lambda: self._iterate(st, items, frame),
                                  TensorRange((it.start, it.stop, it.step)))
        finally:
            self.long_ranges.discard(id(st))

    def _iterate(self, st: ast.For, items: list, frame: Frame):
        """Run the loop body for `items`, then its else (unless a break)."""
        track = has_exit(st.body)
        for k, item in enumerate(items):
            self.assign(st.target, item, frame)
            flow = self.continued(track, ("for", st, items[k + 1:]),
                                  lambda: self.exec_block(st.body, frame))
            if flow is BREAK:
                return None
            if flow is not None and flow.kind in ("return", "iter_end"):
                return flow
        return self.exec_block(st.orelse, frame)

    def assign(self, target, value, frame: Frame):
        if isinstance(target, ast.Name):
            frame.local[target.id] = value
            frame.locs[target.id] = frame.src.loc(target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if starred:                         # a, *rest, b = value
                i = starred[0]
                n_after = len(target.elts) - i - 1
                vals = self._unpack(value, None, target, frame)
                if len(vals) < len(target.elts) - 1:
                    raise _error(frame.src, target, f"cannot unpack {len(vals)} values into "
                                 f"at least {len(target.elts) - 1} names", ValueError)
                split = len(vals) - n_after
                vals = vals[:i] + [list(vals[i:split])] + vals[split:]
                elts = target.elts[:i] + [target.elts[i].value] + target.elts[i + 1:]
            else:
                vals = self._unpack(value, len(target.elts), target, frame)
                elts = target.elts
            for t, v in zip(elts, vals):
                self.assign(t, v, frame)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value, frame)
            key = self.eval(target.slice, frame)
            self._native(operator.setitem, (obj, key, value), {}, target, frame)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, frame)
            from .control import assign_attribute
            assign_attribute(self, obj, target.attr, value, target, frame)
        else:
            self.unsupported(target, frame)

    def _unpack(self, value, n, node, frame):
        """`value` as a list of n items (any number when n is None)."""
        if is_symbolic(value) or isinstance(value, Tensor):
            if n is None and value.shape:
                n = value.shape[0]
            if not value.shape or value.shape[0] != n:
                raise _error(frame.src, node, f"cannot unpack a tensor of shape {value.shape} "
                             f"into {n} names", ValueError)
            return [value[i] for i in range(n)]
        vals = list(value)
        if n is not None and len(vals) != n:
            raise _error(frame.src, node, f"cannot unpack {len(vals)} values into {n} names",
                         ValueError)
        return vals

    # -- calls ---------------------------------------------------------------------------------
    def call(self, func, args, kwargs, node, frame):
        if getattr(type(func), "_ms_runtime_value", False):     # a method of a run-time value
            return func(*args, **kwargs)
        if func is builtins.print:
            from .control import emit_print
            return emit_print(self, args, kwargs, node, frame)
        if func is builtins.super and not args:
            cls = frame.closure.get("__class__")
            first = next(iter(frame.local.values()), None)
            if cls is None or first is None:
                raise _error(frame.src, node, "super() needs the enclosing class here")
            return super(cls, first)
        if (func is getattr or func is hasattr or func is setattr) and len(args) >= 2 \
                and isinstance(args[1], str):
            from .guards import record_dynamic_attribute     # a value the graph depends on
            record_dynamic_attribute(args[0], args[1], frame, node)
        from .fallback import RunTimeValue, defers_call
        if defers_call(func, args, kwargs):     # LAX: Python on a tensor's value, at run time
            return RunTimeValue.apply(func, tuple(args), dict(kwargs), ast.unparse(node))
        if args and type(func) in (type, types.BuiltinFunctionType) and func in SCALAR_BUILTINS:
            out = self._located_call(lambda: scalar_builtin(func, args, kwargs), node, frame)
            if out is not NotImplemented:   # float(t), max(n, m)...: a variable scalar
                return out
        if is_cell(func):
            return self._located_call(lambda: self.call_cell(func, args, kwargs), node, frame)
        if isinstance(func, ParsedLambda):
            return func(*args, **kwargs)
        if isinstance(func, types.MethodType) and is_user_function(func.__func__):
            if is_cell(func.__self__) and func.__func__ is type(func.__self__).construct:
                return self.call_cell(func.__self__, args, kwargs)
            return self.call_function(func.__func__, (func.__self__,) + tuple(args), kwargs)
        if is_user_function(func):
            return self.call_function(func, args, kwargs)
        if is_cell_class(func):             # a Cell made in construct: now, from constants
            from .expressions import make_cell
            return make_cell(self, func, args, kwargs, node, frame)
        args = [InlineCall(self, a) if is_user_function(a) else a for a in args]
        return materialised(func, self._native(func, args, kwargs, node, frame))

    def _native(self, func, args, kwargs, node, frame):
        """Call Python/minispore code as is; errors get the user's line attached."""
        return self._located_call(lambda: func(*args, **kwargs), node, frame)

    def _located_call(self, thunk, node, frame):
        saved = getattr(self.ex, "loc", None)
        loc = frame.src.loc(node)
        if hasattr(self.ex, "loc"):
            self.ex.loc = loc
        try:
            return thunk()
        except (MinisporeError, ValueError, TypeError, IndexError, KeyError, AttributeError,
                ZeroDivisionError, NotImplementedError, RuntimeError) as e:
            if getattr(e, "_ms_located", False):
                raise
            msg = str(e)
            if isinstance(e, GraphSyntaxError):     # name the expression that needed a value
                expr = ast.unparse(node) if isinstance(node, ast.expr) else ""
                if expr and len(expr) <= 80:
                    msg = f"in `{expr}`: {msg}"
                from .. import context
                if context._state["jit_syntax_level"] != context.STRICT and \
                        ("not known" in msg or "only at run time" in msg):
                    msg += (". (At jit_syntax_level LAX MindSpore's JIT Fallback runs such "
                            "Python code at run time; minispore runs Python code only while "
                            "compiling)")
            try:
                new = type(e)(f"{msg}\n{loc.caret()}")
            except Exception:
                raise e from None
            new._ms_located = True
            if isinstance(new, SyntaxError):    # e.g. reading a tensor's value while compiling
                new.filename, new.lineno, new.offset = loc.file, loc.line, loc.col + 1
            raise new from None
        finally:
            if hasattr(self.ex, "loc"):
                self.ex.loc = saved

    def truth(self, v, node, frame) -> bool:
        if isinstance(v, Tensor) and v.size != 1:
            raise truth_error(v, node, frame)   # PyNative's error, at the user's line
        return bool(v)                      # a Tensor here is concrete (the eager executor)

    def _at(self, frame, st):
        if hasattr(self.ex, "loc"):
            self.ex.loc = frame.src.loc(st)


def _as_load(node):
    """A copy of an assignment target that reads it (for augmented assignment)."""
    import copy
    n = copy.deepcopy(node)
    for sub in ast.walk(n):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return n


def has_return(stmts) -> bool:
    """Whether a `return` occurs in these statements (outside nested defs and lambdas)."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


def has_exit(stmts) -> bool:
    """Whether a `return`, `break` or `continue` occurs in these statements: a tensor `if`
    among them may need the code after them (the continuation stack, see Parser.finish)."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Return, ast.Break, ast.Continue)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False
