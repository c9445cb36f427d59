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


_A = np.array([7, -7, 3], np.int32)
_B = np.array([2, 2, -2], np.int32)


def test_real_div_rounds_towards_zero_between_integers():
    # MindSpore: P.RealDiv()([7,-7,3] int32, [2,2,-2] int32) -> [3 -3 -1] Int32; (int32, 2) ->
    # [3 -3 1] Int32; (int32, 2.5) -> [2.8 -2.8 1.2] Float32; (int32, float32 [2,2,-2]) ->
    # [3.5 -3.5 -1.5]; (int32, int64 same values) -> [1 1 1] Int64; (uint8 [7,5,3], 2) ->
    # [3 2 1] UInt8; (7, int32) -> [1 -1 2] Int32; bool tensors: TypeError. P.Div is float.
    a, b = ms.Tensor(_A), ms.Tensor(_B)
    cases = [((a, b), [3, -3, -1], ms.int32), ((a, 2), [3, -3, 1], ms.int32),
             ((a, 2.5), [2.8, -2.8, 1.2], ms.float32),
             ((a, ms.Tensor(_B.astype(np.float32))), [3.5, -3.5, -1.5], ms.float32),
             ((a, ms.Tensor(_A.astype(np.int64))), [1, 1, 1], ms.int64),
             ((ms.Tensor(np.array([7, 5, 3], np.uint8)), 2), [3, 2, 1], ms.uint8),
             ((7, a), [1, -1, 2], ms.int32)]
    for args, value, dtype in cases:
        for fn in (P.RealDiv(), F.tensor_div):
            r = fn(*args)
            assert r.dtype is dtype
            np.testing.assert_allclose(r.asnumpy(), value, rtol=1e-6)
    r = P.Div()(a, b)
    assert r.dtype is ms.float32 and r.asnumpy().tolist() == [3.5, -3.5, -1.5]
    with pytest.raises(TypeError, match="bool"):
        P.RealDiv()(ms.Tensor(np.array([True])), ms.Tensor(np.array([True])))


def test_tensor_operator_aliases():
    # MindSpore (int32 [7,-7,3] with [2,2,-2]): tensor_mul [14 -14 -6], tensor_sub [5 -9 5],
    # tensor_pow [49 49 0], tensor_gt [T F T], tensor_ge [T F T], tensor_lt [F T F], tensor_le
    # [F T F], tensor_floordiv [3 -4 -2], tensor_mod [1 1 -1], all Int32 (Bool for compares)
    a, b = ms.Tensor(_A), ms.Tensor(_B)
    expected = {"tensor_mul": [14, -14, -6], "tensor_sub": [5, -9, 5], "tensor_pow": [49, 49, 0],
                "tensor_gt": [True, False, True], "tensor_ge": [True, False, True],
                "tensor_lt": [False, True, False], "tensor_le": [False, True, False],
                "tensor_floordiv": [3, -4, -2], "tensor_mod": [1, 1, -1]}
    for name, value in expected.items():
        r = getattr(F, name)(a, b)
        assert getattr(ops, name) is getattr(F, name)
        assert r.dtype is (ms.bool_ if isinstance(value[0], bool) else ms.int32), name
        assert r.asnumpy().tolist() == value, name
    np.testing.assert_allclose(F.tensor_exp(ms.Tensor(np.array([0.0, 1.0], np.float32))).asnumpy(),
                               [1.0, np.e], rtol=1e-6)


