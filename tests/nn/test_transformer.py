"""nn.MultiheadAttention and the Transformer layers against MindSpore 2.10: parameter names,
shapes and initialisers, outputs and gradients with identical weights in PyNative and GRAPH_MODE
(and the O2 native sink), the mask conventions (bool True = masked, float added, MindSpore's
adding of a bool key_padding_mask to a float attn_mask), the return tuples, dropout in
training, and argument errors.

Weights and inputs are deterministic (`fill`: 0.5 * sin(0.7 * i + k), the parameters in
parameters_and_names order, k their index), so the same tensors were loaded into MindSpore 2.10
to produce the expected values below (rounded to 6 decimals)."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops

from helpers import graph_runs

F32 = np.float32
TOL = dict(rtol=1e-5, atol=3e-6)
L, B, E = 3, 2, 4

# ---------------------------------------------------------------- values from MindSpore 2.10 -----
MHA_OUT = np.array(
    [[[0.044995, -0.45439, -0.093187, -0.994451], [-0.1243, -0.246182, -0.316249, -0.782311]],
    [[0.188876, -0.584661, 0.008421, -1.055655], [-0.242652, -0.147479, -0.383897, -0.753535]],
    [[0.181554, -0.573943, -0.004455, -1.042108], [-0.305757, -0.10252, -0.405513, -0.757758]]],
    F32)
MHA_W = np.array(
    [[[1.0, 0.0, 0.0], [0.475262, 0.524738, 0.0], [0.494518, 0.505482, 0.0]], [[1.0, 0.0, 0.0],
    [0.438891, 0.561109, 0.0], [0.210899, 0.26429, 0.524811]]], F32)
MHA_DX = np.array(
    [[[0.024856, 0.08324, 0.102474, 0.073514], [-0.024449, -0.066992, -0.078026, -0.052364]],
    [[-0.023367, 0.002256, 0.026819, 0.038768], [0.032685, 0.015383, -0.009153, -0.029385]],
    [[0.002482, 0.002203, 0.000887, -0.000845], [-0.002556, 0.000215, 0.002885, 0.004198]]], F32)
MHA_DW_IN = np.array(
    [[-0.008642, -0.01743, -0.01802, -0.010135], [0.003088, 0.006895, 0.00746, 0.004516],
    [0.002893, 0.006767, 0.007459, 0.004642], [-0.01001, -0.01782, -0.017249, -0.008565],
    [0.018234, -0.004347, -0.024884, -0.033717], [-0.012099, 0.009806, 0.027099, 0.031647],
    [0.001112, -0.002676, -0.005206, -0.005287], [0.003115, 0.00069, -0.002059, -0.003841],
    [0.514434, 0.44581, 0.167515, -0.189565], [0.334892, 0.260522, 0.063625, -0.163196],
    [-0.011485, -0.04946, -0.064173, -0.048705], [-0.341913, -0.332362, -0.166496, 0.077675]], F32)
MHA_DB_OUT = np.array([-0.232663, 0.057771, 0.321033, 0.433309], F32)
MHA_FLOAT_PLUS_BOOL_W = np.array(
    [[[0.296575, 0.240942, 0.462483], [0.115699, 0.161031, 0.72327], [0.169037, 0.184971,
    0.645992]], [[0.397327, 0.322668, 0.280005], [0.166162, 0.25734, 0.576498], [0.208004,
    0.289017, 0.502978]]], F32)
MHA_KV_OUT = np.array(
    [[[0.296075, 0.511905, 0.426135, 0.143922], [0.293239, 0.502712, 0.446295, 0.115125]],
    [[0.304144, 0.499024, 0.44234, 0.126266], [0.294376, 0.503599, 0.443487, 0.11953]], [[0.296589,
    0.506296, 0.436191, 0.130581], [0.302562, 0.496497, 0.448684, 0.116838]]], F32)
MHA_KV_W = np.array(
    [[[[0.329325, 0.0, 0.365158, 0.305517], [0.283069, 0.0, 0.379891, 0.33704], [0.262646, 0.0,
    0.376212, 0.361142]], [[0.16837, 0.0, 0.430223, 0.401407], [0.19262, 0.0, 0.444146, 0.363234],
    [0.238217, 0.0, 0.44027, 0.321513]]], [[[0.195176, 0.301393, 0.251211, 0.252219], [0.138638,
    0.357861, 0.260424, 0.243078], [0.122383, 0.369394, 0.272438, 0.235785]], [[0.218498, 0.235776,
    0.298154, 0.247572], [0.241632, 0.19304, 0.29056, 0.274768], [0.254541, 0.151923, 0.292689,
    0.300847]]]], F32)
ENC_OUT = np.array(
    [[[-0.75046, -0.609525, -0.214744, 0.633297], [-0.821676, -0.762493, 0.351052, 0.487326]],
    [[-0.934151, -0.239035, -0.018589, 0.515041], [-0.494641, -1.160329, 0.215193, 0.470467]],
    [[-0.954031, -0.269152, 0.13043, 0.472742], [-0.354773, -1.110065, -0.163721, 0.516565]]], F32)
ENC_DX = np.array(
    [[[-0.015943, 0.01527, 0.014212, -0.0002], [0.073981, -0.119351, -0.04423, -0.044907]],
    [[-0.053122, -0.047478, 0.033871, 0.074264], [0.140126, -0.068086, -0.045698, -0.081478]],
    [[0.013685, -0.013318, -0.022485, 0.021235], [0.00728, -0.000345, 0.009878, -0.020574]]], F32)
ENC_DW1 = np.array(
    [[-0.002535, -0.015822, -0.011172, -0.019594], [0.0, 0.0, 0.0, 0.0], [0.047593, -0.094241,
    -0.133897, -0.141513], [-0.08205, -0.00697, 0.006918, -0.034195], [0.078569, -0.077789,
    0.006809, -0.017518], [0.02657, -0.002595, 0.098218, 0.079092], [-0.020884, 0.067798, 0.136212,
    0.135558], [0.0, 0.0, 0.0, 0.0]], F32)
ENC_GELU_OUT = np.array(
    [[[1.016126, 1.162312, 1.723678, 0.05501], [0.50349, -0.381733, -0.1014, -1.205239], [0.482456,
    0.778942, 1.664913, 0.359752]], [[1.125947, 0.191289, 0.163871, -1.379695], [-0.046477,
    0.147187, 1.252262, 0.332773], [1.513017, 0.819561, 0.743528, -1.127856]]], F32)
DEC_OUT = np.array(
    [[[-0.4953, 0.231664, -0.709651, -0.06349], [-0.270607, -1.019393, -0.164573, 0.048847]],
    [[-0.340473, -0.029439, -0.762261, -0.181272], [-0.267171, -0.999435, -0.153345, 0.016767]],
    [[-0.283615, -0.235484, -0.613214, -0.250432], [-0.265398, -1.004202, -0.200985, 0.049151]]],
    F32)
DEC_DTGT = np.array(
    [[[-0.05282, 0.041169, -0.017449, 0.112126], [-0.01492, -0.000636, 0.040725, -0.005067]],
    [[0.078094, 0.008556, -0.092726, 0.015477], [-0.015106, 0.008554, 0.013616, 0.014473]],
    [[0.024428, -0.013694, -0.043384, 0.032922], [-0.012789, 0.080214, -0.061791, 0.018237]]], F32)
DEC_DMEM = np.array(
    [[[0.055687, 0.093795, 0.087789, 0.040495], [-0.007106, -0.011989, -0.011233, -0.005194]],
    [[0.049596, 0.077223, 0.06853, 0.027607], [-0.007525, -0.011841, -0.010588, -0.004355]]], F32)
TR_OUT = np.array(
    [[[0.148299, 0.127985, 0.715716, -0.168626], [0.570856, 0.772241, 0.361102, -0.632772]],
    [[0.314482, 0.031209, 0.861598, -0.327544], [0.27369, 0.687359, 0.66962, -0.504443]],
    [[0.735494, 0.366566, 0.442094, -0.616899], [0.107139, 0.422282, 0.719039, -0.272788]]], F32)


def fill(shape, k):
    n = int(np.prod(shape))
    return (0.5 * np.sin(0.7 * np.arange(n) + k)).reshape(shape).astype(F32)


def load(net):
    for i, (_, p) in enumerate(net.parameters_and_names()):
        p.set_data(Tensor(fill(p.shape, i)))
    net.set_train(False)
    return net


X = fill((L, B, E), 11) * 2
R = fill((L, B, E), 5)
KPM = np.array([[False, False, True], [False, False, False]])
BMASK = np.array([[False, True, True], [False, False, True], [False, False, False]])
CAUSAL = np.triu(np.full((L, L), -np.inf, F32), 1)
MEM = fill((2, B, E), 17) * 2


def close(got, want, what=""):
    np.testing.assert_allclose(got.asnumpy() if isinstance(got, Tensor) else got, want,
                               err_msg=what, **TOL)


def grads(fn, inputs, net):
    params = net.trainable_params()
    gf = ms.value_and_grad(fn, grad_position=tuple(range(len(inputs))), weights=params)
    with graph_runs("value_and_grad"):
        _, (gi, gw) = gf(*inputs)
    gi = gi if isinstance(gi, tuple) else (gi,)
    return gi, dict(zip([p.name for p in params], gw))


# ---------------------------------------------------------------- parameters --------------------
def test_mha_parameter_names_shapes_and_initialisers():
    ms.set_seed(1)
    m = nn.MultiheadAttention(8, 2)
    assert [(n, p.shape) for n, p in m.parameters_and_names()] == [
        ("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)), ("out_proj.weight", (8, 8)),
        ("out_proj.bias", (8,))]
    w = m.in_proj_weight.asnumpy()
    bound = np.sqrt(6 / (8 + 24))                   # XavierUniform on (3E, E)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert not m.in_proj_bias.asnumpy().any()       # zeros
    assert np.abs(m.out_proj.bias.asnumpy()).max() <= 1 / np.sqrt(8)
    m = nn.MultiheadAttention(8, 2, kdim=4, vdim=6, add_bias_kv=True, has_bias=False)
    assert [(n, p.shape) for n, p in m.parameters_and_names()] == [
        ("q_proj_weight", (8, 8)), ("k_proj_weight", (8, 4)), ("v_proj_weight", (8, 6)),
        ("bias_k", (1, 1, 8)), ("bias_v", (1, 1, 8)), ("out_proj.weight", (8, 8))]
    assert m.in_proj_weight is None and m.in_proj_bias is None and m.out_proj.bias is None


def test_layer_sublayer_and_parameter_names():
    enc = nn.TransformerEncoderLayer(4, 2, 8)
    assert list(enc._cells) == ["self_attn", "dense1", "dropout", "dense2", "norm1", "norm2",
                                "dropout1", "dropout2"]
    assert enc.dropout.p == 0.1 and enc.self_attn.dropout == 0.1
    assert enc.activation is ops.relu
    dec = nn.TransformerDecoderLayer(4, 2, 8, activation="gelu")
    assert list(dec._cells) == ["self_attn", "multihead_attn", "dense1", "dropout", "dense2",
                                "norm1", "norm2", "norm3", "dropout1", "dropout2", "dropout3"]
    assert dec.activation is ops.gelu and dec.norm1.epsilon == 1e-5
    stack = nn.TransformerEncoder(enc, 2, norm=nn.LayerNorm((4,)))
    names = [p.name for p in stack.get_parameters()]
    assert names[:2] == ["layers.0.self_attn.in_proj_weight", "layers.0.self_attn.in_proj_bias"]
    assert names[-2:] == ["norm.gamma", "norm.beta"] and len(names) == 26
    t = nn.Transformer(4, 2, 1, 1, 8)
    assert [n for n, _ in t.parameters_and_names()][:1] == [
        "encoder.layers.0.self_attn.in_proj_weight"]
    assert [n for n, _ in t.parameters_and_names()][-1] == "decoder.norm.beta"


def test_encoder_copies_one_fresh_layer():
    """As MindSpore: a fresh layer built from the given one's settings, deep-copied."""
    layer = nn.TransformerEncoderLayer(4, 2, 8)
    stack = nn.TransformerEncoder(layer, 3)
    w = [stack.layers[i].dense1.weight for i in range(3)]
    assert w[0] is not w[1]
    np.testing.assert_array_equal(w[0].asnumpy(), w[2].asnumpy())
    assert not np.array_equal(w[0].asnumpy(), layer.dense1.weight.asnumpy())


