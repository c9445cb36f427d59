"""ops.flash_attention_score against a numpy reference written from MindSpore 2.10's
documentation (MindSpore runs the op on Ascend only, so its numbers cannot be produced on this
machine): the four layouts, grouped key/value heads, real_shift, attn_mask in its three shapes
(bool and uint8, True = discard), the causal sparse modes 2 and 3, the pre/next token band, both
modes, gradients, and the arguments it refuses."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, ops

from helpers import graph_runs

F16 = np.float16
R = np.random.default_rng(5)


def _heads(x, layout, n):
    """numpy (B, N, S, D) from `layout`."""
    if layout == "BNSD":
        return x
    if layout == "BSND":
        return x.transpose(0, 2, 1, 3)
    if layout == "BSH":
        b, s, h = x.shape
        return x.reshape(b, s, n, h // n).transpose(0, 2, 1, 3)
    s, b, h = x.shape
    return x.reshape(s, b, n, h // n).transpose(1, 2, 0, 3)


def _back(y, layout):
    b, n, s, d = y.shape
    return {"BNSD": y, "BSND": y.transpose(0, 2, 1, 3),
            "BSH": y.transpose(0, 2, 1, 3).reshape(b, s, n * d),
            "SBH": y.transpose(2, 0, 1, 3).reshape(s, b, n * d)}[layout]


def reference(q, k, v, n1, n2, layout, scale, mask=None, shift=None):
    """softmax(mask(scale * q k^T + shift)) v per head in float64; query head i reads key/value
    head i // (n1 / n2); mask True = discarded."""
    qh = _heads(q.astype(np.float64), layout, n1)
    kh = np.repeat(_heads(k.astype(np.float64), layout, n2), n1 // n2, axis=1)
    vh = np.repeat(_heads(v.astype(np.float64), layout, n2), n1 // n2, axis=1)
    s = qh @ kh.transpose(0, 1, 3, 2) * scale
    if shift is not None:
        s = s + shift.astype(np.float64)
    if mask is not None:
        s = np.where(np.broadcast_to(mask.astype(bool), s.shape), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return _back((p / p.sum(-1, keepdims=True)) @ vh, layout)


def _qkv(layout, b, s1, s2, n1, n2, d):
    def make(s, n):
        shape = {"BSH": (b, s, n * d), "SBH": (s, b, n * d), "BNSD": (b, n, s, d),
                 "BSND": (b, s, n, d)}[layout]
        return R.standard_normal(shape).astype(F16)
    return make(s1, n1), make(s2, n2), make(s2, n2)


def _close(got, want):
    assert got.dtype == ms.float16
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("layout", ["BSH", "SBH", "BNSD", "BSND"])
def test_layouts_and_grouped_heads(mode, layout):
    q, k, v = _qkv(layout, 2, 3, 5, 4, 2, 8)
    mask = R.random((2, 1, 3, 5)) < 0.3
    mask[..., 0] = False                        # every query keeps a key
    with graph_runs("flash_attention_score"):
        got = ms.jit(lambda a, b, c, m: ops.flash_attention_score(
            a, b, c, 4, attn_mask=m, scalar_value=0.35, input_layout=layout))(
            Tensor(q), Tensor(k), Tensor(v), Tensor(mask)) if mode == "graph" else \
            ops.flash_attention_score(Tensor(q), Tensor(k), Tensor(v), 4,
                                      attn_mask=Tensor(mask), scalar_value=0.35,
                                      input_layout=layout)
    assert got.shape == q.shape
    _close(got, reference(q, k, v, 4, 2, layout, 0.35, mask))


def test_mask_shapes_uint8_and_real_shift():
    q, k, v = _qkv("BNSD", 2, 4, 4, 2, 2, 4)
    shift = R.standard_normal((1, 2, 4, 4)).astype(F16)
    for shape in ((2, 2, 4, 4), (2, 1, 4, 4), (4, 4)):
        mask = (R.random(shape) < 0.3).astype(np.uint8)
        mask[..., 1] = 0
        got = ops.flash_attention_score(Tensor(q), Tensor(k), Tensor(v), 2,
                                        real_shift=Tensor(shift), attn_mask=Tensor(mask),
                                        input_layout="BNSD")
        _close(got, reference(q, k, v, 2, 2, "BNSD", 1.0, mask, shift))
    got = ops.flash_attention_score(Tensor(q), Tensor(k), Tensor(v), 2, input_layout="BNSD")
    _close(got, reference(q, k, v, 2, 2, "BNSD", 1.0))


def test_causal_sparse_modes_and_token_band():
    q, k, v = _qkv("BSH", 1, 3, 5, 2, 2, 4)
    compressed = Tensor(np.triu(np.ones((2048, 2048), np.uint8), 1))
    i, j = np.arange(3)[:, None], np.arange(5)[None, :]
    for sparse_mode, masked in ((2, j > i), (3, j > i + 2)):
        got = ops.flash_attention_score(Tensor(q), Tensor(k), Tensor(v), 2,
                                        attn_mask=compressed, sparse_mode=sparse_mode)
        _close(got, reference(q, k, v, 2, 2, "BSH", 1.0, masked))
    q, k, v = _qkv("BSH", 1, 5, 5, 2, 2, 4)
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    got = ops.flash_attention_score(Tensor(q), Tensor(k), Tensor(v), 2,
                                    attn_mask=Tensor(np.zeros((5, 5), bool)), pre_tokens=1,
                                    next_tokens=0)
    _close(got, reference(q, k, v, 2, 2, "BSH", 1.0, (j < i - 1) | (j > i)))


def test_gradients_match_float64_and_both_modes():
    q, k, v = _qkv("BSH", 1, 3, 4, 2, 1, 4)
    mask = np.zeros((3, 4), bool)
    mask[0, 2:] = True
    w = R.standard_normal(q.shape).astype(np.float32)

    def loss(a, b, c):
        out = ops.flash_attention_score(a, b, c, 2, attn_mask=Tensor(mask), scalar_value=0.5)
        return (out.astype(ms.float32) * Tensor(w)).sum()

    def loss64(a, b, c):
        qh, kh, vh = (x.reshape(1, x.shape[1], -1, 4).transpose(0, 2, 1, 3) for x in (a, b, c))
        kh = ops.broadcast_to(kh, (1, 2, 4, 4))
        vh = ops.broadcast_to(vh, (1, 2, 4, 4))
        s = ops.matmul(qh, kh.swapaxes(-1, -2)) * 0.5 + Tensor(np.where(mask, -np.inf, 0.0))
        out = ops.matmul(ops.softmax(s, -1), vh).transpose(0, 2, 1, 3).reshape(1, 3, 8)
        return (out * Tensor(w.astype(np.float64))).sum()

    want = ms.grad(loss64, grad_position=(0, 1, 2))(
        *(Tensor(x.astype(np.float64)) for x in (q, k, v)))
    got = {}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        got[mode] = ms.grad(loss, grad_position=(0, 1, 2))(Tensor(q), Tensor(k), Tensor(v))
    for g, p, e in zip(got[ms.GRAPH_MODE], got[ms.PYNATIVE_MODE], want):
        assert g.dtype == ms.float16 and g.shape == e.shape
        np.testing.assert_array_equal(g.asnumpy(), p.asnumpy())
        np.testing.assert_allclose(g.asnumpy().astype(np.float64), e.asnumpy(), rtol=1e-2,
                                   atol=3e-3)


def test_refused_arguments():
    q, k, v = (Tensor(x) for x in _qkv("BSH", 1, 3, 3, 2, 2, 4))
    fa = ops.flash_attention_score
    with pytest.raises(TypeError, match="float16 or bfloat16"):
        fa(q.astype(ms.float32), k.astype(ms.float32), v.astype(ms.float32), 2)
    with pytest.raises(NotImplementedError, match="keep_prob"):
        fa(q, k, v, 2, keep_prob=0.9)
    with pytest.raises(NotImplementedError, match="TND"):
        fa(q, k, v, 2, input_layout="TND")
    with pytest.raises(ValueError, match="input_layout"):
        fa(q, k, v, 2, input_layout="BHS")
    with pytest.raises(NotImplementedError, match="sparse_mode=4"):
        fa(q, k, v, 2, sparse_mode=4)
    with pytest.raises(NotImplementedError, match="padding_mask"):
        fa(q, k, v, 2, padding_mask=q)
    with pytest.raises(NotImplementedError, match="inner_precise"):
        fa(q, k, v, 2, inner_precise=1)
    with pytest.raises(ValueError, match="attn_mask must have shape"):
        fa(q, k, v, 2, attn_mask=Tensor(np.zeros((2, 3), bool)))
    with pytest.raises(TypeError, match="attn_mask must be bool or uint8"):
        fa(q, k, v, 2, attn_mask=Tensor(np.zeros((3, 3), np.float16)))
    with pytest.raises(ValueError, match="compressed causal attn_mask"):
        fa(q, k, v, 2, attn_mask=Tensor(np.zeros((3, 3), bool)), sparse_mode=2)
    with pytest.raises(TypeError, match="real_shift must have the dtype"):
        fa(q, k, v, 2, real_shift=Tensor(np.zeros((1, 2, 3, 3), np.float32)))
    kv3 = Tensor(np.zeros((1, 3, 12), F16))            # 3 key/value heads of size 4
    with pytest.raises(ValueError, match="multiple of the key/value head count"):
        fa(q, kv3, kv3, 2)
