"""Sorting and scan primitives: sort (values and int32 indices along an axis, stable), topk
(MindSpore's CPU TopK along the last axis, its tie order included: topk_select.py), cumsum and
cumprod (an inclusive or exclusive, forward or reverse running sum or product); argsort and
msort are views of sort, ops.topk composes TopK as MindSpore does.

They stay primitives: a sort is no composition of the other ops (no elementwise or indexing op
orders values), topk is not sort's first k (MindSpore's selection leaves ties in another
order), and a running sum or product written with the others (a triangular matmul, a
log-step scan, exp of a sum of logs) would not give MindSpore CPU's bits, which accumulate left
to right in the tensor's dtype.

sort's order: ascending puts smaller values first and NaN after every number (numpy's order;
MindSpore's CPU sort does not order a line holding NaN); descending is its mirror (NaN first);
ties keep their order in the input in both directions (MindSpore's CPU sort is stable). -0.0
and 0.0 are ties. A bool tensor and a 0-d tensor are errors, as in MindSpore."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from ..shape import normalize_axis
from .declare import ref_array_dtype


def _check_input(op, x):
    if x.dtype is dt.bool_ or not (x.dtype.is_float or x.dtype.kind in "iu"):
        raise DTypeError(f"{op}: input dtype {x.dtype} is not supported (MindSpore's {op} takes "
                         f"integer and float tensors); cast it, e.g. x.astype(ms.int32)")
    if not x.shape:
        raise ShapeError(f"{op}: the input must have at least one dimension, got a 0-d tensor")


def _sort_infer(x, axis, descending):
    _check_input("sort", x)
    normalize_axis("sort", axis, len(x.shape))
    return Meta(tuple(x.shape), x.dtype), Meta(tuple(x.shape), dt.int32)


def sort_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The int64 positions along `axis` that order x (stable; NaN last ascending, first
    descending): numpy's stable argsort, and for descending that of x reversed along the axis,
    reversed back (so ties keep their input order)."""
    a = axis % x.ndim
    keys = x.astype(ref_array_dtype(dt.to_dtype(x.dtype)), copy=False)
    if not descending:
        return np.argsort(keys, axis=a, kind="stable")
    n = x.shape[a]
    return (n - 1) - np.flip(np.argsort(np.flip(keys, a), axis=a, kind="stable"), a)


def _sort_ref(x, axis, descending):
    order = sort_order(x, axis, descending)
    return np.take_along_axis(x, order, axis % x.ndim), order.astype(np.int32)


def scatter_back(g, indices, axis: int, shape=None):
    """dx of `shape` (g's by default) with dx[..., indices[..., k, ...], ...] = g[..., k, ...]
    along `axis` (distinct indices along each line): g scattered by flat positions with
    scatter_add, written with existing ops so it differentiates again (scatter_add's gradient
    is a gather)."""
    from .array import reshape, zeros
    from .index_ops import scatter_add
    from .math import cast
    from ..tensor import Tensor
    shape = tuple(g.shape) if shape is None else tuple(shape)
    a = axis % len(shape)
    n, m = shape[a], tuple(g.shape)[a]
    inner = int(np.prod(shape[a + 1:], dtype=np.int64))
    outer = int(np.prod(shape[:a], dtype=np.int64))
    base = (np.arange(outer, dtype=np.int64)[:, None, None] * (n * inner)
            + np.arange(inner, dtype=np.int64)[None, None, :])
    flat_pos = cast(indices, dt.int64) * inner
    flat_pos = reshape(flat_pos, (outer, m, inner)) + Tensor(base)
    count = outer * m * inner
    out = scatter_add(zeros((outer * n * inner,), g.dtype), reshape(flat_pos, (count,)),
                      reshape(g, (count,)), 0)
    return reshape(out, shape)


def _sort_bprop(i, o, g, axis, descending):
    gv = g[0] if isinstance(g, tuple) else g
    if gv is None:
        return (None,)
    return (scatter_back(gv, o[1], axis),)


SORT = defop("sort", infer=_sort_infer, ref=_sort_ref, bprop=_sort_bprop,
             attrs={"axis": -1, "descending": False}, arity=1)


