"""ms.vmap / ops.vmap against MindSpore 2.10: the expected values and error messages were
observed running the same calls with MindSpore 2.10 on CPU (identical in PyNative and
GRAPH_MODE there)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.array([1.0, 2.0, 3.0], np.float32)


def f2(x, y):
    return x * y + 1


def f3(x, y):
    return x.sum(), x * 2


def pair_sum(p):
    return p[0] + p[1]


def gram(x):
    return ops.matmul(x, x.T)


def sq(r):
    return (r * r).sum()


def cube(r):
    return (r * r * r).sum()


def three(x):
    return 3


def mul_s(x, s):
    return x * s


def two(x, y):
    return x + y, y * 2


def _v(t):
    return t.asnumpy().tolist()


def test_vmap_is_one_function():
    assert ops.vmap is ms.vmap


def test_axes_and_structures(mode):
    a, b = Tensor(A), Tensor(B)
    assert _v(ms.vmap(f2, in_axes=(0, None))(a, b)) == [[1.0, 3.0, 7.0], [4.0, 9.0, 16.0]]
    assert _v(ms.vmap(f2, in_axes=(1, 0))(a, b)) == [[1.0, 4.0], [3.0, 9.0], [7.0, 16.0]]
    assert _v(ms.vmap(f2, in_axes=(-1, 0))(a, b)) == [[1.0, 4.0], [3.0, 9.0], [7.0, 16.0]]
    assert _v(ms.vmap(f2, in_axes=(1, 0), out_axes=1)(a, b)) == \
        [[1.0, 3.0, 7.0], [4.0, 9.0, 16.0]]
    assert _v(ms.vmap(f2, in_axes=[0, None])(a, b)) == [[1.0, 3.0, 7.0], [4.0, 9.0, 16.0]]
    s, d = ms.vmap(f3, in_axes=(0, None), out_axes=(0, 1))(a, b)
    assert _v(s) == [3.0, 12.0] and _v(d) == [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]]
    s, d = ms.vmap(f3, in_axes=(0, None))(a, b)
    assert d.shape == (2, 3)
    assert _v(ms.vmap(pair_sum, in_axes=((0, None),))((a, b))) == [[1.0, 3.0, 5.0],
                                                                 [4.0, 6.0, 8.0]]
    assert _v(ms.vmap(pair_sum, in_axes=0)((a, a))) == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    assert _v(ms.vmap(mul_s, in_axes=(0, None))(a, 2.0)) == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    x3 = Tensor(np.arange(12, dtype=np.float32).reshape(2, 2, 3))
    assert _v(ms.vmap(gram)(x3)) == [[[5.0, 14.0], [14.0, 50.0]], [[149.0, 212.0],
                                                                   [212.0, 302.0]]]
    p, q = ms.vmap(two, in_axes=[0, None], out_axes=[1, 0])(a, b)
    assert _v(p) == [[1.0, 4.0], [3.0, 6.0], [5.0, 8.0]] and q.shape == (2, 3)
    r = ms.vmap(three)(a)                   # a constant output is broadcast: int64
    assert r.dtype == ms.int64 and _v(r) == [3, 3]
    r = ms.vmap(lambda x: x + 1)(Tensor(np.array([[1, 2]], np.int32)))
    assert r.dtype == ms.int32 and _v(r) == [[2, 3]]
    assert _v(ms.vmap(nn.ReLU())(a)) == A.tolist()


def test_gradients_both_ways(mode):
    a = Tensor(A)
    assert _v(ms.grad(lambda x: ms.vmap(sq)(x).sum())(a)) == [[0.0, 2.0, 4.0],
                                                             [6.0, 8.0, 10.0]]
    assert _v(ms.vmap(ms.grad(cube))(a)) == [[0.0, 3.0, 12.0], [27.0, 48.0, 75.0]]


def test_inside_jit():
    @ms.jit
    def g(x, y):
        return ms.vmap(f2, in_axes=(0, None))(x, y)
    assert _v(g(Tensor(A), Tensor(B))) == [[1.0, 3.0, 7.0], [4.0, 9.0, 16.0]]


def test_out_axes_none(mode):
    a, b = Tensor(A), Tensor(B)
    p, q = ms.vmap(two, in_axes=(0, None), out_axes=(0, None))(a, b)
    assert _v(q) == [2.0, 4.0, 6.0]                      # MindSpore: the unbatched output
    with pytest.raises(RuntimeError, match="source is not None and dst is None"):
        ms.vmap(f3, in_axes=(0, None), out_axes=(None, 0))(a, b)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda a, b: ms.vmap(f2, in_axes=(0, 0))(a, b), RuntimeError, "should be equal, but got 2 "
                                                                   "and 3"),
    (lambda a, b: ms.vmap(f2, in_axes=None)(a, b), RuntimeError, "cannot be a single None"),
    (lambda a, b: ms.vmap(f2, out_axes=None)(a, b), RuntimeError, "cannot be a single None"),
    (lambda a, b: ms.vmap(f2, in_axes=(2, None))(a, b), RuntimeError,
     r"axis: 2 in 'in_axes' is out of bounds for array of dimension \[-2,2\)"),
    (lambda a, b: ms.vmap(f2, in_axes=(0, None), out_axes=2)(a, b), RuntimeError,
     r"axis: 2 in 'out_axes' is out of bounds"),
    (lambda a, b: ms.vmap(two, in_axes=(0, None, 0))(a, b), RuntimeError,
     "number of arguments of 'fn': 2, but got size: 3"),
    (lambda a, b: ms.vmap(two, in_axes=(0.5, None))(a, b), RuntimeError, "Int64Imm"),
    (lambda a, b: ms.vmap(mul_s, in_axes=(0, 0))(a, 2.0), RuntimeError, "AbstractTensor"),
    (lambda a, b: ms.vmap(f2)(a, y=b), TypeError, "unexpected keyword argument 'y'"),
    (lambda a, b: ms.vmap(lambda x: {"a": x})(a), RuntimeError, "tensors or constants"),
    (lambda a, b: ms.vmap(nn.CellList([nn.ReLU()]))(a), NotImplementedError, "CellList"),
], ids=["sizes", "in-none", "out-none", "in-oob", "out-oob", "in-len", "in-float",
        "batched-scalar", "kwargs", "dict-out", "celllist"])
def test_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call(Tensor(A), Tensor(B))
