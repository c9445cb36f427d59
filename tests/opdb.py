"""The op database: one OpCase per op in minispore.core.primitive.REGISTRY, primitives and
composites alike (a composite's cases run its parts: they need no kernel).

Test data only (notes/testing.md 6.2): the semantics (infer, ref, bprop) come from the core
declarations. Each OpCase says how to draw sample inputs for a dtype (including a 0-d case, a
size-0 case, broadcast pairs, negative axes, keep_dims and tuple axes where they apply), which
dtypes the matrix runs, whether the float64 finite-difference check applies, and the exceptions to
the default tolerances, all listed here rather than hidden in the tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY

from helpers import (rand_bool, rand_default, rand_distinct, rand_grid_a, rand_grid_b,
                     rand_nonzero, rand_off_half, rand_positive, rand_pow2_divisor,
                     rand_small_nonneg_int)
import opdb_special

f16, bf16, f32, f64 = dt.float16, dt.bfloat16, dt.float32, dt.float64
i8, i32, i64, u8, b_ = dt.int8, dt.int32, dt.int64, dt.uint8, dt.bool_
# MindSpore 2.10 runs these ops on its wide unsigned dtypes on the CPU (the op cases list them)
u16, u32, u64 = dt.uint16, dt.uint32, dt.uint64


@dataclass(frozen=True)
class Sample:
    args: tuple                      # numpy arrays, the op's tensor inputs
    attrs: dict                      # attributes passed to apply
    desc: str                        # for failure messages
    grad: bool = True                # False: skip this sample in gradient checks (ties, casts)
    diff: tuple | None = None        # positions to differentiate; None: every float argument

    def positions(self) -> tuple:
        if self.diff is not None:
            return self.diff
        return tuple(i for i, a in enumerate(self.args) if np.asarray(a).dtype.kind == "f")


@dataclass(frozen=True)
class OpCase:
    name: str                                    # key into REGISTRY
    samples: Callable                            # (rng, DType) -> list[Sample]
    dtypes: tuple = (f32, f64)                   # forward matrix dtypes
    grad: bool = True                            # float64 finite-difference check
    grad_skip: str = ""                          # why grad is False for a differentiable op
    grad_dtypes: tuple = (f32,)                  # low-precision grads compared with float64's
    order2: bool = True                          # grad-of-grad check (when grad is checked)
    accum: bool = False                          # looser float32 tolerance (sums, matmul)
    tol: dict = field(default_factory=dict)      # per-dtype (rtol, atol) overrides
    xfail: dict = field(default_factory=dict)    # (test, str(dtype) e.g. "Float32", or "*") -> why

    @property
    def op(self):
        return REGISTRY[self.name]

    def xfail_reason(self, test: str, dtype=None) -> str | None:
        return self.xfail.get((test, str(dtype))) or self.xfail.get((test, "*"))


# ---------------------------------------------------------------- sample builders ---------------
UNARY_SHAPES = ((2, 3), (), (5,), (0, 3))
BINARY_SHAPES = (
    ((2, 3), (2, 3)),        # same shape: flat loop
    ((4,), (4,)),            # 1-d: the direct fast path
    ((3, 1), (1, 4)),        # true broadcasting: rank-2 strided loop
    ((2, 3), ()),            # a 0-d operand, hoisted
    ((4,), ()),              # vector (op) 0-d: the 1-d hoisted path
    ((1,), (4,)),            # a one-element vector, hoisted
    ((), (2, 3)),
    ((), ()),                # both 0-d
    ((2, 1, 3), (4, 1)),     # rank-3 broadcasting with a missing leading dim
    ((0, 3), (1, 3)),        # size 0
)


def _fmt_attrs(attrs):
    return ", ".join(f"{k}={v}" for k, v in attrs.items())


def unary(domain=rand_default, shapes=UNARY_SHAPES, attrs_list=({},)):
    def gen(rng, dtype):
        return [Sample((domain(rng, s, dtype),), dict(a), f"x{s} {_fmt_attrs(a)}".strip())
                for s in shapes for a in attrs_list]
    return gen


def binary(dx=rand_default, dy=None, shapes=BINARY_SHAPES):
    dy = dy or dx

    def gen(rng, dtype):
        return [Sample((dx(rng, sx, dtype), dy(rng, sy, dtype)), {}, f"x{sx} y{sy}")
                for sx, sy in shapes]
    return gen


def coarse(rng, shape, dtype):
    """Few distinct values, so comparisons see ties."""
    if dtype is b_:
        return rand_bool(rng, shape)
    v = rng.integers(-2, 3, shape)
    return (v * 0.5 if dtype.is_float else v).astype(dtype.np)


def elementwise_case(name, arity, domains=None, dtypes=(f32, f64), **kw):
    domains = domains or (rand_default,) * arity
    samples = unary(domains[0]) if arity == 1 else binary(*domains)
    kw.setdefault("grad", REGISTRY[name].differentiable)
    return OpCase(name, samples, dtypes, **kw)


# ---------------------------------------------------------------- reductions --------------------
RED_AXES = (
    (None, False), (None, True), (1, False), (-1, True), ((0, 2), False), ((-1, -3), True),
    ((2, 0, 1), False),
)


def reduction(domain=rand_default, empty=True):
    def gen(rng, dtype):
        out = []
        x = domain(rng, (2, 3, 4), dtype)
        for axis, keep in RED_AXES:
            out.append(Sample((x,), {"axis": axis, "keep_dims": keep},
                              f"x(2, 3, 4) axis={axis} keep_dims={keep}"))
        out.append(Sample((domain(rng, (), dtype),), {"axis": None, "keep_dims": False},
                          "x() axis=None"))
        out.append(Sample((domain(rng, (), dtype),), {"axis": 0, "keep_dims": True},
                          "x() axis=0 keep_dims"))
        out.append(Sample((domain(rng, (5,), dtype),), {"axis": 0, "keep_dims": False},
                          "x(5,) axis=0"))
        if empty:
            z = domain(rng, (0, 3), dtype)
            out.append(Sample((z,), {"axis": 0, "keep_dims": False}, "x(0, 3) axis=0"))
            out.append(Sample((z,), {"axis": -1, "keep_dims": True}, "x(0, 3) axis=-1 keep"))
        return out + opdb_special.reduction_samples(dtype)
    return gen


def prod_samples(rng, dtype):
    out = reduction(rand_nonzero)(rng, dtype)
    # zeros: one zero in a slice, two zeros in a slice, a slice of zeros only
    x = rand_nonzero(rng, (3, 4), dtype)
    x[0, 1] = 0
    x[1, 0] = x[1, 2] = 0
    x[2, :] = 0
    for axis in (1, 0, None):
        out.append(Sample((x.copy(),), {"axis": axis, "keep_dims": False},
                          f"x(3, 4) with zeros axis={axis}"))
    return out


def minmax_samples(rng, dtype):
    out = reduction(rand_distinct, empty=False)(rng, dtype)
    t = np.array([[1, 3, 3], [2, 2, 0]]).astype(dtype.np)
    out.append(Sample((t,), {"axis": 1, "keep_dims": False}, "ties x(2, 3) axis=1", grad=False))
    return out


def arg_samples(rng, dtype):
    x = rand_distinct(rng, (2, 3, 4), dtype)
    out = [Sample((x,), {"axis": a, "keep_dims": k}, f"x(2, 3, 4) axis={a} keep_dims={k}")
           for a, k in ((None, False), (None, True), (0, False), (1, True), (-1, False))]
    out.append(Sample((rand_distinct(rng, (), dtype),), {"axis": None, "keep_dims": False},
                      "x() axis=None"))
    t = np.array([[1, 3, 3], [2, 2, 0]]).astype(dtype.np)
    out.append(Sample((t,), {"axis": 1, "keep_dims": False}, "ties: first index wins"))
    return out + opdb_special.reduction_samples(dtype, arg=True)


# ---------------------------------------------------------------- matmul, nn --------------------
def matmul_samples(rng, dtype):
    g = rand_default
    specs = [((2, 3), (3, 4), False, False), ((3, 2), (3, 4), True, False),
             ((2, 3), (4, 3), False, True), ((3, 2), (4, 3), True, True),
             ((2, 2, 3), (3, 4), False, False), ((2, 1, 2, 3), (3, 3, 2), False, False),
             ((1, 1), (1, 1), False, False), ((0, 3), (3, 2), False, False),
             ((2, 0), (0, 3), False, False)]
    return [Sample((g(rng, a, dtype), g(rng, b, dtype)), {"transpose_a": ta, "transpose_b": tb},
                   f"a{a} b{b} ta={ta} tb={tb}") for a, b, ta, tb in specs]


def softmax_samples(rng, dtype):
    specs = [((2, 3), -1), ((2, 3), 0), ((2, 3, 4), 1), ((5,), 0), ((3, 1), -1), ((), 0)]
    out = [Sample((rand_default(rng, s, dtype),), {"axis": a}, f"x{s} axis={a}")
           for s, a in specs]
    big = np.array([[1000.0, 1001.0, 999.0]]).astype(dtype.np) if dtype is not f16 else \
        np.array([[60000.0, 60001.0, 59999.0]]).astype(np.float16)
    out.append(Sample((big,), {"axis": -1}, "large logits (stability)", grad=False))
    return out + opdb_special.softmax_samples(dtype)


def sce_samples(grad_op: bool):
    """Sparse softmax cross-entropy (and its gradient op): labels in range, one out of range
    (loss 0, gradient 0), 3-d logits, 1-d logits with a 0-d label, one class."""
    specs = [((4, 5), [0, 4, 2, 1]), ((3, 4), [1, -1, 4]), ((2, 3, 4), [[0, 3, 1], [2, 2, 0]]),
             ((6,), 2), ((3, 1), [0, 0, 0])]

    def gen(rng, dtype):
        out = []
        for shape, labels in specs:
            x = rand_default(rng, shape, dtype)
            lab = np.array(labels, np.int32)
            args = (x, lab)
            if grad_op:
                args += (rand_default(rng, lab.shape, dtype),)
            out.append(Sample(args, {}, f"logits{shape} labels={labels}"))
        return out + opdb_special.sce_samples(dtype, grad_op)
    return gen


# ---------------------------------------------------------------- cast, where -------------------
def cast_samples(rng, dtype):
    x = rand_off_half(rng, (2, 3), dtype) if dtype.is_float else rand_default(rng, (2, 3), dtype)
    out = []
    for target in (f64, f32, f16, bf16, i32, i64, u8 if dtype.kind == "u" else i8, b_):
        out.append(Sample((x,), {"dtype": target}, f"x(2, 3) -> {target}",
                          grad=target is f64))
    out.append(Sample((rand_default(rng, (), dtype),), {"dtype": f64}, "x() -> Float64"))
    out.append(Sample((rand_default(rng, (0,), dtype),), {"dtype": i32}, "x(0,) -> Int32",
                      grad=False))
    return out


def where_samples(rng, dtype):
    specs = [((2, 3), (2, 3), (2, 3)), ((3, 1), (1, 4), ()), ((), (2, 3), (2, 3)),
             ((2, 3), (3,), (2, 1)), ((), (), ()), ((0, 3), (1, 3), ())]
    return [Sample((rand_bool(rng, c), rand_default(rng, x, dtype), rand_default(rng, y, dtype)),
                   {}, f"c{c} x{x} y{y}") for c, x, y in specs]


# ---------------------------------------------------------------- data movement -----------------
def reshape_samples(rng, dtype):
    specs = [((2, 3), (3, 2)), ((2, 3), (-1,)), ((2, 3), (1, 2, 3)), ((2, 3), (3, -1)),
             ((), (1, 1)), ((1,), ()), ((0, 3), (3, 0))]
    return [Sample((rand_default(rng, s, dtype),), {"shape": t}, f"x{s} -> {t}")
            for s, t in specs]


def transpose_samples(rng, dtype):
    specs = [((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (1, 0, 2)), ((2, 3), (1, 0)), ((), ()),
             ((0, 2), (1, 0))]
    return [Sample((rand_default(rng, s, dtype),), {"perm": p}, f"x{s} perm={p}")
            for s, p in specs]


def concat_samples(rng, dtype):
    specs = [(((2, 3), (1, 3)), 0), (((2, 3), (2, 2), (2, 1)), -1), (((2, 3),), 1),
             (((2, 0), (2, 3)), 1), (((1, 2, 2), (1, 2, 2)), -2)]
    out = [Sample(tuple(rand_default(rng, s, dtype) for s in shapes), {"axis": a},
                  f"{shapes} axis={a}") for shapes, a in specs]
    if dtype.is_float:             # promotion: an int32 part joins a float tensor
        out.append(Sample((rand_default(rng, (2, 2), dtype), rand_default(rng, (1, 2), i32)),
                          {"axis": 0}, "float with int32 part (promotion)"))
    return out


def split_samples(rng, dtype):
    specs = [((5, 4), (2, 3), 0), ((2, 6), (1, 2, 3), -1), ((3, 2), (0, 3), 0), ((4,), (4,), 0)]
    return [Sample((rand_default(rng, s, dtype),), {"sizes": sz, "axis": a},
                   f"x{s} sizes={sz} axis={a}") for s, sz, a in specs]


SLICES = [  # shape, begin, end, strides (begin/end normalised; -1 ends a negative step)
    ((5, 6), (1, 0), (4, 6), (1, 2)),
    ((5, 6), (4, 5), (-1, -1), (-1, -2)),
    ((5,), (3,), (0,), (-1,)),
    ((5, 6), (2, 0), (2, 6), (1, 1)),      # empty region
    ((), (), (), ()),
    ((2, 3, 4), (0, 1, 3), (2, 3, 4), (1, 1, 1)),
]


def strided_slice_samples(rng, dtype):
    return [Sample((rand_default(rng, s, dtype),), {"begin": b, "end": e, "strides": st},
                   f"x{s}[{b}:{e}:{st}]") for s, b, e, st in SLICES]


def _region(shape, b, e, st):
    """The shape of x[b:e:st] under strided_slice's convention (-1 ends a negative step)."""
    key = tuple(slice(bb, None if ee == -1 else ee, ss) for bb, ee, ss in zip(b, e, st))
    return np.empty(shape)[key].shape


