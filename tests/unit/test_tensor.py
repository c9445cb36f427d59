"""Tensor construction, metadata, conversion, repr, operators and methods."""
import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, ParameterTuple, Tensor


@pytest.fixture(autouse=True)
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")


def test_construction_and_metadata():
    t = Tensor([[1, 2, 3], [4, 5, 6]], dtype=ms.float32)
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6 and len(t) == 2
    assert t.dtype is ms.float32
    np.testing.assert_array_equal(np.asarray(t), [[1, 2, 3], [4, 5, 6]])
    assert Tensor(t).dtype is ms.float32 and Tensor(t, ms.int32).dtype is ms.int32
    assert ms.tensor(3.5).item() == 3.5
    assert Tensor([[1, 2]]).tolist() == [[1, 2]]
    assert Tensor(np.float16(2)).dtype is ms.float16
    a = np.arange(3.0)
    t2 = Tensor(a)
    a[0] = 100                                   # Tensor() copies
    assert t2.asnumpy()[0] == 0
    shared = ms.from_numpy(a)
    assert shared.asnumpy()[0] == 100


def test_repr_matches_mindspore():
    assert repr(Tensor([1.0, 2.0])) == \
        "Tensor(shape=[2], dtype=Float32, value= [ 1.00000000e+00,  2.00000000e+00])"
    assert repr(Tensor([1, 2])) == "Tensor(shape=[2], dtype=Int64, value= [1, 2])"
    assert repr(Tensor(1.0)) == "Tensor(shape=[], dtype=Float32, value= 1)"
    assert repr(Tensor([[1.0]])) == "Tensor(shape=[1, 1], dtype=Float32, value=\n[[ 1.00000000e+00]])"
    p = Parameter(Tensor([1.0]), name="w")
    assert repr(p) == "Parameter (name=w, shape=(1,), dtype=Float32, requires_grad=True)"


def test_operators_match_numpy():
    a = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    b = np.array([2.0, 3.0, -4.0], np.float32)
    ta, tb = Tensor(a), Tensor(b)
    cases = {
        "add": (ta + tb, a + b), "radd": (1 + ta, 1 + a), "sub": (ta - tb, a - b),
        "rsub": (2 - ta, 2 - a), "mul": (ta * tb, a * b), "rmul": (3 * ta, 3 * a),
        "div": (ta / tb, a / b), "rdiv": (1 / tb, 1 / b), "floordiv": (ta // tb, a // b),
        "mod": (ta % tb, np.mod(a, b)), "pow": (abs(ta) ** 0.5, np.abs(a) ** 0.5),
        "rpow": (2 ** ta, 2 ** a), "neg": (-ta, -a), "abs": (abs(ta), np.abs(a)),
        "matmul": (ta @ tb, a @ b), "lt": (ta < tb, a < b), "le": (ta <= 1.5, a <= 1.5),
        "gt": (ta > tb, a > b), "ge": (ta >= tb, a >= b), "eq": (ta == tb, a == b),
        "ne": (ta != 1.5, a != 1.5),
    }
    for name, (got, want) in cases.items():
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, err_msg=name)
        assert got.asnumpy().dtype == np.asarray(want).dtype, name


def test_bitwise_operators():
    a = np.array([5, 3, 12], np.int32)
    b = np.array([3, 6, 10], np.int32)
    ta, tb = Tensor(a), Tensor(b)
    for got, want in ((ta & tb, a & b), (ta | tb, a | b), (ta ^ tb, a ^ b), (~ta, ~a),
                      (ta << 1, a << 1), (ta >> 1, a >> 1), (7 & ta, 7 & a)):
        np.testing.assert_array_equal(got.asnumpy(), want)
    m, n = Tensor([True, False, True]), Tensor([True, True, False])
    np.testing.assert_array_equal((m & n).asnumpy(), [True, False, False])
    np.testing.assert_array_equal((m | n).asnumpy(), [True, True, True])
    np.testing.assert_array_equal((m ^ n).asnumpy(), [False, True, True])
    np.testing.assert_array_equal((~m).asnumpy(), [False, True, False])


