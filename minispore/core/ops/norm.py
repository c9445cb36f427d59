"""Normalisation primitives and their functional API: batch_norm (channel axis 1; training uses
the batch statistics, inference the given running statistics) and layer_norm (over the trailing
axes from begin_norm_axis, gamma/beta over the trailing axes from begin_params_axis).

Both bprops are written with minispore ops (mean, sum, mul, rsqrt...), so grads of grads work to
any order. `ops.batch_norm` returns the normalised tensor, as MindSpore's does, and in training
updates running_mean/running_var in place when they are Parameters (with ops.assign, so it works
inside compiled graphs too): new = (1 - momentum) * running + momentum * batch, with the unbiased
batch variance (M / (M - 1), M = elements per channel) for running_var, as MindSpore's GPU/Ascend
kernels and PyTorch do; the normalisation itself uses the biased variance.
"""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from .declare import ref_array_dtype, sum_to


def _float(name, **ms_):
    for what, m in ms_.items():
        if not m.dtype.is_float:
            raise DTypeError(f"{name}: '{what}' has dtype {m.dtype}; use a float dtype "
                             f"(x.astype(ms.float32))")


# ---------------------------------------------------------------- batch_norm ---------------------
def bn_axes(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _bn_infer(x, scale, bias, mean, variance, training, epsilon):
    if len(x.shape) < 2:
        raise ShapeError(f"batch_norm: 'input_x' must have at least 2 dims (N, C, ...), got shape "
                         f"{tuple(x.shape)}; reshape it to (N, C)")
    _float("batch_norm", input_x=x, weight=scale, bias=bias, running_mean=mean,
           running_var=variance)
    C = x.shape[1]
    for what, m in (("weight", scale), ("bias", bias), ("running_mean", mean),
                    ("running_var", variance)):
        if tuple(m.shape) != (C,):
            raise ShapeError(f"batch_norm: '{what}' has shape {tuple(m.shape)} but 'input_x' of "
                             f"shape {tuple(x.shape)} has {C} channels (axis 1); it must have "
                             f"shape ({C},)")
    return Meta(tuple(x.shape), x.dtype)


def _bn_ref(x, scale, bias, mean, variance, training, epsilon):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    shp = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    a = x.astype(c)
    if training:
        axes = bn_axes(x.ndim)
        mu = a.mean(axis=axes, keepdims=True)
        var = ((a - mu) ** 2).mean(axis=axes, keepdims=True)
    else:
        mu, var = mean.astype(c).reshape(shp), variance.astype(c).reshape(shp)
    y = (a - mu) / np.sqrt(var + c.type(epsilon)) * scale.astype(c).reshape(shp) + \
        bias.astype(c).reshape(shp)
    return y.astype(x.dtype)


def _bn_bprop(i, o, g, training, epsilon):
    from .array import reshape
    from .math import add, mul, neg, rsqrt, sub
    from .reduce import mean as _mean, sum as _sum
    x, s, _, m, v = i
    axes = bn_axes(len(x.shape))
    shp = (1, x.shape[1]) + (1,) * (len(x.shape) - 2)
    gs = mul(g, reshape(s, shp))                    # d y / d xhat
    if training:
        mu = _mean(x, axes, True)
        xc = sub(x, mu)
        rstd = rsqrt(add(_mean(mul(xc, xc), axes, True), epsilon))
        xhat = mul(xc, rstd)
        dx = mul(rstd, sub(sub(gs, _mean(gs, axes, True)),
                           mul(xhat, _mean(mul(gs, xhat), axes, True))))
        return dx, _sum(mul(g, xhat), axes), _sum(g, axes), None, None
    rstd = rsqrt(add(reshape(v, shp), epsilon))
    xhat = mul(sub(x, reshape(m, shp)), rstd)
    dx = mul(gs, rstd)
    dmean = neg(_sum(dx, axes))
    dvar = mul(_sum(mul(mul(gs, xhat), mul(rstd, rstd)), axes), -0.5)
    return dx, _sum(mul(g, xhat), axes), _sum(g, axes), dmean, dvar


BATCH_NORM = defop("batch_norm", infer=_bn_infer, ref=_bn_ref, bprop=_bn_bprop,
                   attrs={"training": False, "epsilon": 1e-5}, arity=5)


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1,
               eps=1e-5):
    """MindSpore's ops.batch_norm: normalise over every axis but 1 (see the module docstring for
    the running-statistics update in training)."""
    if not 0.0 <= float(momentum) <= 1.0:
        raise ValueError(f"batch_norm: momentum must be in [0, 1], got {momentum!r}")
    y = apply(BATCH_NORM, input_x, weight, bias, running_mean, running_var,
              training=bool(training), epsilon=float(eps))
    if training:
        from ..tensor import Parameter
        from .math import add, mul, sub
        from .reduce import mean as _mean
        from .state import assign
        from .math import cast
        axes = bn_axes(len(input_x.shape))
        n = int(np.prod([input_x.shape[k] for k in axes]))
        for p, stat in ((running_mean, "mean"), (running_var, "var")):
            if not isinstance(p, Parameter):
                continue
            mu = _mean(input_x, axes)
            if stat == "mean":
                batch = mu
            else:
                xc = sub(input_x, reshape_c(mu, len(input_x.shape)))
                batch = mul(_mean(mul(xc, xc), axes), n / max(n - 1, 1))
            new = add(mul(p, 1.0 - momentum), mul(cast(batch, p.dtype), momentum))
            assign(p, new)
    return y


