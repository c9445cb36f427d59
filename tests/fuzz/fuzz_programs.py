"""Random straight-line programs for the differential fuzzer (test_fuzz_programs.py): what a
program is, how hypothesis draws one, and how it runs.

A `Program` is a list of inputs (shape, dtype, values) and 3-12 steps, each one op over earlier
values: elementwise and broadcasting arithmetic, comparisons and logical ops (bool), casts,
reductions, matmul, reshape, transpose, concat and Tensor indexing. `draw_program` builds it from
hypothesis draws (so hypothesis shrinks a failure to a short program); every step is checked by
the primitive's `infer` while drawing, so only well-typed programs are generated. A program is
executed three ways:

- `reference(prog)`: each step's numpy reference (`REGISTRY[op].ref`, numpy indexing), in the
  program's dtypes; with `fd64=True` every float computes in float64 (finite differences).
- `source(prog)`: Python source of `prog_fn(*inputs)` calling the primitives (`apply`) and
  Tensor indexing, registered with linecache so `ms.jit` can parse it; `loss_fn` adds
  sum(output * weight) over the float outputs, for gradients.
- the test runs `prog_fn` in PyNative and compiled at O0/O1/O2 and compares.
"""
from __future__ import annotations

import itertools
import linecache
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

import minispore as ms
from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY, Meta, apply

DTYPES = {"float32": dt.float32, "float64": dt.float64, "int32": dt.int32, "bool": dt.bool_}
FLOATS = (dt.float32, dt.float64)
UNARY_FLOAT = ("neg", "abs", "sin", "cos", "tanh", "sigmoid", "relu", "exp", "square")
UNARY_INT = ("neg", "abs")
BINARY_NUM = ("add", "sub", "mul", "maximum", "minimum")
BINARY_BOOL = ("logical_and", "logical_or", "add", "mul")
COMPARE = ("greater", "less", "equal", "greater_equal", "not_equal")
REDUCE = ("sum", "mean", "max", "min")
KINDS = ("unary", "binary", "compare", "logical_not", "where", "cast", "reduce", "matmul",
         "reshape", "transpose", "getitem", "concat")
# steps whose gradient is not the derivative of the reference function (a float cast to an
# integer or bool passes the gradient straight through, as MindSpore's Cast bprop does; ties of
# max/min share it): programs with one are compared across modes, not with finite differences
NOT_DIFFERENTIABLE = ("cast-to-discrete", "max", "min")


@dataclass
class Step:
    kind: str                     # 'prim' (apply an op) or 'getitem'
    name: str                     # the primitive, or the index expression for getitem
    args: tuple                   # indices of the values it reads
    attrs: dict = field(default_factory=dict)
    key: tuple = ()               # getitem: the numpy key
    tag: str = ""                 # NOT_DIFFERENTIABLE tags


@dataclass
class Program:
    inputs: list                  # numpy arrays
    steps: list
    metas: list                   # Meta of every value v0, v1, ... in the order they are made
    outputs: tuple                # value indices returned
    made_by: list                 # per value: ('input', i) or ('step', j)

    def describe(self) -> str:
        lines = [f"v{k}: {a.dtype}{list(a.shape)} = {np.array2string(a, threshold=30)}"
                 for k, a in zip(input_values(self), self.inputs)]
        return "\n".join(lines) + "\n" + source_text(self)

    @property
    def differentiable(self) -> bool:
        return not any(s.tag in NOT_DIFFERENTIABLE for s in self.steps)


# ---------------------------------------------------------------- drawing ----------------------
def _shape(draw, rank=None):
    rank = draw(st.integers(0, 3)) if rank is None else rank
    return tuple(draw(st.sampled_from((1, 2, 3, 4, 0, 2, 3))) for _ in range(rank))


def _values(rng, shape, d):
    if d is dt.bool_:
        return rng.random(shape) < 0.5
    if d.is_int:
        return rng.integers(-5, 6, shape).astype(d.np)
    return rng.uniform(-2.0, 2.0, shape).astype(d.np)