def strided_slice_grad_samples(rng, dtype):
    out = []
    for s, b, e, st in SLICES:
        region = _region(s, b, e, st)
        out.append(Sample((rand_default(rng, region, dtype),),
                          {"shape": s, "begin": b, "end": e, "strides": st},
                          f"g{region} into {s} at [{b}:{e}:{st}]"))
    return out


def gather_samples(rng, dtype):
    x = rand_default(rng, (4, 3), dtype)
    specs = [(np.array([2, 0, 3], np.int64), 0), (np.array([[0, 2], [1, 1]], np.int32), 1),
             (np.array(1, np.int32), 0), (np.array([-1, 0], np.int64), -1),
             (np.array([1, 1, 1], np.int64), 0), (np.zeros((0,), np.int64), 0)]
    out = [Sample((x, i), {"axis": a}, f"x(4, 3) idx{i.tolist()} axis={a}") for i, a in specs]
    out.append(Sample((rand_default(rng, (5,), dtype), np.array([[4], [0]], np.int32)),
                      {"axis": 0}, "x(5,) idx(2, 1)"))
    return out


def scatter_add_samples(rng, dtype):
    x = rand_default(rng, (4, 3), dtype)
    specs = [(np.array([0, 2, 0], np.int64), (3, 3), 0), (np.array([2, 0], np.int32), (4, 2), 1),
             (np.array([1, 3], np.int64), (1, 3), 0), (np.array([3], np.int64), (), 0),
             (np.array([[0, 1], [1, 1]], np.int64), (2, 2, 3), 0),
             (np.array([-1, 0], np.int64), (2, 3), 0)]
    return [Sample((x, i, rand_default(rng, u, dtype)), {"axis": a},
                   f"x(4, 3) idx{i.tolist()} upd{u} axis={a}") for i, u, a in specs]


