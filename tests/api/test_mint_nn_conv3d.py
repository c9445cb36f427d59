"""mint conv3d / Conv3d and avg_pool3d / AvgPool3d (composed from the 2-D ops) against numpy
loops of PyTorch's definitions: MindSpore 2.10's CPU build has no kernel for them (conv3d is
Ascend-only, AvgPool3DExt unregistered). Conv3d's Parameters and init bound are MindSpore's
(printed by MindSpore 2.10)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, mint
import minispore.mint.nn.functional as F
from helpers import in_mode

F32 = np.float32


def _conv3d_ref(x, w, s, p, d, g):
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((q, q) for q in p))
    co, cig, kd, kh, kw = w.shape
    outs = [(n - dd * (kk - 1) - 1) // ss + 1
            for n, kk, ss, dd in zip(xp.shape[2:], (kd, kh, kw), s, d)]
    out = np.zeros((x.shape[0], co) + tuple(outs))
    cog = co // g
    for gi in range(g):
        xs, ws = xp[:, gi * cig:(gi + 1) * cig], w[gi * cog:(gi + 1) * cog]
        for a in range(kd):
            for b in range(kh):
                for c in range(kw):
                    win = xs[:, :, a * d[0]:a * d[0] + s[0] * (outs[0] - 1) + 1:s[0],
                             b * d[1]:b * d[1] + s[1] * (outs[1] - 1) + 1:s[1],
                             c * d[2]:c * d[2] + s[2] * (outs[2] - 1) + 1:s[2]]
                    out[:, gi * cog:(gi + 1) * cog] += np.einsum("ncdhw,oc->nodhw", win,
                                                                 ws[:, :, a, b, c])
    return out


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_conv3d(mode):
    x = np.random.RandomState(0).randn(2, 4, 5, 6, 7).astype(F32)
    w = np.random.RandomState(1).randn(6, 2, 3, 2, 3).astype(F32)
    b = np.arange(6).astype(F32)
    got = in_mode(lambda t, k, bb: F.conv3d(t, k, bb, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2),
                  Tensor(x), Tensor(w), Tensor(b))
    ref = _conv3d_ref(x, w, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2) + b.reshape(1, -1, 1, 1, 1)
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-4, atol=1e-4)
    assert F.conv3d(Tensor(x), Tensor(w), None, 1, "same", 1, 2).shape == (2, 6, 5, 6, 7)
    assert F.conv3d(Tensor(x[0]), Tensor(w), groups=2).shape == (6, 3, 5, 5)


def test_conv3d_cell():
    ms.set_seed(0)
    c = mint.nn.Conv3d(4, 6, (3, 2, 3), groups=2)
    # MindSpore 2.10: [('weight', (6, 2, 3, 2, 3)), ('bias', (6,))]
    assert [(p.name, tuple(p.shape)) for p in c.get_parameters()] == [
        ("weight", (6, 2, 3, 2, 3)), ("bias", (6,))]
    big = mint.nn.Conv3d(20, 8, 3)
    bound = 1 / np.sqrt(20 * 27)        # MindSpore: |w| max 0.0430166 <= 0.0430331
    assert 0.98 * bound < np.abs(big.weight.asnumpy()).max() <= bound + 1e-7
    assert np.abs(big.bias.asnumpy()).max() <= bound
    x = np.random.RandomState(2).randn(1, 4, 4, 5, 6).astype(F32)
    c = mint.nn.Conv3d(4, 2, 3, padding=1, padding_mode="replicate", bias=False)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)), mode="edge")
    np.testing.assert_allclose(c(Tensor(x)).asnumpy(),
                               _conv3d_ref(xp, c.weight.asnumpy(), (1,) * 3, (0,) * 3,
                                           (1,) * 3, 1), rtol=1e-4, atol=1e-5)


def _len(n, k, s, p, ceil):
    o = (n + 2 * p - k + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= n + p else o


def _avg3d_ref(x, k, s, p, ceil, cip, dv=None):
    """PyTorch's avg_pool3d loop (ceil_mode windows clipped at the padded input)."""
    dims = x.shape[2:]
    outs = [_len(m, kk, ss, pp, ceil) for m, kk, ss, pp in zip(dims, k, s, p)]
    out = np.zeros(x.shape[:2] + tuple(outs))
    for idx in np.ndindex(*outs):
        st = [i * ss - pp for i, ss, pp in zip(idx, s, p)]
        en = [min(a + kk, m + pp) for a, kk, m, pp in zip(st, k, dims, p)]
        size = np.prod([e - a for a, e in zip(st, en)])
        st2 = [max(a, 0) for a in st]
        en2 = [min(e, m) for e, m in zip(en, dims)]
        tot = x[:, :, st2[0]:en2[0], st2[1]:en2[1], st2[2]:en2[2]].sum((2, 3, 4))
        if not cip:
            size = np.prod([e - a for a, e in zip(st2, en2)])
        out[(slice(None), slice(None)) + idx] = tot / (dv or size)
    return out


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("k,s,p,ceil,cip,dv", [((3, 3, 3), (2, 2, 2), (1, 1, 1), False, True,
                                                None),
                                               ((3, 2, 3), (2, 2, 2), (1, 1, 1), True, False,
                                                None),
                                               ((2, 2, 2), None, (0, 0, 0), False, True, None),
                                               ((3, 3, 3), (2, 3, 2), (1, 1, 0), True, True, 7)])
def test_avg_pool3d(k, s, p, ceil, cip, dv, mode):
    x = np.random.RandomState(0).randn(2, 3, 5, 6, 7).astype(F32)
    got = in_mode(lambda t: F.avg_pool3d(t, k, s, p, ceil, cip, dv), Tensor(x))
    np.testing.assert_allclose(got.asnumpy(), _avg3d_ref(x, k, s or k, p, ceil, cip, dv),
                               rtol=1e-5, atol=1e-6)
    cell = mint.nn.AvgPool3d(k, s, p, ceil, cip, dv)
    np.testing.assert_allclose(cell(Tensor(x[0])).asnumpy(),
                               _avg3d_ref(x[:1], k, s or k, p, ceil, cip, dv)[0], rtol=1e-5,
                               atol=1e-6)
