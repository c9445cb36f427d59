"""The op-declaration language shared by every family in core/ops: `elementwise` (one call
declares an elementwise primitive from its scalar template and dtype rule),
`composite_elementwise` (its sibling for an elementwise op written with other ops), the dtype rules
(SAME, FLOAT, COMPARE, LOGICAL), `ref_array_dtype` and `sum_to` (reducing a broadcast gradient
back to an input's shape)."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError
from ..primitive import ELEMENTWISE, Meta, apply, defop
from ..shape import broadcast_shapes

# dtype rules for elementwise ops: in_dtypes -> (per-input compute dtypes, output dtype)
SAME, FLOAT, COMPARE, LOGICAL = "same", "float", "compare", "logical"


def _dtype_names(ds) -> str:
    return ", ".join(str(d) for d in ds)


def make_compute(name: str, rule: str, allowed):
    def compute(in_dtypes):
        if rule == LOGICAL:
            return (dt.bool_,) * len(in_dtypes), dt.bool_
        c = in_dtypes[0]
        for d in in_dtypes[1:]:
            c = dt.promote(c, d)
        if rule == FLOAT and c.kind != "f":
            c = dt.float32
        if allowed is not None and c not in allowed:
            hint = next((d for d in (dt.float32, dt.int32) if d in allowed), allowed[0])
            raise DTypeError(f"{name}: dtype {c} (from inputs {_dtype_names(in_dtypes)}) is not "
                             f"supported; supported: {_dtype_names(allowed)}. Cast the input "
                             f"with .astype(), e.g. x.astype(ms.{hint.np.name})")
        return (c,) * len(in_dtypes), (dt.bool_ if rule == COMPARE else c)
    return compute


def ref_array_dtype(d: dt.DType) -> np.dtype:
    """numpy computes half types poorly (bf16 has few ufuncs): references run them in float32."""
    return np.dtype(np.float32) if d in (dt.float16, dt.bfloat16) else d.np


def elementwise(name, arity, scalar, np_fn, bprop=None, rule=SAME, allowed=None,
                differentiable=True, attrs=None):
    """Declare an elementwise primitive from its scalar template and numpy function."""
    compute, infer, ref = _elementwise_rules(name, rule, allowed, np_fn)
    return defop(name, kind=ELEMENTWISE, infer=infer, ref=ref, bprop=bprop, scalar=scalar,
                 compute=compute, arity=arity, differentiable=differentiable,
                 attrs=attrs or {})


def composite_elementwise(name, arity, impl, np_fn, bprop=None, rule=SAME, allowed=None,
                          differentiable=True, attrs=None):
    """Declare an elementwise composite: `impl(*inputs, **attrs)` written with other ops, with
    the dtype rule, errors and numpy reference an elementwise primitive would have. It has no
    scalar template: graph fusion sees its parts."""
    compute, infer, ref = _elementwise_rules(name, rule, allowed, np_fn)
    return defop(name, kind=ELEMENTWISE, infer=infer, ref=ref, bprop=bprop, compute=compute,
                 arity=arity, differentiable=differentiable, attrs=attrs or {},
                 composite=impl)


def _elementwise_rules(name, rule, allowed, np_fn):
    """(compute, infer, ref) of an elementwise op: its dtype rule, broadcasting infer and the
    numpy reference run in the compute dtype."""
    compute = make_compute(name, rule, allowed)

    def infer(*xs, **attrs_):
        shape = broadcast_shapes(name, *(x.shape for x in xs))
        return Meta(shape, compute(tuple(x.dtype for x in xs))[1])

    def ref(*arrays, **attrs_):
        cdts, out = compute(tuple(dt.to_dtype(a.dtype) for a in arrays))
        args = [np.asarray(a).astype(ref_array_dtype(c)) for a, c in zip(arrays, cdts)]
        with np.errstate(all="ignore"):
            r = np_fn(*args, **attrs_)
        return np.asarray(r).astype(out.np)

    return compute, infer, ref


def sum_to(g, shape: tuple):
    """Sum a broadcast gradient `g` down to `shape` (the inverse of broadcasting)."""
    if g.shape == tuple(shape):
        return g
    from .reduce import sum as _sum
    from .array import reshape
    lead = len(g.shape) - len(shape)
    inner = tuple(lead + i for i, d in enumerate(shape) if d == 1 and g.shape[lead + i] != 1)
    if lead and not inner:                 # only leading axes (a bias): one op, no reshape
        return _sum(g, tuple(range(lead)), False)
    axes = tuple(range(lead)) + inner
    return reshape(_sum(g, axes, True), shape) if axes else reshape(g, shape)


def call(op, *inputs, **attrs):
    """apply, for use inside declarations and bprops."""
    return apply(op, *inputs, **attrs)