def scatter_update_samples(rng, dtype):
    x = rand_default(rng, (4, 3), dtype)
    specs = [(np.array([2, 0], np.int64), (2, 3), 0), (np.array([1], np.int32), (4, 1), 1),
             (np.array([3, 1], np.int64), (1, 3), 0), (np.array([0], np.int64), (), 0),
             (np.array([-1, 0], np.int64), (2, 3), 0)]
    return [Sample((x, i, rand_default(rng, u, dtype)), {"axis": a},
                   f"x(4, 3) idx{i.tolist()} upd{u} axis={a}") for i, u, a in specs]


def slice_update_samples(rng, dtype):
    specs = [((4, 5), (2, 5), (1, 0), (3, 5), (1, 1)), ((4, 5), (5,), (1, 0), (3, 5), (1, 1)),
             ((4, 5), (2, 2), (0, 1), (4, 5), (2, 2)), ((4, 5), (), (3, 4), (-1, -1), (-1, -3)),
             ((3,), (1,), (2,), (3,), (1,)), ((), (), (), (), ())]
    return [Sample((rand_default(rng, s, dtype), rand_default(rng, v, dtype)),
                   {"begin": b, "end": e, "strides": st}, f"x{s}[{b}:{e}:{st}] = v{v}")
            for s, v, b, e, st in specs]


