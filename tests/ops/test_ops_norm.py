"""ops.norm (also F.norm): vector and matrix norms as MindSpore 2.10's ops.norm gives them, in
PyNative and inside a compiled graph. Expected values were observed running MindSpore 2.10 (CPU)
on the same inputs (rounded to 5 decimals)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops
from minispore.ops import functional as F

_A = np.array([[-3.0, 1.0, 2.0], [0.0, 4.0, -0.5]], np.float32)
_V = np.array([3.0, -4.0, 0.0, 1.0], np.float32)
_INF = float("inf")

# (input, ord, dim, keepdim) -> MindSpore's value
_CASES = [
    ("v", None, None, False, 5.09902), ("a", None, None, False, 5.5),
    ("a", "fro", None, False, 5.5), ("a", None, 1, False, [3.74166, 4.03113]),
    ("a", None, 0, True, [[3.0, 4.12311, 2.06155]]),
    ("v", 1, None, False, 8.0), ("a", 1, 1, False, [6.0, 4.5]),
    ("v", 2, None, False, 5.09902), ("v", 3, None, False, 4.51436),
    ("a", 3, 1, False, [3.30193, 4.0026]), ("v", 0, None, False, 3.0),
    ("a", 0, 1, False, [3.0, 2.0]), ("v", _INF, None, False, 4.0),
    ("a", _INF, 1, False, [3.0, 4.0]), ("v", -_INF, None, False, 0.0),
    ("a", -_INF, 1, False, [1.0, 0.0]), ("v", -1, None, False, 0.0),
    ("a", -1, 1, False, [0.54545, 0.0]), ("v", 0.5, None, False, 22.39231),
    ("a", 0.5, 1, False, [17.19151, 7.32843]),
    ("a", 1, None, False, 5.0), ("a", -1, None, False, 2.5), ("a", _INF, None, False, 6.0),
    ("a", -_INF, None, False, 4.5), ("a", None, (0, 1), False, 5.5),
]


class _Norm(nn.Cell):
    def __init__(self, ord, dim, keepdim):
        super().__init__()
        self.ord, self.dim, self.keepdim = ord, dim, keepdim

    def construct(self, x):
        return ops.norm(x, self.ord, self.dim, self.keepdim)


@pytest.mark.parametrize("case", range(len(_CASES)))
def test_norm(mode, case):
    which, ord, dim, keepdim, expected = _CASES[case]
    x = ms.Tensor(_V if which == "v" else _A)
    r = _Norm(ord, dim, keepdim)(x)
    assert r.dtype is ms.float32 and r.shape == np.shape(expected)
    np.testing.assert_allclose(r.asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_norm_dtypes_dims_gradient_and_refusals():
    # MindSpore: dtype=float16 -> Float16 5.5; int32 [3, 4] -> Float32 5.0; on
    # arange(12).reshape(2, 3, 2): keepdim -> (1, 1, 1) 22.4944; 'fro' over (0, 2) ->
    # [9.2736, 12.5698, 16.1864]; ord 1 over (2, 0) -> [13, 17, 21]; inf over (-1, 1) keepdim ->
    # (2, 1, 1) [[[9]], [[27]]]; ord 2 with dim None on 3-D fails; the gradient of the 2-norm at
    # [3, -4, 0, 1] is x / 5.09902 and NaN at zero
    assert F.norm is ops.norm
    r = ops.norm(ms.Tensor(_A), dtype=ms.float16)
    assert r.dtype is ms.float16 and r.asnumpy().item() == 5.5
    r = ops.norm(ms.Tensor(np.array([3, 4], np.int32)))
    assert r.dtype is ms.float32 and r.asnumpy().item() == 5.0
    a = ms.Tensor(np.arange(12, dtype=np.float32).reshape(2, 3, 2))
    r = ops.norm(a, keepdim=True)
    assert r.shape == (1, 1, 1) and abs(r.asnumpy().item() - 22.4944) < 1e-4
    np.testing.assert_allclose(ops.norm(a, "fro", (0, 2)).asnumpy(), [9.2736, 12.5698, 16.1864],
                               rtol=1e-5)
    assert ops.norm(a, 1, (2, 0)).asnumpy().tolist() == [13, 17, 21]
    r = ops.norm(a, _INF, (-1, 1), True)
    assert r.shape == (2, 1, 1) and r.asnumpy().ravel().tolist() == [9, 27]
    with pytest.raises(ValueError, match="1-D or 2-D"):
        ops.norm(a, 2)
    g = ms.grad(ops.norm)(ms.Tensor(_V))
    np.testing.assert_allclose(g.asnumpy(), [0.58835, -0.78446, 0.0, 0.19612], atol=1e-5)
    assert np.isnan(ms.grad(ops.norm)(ms.Tensor(np.zeros(3, np.float32))).asnumpy()).all()
    for ord in ("nuc", 2, -2):
        with pytest.raises(NotImplementedError, match="singular"):
            ops.norm(ms.Tensor(_A), ord)
