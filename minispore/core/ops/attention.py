"""Attention composites: the masked, scaled dot-product attention weights that
nn.MultiheadAttention (nn/layers/multihead_attention.py) computes for every head, and the
scaled attention that ops.flash_attention_score (ops/attention.py) is.

`attention_weights(query, key, attn_mask)` = softmax(q / d**(1/4) @ (k / d**(1/4))^T + attn_mask)
over the last axis, d being the head size (query.shape[-1]). That is MindSpore 2.10's own
order of operations (ops/function/nn_func.py, `_scaled_dot_product_attention`): the query and
the key are each divided by the fourth root of d, computed in the inputs' dtype, rather than
the product being scaled by 1/sqrt(d) once, so the rounding of every score is MindSpore's.
`attn_mask` is additive (0 where attention is allowed, -inf or a large negative number where
it is not) and broadcasts against the scores' shape (..., L, S); nn.MultiheadAttention turns
bool masks into that form first, as MindSpore does.

The op stops at the weights because MindSpore applies attention dropout to them before they
meet the values (and returns the dropped-out weights): the layer applies dropout, then the
product with the values. MindSpore 2.10 has no public scaled-dot-product-attention function in
`mindspore.ops`, so this composite is internal.

`scaled_attention(query, key, value, bias, scale=s)` = softmax(s * q @ k^T + bias) @ v, computed
in float32 for float16/bfloat16 operands (the Cube accumulates the products in float32, the
softmax runs in float32) and rounded to the operands' dtype once at the end: the attention of
MindSpore's flash_attention_score, whose layouts, head groups and masks ops/attention.py turns
into (batch, heads, S, D) operands and one additive bias.

Both are composites: softmax, matmul, mul/div, add and cast run as their parts in every mode and
on every backend and are differentiated through (a position masked with -inf gets a zero
gradient)."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from ..shape import broadcast_shapes
from . import linalg as _la
from . import math as _m
from . import nn as _nn
from .declare import ref_array_dtype

__all__: list = []

_HALF = (dt.float16, dt.bfloat16)

_NAME = "attention_weights"


def head_scale(head_dim: int, dtype: dt.DType) -> float:
    """MindSpore's divisor of the query and of the key: sqrt(sqrt(head_dim)), each root rounded
    to `dtype` (scalar_to_tensor(head_dim, dtype).sqrt().sqrt())."""
    store = ref_array_dtype(dtype)
    s = np.asarray(np.sqrt(np.asarray(head_dim, store)), dtype.np).astype(store)
    return float(np.asarray(np.sqrt(s), dtype.np))


def _infer(query, key, attn_mask):
    for name, t in (("query", query), ("key", key), ("attn_mask", attn_mask)):
        if not t.dtype.is_float:
            raise DTypeError(f"{_NAME}: {name} has dtype {t.dtype}; it must be a float dtype "
                             f"(cast it with .astype(ms.float32); a bool mask becomes 0 / -inf "
                             f"first)")
    if query.dtype is not key.dtype:
        raise DTypeError(f"{_NAME}: query ({query.dtype}) and key ({key.dtype}) must have one "
                         f"dtype; cast one of them")
    q, k = tuple(query.shape), tuple(key.shape)
    if len(q) < 2 or len(k) < 2 or q[-1] != k[-1]:
        raise ShapeError(f"{_NAME}: query {q} and key {k} must be (..., L, d) and (..., S, d) "
                         f"with the same head size d")
    batch = broadcast_shapes(_NAME, q[:-2], k[:-2])
    scores = batch + (q[-2], k[-2])
    shape = broadcast_shapes(_NAME, scores, tuple(attn_mask.shape))
    if shape != scores:
        raise ShapeError(f"{_NAME}: attn_mask of shape {tuple(attn_mask.shape)} must broadcast "
                         f"to the scores' shape {scores}")
    return Meta(scores, dt.promote(query.dtype, attn_mask.dtype))


def _weights(query, key, attn_mask):
    s = head_scale(query.shape[-1], query.dtype)
    scores = _la.matmul(_m.div(query, s), _m.div(key, s), transpose_b=True)
    return _nn.softmax(_m.add(scores, attn_mask), -1)


def _ref(query, key, attn_mask):
    out = dt.promote(dt.to_dtype(query.dtype), dt.to_dtype(attn_mask.dtype))
    s = head_scale(query.shape[-1], dt.to_dtype(query.dtype))
    c = ref_array_dtype(out)
    q = (query.astype(c) / s)
    k = (key.astype(c) / s)
    with np.errstate(all="ignore"):
        a = np.matmul(q, np.swapaxes(k, -1, -2)) + attn_mask.astype(c)
        e = np.exp(a - np.max(a, axis=-1, keepdims=True))
        return (e / np.sum(e, axis=-1, keepdims=True)).astype(out.np)


ATTENTION_WEIGHTS = defop(_NAME, infer=_infer, ref=_ref, arity=3, composite=_weights)


def attention_weights(query, key, attn_mask):
    """softmax(query / d**(1/4) @ (key / d**(1/4))^T + attn_mask, -1), d = query.shape[-1]:
    MindSpore's attention weights (composite 'attention_weights'); attn_mask is additive."""
    return apply(ATTENTION_WEIGHTS, query, key, attn_mask)


