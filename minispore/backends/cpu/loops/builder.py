"""The loop-builder protocol the op families of this package are written against, and its tracer.

A `Definition` wraps a function `fn(b, **params)`; `b` is a `Builder`, and the function says what
the op computes with it:
- `b.input(name, rank)`: an input buffer; `buf.dims[k]` is its extent along axis k (a `dim`
  expression: a number the renderer knows statically, or reads from the array at run time);
- `b.output(name, shape, like)`: an output buffer of `shape` (expressions of dims) and the dtype
  of buffer `like`; `b.scratch(name, n)`: a float64 work buffer of n elements (`dtype=
  'float32'`: float32);
- `with b.loop(extent, name) as i:` a counted loop over [0, extent), `i` its index (int64);
- `buf[i, j]` loads an element, `b.store(buf, (i, j), value)` stores one (converted to the
  buffer's dtype as numba's array store converts: float64 -> float32 rounds to nearest);
- `b.var(name, init)` a scalar variable (its type is init's), `b.set(var, value)` assigns it;
- values are core/scalar_expr expressions (+, -, *, /, comparisons, where, exp, log, isnan,
  logical_and/or/not) and the three nodes below: `f64(x)`/`i64(x)` convert, `maximum(a, b)` is
  numba's max (b > a ? b : a: a NaN b leaves a);
- `b.scalar(name, dtype)`: a scalar argument of the kernel ('int64', 'uint64', 'float32' or
  'float64'), after the input buffers; it may size an output (`b.output(name, (n,), dtype=...)`
  declares an output of a fixed dtype instead of a buffer's);
- unsigned 64-bit words: `u64(x)` converts (an int64 keeps its bits), and two uint64 operands
  add and multiply modulo 2**64, `^`, `>>` (logical) and `%` as numba computes them; a uint64
  meeting another dtype is refused (numba would compute it in float64), so constants are
  written `u64(c)`; `f64(u)` is the unsigned conversion;
- `libm(name, x)`: the C library's log, cos or sqrt of a float (what numba's math.log calls),
  where the result must be libm's bits rather than vecmath's;
- `with b.when(cond):` the statements inside run only where cond holds (a guarded load: a
  pool window's tap that may lie in the padding);
- `within(v, size)`: 0 <= v < size for integers (numba's chained comparison);
- `like(buf, x)`: x converted to buffer buf's dtype (a running maximum kept in the input's own
  dtype, as numba's `x.dtype.type(-np.inf)`);
- `b.loop(extent, name, start=s, step=k)` runs over range(s, extent, k) (an unrolled loop and
  its remainder); `template(expr, args, compute, dtype)` evaluates an elementwise op's
  scalar_expr template over builder values as the elementwise kernels do (a fused group's
  value, loops/fused_reduce.py);
- `b.fail_if(cond, site, value)`: where cond holds the kernel stops, reporting check site `site`
  (bound by the caller to a core/index_check.IndexCheck) and the int64 `value`: the eager
  kernel raises site.error(value), the native program returns its error code (an index out of
  range).
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
    """A buffer of a definition: role 'input', 'output' or 'scratch' (rank 1, float64 or float32); an
    output has the dtype of buffer `like`, or `dtype` (a numpy dtype name)."""

    def __init__(self, name: str, rank: int, role: str, shape=None, like=None, dtype=None):
        self.name, self.rank, self.role, self.like = name, rank, role, like
        self.dtype = dtype
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
    start: E.Expr = None            # None: 0
    step: int = 1


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
class When:
    cond: E.Expr
    body: list = field(default_factory=list)


@dataclass
class Fail:
    """Where cond holds, the kernel stops and reports check site `site` (a name the caller binds
    to a core/index_check.IndexCheck) with the offending int64 `value`; nothing is returned."""
    cond: E.Expr
    site: str
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
    scalars: list = field(default_factory=list)


def f64(x) -> E.Expr:
    return E.Expr("cast", E.lift(x), "float64")


def i64(x) -> E.Expr:
    return E.Expr("cast", E.lift(x), "int64")


def maximum(a, b) -> E.Expr:
    """numba's max(a, b): b where b > a, else a."""
    return E.Expr("max", E.lift(a), E.lift(b))


def template(expr: E.Expr, args, compute: str, dtype: str) -> E.Expr:
    """The core/scalar_expr template `expr` over arg(i) = args[i], computed as the elementwise
    kernels compute it (its constants in the float dtype `compute`, a bool argument as a bool,
    the others converted to `compute`) and rounded to the float dtype `dtype`, as the unfused
    kernel would store it (op 'template': expr, args, compute, dtype)."""
    return E.Expr("template", expr, tuple(E.lift(x) for x in args), compute, dtype)


def product(dims) -> E.Expr:
    """The product of extents (dims or numbers): 1 for none."""
    acc = None
    for d in dims:
        acc = d if acc is None else acc * d
    return E.lift(1) if acc is None else acc


def within(v, size) -> E.Expr:
    """0 <= v < size, of integers (a window's tap inside the image)."""
    return E.Expr("within", E.lift(v), E.lift(size))