def _broadcast_partner(draw, shape):
    """A shape that broadcasts with `shape`: equal, a suffix, or with some dims set to 1."""
    how = draw(st.sampled_from(("same", "suffix", "ones", "scalar")))
    if how == "same":
        return shape
    if how == "suffix":
        return shape[draw(st.integers(0, len(shape))):]
    if how == "scalar":
        return ()
    return tuple(1 if draw(st.booleans()) else s for s in shape)


def _infer(name, metas, attrs):
    op = REGISTRY[name]
    full = dict(op.attrs)
    full.update(attrs)
    out = op.infer(*metas, **full)
    return out


class _Builder:
    def __init__(self, draw, rng):
        self.draw, self.rng = draw, rng
        self.inputs, self.metas, self.steps, self.made_by = [], [], [], []

    def new_input(self, shape, d):
        self.inputs.append(_values(self.rng, shape, d))
        self.metas.append(Meta(tuple(shape), d))
        self.made_by.append(("input", len(self.inputs) - 1))
        return len(self.metas) - 1

    def pick(self, pred=lambda m: True):
        ok = [i for i, m in enumerate(self.metas) if pred(m)]
        return self.draw(st.sampled_from(ok[::-1])) if ok else None

    def operand_like(self, shape, dtypes):
        """An existing value broadcastable with `shape` of one of `dtypes`, or a new input."""
        partner = _broadcast_partner(self.draw, shape)
        d = self.draw(st.sampled_from(dtypes))
        cands = [i for i, m in enumerate(self.metas) if m.dtype in dtypes and
                 _broadcastable(m.shape, shape)]
        if cands and self.draw(st.booleans()):
            return self.draw(st.sampled_from(cands))
        return self.new_input(partner, d)

    def add(self, step: Step, meta) -> bool:
        self.steps.append(step)
        self.metas.append(meta)
        self.made_by.append(("step", len(self.steps) - 1))
        return True

    def prim(self, name, args, attrs=None, tag="") -> bool:
        attrs = attrs or {}
        try:
            meta = _infer(name, [self.metas[a] for a in args], attrs)
        except (ValueError, TypeError, NotImplementedError, IndexError):
            return False
        if not hasattr(meta, "dtype"):          # several outputs: not generated
            return False
        return self.add(Step("prim", name, tuple(args), attrs, tag=tag), meta)


