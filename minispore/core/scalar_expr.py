"""A tiny scalar expression language for elementwise templates.

An elementwise op declares `scalar=lambda x, y: ...` written with Python operators and the
functions below; calling it on `Arg`s builds an expression tree that every backend renders into
its own kernel language (numba Python for the CPU, CUDA C for the GPU, the simulated Vector unit).
One template thus serves every backend and every fused kernel (tinygrad's UOps, in small).
The operations and functions are those of scalar_math.TABLE.
"""
from __future__ import annotations

from . import scalar_math


class Expr:
    """A node: op is 'arg', 'const', a binary/unary operator name, 'where' or a function name."""

    __slots__ = ("op", "args")

    def __init__(self, op: str, *args):
        self.op = op
        self.args = args

    def __repr__(self) -> str:
        return f"{self.op}{self.args}"

    # arithmetic
    def __add__(self, o): return Expr("add", self, lift(o))
    def __radd__(self, o): return Expr("add", lift(o), self)
    def __sub__(self, o): return Expr("sub", self, lift(o))
    def __rsub__(self, o): return Expr("sub", lift(o), self)
    def __mul__(self, o): return Expr("mul", self, lift(o))
    def __rmul__(self, o): return Expr("mul", lift(o), self)
    def __truediv__(self, o): return Expr("div", self, lift(o))
    def __rtruediv__(self, o): return Expr("div", lift(o), self)
    def __floordiv__(self, o): return Expr("floordiv", self, lift(o))
    def __mod__(self, o): return Expr("mod", self, lift(o))
    def __pow__(self, o): return Expr("pow", self, lift(o))
    def __neg__(self): return Expr("neg", self)
    # comparisons (produce bool)
    def __lt__(self, o): return Expr("lt", self, lift(o))
    def __le__(self, o): return Expr("le", self, lift(o))
    def __gt__(self, o): return Expr("gt", self, lift(o))
    def __ge__(self, o): return Expr("ge", self, lift(o))
    def eq(self, o): return Expr("eq", self, lift(o))
    # bitwise (ints and bools)
    def __and__(self, o): return Expr("band", self, lift(o))
    def __or__(self, o): return Expr("bor", self, lift(o))
    def __xor__(self, o): return Expr("bxor", self, lift(o))
    def __invert__(self): return Expr("bnot", self)
    def __lshift__(self, o): return Expr("shl", self, lift(o))
    def __rshift__(self, o): return Expr("shr", self, lift(o))
    def ne(self, o): return Expr("ne", self, lift(o))


def lift(v) -> Expr:
    return v if isinstance(v, Expr) else Expr("const", v)


def arg(i: int) -> Expr:
    return Expr("arg", i)


def where(c, a, b) -> Expr:
    return Expr("where", lift(c), lift(a), lift(b))


def _fn(name):
    def f(*xs):
        return Expr(name, *map(lift, xs))
    f.__name__ = name
    return f


# the functions of scalar_math.TABLE that every backend must render: exp, log, log1p, tanh,
# sigmoid, softplus, erf, sin, cos (decomposed), sqrt, floor, ceil, rint, fabs, isnan
for _name in scalar_math.names("decomposed", "intrinsic", "test"):
    globals()[_name] = _fn(_name)
logical_and, logical_or, logical_not = map(_fn, scalar_math.names("logical"))

BINARY_OPS = tuple(n for n, op in scalar_math.TABLE.items() if op.arity == 2)
UNARY_OPS = tuple(n for n, op in scalar_math.TABLE.items() if op.arity == 1)


def build(template, arity: int) -> Expr:
    """Evaluate a template lambda on symbolic arguments."""
    return lift(template(*(arg(i) for i in range(arity))))
