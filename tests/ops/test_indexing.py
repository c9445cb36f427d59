"""Tensor indexing: __getitem__/__setitem__ against numpy (basic, advanced and mask keys, empty and
negative-step slices), the index errors, and gradients through __getitem__/__setitem__; every
cell in PyNative and, in GRAPH_MODE, compiled (helpers.in_mode, helpers.graph_runs)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore.core import dtype as dt
from minispore.core.errors import ShapeError

from helpers import assert_close, canary, graph_runs, in_mode


# ---------------------------------------------------------------- indexing ----------------------
A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
_MASK3 = A > 10
_MASK2 = A[..., 0] > 5
_MASK1 = A[:, 0, 0] > 5


class It:
    """An integer-tensor index in a key spec (int64 unless given)."""
    def __init__(self, v, dtype=np.int64):
        self.arr = np.array(v, dtype)


class Mk:
    """A bool-tensor mask in a key spec."""
    def __init__(self, m):
        self.arr = np.asarray(m, bool)


def _keys(spec):
    """(minispore key, numpy key) from a spec."""
    def one(k):
        if isinstance(k, (It, Mk)):
            return ms.Tensor(k.arr), k.arr
        return k, k
    if isinstance(spec, tuple):
        pairs = [one(k) for k in spec]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    return one(spec)


GETITEM_KEYS = {
    "int": 1, "negative-int": -1, "slice": slice(1, None), "reversed": slice(None, None, -1),
    "int-slice-int": (0, slice(None), 2), "none": None, "ellipsis": Ellipsis,
    "ellipsis-int": (Ellipsis, 1), "none-int-ellipsis": (None, 1, Ellipsis),
    "slice-none-step": (slice(0, 2), None, slice(None, None, 2)),
    "negative-step-range": (1, slice(2, 0, -1), slice(-3, None)),
    "empty-slice": (slice(None), slice(5, 10)),
    "empty-negative-step": (slice(None), slice(-5, 0, -1)), "empty-reversed": slice(-3, None, -1),
    "all-ints": (0, 1, 2), "ellipsis-none": (Ellipsis, None),
    "int-tensor": It([1, 0]), "int-tensor-axis1": (slice(None), It([0, 2])),
    "int-tensor-last": (Ellipsis, It([3, 0, 3])), "0d-int-tensor": It(1, np.int32),
    "2d-int-tensor": (0, It([[0, 1], [2, 2]])), "list": [1, 0],
    "mask-3d": Mk(_MASK3), "mask-2d": Mk(_MASK2), "mask-1d": Mk(_MASK1),
    "int-then-mask": (1, Mk(A[1, :, 0] > 15)), "np-int": np.int64(1),
}


@pytest.mark.parametrize("name", list(GETITEM_KEYS))
def test_getitem_matches_numpy(backend, mode, name):
    km, kn = _keys(GETITEM_KEYS[name])
    want = np.asarray(A[kn])

    def get(x):
        return x[km]
    got = in_mode(get, ms.Tensor(A))
    assert got.dtype is ms.float32
    assert_close(got.asnumpy(), want, 0, 0, f"x[{name}]")


SETITEM_VALUES = {    # key name -> value (scalar or array broadcastable to the region)
    "int": 7.0, "negative-int": np.full((3, 4), 5, np.float32), "slice": np.arange(4.0),
    "reversed": 0.5, "int-slice-int": np.array([1.0, 2.0, 3.0]), "none": 9.0, "ellipsis": 1.0,
    "ellipsis-int": np.array([[1.0], [2.0]]), "none-int-ellipsis": 2.0,
    "slice-none-step": np.full((2, 1, 2, 4), 8.0), "negative-step-range": np.ones((2, 3)),
    "empty-slice": 3.0, "empty-negative-step": 4.0, "empty-reversed": 5.0, "all-ints": 100.0, "int-tensor": np.zeros((2, 3, 4)),
    "int-tensor-axis1": np.ones((2, 2, 4)), "mask-3d": -1.0, "mask-2d": np.arange(4.0),
    "list": 2.0, "np-int": np.arange(12.0).reshape(3, 4), "mask-1d": np.arange(12.0).reshape(3, 4),
}


@pytest.mark.parametrize("name", list(SETITEM_VALUES))
def test_setitem_matches_numpy(backend, mode, name):
    km, kn = _keys(GETITEM_KEYS[name])
    v = SETITEM_VALUES[name]
    want = A.copy()
    want[kn] = v

    def put(x, value):
        x[km] = value
        return x
    x = in_mode(put, ms.Tensor(A.copy()),
                ms.Tensor(np.asarray(v, np.float32)) if isinstance(v, np.ndarray) else v)
    assert x.dtype is ms.float32 and x.shape == A.shape
    assert_close(x.asnumpy(), want, 0, 0, f"x[{name}] = value")


def _put_scalar(x):
    x[1:3] = 2.7
    return x


def _put_tail(x, v):
    x[3:] = v
    return x


def test_setitem_casts_to_the_tensor_dtype(backend, mode):
    x = in_mode(_put_scalar, ms.Tensor(np.arange(5, dtype=np.int32)))
    assert x.dtype is ms.int32
    assert_close(x.asnumpy(), np.array([0, 2, 2, 3, 4], np.int32), 0, 0, "int setitem")
    x = in_mode(_put_tail, x, ms.Tensor(np.array([1.9, -1.9], np.float32)))
    assert_close(x.asnumpy(), np.array([0, 2, 2, 1, -1], np.int32), 0, 0, "float into int")


@pytest.mark.parametrize("key,value,exc,regex", [
    (5, 1.0, IndexError, r"index 5 is out of bounds for axis 0 with size 2"),
    ((0, 0, 0, 0), 1.0, IndexError, r"too many indices for a tensor of shape \(2, 3, 4\)"),
    (1.5, 1.0, IndexError, r"invalid index of type float"),
    (True, 1.0, IndexError, r"a Python bool is not a valid index"),
    ((Ellipsis, Ellipsis), 1.0, IndexError, r"single ellipsis"),
    (slice(0, 1), np.ones(5), ShapeError,
     r"setitem: value of shape \(5,\) cannot be broadcast to the indexed region of shape "
     r"\(1, 3, 4\)"),
])
def test_index_errors(backend, mode, key, value, exc, regex):
    x = ms.Tensor(A.copy())

    def get(t):
        return t[key]

    def put(t, v):
        t[key] = v
        return t
    if exc is IndexError:                  # the key itself is bad: reading fails too
        with pytest.raises(exc, match=regex), graph_runs("getitem"):
            in_mode(get, x)
    with pytest.raises(exc, match=regex), graph_runs("setitem"):
        in_mode(put, x, ms.Tensor(np.asarray(value, np.float32)) if isinstance(value, np.ndarray)
                else value)
    assert_close(x.asnumpy(), A, 0, 0, "x unchanged by a failed setitem")
    canary()


def _take(x, key):
    return x[key]


def test_mask_shape_error(backend, mode):
    x = ms.Tensor(A)
    with pytest.raises(IndexError, match=r"boolean index of shape \(3,\) does not match"), \
            graph_runs("mask"):
        in_mode(_take, x, ms.Tensor(np.array([True, False, True])))


# ---------------------------------------------------------------- gradient through setitem ------
def test_grad_through_setitem_slice(backend, mode):
    """f(x, y) = sum(w * x') with x' = x; x'[1:3] = y: df/dx = w off the slice, df/dy = w[1:3]."""
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)

    def f(x, y):
        z = x * 1.0
        z[1:3] = y
        return ms.ops.sum(z * ms.Tensor(w))

    x = ms.Tensor(np.array([10.0, 20.0, 30.0, 40.0, 50.0], np.float32))
    y = ms.Tensor(np.array([-1.0, -2.0], np.float32))
    with graph_runs("grad"):
        gx, gy = ms.grad(f, grad_position=(0, 1))(x, y)
    assert_close(gx.asnumpy(), np.array([1.0, 0.0, 0.0, 4.0, 5.0], np.float32), 0, 0, "grad x")
    assert_close(gy.asnumpy(), np.array([2.0, 3.0], np.float32), 0, 0, "grad y")
    assert_close(in_mode(f, x, y).asnumpy(), np.array(1 * 10 - 2 - 6 + 160 + 250.0, np.float32), 0, 0, "value")