def _broadcastable(a, b) -> bool:
    for x, y in zip(a[::-1], b[::-1]):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _step(b: _Builder, kind: str) -> bool:
    draw = b.draw
    x = b.pick()
    m = b.metas[x]
    if kind == "unary":
        if m.dtype in FLOATS:
            return b.prim(draw(st.sampled_from(UNARY_FLOAT)), [x])
        if m.dtype is dt.int32:
            return b.prim(draw(st.sampled_from(UNARY_INT)), [x])
        return False
    if kind == "binary":
        if m.dtype is dt.bool_:
            y = b.operand_like(m.shape, (dt.bool_,))
            return b.prim(draw(st.sampled_from(BINARY_BOOL)), [x, y])
        mixed = draw(st.sampled_from(((m.dtype,), (dt.float32, dt.float64, dt.int32),
                                      (dt.bool_,))))
        y = b.operand_like(m.shape, mixed)
        args = [x, y] if draw(st.booleans()) else [y, x]
        return b.prim(draw(st.sampled_from(BINARY_NUM)), args)
    if kind == "compare":
        if m.dtype is dt.bool_:
            return False
        y = b.operand_like(m.shape, (m.dtype,))
        return b.prim(draw(st.sampled_from(COMPARE)), [x, y])
    if kind == "logical_not":
        return m.dtype is dt.bool_ and b.prim("logical_not", [x])
    if kind == "where":
        c = b.pick(lambda mm: mm.dtype is dt.bool_ and _broadcastable(mm.shape, m.shape))
        if c is None:
            return False
        y = b.operand_like(m.shape, (m.dtype,))
        return b.prim("where", [c, x, y])
    if kind == "cast":
        to = draw(st.sampled_from(tuple(DTYPES.values())))
        tag = "cast-to-discrete" if m.dtype in FLOATS and to not in FLOATS else ""
        return b.prim("cast", [x], {"dtype": to}, tag)
    if kind == "reduce":
        name = draw(st.sampled_from(REDUCE))
        if not m.shape:
            axis = None
        elif draw(st.booleans()):
            axis = draw(st.integers(-len(m.shape), len(m.shape) - 1))
        else:
            axis = tuple(sorted(draw(st.sets(st.integers(0, len(m.shape) - 1), min_size=1))))
        attrs = {"axis": axis, "keep_dims": draw(st.booleans())}
        return b.prim(name, [x], attrs, tag=name if name in ("max", "min") else "")
    if kind == "matmul":
        if len(m.shape) != 2 or m.dtype not in FLOATS:
            return False
        n = draw(st.sampled_from((1, 2, 3, 0)))
        y = b.new_input((m.shape[1], n), m.dtype)
        return b.prim("matmul", [x, y])
    if kind == "reshape":
        size = int(np.prod(m.shape, dtype=np.int64))
        shape = _factor(draw, size)
        if shape is None:
            return False
        if size and draw(st.booleans()):
            j = draw(st.integers(0, len(shape) - 1)) if shape else None
            if j is not None:
                shape = shape[:j] + (-1,) + shape[j + 1:]
        return b.prim("reshape", [x], {"shape": shape})
    if kind == "transpose":
        perm = tuple(draw(st.permutations(range(len(m.shape)))))
        return b.prim("transpose", [x], {"perm": perm})
    if kind == "concat":
        if not m.shape:
            return False
        axis = draw(st.integers(0, len(m.shape) - 1))
        other = list(m.shape)
        other[axis] = draw(st.sampled_from((0, 1, 2)))
        y = b.new_input(tuple(other), m.dtype)
        try:
            meta = REGISTRY["concat"].infer(m, b.metas[y], axis=axis)
        except (ValueError, TypeError):
            return False
        return b.add(Step("prim", "concat", (x, y), {"axis": axis}), meta)
    if kind == "getitem":
        if not m.shape:
            return False
        key = []
        for s in m.shape:
            how = draw(st.sampled_from(("all", "slice", "int", "reverse")))
            if how == "int" and s:
                key.append(draw(st.integers(-s, s - 1)))
            elif how == "slice":
                lo = draw(st.integers(-s - 1, s + 1))
                key.append(slice(lo, draw(st.integers(-s - 1, s + 1)),
                                 draw(st.sampled_from((1, 2, -1)))))
            elif how == "reverse":
                key.append(slice(None, None, -1))
            else:
                key.append(slice(None))
        key = tuple(key)
        out = np.empty(m.shape)[key]
        return b.add(Step("getitem", _key_text(key), (x,), key=key), Meta(out.shape, m.dtype))
    raise AssertionError(kind)


def _factor(draw, size):
    """A random shape with `size` elements (rank 0-3), or None."""
    if size == 0:
        return tuple(draw(st.sampled_from(((0,), (0, 2), (2, 0, 1), (3, 0)))))
    dims = []
    rest = size
    for _ in range(draw(st.integers(0, 2))):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divs))
        dims.append(d)
        rest //= d
    if rest != 1 or not dims:
        dims.append(rest)
    return tuple(dims) if size != 1 or draw(st.booleans()) else ()


def _key_text(key) -> str:
    def one(k):
        if isinstance(k, slice):
            return ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step))
        return str(k)
    return ", ".join(one(k) for k in key) + ("," if len(key) == 1 else "")