def reshape_c(t, ndim):
    from .array import reshape
    return reshape(t, (1, -1) + (1,) * (ndim - 2))


# ---------------------------------------------------------------- layer_norm ---------------------
def _ln_axes(name, shape, begin_norm_axis, begin_params_axis):
    nd = len(shape)
    out = []
    for what, a in (("begin_norm_axis", begin_norm_axis), ("begin_params_axis",
                                                           begin_params_axis)):
        if not isinstance(a, int) or isinstance(a, bool) or not -nd <= a < nd:
            raise ValueError(f"{name}: {what}={a!r} is out of range for 'input_x' of shape "
                             f"{tuple(shape)}; use an axis in [{-nd}, {nd})")
        out.append(a % nd)
    return out


def _ln_infer(x, gamma, beta, begin_norm_axis, begin_params_axis, epsilon):
    if len(x.shape) < 1:
        raise ShapeError("layer_norm: 'input_x' must have at least 1 dim, got shape ()")
    _float("layer_norm", input_x=x, gamma=gamma, beta=beta)
    _, bpa = _ln_axes("layer_norm", x.shape, begin_norm_axis, begin_params_axis)
    want = tuple(x.shape[bpa:])
    for what, m in (("gamma", gamma), ("beta", beta)):
        if tuple(m.shape) != want:
            raise ShapeError(f"layer_norm: '{what}' has shape {tuple(m.shape)}; for 'input_x' of "
                             f"shape {tuple(x.shape)} and begin_params_axis={begin_params_axis} "
                             f"it must have shape {want}")
    return Meta(tuple(x.shape), x.dtype)


def _ln_ref(x, gamma, beta, begin_norm_axis, begin_params_axis, epsilon):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    bna, _ = _ln_axes("layer_norm", x.shape, begin_norm_axis, begin_params_axis)
    axes = tuple(range(bna, x.ndim))
    a = x.astype(c)
    mu = a.mean(axis=axes, keepdims=True)
    var = ((a - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (a - mu) / np.sqrt(var + c.type(epsilon)) * gamma.astype(c) + beta.astype(c)
    return y.astype(x.dtype)


def _ln_bprop(i, o, g, begin_norm_axis, begin_params_axis, epsilon):
    from .math import add, mul, rsqrt, sub
    from .reduce import mean as _mean
    x, gamma, beta = i
    bna, _ = _ln_axes("layer_norm", x.shape, begin_norm_axis, begin_params_axis)
    axes = tuple(range(bna, len(x.shape)))
    xc = sub(x, _mean(x, axes, True))
    rstd = rsqrt(add(_mean(mul(xc, xc), axes, True), epsilon))
    xhat = mul(xc, rstd)
    gs = mul(g, gamma)
    dx = mul(rstd, sub(sub(gs, _mean(gs, axes, True)), mul(xhat, _mean(mul(gs, xhat), axes, True))))
    return dx, sum_to(mul(g, xhat), tuple(gamma.shape)), sum_to(g, tuple(beta.shape))


LAYER_NORM = defop("layer_norm", infer=_ln_infer, ref=_ln_ref, bprop=_ln_bprop,
                   attrs={"begin_norm_axis": 1, "begin_params_axis": 1, "epsilon": 1e-7},
                   arity=3)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """MindSpore 2.x ops.layer_norm: normalise over the trailing `normalized_shape` axes."""
    from .array import ones, zeros
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[len(input.shape) - len(ns):]) != ns or len(ns) > len(input.shape):
        raise ShapeError(f"layer_norm: normalized_shape {ns} must equal the trailing dims of "
                         f"'input' of shape {tuple(input.shape)}")
    if weight is None:
        weight = ones(ns, input.dtype)
    if bias is None:
        bias = zeros(ns, input.dtype)
    axis = len(input.shape) - len(ns)
    return apply(LAYER_NORM, input, weight, bias, begin_norm_axis=axis, begin_params_axis=axis,
                 epsilon=float(eps))