def test_grad_through_setitem_on_the_input_itself(backend, mode):
    """x[1:3] = y on the differentiated input, then sum: the brief's exact example."""
    def f(x, y):
        x[1:3] = y
        return ms.ops.sum(x)

    x = ms.Tensor(np.arange(5.0, dtype=np.float32))
    y = ms.Tensor(np.array([7.0, 8.0], np.float32))
    with graph_runs("grad"):
        gx, gy = ms.grad(f, grad_position=(0, 1))(x, y)
    assert_close(gx.asnumpy(), np.array([1.0, 0.0, 0.0, 1.0, 1.0], np.float32), 0, 0, "grad x")
    assert_close(gy.asnumpy(), np.array([1.0, 1.0], np.float32), 0, 0, "grad y")


def test_grad_through_setitem_broadcast_value(backend, mode):
    """A value broadcast into the region gets the region's gradient summed back."""
    def f(x, v):
        z = x * 1.0
        z[:, 1] = v                                # v of shape (1,) fills a column of 3
        return ms.ops.sum(z * z)

    x = ms.Tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    v = ms.Tensor(np.array([2.0], np.float32))
    with graph_runs("grad"):
        gx, gv = ms.grad(f, grad_position=(0, 1))(x, v)
    assert_close(gx.asnumpy(), np.array([[0.0, 0.0], [4.0, 0.0], [8.0, 0.0]], np.float32), 0, 0, "grad x")
    assert_close(gv.asnumpy(), np.array([12.0], np.float32), 0, 0, "grad v: 3 elements * 2 * v")


