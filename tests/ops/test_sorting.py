"""sort, argsort, topk and cumsum (ops, Primitive classes, Tensor methods) against MindSpore 2.10:
every expected value below was printed by MindSpore 2.10 on its CPU backend for the same input
(~/.venvs/mindspore, PyNative and a GRAPH_MODE Cell), unless a comment says otherwise. Every cell
runs in PyNative and compiled (helpers.in_mode), at O0 and at O2 (the native program)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import ops
from minispore.core.errors import ShapeError

from helpers import graph_runs, in_mode

MODES3 = ["pynative", "graph", "graph-O2"]
f32 = np.float32
X23 = np.array([[3, 1, 2], [0, 5, 4]], f32)
X33 = np.array([[1, 5, 2], [4, 0, 6], [3, 3, 1]], f32)
NAN_X = np.array([[3., 1., 1., 2.], [0., -1., 5., 5.]], f32)
TIES_I = np.array([3, 1, 2, 1, 3, 0], np.int32)


def _np(t):
    return [a.asnumpy().tolist() for a in t] if isinstance(t, tuple) else t.asnumpy().tolist()


# ---------------------------------------------------------------- sort / argsort ----------------
def _sort_cases(x):
    return (ops.sort(x), ops.sort(x, descending=True))


def _sort_axis0_desc(x):
    return ops.Sort(axis=0, descending=True)(x), ops.argsort(x, 0), ops.argsort(x, 0, True)


@pytest.mark.parametrize("mode", MODES3)
def test_sort_is_stable_both_ways(backend, mode):
    (v, i), (vd, idd) = in_mode(_sort_cases, ms.Tensor(TIES_I))
    assert v.dtype is ms.int32 and i.dtype is ms.int32
    assert _np(v) == [0, 1, 1, 2, 3, 3] and _np(i) == [5, 1, 3, 2, 0, 4]
    assert _np(vd) == [3, 3, 2, 1, 1, 0] and _np(idd) == [0, 4, 2, 1, 3, 5]


@pytest.mark.parametrize("mode", MODES3)
def test_sort_along_axis_0_and_argsort(backend, mode):
    (v, i), a, ad = in_mode(_sort_axis0_desc, ms.Tensor(X33))
    assert _np(v) == [[4, 5, 6], [3, 3, 2], [1, 0, 1]]
    assert _np(i) == [[1, 0, 1], [2, 2, 0], [0, 1, 2]]
    assert a.dtype is ms.int32
    assert _np(a) == [[0, 1, 2], [2, 2, 0], [1, 0, 1]]      # MindSpore: argsort(x, 0)
    assert _np(ad) == [[1, 0, 1], [2, 2, 0], [0, 1, 2]]


@pytest.mark.parametrize("mode", MODES3)
def test_sort_small_dtypes(backend, mode):
    vd, idd = in_mode(_sort_desc, ms.Tensor(np.array([3, 200, 7, 200, 0], np.uint8)))
    assert vd.dtype is ms.uint8 and _np(vd) == [200, 200, 7, 3, 0] and _np(idd) == [1, 3, 2, 0, 4]
    h = ms.Tensor(np.array([[0.5, -1, 0.5], [2, 2, -3]], np.float16))
    v, i = in_mode(lambda_sort0, h)
    assert v.dtype is ms.float16
    assert _np(v) == [[0.5, -1.0, -3.0], [2.0, 2.0, 0.5]] and _np(i) == [[0, 0, 1], [1, 1, 0]]


def lambda_sort0(x):
    return ops.sort(x, axis=0)


def _sort_desc(x):
    return ops.sort(x, descending=True)


def _argsort_desc(x):
    return ops.argsort(x, descending=True)


@pytest.mark.parametrize("mode", MODES3)
def test_argsort_descending_keeps_ties_in_order(backend, mode):
    got = in_mode(_argsort_desc, ms.Tensor(np.array([1, 2, 1, 2, 0], f32)))
    assert got.dtype is ms.int32 and _np(got) == [1, 3, 0, 2, 4]


@pytest.mark.parametrize("mode", MODES3)
def test_sort_puts_nan_last_ascending_and_first_descending(backend, mode):
    # minispore's rule (numpy's order): MindSpore 2.10's CPU Sort does not order a line holding
    # NaN at all (it printed [1, 3, nan, 1, 2] for [3, 1, nan, 1, 2]); topk, which runs
    # MindSpore's own selection steps, gives its NaN results (test_topk_with_nan_as_mindspore)
    x = NAN_X.copy()
    x[0, 1] = np.nan
    (v, i), (vd, idd) = in_mode(_sort_cases, ms.Tensor(x))
    assert np.array_equal(v.asnumpy(), np.array([[1, 2, 3, np.nan], [-1, 0, 5, 5]], f32),
                          equal_nan=True)
    assert _np(i) == [[2, 3, 0, 1], [1, 0, 2, 3]]
    assert np.array_equal(vd.asnumpy(), np.array([[np.nan, 3, 2, 1], [5, 5, 0, -1]], f32),
                          equal_nan=True)
    assert _np(idd) == [[1, 0, 3, 2], [2, 3, 0, 1]]


# ---------------------------------------------------------------- topk --------------------------
def _topks(x):
    return ops.topk(x, 2), ops.topk(x, 2, largest=False)


@pytest.mark.parametrize("mode", MODES3)
def test_topk_values_and_int32_indices(backend, mode):
    x = np.array([[3., 1., 0.5, 1., 2.], [0., -1., 5., 5., -np.inf]], f32)
    (v, i), (vs, is_) = in_mode(_topks, ms.Tensor(x))
    assert v.dtype is ms.float32 and i.dtype is ms.int32
    assert _np(v) == [[3, 2], [5, 5]] and _np(i) == [[0, 4], [2, 3]]
    assert _np(vs) == [[0.5, 1], [-np.inf, -1]] and _np(is_) == [[2, 1], [4, 1]]


@pytest.mark.parametrize("mode", MODES3)
def test_topk_with_nan_as_mindspore(backend, mode):
    # MindSpore's selection compares with `>`, which a NaN fails both ways: its CPU TopK printed
    # [nan, 2] (indices [2, 4]) for [3, 1, nan, 1, 2], k=2, and minispore runs the same steps
    x = np.array([[3., 1., np.nan, 1., 2.], [0., -1., 5., 5., -np.inf]], f32)
    (v, i), (vs, is_) = in_mode(_topks, ms.Tensor(x))
    assert np.array_equal(v.asnumpy(), np.array([[np.nan, 2], [5, 5]], f32), equal_nan=True)
    assert _np(i) == [[2, 4], [2, 3]]
    assert _np(vs) == [[1, 1], [-np.inf, -1]] and _np(is_) == [[1, 3], [4, 1]]


def _topk_prims(x):
    return ops.topk(x, 3), ops.TopK()(x, 3), ops.TopK(sorted=False)(x, 3)


@pytest.mark.parametrize("mode", MODES3)
def test_topk_ties_take_the_lower_index_and_the_primitive(backend, mode):
    for v, i in in_mode(_topk_prims, ms.Tensor(TIES_I)):
        assert v.dtype is ms.int32 and i.dtype is ms.int32
        assert _np(v) == [3, 3, 2] and _np(i) == [0, 4, 2]


def _topk_dim0(x):
    return ops.topk(x, 2, dim=0, largest=False)


@pytest.mark.parametrize("mode", MODES3)
def test_topk_along_dim_0(backend, mode):
    v, i = in_mode(_topk_dim0, ms.Tensor(X33))
    assert _np(v) == [[1, 0, 1], [3, 3, 2]] and _np(i) == [[0, 1, 2], [2, 2, 0]]


# ---------------------------------------------------------------- cumsum ------------------------
def _cumsums(x):
    return (ops.cumsum(x, 0), ops.CumSum()(x, 0), ops.CumSum(exclusive=True)(x, 0),
            ops.CumSum(reverse=True)(x, 0), ops.CumSum(True, True)(x, 0))


@pytest.mark.parametrize("mode", MODES3)
def test_cumsum_and_the_primitive_forms(backend, mode):
    got = in_mode(_cumsums, ms.Tensor(TIES_I))
    assert all(g.dtype is ms.int32 for g in got)
    assert [_np(g) for g in got] == [[3, 4, 6, 7, 10, 10], [3, 4, 6, 7, 10, 10],
                                     [0, 3, 4, 6, 7, 10], [10, 7, 6, 4, 3, 0],
                                     [7, 6, 4, 3, 0, 0]]
    e = in_mode(_cumsums, ms.Tensor(X33))[4]
    assert _np(e) == [[7, 3, 7], [3, 3, 1], [0, 0, 0]]


def _cumsum_both_ways(x):
    return ops.cumsum(x, 0), ops.CumSum(reverse=True)(x, 0)


@pytest.mark.parametrize("mode", MODES3)
def test_cumsum_adds_left_to_right_in_the_dtype(backend, mode):
    # float32: 2^24 + 1 rounds back to 2^24 at every step (a float64 running sum would give
    # 16777218 and 16777220); from the right, 1 + 1 + 1 + 1 reaches 4 first
    got = in_mode(_cumsum_both_ways, ms.Tensor(np.array([16777216, 1, 1, 1, 1], f32)))
    assert _np(got[0]) == [16777216.0] * 5
    assert _np(got[1]) == [16777220.0, 4.0, 3.0, 2.0, 1.0]
    h = in_mode(_cumsum_both_ways, ms.Tensor(np.array([2048, 1, 1, 1, 3], np.float16)))[0]
    assert h.dtype is ms.float16 and _np(h) == [2048.0, 2048.0, 2048.0, 2048.0, 2052.0]
    u = in_mode(_cumsum_both_ways, ms.Tensor(np.array([3, 200, 7, 200, 0], np.uint8)))[0]
    assert u.dtype is ms.uint8 and _np(u) == [3, 203, 210, 154, 154]        # wraps
    big = in_mode(_cumsum_both_ways, ms.Tensor(np.array([2 ** 62, 2 ** 62, 1], np.int64)))[0]
    assert _np(big) == [4611686018427387904, -9223372036854775808, -9223372036854775807]


def _cumsum_dtype(x):
    return ops.cumsum(x, 0, dtype=ms.float32)


@pytest.mark.parametrize("mode", MODES3)
def test_cumsum_dtype_casts_first(backend, mode):
    got = in_mode(_cumsum_dtype, ms.Tensor(TIES_I))
    assert got.dtype is ms.float32 and _np(got) == [3, 4, 6, 7, 10, 10]


# ---------------------------------------------------------------- Tensor methods ----------------
def _methods(x):
    return (x.sort(), x.sort(0, True), x.argsort(), x.argsort(0, True), x.topk(2),
            x.topk(1, 0, False), x.cumsum(), x.cumsum(0), x.cumsum(1, dtype=ms.int32),
            x.sort(dim=0), x.argsort(dim=0, stable=True), x.cumsum(dim=0))


@pytest.mark.parametrize("mode", MODES3)
def test_tensor_methods_and_their_overloads(backend, mode):
    got = [_np(g) for g in in_mode(_methods, ms.Tensor(X23))]
    assert got == [
        [[[1, 2, 3], [0, 4, 5]], [[1, 2, 0], [0, 2, 1]]],
        [[[3, 5, 4], [0, 1, 2]], [[0, 1, 1], [1, 0, 0]]],
        [[1, 2, 0], [0, 2, 1]],
        [[0, 1, 1], [1, 0, 0]],
        [[[3, 2], [5, 4]], [[0, 2], [1, 2]]],
        [[[0, 1, 2]], [[1, 0, 0]]],
        [3, 4, 6, 6, 11, 15],                      # no axis: the flattened tensor
        [[3, 1, 2], [3, 6, 6]],
        [[3, 4, 6], [0, 5, 9]],
        [[[0, 1, 2], [3, 5, 4]], [[1, 0, 0], [0, 1, 1]]],
        [[1, 0, 0], [0, 1, 1]],
        [[3, 1, 2], [3, 6, 6]],
    ]


# ---------------------------------------------------------------- gradients ---------------------
W3, W2 = np.array([1, 2, 3], f32), np.array([1, 2], f32)


def _sort_loss(x):
    return (ops.sort(x)[0] * ms.Tensor(W3)).sum()


def _topk_loss(x):
    return (ops.topk(x, 2)[0] * ms.Tensor(W2)).sum()


def _cumsum_loss(x):
    return (ops.cumsum(x, 1) * ms.Tensor(W3)).sum()


def _cumsum_er_loss(x):
    return (ops.CumSum(True, True)(x, 1) * ms.Tensor(W3)).sum()


@pytest.mark.parametrize("mode", MODES3)
@pytest.mark.parametrize("loss,want", [
    (_sort_loss, [[3, 1, 2], [1, 3, 2]]),
    (_topk_loss, [[1, 0, 2], [0, 1, 2]]),
    (_cumsum_loss, [[6, 5, 3], [6, 5, 3]]),
    (_cumsum_er_loss, [[0, 1, 3], [0, 1, 3]]),
], ids=["sort", "topk", "cumsum", "cumsum-exclusive-reverse"])
def test_gradients_match_mindspore(backend, mode, loss, want):
    with graph_runs("ms.grad"):
        g = ms.grad(loss)(ms.Tensor(X23))
    assert _np(g) == want


# ---------------------------------------------------------------- long lines at O2 --------------
def _sort_both(x):
    return ops.sort(x, -1), ops.sort(x, -1, True), ops.cumsum(x, 1)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000, 1025])
def test_native_merge_sort_gives_numpys_stable_order(n):
    """The O2 program (the native merge sort) against PyNative (numpy's stable sort), ties,
    NaN and -0.0 included, for line lengths around the merge passes' run widths."""
    rng = np.random.default_rng(n)
    x = (rng.integers(-20, 20, (3, n)) * 0.25).astype(f32)
    x[rng.random(x.shape) < 0.05] = np.nan
    x[rng.random(x.shape) < 0.05] = -0.0
    eager = _sort_both(ms.Tensor(x))
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    sunk = ms.jit(_sort_both)(ms.Tensor(x))
    for (ev, ei), (sv, si) in zip(eager[:2], sunk[:2]):
        assert ev.asnumpy().tobytes() == sv.asnumpy().tobytes()
        assert np.array_equal(ei.asnumpy(), si.asnumpy())
    assert eager[2].asnumpy().tobytes() == sunk[2].asnumpy().tobytes()


# ---------------------------------------------------------------- errors ------------------------
@pytest.mark.parametrize("call,exc", [
    (lambda: ops.sort(ms.Tensor(np.array([True, False]))), TypeError),
    (lambda: ops.sort(ms.Tensor(f32(3.0))), ValueError),
    (lambda: ops.sort(ms.Tensor(np.array([1, 2], f32)), axis=1), ValueError),
    (lambda: ops.topk(ms.Tensor(np.array([1, 2, 3], f32)), 4), ValueError),
    (lambda: ops.topk(ms.Tensor(np.array([1, 2, 3], f32)), 0), ValueError),
    (lambda: ops.topk(ms.Tensor(f32(3.0)), 1), RuntimeError),
    (lambda: ops.cumsum(ms.Tensor(f32(3.0)), 0), ValueError),
    (lambda: ops.cumsum(ms.Tensor(np.array([True, False])), 0), TypeError),
    (lambda: ops.cumsum(ms.Tensor(np.array([1, 2], f32)), 1), ValueError),
    (lambda: ops.Sort(descending=1), TypeError),
], ids=["sort-bool", "sort-0d", "sort-axis", "topk-k-big", "topk-k-0", "topk-0d",
        "cumsum-0d", "cumsum-bool", "cumsum-axis", "Sort-descending-int"])
def test_errors_as_mindspore(call, exc):
    # the exception types MindSpore 2.10 raised for each call (Sort(descending=1) excepted:
    # minispore rejects a non-bool flag rather than reading its truth)
    with pytest.raises(exc):
        call()


def test_shape_errors_are_valueerrors_and_runtimeerrors():
    assert issubclass(ShapeError, ValueError) and issubclass(ShapeError, RuntimeError)


# ---------------------------------------------------------------- cumprod, msort ----------------
def _cumprods(x):
    return (ops.cumprod(x, 0), ops.CumProd()(x, 0))


@pytest.mark.parametrize("mode", MODES3)
@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int64, np.float16,
                                   np.float32, np.float64])
