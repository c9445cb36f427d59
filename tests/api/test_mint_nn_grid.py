"""mint.nn.functional.grid_sample against MindSpore 2.10's outputs (CPU) for every mode,
padding_mode and align_corners, and its gradients (input and grid) against finite
differences."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor
import minispore.mint.nn.functional as F
from helpers import in_mode

F32 = np.float32
X = np.random.RandomState(0).randn(2, 3, 5, 6).astype(F32)
GRID = np.random.RandomState(1).rand(2, 4, 7, 2).astype(F32) * 2.6 - 1.3   # some outside

# MindSpore 2.10 (CPU) on X, GRID: the output's sum and its flat entries 0, 5, 17, 40
MS_EXPECTED = {
    ("bilinear", "zeros", False): (8.1494, [-1.38344, -1.88669, 0.48825, -0.08903]),
    ("bilinear", "zeros", True): (8.1928, [-2.12586, -2.40154, 0.25167, -0.35766]),
    ("bilinear", "border", False): (23.8059, [-1.38344, -1.88669, 0.48825, -0.36274]),
    ("bilinear", "border", True): (7.9303, [-2.12586, -2.40154, 0.25167, -0.37726]),
    ("bilinear", "reflection", False): (23.6477, [-1.38344, -1.88669, 0.48825, -0.36274]),
    ("bilinear", "reflection", True): (12.6566, [-2.12586, -2.40154, 0.25167, -0.41714]),
    ("nearest", "zeros", False): (10.5269, [-2.55299, -2.55299, 0.14404, 0.0]),
    ("nearest", "zeros", True): (6.1231, [-2.55299, -2.55299, 0.14404, -0.36274]),
    ("nearest", "border", False): (30.038, [-2.55299, -2.55299, 0.14404, -0.36274]),
    ("nearest", "border", True): (1.8076, [-2.55299, -2.55299, 0.14404, -0.36274]),
    ("nearest", "reflection", False): (30.038, [-2.55299, -2.55299, 0.14404, -0.36274]),
    ("nearest", "reflection", True): (8.7194, [-2.55299, -2.55299, 0.14404, -0.36274]),
}


@pytest.mark.filterwarnings("ignore:graph .* has been compiled")     # one graph per case
@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("key", sorted(MS_EXPECTED), ids=lambda k: "-".join(map(str, k)))
def test_grid_sample_matches_mindspore(key, mode):
    m, pm, ac = key
    out = in_mode(lambda x, g: F.grid_sample(x, g, m, pm, ac), Tensor(X), Tensor(GRID))
    total, entries = MS_EXPECTED[key]
    assert out.shape == (2, 3, 4, 7)
    np.testing.assert_allclose(out.asnumpy().sum(), total, atol=2e-4)
    np.testing.assert_allclose(out.asnumpy().ravel()[[0, 5, 17, 40]], entries, atol=1e-5)


def test_grid_sample_default_and_gradients():
    out = F.grid_sample(Tensor(X), Tensor(GRID))            # bilinear, zeros, align False
    np.testing.assert_allclose(out.asnumpy().sum(), 8.1494, atol=2e-4)
    x64, g64 = X.astype(np.float64), GRID.astype(np.float64)
    w = np.random.RandomState(2).randn(2, 3, 4, 7)

    def loss(x, g):
        return (F.grid_sample(x, g, "bilinear", "border", True) * Tensor(w.astype(F32))).sum()
    gx, gg = ms.grad(loss, grad_position=(0, 1))(Tensor(X), Tensor(GRID))
    eps = 1e-3
    for idx in ((0, 1, 2, 3), (1, 0, 4, 5)):
        xp, xm = x64.copy(), x64.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num = (loss(Tensor(xp.astype(F32)), Tensor(GRID)).asnumpy()
               - loss(Tensor(xm.astype(F32)), Tensor(GRID)).asnumpy()) / (2 * eps)
        np.testing.assert_allclose(gx.asnumpy()[idx], num, rtol=2e-2, atol=2e-3)
    for idx in ((0, 1, 2, 0), (1, 3, 4, 1)):
        gp, gm = g64.copy(), g64.copy()
        gp[idx] += eps
        gm[idx] -= eps
        num = (loss(Tensor(X), Tensor(gp.astype(F32))).asnumpy()
               - loss(Tensor(X), Tensor(gm.astype(F32))).asnumpy()) / (2 * eps)
        np.testing.assert_allclose(gg.asnumpy()[idx], num, rtol=2e-2, atol=2e-3)
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(Tensor(X), Tensor(GRID), "bicubic")