# ---------------------------------------------------------------- topk ---------------------------
def _topk_infer(x, k, sorted):
    _check_input("topk", x)
    n = x.shape[-1]
    if isinstance(k, bool) or not isinstance(k, int) or not 0 < k <= n:
        raise ValueError(f"topk: k must be in (0, {n}] (the length of the last axis of shape "
                         f"{tuple(x.shape)}), got {k!r}")
    out = tuple(x.shape[:-1]) + (k,)
    return Meta(out, x.dtype), Meta(out, dt.int32)


def _topk_ref(x, k, sorted):
    """MindSpore's CPU TopK along the last axis (topk_select.py: its tie order)."""
    from .topk_select import compare_keys, select_rows
    n = x.shape[-1]
    keys = compare_keys(x.reshape(-1, n))
    pos = np.zeros((keys.shape[0], k), np.int64)
    select_rows(keys, k, sorted, pos)
    pos = pos.reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, pos, -1), pos.astype(np.int32)


def _topk_bprop(i, o, g, k, sorted):
    gv = g[0] if isinstance(g, tuple) else g
    if gv is None:
        return (None,)
    return (scatter_back(gv, o[1], -1, i[0].shape),)


TOPK = defop("topk", infer=_topk_infer, ref=_topk_ref, bprop=_topk_bprop,
             attrs={"k": 1, "sorted": True}, arity=1)


# ---------------------------------------------------------------- cumsum -------------------------
def _scan_infer(op):
    def infer(x, axis, exclusive, reverse):
        _check_input(op, x)
        normalize_axis(op, axis, len(x.shape))
        return Meta(tuple(x.shape), x.dtype)
    return infer


def scan_ref(x, axis, exclusive, reverse, product: bool):
    """The running sum (product) of x along `axis`, left to right (right to left with
    reverse) in x's dtype, each partial result rounded to it (numpy's add/multiply.accumulate,
    whose half loops round every step to the half dtype, as MindSpore's CPU kernels do; the
    first is the first element itself); exclusive: over the elements before each one (0, or 1
    for the product, first)."""
    a = axis % x.ndim
    d = dt.to_dtype(x.dtype)
    y = np.flip(x, a) if reverse else x
    ufunc = np.multiply if product else np.add
    with np.errstate(invalid="ignore", over="ignore"):      # inf - inf, 0 * inf, overflow
        if d is dt.bfloat16:         # ml_dtypes has no accumulate loop: each step in float32
            acc = np.empty(y.shape, x.dtype)
            run = None
            for k in range(y.shape[a]):
                v = np.take(y, k, a)
                run = v if run is None else ufunc(run.astype(np.float32),
                                                  v.astype(np.float32)).astype(x.dtype)
                acc[(slice(None),) * a + (k,)] = run
        else:
            acc = ufunc.accumulate(y, axis=a, dtype=x.dtype)
    if exclusive:
        shifted = np.ones_like(acc) if product else np.zeros_like(acc)
        src = (slice(None),) * a + (slice(0, -1),)
        dst = (slice(None),) * a + (slice(1, None),)
        shifted[dst] = acc[src]
        acc = shifted
    return np.ascontiguousarray(np.flip(acc, a) if reverse else acc)


CUMSUM = defop("cumsum", infer=_scan_infer("cumsum"),
               ref=lambda x, axis, exclusive, reverse: scan_ref(x, axis, exclusive, reverse,
                                                                False),
               bprop=lambda i, o, g, axis, exclusive, reverse: (
                   apply(CUMSUM, g, axis=axis, exclusive=exclusive, reverse=not reverse),),
               attrs={"axis": 0, "exclusive": False, "reverse": False}, arity=1)


def _cumprod_bprop(i, o, g, axis, exclusive, reverse):
    """MindSpore's CumProd gradient: the reverse-direction running sum of out * dout, divided
    by x (so a zero in x gives NaN where MindSpore gives NaN)."""
    from .math import div, mul
    s = apply(CUMSUM, mul(o, g), axis=axis, exclusive=exclusive, reverse=not reverse)
    return (div(s, i[0]),)


