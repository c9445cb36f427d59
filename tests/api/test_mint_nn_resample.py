"""mint.nn.functional's resampling, patch and transposed-convolution functions and their Cells
(interpolate/upsample, pixel_shuffle, unfold, conv1d, conv_transpose2d, dropout2d, adaptive
max/avg pooling) against MindSpore 2.10's outputs where its CPU build runs them, and numpy
references of PyTorch's formulas where it has no CPU kernel (UpsampleBilinear2D, Im2ColExt,
ConvTranspose2D, AdaptiveMaxPool1D, AdaptiveAvgPool3DExt; conv1d is Ascend-only)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, mint
import minispore.mint.nn.functional as F
from helpers import in_mode

F32 = np.float32
IMG = (np.arange(2 * 2 * 4 * 5).reshape(2, 2, 4, 5) % 7).astype(F32) - 3
X3 = np.linspace(-1, 1, 2 * 3 * 5).reshape(2, 3, 5).astype(F32)

CASES = {
    "pixel_shuffle": lambda: F.pixel_shuffle(
        Tensor(np.arange(2 * 8 * 2 * 3).reshape(2, 8, 2, 3).astype(F32)), 2),
    "nearest_size": lambda: F.interpolate(Tensor(IMG), size=(6, 7)),
    "nearest_scale": lambda: F.interpolate(Tensor(IMG), scale_factor=1.7),
    "nearest_1d": lambda: F.interpolate(Tensor(X3), scale_factor=2.5),
    "up_nearest2d": lambda: mint.nn.UpsamplingNearest2d(size=(5, 9))(Tensor(IMG)),
    "amax2d": lambda: F.adaptive_max_pool2d(Tensor(IMG), (3, 2)),
}
# MindSpore 2.10 (CPU): output shape, sum of the output and its first ten values
MS_EXPECTED = {
    "pixel_shuffle": ((2, 2, 4, 6), 4560.0, [0., 6., 1., 7., 2., 8., 12., 18., 13., 19.]),
    "nearest_size": ((2, 2, 6, 7), -20.0, [-3., -3., -2., -1., -1., 0., 1., -3., -3., -2.]),
    "nearest_scale": ((2, 2, 6, 8), 16.0, [-3., -3., -2., -2., -1., -1., 0., 1., -3., -3.]),
    "nearest_1d": ((2, 3, 12), -0.8276, [-1.0, -1.0, -1.0, -0.93103, -0.93103, -0.86207,
                                          -0.86207, -0.86207, -0.7931, -0.7931]),
    "up_nearest2d": ((2, 2, 5, 9), -26.0, [-3., -3., -2., -2., -1., -1., 0., 0., 1., -3.]),
    "amax2d": ((2, 2, 3, 2), 61.0, [3., 1., 3., 3., 2., 3., 3., 3., 3., 3.]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_mindspore_outputs(name):
    out = CASES[name]().asnumpy()
    shape, total, first = MS_EXPECTED[name]
    assert out.shape == shape
    np.testing.assert_allclose(out.sum(), total, atol=1e-3)
    np.testing.assert_allclose(out.ravel()[:10], first, atol=1e-5)


def _linear_ref(x, axis, n_out, scale, align):
    n_in = x.shape[axis]
    d = np.arange(n_out, dtype=np.float64)
    src = d * (n_in - 1) / (n_out - 1) if align else np.maximum((d + 0.5) * scale - 0.5, 0)
    lo = np.minimum(np.floor(src).astype(int), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    lam = (src - lo).reshape((-1,) + (1,) * (x.ndim - axis - 1))
    return np.take(x, lo, axis) * (1 - lam) + np.take(x, hi, axis) * lam


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_bilinear_and_linear_follow_pytorch(mode):
    x = IMG.astype(np.float64)
    got = in_mode(lambda t: F.interpolate(t, size=(6, 3), mode="bilinear"), Tensor(IMG))
    ref = _linear_ref(_linear_ref(x, 2, 6, 4 / 6, False), 3, 3, 5 / 3, False)
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    got = in_mode(lambda t: F.interpolate(t, size=(7, 8), mode="bilinear", align_corners=True),
                  Tensor(IMG))
    ref = _linear_ref(_linear_ref(x, 2, 7, None, True), 3, 8, None, True)
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    got = in_mode(lambda t: F.interpolate(t, scale_factor=(1.5, 0.6), mode="bilinear"),
                  Tensor(IMG))                   # source scale 1 / scale_factor, as PyTorch
    ref = _linear_ref(_linear_ref(x, 2, 6, 1 / 1.5, False), 3, 3, 1 / 0.6, False)
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    got = in_mode(lambda t: F.interpolate(t, size=8, mode="linear"), Tensor(X3))
    np.testing.assert_allclose(got.asnumpy(), _linear_ref(X3.astype(np.float64), 2, 8, 5 / 8,
                                                          False), rtol=1e-5, atol=1e-6)
    got = mint.nn.UpsamplingBilinear2d(scale_factor=(2.0, 2.0))(Tensor(IMG))
    ref = _linear_ref(_linear_ref(x, 2, 8, None, True), 3, 10, None, True)
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    up = mint.nn.Upsample(scale_factor=2.0, mode="bilinear")(Tensor(IMG))
    np.testing.assert_allclose(up.asnumpy(), F.interpolate(Tensor(IMG), scale_factor=2.0,
                                                           mode="bilinear").asnumpy())


def test_interpolate_refusals():
    with pytest.raises(NotImplementedError, match="area"):
        F.interpolate(Tensor(IMG), size=(2, 2), mode="area")
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(Tensor(IMG), size=(2, 2), align_corners=True)
    with pytest.raises(ValueError, match="exactly one"):
        F.interpolate(Tensor(IMG))


def test_unfold_is_im2col():
    got = F.unfold(Tensor(IMG), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)).asnumpy()
    xp = np.pad(IMG, ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = (6 - 2) // 2 + 1, (7 - 5) // 1 + 1
    cols = np.zeros((2, 2, 2, 3, oh, ow), F32)
    for i in range(2):
        for j in range(3):
            cols[:, :, i, j] = xp[:, :, i:i + 2 * (oh - 1) + 1:2, 2 * j:2 * j + ow]
    np.testing.assert_array_equal(got, cols.reshape(2, 12, oh * ow))
    assert mint.nn.Unfold(2)(Tensor(IMG)).shape == (2, 8, 12)


def _conv_t_ref(x, w, b, s, p, op, g, d):
    n, cin, h, wd = x.shape
    _, coutg, kh, kw = w.shape
    oh = (h - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1
    ow = (wd - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1
    full = np.zeros((n, coutg * g, oh + 2 * p[0] + kh * d[0], ow + 2 * p[1] + kw * d[1]))
    cing = cin // g
    for gi in range(g):
        for c in range(cing):
            ci = gi * cing + c
            for i in range(h):
                for j in range(wd):
                    for a in range(kh):
                        for bb in range(kw):
                            full[:, gi * coutg:(gi + 1) * coutg, i * s[0] + a * d[0],
                                 j * s[1] + bb * d[1]] += x[:, ci, i, j, None] * w[ci, :, a, bb]
    out = full[:, :, p[0]:p[0] + oh, p[1]:p[1] + ow]
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_conv_transpose2d(mode):
    w = (np.arange(2 * 3 * 3 * 2).reshape(2, 3, 3, 2) % 5).astype(F32) / 10 - 0.2
    got = in_mode(lambda t, k: F.conv_transpose2d(t, k, None, 2, 1, 1), Tensor(IMG), Tensor(w))
    ref = _conv_t_ref(IMG, w, None, (2, 2), (1, 1), (1, 1), 1, (1, 1))
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    w2 = (np.arange(16).reshape(2, 2, 2, 2) % 3).astype(F32)
    b2 = np.array([1., 2., 3., 4.], F32)
    got = F.conv_transpose2d(Tensor(IMG), Tensor(w2), Tensor(b2), (1, 2), 0, 0, 2, (2, 1))
    ref = _conv_t_ref(IMG, w2, b2, (1, 2), (0, 0), (0, 0), 2, (2, 1))
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    layer = mint.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    assert [p.name for p in layer.get_parameters()] == ["weight", "bias"]
    assert layer.weight.shape == (2, 3, 3, 3)
    assert layer(Tensor(IMG)).shape == (2, 3, 7, 9)
    assert layer(Tensor(IMG), output_size=(8, 10)).shape == (2, 3, 8, 10)


def test_conv1d_and_adaptive_pools():
    w = np.arange(2 * 3 * 2).reshape(2, 3, 2).astype(F32) / 10
    got = F.conv1d(Tensor(X3), Tensor(w), None, 2, 1).asnumpy()
    xp = np.pad(X3, ((0, 0), (0, 0), (1, 1)))
    ref = np.stack([np.einsum("ncl,ocl->no", xp[:, :, i:i + 2], w) for i in (0, 2, 4)], -1)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    got = F.adaptive_max_pool1d(Tensor(X3), 3).asnumpy()
    ref = np.stack([X3[..., a:b].max(-1) for a, b in ((0, 2), (1, 4), (3, 5))], -1)
    np.testing.assert_array_equal(got, ref)
    v = np.arange(2 * 3 * 4 * 5).reshape(1, 2, 3, 4, 5).astype(F32)
    got = mint.nn.AdaptiveAvgPool3d((2, 3, None))(Tensor(v)).asnumpy()
    ref = np.stack([np.stack([v[:, :, a:b, c:d].mean((2, 3)) for c, d in ((0, 2), (1, 3),
                                                                            (2, 4))], 2)
                    for a, b in ((0, 2), (1, 3))], 2)
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    assert mint.nn.AdaptiveMaxPool2d((None, 2))(Tensor(IMG)).shape == (2, 2, 4, 2)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_adaptive_max_pool_indices_and_gradient(mode):
    _, idx = in_mode(lambda t: F.adaptive_max_pool2d(t, (3, 2), True), Tensor(IMG))
    # MindSpore 2.10 (CPU): the indices for IMG (many ties: the first in row-major order wins)
    assert idx.dtype == ms.int64
    np.testing.assert_array_equal(idx.asnumpy().ravel(),
                                  [6, 4, 6, 13, 12, 13, 0, 7, 7, 7, 12, 14, 1, 8, 7, 8, 15, 14,
                                   2, 2, 7, 9, 16, 14])
    x = np.random.RandomState(0).randn(1, 2, 5, 7).astype(F32)
    x[0, 0] = 0.0                                           # every entry ties
    _, idx = mint.nn.AdaptiveMaxPool2d((3, 4), return_indices=True)(Tensor(x))
    # MindSpore 2.10 (CPU) for the random channel; the tied one takes each bin's first entry
    np.testing.assert_array_equal(idx.asnumpy()[0, 1].ravel(),
                                  [8, 8, 12, 12, 8, 8, 12, 12, 22, 22, 32, 34])
    np.testing.assert_array_equal(idx.asnumpy()[0, 0].ravel(),     # bin starts h * 7 + w
                                  [0, 1, 3, 5, 7, 8, 10, 12, 21, 22, 24, 26])
    g = ms.grad(lambda t: F.adaptive_max_pool2d(t, (3, 4)).sum())(Tensor(x)).asnumpy()
    want = np.zeros(70)
    np.add.at(want, (np.arange(2)[:, None] * 35 + idx.asnumpy().reshape(2, -1)).ravel(), 1.0)
    np.testing.assert_array_equal(g.ravel(), want)          # all to the first maximum
    y1, i1 = F.adaptive_max_pool1d(Tensor(X3), 3, True)
    np.testing.assert_array_equal(i1.asnumpy()[0, 0], [1, 3, 4])


def test_dropout2d_zeroes_whole_channels():
    ms.set_seed(2)
    x = Tensor(np.ones((50, 40, 3, 3), F32))
    y = F.dropout2d(x, 0.3).asnumpy()
    per_channel = y.reshape(50, 40, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 1 / 0.7).all(-1)).all()
    assert abs((per_channel[..., 0] == 0).mean() - 0.3) < 0.05
    d = mint.nn.Dropout2d(0.3)
    np.testing.assert_array_equal(d(x).asnumpy(), x.asnumpy())        # eval by default


def test_fold_is_the_adjoint_of_unfold():
    """PyTorch's fold sums the blocks back: <unfold(x), y> == <x, fold(y)> for every x, y."""
    x = np.random.RandomState(0).randn(2, 3, 6, 7).astype(F32)
    for k, d, p, s in (((2, 3), (1, 2), 1, (2, 1)), (3, 1, 0, 1), ((2, 2), 1, (1, 0), 2)):
        u = F.unfold(Tensor(x), k, d, p, s)
        y = np.random.RandomState(1).randn(*u.shape).astype(F32)
        f = F.fold(Tensor(y), (6, 7), k, d, p, s).asnumpy()
        np.testing.assert_allclose((u.asnumpy() * y).sum(), (x * f).sum(), rtol=1e-4)
    ones = F.fold(Tensor(np.ones((1, 4, 9), F32)), (4, 4), 2, stride=1).asnumpy()[0, 0]
    np.testing.assert_array_equal(ones, [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2],
                                         [1, 2, 2, 1]])           # the overlap counts
    assert mint.nn.Fold((4, 4), 2)(Tensor(np.ones((4, 9), F32))).shape == (1, 4, 4)


