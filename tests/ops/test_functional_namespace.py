"""MindSpore's `mindspore.ops.functional` (F) and `mindspore.ops.operations` (P) namespaces:
both import styles, their non-tensor helpers (shape queries as Python values, tuple and scalar
conversion, depend, identity, partial) and the Primitive classes reached as `P.X`, in PyNative
and inside a compiled graph. Expected values were observed running MindSpore 2.10 (CPU) on the
same inputs."""
from __future__ import annotations

import functools
import importlib

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops
from minispore.core.graph import compile as graph_compile
from minispore.ops import functional as F
from minispore.ops import operations as P


def _x():
    return ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))


def test_both_import_styles_give_the_namespace_modules():
    assert importlib.import_module("minispore.ops.functional") is F
    assert importlib.import_module("minispore.ops.operations") is P
    # F holds the ops functions (MindSpore's F.matmul is ops.matmul), P the Primitive classes
    assert F.matmul is ops.matmul and F.div is ops.div and F.cast is ops.cast
    assert P.MatMul is ops.MatMul and P.Cast is ops.Cast and P.Depend is ops.Depend
    for name in ("Shape", "DType", "Rank", "Size", "TupleToArray", "ScalarToTensor",
                 "Identity", "Reshape", "Transpose", "ReduceMean", "Concat", "Squeeze",
                 "ExpandDims", "Softmax", "Assign", "Add", "StopGradient"):
        assert getattr(P, name) is getattr(ops, name), name
    # MindSpore's F has no Primitive classes and P no functions
    assert not hasattr(F, "Shape") and not hasattr(P, "shape")
    with pytest.raises(AttributeError):
        F.no_such_function


def test_shape_queries_give_python_values():
    # MindSpore: F.shape / P.Shape()(x) / ops.shape -> (2, 3) tuple; F.dtype, P.DType()(x) ->
    # Float32; F.rank / P.Rank()(x) -> 2 (int), F.size / P.Size()(x) -> 6 (int);
    # F.shape(Tensor(3.0)) -> (), F.rank -> 0, F.size -> 1; F.shape_mul((2, 3)) -> 6, () -> 1
    x = _x()
    for s in (F.shape(x), P.Shape()(x), ops.shape(x), ops.Shape()(x)):
        assert s == (2, 3) and type(s) is tuple and all(type(d) is int for d in s)
    assert F.dtype(x) is ms.float32 and P.DType()(x) is ms.float32 and ops.dtype(x) is ms.float32
    assert F.rank(x) == 2 and type(F.rank(x)) is int and P.Rank()(x) == 2
    assert F.size(x) == 6 and type(F.size(x)) is int and P.Size()(x) == 6
    s = ms.Tensor(3.0)
    assert (F.shape(s), F.rank(s), F.size(s)) == ((), 0, 1)
    assert F.shape_mul((2, 3)) == 6 and F.shape_mul(()) == 1


def test_shape_queries_refuse_a_non_tensor():
    # MindSpore raises TypeError for F.shape(3), F.dtype(3), F.rank(3), F.size(3) and
    # ValueError for F.shape_mul([2, 3])
    for fn in (F.shape, F.dtype, F.rank, F.size, P.Shape(), P.DType()):
        with pytest.raises(TypeError):
            fn(3)
    with pytest.raises(ValueError, match="tuple"):
        F.shape_mul([2, 3])


def test_tuple_to_array_dtypes():
    # MindSpore: (1, 2) -> [1 2] Int32; (1.0, 2.0) -> [1. 2.] Float32; (True, False) -> [1 0]
    # Int32; (1.5, 2) -> [1.5 2.] Float32; P.TupleToArray()((1, 2)) -> [1 2] Int32
    cases = [((1, 2), [1, 2], ms.int32), ((1.0, 2.0), [1.0, 2.0], ms.float32),
             ((True, False), [1, 0], ms.int32), ((1.5, 2), [1.5, 2.0], ms.float32)]
    for t, value, dtype in cases:
        for fn in (F.tuple_to_array, ops.tuple_to_array, P.TupleToArray()):
            r = fn(t)
            assert r.dtype is dtype and r.shape == (len(t),), t
            np.testing.assert_array_equal(r.asnumpy(), np.array(value))


def test_tuple_to_array_refuses_what_mindspore_refuses_or_truncates():
    # MindSpore: a list fails (AttributeError), () fails (IndexError); (1, 2.5) gives [1 2]
    # Int32 in PyNative (the float truncated) and a TypeError in graph mode: refused here
    with pytest.raises(TypeError, match="tuple"):
        F.tuple_to_array([1, 2])
    with pytest.raises(ValueError, match="empty"):
        F.tuple_to_array(())
    with pytest.raises(TypeError, match="one type"):
        F.tuple_to_array((1, 2.5))
    with pytest.raises(TypeError, match="nested"):
        F.tuple_to_array(((1, 2), (3, 4)))


def test_scalar_to_tensor():
    # MindSpore: 1 -> 1.0 Float32 (); 1.5 -> 1.5 Float32; True -> 1.0 Float32; (2, int32) -> 2
    # Int32; (3, float16) -> 3.0 Float16; (2.5, int32) -> 2 Int32; P.ScalarToTensor()(3) -> 3.0
    # Float32; a Tensor input is a TypeError
    cases = [((1,), 1.0, ms.float32), ((1.5,), 1.5, ms.float32), ((True,), 1.0, ms.float32),
             ((2, ms.int32), 2, ms.int32), ((3, ms.float16), 3.0, ms.float16),
             ((2.5, ms.int32), 2, ms.int32)]
    for args, value, dtype in cases:
        for fn in (F.scalar_to_tensor, ops.scalar_to_tensor, P.ScalarToTensor()):
            r = fn(*args)
            assert r.dtype is dtype and r.shape == (), args
            assert r.asnumpy().item() == value
    with pytest.raises(TypeError, match="ScalarToTensor"):
        F.scalar_to_tensor(ms.Tensor(1))


