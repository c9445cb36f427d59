"""Tensor.expand_as, value, swapaxes and diff, and the arguments Tensor.to / view / sum / mean
take, in PyNative and inside a compiled graph. Every expected value below is what MindSpore 2.10
printed for the same call (run side by side)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops

from helpers import in_mode

A = np.array([[1, 3, 6, 10], [2, 5, 4, 0]], np.int32)
Z = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _col(v):
    return Tensor(np.full((2, 1), v, np.int32))


def _expand_value_swap(x, o, z):
    return (x.expand_as(o), x.expand_as(other=o), x.expand_as(x=o), x.value(),
            z.swapaxes(0, 2), z.swapaxes(-1, 0), z.swapaxes(axis0=1, axis1=2), z.swapaxes(0, True))


def test_expand_as_value_and_swapaxes_give_mindspores_results(mode):
    x = Tensor(np.array([[1., 2., 3.]], np.float32))
    o = Tensor(np.zeros((2, 3), np.int32))
    e1, e2, e3, v, s1, s2, s3, s4 = in_mode(_expand_value_swap, x, o, Tensor(Z))
    for e in (e1, e2, e3):           # MindSpore: (2, 3) Float32, the row repeated
        assert e.dtype == ms.float32
        assert e.asnumpy().tolist() == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    assert type(v) is Tensor and v.asnumpy().tolist() == [[1.0, 2.0, 3.0]]
    assert s1.shape == s2.shape == (4, 3, 2) and s3.shape == (2, 4, 3)
    assert s1.asnumpy()[1, 2].tolist() == [9.0, 21.0]      # MindSpore's values
    assert s4.shape == (3, 2, 4)                           # a bool axis counts as 1 in MindSpore
    np.testing.assert_array_equal(s3.asnumpy(), Z.swapaxes(1, 2))


def test_expand_as_and_swapaxes_refuse_what_mindspore_refuses():
    x = Tensor(A)
    with pytest.raises(TypeError, match="other must be a Tensor"):
        x.expand_as((2, 4))
    with pytest.raises(ValueError, match="broadcast"):
        x.expand_as(Tensor(np.zeros(4, np.float32)))
    with pytest.raises(ValueError, match="out of range"):
        Tensor(Z).swapaxes(0, 3)
    with pytest.raises(TypeError, match="must be ints"):
        Tensor(Z).swapaxes(0.5, 1)


def test_parameter_value_is_a_tensor_the_gradient_flows_through(mode):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(Tensor(np.array([1., 2.], np.float32)), name="w")

        def construct(self, x):
            return (self.w.value() * x).sum()

    net = Net()
    assert type(net.w.value()) is Tensor
    g = ms.grad(net, grad_position=None, weights=net.trainable_params())(
        Tensor(np.array([3., 4.], np.float32)))
    assert g[0].asnumpy().tolist() == [3.0, 4.0]           # MindSpore: (3, 4)


def _diffs(a, f, b, u):
    return (a.diff(), a.diff(axis=0), a.diff(1, 0), a.diff(axis=-2),
            a.diff(prepend=_col(0)), a.diff(append=_col(100)),
            a.diff(1, -1, _col(0)), a.diff(prepend=_col(0), append=_col(1)),
            f.diff(), b.diff(), u.diff(), f[:1].diff())


def test_diff_gives_mindspores_values_dtypes_and_shapes(mode):
    f = Tensor(np.array([1., 4., 9.], np.float32))
    b = Tensor(np.array([True, False, False]), ms.bool_)
    u = Tensor(np.array([1, 5, 2], np.uint8))
    r = in_mode(_diffs, Tensor(A), f, b, u)
    expected = [                                            # MindSpore 2.10's outputs
        [[2, 3, 4], [3, -1, -4]], [[1, 2, -2, -10]], [[1, 2, -2, -10]], [[1, 2, -2, -10]],
        [[1, 2, 3, 4], [2, 3, -1, -4]], [[2, 3, 4, 90], [3, -1, -4, 100]],
        [[1, 2, 3, 4], [2, 3, -1, -4]], [[1, 2, 3, 4, -9], [2, 3, -1, -4, 1]],
        [3.0, 5.0], [True, False], [4, 253], []]
    for t, e in zip(r, expected):
        assert t.asnumpy().tolist() == e
    assert all(t.dtype == ms.int32 for t in r[:8])
    assert r[8].dtype == ms.float32 and r[9].dtype == ms.bool_ and r[10].dtype == ms.uint8
    assert r[11].shape == (0,) and r[11].dtype == ms.float32


def test_diff_refuses_what_mindspore_refuses():
    a = Tensor(A)
    for n in (0, 2, -1):                # MindSpore 2.10: "For 'diff', 'n' must be 1"
        with pytest.raises(ValueError, match="n must be 1"):
            a.diff(n)
    with pytest.raises(TypeError, match="n must be an int"):
        a.diff(True)
    with pytest.raises(TypeError, match="at least 1 dimension"):
        Tensor(3.0).diff()
    with pytest.raises(TypeError, match="cast prepend"):
        a.diff(prepend=Tensor(np.array([[0.5], [0]], np.float32)))
    with pytest.raises(ValueError, match="except along axis"):
        a.diff(prepend=Tensor(np.array([0, 0], np.int32)))
    with pytest.raises(TypeError, match="must be a Tensor"):
        a.diff(prepend=3)
    with pytest.raises(ValueError, match="out of range"):
        a.diff(axis=2)


def _to_sum_mean(x, i64):
    return (x.to(ms.float16), x.to(dtype=ms.int32), x.to("cpu", ms.float16),
            x.to(device="cpu", dtype=ms.int32), x.to(i64), x.to(), x.to(ms.int32, True),
            x.sum(0, True), x.sum(dim=0, keepdim=True), x.sum(0, ms.float64),
            x.sum(0, keepdim=True, dtype=ms.int32), x.sum(None, None, True),
            x.mean(0, True), x.mean(dim=0, keepdim=True), x.mean(dtype=ms.float64),
            x.mean(axis=0, keep_dims=True), x.view(2, 2), x.view((2, 2)))


def test_to_sum_mean_and_view_bind_as_mindspore(mode):
    x = Tensor(np.array([1., -2., 0.5, 3.], np.float32))
    r = in_mode(_to_sum_mean, x, Tensor(np.array([1], np.int64)))
    expected = [                                            # MindSpore 2.10's outputs
        (ms.float16, [1.0, -2.0, 0.5, 3.0]), (ms.int32, [1, -2, 0, 3]),
        (ms.float16, [1.0, -2.0, 0.5, 3.0]), (ms.int32, [1, -2, 0, 3]),
        (ms.int64, [1, -2, 0, 3]), (ms.float32, [1.0, -2.0, 0.5, 3.0]),
        (ms.int32, [1, -2, 0, 3]),
        (ms.float32, [2.5]), (ms.float32, [2.5]), (ms.float64, 2.5), (ms.int32, [2]),
        (ms.float32, [2.5]),
        (ms.float32, [0.625]), (ms.float32, [0.625]), (ms.float64, 0.625), (ms.float32, [0.625]),
        (ms.float32, [[1.0, -2.0], [0.5, 3.0]]), (ms.float32, [[1.0, -2.0], [0.5, 3.0]])]
    for t, (d, e) in zip(r, expected):
        assert t.dtype == d and t.asnumpy().tolist() == e


def test_to_a_device_minispore_does_not_run_and_view_as_a_dtype_are_refused():
    x = Tensor(np.array([1., -2., 0.5, 3.], np.float32))
    for device in ("Ascend", "npu", "cuda"):
        with pytest.raises(ValueError, match="device_target"):
            x.to(device)
    with pytest.raises(NotImplementedError, match="reinterpreting the bytes"):
        x.view(ms.int32)
    with pytest.raises(NotImplementedError, match="reinterpreting the bytes"):
        x.view(dtype=ms.float16)


X6 = np.arange(6, dtype=np.float32).reshape(2, 3)
I13 = np.array([[1, 2, 3]], np.int32)


def _shape_forms(x, i, o):
    return (x.view_as(o), x.reshape_as(other=o), i.expand(2, 3), i.expand((2, 3)),
            i.expand(-1, 3), i.expand(2, -1), i.expand(4, 2, 3), i.expand([2, 3]),
            x.type_as(i), x.t(), i[0].t(), x.numel() + x.nelement(), x.dim() + x.ndimension())


def test_view_as_expand_type_as_t_and_sizes_give_mindspores_results(mode):
    r = in_mode(_shape_forms, Tensor(X6), Tensor(I13), Tensor(np.zeros((3, 2), np.int32)))
    for t in r[:2]:                  # MindSpore: (3, 2) Float32 0..5
        assert t.dtype == ms.float32 and t.asnumpy().tolist() == [[0., 1.], [2., 3.], [4., 5.]]
    for t in (r[2], r[3], r[5], r[7]):
        assert t.dtype == ms.int32 and t.asnumpy().tolist() == [[1, 2, 3], [1, 2, 3]]
    assert r[4].shape == (1, 3) and r[6].shape == (4, 2, 3)
    assert r[8].dtype == ms.int32 and r[8].asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert r[9].asnumpy().tolist() == [[0., 3.], [1., 4.], [2., 5.]]
    assert r[10].asnumpy().tolist() == [1, 2, 3]
    assert int(r[11]) == 12 and int(r[12]) == 4
    assert Tensor(X6).numel() == 6 and type(Tensor(X6).dim()) is int
    assert Tensor(I13).expand(Tensor(np.array([2, 3]))).shape == (2, 3)
    assert Tensor(3.0).t().shape == ()


def _compare_forms(x, i, w):
    return (x.eq(1.0), x.ne(x), x.gt(2), x.lt(2), x.ge(2), x.le(2), i.eq(2), i.gt(1.5),
            x.minimum(2.0), x.maximum(w), i.maximum(2.5), i.minimum(2.5),
            x.logical_and(x), x.logical_not(), i.logical_not(), x.reciprocal(), i.reciprocal(),
            i.true_divide(2), x.mm(Tensor(np.ones((3, 2), np.float32))),
            Tensor(np.ones((2, 2, 3), np.float32)).bmm(Tensor(np.ones((2, 3, 1), np.float32))))


def test_comparison_logic_and_product_methods_give_mindspores_results(mode):
    r = in_mode(_compare_forms, Tensor(X6), Tensor(I13), Tensor(np.array([1., 1., 5.], np.float32)))
    F, T = False, True
    expected = [                                            # MindSpore 2.10's outputs
        (ms.bool_, [[F, T, F], [F, F, F]]), (ms.bool_, [[F, F, F], [F, F, F]]),
        (ms.bool_, [[F, F, F], [T, T, T]]), (ms.bool_, [[T, T, F], [F, F, F]]),
        (ms.bool_, [[F, F, T], [T, T, T]]), (ms.bool_, [[T, T, T], [F, F, F]]),
        (ms.bool_, [[F, T, F]]), (ms.bool_, [[F, T, T]]),
        (ms.float32, [[0., 1., 2.], [2., 2., 2.]]), (ms.float32, [[1., 1., 5.], [3., 4., 5.]]),
        (ms.float32, [[2.5, 2.5, 3.]]), (ms.float32, [[1., 2., 2.5]]),
        (ms.bool_, [[F, T, T], [T, T, T]]), (ms.bool_, [[T, F, F], [F, F, F]]),
        (ms.bool_, [[F, F, F]]),
        (ms.float32, None), (ms.float32, None), (ms.float32, [[0.5, 1.0, 1.5]]),
        (ms.float32, [[3., 3.], [12., 12.]]), (ms.float32, [[[3.], [3.]], [[3.], [3.]]])]
    for t, (d, e) in zip(r, expected):
        assert t.dtype == d
        if e is not None:
            assert t.asnumpy().tolist() == e
    with np.errstate(divide="ignore"):                     # MindSpore: inf, 1, 0.5, 0.333...
        np.testing.assert_allclose(r[15].asnumpy(), 1 / X6)
    np.testing.assert_allclose(r[16].asnumpy(), [[1., 0.5, 1 / 3]], rtol=1e-6)


def test_shape_and_product_methods_refuse_what_mindspore_refuses():
    x = Tensor(X6)
    with pytest.raises(TypeError, match="must be a Tensor"):
        x.view_as((3, 2))
    with pytest.raises(TypeError, match="size"):
        Tensor(I13).expand(size=(2, 3))            # MindSpore: no keyword 'size' either
    with pytest.raises(ValueError, match="2-D"):
        Tensor(np.zeros((2, 3, 4), np.float32)).t()
    with pytest.raises(ValueError, match="2-D"):
        Tensor(np.ones(3, np.float32)).mm(Tensor(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="3-D"):
        x.bmm(x)


M23 = np.array([[True, False, True], [False, False, True]])
NF = np.array([1., np.nan, np.inf, -np.inf], np.float32)
SQ = np.arange(9, dtype=np.float32).reshape(3, 3)


def _mask_forms(x, i, m, m3, nf, sq):
    return (x.masked_fill(m, 9.0), x.masked_fill(m, Tensor(9.0)), i.masked_fill(m3, 7.5),
            x.where(m, 0.0), i.where(m3, 2.5), x.clamp(1, 4), x.clamp(min=2), i.clamp(1.5, 2.5),
            nf.isnan(), nf.isinf(), nf.isfinite(), i.isfinite(), x.logical_or(m),
            sq.tril(), sq.tril(1), sq.triu(-1), i.remainder(2), nf[:1].remainder(divisor=3.),
            x.lerp(Tensor(np.ones((2, 3), np.float32)), 0.5), x.amax(1, True),
            x.amin(axis=0, keepdims=True), x.log1p()[0, 1])


def test_mask_clamp_float_test_and_reduction_methods_give_mindspores_results(mode):
    r = in_mode(_mask_forms, Tensor(X6), Tensor(I13), Tensor(M23),
                Tensor(np.array([True, False, True])), Tensor(NF), Tensor(SQ))
    F, T = False, True
    expected = [                                            # MindSpore 2.10's outputs
        (ms.float32, [[9., 1., 9.], [3., 4., 9.]]), (ms.float32, [[9., 1., 9.], [3., 4., 9.]]),
        (ms.int32, [[7, 2, 7]]), (ms.float32, [[0., 0., 2.], [0., 0., 5.]]),
        (ms.float32, [[1., 2.5, 3.]]), (ms.float32, [[1., 1., 2.], [3., 4., 4.]]),
        (ms.float32, [[2., 2., 2.], [3., 4., 5.]]), (ms.float32, [[1.5, 2., 2.5]]),
        (ms.bool_, [F, T, F, F]), (ms.bool_, [F, F, T, T]), (ms.bool_, [T, F, F, F]),
        (ms.bool_, [[T, T, T]]), (ms.bool_, [[T, T, T], [T, T, T]]),
        (ms.float32, [[0., 0., 0.], [3., 4., 0.], [6., 7., 8.]]),
        (ms.float32, [[0., 1., 0.], [3., 4., 5.], [6., 7., 8.]]),
        (ms.float32, [[0., 1., 2.], [3., 4., 5.], [0., 7., 8.]]),
        (ms.int32, [[1, 0, 1]]), (ms.float32, [1.0]),
        (ms.float32, [[0.5, 1., 1.5], [2., 2.5, 3.]]), (ms.float32, [[2.], [5.]]),
        (ms.float32, [[0., 1., 2.]]), (ms.float32, 0.6931471824645996)]
    for t, (d, e) in zip(r, expected):
        assert t.dtype == d and t.asnumpy().tolist() == e


def _split_forms(x, idx, one):
    return (x.chunk(2, 1), x.chunk(2), x.chunk(3, axis=1), x.split(2, 1), x.split([1, 2], 1),
            x.split(split_size_or_sections=1, axis=1), x.unbind(), x.unbind(1),
            (x.narrow(1, 1, 2), x.narrow(-1, 0, 2)),
            (x.index_select(1, idx), x.index_select(dim=1, index=idx)),
            (Tensor(np.ones((2, 2), np.float32)).addmm(x, one, beta=2, alpha=0.5),
             Tensor(np.array([1, 2], np.int32)).outer(Tensor(np.array([1., 2., 3.], np.float32))),
             x.new_zeros((2,), dtype=ms.int32), x.new_ones(3)))


def test_split_select_and_product_methods_give_mindspores_results(mode):
    r = in_mode(_split_forms, Tensor(X6), Tensor(np.array([2, 0], np.int32)),
                Tensor(np.ones((3, 2), np.float32)))
    lists = [[t.asnumpy().tolist() for t in group] for group in r]
    assert lists == [                                       # MindSpore 2.10's outputs
        [[[0., 1.], [3., 4.]], [[2.], [5.]]], [[[0., 1., 2.]], [[3., 4., 5.]]],
        [[[0.], [3.]], [[1.], [4.]], [[2.], [5.]]], [[[0., 1.], [3., 4.]], [[2.], [5.]]],
        [[[0.], [3.]], [[1., 2.], [4., 5.]]], [[[0.], [3.]], [[1.], [4.]], [[2.], [5.]]],
        [[0., 1., 2.], [3., 4., 5.]], [[0., 3.], [1., 4.], [2., 5.]],
        [[[1., 2.], [4., 5.]], [[0., 1.], [3., 4.]]], [[[2., 0.], [5., 3.]]] * 2,
        [[[3.5, 3.5], [8., 8.]], [[1., 2., 3.], [2., 4., 6.]], [0, 0], [1., 1., 1.]]]
    assert all(type(g) is tuple for g in r[:8])
    assert r[10][1].dtype == ms.float32 and r[10][2].dtype == ms.int32


def test_mask_and_split_methods_refuse_what_mindspore_refuses():
    x = Tensor(X6)
    with pytest.raises(ValueError, match="at least one of 'min' or 'max'"):
        x.clamp()
    with pytest.raises(ValueError, match="do not fit"):
        x.narrow(1, 2, 2)
    with pytest.raises(TypeError, match="1-D int Tensor"):
        x.index_select(1, [0])
    with pytest.raises(ValueError, match="at least 2-D"):
        Tensor(NF).tril()
    with pytest.raises(ValueError, match="1-D"):
        x.outer(x)
    with pytest.raises(ValueError, match="at least one of 'min' or 'max'"):
        x.clip()                    # MindSpore: "For Clamp, at least one of 'min' or 'max' ..."
    with pytest.raises(ValueError, match="chunks must be a positive int"):
        x.chunk(0)


def _more_forms(x, i, m, h):
    return (x.flip((0,)), x.flip([0, 1]), x.flip(dims=(1,)), x.std(), x.std(1), x.std(0, 0),
            x.std(axis=1, ddof=1, keepdims=True), x.std(dim=1, correction=0, keepdim=True),
            x.std(0, 1, True), x.var(), x.var(1), x.var(axis=0, ddof=1),
            x.addcmul(x, x, 0.5), x.addcmul(x, x, value=2), m.logical_xor(x), h.byte(), h.short(),
            Tensor(np.array([-7, 7], np.int32)).floor_divide(Tensor(np.array([2, -2], np.int32))),
            i.multiply(2.5), x.divide(4, rounding_mode="floor"), x.subtract(1, alpha=2),
            x.negative(), x.not_equal(2), x.greater_equal(2), h.trunc(), h.frac(), i.trunc())


def test_flip_std_var_and_spelling_methods_give_mindspores_results(mode):
    h = Tensor(np.array([-1.5, 300.7, 2.9], np.float32))
    r = in_mode(_more_forms, Tensor(X6), Tensor(I13), Tensor(M23), h)
    F, T = False, True
    s, v = 0.8164966106414795, 0.6666666865348816
    expected = [                                            # MindSpore 2.10's outputs
        (ms.float32, [[3., 4., 5.], [0., 1., 2.]]), (ms.float32, [[5., 4., 3.], [2., 1., 0.]]),
        (ms.float32, [[2., 1., 0.], [5., 4., 3.]]), (ms.float32, 1.7078251838684082),
        (ms.float32, [s, s]), (ms.float32, [1.5, 1.5, 1.5]), (ms.float32, [[1.], [1.]]),
        (ms.float32, [[s], [s]]), (ms.float32, [[2.1213202476501465] * 3]),
        (ms.float32, 2.9166667461395264), (ms.float32, [v, v]), (ms.float32, [4.5, 4.5, 4.5]),
        (ms.float32, [[0., 1.5, 4.], [7.5, 12., 17.5]]),
        (ms.float32, [[0., 3., 10.], [21., 36., 55.]]),
        (ms.bool_, [[T, T, F], [T, T, F]]), (ms.uint8, [255, 44, 2]), (ms.int16, [-1, 300, 2]),
        (ms.int32, [-4, -4]), (ms.float32, [[2.5, 5., 7.5]]),
        (ms.float32, [[0., 0., 0.], [0., 1., 1.]]), (ms.float32, [[-2., -1., 0.], [1., 2., 3.]]),
        (ms.float32, [[-0., -1., -2.], [-3., -4., -5.]]),
        (ms.bool_, [[T, T, F], [T, T, T]]), (ms.bool_, [[F, F, T], [T, T, T]]),
        (ms.float32, [-1., 300., 2.]), (ms.float32, [-0.5, 0.70001220703125, 0.9000000953674316]),
        (ms.int32, [[1, 2, 3]])]
    for k, (t, (d, e)) in enumerate(zip(r, expected)):
        assert t.dtype == d and t.asnumpy().tolist() == e, k
    assert Tensor(X6).is_floating_point() and not Tensor(I13).is_floating_point()
    assert np.isnan(Tensor(np.array([5.], np.float32)).std(0, 1).asnumpy())     # MindSpore: nan


def test_flip_and_std_refuse_what_mindspore_refuses():
    with pytest.raises(TypeError, match="tuple or list"):
        Tensor(X6).flip(-1)
    with pytest.raises(TypeError, match="match none of its signatures"):
        Tensor(X6).std(1, True)


_W = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))


def _composite_loss(x):
    return (x.std(1).sum() + (x.flip((1,)) * _W).sum() + x.narrow(1, 1, 2).sum()
            + x.masked_fill(Tensor(M23), 0.).sum() + (x.diff() ** 2).sum()
            + x.index_select(1, Tensor(np.array([2, 2], np.int32))).sum())


def test_gradients_through_the_composed_methods_are_mindspores(mode):
    g = ms.grad(_composite_loss)(Tensor(X6))
    np.testing.assert_allclose(g.asnumpy(), [[-0.40824827551841736, 3.0, 5.408248424530029],
                                             [3.59175181388855, 6.0, 8.408247947692871]],
                               rtol=1e-6)                   # MindSpore 2.10's gradient


def _numeric_forms(x, i, nf):
    return (nf.nan_to_num(), nf.nan_to_num(0.5), nf.nan_to_num(nan=1.0, posinf=9.0, neginf=-9.0),
            x.trace(), i.trace(), Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)).trace(),
            x.fmod(2), Tensor(np.array([-7., 7.], np.float32)).fmod(-3.),
            Tensor(np.array([-7, 7], np.int32)).fmod(Tensor(np.array([3, -3], np.int32))),
            i.bitwise_and(Tensor(np.array([[3, 3, 3]], np.int32))), i.bitwise_or(4),
            x.count_nonzero(), x.count_nonzero(1),
            x.count_nonzero(axis=1, keep_dims=True, dtype=ms.int64))


def test_nan_to_num_trace_fmod_bitwise_and_count_nonzero_give_mindspores_results(mode):
    big = 3.4028234663852886e+38
    r = in_mode(_numeric_forms, Tensor(X6), Tensor(I13), Tensor(NF))
    expected = [                                            # MindSpore 2.10's outputs
        (ms.float32, [1.0, 0.0, big, -big]), (ms.float32, [1.0, 0.5, big, -big]),
        (ms.float32, [1.0, 1.0, 9.0, -9.0]), (ms.float32, 4.0), (ms.int64, 1),
        (ms.float32, 15.0), (ms.float32, [[0., 1., 0.], [1., 0., 1.]]),
        (ms.float32, [-1., 1.]), (ms.int32, [-1, 1]), (ms.int32, [[1, 2, 3]]),
        (ms.int32, [[5, 6, 7]]), (ms.int32, 5), (ms.int32, [2, 3]), (ms.int64, [[2], [3]])]
    for k, (t, (d, e)) in enumerate(zip(r, expected)):
        assert t.dtype == d and t.asnumpy().tolist() == e, k
    f16 = Tensor(np.array([np.nan, np.inf, -np.inf], np.float16)).nan_to_num()
    assert f16.dtype == ms.float16 and f16.asnumpy().tolist() == [0.0, 65504.0, -65504.0]
    assert Tensor(X6).is_signed() and not Tensor(np.array([1], np.uint8)).is_signed()
    with pytest.raises(NotImplementedError, match="axis="):
        Tensor(X6).count_nonzero(dim=1)     # MindSpore 2.10 (CPU): no keyword 'dim'


def _repeat_forms(x, i):
    return (x.repeat_interleave(2), x.repeat_interleave(2, 1), x.repeat_interleave(2, dim=0),
            x.repeat_interleave([1, 2, 0], 1), x.repeat_interleave((1, 2), 0),
            x.repeat_interleave(2, -1), i.repeat_interleave(2))


def test_repeat_interleave_gives_mindspores_results(mode):
    r = in_mode(_repeat_forms, Tensor(X6), Tensor(I13))
    assert [t.asnumpy().tolist() for t in r] == [           # MindSpore 2.10's outputs
        [0., 0., 1., 1., 2., 2., 3., 3., 4., 4., 5., 5.],
        [[0., 0., 1., 1., 2., 2.], [3., 3., 4., 4., 5., 5.]],
        [[0., 1., 2.], [0., 1., 2.], [3., 4., 5.], [3., 4., 5.]],
        [[0., 1., 1.], [3., 4., 4.]], [[0., 1., 2.], [3., 4., 5.], [3., 4., 5.]],
        [[0., 0., 1., 1., 2., 2.], [3., 3., 4., 4., 5., 5.]], [1, 1, 2, 2, 3, 3]]
    assert r[6].dtype == ms.int32
    x = Tensor(X6)
    assert x.repeat_interleave(Tensor(np.array([1, 2, 0])), 1).shape == (2, 3)
    assert x.repeat_interleave(2, 1, output_size=6).shape == (2, 6)
    with pytest.raises(ValueError, match="output_size=5"):
        x.repeat_interleave(2, 1, output_size=5)
    for bad in (0, -1):                 # MindSpore refuses these too
        with pytest.raises(ValueError, match="positive"):
            x.repeat_interleave(bad, 1)
    with pytest.raises(ValueError, match="one count per element"):
        x.repeat_interleave([1, 2], 1)


def _shrinks_and_gather_nd(x, idx):
    return x.hardshrink(), x.hardshrink(1.5), x.soft_shrink(), x.soft_shrink(0.25), \
        x.gather_nd(idx)


def test_shrink_and_gather_nd_methods_are_the_ops_functions(mode):
    """Tensor.hardshrink / soft_shrink / gather_nd give ops.hardshrink / softshrink / gather_nd
    (their values and argument checks)."""
    x = Tensor(np.array([[-2.0, -0.5, 0.5], [1.0, 1.5, 3.0]], np.float32))
    idx = Tensor(np.array([[0, 0], [1, 2]], np.int32))
    got = [t.asnumpy() for t in in_mode(_shrinks_and_gather_nd, x, idx)]
    want = [ops.hardshrink(x), ops.hardshrink(x, 1.5), ops.softshrink(x),
            ops.softshrink(x, 0.25), ops.gather_nd(x, idx)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w.asnumpy())
    np.testing.assert_array_equal(got[0], [[-2.0, 0.0, 0.0], [1.0, 1.5, 3.0]])
    np.testing.assert_array_equal(got[4], [-2.0, 3.0])
    with pytest.raises(TypeError):
        x.hardshrink("0.5")