def test_flatten_bias_add():
    # MindSpore: P.Flatten: (2,3) -> (2,3), (2,3,2,2) -> (2,12), (3,) -> (3,1), 0-D refused;
    # P.BiasAdd()(arange(24).reshape(2,3,2,2), [10,20,30])[:, :, 0, 0] -> [[10,24,38],
    # [22,36,50]]; 2-D zeros -> rows [10,20,30]; NHWC adds along the last axis; 1-D refused
    for shape, out in [((2, 3), (2, 3)), ((2, 3, 2, 2), (2, 12)), ((3,), (3, 1))]:
        assert P.Flatten()(ms.Tensor(np.zeros(shape, np.float32))).shape == out
    with pytest.raises(ValueError):
        P.Flatten()(ms.Tensor(3.0))
    x4 = ms.Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2))
    b = ms.Tensor(np.array([10.0, 20.0, 30.0], np.float32))
    r = P.BiasAdd()(x4, b).asnumpy()
    np.testing.assert_array_equal(r[:, :, 0, 0], [[10, 24, 38], [22, 36, 50]])
    np.testing.assert_array_equal(P.BiasAdd()(ms.Tensor(np.zeros((2, 3), np.float32)), b).asnumpy(),
                                  [[10, 20, 30]] * 2)
    r = P.BiasAdd(data_format="NHWC")(ms.Tensor(np.zeros((1, 2, 2, 3), np.float32)), b)
    np.testing.assert_array_equal(r.asnumpy()[0, 0], [[10, 20, 30]] * 2)
    with pytest.raises(ValueError, match="rank"):
        P.BiasAdd()(ms.Tensor(np.zeros(3, np.float32)), b)
    with pytest.raises(ValueError, match="data_format"):
        P.BiasAdd(data_format="NCW")


def test_arg_max_min_with_value_and_slice():
    # MindSpore, x = [[1,5,2],[7,0,7]]: ArgMaxWithValue(0) -> ([1 0 1] Int64, [7 5 7]);
    # ArgMinWithValue(0) -> ([0 1 0], [1 0 2]); ArgMaxWithValue(1, True) -> ([[1],[0]],
    # [[5],[7]]); ArgMinWithValue(-1) -> ([0 1], [1 0]); on int32 [1,3,3] -> (1 Int64, 3 Int32).
    # P.Slice()(arange(24).reshape(2,3,2,2), (0,1,0,0), (1,2,-1,1)) -> shape (1,2,2,1),
    # [4 6 8 10]; Slice()(x, [1,0], [1,3]) -> [[7 0 7]]; begin + size past the end: ValueError
    x = ms.Tensor(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]], np.float32))
    cases = [(P.ArgMaxWithValue(), [1, 0, 1], [7, 5, 7]),
             (P.ArgMinWithValue(), [0, 1, 0], [1, 0, 2]),
             (P.ArgMaxWithValue(axis=1, keep_dims=True), [[1], [0]], [[5], [7]]),
             (P.ArgMinWithValue(axis=-1), [0, 1], [1, 0])]
    for prim, index, value in cases:
        i, v = prim(x)
        assert i.dtype is ms.int64 and v.dtype is ms.float32
        assert i.asnumpy().tolist() == index and v.asnumpy().tolist() == value
    i, v = P.ArgMaxWithValue()(ms.Tensor(np.array([1, 3, 3], np.int32)))
    assert (i.dtype, v.dtype, i.asnumpy().item(), v.asnumpy().item()) == \
        (ms.int64, ms.int32, 1, 3)
    x4 = ms.Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2))
    r = P.Slice()(x4, (0, 1, 0, 0), (1, 2, -1, 1))
    assert r.shape == (1, 2, 2, 1) and r.asnumpy().ravel().tolist() == [4, 6, 8, 10]
    assert P.Slice()(x, [1, 0], [1, 3]).asnumpy().tolist() == [[7, 0, 7]]
    with pytest.raises(ValueError, match="Slice"):
        P.Slice()(x, (1, 0), (2, 3))


class _Net2(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten, self.bias_add, self.slice = P.Flatten(), P.BiasAdd(), P.Slice()
        self.amax, self.real_div = P.ArgMaxWithValue(axis=1), P.RealDiv()

    def construct(self, x4, b, a, c):
        i, v = self.amax(self.flatten(x4))
        return (self.bias_add(x4, b), self.slice(x4, (0, 1, 0, 0), (1, 2, -1, 1)), i, v,
                self.real_div(a, c), F.tensor_mod(a, c))


def test_the_primitives_in_a_cell(mode):
    x4 = ms.Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2))
    b = ms.Tensor(np.array([10.0, 20.0, 30.0], np.float32))
    calls = graph_compile.ran["calls"]
    bias, sl, i, v, q, m = _Net2()(x4, b, ms.Tensor(_A), ms.Tensor(_B))
    assert graph_compile.ran["calls"] == calls + (mode == "graph")
    np.testing.assert_array_equal(bias.asnumpy()[:, :, 0, 0], [[10, 24, 38], [22, 36, 50]])
    assert sl.asnumpy().ravel().tolist() == [4, 6, 8, 10]
    assert i.dtype is ms.int64 and i.asnumpy().tolist() == [11, 11]
    assert v.asnumpy().tolist() == [11, 23]
    assert q.dtype is ms.int32 and q.asnumpy().tolist() == [3, -3, -1]
    assert m.asnumpy().tolist() == [1, 1, -1]