def broadcast_to_samples(rng, dtype):
    specs = [((3, 1), (2, 3, 4)), ((), (2, 2)), ((1,), (3,)), ((2, 3), (2, 3)), ((1, 3), (0, 3))]
    return [Sample((rand_default(rng, s, dtype),), {"shape": t}, f"x{s} -> {t}")
            for s, t in specs]


def tile_samples(rng, dtype):
    specs = [((2, 3), (2, 1)), ((3,), (2, 2)), ((2, 3), (2,)), ((), (3,)), ((2, 3), (0, 2)),
             ((1, 2), (1, 1))]
    return [Sample((rand_default(rng, s, dtype),), {"reps": r}, f"x{s} reps={r}")
            for s, r in specs]


def fill_samples(rng, dtype):
    v = True if dtype is b_ else 2 if dtype.is_int else 1.5
    return [Sample((), {"shape": s, "value": v, "dtype": dtype}, f"shape={s} value={v}")
            for s in ((2, 3), (), (0, 2))]


def arange_samples(rng, dtype):
    specs = [(0, 5, 1), (2, 10, 3), (5, 0, -2), (3, 3, 1), (-3, 3, 2)]
    if dtype.is_float:
        specs += [(0.5, 3.0, 0.5), (1.0, 0.0, -0.25)]
    return [Sample((), {"start": a, "stop": b, "step": c, "dtype": dtype},
                   f"arange({a}, {b}, {c})") for a, b, c in specs]