def test_methods():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    t = Tensor(a)
    np.testing.assert_array_equal(t.reshape(4, 6).asnumpy(), a.reshape(4, 6))
    np.testing.assert_array_equal(t.reshape((6, -1)).asnumpy(), a.reshape(6, -1))
    np.testing.assert_array_equal(t.transpose().asnumpy(), a.transpose())
    np.testing.assert_array_equal(t.transpose(1, 0, 2).asnumpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(t.flatten().asnumpy(), a.flatten())
    np.testing.assert_array_equal(t.expand_dims(1).squeeze().asnumpy(), a)
    assert t.astype(ms.int32).dtype is ms.int32
    np.testing.assert_allclose(t.sum().asnumpy(), a.sum())
    np.testing.assert_allclose(t.sum(axis=(0, 2), keepdims=True).asnumpy(),
                               a.sum(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(t.mean(1).asnumpy(), a.mean(1))
    np.testing.assert_allclose(t.max(axis=-1).asnumpy(), a.max(-1))
    np.testing.assert_allclose(t.min().asnumpy(), a.min())
    np.testing.assert_array_equal(t.argmax(axis=1).asnumpy(), a.argmax(1))
    np.testing.assert_allclose(t.abs().asnumpy(), np.abs(a))
    np.testing.assert_allclose(t.abs().sqrt().asnumpy(), np.sqrt(np.abs(a)), rtol=1e-6)
    np.testing.assert_allclose(t.exp().log().asnumpy(), a, atol=1e-5)
    np.testing.assert_allclose(t.pow(2).asnumpy(), a ** 2)
    np.testing.assert_allclose(t.matmul(t.transpose(0, 2, 1)).asnumpy(),
                               a @ a.transpose(0, 2, 1), rtol=1e-6)
    c = t.copy()
    assert c is not t and np.array_equal(c.asnumpy(), a)
    np.testing.assert_array_equal(t.T.asnumpy(), a.T)


def test_ops_max_returns_values_and_indices():
    a = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], np.float32)
    v, i = ms.ops.max(Tensor(a), axis=1)
    np.testing.assert_array_equal(v.asnumpy(), [5.0, 7.0])
    np.testing.assert_array_equal(i.asnumpy(), [1, 0])


def test_parameter_and_parameter_tuple():
    p = Parameter(Tensor([1.0, 2.0]), name="w")
    assert isinstance(p, Tensor) and p.requires_grad
    p.set_data(Tensor([3.0, 4.0]))
    np.testing.assert_array_equal(p.asnumpy(), [3.0, 4.0])
    with pytest.raises(ValueError, match="same shape"):
        p.set_data(Tensor([1.0]))
    q = p.clone()
    assert q is not p and q.name == "w" and np.array_equal(q.asnumpy(), p.asnumpy())
    frozen = Parameter(Tensor([1.0]), name="f", requires_grad=False)
    assert not frozen.requires_grad
    pt = ParameterTuple([p, frozen])
    assert isinstance(pt, tuple) and len(pt) == 2
    with pytest.raises(TypeError, match="not a Parameter"):
        ParameterTuple([p, Tensor([1.0])])
    assert Parameter(Tensor([1.0])).name.startswith("Parameter#")


def test_item_errors():
    with pytest.raises(ValueError, match="one element"):
        Tensor([1.0, 2.0]).item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(Tensor([1.0, 2.0]))


def test_parameter_tuple_clone_makes_prefixed_moments_as_mindspore():
    """MindSpore 2.10: ParameterTuple((w, b)).clone(prefix="moments", init="zeros") gives
    Parameters moments.w / moments.b, zero-filled, keeping requires_grad; '' is a ValueError."""
    from minispore import Parameter, ParameterTuple
    a = Parameter(ms.Tensor(np.ones((2,), np.float32)), name="w")
    b = Parameter(ms.Tensor(np.full((3,), 2, np.float32)), name="b", requires_grad=False)
    pt = ParameterTuple((a, b))
    c = pt.clone(prefix="moments", init="zeros")
    assert type(c) is ParameterTuple
    assert [(p.name, p.asnumpy().tolist(), p.requires_grad) for p in c] == \
        [("moments.w", [0.0, 0.0], True), ("moments.b", [0.0, 0.0, 0.0], False)]
    assert [(p.name, p.asnumpy().tolist()) for p in pt.clone("m")] == \
        [("m.w", [1.0, 1.0]), ("m.b", [2.0, 2.0, 2.0])]
    assert a.name == "w"
    with pytest.raises(ValueError, match="illegal"):
        pt.clone(prefix="")
