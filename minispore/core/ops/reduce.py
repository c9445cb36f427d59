"""Reduction primitives (sum, mean, prod, max, min, argmax, argmin, logsumexp) and their
functional API. `axis` is None (all axes), an int or a tuple; `keep_dims` keeps reduced axes."""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import REDUCE, Meta, apply, defop
from ..shape import normalize_axes, normalize_axis, reduced_shape, size_of
from .declare import ref_array_dtype

_ATTRS = {"axis": None, "keep_dims": False}


def reduction_axes(name: str, axis, ndim: int) -> tuple:
    """The sorted non-negative axes a reduction runs over. A 0-d tensor accepts axis 0 (as
    normalize_axis allows) but has no axis to reduce: the result is the value itself, so the
    axes are () for infer, the reference, the kernels and the bprops alike."""
    axes = normalize_axes(name, axis, ndim)
    return () if ndim == 0 else axes


def _reduction(name, out_dtype, ref_fn, bprop, empty_ok=True, allowed=dt.NUMERIC + (dt.bool_,),
               differentiable=True):
    def infer(x, axis=None, keep_dims=False):
        if x.dtype not in allowed:
            raise DTypeError(f"{name}: dtype {x.dtype} is not supported; supported: "
                             f"{', '.join(map(str, allowed))}")
        axes = reduction_axes(name, axis, len(x.shape))
        if not empty_ok and any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"{name}: cannot reduce over a zero-size axis of shape {x.shape}; "
                             f"this reduction has no identity")
        return Meta(reduced_shape(x.shape, axes, keep_dims), out_dtype(x.dtype))

    def ref(x, axis=None, keep_dims=False):
        axes = reduction_axes(name, axis, x.ndim)
        od = out_dtype(dt.to_dtype(x.dtype))
        a = x.astype(ref_array_dtype(od)) if od.kind == "f" else x
        return np.asarray(ref_fn(a, axes, keep_dims)).astype(od.np)

    return defop(name, kind=REDUCE, infer=infer, ref=ref, bprop=bprop, attrs=dict(_ATTRS),
                 arity=1, differentiable=differentiable)


def _int_sum_dtype(d):
    return dt.int64 if d is dt.bool_ else d


def _float_dtype(d):
    return d if d.is_float else dt.float32


def _keep(g, x, axis, keep_dims):
    """Reshape a reduced gradient so it broadcasts against x."""
    from .array import reshape
    if keep_dims:
        return g
    axes = reduction_axes("grad", axis, len(x.shape))
    return reshape(g, reduced_shape(x.shape, axes, True))


def _sum_bprop(i, o, g, axis, keep_dims):
    from .array import broadcast_to
    return (broadcast_to(_keep(g, i[0], axis, keep_dims), i[0].shape),)


def _mean_bprop(i, o, g, axis, keep_dims):
    from .array import broadcast_to
    from .math import div
    x = i[0]
    # builtins.max: this module's `max` is the functional ops.max
    n = size_of(x.shape) // builtins.max(size_of(o.shape), 1) if size_of(x.shape) else 1
    return (broadcast_to(div(_keep(g, x, axis, keep_dims), n), x.shape),)


def _prod_bprop(i, o, g, axis, keep_dims):
    """d prod / d x_j = product of the other elements, exact also when x has zeros, and written so
    that its own derivative (grad of grad) is exact there too: a zero factor of a product of
    others is carried as the (zero) input itself, not as a constant 0, so the derivative with
    respect to that input survives."""
    from .math import cast, div, equal, mul, sub, where
    x = i[0]
    gk, ok = _keep(g, x, axis, keep_dims), _keep(o, x, axis, keep_dims)
    is_zero = equal(x, 0)
    n_zero = sum(cast(is_zero, dt.int32), axis, True)
    prod_nonzero = prod(where(is_zero, 1, x), axis, True)
    safe_x = where(is_zero, 1, x)
    zsum = sum(where(is_zero, x, 0), axis, True)                 # the zero inputs (value 0)
    none_zero = div(ok, safe_x)                                  # no zero in the slice
    # exactly one zero x_z: others of x_z = prod_nonzero; others of x_j = x_z * prod_nonzero / x_j
    one_zero = where(is_zero, prod_nonzero, mul(zsum, div(prod_nonzero, safe_x)))
    # two zeros x_z, x_w: others of x_z = x_w * prod_nonzero; of a nonzero x_j: 0 to first order
    two_zero = where(is_zero, mul(sub(zsum, x), prod_nonzero), 0)
    d = where(equal(n_zero, 0), none_zero,
              where(equal(n_zero, 1), one_zero, where(equal(n_zero, 2), two_zero, 0)))
    return (mul(d, gk),)


def _minmax_bprop(i, o, g, axis, keep_dims):
    """Split the gradient evenly between tied extrema (as JAX does)."""
    from .math import cast, div, equal, mul
    x = i[0]
    hit = cast(equal(x, _keep(o, x, axis, keep_dims)), g.dtype)
    count = sum(hit, axis, True)
    return (mul(div(hit, count), _keep(g, x, axis, keep_dims)),)