def fill_like_samples(rng, dtype):
    x = rand_default(rng, (2, 3), dtype)
    return [Sample((x,), {"value": 0, "dtype": None}, "zeros_like"),
            Sample((x,), {"value": 1, "dtype": f64}, "ones_like as float64"),
            Sample((rand_default(rng, (), dtype),), {"value": 3, "dtype": i32}, "x() -> int32"),
            Sample((rand_default(rng, (0, 2), dtype),), {"value": 7, "dtype": None}, "x(0, 2)")]


def one_hot_samples(rng, dtype):
    specs = [(np.array([0, 2, 1]), 4, 1.0, 0.0, -1), (np.array([[0, 2], [1, 1]]), 3, 5, -1, 0),
             (np.array(2), 3, 1.0, 0.0, -1), (np.array([[1, 0]]), 2, 1.0, 0.0, 1),
             (np.array([-1, 3, 1]), 3, 1.0, 0.0, -1)]            # out of range: all off
    return [Sample((i.astype(dtype.np),), {"depth": d, "on_value": on, "off_value": off,
                                           "axis": a},
                   f"idx{i.tolist()} depth={d} on={on} off={off} axis={a}")
            for i, d, on, off, a in specs]


def plain(shapes=((2, 3), ())):
    def gen(rng, dtype):
        return [Sample((rand_default(rng, s, dtype),), {}, f"x{s}") for s in shapes]
    return gen


