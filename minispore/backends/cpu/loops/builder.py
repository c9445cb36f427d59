"""The loop-builder protocol the op families of this package are written against, and its tracer.

A `Definition` wraps a function `fn(b, **params)`; `b` is a `Builder`, and the function says what
the op computes with it:
- `b.input(name, rank)`: an input buffer; `buf.dims[k]` is its extent along axis k (a `dim`
  expression: a number the renderer knows statically, or reads from the array at run time);
- `b.output(name, shape, like)`: an output buffer of `shape` (expressions of dims) and the dtype
  of buffer `like`; `b.scratch(name, n)`: a float64 work buffer of n elements;
- `with b.loop(extent, name) as i:` a counted loop over [0, extent), `i` its index (int64);
- `buf[i, j]` loads an element, `b.store(buf, (i, j), value)` stores one (converted to the
  buffer's dtype as numba's array store converts: float64 -> float32 rounds to nearest);
- `b.var(name, init)` a scalar variable (its type is init's), `b.set(var, value)` assigns it;
- values are core/scalar_expr expressions (+, -, *, /, comparisons, where, exp, log, isnan,
  logical_and/or/not) and the three nodes below: `f64(x)`/`i64(x)` convert, `maximum(a, b)` is
  numba's max (b > a ? b : a: a NaN b leaves a).
Values are typed as numba types them: a constant is an int64 or float64 literal, two operands
of different dtypes compute in their unified dtype (float32 with a float literal: float64), so
a definition that accumulates in float64 converts its loads with f64.

`Definition.trace(**params)` runs the function and returns the `Program`: its buffers and its
statement tree (`Loop`, `Assign`, `Store`), which the renderers of backends/cpu/render walk.
Nothing here knows numba or llvmlite.
"""
from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

from ....core import scalar_expr as E


class Buffer:
    """A buffer of a definition: role 'input', 'output' or 'scratch' (float64, rank 1)."""

    def __init__(self, name: str, rank: int, role: str, shape=None, like=None):
        self.name, self.rank, self.role, self.like = name, rank, role, like
        self.shape = tuple(E.lift(s) for s in shape) if shape is not None else None
        self.dims = tuple(E.Expr("dim", self, k) for k in range(rank)) if role == "input" \
            else self.shape

    def __getitem__(self, idx) -> E.Expr:
        idx = idx if isinstance(idx, tuple) else (idx,)
        if len(idx) != self.rank:
            raise IndexError(f"buffer {self.name} has rank {self.rank}, indexed with {len(idx)}")
        return E.Expr("load", self, tuple(E.lift(i) for i in idx))

    def __repr__(self) -> str:
        return f"Buffer({self.name})"


class Var(E.Expr):
    """A scalar variable (op 'var') or a loop index (op 'index'): an expression with a name."""

    __slots__ = ("name",)

    def __init__(self, op: str, name: str):
        super().__init__(op, name)
        self.name = name


@dataclass
class Loop:
    index: Var
    extent: E.Expr
    body: list = field(default_factory=list)


@dataclass
class Assign:
    var: Var
    value: E.Expr


@dataclass
class Store:
    buf: Buffer
    index: tuple
    value: E.Expr


@dataclass
class Program:
    """A traced definition: its buffers by role, in declaration order, and its statements."""
    definition: "Definition"
    params: dict
    inputs: list
    outputs: list
    scratch: list
    body: list


def f64(x) -> E.Expr:
    return E.Expr("cast", E.lift(x), "float64")


def i64(x) -> E.Expr:
    return E.Expr("cast", E.lift(x), "int64")


def maximum(a, b) -> E.Expr:
    """numba's max(a, b): b where b > a, else a."""
    return E.Expr("max", E.lift(a), E.lift(b))


class Builder:
    """Records a definition's buffers and statements (see the module docstring)."""

    def __init__(self):
        self.inputs, self.outputs, self.scratch_bufs = [], [], []
        self.body: list = []
        self._block = self.body
        self._open: list = []                     # names of the enclosing loops' indices
        self._vars: set = set()

    def _name_free(self, name: str):
        taken = {b.name for b in self.inputs + self.outputs + self.scratch_bufs}
        if name in taken or name in self._open:
            raise ValueError(f"loop definition: name {name!r} is already taken")

    def input(self, name: str, rank: int) -> Buffer:
        self._name_free(name)
        buf = Buffer(name, rank, "input")
        self.inputs.append(buf)
        return buf

    def output(self, name: str, shape, like: Buffer) -> Buffer:
        self._name_free(name)
        buf = Buffer(name, len(shape), "output", shape, like)
        self.outputs.append(buf)
        return buf

    def scratch(self, name: str, n) -> Buffer:
        self._name_free(name)
        buf = Buffer(name, 1, "scratch", (n,))
        self.scratch_bufs.append(buf)
        return buf

    @contextmanager
    def loop(self, extent, name: str):
        if name in self._open or name in self._vars:
            raise ValueError(f"loop definition: loop index {name!r} is already taken")
        lp = Loop(Var("index", name), E.lift(extent))
        self._block.append(lp)
        outer = self._block
        self._block = lp.body
        self._open.append(name)
        try:
            yield lp.index
        finally:
            self._open.pop()
            self._block = outer

    def var(self, name: str, init) -> Var:
        if name in self._open:
            raise ValueError(f"loop definition: {name!r} is a loop index")
        v = Var("var", name)
        self._vars.add(name)
        self._block.append(Assign(v, E.lift(init)))
        return v

    def set(self, v: Var, value) -> None:
        self._block.append(Assign(v, E.lift(value)))

    def store(self, buf: Buffer, idx, value) -> None:
        idx = idx if isinstance(idx, tuple) else (idx,)
        if buf.role == "input" or len(idx) != buf.rank:
            raise ValueError(f"loop definition: cannot store {buf.name}[{len(idx)} indices]")
        self._block.append(Store(buf, tuple(E.lift(i) for i in idx), E.lift(value)))


class Definition:
    """One op family member's algorithm: `fn(builder, **params)`. `renders` counts, per renderer
    name ('numba', 'llvm'), the programs rendered from it."""

    def __init__(self, fn):
        self.fn = fn
        self.name = f"{fn.__module__}.{fn.__qualname__}"
        self.renders: Counter = Counter()
        self.__doc__ = fn.__doc__

    def trace(self, **params) -> Program:
        b = Builder()
        self.fn(b, **params)
        return Program(self, dict(params), b.inputs, b.outputs, b.scratch_bufs, b.body)

    def __repr__(self) -> str:
        return f"Definition({self.name})"


def definition(fn) -> Definition:
    return Definition(fn)