def _logsumexp_bprop(i, o, g, axis, keep_dims):
    from .math import exp, mul, sub
    x = i[0]
    return (mul(exp(sub(x, _keep(o, x, axis, keep_dims))), _keep(g, x, axis, keep_dims)),)


def _np_logsumexp(a, axes, keep):
    m = np.max(a, axis=axes, keepdims=True) if a.size else np.zeros([1] * a.ndim, a.dtype)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):                 # an empty slice: log(0) = -inf
        r = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
    return r if keep else np.squeeze(r, axis=axes)


_FL = dt.FLOATS
SUM = _reduction("sum", _int_sum_dtype, lambda a, ax, k: np.sum(a, ax, keepdims=k), _sum_bprop)
# mean stays primitive: its kernels divide the float64 sum before rounding (div(sum(x), n) would
# round twice)
MEAN = _reduction("mean", _float_dtype,
                  lambda a, ax, k: np.mean(a, ax, keepdims=k) if a.size else
                  np.full(reduced_shape(a.shape, ax, k), np.nan), _mean_bprop,
                  allowed=dt.NUMERIC)
PROD = _reduction("prod", _int_sum_dtype, lambda a, ax, k: np.prod(a, ax, keepdims=k), _prod_bprop)
MAX = _reduction("max", lambda d: d, lambda a, ax, k: np.max(a, ax, keepdims=k), _minmax_bprop,
                 empty_ok=False)
MIN = _reduction("min", lambda d: d, lambda a, ax, k: np.min(a, ax, keepdims=k), _minmax_bprop,
                 empty_ok=False)
# logsumexp stays primitive for speed: one pass instead of five kernels (max, sub, exp, sum, log)
LOGSUMEXP = _reduction("logsumexp", _float_dtype, _np_logsumexp, _logsumexp_bprop,
                       allowed=dt.NUMERIC)


def _arg_infer(name):
    def infer(x, axis=None, keep_dims=False):
        if x.dtype not in dt.NUMERIC:
            raise DTypeError(f"{name}: dtype {x.dtype} is not supported; cast to a number type")
        if axis is None:
            if size_of(x.shape) == 0:
                raise ShapeError(f"{name}: the input of shape {x.shape} is empty")
            return Meta((1,) * len(x.shape) if keep_dims else (), dt.int64)
        a = normalize_axis(name, axis, len(x.shape))
        if x.shape and x.shape[a] == 0:
            raise ShapeError(f"{name}: axis {axis} of shape {x.shape} is empty")
        return Meta(reduced_shape(x.shape, (a,), keep_dims), dt.int64)
    return infer


def _arg_ref(fn):
    def ref(x, axis=None, keep_dims=False):
        if axis is None:
            r = fn(x.reshape(-1).astype(ref_array_dtype(dt.to_dtype(x.dtype))))
            return np.asarray(r, np.int64).reshape((1,) * x.ndim if keep_dims else ())
        r = fn(x.astype(ref_array_dtype(dt.to_dtype(x.dtype))), axis=axis, keepdims=keep_dims)
        return np.asarray(r, np.int64)
    return ref


ARGMAX = defop("argmax", kind=REDUCE, infer=_arg_infer("argmax"), ref=_arg_ref(np.argmax),
               attrs=dict(_ATTRS), arity=1, differentiable=False)
ARGMIN = defop("argmin", kind=REDUCE, infer=_arg_infer("argmin"), ref=_arg_ref(np.argmin),
               attrs=dict(_ATTRS), arity=1, differentiable=False)


# ---------------------------------------------------------------- functional API ----------------
def _axis(axis):
    if isinstance(axis, list):
        axis = tuple(axis)
    return None if axis == () else axis


_UNSET = object()


def _one(op: str, names, values, default):
    """The value of a parameter MindSpore spells several ways across its API (dim/axis,
    keepdim/keep_dims/keepdims): the one given, or `default`; two given is a TypeError."""
    given = [(n, v) for n, v in zip(names, values) if v is not _UNSET]
    if len(given) > 1:
        raise TypeError(f"{op}: got both {given[0][0]}= and {given[1][0]}=, which mean the "
                        f"same; pass one")
    return given[0][1] if given else default


def _extreme_masked(op, input, initial, where):
    """input with the where=False elements replaced by `initial` (numpy's rule: a where mask
    needs an initial value)."""
    from .math import cast, where as _where
    if where is None or where is True:
        return input
    if initial is None:
        raise ValueError(f"{op}: where= needs initial= (the value a fully masked-out "
                         f"reduction gives), as in numpy")
    from ..tensor import Tensor
    mask = where if isinstance(where, Tensor) else Tensor(where)
    return _where(mask, input, cast(Tensor(initial), input.dtype))


def _with_initial(r, initial, combine):
    if initial is None:
        return r
    from .math import cast
    from ..tensor import Tensor
    return combine(r, cast(Tensor(initial), r.dtype))