def test_identity_depend_partial_tensor_add():
    # MindSpore: F.identity(x) is x (also for a Parameter, a tuple, a string); ops.identity is
    # F.identity; P.Identity()(param) is a new Tensor; F.depend(x, x + 1) is x's value;
    # F.partial(ops.add, x) is a functools.partial giving x + x; F.tensor_add(x, x) = 2x;
    # ms.grad(lambda t: F.identity(t) * 2)(ones(2)) -> [2. 2.]
    x = _x()
    p = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="p")
    assert F.identity(x) is x and F.identity(p) is p and ops.identity is F.identity
    assert F.identity((1, 2)) == (1, 2) and F.identity("a") == "a"
    r = P.Identity()(p)
    assert type(r) is ms.Tensor and r is not p
    np.testing.assert_array_equal(r.asnumpy(), p.asnumpy())
    np.testing.assert_array_equal(F.depend(x, x + 1).asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(P.Depend()(x, x).asnumpy(), x.asnumpy())
    part = F.partial(ops.add, x)
    assert isinstance(part, functools.partial)
    np.testing.assert_array_equal(part(x).asnumpy(), 2 * x.asnumpy())
    np.testing.assert_array_equal(F.tensor_add(x, x).asnumpy(), 2 * x.asnumpy())
    g = ms.grad(lambda t: F.identity(t) * 2)(ms.Tensor(np.ones(2, np.float32)))
    np.testing.assert_array_equal(g.asnumpy(), [2.0, 2.0])
    g = ms.grad(lambda t: P.Identity()(t) * 2)(ms.Tensor(np.ones(2, np.float32)))
    np.testing.assert_array_equal(g.asnumpy(), [2.0, 2.0])


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.shape, self.reshape, self.cast = P.Shape(), P.Reshape(), P.Cast()
        self.mean = P.ReduceMean(keep_dims=True)

    def construct(self, x):
        s = F.shape(x)
        y = self.reshape(x, (s[1], s[0]))
        a = F.tuple_to_array((1, 2))
        b = F.tuple_to_array((1.5, 2.0))
        z = F.scalar_to_tensor(3, ms.int32)
        w = F.cast(y, ms.int32)
        add_x = F.partial(ops.add, x)
        return (y, a, b, z, self.cast(x, F.dtype(x)), F.depend(w, y), F.identity(x), F.rank(x),
                F.size(x), self.shape(x), add_x(x), P.TupleToArray()((3, 4)), ops.Shape()(x),
                self.mean(x, 1), P.Identity()(x))


def test_the_names_in_a_cell(mode):
    # MindSpore 2.10, the same Cell in GRAPH_MODE: y = [[0,1],[2,3],[4,5]] float32, a = [1 2]
    # int32, b = [1.5 2.] float32, z = 3 int32, cast(x, F.dtype(x)) = x float32, depend -> y as
    # int32, identity -> x, rank 2, size 6 (ints), shape (2, 3) (a tuple)
    x = _x()
    calls = graph_compile.ran["calls"]
    out = _Net()(x)
    assert graph_compile.ran["calls"] == calls + (mode == "graph")
    y, a, b, z, c, w, i, rank, size, shape, ax, a34, shape2, mean, ident = out
    np.testing.assert_array_equal(y.asnumpy(), np.arange(6, dtype=np.float32).reshape(3, 2))
    assert y.dtype is ms.float32
    assert a.dtype is ms.int32 and a.asnumpy().tolist() == [1, 2]
    assert b.dtype is ms.float32 and b.asnumpy().tolist() == [1.5, 2.0]
    assert z.dtype is ms.int32 and z.shape == () and z.asnumpy().item() == 3
    assert c.dtype is ms.float32 and w.dtype is ms.int32
    np.testing.assert_array_equal(w.asnumpy(), np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(i.asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(ident.asnumpy(), x.asnumpy())
    assert (rank, size) == (2, 6) and type(rank) is int and type(size) is int
    assert shape == (2, 3) and shape2 == (2, 3) and type(shape) is tuple
    np.testing.assert_array_equal(ax.asnumpy(), 2 * x.asnumpy())
    assert a34.dtype is ms.int32 and a34.asnumpy().tolist() == [3, 4]
    np.testing.assert_array_equal(mean.asnumpy(), [[1.0], [4.0]])


def test_shape_is_a_graph_constant_under_jit(mode):
    # F.shape inside a compiled function is a Python tuple usable as a reshape target and in
    # arithmetic, as in MindSpore's graph mode
    @ms.jit
    def f(x):
        n, m = F.shape(x)
        return F.reshape(x, (n * m,)), F.size(x) + 1

    flat, k = f(_x())
    assert flat.shape == (6,) and k == 7


def test_assign_through_f_in_a_graph(mode):
    # MindSpore: F.assign(p, [3., 4.]) returns [3. 4.] and p holds [3. 4.] after the call
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.p = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="p")

        def construct(self, v):
            return F.assign(self.p, v)

    net = Net()
    r = net(ms.Tensor(np.array([3.0, 4.0], np.float32)))
    assert r.asnumpy().tolist() == [3.0, 4.0] and net.p.asnumpy().tolist() == [3.0, 4.0]