# ---------------------------------------------------------------- the database ------------------
FL2 = (f32, f64)
_EW = elementwise_case
CASES = [
    # unary elementwise
    _EW("neg", 1, dtypes=(f32, f64, i32, f16, u32)),
    _EW("abs", 1, (rand_nonzero,), dtypes=(f32, f64, i32, i8)),
    _EW("exp", 1, dtypes=(f32, f64, f16, bf16, i32), grad_dtypes=(f32, f16)),
    _EW("log", 1, (rand_positive,)),
    _EW("log1p", 1, (rand_positive,)),
    _EW("sqrt", 1, (rand_positive,), dtypes=(f32, f64, f16)),
    _EW("rsqrt", 1, (rand_positive,)),
    _EW("square", 1, dtypes=(f32, f64, i32)),
    _EW("reciprocal", 1, (rand_nonzero,)),
    _EW("sin", 1, dtypes=(f32, f64, f16, i32), grad_dtypes=(f32, f16)),
    _EW("cos", 1),
    _EW("tanh", 1, dtypes=(f32, f64, f16)),
    _EW("sigmoid", 1),
    _EW("relu", 1, (rand_nonzero,), dtypes=(f32, f64, i32)),
    _EW("relu_grad", 2, (rand_default, rand_nonzero), dtypes=(f32, f64, i32)),
    _EW("erf", 1),
    _EW("softplus", 1),
    OpCase("gelu", unary(attrs_list=({"approximate": "none"}, {"approximate": "tanh"})), FL2),
    _EW("sign", 1, (rand_nonzero,), dtypes=(f32, f64, i32)),
    _EW("floor", 1, (rand_off_half,), dtypes=(f32, f64, f16)),
    _EW("ceil", 1, (rand_off_half,), dtypes=(f32, f64, f16)),
    _EW("round", 1, (rand_off_half,), dtypes=(f32, f64, f16)),
    _EW("logical_not", 1, dtypes=(b_, f32, i32)),
    _EW("bitwise_not", 1, dtypes=(i32, u8, i8)),
    # binary elementwise
    _EW("add", 2, dtypes=(f32, f64, i32, f16, bf16, b_, u32), grad_dtypes=(f32, f16)),
    _EW("sub", 2, dtypes=(f32, f64, i32, u8, u64)),
    _EW("mul", 2, dtypes=(f32, f64, i32, b_, u16), grad_dtypes=(f32, f16)),
    _EW("div", 2, (rand_default, rand_nonzero), dtypes=(f32, f64, i32, u32)),
    _EW("floor_div", 2, (rand_off_half, rand_pow2_divisor), dtypes=(f32, f64, i32, u64)),
    _EW("mod", 2, (rand_off_half, rand_pow2_divisor), dtypes=(f32, f64, i32)),
    _EW("truncate_div", 2, (rand_off_half, rand_pow2_divisor), dtypes=(f32, f64, i32)),
    _EW("pow", 2, (rand_positive, rand_small_nonneg_int), dtypes=(f32, f64, i32)),
    _EW("maximum", 2, (rand_grid_a, rand_grid_b), dtypes=(f32, f64, i32, u32)),
    _EW("minimum", 2, (rand_grid_a, rand_grid_b), dtypes=(f32, f64, i32)),
    _EW("equal", 2, (coarse, coarse), dtypes=(f32, i32, b_, u64)),
    _EW("not_equal", 2, (coarse, coarse), dtypes=(f32, i32)),
    _EW("less", 2, (coarse, coarse), dtypes=(f32, i32, u32, u64)),
    _EW("less_equal", 2, (coarse, coarse), dtypes=(f32, i32)),
    _EW("greater", 2, (coarse, coarse), dtypes=(f32, i32)),
    _EW("greater_equal", 2, (coarse, coarse), dtypes=(f32, i32, u16)),
    _EW("logical_and", 2, (coarse, coarse), dtypes=(b_, i32)),
    _EW("logical_or", 2, (coarse, coarse), dtypes=(b_, f32)),
    _EW("bitwise_and", 2, dtypes=(i32, u8, b_, u32)),
    _EW("bitwise_or", 2, dtypes=(i32, u8, b_)),
    _EW("bitwise_xor", 2, dtypes=(i32, u8, b_)),
    _EW("left_shift", 2, (rand_default, rand_small_nonneg_int), dtypes=(i32, u8)),
    _EW("right_shift", 2, (rand_default, rand_small_nonneg_int), dtypes=(i32, u8)),
    OpCase("where", where_samples, (f32, f64, i32, b_)),
    OpCase("cast", cast_samples, (f32, f64, i32, b_, f16, u16, u32, u64)),
    # reductions
    OpCase("sum", reduction(), (f32, f64, i32, b_, u32), accum=True),
    OpCase("mean", reduction(), (f32, f64, i32), accum=True),
    OpCase("prod", prod_samples, (f32, f64, i32), accum=True),
    OpCase("max", minmax_samples, (f32, f64, i32, f16, u64)),
    OpCase("min", minmax_samples, (f32, f64, i32)),
    OpCase("logsumexp", reduction(), (f32, f64, i32), accum=True),
    OpCase("argmax", arg_samples, (f32, i32, f16, u32)),
    OpCase("argmin", arg_samples, (f32, i32)),
    # linalg, nn
    OpCase("matmul", matmul_samples, (f32, f64, i32, f16), accum=True, grad_dtypes=(f32, f16)),
    OpCase("softmax", softmax_samples, (f32, f64, f16), accum=True),
    OpCase("log_softmax", softmax_samples, (f32, f64, f16), accum=True),
    OpCase("sparse_softmax_cross_entropy", sce_samples(False), (f32, f64, f16), accum=True),
    OpCase("sparse_softmax_cross_entropy_grad", sce_samples(True), (f32, f64, f16), accum=True),
    # data movement, indexing, creation
    OpCase("reshape", reshape_samples, (f32, f64, i32, b_, u32)),
    OpCase("transpose", transpose_samples, (f32, f64, i32, b_, u64)),
    OpCase("concat", concat_samples, (f32, f64, i32, u16)),
    OpCase("split", split_samples, (f32, f64, i32)),
    OpCase("strided_slice", strided_slice_samples, (f32, f64, i32, b_)),
    OpCase("strided_slice_grad", strided_slice_grad_samples, (f32, f64)),
    OpCase("gather", gather_samples, (f32, f64, i32, u32)),
    OpCase("scatter_add", scatter_add_samples, (f32, f64, i32)),
    OpCase("scatter_update", scatter_update_samples, (f32, f64, i32)),
    OpCase("slice_update", slice_update_samples, (f32, f64, i32)),
    OpCase("broadcast_to", broadcast_to_samples, (f32, f64, i32, b_)),
    OpCase("tile", tile_samples, (f32, f64, i32)),
    OpCase("fill", fill_samples, (f32, i32, f64, b_), grad=False),
    OpCase("arange", arange_samples, (i64, i32, f32, f64), grad=False),
    OpCase("fill_like", fill_like_samples, (f32, i32), grad=False),
    OpCase("one_hot", one_hot_samples, (i32, i64), grad=False),
    OpCase("stop_gradient", plain(), FL2, grad=False,
           grad_skip="its gradient is zero by design (tested in test_grad.py "
                     "test_stop_gradient_blocks)"),
]