def like(buf: "Buffer", x) -> E.Expr:
    """x converted to buffer buf's dtype (a scratch buffer's declared one)."""
    return E.Expr("like", E.lift(x), buf)


def u64(x) -> E.Expr:
    """x as an unsigned 64-bit word (an int64 or an integer constant keeps its low 64 bits)."""
    if isinstance(x, int) and not isinstance(x, bool):
        x &= 0xFFFFFFFFFFFFFFFF
    return E.Expr("cast", E.lift(x), "uint64")


LIBM = ("log", "cos", "sqrt")


def libm(name: str, x) -> E.Expr:
    """The C library's `name` (log, cos, sqrt) of float x."""
    if name not in LIBM:
        raise ValueError(f"loop definition: libm has {LIBM}, not {name!r}")
    return E.Expr("libm", name, E.lift(x))


SCRATCH_DTYPES = ("float64", "float32")
SCALAR_DTYPES = ("int64", "uint64", "float32", "float64")


class Scalar(E.Expr):
    """A scalar argument of a definition (op 'scalar'): its name and numpy dtype name."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: str):
        super().__init__("scalar", name, dtype)
        self.name, self.dtype = name, dtype


class Builder:
    """Records a definition's buffers and statements (see the module docstring)."""

    def __init__(self):
        self.inputs, self.outputs, self.scratch_bufs = [], [], []
        self.scalars: list = []
        self.body: list = []
        self._block = self.body
        self._open: list = []                     # names of the enclosing loops' indices
        self._vars: set = set()

    def _name_free(self, name: str):
        taken = {b.name for b in self.inputs + self.outputs + self.scratch_bufs + self.scalars}
        if name in taken or name in self._open:
            raise ValueError(f"loop definition: name {name!r} is already taken")

    def input(self, name: str, rank: int) -> Buffer:
        self._name_free(name)
        buf = Buffer(name, rank, "input")
        self.inputs.append(buf)
        return buf

    def output(self, name: str, shape, like: Buffer = None, dtype: str = None) -> Buffer:
        self._name_free(name)
        if (like is None) == (dtype is None):
            raise ValueError(f"loop definition: output {name} needs one of like= and dtype=")
        buf = Buffer(name, len(shape), "output", shape, like, dtype)
        self.outputs.append(buf)
        return buf

    def scalar(self, name: str, dtype: str) -> Scalar:
        self._name_free(name)
        if dtype not in SCALAR_DTYPES:
            raise ValueError(f"loop definition: scalar {name} of {dtype!r}, not one of "
                             f"{SCALAR_DTYPES}")
        v = Scalar(name, dtype)
        self.scalars.append(v)
        return v

    def scratch(self, name: str, n, dtype: str = "float64") -> Buffer:
        """A work buffer of n elements of `dtype` ('float64', or 'float32': a running max/min
        kept in a float32 value's own dtype)."""
        self._name_free(name)
        if dtype not in SCRATCH_DTYPES:
            raise ValueError(f"loop definition: scratch {name} of {dtype!r}, not one of "
                             f"{SCRATCH_DTYPES}")
        buf = Buffer(name, 1, "scratch", (n,), dtype=dtype)
        self.scratch_bufs.append(buf)
        return buf

    @contextmanager
    def loop(self, extent, name: str, start=None, step: int = 1):
        """A loop over range(start, extent, step) (start None: 0; step a positive int)."""
        if name in self._open or name in self._vars:
            raise ValueError(f"loop definition: loop index {name!r} is already taken")
        if not isinstance(step, int) or step < 1:
            raise ValueError(f"loop definition: loop {name!r} has step {step!r}")
        lp = Loop(Var("index", name), E.lift(extent), start=None if start is None else
                  E.lift(start), step=step)
        self._block.append(lp)
        outer = self._block
        self._block = lp.body
        self._open.append(name)
        try:
            yield lp.index
        finally:
            self._open.pop()
            self._block = outer

    @contextmanager
    def when(self, cond):
        """The statements of the block run only where `cond` holds."""
        st = When(E.lift(cond))
        self._block.append(st)
        outer = self._block
        self._block = st.body
        try:
            yield
        finally:
            self._block = outer

    def fail_if(self, cond, site: str, value) -> None:
        """Stop the kernel with check site `site`'s IndexError of `value` where cond holds."""
        self._block.append(Fail(E.lift(cond), site, E.lift(value)))

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


def fail_sites(prog: Program) -> tuple:
    """The check sites of prog's Fail statements, in order of first appearance (a kernel's
    error code k + 1 names the k-th)."""
    found: list = []

    def walk(body):
        for st in body:
            if isinstance(st, Fail) and st.site not in found:
                found.append(st.site)
            walk(getattr(st, "body", ()))
    walk(prog.body)
    return tuple(found)


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
        return Program(self, dict(params), b.inputs, b.outputs, b.scratch_bufs, b.body,
                       b.scalars)

    def __repr__(self) -> str:
        return f"Definition({self.name})"


def definition(fn) -> Definition:
    return Definition(fn)