def test_cumprod_dtypes(backend, mode, dtype):
    if backend == "Ascend" and dtype is np.float64:
        pytest.skip("the simulated Ascend has no float64")
    f, p = in_mode(_cumprods, ms.Tensor(np.array([3, 2, 0, 4], dtype)))
    # ops.cumprod gives int64 for integer input (MindSpore 2.10); ops.CumProd keeps the dtype
    own = ms.Tensor(np.zeros(1, dtype)).dtype
    assert p.dtype is own
    assert f.dtype is (ms.int64 if np.dtype(dtype).kind in "iu" else own)
    assert _np(f) == [3, 6, 0, 0] and _np(p) == [3, 6, 0, 0]


def _cumprod_forms(x):
    return (ops.cumprod(x, 0), ops.CumProd()(x, 0), ops.cumprod(x, 0, dtype=ms.int32))


@pytest.mark.parametrize("mode", MODES3)
def test_cumprod_overflow_and_bool(backend, mode):
    f, p, d = in_mode(_cumprod_forms, ms.Tensor(np.array([100, 100, 100, 100, 100], np.int32)))
    assert f.dtype is ms.int64 and _np(f) == [100, 10000, 1000000, 100000000, 10000000000]
    assert p.dtype is ms.int32 and _np(p) == [100, 10000, 1000000, 100000000, 1410065408]
    assert d.dtype is ms.int32
    b = in_mode(_cumprod_bool, ms.Tensor(np.array([True, False, True])))
    assert b.dtype is ms.int64 and _np(b) == [1, 0, 0]