def sum(input, dim=None, keepdim=False, *, dtype=None, axis=_UNSET, keep_dims=_UNSET,
        keepdims=_UNSET):
    """MindSpore 2.x ops.sum: the sum over `dim` (None or () = all axes), in `dtype` if given.
    axis=/keep_dims=/keepdims= are accepted as the older spellings."""
    from .math import cast
    dim = _one("sum", ("dim", "axis"), (dim if dim is not None else _UNSET, axis), None)
    k = _one("sum", ("keepdim", "keep_dims", "keepdims"),
             (keepdim if keepdim is not False else _UNSET, keep_dims, keepdims), False)
    if dtype is not None:
        input = cast(input, dtype)
    return apply(SUM, input, axis=_axis(dim), keep_dims=bool(k))


def mean(x, axis=None, keep_dims=False, *, keepdims=_UNSET):
    """MindSpore's ops.mean(x, axis=None, keep_dims=False). An integer tensor's mean keeps its
    dtype: the sum (in that dtype) divided by the count, rounded towards zero, as MindSpore's
    ReduceMean computes it (mean([-3, -2]) is -2, not -2.5)."""
    k = _one("mean", ("keep_dims", "keepdims"),
             (keep_dims if keep_dims is not False else _UNSET, keepdims), False)
    d = getattr(x, "dtype", None)
    if isinstance(d, dt.DType) and d.is_int and d is not dt.bool_:
        n = size_of(tuple(x.shape[i] for i in normalize_axes("mean", _axis(axis),
                                                             len(x.shape))))
        if n > 0:
            from .rounding import truncate_div
            return truncate_div(sum(x, axis, bool(k)), n)
    return apply(MEAN, x, axis=_axis(axis), keep_dims=bool(k))


def prod(input, axis=None, keep_dims=False, dtype=None, *, keepdims=_UNSET):
    """MindSpore's ops.prod: the product over `axis`, in `dtype` if given."""
    from .math import cast
    k = _one("prod", ("keep_dims", "keepdims"),
             (keep_dims if keep_dims is not False else _UNSET, keepdims), False)
    if dtype is not None:
        input = cast(input, dtype)
    return apply(PROD, input, axis=_axis(axis), keep_dims=bool(k))


def amax(input, axis=None, keepdims=False, *, initial=None, where=None, keep_dims=_UNSET):
    """Maximum values over `axis` (the values only); `initial` joins every reduction, `where`
    (with initial) leaves elements out. keep_dims= is accepted as the older spelling."""
    from .math import maximum
    k = _one("amax", ("keepdims", "keep_dims"),
             (keepdims if keepdims is not False else _UNSET, keep_dims), False)
    x = _extreme_masked("amax", input, initial, where)
    return _with_initial(apply(MAX, x, axis=_axis(axis), keep_dims=bool(k)), initial, maximum)


def amin(input, axis=None, keepdims=False, *, initial=None, where=None, keep_dims=_UNSET):
    """Minimum values over `axis`; initial/where as amax."""
    from .math import minimum
    k = _one("amin", ("keepdims", "keep_dims"),
             (keepdims if keepdims is not False else _UNSET, keep_dims), False)
    x = _extreme_masked("amin", input, initial, where)
    return _with_initial(apply(MIN, x, axis=_axis(axis), keep_dims=bool(k)), initial, minimum)


def _no_mask(op, initial, where):
    if initial is not None or not (where is None or where is True):
        raise NotImplementedError(f"ops.{op}: initial= and where= are not supported with the "
                                  f"indices it returns; use ops.a{op}(..., initial=, where=) "
                                  f"for the values")


def max(input, axis=None, keepdims=False, *, initial=None, where=None):
    """MindSpore's ops.max: a tuple (values, indices) of the maximum along `axis`."""
    _no_mask("max", initial, where)
    return amax(input, axis, keepdims), argmax(input, axis, keepdims)


def min(input, axis=None, keepdims=False, *, initial=None, where=None):
    """MindSpore's ops.min: a tuple (values, indices) of the minimum along `axis`."""
    _no_mask("min", initial, where)
    return amin(input, axis, keepdims), argmin(input, axis, keepdims)


def argmax(input, dim=None, keepdim=False, *, axis=_UNSET, keepdims=_UNSET):
    """Indices (int64) of the maxima along `dim` (None: of the flattened input)."""
    dim = _one("argmax", ("dim", "axis"), (dim if dim is not None else _UNSET, axis), None)
    k = _one("argmax", ("keepdim", "keepdims"),
             (keepdim if keepdim is not False else _UNSET, keepdims), False)
    return apply(ARGMAX, input, axis=dim, keep_dims=bool(k))


def argmin(input, axis=None, keepdims=False):
    return apply(ARGMIN, input, axis=axis, keep_dims=bool(keepdims))


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over `dim`, computed stably."""
    return apply(LOGSUMEXP, input, axis=_axis(dim), keep_dims=bool(keepdim))


def _reduce_alias(fn, name):
    def f(x, axis=(), keep_dims=False):
        return fn(x, axis, keep_dims)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"MindSpore's ops.{name}(x, axis=()): {fn.__name__} over axis (() = all axes)."
    return f


reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod = (
    _reduce_alias(f, n) for f, n in ((sum, "reduce_sum"), (mean, "reduce_mean"),
                                     (amax, "reduce_max"), (amin, "reduce_min"),
                                     (prod, "reduce_prod")))