from opdb_nn import nn_cases  # noqa: E402  (conv, pooling, norms, random ops)
CASES += nn_cases(OpCase)
from opdb_sorting import sorting_cases  # noqa: E402  (sort, cumsum)
CASES += sorting_cases(OpCase, Sample)
from opdb_activation import activation_cases  # noqa: E402
CASES += activation_cases(OpCase, Sample)
from opdb_conv_nd import conv_nd_cases  # noqa: E402
CASES += conv_nd_cases(OpCase, Sample)
from opdb_pool_nd import pool_nd_cases  # noqa: E402
CASES += pool_nd_cases(OpCase, Sample)
from opdb_array_nd import array_nd_cases  # noqa: E402
CASES += array_nd_cases(OpCase, Sample)
from opdb_attention import attention_cases  # noqa: E402
CASES += attention_cases(OpCase, Sample)
from opdb_collective import collective_cases  # noqa: E402  (AllReduce, AllGather, ...)
CASES += collective_cases(OpCase, Sample)

OPDB = {c.name: c for c in CASES}
assert len(OPDB) == len(CASES), "duplicate OpCase"


def rng_for(*key) -> np.random.Generator:
    """A generator seeded from the test's identity: reproducible, different per cell."""
    import zlib
    return np.random.default_rng(zlib.crc32("/".join(map(str, key)).encode()))