V5 = np.random.RandomState(1).randn(1, 2, 3, 4, 5).astype(F32)
# MindSpore 2.10 (CPU) on V5 resized to (5, 3, 7): sum and flat entries 0, 7, 50, 100
MS_3D = {"trilinear": (8.3398, [0.97003, -0.41972, -0.4432, 0.62475]),
         "trilinear_ac": (12.4578, [1.62435, -0.41972, -0.40245, 0.86969]),
         "nearest3d": (-1.7833, [1.62435, -2.30154, -0.68373, -0.35225])}


@pytest.mark.parametrize("name", sorted(MS_3D))
def test_trilinear_and_nearest_3d_match_mindspore(name):
    mode = "nearest" if name == "nearest3d" else "trilinear"
    ac = True if name.endswith("_ac") else None
    out = F.interpolate(Tensor(V5), size=(5, 3, 7), mode=mode, align_corners=ac).asnumpy()
    total, entries = MS_3D[name]
    assert out.shape == (1, 2, 5, 3, 7)
    np.testing.assert_allclose(out.sum(), total, atol=2e-4)
    np.testing.assert_allclose(out.ravel()[[0, 7, 50, 100]], entries, atol=1e-5)


def _bicubic_ref(x, oh, ow, align, sf=None):
    """PyTorch's upsample_bicubic2d loop: A = -0.75, the four taps clamped to the input."""
    a = -0.75

    def near(t):
        return ((a + 2) * t - (a + 3)) * t * t + 1

    def far(t):
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    n, c, h, w = x.shape

    def scale(i, o, f):
        if align:
            return (i - 1) / (o - 1) if o > 1 else 0.0
        return 1.0 / f if f else i / o
    sh, sw = scale(h, oh, sf and sf[0]), scale(w, ow, sf and sf[1])
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        ry = sh * i if align else sh * (i + 0.5) - 0.5
        y0 = int(np.floor(ry))
        ty = ry - y0
        wy = [far(ty + 1), near(ty), near(1 - ty), far(2 - ty)]
        for j in range(ow):
            rx = sw * j if align else sw * (j + 0.5) - 0.5
            x0 = int(np.floor(rx))
            tx = rx - x0
            wx = [far(tx + 1), near(tx), near(1 - tx), far(2 - tx)]
            for p in range(4):
                for q in range(4):
                    yy, xx = min(max(y0 - 1 + p, 0), h - 1), min(max(x0 - 1 + q, 0), w - 1)
                    out[:, :, i, j] += wy[p] * wx[q] * x[:, :, yy, xx]
    return out


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_bicubic_follows_pytorch(mode):
    # MindSpore 2.10's CPU build aborts on bicubic, so the reference is PyTorch's loop
    x = np.random.RandomState(0).randn(2, 2, 4, 5).astype(F32)
    for size, align, sf in (((7, 3), False, None), ((7, 8), True, None),
                            (None, False, (1.5, 2.0))):
        got = in_mode(lambda t: F.interpolate(t, size, sf, "bicubic", align), Tensor(x))
        oh, ow = size if size else (6, 10)
        np.testing.assert_allclose(got.asnumpy(), _bicubic_ref(x.astype(np.float64), oh, ow,
                                                               align, sf), rtol=1e-5,
                                   atol=1e-6)
