"""The evaluation of Python expressions in parsed code: `Expressions`, the `_e_<node>` methods
of the Parser (names, attributes, operators, comparisons, `and`/`or`/`not`, conditional
expressions, subscripts, literals, comprehensions, f-strings, lambdas, calls), and
`ParsedLambda`, a lambda or nested def met in parsed code. On a Python value an expression is
computed now; on a tensor it becomes IR through the ops it calls (parser.py, DESIGN.md "Graph
mode")."""
from __future__ import annotations

import ast
import operator

from ..mutable import SymScalar, scalar_kind, wrap_result
from ..tensor import Tensor
from .builder import is_symbolic
from .guards import record_attribute, record_fresh
from .semantics import truth_error
from .source import Frame
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



def make_cell(parser, cls, args, kwargs, node, frame: Frame):
    """`cls(*args, **kwargs)` for a Cell class called in parsed code: the Cell is built now, at
    compile time, from Python values (as MindSpore builds a Cell made in construct), and its
    Parameters enter the graph like any Cell's. It lives with the compiled graph only, so the
    compile cache neither guards its attributes nor keys on it."""
    for i, a in enumerate(list(args) + list(kwargs.values())):
        if is_symbolic(a):              # MindSpore's TypeError
            raise _error(frame.src, node, f"When creating an instance of '{cls.__name__}', all "
                         f"arguments are required to be constants, but input {i} is a tensor "
                         f"computed in the graph", TypeError,
                         hint="create it in __init__, or pass Python values (numbers, shapes)")
    cell = parser._native(cls, args, kwargs, node, frame)
    made = getattr(parser, "made_cells", None)
    if made is None:
        made = parser.made_cells = set()
    for _, c in cell.cells_and_names():
        made.add(id(c))
        record_fresh(c)
    return cell


class Expressions:
    """The expression half of Parser (a mixin: `self` is the Parser)."""

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
        if isinstance(obj, Tensor) and n.attr in ("asnumpy", "numpy", "item", "tolist"):
            from .fallback import value_reader      # LAX: the value is read at run time
            read = value_reader(obj, n.attr, ast.unparse(n))
            if read is not None:
                return read
        if getattr(type(obj), "_ms_runtime_value", False):
            return getattr(obj, n.attr)         # deferred to run time: not a guarded constant
        try:
            v = getattr(obj, n.attr)
        except AttributeError as e:
            raise _error(f.src, n, str(e), AttributeError) from None
        record_attribute(obj, n.attr, v, f, n)     # a compile-time constant: in the cache key
        return v

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
                out = self._native(logical_not, (v,), {}, n, f)
                return wrap_result(out, bool) if isinstance(v, SymScalar) else out
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
                kind = scalar_kind(result, other)       # numbers: a variable scalar
                result = select(self, n, result, other, result, f) if is_and else \
                    select(self, n, result, result, other, f)
                if kind is not None:
                    result = wrap_result(result, kind)
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
        from .fallback import condition
        cond = condition(self.eval(n.test, f))
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
