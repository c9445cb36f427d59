"""MindSpore 2.x meanings of calls whose results could differ silently: Tensor methods with
MindSpore's overloads (transpose(dim0, dim1), max/min(dim), flatten(start_dim, end_dim),
sum/mean(dim, keepdim)), TruncatedNormal's absolute bounds, ops.Argmax's int32 default,
nn.Embedding's dtype, and relu's +0.0 on every CPU path (PyNative, graph O0/O1, both O2 sinks)
and the simulated Ascend. Expected values are MindSpore 2.10's, measured side by side."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.common.initializer import TruncatedNormal, initializer
from minispore.core.graph import compile as graph_compile

from helpers import in_mode

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _shapes(r):
    return [tuple(t.shape) for t in r] if isinstance(r, tuple) else tuple(r.shape)


# ---------------------------------------------------------------- Tensor.transpose --------------
def _transpose_swap(x):
    return x.transpose(0, 1), x.transpose(-1, 0), x.transpose(dim0=0, dim1=2)


def _transpose_perm(x):
    return x.transpose(0, 2, 1), x.transpose((0, 2, 1)), x.transpose(), x.T


def test_transpose_with_two_ints_swaps_two_axes(mode):
    a, b, c = in_mode(_transpose_swap, Tensor(X))
    np.testing.assert_array_equal(a.asnumpy(), X.swapaxes(0, 1))
    np.testing.assert_array_equal(b.asnumpy(), X.swapaxes(2, 0))
    np.testing.assert_array_equal(c.asnumpy(), X.swapaxes(0, 2))
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(Tensor(m).transpose(0, 1).asnumpy(), m.T)


def test_transpose_permutation_forms_stay(mode):
    got = in_mode(_transpose_perm, Tensor(X))
    assert [tuple(t.shape) for t in got] == [(2, 4, 3), (2, 4, 3), (4, 3, 2), (4, 3, 2)]
    np.testing.assert_array_equal(got[0].asnumpy(), X.transpose(0, 2, 1))


# ---------------------------------------------------------------- Tensor.max / min --------------
def _max_min_dim(x):
    return x.max(1), x.min(1), x.max(1, True), x.max(dim=2)


def test_max_min_with_positional_dim_return_values_and_indices(mode):
    (mv, mi), (nv, ni), (kv, ki), (dv, di) = in_mode(_max_min_dim, Tensor(X))
    np.testing.assert_array_equal(mv.asnumpy(), X.max(1))
    np.testing.assert_array_equal(mi.asnumpy(), X.argmax(1))
    np.testing.assert_array_equal(nv.asnumpy(), X.min(1))
    np.testing.assert_array_equal(ni.asnumpy(), X.argmin(1))
    assert mi.dtype == ms.int64 and kv.shape == ki.shape == (2, 1, 4)
    np.testing.assert_array_equal(di.asnumpy(), X.argmax(2))


def test_max_with_axis_keyword_returns_values_and_honours_initial_and_where():
    x = Tensor(X)
    assert x.max(axis=1).shape == (2, 4) and float(x.max().asnumpy()) == 23.0
    v, i = x.max(axis=1, return_indices=True)
    np.testing.assert_array_equal(i.asnumpy(), X.argmax(1))
    np.testing.assert_array_equal(x.max(axis=1, initial=10.0).asnumpy(),
                                  X.max(1, initial=10.0))
    mask = X < 7
    np.testing.assert_array_equal(x.min(axis=2, initial=50.0, where=Tensor(~mask)).asnumpy(),
                                  X.min(2, initial=50.0, where=~mask))
    with pytest.raises(ValueError, match="initial"):
        x.max(axis=1, where=Tensor(mask))


# ---------------------------------------------------------------- Tensor.flatten ----------------
def _flatten(x):
    return x.flatten(1), x.flatten(0, 1), x.flatten(), x.flatten(start_dim=1), x.flatten("F")


def test_flatten_binds_start_dim_and_end_dim_positionally(mode):
    a, b, c, d, f = in_mode(_flatten, Tensor(X))
    assert [tuple(t.shape) for t in (a, b, c, d)] == [(2, 12), (6, 4), (24,), (2, 12)]
    np.testing.assert_array_equal(f.asnumpy(), X.flatten("F"))
    with pytest.raises(ValueError, match="order"):
        Tensor(X).flatten("K")


# ---------------------------------------------------------------- Tensor.sum / mean -------------
def _sum_mean(x):
    return (x.sum(1, True), x.sum(dim=1, keepdim=True), x.sum(1, ms.float64),
            x.sum(axis=1, keepdims=True), x.mean(1, True), x.mean(dim=(0, 2), keepdim=True),
            x.mean(axis=1, keep_dims=True), x.mean(1, dtype=ms.float64))


def test_sum_and_mean_take_dim_keepdim_positionally(mode):
    s1, s2, s3, s4, m1, m2, m3, m4 = in_mode(_sum_mean, Tensor(X))
    for t in (s1, s2, s4):
        np.testing.assert_array_equal(t.asnumpy(), X.sum(1, keepdims=True))
    assert s3.dtype == ms.float64 and s3.shape == (2, 4)
    for t in (m1, m3):
        np.testing.assert_allclose(t.asnumpy(), X.mean(1, keepdims=True))
    np.testing.assert_allclose(m2.asnumpy(), X.mean((0, 2), keepdims=True))
    assert m4.dtype == ms.float64


def test_sum_with_mixed_signatures_names_both():
    with pytest.raises(TypeError, match=r"sum\(dim=None, keepdim=False.*sum\(axis=None"):
        Tensor(X).sum(dim=1, keepdims=True)


# ---------------------------------------------------------------- TruncatedNormal ---------------
def test_truncated_normal_bounds_are_absolute():
    np.random.seed(0)
    t = initializer(TruncatedNormal(0.5, a=-0.1, b=0.1), [20000], ms.float32).asnumpy()
    assert t.min() >= -0.1 and t.max() <= 0.1 and t.std() > 0.05     # MindSpore: std 0.057
    t = initializer(TruncatedNormal(0.01), [20000], ms.float32).asnumpy()
    assert abs(t.std() - 0.01) < 5e-4 and t.max() > 0.03              # [-2, 2]: untruncated
    t = initializer(TruncatedNormal(1.0, 3.0, 2.0, 5.0), [20000], ms.float32).asnumpy()
    assert t.min() >= 2.0 and t.max() <= 5.0 and abs(t.mean() - 3.23) < 0.05
    t = initializer(TruncatedNormal(1.0, 0.0, 8.0, 9.0), [100], ms.float32).asnumpy()
    assert t.min() >= 8.0 and t.max() <= 9.0                         # far tail: no endless loop


# ---------------------------------------------------------------- ops.Argmax ---------------------
def _argmax_prims(x):
    return ops.Argmax()(x), ops.Argmin(axis=1)(x), ops.Argmax(output_type=ms.int64)(x)


def test_argmax_primitive_defaults_to_int32(mode):
    a, b, c = in_mode(_argmax_prims, Tensor(X))
    assert (a.dtype, b.dtype, c.dtype) == (ms.int32, ms.int32, ms.int64)
    np.testing.assert_array_equal(a.asnumpy(), X.argmax(-1))
    np.testing.assert_array_equal(b.asnumpy(), X.argmin(1))
    with pytest.raises(TypeError, match="output_type"):
        ops.Argmax(output_type=ms.float32)


# ---------------------------------------------------------------- nn.Embedding -------------------
def test_embedding_dtype_is_a_number_type_for_the_one_hot_values():
    ids = Tensor(np.array([[1, 2], [3, 0]], np.int32))
    e = nn.Embedding(10, 4)
    assert e.dtype == ms.float32 and e.embedding_table.dtype == ms.float32
    e16 = nn.Embedding(10, 4, dtype=ms.float16)            # MindSpore: the table stays float32
    assert e16.embedding_table.dtype == ms.float32 and e16(ids).dtype == ms.float32
    assert nn.Embedding(10, 4, dtype=ms.int32)(Tensor(np.array([1], np.int64))).shape == (1, 4)
    table = Tensor(np.random.rand(10, 4).astype(np.float16))
    oh = nn.Embedding(10, 4, use_one_hot=True, embedding_table=table, dtype=ms.float16)
    assert oh.embedding_table.dtype == ms.float16
    np.testing.assert_array_equal(oh(ids).asnumpy(), table.asnumpy()[ids.asnumpy()])
    with pytest.raises(TypeError, match="number type"):
        nn.Embedding(10, 4, dtype=ms.bool_)
    with pytest.raises(TypeError, match="use_one_hot"):
        nn.Embedding(10, 4, use_one_hot=True, dtype=ms.float16)


# ---------------------------------------------------------------- relu's zero --------------------
RELU_IN = np.array([-np.inf, -1.0, -0.0, np.nan, 0.0, 2.0], np.float32)
RELU_OUT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 2.0], np.float32)


RELU = nn.ReLU()


def _relu_chain(x):
    """relu fused after a multiply (O1/O2 fuse the pair) and relu alone."""
    return RELU(x * 1.0), ops.relu(x)


def _relu_check(got, what):
    for t in got:
        a = t.asnumpy().astype(np.float32)
        np.testing.assert_array_equal(a, RELU_OUT, err_msg=what)
        assert not np.signbit(a).any(), f"{what}: relu gave -0.0: {a}"


@pytest.mark.parametrize("level", ["O0", "O1", "O2", "pynative"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_relu_of_negative_zero_inf_and_nan_is_positive_zero(level, dtype, monkeypatch):
    monkeypatch.setenv("MINISPORE_RECOMPILE_LIMIT", "64")      # one graph per level/dtype
    x = Tensor(RELU_IN.astype(dtype))
    if level == "pynative":
        _relu_check(_relu_chain(x), f"PyNative {dtype.__name__}")
    else:
        ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
        _relu_check(ms.jit(_relu_chain)(x), f"graph {level} {dtype.__name__}")
        if level == "O2":
            assert type(graph_compile.last_compiled().program) is NativeProgram


def test_relu_on_the_simulated_ascend_gives_positive_zero(mode):
    ms.set_context(device_target="Ascend")
    _relu_check(in_mode(_relu_chain, Tensor(RELU_IN)), f"Ascend {mode}")


def test_relu_gradient_is_zero_where_the_output_is_zero_even_for_infinite_seeds():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    seed = Tensor(np.array([np.inf, np.inf, 1, 1, 1, 1], np.float32))
    g = ms.grad(lambda x: (ops.relu(x) * seed).sum())(Tensor(RELU_IN)).asnumpy()
    np.testing.assert_array_equal(g, [0, 0, 0, 0, 0, 1])
    assert not np.signbit(g).any()


def test_ops_flatten_of_a_vector_is_the_vector():
    assert ops.flatten(Tensor(np.ones(3, np.float32))).shape == (3,)      # MindSpore: (3,)
    assert ops.flatten(Tensor(2.0)).shape == (1,)


# ---------------------------------------------------------------- the other Tensor overloads ----
V = np.array([[1.5, -2.5, 0.0], [3.25, 1.0, 2.0]], np.float32)


def _overloads(x):
    return (x.all(1, True), x.any(dim=1), x.prod(1, True, ms.float64), x.sub(1.0, alpha=2),
            x.add(x, alpha=0.5), x.div(-2.0, rounding_mode="trunc"), x.to(ms.float16),
            x.softmax(0, ms.float64), x.logsumexp(1, True), x.tile(dims=(2, 1)))


def test_tensor_overloads_take_mindspores_arguments(mode):
    al, an, pr, sb, ad, dv, to, sm, ls, tl = in_mode(_overloads, Tensor(V))
    np.testing.assert_array_equal(al.asnumpy(), V.all(1, keepdims=True))
    np.testing.assert_array_equal(an.asnumpy(), V.any(1))
    assert pr.dtype == ms.float64 and pr.shape == (2, 1)
    np.testing.assert_allclose(sb.asnumpy(), V - 2.0)
    np.testing.assert_allclose(ad.asnumpy(), V * 1.5)
    np.testing.assert_array_equal(dv.asnumpy(), np.trunc(V / -2.0))     # MindSpore's values
    assert to.dtype == ms.float16 and sm.dtype == ms.float64 and ls.shape == (2, 1)
    assert tl.shape == (4, 3)


def test_tensor_to_device_and_view_dtype_are_loud():
    x = Tensor(V)
    assert x.to("cpu").dtype == ms.float32 and x.to(Tensor(np.int32(1))).dtype == ms.int32
    with pytest.raises(ValueError, match="device_target"):
        x.to("GPU")
    with pytest.raises(NotImplementedError, match="astype"):
        x.view(ms.int32)
    assert x.view(3, 2).shape == x.view((3, 2)).shape == (3, 2)
    assert Tensor(np.ones(3)).broadcast_to(2, 3).shape == (2, 3)
    assert Tensor(np.array([-7, 7], np.int32)).div(2, rounding_mode="trunc").asnumpy().tolist() \
        == [-3, 3]


def test_mindspore_defaults_of_dropout_avg_pool_and_reduce_ops():
    assert nn.Dropout().keep_prob == 0.5 and nn.Dropout(p=0.2).p == 0.2
    y = ops.avg_pool2d(Tensor(np.ones((1, 1, 4, 4), np.float32)), 2, 2, divisor_override=0)
    assert y.shape == (1, 1, 2, 2)
    assert ops.reduce_sum(Tensor(V)).shape == () and ops.reduce_max(Tensor(V), 1).shape == (2,)
    assert nn.BatchNorm1d(3, data_format="NCHW").data_format == "NCHW"
    assert ms.get_context(attr_key="mode") in (ms.GRAPH_MODE, ms.PYNATIVE_MODE)


# ---------------------------------------------------------------- functional ops' arguments -----
def _functional(x):
    return (ops.sum(x, dim=1, keepdim=True), ops.argmax(x, dim=1, keepdim=True),
            ops.amax(x, 1, True), ops.mean(x, 1, True), ops.prod(x, 1, False, ms.float64),
            ops.logsumexp(x, dim=1), ops.div(x, 2.0, rounding_mode="floor"),
            ops.subtract(x, 1.0, alpha=2), ops.softplus(x, 2, 1), ops.transpose(x, dims=(1, 0)))


def test_functional_ops_take_mindspores_names_and_arguments(mode):
    s, am, mx, mn, pr, ls, dv, sb, sp, tr = in_mode(_functional, Tensor(V))
    np.testing.assert_array_equal(s.asnumpy(), V.sum(1, keepdims=True))
    np.testing.assert_array_equal(am.asnumpy(), V.argmax(1)[:, None])
    np.testing.assert_array_equal(mx.asnumpy(), V.max(1, keepdims=True))
    np.testing.assert_allclose(mn.asnumpy(), V.mean(1, keepdims=True))
    assert pr.dtype == ms.float64 and ls.shape == (2,)
    np.testing.assert_array_equal(dv.asnumpy(), np.floor(V / 2))
    np.testing.assert_allclose(sb.asnumpy(), V - 2)
    bx = 2 * V.astype(np.float64)
    np.testing.assert_allclose(sp.asnumpy(), np.where(bx > 1, V, np.log1p(np.exp(bx)) / 2),
                               rtol=1e-6)
    np.testing.assert_array_equal(tr.asnumpy(), V.T)


def test_functional_ops_refuse_what_they_cannot_do_by_name():
    x = Tensor(V)
    np.testing.assert_array_equal(ops.amax(x, 1, initial=2.5, where=Tensor(V > 0)).asnumpy(),
                                  V.max(1, initial=2.5, where=V > 0))
    with pytest.raises(TypeError, match="both dim= and axis="):
        ops.sum(x, dim=1, axis=1)
    with pytest.raises(NotImplementedError, match="inplace"):
        ops.relu(x, inplace=True)
    with pytest.raises(NotImplementedError, match="batch_dims"):
        ops.gather(x, Tensor(np.array([0])), 0, batch_dims=1)
    with pytest.raises(NotImplementedError, match="initial"):
        ops.max(x, 1, initial=1.0)
    assert ops.ReduceSum(skip_mode=True)(x, ()) is x
    assert ops.ReduceSum()(x, ()).shape == ()


def test_the_overload_binder_agrees_with_signature_bind():
    """core.overloads binds calls without inspect.Signature.bind (eager loops call Tensor
    methods); over every call shape it must accept and reject what bind does."""
    import inspect

    from minispore.core.overloads import _binder

    def f(self, a, b=2, *rest, c, d=4):
        pass

    def g(self, a=1, b=2, *, c=3):
        pass
    calls = [((0,), {}), ((0, 1), {}), ((0, 1), {"c": 5}), ((0, 1, 2, 3), {"c": 5}),
             ((0,), {"a": 1, "c": 2}), ((0, 1), {"a": 1, "c": 2}), ((0,), {"e": 1}),
             ((0, 1, 2), {"c": 1, "d": 9}), ((0, 1, 2, 3), {}), ((0,), {"b": 7})]
    for fn in (f, g):
        sig, fast = inspect.signature(fn), _binder(inspect.signature(fn))
        for args, kwargs in calls:
            try:
                b = sig.bind(*args, **kwargs)
                b.apply_defaults()
                want = dict(b.arguments)
            except TypeError:
                want = None
            got = fast(args, kwargs)
            if want is not None and "rest" in want:
                want["rest"] = tuple(want["rest"])
            assert got == want, (fn.__name__, args, kwargs, got, want)


def test_numpy_bool_flags_pick_the_same_overload_and_numpy_values_are_not_dtypes():
    x = Tensor(V)
    assert x.sum(1, np.True_).shape == (2, 1)
    assert x.max(1, np.False_)[1].dtype == ms.int64
    with pytest.raises(ms.core.errors.DTypeError, match="numpy value"):
        x.astype(np.True_)


def _indices(x):
    return (x.argmin(1), x.argmin(), ops.argmin(x, 1), x.argmax(1), ops.argmax(x, 1),
            ops.min(x, 1)[1], ops.max(x, 1)[1], x.min(1)[1])


def test_index_dtypes_are_mindspores(mode):
    """MindSpore 2.10: argmin (method and ops) gives int32, argmax and the indices of
    ops.min/max and Tensor.min(dim) int64, in both modes."""
    got = in_mode(_indices, Tensor(V))
    assert [t.dtype for t in got] == [ms.int32] * 3 + [ms.int64] * 5
    np.testing.assert_array_equal(got[0].asnumpy(), V.argmin(1))


def test_a_mindspore_style_initializer_subclass_fills_its_array():
    from minispore.common.initializer import Initializer

    class Halves(Initializer):
        def __init__(self, value=0.5):
            super().__init__(value=value)
            self.value = value

        def _initialize(self, arr):
            arr[:] = self.value

    w = nn.Dense(3, 2, weight_init=Halves(0.25)).weight.asnumpy()
    np.testing.assert_array_equal(w, np.full((2, 3), 0.25, np.float32))
    a = np.zeros((2, 2), np.float32)
    assert Halves()(a) is a and (a == 0.5).all()

    class Empty(Initializer):
        pass
    with pytest.raises(NotImplementedError, match="_initialize"):
        initializer(Empty(), [2], ms.float32)


def test_batchnorm_momentum_attribute_is_mindspores():
    bn = nn.BatchNorm2d(3, momentum=0.8)
    assert bn.momentum == 1.0 - 0.8 and "momentum=0.8" in repr(bn)   # MindSpore: 0.19999...


def test_softmax_primitive_takes_one_axis_and_refuses_several():
    x = Tensor(V)
    np.testing.assert_allclose(ops.Softmax(axis=(0,))(x).asnumpy(), ops.softmax(x, 0).asnumpy())
    with pytest.raises(ValueError, match="several axes"):
        ops.Softmax(axis=(0, 1))


def _int_means(x):
    return ops.mean(x), ops.mean(x, 0), x.mean(1), ops.ReduceMean(keep_dims=True)(x, 1)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_the_mean_of_integers_keeps_the_dtype_rounding_towards_zero(mode):
    """MindSpore 2.10 (CPU): ReduceMean of int32 [[-3,-2],[1,2],[5,7]] is int32 1 overall,
    [1, 2] over axis 0, [-2, 1, 6] over axis 1 (the quotient truncated, not -2.5)."""
    ms.set_context(mode=mode)
    x = ms.Tensor(np.array([[-3, -2], [1, 2], [5, 7]], np.int32))
    fn = ms.jit(_int_means) if mode == ms.GRAPH_MODE else _int_means
    whole, rows, cols, kept = fn(x)
    assert {t.dtype for t in (whole, rows, cols, kept)} == {ms.int32}
    assert whole.asnumpy().tolist() == 1 and rows.asnumpy().tolist() == [1, 2]
    assert cols.asnumpy().tolist() == [-2, 1, 6] and kept.asnumpy().tolist() == [[-2], [1], [6]]
    assert ops.mean(ms.Tensor(np.array([1, 2], np.uint8))).dtype == ms.uint8