@st.composite
def programs(draw, min_steps=3, max_steps=12):
    """A Program of min_steps..max_steps well-typed steps over 1-3 initial inputs."""
    seed = draw(st.integers(0, 2 ** 16))
    b = _Builder(draw, np.random.default_rng(seed))
    for _ in range(draw(st.integers(1, 2))):
        b.new_input(_shape(draw), draw(st.sampled_from(tuple(DTYPES.values()))))
    n = draw(st.integers(min_steps, max_steps))
    tries = 0
    while len(b.steps) < n and tries < 20 * n:
        tries += 1
        _step(b, draw(st.sampled_from(KINDS)))
    made = [k for k, (what, _) in enumerate(b.made_by) if what == "step"]
    last = made[-1] if made else len(b.metas) - 1
    extra = draw(st.sets(st.sampled_from(made), max_size=2)) if made else set()
    outs = tuple(sorted(set(extra) | {last}))
    return Program(b.inputs, b.steps, b.metas, outs, b.made_by)


def input_values(prog: Program) -> list:
    """The value index of each input, in input order."""
    return [k for k, (what, _) in enumerate(prog.made_by) if what == "input"]


# ---------------------------------------------------------------- running ----------------------
def reference(prog: Program, inputs=None, fd64: bool = False) -> list:
    """The outputs of `prog` from the numpy references, in order."""
    ins = [np.asarray(a) for a in (prog.inputs if inputs is None else inputs)]
    if fd64:
        ins = [v.astype(np.float64) if v.dtype.kind == "f" else v for v in ins]
    vals = []
    for what, i in prog.made_by:
        if what == "input":
            vals.append(ins[i])
            continue
        s = prog.steps[i]
        xs = [vals[a] for a in s.args]
        if s.kind == "getitem":
            vals.append(np.asarray(xs[0][s.key]))
            continue
        op = REGISTRY[s.name]
        full = dict(op.attrs)
        full.update(s.attrs)
        if fd64 and s.name == "cast" and full["dtype"] is dt.float32:
            full["dtype"] = dt.float64
        vals.append(np.asarray(op.ref(*xs, **full)))
    return [vals[k] for k in prog.outputs]


_files = itertools.count()


def source_text(prog: Program, loss: bool = False) -> str:
    params = [f"v{k}" for k in input_values(prog)]
    float_outs = [k for k in prog.outputs if prog.metas[k].dtype in FLOATS]
    if loss:
        params += [f"w{j}" for j in range(len(float_outs))]
    lines = [f"def {'loss_fn' if loss else 'prog_fn'}({', '.join(params)}):"]
    for k, (what, j) in enumerate(prog.made_by):
        if what == "input":
            continue
        s = prog.steps[j]
        args = ", ".join(f"v{a}" for a in s.args)
        if s.kind == "getitem":
            lines.append(f"    v{k} = v{s.args[0]}[{s.name}]")
            continue
        attrs = "".join(f", {name}={_attr_text(v)}" for name, v in s.attrs.items())
        lines.append(f"    v{k} = apply(P[{s.name!r}], {args}{attrs})")
    if loss:
        terms = [f"apply(P['sum'], apply(P['mul'], v{k}, w{j}))"
                 for j, k in enumerate(float_outs)]
        lines.append("    return " + " + ".join(terms))
    else:
        lines.append("    return " + ", ".join(f"v{k}" for k in prog.outputs) + ",")
    return "\n".join(lines) + "\n"


def _attr_text(v) -> str:
    if isinstance(v, dt.DType):
        return f"D[{v.name!r}]" if v.name in D else f"D[{str(v)!r}]"
    return repr(v)


D = {d.name: d for d in DTYPES.values()}


def compile_source(prog: Program, loss: bool = False):
    """The function of `source_text`, defined from a linecache-registered pseudo file (so
    ms.jit's parser can read its source)."""
    text = source_text(prog, loss)
    name = f"<fuzz-program-{next(_files)}>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    env = {"apply": apply, "P": REGISTRY, "D": D, "ms": ms}
    exec(compile(text, name, "exec"), env)
    return env["loss_fn" if loss else "prog_fn"]