def _max_value_sum(t):
    return P.ArgMaxWithValue(axis=1)(t)[1].sum()


def _min_value_sum(t):
    return P.ArgMinWithValue(axis=0, keep_dims=True)(t)[1].sum()


def test_with_value_gradient_goes_to_the_chosen_index(mode):
    # MindSpore: grad of ArgMaxWithValue(axis=1)(x)[1].sum() at [[1,5,2],[7,0,7]] ->
    # [[0,1,0],[1,0,0]] (the tie's gradient to its first index, not shared); grad of
    # ArgMinWithValue(axis=0, keep_dims=True)(t)[1].sum() at [[1,5],[1,0]] -> [[1,0],[0,1]]
    x = ms.Tensor(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]], np.float32))
    assert ms.grad(_max_value_sum)(x).asnumpy().tolist() == [[0, 1, 0], [1, 0, 0]]
    y = ms.Tensor(np.array([[1.0, 5.0], [1.0, 0.0]], np.float32))
    assert ms.grad(_min_value_sum)(y).asnumpy().tolist() == [[1, 0], [0, 1]]


# (begin_mask, end_mask, shrink_axis_mask, begin, end, strides) and the numpy slice of
# arange(60).reshape(3, 4, 5) that MindSpore 2.10's P.StridedSlice gave (compared in both
# modes: same values and shapes)
_STRIDED = [
    (0, 0, 0, (1, 0, 0), (2, 3, 4), (1, 1, 1), np.s_[1:2, 0:3, 0:4]),
    (0, 0, 0, (0, 1, 0), (3, 4, 5), (1, 2, 2), np.s_[0:3, 1:4:2, 0:5:2]),
    (0, 0, 0, (0, 0, 0), (10, 10, 10), (1, 1, 1), np.s_[:, :, :]),
    (1, 0, 0, (2, 0, 0), (3, 4, 5), (1, 1, 1), np.s_[:3, 0:4, 0:5]),
    (0, 4, 0, (0, 0, 0), (1, 2, 3), (1, 1, 1), np.s_[0:1, 0:2, 0:]),
    (0, 0, 1, (1, 0, 0), (2, 4, 5), (1, 1, 1), np.s_[1, 0:4, 0:5]),
    (0, 0, 5, (1, 0, 2), (2, 4, 3), (1, 1, 1), np.s_[1, 0:4, 2]),
    (0, 0, 0, (0,), (2,), (1,), np.s_[0:2]),
    (5, 2, 0, (1, 1, 1), (2, 2, 2), (2, 3, 2), np.s_[:2:2, 1::3, :2:2]),
    (0, 0, 0, (-2, -3, 1), (-1, 4, -1), (1, 1, 1), np.s_[-2:-1, -3:4, 1:-1]),
    (0, 0, 1, (-1, 0, 0), (3, 4, 5), (1, 1, 1), np.s_[-1, 0:4, 0:5]),
]


class _Sliced(nn.Cell):
    def __init__(self, op, begin, end, strides):
        super().__init__()
        self.op, self.begin, self.end, self.strides = op, begin, end, strides

    def construct(self, x):
        return self.op(x, self.begin, self.end, self.strides)


@pytest.mark.parametrize("case", range(len(_STRIDED)))
def test_strided_slice_masks(mode, case):
    bm, em, sm, begin, end, strides, key = _STRIDED[case]
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    op = P.StridedSlice(begin_mask=bm, end_mask=em, shrink_axis_mask=sm)
    r = _Sliced(op, begin, end, strides)(ms.Tensor(a))
    assert r.shape == a[key].shape
    np.testing.assert_array_equal(r.asnumpy(), a[key])


