"""mindspore.ops' attention functions over core/ops/attention.py: flash_attention_score.

MindSpore 2.10 runs flash_attention_score on Ascend only (float16/bfloat16 operands); minispore
runs it on every device target with MindSpore's layouts, head groups, masks and dtype rules,
computing the attention in float32 and rounding the output to the operands' dtype once (the
Ascend kernel's blockwise online softmax rounds in other places, so the last fp16 bit may
differ). What it does not implement raises NotImplementedError naming the argument: attention
dropout (keep_prob < 1, drop_mask), the TND layout and its actual_seq_qlen/actual_seq_kvlen,
the band and prefix sparse modes (4, 5) and their `prefix`, the reserved padding_mask and
inner_precise values other than 0. MindSpore 2.10 has no public scaled_dot_product_attention
in mindspore.ops (nn.MultiheadAttention's attention is the internal composite
attention_weights)."""
from __future__ import annotations

import numbers

import numpy as np

from ..core import dtype as _dt
from ..core.ops import array as _a
from ..core.ops import attention as _att
from ..core.ops import math as _m

__all__ = ["flash_attention_score"]

_WHO = "flash_attention_score"
_INT_MAX = 2147483647
_LAYOUTS = ("BSH", "BNSD", "SBH", "BSND", "TND")