@pytest.mark.parametrize("kind", ["int-tensor", "mask"])
def test_grad_through_setitem_advanced(backend, mode, kind):
    def f(x, y):
        z = x * 2.0
        key = ms.Tensor(np.array([2, 0])) if kind == "int-tensor" else \
            ms.Tensor(np.array([True, False, True, False]))
        z[key] = y
        return ms.ops.sum(z * ms.Tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32)))

    x = ms.Tensor(np.ones(4, np.float32))
    y = ms.Tensor(np.array([5.0, 6.0], np.float32))
    with graph_runs("grad"):
        gx, gy = ms.grad(f, grad_position=(0, 1))(x, y)
    assert_close(gx.asnumpy(), np.array([0.0, 4.0, 0.0, 8.0], np.float32), 0, 0, f"grad x ({kind})")
    want_y = [3.0, 1.0] if kind == "int-tensor" else [1.0, 3.0]
    assert_close(gy.asnumpy(), np.array(want_y, np.float32), 0, 0, f"grad y ({kind})")


def test_grad_through_getitem(backend, mode):
    """f = sum(t[1:, ::-2] * t[0, ::2]): slices with negative steps and an int index."""
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    with graph_runs("grad"):
        g = ms.grad(lambda t: ms.ops.sum(t[1:, ::-2] * t[0, ::2]))(ms.Tensor(a))
    want = np.zeros((3, 4), np.float32)
    want[1:, ::-2] += a[0, ::2]                 # d f / d t[i, c_j] = t[0, d_j]
    want[0, ::2] += a[1:, ::-2].sum(0)          # d f / d t[0, d_j] = sum_i t[i, c_j]
    assert_close(g.asnumpy(), want, 0, 0, "grad through getitem")


def test_setitem_keeps_earlier_results(backend, mode):
    """Buffers are immutable: a value read before x[...] = v keeps its old contents."""
    def f(x):
        y = x[0:2]
        x[0] = 5.0
        return x, y
    x, y = in_mode(f, ms.Tensor(np.zeros(3, np.float32)))
    assert_close(y.asnumpy(), np.zeros(2, np.float32), 0, 0, "earlier slice")
    assert_close(x.asnumpy(), np.array([5.0, 0.0, 0.0], np.float32), 0, 0, "updated x")
    assert x.dtype is dt.float32