def _cumprod_bool(x):
    return ops.cumprod(x, 0)


def _cumprod_all(x):
    return tuple(ops.CumProd(e, r)(x, 1) for e in (False, True) for r in (False, True))


@pytest.mark.parametrize("mode", MODES3)
def test_cumprod_exclusive_reverse(backend, mode):
    got = [_np(g) for g in in_mode(_cumprod_all, ms.Tensor(X23))]
    assert got == [[[3, 3, 6], [0, 0, 0]], [[6, 2, 2], [0, 20, 4]],
                   [[1, 3, 3], [1, 0, 0]], [[2, 2, 1], [20, 4, 1]]]


def _cp_loss_ff(x):
    return (ops.cumprod(x, 1) * ms.Tensor(W3)).sum()


def _cp_loss_ft(x):
    return (ops.CumProd(False, True)(x, 1) * ms.Tensor(W3)).sum()


def _cp_loss_tf(x):
    return (ops.CumProd(True, False)(x, 1) * ms.Tensor(W3)).sum()


def _cp_loss_tt(x):
    return (ops.CumProd(True, True)(x, 1) * ms.Tensor(W3)).sum()


@pytest.mark.parametrize("mode", MODES3)
@pytest.mark.parametrize("loss,want", [
    (_cp_loss_ff, [[9, 24, 9], [np.nan, 0, 0]]),
    (_cp_loss_ft, [[2, 10, 8], [np.nan, 8, 13]]),
    (_cp_loss_tf, [[5, 9, 0], [np.nan, 0, 0]]),
    (_cp_loss_tt, [[0, 2, 3], [np.nan, 4, 7]]),
], ids=["inclusive", "reverse", "exclusive", "exclusive-reverse"])
def test_cumprod_gradient_divides_by_x_as_mindspore(backend, mode, loss, want):
    # a zero in x gives NaN there, as MindSpore's CumProd gradient does
    with graph_runs("ms.grad"):
        g = ms.grad(loss)(ms.Tensor(X23))
    assert np.array_equal(g.asnumpy(), np.array(want, f32), equal_nan=True)