CUMPROD = defop("cumprod", infer=_scan_infer("cumprod"),
                ref=lambda x, axis, exclusive, reverse: scan_ref(x, axis, exclusive, reverse,
                                                                 True),
                bprop=_cumprod_bprop,
                attrs={"axis": 0, "exclusive": False, "reverse": False}, arity=1)


# ---------------------------------------------------------------- functional API ----------------
def _int_arg(op, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an int, got {type(v).__name__} {v!r}")
    return int(v)


def _bool_arg(op, name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be a bool, got {type(v).__name__} {v!r}")
    return bool(v)


def sort(input_x, axis=-1, descending=False):
    """(values, int32 indices) of input_x sorted along `axis` (MindSpore's ops.sort): stable,
    NaN last ascending and first descending."""
    return apply(SORT, input_x, axis=_int_arg("sort", "axis", axis),
                 descending=_bool_arg("sort", "descending", descending))


def argsort(input, axis=-1, descending=False):
    """The int32 indices that sort `input` along `axis` (ops.sort's second output)."""
    return apply(SORT, input, axis=_int_arg("argsort", "axis", axis),
                 descending=_bool_arg("argsort", "descending", descending))[1]


def topk(input, k, dim=None, largest=True, sorted=True):
    """(values, int32 indices) of the k largest (largest=False: smallest) elements along `dim`
    (None: the last axis), as MindSpore's ops.topk composes its TopK: smallest as the largest of
    -input, another dim swapped with the last axis and back. Tied values come in MindSpore's
    CPU order (topk_select.py), sorted=False in its unsorted selection order."""
    from .array import transpose
    from .math import neg
    k = _int_arg("topk", "k", k)
    largest = _bool_arg("topk", "largest", largest)
    sorted = _bool_arg("topk", "sorted", sorted)
    shape = tuple(input.shape)
    if not shape:
        raise ShapeError("topk: the input must have at least one dimension, got a 0-d tensor")
    last = len(shape) - 1
    a = last if dim is None else normalize_axis("topk", _int_arg("topk", "dim", dim), len(shape))
    x = input if largest else neg(input)
    perm = None
    if a != last:
        perm = list(range(len(shape)))
        perm[a], perm[last] = last, a
        x = transpose(x, tuple(perm))
    values, indices = apply(TOPK, x, k=k, sorted=sorted)
    if perm is not None:
        values, indices = transpose(values, tuple(perm)), transpose(indices, tuple(perm))
    return (values if largest else neg(values)), indices


def cumsum(x, axis, dtype=None):
    """The running sum of x along `axis` (x cast to `dtype` first when given), added in order
    in x's dtype (MindSpore's ops.cumsum)."""
    from .math import cast
    if dtype is not None:
        x = cast(x, dtype)
    return cumsum_scan(x, axis)


def cumsum_scan(x, axis, exclusive=False, reverse=False):
    """ops.CumSum(exclusive, reverse)(x, axis): the running sum, from the end with reverse, of
    the elements before each one (not including it) with exclusive."""
    return apply(CUMSUM, x, axis=_int_arg("cumsum", "axis", axis),
                 exclusive=_bool_arg("CumSum", "exclusive", exclusive),
                 reverse=_bool_arg("CumSum", "reverse", reverse))


def cumprod(input, dim, dtype=None):
    """The running product of `input` along `dim` (MindSpore's ops.cumprod): `input` cast to
    `dtype` first when given, else an integer or bool tensor to int64 (as MindSpore's functional
    cumprod; ops.CumProd keeps the dtype)."""
    from .math import cast
    if dtype is not None:
        input = cast(input, dtype)
    elif input.dtype is dt.bool_ or input.dtype.kind in "iu":
        input = cast(input, dt.int64)
    return cumprod_scan(input, dim)


def cumprod_scan(x, axis, exclusive=False, reverse=False):
    """ops.CumProd(exclusive, reverse)(x, axis): the running product (see cumsum_scan)."""
    return apply(CUMPROD, x, axis=_int_arg("cumprod", "axis", axis),
                 exclusive=_bool_arg("CumProd", "exclusive", exclusive),
                 reverse=_bool_arg("CumProd", "reverse", reverse))


def msort(input):
    """`input` sorted along its first axis (ops.sort(input, 0)'s values)."""
    return apply(SORT, input, axis=0, descending=False)[0]
