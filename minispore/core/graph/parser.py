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
Where graph mode's Python semantics depart from running the code as is (builtin iterators, the
truth of a tensor, names bound on one path only, recursion limits, decorators' wrappers), the
rules are in semantics.py.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
import types

from ..errors import GraphSyntaxError, MinisporeError
from ..tensor import Tensor
from .builder import is_symbolic
from .semantics import check_call_depth, in_wrapper, materialised, truth_error
from .source import Frame, Source
from .source import error as _error

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.BitAnd: operator.and_,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift}
_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_,
           ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
           ast.NotIn: lambda a, b: a not in b}
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


class ParsedLambda:
    """A lambda (or nested def) met in parsed code: calling it parses its body."""

    def __init__(self, parser, node, frame: Frame):
        self.parser, self.node, self.frame = parser, node, frame
        # default values are evaluated once, where the def/lambda is, as in Python
        a = node.args
        self.defaults = [parser.eval(d, frame) for d in a.defaults]
        self.kw_defaults = {k.arg: parser.eval(d, frame)
                            for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}

    def __call__(self, *args, **kwargs):
        return self.parser.call_parsed(self.node, self.frame, args, kwargs,
                                       (self.defaults, self.kw_defaults))


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


class Parser:
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

    def call_cell(self, cell, args, kwargs=None):
        seen = getattr(self, "called_cells", None)
        if seen is not None:                # compile.run keys its cache on their `training`
            seen[id(cell)] = cell
        fn = type(cell).construct
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
                if flow is not None and flow.kind == "return":
                    break
                self.conts = stack[:j]               # what encloses entry j
                kind, *data = stack[j]
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
        return flow if flow is not None and flow.kind == "return" else None

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
                cond = self.eval(st.test, frame)
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
        return self.continued(has_return(body), ("block", rest), run)

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
        it = self.eval(st.iter, frame)
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
        return self._iterate(st, items, frame)

    def _iterate(self, st: ast.For, items: list, frame: Frame):
        """Run the loop body for `items`, then its else (unless a break)."""
        track = has_return(st.body)
        for k, item in enumerate(items):
            self.assign(st.target, item, frame)
            flow = self.continued(track, ("for", st, items[k + 1:]),
                                  lambda: self.exec_block(st.body, frame))
            if flow is BREAK:
                return None
            if flow is not None and flow.kind == "return":
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

    # -- expressions ---------------------------------------------------------------------------
    def eval(self, node, frame: Frame):
        m = getattr(self, "_e_" + type(node).__name__, None)
        if m is None:
            self.unsupported(node, frame)
        return m(node, frame)

    def _e_Constant(self, n, f):
        return n.value

    def _e_Name(self, n, f):
        return f.lookup(n.id, n)

    def _e_Attribute(self, n, f):
        obj = self.eval(n.value, f)
        try:
            return getattr(obj, n.attr)
        except AttributeError as e:
            raise _error(f.src, n, str(e), AttributeError) from None

    def _e_BinOp(self, n, f):
        return self._native(_BINOPS[type(n.op)], (self.eval(n.left, f), self.eval(n.right, f)),
                            {}, n, f)

    def _e_UnaryOp(self, n, f):
        v = self.eval(n.operand, f)
        if isinstance(n.op, ast.Not):
            if isinstance(v, Tensor):
                if v.size != 1:             # no truth value, as in PyNative
                    raise truth_error(v, n, f)
                from ..ops.math import logical_not
                return self._native(logical_not, (v,), {}, n, f)
            return not v
        op = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
        return self._native(op[type(n.op)], (v,), {}, n, f)

    def _e_BoolOp(self, n, f):
        """Python's `and`/`or`: the value of one operand. On a Python value it short-circuits
        now; on a one-element tensor it becomes a choice at run time (an If), as PyNative's
        `bool(tensor)` would decide."""
        is_and = isinstance(n.op, ast.And)
        result = self.eval(n.values[0], f)
        for vn in n.values[1:]:
            if not is_symbolic(result):
                if (not self.truth(result, n, f)) if is_and else self.truth(result, n, f):
                    return result
                result = self.eval(vn, f)
            else:
                from .control import select
                other = self.eval(vn, f)
                result = select(self, n, result, other, result, f) if is_and else \
                    select(self, n, result, result, other, f)
        return result

    def _e_Compare(self, n, f):
        from ..ops.math import logical_and
        left = self.eval(n.left, f)
        result = None
        for op, rn in zip(n.ops, n.comparators):
            right = self.eval(rn, f)
            r = self._native(_CMPOPS[type(op)], (left, right), {}, n, f)
            result = r if result is None else (
                self._native(logical_and, (result, r), {}, n, f)
                if isinstance(r, Tensor) or isinstance(result, Tensor) else (result and r))
            left = right
        return result

    def _e_IfExp(self, n, f):
        cond = self.eval(n.test, f)
        if is_symbolic(cond):
            from .control import tensor_ifexp
            return tensor_ifexp(self, n, cond, f)
        return self.eval(n.body if self.truth(cond, n, f) else n.orelse, f)

    def _e_Subscript(self, n, f):
        return self._native(operator.getitem, (self.eval(n.value, f), self.eval(n.slice, f)), {},
                            n, f)

    def _e_Slice(self, n, f):
        parts = [None if p is None else self.eval(p, f) for p in (n.lower, n.upper, n.step)]
        for p, pn in zip(parts, (n.lower, n.upper, n.step)):
            if isinstance(p, Tensor):
                raise _error(f.src, pn, "slice bounds must be known at compile time, got a "
                             "tensor", hint="use ops.gather with an index tensor")
        return slice(*parts)

    def _e_Tuple(self, n, f):
        return tuple(self._elts(n.elts, f))

    def _e_List(self, n, f):
        return list(self._elts(n.elts, f))

    def _elts(self, elts, f):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self.eval(e.value, f))
            else:
                out.append(self.eval(e, f))
        return out

    def _e_Dict(self, n, f):
        d = {}
        for k, v in zip(n.keys, n.values):
            if k is None:
                d.update(self.eval(v, f))
            else:
                d[self.eval(k, f)] = self.eval(v, f)
        return d

    def _e_ListComp(self, n, f):
        return self._comprehension(n, f, lambda fr: self.eval(n.elt, fr), list)

    def _e_GeneratorExp(self, n, f):
        return self._comprehension(n, f, lambda fr: self.eval(n.elt, fr), tuple)

    def _e_DictComp(self, n, f):
        return dict(self._comprehension(
            n, f, lambda fr: (self.eval(n.key, fr), self.eval(n.value, fr)), list))

    def _comprehension(self, n, f, elt, kind):
        out = []
        fr = f.copy()

        def loop(gens):
            if not gens:
                out.append(elt(fr))
                return
            g = gens[0]
            for item in self.eval(g.iter, fr):
                self.assign(g.target, item, fr)
                conds = [self.eval(c, fr) for c in g.ifs]
                if all(self.truth(c, g, fr) for c in conds):
                    loop(gens[1:])
        loop(n.generators)
        return kind(out)

    def _e_JoinedStr(self, n, f):
        parts = []
        for v in n.values:
            x = self.eval(v.value if isinstance(v, ast.FormattedValue) else v, f)
            if isinstance(x, Tensor) and is_symbolic(x):
                raise _error(f.src, v, "an f-string cannot format a tensor value at compile "
                             "time", hint="print the tensor as its own argument: print('x', x)")
            if isinstance(v, ast.FormattedValue):
                spec = self.eval(v.format_spec, f) if v.format_spec is not None else ""
                x = format({114: repr, 115: str, 97: ascii}.get(v.conversion, lambda y: y)(x),
                           spec)
            parts.append(str(x))
        return "".join(parts)

    def _e_Lambda(self, n, f):
        return ParsedLambda(self, n, f)

    def _e_Call(self, n, f):
        func = self.eval(n.func, f)
        args = self._elts(n.args, f)
        kwargs = {}
        for k in n.keywords:
            if k.arg is None:
                kwargs.update(self.eval(k.value, f))
            else:
                kwargs[k.arg] = self.eval(k.value, f)
        saved, self.site = self.site, (n, f)
        try:
            return self.call(func, args, kwargs, n, f)
        finally:
            self.site = saved               # (holds no frame once the parse is done)

    # -- calls ---------------------------------------------------------------------------------
    def call(self, func, args, kwargs, node, frame):
        from ...nn.cell import Cell
        if func is builtins.print:
            from .control import emit_print
            return emit_print(self, args, kwargs, node, frame)
        if func is builtins.super and not args:
            cls = frame.closure.get("__class__")
            first = next(iter(frame.local.values()), None)
            if cls is None or first is None:
                raise _error(frame.src, node, "super() needs the enclosing class here")
            return super(cls, first)
        if isinstance(func, Cell):
            return self._located_call(lambda: self.call_cell(func, args, kwargs), node, frame)
        if isinstance(func, ParsedLambda):
            return func(*args, **kwargs)
        if isinstance(func, types.MethodType) and is_user_function(func.__func__):
            if isinstance(func.__self__, Cell) and func.__func__ is type(func.__self__).construct:
                return self.call_cell(func.__self__, args, kwargs)
            return self.call_function(func.__func__, (func.__self__,) + tuple(args), kwargs)
        if is_user_function(func):
            return self.call_function(func, args, kwargs)
        if isinstance(func, type) and issubclass(func, Cell):
            raise _error(frame.src, node, f"creating a Cell ({func.__name__}) inside construct "
                         f"is not supported", hint="create it in __init__ and call it here")
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
        if isinstance(v, Tensor):
            return bool(v)                  # eager executor: a concrete value
        return bool(v)

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