def _cp_loss4(x):
    return (ops.cumprod(x, 1) * ms.Tensor(np.array([1, 2, 3, 4], f32))).sum()


@pytest.mark.parametrize("mode", MODES3)
def test_cumprod_gradient_with_two_zeros(backend, mode):
    g = ms.grad(_cp_loss4)(ms.Tensor(np.array([[2, 0, 0, 3]], f32)))
    assert np.array_equal(g.asnumpy(), np.array([[1, np.nan, np.nan, 0]], f32), equal_nan=True)


def _msorts(x):
    return ops.msort(x), x.msort(), x.cumprod(0), x.cumprod(dim=1), x.cumprod(0, ms.int32), \
        x.cumprod(0, dtype=ms.int64)


@pytest.mark.parametrize("mode", MODES3)
def test_msort_and_tensor_cumprod(backend, mode):
    got = in_mode(_msorts, ms.Tensor(X23))
    assert [_np(g) for g in got[:4]] == [[[0, 1, 2], [3, 5, 4]], [[0, 1, 2], [3, 5, 4]],
                                          [[3, 1, 2], [0, 5, 8]], [[3, 3, 6], [0, 0, 0]]]
    assert got[4].dtype is ms.int32 and got[5].dtype is ms.int64
    m = in_mode(_msort_only, ms.Tensor(np.array([[3, 1], [0, 5], [2, 2]], f32)))
    assert _np(m) == [[0, 1], [2, 2], [3, 5]]
    assert ms.Tensor(np.array([[3, 1]], np.int32)).cumprod(0).dtype is ms.int64