def test_transformer_reinitialises_matrices_xavier_uniform():
    t = nn.Transformer(4, 2, 1, 1, 8)
    w = t.encoder.layers[0].dense1.weight.asnumpy()          # (8, 4)
    assert np.abs(w).max() <= np.sqrt(6 / 12)
    assert np.abs(t.decoder.layers[0].dense1.bias.asnumpy()).max() <= 0.5   # 1/sqrt(4), kept


# ---------------------------------------------------------------- numbers vs MindSpore ----------
def test_mha_forward_and_grads_match_mindspore(mode):
    net = load(nn.MultiheadAttention(E, 2))
    with graph_runs("the MultiheadAttention call"):
        o, w = net(Tensor(X), Tensor(X), Tensor(X), attn_mask=Tensor(BMASK),
                   key_padding_mask=Tensor(KPM))
    close(o, MHA_OUT, "attn_output")
    close(w, MHA_W, "attn_weights")

    def loss(x):
        o, w = net(x, x, x, attn_mask=Tensor(BMASK), key_padding_mask=Tensor(KPM))
        return (o * Tensor(R)).sum() + (w * Tensor(fill(w.shape, 6))).sum()
    gi, gw = grads(loss, [Tensor(X)], net)
    close(gi[0], MHA_DX, "d query")
    close(gw["in_proj_weight"], MHA_DW_IN, "d in_proj_weight")
    close(gw["out_proj.bias"], MHA_DB_OUT, "d out_proj.bias")


