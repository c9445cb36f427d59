"""Prints the MindSpore 2.10 values tests/nn/test_transformer.py hard-codes: run it with MindSpore's
Python from another directory (`cd /tmp && ~/.venvs/mindspore/bin/python
/work/main/tests/nn/transformer_ms_values.py`; delete /tmp/rank_0 afterwards). The weights and
inputs are the test's `fill` values; the printed lines replace the test's constants."""
import numpy as np
import mindspore as ms
from mindspore import nn
ms.set_context(mode=ms.PYNATIVE_MODE)

def fill(shape, k):
    n = int(np.prod(shape))
    return (0.5 * np.sin(0.7 * np.arange(n) + k)).reshape(shape).astype(np.float32)

def load(net):
    for i, (_, p) in enumerate(net.parameters_and_names()):
        p.set_data(ms.Tensor(fill(p.shape, i)))
    net.set_train(False)
    return net

def lit(a):
    a = np.asarray(a)
    return "np.array(" + repr(np.round(a.astype(np.float64), 6).tolist()) + ", F32)"

L, B, E = 3, 2, 4
x = fill((L, B, E), 11) * 2
kpm = np.array([[False, False, True], [False, False, False]])
bmask = np.array([[False, True, True], [False, False, True], [False, False, False]])
causal = np.triu(np.full((L, L), -np.inf, np.float32), 1)
T = ms.Tensor

def grads(f, ins, net):
    params = net.trainable_params()
    gf = ms.value_and_grad(f, grad_position=tuple(range(len(ins))), weights=params)
    v, (gi, gw) = gf(*ins)
    gi = gi if isinstance(gi, tuple) else (gi,)
    return v, gi, dict(zip([p.name for p in params], gw))

# A: self-attention, bool attn_mask and bool key_padding_mask
net = load(nn.MultiheadAttention(E, 2))
o, w = net(T(x), T(x), T(x), attn_mask=T(bmask), key_padding_mask=T(kpm))
print("MHA_OUT =", lit(o.asnumpy())); print("MHA_W =", lit(w.asnumpy()))
R = fill((L, B, E), 5)
def fa(x_):
    o, w = net(x_, x_, x_, attn_mask=T(bmask), key_padding_mask=T(kpm))
    return (o * T(R)).sum() + (w * T(fill(w.shape, 6))).sum()
v, gi, gw = grads(fa, [T(x)], net)
print("MHA_DX =", lit(gi[0].asnumpy())); print("MHA_DW_IN =", lit(gw["in_proj_weight"].asnumpy()))
print("MHA_DB_OUT =", lit(gw["out_proj.bias"].asnumpy()))
# B: float attn_mask + bool key_padding_mask: MindSpore adds the bool as 1.0
am = fill((L, L), 3)
o, w = net(T(x), T(x), T(x), attn_mask=T(am), key_padding_mask=T(kpm))
print("MHA_FLOAT_PLUS_BOOL_W =", lit(w.asnumpy()))
# C: kdim/vdim, bias_kv, zero_attn, not averaged
net = load(nn.MultiheadAttention(E, 2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True))
k, val = fill((2, B, 3), 7), fill((2, B, 5), 8)
o, w = net(T(x), T(k), T(val), key_padding_mask=T(np.array([[False, True], [False, False]])),
           average_attn_weights=False)
print("MHA_KV_OUT =", lit(o.asnumpy())); print("MHA_KV_W =", lit(w.asnumpy()))
# D: encoder layer, post-norm relu, causal float mask
net = load(nn.TransformerEncoderLayer(E, 2, 8, dropout=0.0))
print("ENC_OUT =", lit(net(T(x), src_mask=T(causal)).asnumpy()))
def fd(x_): return (net(x_, src_mask=T(causal)) * T(R)).sum()
v, gi, gw = grads(fd, [T(x)], net)
print("ENC_DX =", lit(gi[0].asnumpy())); print("ENC_DW1 =", lit(gw["dense1.weight"].asnumpy()))
# E: encoder layer, gelu, norm_first, batch_first, key padding
net = load(nn.TransformerEncoderLayer(E, 2, 8, activation="gelu", norm_first=True,
                                      batch_first=True))
xb = fill((B, L, E), 13) * 2
print("ENC_GELU_OUT =", lit(net(T(xb), src_key_padding_mask=T(kpm)).asnumpy()))
# F: decoder layer
net = load(nn.TransformerDecoderLayer(E, 2, 8))
mem = fill((2, B, E), 17) * 2
print("DEC_OUT =", lit(net(T(x), T(mem), tgt_mask=T(causal)).asnumpy()))
def ff(x_, m_): return (net(x_, m_, tgt_mask=T(causal)) * T(R)).sum()
v, gi, gw = grads(ff, [T(x), T(mem)], net)
print("DEC_DTGT =", lit(gi[0].asnumpy())); print("DEC_DMEM =", lit(gi[1].asnumpy()))
# G: Transformer, one layer each, norm_first
net = load(nn.Transformer(E, 2, 1, 1, 8, norm_first=True))
print("TR_OUT =", lit(net(T(mem), T(x), tgt_mask=T(causal)).asnumpy()))