def _to_bnsd(x, layout, heads, name):
    """`x` as (B, N, S, D) from `layout`; `heads` is N for the 3-D layouts."""
    shape = tuple(x.shape)
    want = 3 if layout in ("BSH", "SBH") else 4
    if len(shape) != want:
        raise ValueError(f"{_WHO}: {name} must be {want}-D for input_layout={layout!r}, got "
                         f"shape {shape}")
    if layout == "BNSD":
        return x
    if layout == "BSND":
        return _a.transpose(x, (0, 2, 1, 3))
    if shape[2] % heads:
        raise ValueError(f"{_WHO}: the hidden size {shape[2]} of {name} ({layout}) is not a "
                         f"multiple of its head count {heads}")
    if layout == "BSH":
        return _a.transpose(_a.reshape(x, shape[:2] + (heads, shape[2] // heads)), (0, 2, 1, 3))
    return _a.transpose(_a.reshape(x, shape[:2] + (heads, shape[2] // heads)), (1, 2, 0, 3))


def _from_bnsd(y, layout):
    b, n, s, d = y.shape
    if layout == "BNSD":
        return y
    if layout == "BSND":
        return _a.transpose(y, (0, 2, 1, 3))
    if layout == "BSH":
        return _a.reshape(_a.transpose(y, (0, 2, 1, 3)), (b, s, n * d))
    return _a.reshape(_a.transpose(y, (2, 0, 1, 3)), (s, b, n * d))


def _repeat_heads(x, groups):
    """(B, N2, S, D) -> (B, N2 * groups, S, D): query head n reads key/value head n // groups."""
    if groups == 1:
        return x
    b, n, s, d = x.shape
    x = _a.broadcast_to(_a.expand_dims(x, 2), (b, n, groups, s, d))
    return _a.reshape(x, (b, n * groups, s, d))


def _band(s1, s2, sparse_mode, pre_tokens, next_tokens):
    """The positions that sparse_mode and the token band leave out, as a (S1, S2) bool array
    (True = discarded), or None when none is."""
    i = np.arange(s1)[:, None]
    j = np.arange(s2)[None, :]
    if sparse_mode == 2:                    # causal from the top-left corner
        out = j > i
    elif sparse_mode == 3:                  # causal from the bottom-right corner
        out = j > i + (s2 - s1)
    elif sparse_mode == 0 and (pre_tokens != _INT_MAX or next_tokens != _INT_MAX):
        if s1 != s2:
            raise NotImplementedError(
                f"{_WHO}: pre_tokens/next_tokens with sparse_mode=0 are supported for S1 == S2 "
                f"only (got S1={s1}, S2={s2}); put the band into attn_mask and leave them at "
                f"their defaults")
        out = (j < i - pre_tokens) | (j > i + next_tokens)
    else:
        return None
    return out if out.any() else None


def _check_int(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{_WHO}: {name} must be an int, got {v!r}")
    return int(v)


def _check_unsupported(drop_mask, padding_mask, prefix, actual_seq_qlen, actual_seq_kvlen,
                       keep_prob, inner_precise, input_layout, sparse_mode):
    if isinstance(keep_prob, bool) or not isinstance(keep_prob, numbers.Real) or \
            not 0.0 < keep_prob <= 1.0:
        raise ValueError(f"{_WHO}: keep_prob must be a float in (0, 1], got {keep_prob!r}")
    if keep_prob != 1.0:
        raise NotImplementedError(f"{_WHO}: keep_prob={keep_prob} (attention dropout) is not "
                                  f"supported; pass keep_prob=1.0")
    if drop_mask is not None:
        raise ValueError(f"{_WHO}: drop_mask must be None when keep_prob is 1.0")
    if padding_mask is not None:
        raise NotImplementedError(f"{_WHO}: padding_mask is reserved (not implemented in "
                                  f"MindSpore 2.10 either); pass None")
    if inner_precise != 0:
        raise NotImplementedError(f"{_WHO}: inner_precise={inner_precise!r} is not supported; "
                                  f"pass 0")
    if not isinstance(input_layout, str):
        raise TypeError(f"{_WHO}: input_layout must be a str, got {input_layout!r}")
    if input_layout not in _LAYOUTS:
        raise ValueError(f"{_WHO}: input_layout must be one of {_LAYOUTS}, got "
                         f"{input_layout!r}")
    if input_layout == "TND" or actual_seq_qlen is not None or actual_seq_kvlen is not None:
        raise NotImplementedError(f"{_WHO}: the TND layout (and actual_seq_qlen / "
                                  f"actual_seq_kvlen) is not supported; pad the sequences and "
                                  f"use 'BSH' or 'BNSD' with an attn_mask")
    if sparse_mode not in (0, 1, 2, 3):
        raise NotImplementedError(f"{_WHO}: sparse_mode={sparse_mode} is not supported; use 0 "
                                  f"or 1 (a full attn_mask), 2 or 3 (causal)")
    if prefix is not None:
        raise NotImplementedError(f"{_WHO}: prefix (sparse_mode=5) is not supported; pass None")


def _mask_bias(attn_mask, real_shift, sparse_mode, pre_tokens, next_tokens, b, n1, s1, s2,
               dtype):
    """attn_mask, the sparse mode's band and real_shift as one additive float32 bias."""
    bias = None
    if real_shift is not None:
        if real_shift.dtype is not dtype:
            raise TypeError(f"{_WHO}: real_shift must have the dtype of query ({dtype}), got "
                            f"{real_shift.dtype}")
        shape = tuple(real_shift.shape)
        if shape not in ((b, n1, s1, s2), (1, n1, s1, s2)):
            raise ValueError(f"{_WHO}: real_shift must have shape (B, N1, S1, S2) or (1, N1, "
                             f"S1, S2) = {(b, n1, s1, s2)}, got {shape}")
        bias = _m.cast(real_shift, _dt.float32)
    if sparse_mode in (0, 1):
        masked = None
        if attn_mask is not None:
            if attn_mask.dtype not in (_dt.bool_, _dt.uint8):
                raise TypeError(f"{_WHO}: attn_mask must be bool or uint8 (1 = discard), got "
                                f"{attn_mask.dtype}")
            shape = tuple(attn_mask.shape)
            if shape not in ((b, n1, s1, s2), (b, 1, s1, s2), (s1, s2)):
                raise ValueError(f"{_WHO}: attn_mask must have shape (B, N1, S1, S2), (B, 1, "
                                 f"S1, S2) or (S1, S2) = {(s1, s2)}, got {shape}")
            masked = _m.cast(attn_mask, _dt.bool_)
            band = _band(s1, s2, sparse_mode, pre_tokens, next_tokens)
            if band is not None:
                masked = _m.logical_or(masked, _tensor(band))
    else:
        if attn_mask is None or tuple(attn_mask.shape) != (2048, 2048):
            got = None if attn_mask is None else tuple(attn_mask.shape)
            raise ValueError(f"{_WHO}: sparse_mode={sparse_mode} needs the compressed causal "
                             f"attn_mask of shape (2048, 2048) (np.triu(ones, 1)), got {got}")
        band = _band(s1, s2, sparse_mode, pre_tokens, next_tokens)
        masked = None if band is None else _tensor(band)
    if masked is not None:
        inf = _m.where(masked, _a.full((), -np.inf, dtype=_dt.float32),
                       _a.zeros((), _dt.float32))
        bias = inf if bias is None else _m.add(bias, inf)
    return _a.zeros((), _dt.float32) if bias is None else bias


def _tensor(mask: np.ndarray):
    from ..core.tensor import Tensor
    return Tensor(mask)


def flash_attention_score(query, key, value, head_num, real_shift=None, drop_mask=None,
                          padding_mask=None, attn_mask=None, prefix=None, actual_seq_qlen=None,
                          actual_seq_kvlen=None, keep_prob=1.0, scalar_value=1.0,
                          pre_tokens=2147483647, next_tokens=2147483647, inner_precise=0,
                          input_layout='BSH', sparse_mode=0):
    """MindSpore's ops.flash_attention_score: softmax(mask(scalar_value * q @ k^T + real_shift,
    attn_mask)) @ v per head, the key/value heads shared by head_num / N2 query heads each;
    attn_mask True / 1 discards a position. Returns attention_out, shaped as query."""
    head_num = _check_int("head_num", head_num)
    sparse_mode = _check_int("sparse_mode", sparse_mode)
    pre_tokens = _check_int("pre_tokens", pre_tokens)
    next_tokens = _check_int("next_tokens", next_tokens)
    _check_unsupported(drop_mask, padding_mask, prefix, actual_seq_qlen, actual_seq_kvlen,
                       keep_prob, inner_precise, input_layout, sparse_mode)
    if isinstance(scalar_value, bool) or not isinstance(scalar_value, numbers.Real):
        raise TypeError(f"{_WHO}: scalar_value must be a float, got {scalar_value!r}")
    if head_num <= 0:
        raise ValueError(f"{_WHO}: head_num must be > 0, got {head_num}")
    dtype = query.dtype
    if dtype not in (_dt.float16, _dt.bfloat16):
        raise TypeError(f"{_WHO}: query must be float16 or bfloat16 (as in MindSpore), got "
                        f"{dtype}; cast it with .astype(ms.float16)")
    if key.dtype is not dtype or value.dtype is not dtype:
        raise TypeError(f"{_WHO}: query, key and value must have one dtype, got {dtype}, "
                        f"{key.dtype} and {value.dtype}")
    if tuple(key.shape) != tuple(value.shape):
        raise ValueError(f"{_WHO}: key {tuple(key.shape)} and value {tuple(value.shape)} must "
                         f"have one shape")
    q = _to_bnsd(query, input_layout, head_num, "query")
    d = q.shape[-1]
    if input_layout in ("BSH", "SBH"):
        if key.shape[2] % d:
            raise ValueError(f"{_WHO}: the key's hidden size {key.shape[2]} is not a multiple "
                             f"of the head size {d} (query hidden size / head_num)")
        kv_heads = key.shape[2] // d
    else:
        kv_heads = key.shape[1] if input_layout == "BNSD" else key.shape[2]
    k = _to_bnsd(key, input_layout, kv_heads, "key")
    v = _to_bnsd(value, input_layout, kv_heads, "value")
    b, n1, s1, _ = q.shape
    if q.shape[1] != head_num:
        raise ValueError(f"{_WHO}: query has {q.shape[1]} heads, head_num is {head_num}")
    if k.shape[-1] != d or k.shape[0] != b:
        raise ValueError(f"{_WHO}: query {tuple(query.shape)} and key {tuple(key.shape)} must "
                         f"have one batch size and head size ({input_layout})")
    if kv_heads <= 0 or head_num % kv_heads:
        raise ValueError(f"{_WHO}: head_num {head_num} must be a multiple of the key/value "
                         f"head count {kv_heads}")
    groups = head_num // kv_heads
    k, v = _repeat_heads(k, groups), _repeat_heads(v, groups)
    s2 = k.shape[2]
    bias = _mask_bias(attn_mask, real_shift, sparse_mode, pre_tokens, next_tokens, b, n1, s1,
                      s2, dtype)
    out = _att.scaled_attention(q, k, v, bias, scale=float(scalar_value))
    return _from_bnsd(out, input_layout)