# ---------------------------------------------------------------- scaled attention ---------------
_SCALED = "scaled_attention"


def _scaled_infer(query, key, value, bias, scale):
    for name, t in (("query", query), ("key", key), ("value", value), ("bias", bias)):
        if not t.dtype.is_float:
            raise DTypeError(f"{_SCALED}: {name} has dtype {t.dtype}; it must be a float dtype")
    if not query.dtype is key.dtype is value.dtype:
        raise DTypeError(f"{_SCALED}: query, key and value must have one dtype, got "
                         f"{query.dtype}, {key.dtype} and {value.dtype}")
    q, k, v = tuple(query.shape), tuple(key.shape), tuple(value.shape)
    if len(q) < 2 or len(k) < 2 or len(v) < 2 or q[-1] != k[-1] or k[-2] != v[-2]:
        raise ShapeError(f"{_SCALED}: query {q}, key {k} and value {v} must be (..., S1, D), "
                         f"(..., S2, D) and (..., S2, Dv)")
    batch = broadcast_shapes(_SCALED, q[:-2], k[:-2], v[:-2])
    scores = batch + (q[-2], k[-2])
    if broadcast_shapes(_SCALED, scores, tuple(bias.shape)) != scores:
        raise ShapeError(f"{_SCALED}: bias of shape {tuple(bias.shape)} must broadcast to the "
                         f"scores' shape {scores}")
    return Meta(batch + (q[-2], v[-1]), query.dtype)


def _scaled(query, key, value, bias, scale):
    out = query.dtype
    c = dt.float32 if out in _HALF else out
    if c is not out:
        query, key, value = (_m.cast(t, c) for t in (query, key, value))
    if bias.dtype is not c:
        bias = _m.cast(bias, c)
    scores = _m.add(_m.mul(_la.matmul(query, key, transpose_b=True), scale), bias)
    y = _la.matmul(_nn.softmax(scores, -1), value)
    return y if c is out else _m.cast(y, out)


def _scaled_ref(query, key, value, bias, scale):
    out = dt.to_dtype(query.dtype)
    c = np.float64 if out is dt.float64 else np.float32
    q, k, v, b = (np.asarray(t).astype(c) for t in (query, key, value, bias))
    with np.errstate(all="ignore"):
        a = np.matmul(q, np.swapaxes(k, -1, -2)) * c(scale) + b
        e = np.exp(a - np.max(a, axis=-1, keepdims=True))
        return np.matmul(e / np.sum(e, axis=-1, keepdims=True), v).astype(out.np)


SCALED_ATTENTION = defop(_SCALED, infer=_scaled_infer, ref=_scaled_ref, arity=4,
                         attrs={"scale": 1.0}, composite=_scaled)


def scaled_attention(query, key, value, bias, scale=1.0):
    """softmax(scale * query @ key^T + bias) @ value (composite 'scaled_attention'), in float32
    for half-precision operands; bias is additive and broadcasts to the scores."""
    return apply(SCALED_ATTENTION, query, key, value, bias, scale=float(scale))