def test_mha_float_mask_plus_bool_padding_adds_one(mode):
    """MindSpore 2.10 adds a bool key_padding_mask to a float attn_mask as 0 / 1."""
    net = load(nn.MultiheadAttention(E, 2))
    _, w = net(Tensor(X), Tensor(X), Tensor(X), attn_mask=Tensor(fill((L, L), 3)),
               key_padding_mask=Tensor(KPM))
    close(w, MHA_FLOAT_PLUS_BOOL_W)


def test_mha_kdim_vdim_bias_kv_zero_attn_match_mindspore(mode):
    net = load(nn.MultiheadAttention(E, 2, kdim=3, vdim=5, add_bias_kv=True,
                                     add_zero_attn=True))
    kpm = Tensor(np.array([[False, True], [False, False]]))
    o, w = net(Tensor(X), Tensor(fill((2, B, 3), 7)), Tensor(fill((2, B, 5), 8)),
               key_padding_mask=kpm, average_attn_weights=False)
    assert w.shape == (B, 2, L, 4)                  # 2 keys + bias_k + the zero key
    close(o, MHA_KV_OUT, "attn_output")
    close(w, MHA_KV_W, "per-head weights")


def test_encoder_layer_matches_mindspore(mode):
    net = load(nn.TransformerEncoderLayer(E, 2, 8, dropout=0.0))
    close(net(Tensor(X), src_mask=Tensor(CAUSAL)), ENC_OUT)
    gi, gw = grads(lambda x: (net(x, src_mask=Tensor(CAUSAL)) * Tensor(R)).sum(),
                   [Tensor(X)], net)
    close(gi[0], ENC_DX, "d src")
    close(gw["dense1.weight"], ENC_DW1, "d dense1.weight")


