"""nn.MultiheadAttention: MindSpore 2.10's multi-head attention Cell (its parameters, their
names, shapes and initialisers, its mask conventions and its return structure).

The computation follows MindSpore's `multi_head_attention_forward` step by step so that the
numbers are MindSpore's: the packed in-projection `in_proj_weight` (3E, E) (or q/k/v_proj_weight
when kdim/vdim differ from embed_dim), bias_k/bias_v appended to the keys and values,
add_zero_attn, the masks merged into one additive mask, the attention weights of
core/ops/attention.py (query and key each divided by head_dim ** (1/4)), dropout on the weights,
the product with the values and out_proj.

Masks, as in MindSpore 2.10:
- attn_mask: (L, S) or (batch * num_heads, L, S); bool (or uint8) True = not attended, float =
  added to the scores.
- key_padding_mask: (batch, S); bool True = padding, float = added to the scores.
- Merging both: a bool attn_mask is or-ed with the key_padding_mask (a float key_padding_mask
  counts as True where it is non-zero); a float attn_mask gets the key_padding_mask ADDED, so a
  bool key_padding_mask then adds 1.0 at padded keys instead of masking them. That is what
  MindSpore 2.10 computes, and this Cell computes the same; to mask padding together with a
  float attn_mask, pass the key_padding_mask as a float (0 / -inf) mask.

Returns (attn_output, attn_weights) when need_weights, else the 1-tuple (attn_output,), as
MindSpore does; the weights are the dropped-out ones (MindSpore returns those) averaged over
the heads when average_attn_weights ((batch, L, S)), else (batch, num_heads, L, S). MindSpore
2.10's construct has no is_causal argument: pass a causal attn_mask."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...common.initializer import HeUniform, Uniform, XavierNormal, XavierUniform
from ...core import dtype as dt
from ...core.arg_checks import check_bool
from ...core.ops import array as _a
from ...core.ops import attention as _att
from ...core.ops import linalg as _la
from ...core.ops import math as _m
from ...core.ops import random as _rnd
from ...core.ops import reduce as _r
from ..cell import Cell
from .basic import Dense, check_positive_int, init_param

__all__ = ["MultiheadAttention"]

_WHO = "MultiheadAttention"


def check_dropout(who: str, p) -> float:
    """A dropout probability in [0, 1), else a TypeError/ValueError naming `who`."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{who}: dropout must be a float in [0, 1), got {p!r}")
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{who}: dropout must be a float in [0, 1) (the probability of "
                         f"dropping an attention weight), got {p}")
    return float(p)


def _linear(x, weight, bias):
    y = _la.matmul(x, weight, transpose_b=True)
    return y if bias is None else _m.add(y, bias)


def _pad_one_column(mask):
    """`mask` with one more key position on the last axis that masks nothing (0 / False), as
    MindSpore pads the masks for bias_k/bias_v and add_zero_attn."""
    col = _a.zeros(tuple(mask.shape[:-1]) + (1,), dt.int32 if mask.dtype is dt.bool_
                   else mask.dtype)
    if mask.dtype is dt.bool_:
        return _m.cast(_a.concat([_m.cast(mask, dt.int32), col], -1), dt.bool_)
    return _a.concat([mask, col], -1)


def _swap01(x):
    return _a.transpose(x, (1, 0) + tuple(range(2, len(x.shape))))


