"""The group normalisation composite: group_norm(x, gamma, beta; num_groups, eps) is
(x - mean) / sqrt(var + eps) over each group of C / num_groups channels and all trailing axes
(biased variance), then gamma * . + beta per channel (MindSpore's ops.group_norm / nn.GroupNorm;
nn.InstanceNorm*d is it with num_groups = C). Written with reshape, mean, mul and rsqrt, so it
needs no kernel and is differentiated through its parts."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from .declare import ref_array_dtype

__all__ = ["group_norm"]


def _gn_infer(x, gamma, beta, num_groups, eps):
    who = "group_norm"
    if len(x.shape) < 2:
        raise ShapeError(f"{who}: 'input' must have at least 2 dims (N, C, ...), got shape "
                         f"{tuple(x.shape)}")
    for what, m in (("input", x), ("weight", gamma), ("bias", beta)):
        if not m.dtype.is_float:
            raise DTypeError(f"{who}: '{what}' has dtype {m.dtype}; use a float dtype")
    C = x.shape[1]
    if not isinstance(num_groups, int) or num_groups < 1 or C % num_groups:
        raise ValueError(f"{who}: num_groups={num_groups!r} must be a positive int dividing "
                         f"the {C} channels of 'input' of shape {tuple(x.shape)}")
    for what, m in (("weight", gamma), ("bias", beta)):
        if tuple(m.shape) != (C,):
            raise ShapeError(f"{who}: '{what}' has shape {tuple(m.shape)}; 'input' of shape "
                             f"{tuple(x.shape)} needs shape ({C},)")
    return Meta(tuple(x.shape), x.dtype)


def _group_norm(x, gamma, beta, num_groups, eps):
    from .array import reshape
    from .math import add, cast, mul, rsqrt, sub
    from .reduce import mean
    shape = tuple(x.shape)
    N, C = shape[:2]
    per_group = (C // num_groups) * int(np.prod(shape[2:], dtype=np.int64))
    a = reshape(x, (N, num_groups, per_group))
    xc = sub(a, mean(a, 2, True))
    y = reshape(mul(xc, rsqrt(add(mean(mul(xc, xc), 2, True), eps))), shape)
    cs = (1, C) + (1,) * (len(shape) - 2)
    return add(mul(y, reshape(cast(gamma, x.dtype), cs)), reshape(cast(beta, x.dtype), cs))


def _group_norm_ref(x, gamma, beta, num_groups, eps):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    N, C = x.shape[:2]
    a = x.astype(c).reshape(N, num_groups, -1) if x.size else x.astype(c)
    if x.size:
        m = a.mean(-1, keepdims=True)
        v = ((a - m) ** 2).mean(-1, keepdims=True)
        a = ((a - m) / np.sqrt(v + c.type(eps))).reshape(x.shape)
    cs = (1, C) + (1,) * (x.ndim - 2)
    return (a * gamma.astype(c).reshape(cs) + beta.astype(c).reshape(cs)).astype(x.dtype)


GROUP_NORM = defop("group_norm", infer=_gn_infer, ref=_group_norm_ref,
                   attrs={"num_groups": 1, "eps": 1e-5}, arity=3, composite=_group_norm)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """MindSpore's ops.group_norm: weight/bias (C,) default to ones/zeros."""
    from .array import ones, zeros
    if len(input.shape) < 2:
        raise ValueError(f"group_norm: 'input' must have at least 2 dims (N, C, ...), got shape "
                         f"{tuple(input.shape)}")
    C = input.shape[1]
    if weight is None:
        weight = ones((C,), input.dtype)
    if bias is None:
        bias = zeros((C,), input.dtype)
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)):
        raise TypeError(f"group_norm: num_groups must be an int, got {num_groups!r}")
    return apply(GROUP_NORM, input, weight, bias, num_groups=int(num_groups), eps=float(eps))