def test_encoder_layer_gelu_norm_first_batch_first_matches_mindspore(mode):
    net = load(nn.TransformerEncoderLayer(E, 2, 8, activation="gelu", norm_first=True,
                                          batch_first=True))
    close(net(Tensor(fill((B, L, E), 13) * 2), src_key_padding_mask=Tensor(KPM)), ENC_GELU_OUT)


def test_decoder_layer_matches_mindspore(mode):
    net = load(nn.TransformerDecoderLayer(E, 2, 8))
    close(net(Tensor(X), Tensor(MEM), tgt_mask=Tensor(CAUSAL)), DEC_OUT)
    gi, _ = grads(lambda x, m: (net(x, m, tgt_mask=Tensor(CAUSAL)) * Tensor(R)).sum(),
                  [Tensor(X), Tensor(MEM)], net)
    close(gi[0], DEC_DTGT, "d tgt")
    close(gi[1], DEC_DMEM, "d memory")


def test_transformer_matches_mindspore(mode):
    net = load(nn.Transformer(E, 2, 1, 1, 8, norm_first=True))
    close(net(Tensor(MEM), Tensor(X), tgt_mask=Tensor(CAUSAL)), TR_OUT)


def test_encoder_layer_in_the_native_sink():
    """GRAPH_MODE at O2 (the whole step as one native call) gives MindSpore's numbers too."""
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    test_encoder_layer_matches_mindspore("graph")


# ---------------------------------------------------------------- structure and layouts ---------
def test_return_structure():
    net = load(nn.MultiheadAttention(E, 2))
    x = Tensor(X)
    out = net(x, x, x, need_weights=False)
    assert isinstance(out, tuple) and len(out) == 1 and out[0].shape == (L, B, E)
    o, w = net(x, x, x, average_attn_weights=False)
    assert w.shape == (B, 2, L, L)
    _, wa = net(x, x, x)
    close(wa, w.asnumpy().sum(1) / 2)


def test_batch_first_and_unbatched_agree_with_seq_first(mode):
    net = load(nn.MultiheadAttention(E, 2))
    ref_o, ref_w = net(Tensor(X), Tensor(X), Tensor(X), key_padding_mask=Tensor(KPM))
    bf = load(nn.MultiheadAttention(E, 2, batch_first=True))
    xb = Tensor(X.transpose(1, 0, 2).copy())
    o, w = bf(xb, xb, xb, key_padding_mask=Tensor(KPM))
    close(o, ref_o.asnumpy().transpose(1, 0, 2))
    close(w, ref_w.asnumpy())
    x0 = Tensor(X[:, 0].copy())
    o, w = net(x0, x0, x0, key_padding_mask=Tensor(KPM[0]))
    assert o.shape == (L, E) and w.shape == (L, L)
    close(o, ref_o.asnumpy()[:, 0])
    close(w, ref_w.asnumpy()[0])


