"""The op declaration (OpDef), the registry of every op, and dispatch to the executor.

Every op is declared once with `defop` (DESIGN.md, "One op, declared once"): its attributes
and defaults, `infer` (the only place shape/dtype errors are raised), the numpy reference `ref`,
the `bprop` written with minispore ops, and for elementwise ops a scalar template. An op is one of
two tiers: a primitive, which every backend implements (a kernel or a lowering), or a composite
(`composite=impl`, impl written with other ops), which no backend sees: `apply` runs its parts
(core/composite.py). The functional API (`ops.mul`) and MindSpore's Primitive classes
(`ops.Mul()`) both call `apply`, which hands a primitive to the current executor: the eager
executor, or the graph builder while a graph is traced.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from . import dtype as dt
from .thread_state import per_thread

ELEMENTWISE = "elementwise"
REDUCE = "reduce"
OTHER = "other"


class Meta(NamedTuple):
    """Static type of a tensor value: what `infer` consumes and produces."""
    shape: tuple
    dtype: dt.DType


@dataclass(eq=False)
class OpDef:
    """Everything true of one primitive on every device.

    infer(*inputs, **attrs) -> Meta or tuple of Meta  (inputs have .shape and .dtype)
    ref(*arrays, **attrs) -> ndarray or tuple          (numpy semantics: the specification)
    bprop(inputs, out, dout, **attrs) -> tuple         (one grad or None per input; minispore ops;
                                                        an input no gradient tracks may get None
                                                        unasked: see `tracked`)
    scalar: template lambda for elementwise ops (see scalar_expr.py)
    compute: elementwise ops only: in_dtypes -> (compute dtype, output dtype)
    composite: impl(*inputs, **attrs) written with other ops: the op is a composite, with no
               kernel anywhere (core/composite.py); its bprop is optional (none: autodiff
               differentiates the parts)
    """
    name: str
    infer: Callable
    ref: Callable
    kind: str = OTHER
    bprop: Callable | None = None
    attrs: dict = field(default_factory=dict)
    scalar: Callable | None = None
    compute: Callable | None = None
    arity: int | None = None          # number of tensor inputs (None: variadic sequence)
    n_out: int = 1                    # >1: the op returns a tuple of tensors
    differentiable: bool = True       # False: outputs carry no gradient (argmax, comparisons)
    attr_cache: dict = field(default_factory=dict, repr=False)   # see normalize_attrs
    composite: Callable | None = None
    meta_cache: dict = field(default_factory=dict, repr=False)   # composites: see composite.py

    def __repr__(self) -> str:
        return f"OpDef({self.name})"

    __hash__ = object.__hash__      # identity, in C: every eager call hashes its op (plan key)


REGISTRY: dict[str, OpDef] = {}     # every op, primitives and composites (op.composite set)


def primitives() -> list[OpDef]:
    """The ops every backend implements."""
    return [op for op in REGISTRY.values() if op.composite is None]


def composites() -> list[OpDef]:
    """The ops run as their parts: no backend has (or needs) a kernel for them."""
    return [op for op in REGISTRY.values() if op.composite is not None]


def tracked(t) -> bool:
    """Whether a bprop's input `t` leads to a gradient being taken (its tape identity is set,
    in PyNative and while a graph is built alike). A bprop may skip an untracked input's
    gradient and return None for it: a network's first matmul/conv need not compute the
    gradient of the data batch."""
    return t._node is not None


def defop(name: str, **kw) -> OpDef:
    op = OpDef(name, **kw)
    if name in REGISTRY:
        raise ValueError(f"op {name!r} declared twice")
    if op.differentiable and op.bprop is None and op.composite is None:
        raise ValueError(f"primitive {name!r} is differentiable but declares no bprop")
    REGISTRY[name] = op
    if op.composite is not None:
        global _composite
        from . import composite as _composite
    return op


_composite = None       # core.composite, imported when the first composite is declared


def normalize_attrs(op: OpDef, attrs: dict) -> tuple:
    """Attributes in declaration order with defaults filled, as a hashable tuple of
    (name, value, tag) (memoised per op: a call site passes the same attributes again and again).
    The tag (the type, and a float zero's sign) is part of the tuple because 1, 1.0 and True, or
    0.0 and -0.0, are equal and hash alike, yet are different attributes (one_hot's dtype, a bool
    axis being an error, fill(-0.0))."""
    if not attrs and not op.attrs:
        return ()
    try:
        raw = (tuple(attrs.items()), tuple(map(_tag, attrs.values())))
        hit = op.attr_cache.get(raw)
    except TypeError:                       # an unhashable value (a list): normalise it
        raw = hit = None
    if hit is not None:
        return hit
    for k in attrs:
        if k not in op.attrs:
            raise TypeError(f"{op.name}: unexpected attribute {k!r}; valid: "
                            f"{', '.join(op.attrs) or 'none'}")
    norm = tuple((k, v, _tag(v)) for k, v in
                 ((k, _hashable(attrs.get(k, d))) for k, d in op.attrs.items()))
    if raw is not None:
        if len(op.attr_cache) > 4096:
            op.attr_cache.clear()
        op.attr_cache[raw] = norm
    return norm


def _tag(v):
    """What tells equal attribute values apart: the type, and the sign of a float zero."""
    t = type(v)
    return (t, math.copysign(1.0, v)) if t is float and v == 0 else t


def attrs_dict(attrs: tuple) -> dict:
    """The keyword arguments that a normalised attribute tuple stands for."""
    return {k: v for k, v, _ in attrs}


def _hashable(v):
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    return v


# Which executor handles `apply` now, in this thread: the eager one (the default, set by
# core/pynative.py), or a graph builder while this thread traces a graph. Per thread, so that the
# ops another thread runs meanwhile (a dataset map worker while Model.train builds its graph)
# run eagerly instead of being recorded into that graph (core/thread_state.py).
executor = per_thread("ExecutorSlot", "Which executor handles `apply` now, in this thread.",
                      current=None)


def apply(op: OpDef, *inputs, **attrs):
    """Run (or, while tracing, record) op `op` on `inputs` with `attrs`."""
    if op.composite is not None:
        return _composite.run(op, inputs, normalize_attrs(op, attrs))
    return executor.current.apply(op, inputs, normalize_attrs(op, attrs))


class Primitive:
    """MindSpore's Primitive: an op with its attributes bound, called on tensors.

    `Primitive(opdef, **attrs)`; subclasses in `minispore.ops` give MindSpore's names
    (`ops.Mul()`, `ops.MatMul(transpose_b=True)`)."""

    def __init__(self, op: OpDef | str, **attrs):
        self.op = REGISTRY[op] if isinstance(op, str) else op
        self.attrs = normalize_attrs(self.op, attrs)
        self.name = type(self).__name__ if type(self) is not Primitive else self.op.name

    def __call__(self, *inputs):
        if self.op.composite is not None:
            return _composite.run(self.op, inputs, self.attrs)
        return executor.current.apply(self.op, inputs, self.attrs)

    def __repr__(self) -> str:
        a = ", ".join(f"{k}={v!r}" for k, v, _ in self.attrs)
        return f"Prim[{self.name}]({a})" if a else f"Prim[{self.name}]"