class MultiheadAttention(Cell):
    """Multi-head attention (MindSpore 2.x nn.MultiheadAttention): see the module docstring for
    the masks and the return structure. Inputs are (L, batch, E) (batch_first: (batch, L, E)),
    or unbatched (L, E)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False,
                 dtype=dt.float32):
        super().__init__()
        embed_dim = check_positive_int(_WHO, "embed_dim", embed_dim)
        num_heads = check_positive_int(_WHO, "num_heads", num_heads)
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else check_positive_int(_WHO, "kdim", kdim)
        self.vdim = embed_dim if vdim is None else check_positive_int(_WHO, "vdim", vdim)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = check_dropout(_WHO, dropout)
        self.batch_first = check_bool(_WHO, "batch_first", batch_first)
        has_bias = check_bool(_WHO, "has_bias", has_bias)
        add_bias_kv = check_bool(_WHO, "add_bias_kv", add_bias_kv)
        self.add_zero_attn = check_bool(_WHO, "add_zero_attn", add_zero_attn)
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError(f"{_WHO}: embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        dtype = dt.float32 if dtype is None else dt.to_dtype(dtype)
        self.dtype = dtype

        def param(shape, init, name):
            return init_param(_WHO, name, init, shape, dtype, name)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = param((3 * embed_dim, embed_dim), XavierUniform(),
                                        "in_proj_weight")
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = param((embed_dim, embed_dim), XavierUniform(), "q_proj_weight")
            self.k_proj_weight = param((embed_dim, self.kdim), XavierUniform(), "k_proj_weight")
            self.v_proj_weight = param((embed_dim, self.vdim), XavierUniform(), "v_proj_weight")
            self.in_proj_weight = None
        self.in_proj_bias = param((3 * embed_dim,), "zeros", "in_proj_bias") if has_bias \
            else None
        self.out_proj = Dense(embed_dim, embed_dim, has_bias=has_bias,
                              weight_init=HeUniform(math.sqrt(5)),
                              bias_init=Uniform(1 / math.sqrt(embed_dim)), dtype=dtype)
        if add_bias_kv:
            self.bias_k = param((1, 1, embed_dim), XavierNormal(), "bias_k")
            self.bias_v = param((1, 1, embed_dim), XavierNormal(), "bias_v")
        else:
            self.bias_k = self.bias_v = None

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True,
                  attn_mask=None, average_attn_weights=True):
        check_bool(_WHO, "need_weights", need_weights)
        check_bool(_WHO, "average_attn_weights", average_attn_weights)
        if key_padding_mask is not None and key_padding_mask.dtype is not dt.bool_ and \
                not key_padding_mask.dtype.is_float:
            raise ValueError(f"{_WHO}: key_padding_mask must be bool or float, got "
                             f"{key_padding_mask.dtype}; pass a bool mask (True = padding)")
        batched = len(query.shape) == 3
        if self.batch_first and batched:
            same_kv, same_qk = key is value, query is key
            query = _swap01(query)
            key = query if same_qk else _swap01(key)
            value = key if same_kv else _swap01(value)
        out, weights = self._forward(query, key, value, key_padding_mask, attn_mask,
                                     average_attn_weights and need_weights)
        if self.batch_first and batched:
            out = _swap01(out)
        return (out, weights) if need_weights else (out,)

    # -- the steps of MindSpore's multi_head_attention_forward ----------------------------------
    def _check_ranks(self, query, key, value, key_padding_mask, attn_mask):
        q, k, v = len(query.shape), len(key.shape), len(value.shape)
        if q not in (2, 3):
            raise ValueError(f"{_WHO}: query must be unbatched 2-D (L, E) or batched 3-D, got "
                             f"shape {tuple(query.shape)}")
        if k != q or v != q:
            raise ValueError(f"{_WHO}: for a {q}-D query, key and value must be {q}-D too, got "
                             f"key {tuple(key.shape)} and value {tuple(value.shape)}")
        if key_padding_mask is not None and len(key_padding_mask.shape) != q - 1:
            raise ValueError(f"{_WHO}: for a {q}-D query, key_padding_mask must be None or "
                             f"{q - 1}-D, got shape {tuple(key_padding_mask.shape)}")
        if attn_mask is not None:
            if len(attn_mask.shape) not in (2, 3):
                raise ValueError(f"{_WHO}: attn_mask must be None, 2-D (L, S) or 3-D "
                                 f"(batch * num_heads, L, S), got shape "
                                 f"{tuple(attn_mask.shape)}")
            want = (self.num_heads, query.shape[0], key.shape[0])
            if q == 2 and len(attn_mask.shape) == 3 and tuple(attn_mask.shape) != want:
                raise ValueError(f"{_WHO}: for an unbatched query a 3-D attn_mask must have "
                                 f"shape {want}, got {tuple(attn_mask.shape)}")

    def _project(self, query, key, value):
        e = self.embed_dim
        b = self.in_proj_bias
        if not self._qkv_same_embed_dim:
            for name, t, want in (("key", key, self.kdim), ("value", value, self.vdim)):
                if t.shape[-1] != want:
                    raise ValueError(f"{_WHO}: {name} has {t.shape[-1]} features in its last "
                                     f"dim, the layer was built with {name[0]}dim={want}")
            bq, bk, bv = (None,) * 3 if b is None else _a.split(b, e, 0)
            return (_linear(query, self.q_proj_weight, bq), _linear(key, self.k_proj_weight, bk),
                    _linear(value, self.v_proj_weight, bv))
        if key.shape[-1] != e:
            raise ValueError(f"{_WHO}: key and value must have embed_dim={e} features in their "
                             f"last dim, got {key.shape[-1]}; build the layer with kdim/vdim "
                             f"for other sizes")
        if key is value and query is key:      # self-attention: one product, split in three
            return tuple(_a.split(_linear(query, self.in_proj_weight, b), e, -1))
        w = self.in_proj_weight
        if key is value:
            wq, wkv = _a.split(w, [e, 2 * e], 0)
            bq, bkv = (None, None) if b is None else _a.split(b, [e, 2 * e], 0)
            k, v = _a.split(_linear(key, wkv, bkv), e, -1)
            return _linear(query, wq, bq), k, v
        wq, wk, wv = _a.split(w, e, 0)
        bq, bk, bv = (None,) * 3 if b is None else _a.split(b, e, 0)
        return _linear(query, wq, bq), _linear(key, wk, bk), _linear(value, wv, bv)

    def _forward(self, query, key, value, key_padding_mask, attn_mask, average):
        self._check_ranks(query, key, value, key_padding_mask, attn_mask)
        batched = len(query.shape) == 3
        if not batched:
            same_kv, same_qk = key is value, query is key
            query = _a.expand_dims(query, 1)
            key = query if same_qk else _a.expand_dims(key, 1)
            value = key if same_kv else _a.expand_dims(value, 1)
            if key_padding_mask is not None:
                key_padding_mask = _a.expand_dims(key_padding_mask, 0)
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
        heads, hd = self.num_heads, self.head_dim
        if embed_dim != self.embed_dim:
            raise ValueError(f"{_WHO}: query has {embed_dim} features in its last dim, the "
                             f"layer was built with embed_dim={self.embed_dim}")
        if self._qkv_same_embed_dim and tuple(key.shape) != tuple(value.shape):
            raise ValueError(f"{_WHO}: key {tuple(key.shape)} and value {tuple(value.shape)} "
                             f"must have one shape")
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise ValueError(f"{_WHO}: key {tuple(key.shape)} and value {tuple(value.shape)} "
                             f"must have the same sequence length and batch size")
        q, k, v = self._project(query, key, value)
        attn_mask = self._canonical_attn_mask(attn_mask, tgt_len, src_len, bsz)
        if self.bias_k is not None:
            k = _a.concat([k, _a.tile(self.bias_k, (1, bsz, 1))], 0)
            v = _a.concat([v, _a.tile(self.bias_v, (1, bsz, 1))], 0)
            attn_mask = None if attn_mask is None else _pad_one_column(attn_mask)
            if key_padding_mask is not None:
                key_padding_mask = _pad_one_column(key_padding_mask)
        q = _swap01(_a.reshape(q, (tgt_len, bsz * heads, hd)))
        k = _swap01(_a.reshape(k, (k.shape[0], bsz * heads, hd)))
        v = _swap01(_a.reshape(v, (v.shape[0], bsz * heads, hd)))
        if self.add_zero_attn:
            k = _a.concat([k, _a.zeros((bsz * heads, 1, hd), k.dtype)], 1)
            v = _a.concat([v, _a.zeros((bsz * heads, 1, hd), v.dtype)], 1)
            attn_mask = None if attn_mask is None else _pad_one_column(attn_mask)
            if key_padding_mask is not None:
                key_padding_mask = _pad_one_column(key_padding_mask)
        src_len = k.shape[1]
        mask = self._merge_masks(attn_mask, key_padding_mask, bsz, src_len, q.dtype)
        q = _a.reshape(q, (bsz, heads, tgt_len, hd))
        k = _a.reshape(k, (bsz, heads, src_len, hd))
        v = _a.reshape(v, (bsz, heads, src_len, hd))
        if mask is None:
            mask = _a.zeros((), q.dtype)         # adding 0 changes no score
        weights = _att.attention_weights(q, k, mask)
        if self.training and self.dropout > 0.0:
            weights = _rnd.dropout(weights, self.dropout, True)
        out = _la.matmul(weights, v)
        out = _a.reshape(_a.transpose(out, (2, 0, 1, 3)), (bsz * tgt_len, embed_dim))
        out = _a.reshape(self.out_proj(out), (tgt_len, bsz, embed_dim))
        weights = _a.reshape(weights, (bsz, heads, tgt_len, src_len))
        if average:         # (skipped when the weights are not returned: no number changes)
            weights = _m.div(_r.sum(weights, 1), heads)
        if not batched:
            out, weights = _a.squeeze(out, 1), _a.squeeze(weights, 0)
        return out, weights

    def _canonical_attn_mask(self, attn_mask, tgt_len, src_len, bsz):
        """attn_mask as bool or float, 3-D: (1, L, S) or (batch * num_heads, L, S)."""
        if attn_mask is None:
            return None
        if attn_mask.dtype is dt.uint8:
            attn_mask = _m.cast(attn_mask, dt.bool_)
        elif attn_mask.dtype is not dt.bool_ and not attn_mask.dtype.is_float:
            raise ValueError(f"{_WHO}: attn_mask must be float, bool or uint8, got "
                             f"{attn_mask.dtype}")
        if len(attn_mask.shape) == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise ValueError(f"{_WHO}: a 2-D attn_mask must have shape (L, S) = "
                                 f"{(tgt_len, src_len)}, got {tuple(attn_mask.shape)}")
            return _a.expand_dims(attn_mask, 0)
        want = (bsz * self.num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise ValueError(f"{_WHO}: a 3-D attn_mask must have shape (batch * num_heads, L, "
                             f"S) = {want}, got {tuple(attn_mask.shape)}")
        return attn_mask

    def _merge_masks(self, attn_mask, key_padding_mask, bsz, src_len, dtype):
        """One additive float mask broadcasting to (batch, num_heads, L, S), or None."""
        heads = self.num_heads
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (bsz, src_len):
                raise ValueError(f"{_WHO}: key_padding_mask must have shape (batch, S) = "
                                 f"{(bsz, src_len)}, got {tuple(key_padding_mask.shape)}")
            kpm = _a.reshape(_a.tile(_a.reshape(key_padding_mask, (bsz, 1, 1, src_len)),
                                     (1, heads, 1, 1)), (bsz * heads, 1, src_len))
            if attn_mask is None:
                attn_mask = kpm
            elif attn_mask.dtype is dt.bool_:
                attn_mask = _m.logical_or(attn_mask, _m.cast(kpm, dt.bool_))
            else:       # MindSpore adds it, a bool one as 0 / 1 (see the module docstring)
                attn_mask = _m.add(attn_mask, kpm if kpm.dtype.is_float
                                   else _m.cast(kpm, attn_mask.dtype))
        if attn_mask is None:
            return None
        if attn_mask.dtype is dt.bool_:
            attn_mask = _m.where(attn_mask, _a.full((), -np.inf, dtype=dtype),
                                 _a.zeros((), dtype))
        if attn_mask.shape[0] == 1:
            return _a.expand_dims(attn_mask, 0)
        return _a.reshape(attn_mask, (bsz, heads, -1, src_len))