def test_strided_slice_refuses_what_mindspore_does_not_slice_as_python():
    # MindSpore 2.10's CPU kernel gives values unlike Python slicing for negative strides with
    # negative bounds and for new_axis_mask (zeros in the output) or ellipsis_mask
    x = ms.Tensor(np.zeros((3, 4, 5), np.float32))
    with pytest.raises(NotImplementedError, match="negative strides"):
        P.StridedSlice()(x, (-1, -1, -1), (-4, -5, -6), (-1, -1, -2))
    for kw in ({"ellipsis_mask": 1}, {"new_axis_mask": 2}):
        with pytest.raises(NotImplementedError, match=next(iter(kw))):
            P.StridedSlice(**kw)
    with pytest.raises(ValueError, match="strides"):
        P.StridedSlice()(x, (0,), (1,), (0,))


class _Padded(nn.Cell):
    def __init__(self, paddings):
        super().__init__()
        self.pad = P.Pad(paddings)

    def construct(self, x):
        return self.pad(x)


def test_pad(mode):
    # MindSpore: P.Pad(((1, 2), (0, 1)))(arange(6).reshape(2, 3)) -> 5x4 with x at [1:3, 0:3];
    # int32 [[1, 2]] with ((0, 0), (2, 0)) -> [[0 0 1 2]] Int32; the gradient of a padded sum is
    # ones; a list, a negative padding and a wrong number of pairs are refused
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    r = _Padded(((1, 2), (0, 1)))(ms.Tensor(x))
    expected = np.zeros((5, 4), np.float32)
    expected[1:3, 0:3] = x
    np.testing.assert_array_equal(r.asnumpy(), expected)
    r = _Padded(((0, 0), (2, 0)))(ms.Tensor(np.array([[1, 2]], np.int32)))
    assert r.dtype is ms.int32 and r.asnumpy().tolist() == [[0, 0, 1, 2]]
    g = ms.grad(_Padded(((1, 0), (1, 1))))(ms.Tensor(x))
    np.testing.assert_array_equal(g.asnumpy(), np.ones((2, 3)))
    with pytest.raises(TypeError, match="tuple"):
        P.Pad([[1, 0], [0, 1]])
    with pytest.raises(ValueError, match=">= 0"):
        P.Pad(((-1, 0), (0, 0)))
    with pytest.raises(ValueError, match="rank"):
        P.Pad(((1, 1),))(ms.Tensor(x))


class _GatheredNd(nn.Cell):
    def __init__(self):
        super().__init__()
        self.gather_nd = P.GatherNd()

    def construct(self, x, indices):
        return self.gather_nd(x, indices)


def test_gather_nd(mode):
    # MindSpore, x = arange(24).reshape(2, 3, 4): indices [[0,1],[1,2]] -> (2, 4) rows x[0,1],
    # x[1,2]; [[1]] -> (1, 3, 4); [[0,1,2],[1,0,3]] -> [6, 15]; [[[0,0]],[[1,1]]] -> (2, 1, 4);
    # [0, 2] -> x[0, 2]; int32 and int64 alike; [[0,3]], [[2,0]] and [[0,-1]] raise; the
    # gradient at [[0,1],[0,1]] is 2 on row x[0,1]
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    net = _GatheredNd()
    for idx, expected in [([[0, 1], [1, 2]], a[[0, 1], [1, 2]]), ([[1]], a[[1]]),
                          ([[0, 1, 2], [1, 0, 3]], np.array([6.0, 15.0])),
                          ([[[0, 0]], [[1, 1]]], a[[[0], [1]], [[0], [1]]]), ([0, 2], a[0, 2])]:
        for dtype in (np.int32, np.int64):
            r = _GatheredNd()(ms.Tensor(a), ms.Tensor(np.array(idx, dtype)))
            assert r.shape == expected.shape and r.dtype is ms.float32
            np.testing.assert_array_equal(r.asnumpy(), expected)
    for bad in ([[0, 3]], [[2, 0]], [[0, -1]]):
        with pytest.raises(IndexError):
            net(ms.Tensor(a), ms.Tensor(np.array(bad, np.int32)))
    g = ms.grad(net)(ms.Tensor(a), ms.Tensor(np.array([[0, 1], [0, 1]], np.int32)))
    expected = np.zeros_like(a)
    expected[0, 1] = 2
    np.testing.assert_array_equal(g.asnumpy(), expected)