def _msort_only(x):
    return ops.msort(x)


def test_cumprod_of_a_0d_tensor_is_an_error():
    with pytest.raises(ValueError):
        ops.cumprod(ms.Tensor(f32(2.0)), 0)


# ---------------------------------------------------------------- topk's tie order --------------
TIES = np.array([[1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [0, 2, 2, 1, 2, 0, 2, 2, 1, 2]], f32)
R40 = np.random.default_rng(3).integers(0, 4, (2, 40)).astype(np.int32)


def _topk_ties(x):
    return (ops.topk(x, 3), ops.topk(x, 3, largest=False), ops.topk(x, 4, sorted=False),
            ops.TopK(sorted=False)(x, 4))


@pytest.mark.parametrize("mode", MODES3)
def test_topk_orders_ties_as_mindspores_selection(backend, mode):
    # MindSpore's CPU TopK selects with std::nth_element, then stable-sorts the k selected: a
    # tie does not come by index (expected values printed by MindSpore 2.10)
    got = [_np(g) for g in in_mode(_topk_ties, ms.Tensor(TIES))]
    assert got == [
        [[[1, 1, 1], [2, 2, 2]], [[8, 6, 7], [7, 6, 1]]],
        [[[1, 1, 1], [0, 0, 1]], [[8, 6, 7], [0, 5, 3]]],
        [[[1, 1, 1, 1], [2, 2, 2, 2]], [[8, 6, 7, 5], [1, 9, 7, 6]]],
        [[[1, 1, 1, 1], [2, 2, 2, 2]], [[8, 6, 7, 5], [1, 9, 7, 6]]],
    ]


def _topk6(x):
    return ops.topk(x, 6)


def _topk_dim0_2(x):
    return ops.topk(x, 2, dim=0)


@pytest.mark.parametrize("mode", MODES3)
def test_topk_ties_on_longer_rows_and_other_dims(backend, mode):
    assert _np(in_mode(_topk6, ms.Tensor(R40))[1]) == [[5, 32, 31, 6, 38, 30],
                                                        [0, 28, 27, 15, 9, 3]]
    v, i = in_mode(_topk_dim0_2, ms.Tensor(TIES.T.copy()))
    assert _np(v) == [[1, 2], [1, 2]] and _np(i) == [[8, 7], [6, 6]]


def _topk_small_u8(x):
    return ops.topk(x, 2, largest=False)


@pytest.mark.parametrize("mode", MODES3)
def test_topk_smallest_is_the_largest_of_the_negation(backend, mode):
    # as MindSpore's ops.topk: -x wraps for uint8, so 0 is never among the smallest
    v, i = in_mode(_topk_small_u8, ms.Tensor(np.array([3, 0, 7, 0, 72, 5], np.uint8)))
    assert v.dtype is ms.uint8 and _np(v) == [3, 5] and _np(i) == [0, 5]


def _topk_tie_loss(x):
    return (ops.topk(x, 3)[0] * ms.Tensor(W3)).sum()


@pytest.mark.parametrize("mode", MODES3)
def test_topk_gradient_follows_the_selected_ties(backend, mode):
    g = ms.grad(_topk_tie_loss)(ms.Tensor(TIES))
    assert _np(g) == [[0, 0, 0, 0, 0, 0, 2, 3, 1, 0], [0, 3, 0, 0, 0, 0, 2, 1, 0, 0]]