def test_user_cell_with_attention_in_graph_mode(mode):
    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(E, 2)

        def construct(self, x, mask):
            return self.attn(x, x, x, attn_mask=mask)[0]

    net = Block()
    load(net)
    with graph_runs("Block"):
        got = net(Tensor(X), Tensor(BMASK))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    close(got, net(Tensor(X), Tensor(BMASK)).asnumpy())


def test_graph_and_pynative_gradients_agree_in_training_without_dropout():
    net = load(nn.TransformerEncoderLayer(E, 2, 8, dropout=0.0))
    net.set_train(True)
    loss = lambda x: (net(x, src_mask=Tensor(CAUSAL)) * Tensor(R)).sum()   # noqa: E731
    res = []
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        gi, gw = grads(loss, [Tensor(X)], net)
        res.append([gi[0].asnumpy()] + [g.asnumpy() for g in gw.values()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_dropout_only_in_training(mode):
    net = load(nn.TransformerEncoderLayer(E, 2, 8, dropout=0.5))
    ms.set_seed(0)
    eval_out = net(Tensor(X)).asnumpy()
    np.testing.assert_array_equal(eval_out, net(Tensor(X)).asnumpy())
    net.set_train(True)
    train_out = net(Tensor(X)).asnumpy()
    assert np.isfinite(train_out).all() and not np.allclose(train_out, eval_out)
    attn = load(nn.MultiheadAttention(E, 2, dropout=0.5))
    attn.set_train(True)
    _, w = attn(Tensor(X), Tensor(X), Tensor(X))
    w = w.asnumpy()         # averaged dropped-out weights: multiples of 1/(2 * 0.5) / 2 heads
    assert (w == 0).any() or not np.allclose(w.sum(-1), 1)


# ---------------------------------------------------------------- errors ------------------------
def test_argument_errors():
    with pytest.raises(ValueError, match="embed_dim .*divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="dropout"):
        nn.MultiheadAttention(4, 2, dropout=1.5)
    for bad in ("tanh", nn.ReLU(), nn.GELU(), ops.sigmoid, 3):
        with pytest.raises(ValueError, match="activation"):
            nn.TransformerEncoderLayer(4, 2, 8, activation=bad)
    with pytest.raises(TypeError, match="TransformerEncoderLayer"):
        nn.TransformerEncoder(nn.Dense(2, 2), 2)
    net = nn.MultiheadAttention(E, 2)
    x = Tensor(X)
    with pytest.raises(ValueError, match="attn_mask must be float, bool or uint8"):
        net(x, x, x, attn_mask=Tensor(np.zeros((L, L), np.int32)))
    with pytest.raises(ValueError, match=r"2-D attn_mask must have shape \(L, S\)"):
        net(x, x, x, attn_mask=Tensor(np.zeros((L, L + 1), bool)))
    with pytest.raises(ValueError, match="key_padding_mask must have shape"):
        net(x, x, x, key_padding_mask=Tensor(np.zeros((B, L + 1), bool)))
    with pytest.raises(ValueError, match="key_padding_mask must be bool or float"):
        net(x, x, x, key_padding_mask=Tensor(np.zeros((B, L), np.int32)))
    with pytest.raises(ValueError, match="embed_dim=4"):
        net(Tensor(np.zeros((L, B, 6), F32)), x, x)
    with pytest.raises(ValueError, match="kdim=3"):
        nn.MultiheadAttention(E, 2, kdim=3)(x, x, Tensor(np.zeros((L, B, 4), F32)))
    with pytest.raises(ValueError, match="d_model=4"):
        nn.Transformer(4, 2, 1, 1, 8)(x, Tensor(np.zeros((L, B, 6), F32)))


def test_uint8_mask_is_a_bool_mask():
    net = load(nn.MultiheadAttention(E, 2))
    x = Tensor(X)
    _, a = net(x, x, x, attn_mask=Tensor(BMASK.astype(np.uint8)))
    _, b = net(x, x, x, attn_mask=Tensor(BMASK))
    close(a, b.asnumpy())


def test_mha_masks_in_the_native_sink():
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    test_mha_forward_and_grads_match_mindspore("graph")
    test_mha_kdim_vdim_bias_kv_zero_attn_match_mindspore("graph")
