"""Integer graphs in the CPU native sink (jit_level O2): sum, mean, prod, max, min, logsumexp,
matmul and pow of integer tensors run as one NativeProgram with numpy's bits (the wrapping
integer arithmetic numpy's reductions and matmul do, numba's integer power) and PyNative's.

Each case compiles a one-op graph at O2, asserts the program that ran is a NativeProgram and no
decline warning was given, and compares against numpy (and against PyNative where its kernel is
not the native program itself).
"""
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore.core.errors import ShapeError
from minispore.core.graph import compile as graph_compile
from helpers import run_op


def _sunk(name, args, attrs):
    """The op's O2 graph result (numpy), asserting it ran as one NativeProgram."""
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2", device_target="CPU")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        out = run_op(name, args, attrs).asnumpy()
    declines = [str(w.message) for w in caught if "cannot lower" in str(w.message)]
    program = type(graph_compile.last_compiled().program).__name__
    assert program == "NativeProgram" and not declines, (program, declines)
    return out


def _eager(name, args, attrs):
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O0", device_target="CPU")
    return run_op(name, args, attrs).asnumpy()


def _reduce_attrs(axis, keep):
    return {"axis": axis, "keep_dims": keep}


def _numpy_reduction(name, x, axis, keep):
    """numpy's result as the eager kernels compute it: add/multiply reduce accumulating a
    narrower integer in 64 bits, cast to the output dtype; mean the float64 quotient."""
    odt = {"sum": x.dtype, "prod": x.dtype, "max": x.dtype, "min": x.dtype,
           "mean": np.float32}[name]
    if name in ("sum", "mean"):
        r = np.add.reduce(x, axis=axis, keepdims=keep)
        if name == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                r = r / (x.size // max(np.asarray(r).size, 1) if x.size else 0)
    elif name == "prod":
        r = np.multiply.reduce(x, axis=axis, keepdims=keep)
    else:
        r = (np.maximum if name == "max" else np.minimum).reduce(x, axis=axis, keepdims=keep)
    return np.asarray(r).astype(odt)


INT_DTYPES = (np.int8, np.uint8, np.int16, np.int32, np.int64)


@pytest.mark.parametrize("name", ("sum", "mean", "prod", "max", "min"))
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis,keep", [(None, False), (None, True), (1, False), (0, True),
                                       ((0, 2), False), (-1, True)])
def test_integer_reduction_has_numpys_bits(name, dtype, axis, keep):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    x = rng.integers(info.min, int(info.max) + 1, (3, 4, 5), dtype=np.int64).astype(dtype)
    attrs = _reduce_attrs(axis, keep)
    sunk = _sunk(name, [x], attrs)
    want = _numpy_reduction(name, x, axis, keep)
    assert sunk.dtype == want.dtype and np.array_equal(sunk, want)
    eager = _eager(name, [x], attrs)
    assert eager.dtype == want.dtype and np.array_equal(eager, want)


def test_int32_sum_of_large_values_wraps_as_numpy():
    x = np.full((4, 3), 2 ** 30, np.int32)
    x[0, 0] = -7
    got = _sunk("sum", [x], _reduce_attrs(0, False))
    assert got.dtype == np.int32
    assert np.array_equal(got, np.sum(x, axis=0).astype(np.int32))
    assert got[1] == 0                       # 4 * 2**30 wraps to 0 in int32
    assert _sunk("sum", [x], _reduce_attrs(None, False)) == np.int32(np.sum(x).astype(np.int32))


def test_int32_prod_wraps_and_mean_divides_the_int64_sum():
    x = np.array([[65536, 65536, 3], [-1, 2 ** 31 - 1, 2 ** 31 - 1]], np.int32)
    prod = _sunk("prod", [x], _reduce_attrs(1, False))
    assert np.array_equal(prod, np.prod(x, axis=1).astype(np.int32))
    assert prod[0] == 0                      # 2**32 * 3 wraps to 0
    mean = _sunk("mean", [x], _reduce_attrs(1, False))
    assert mean.dtype == np.float32
    assert np.array_equal(mean, (np.sum(x, axis=1, dtype=np.int64) / 3).astype(np.float32))


@pytest.mark.parametrize("name,want", [("sum", 0), ("prod", 1)])
def test_empty_integer_sum_and_prod_are_their_identity(name, want):
    x = np.zeros((3, 0), np.int32)
    got = _sunk(name, [x], _reduce_attrs(1, False))
    assert got.dtype == np.int32 and got.shape == (3,) and np.all(got == want)


def test_empty_integer_mean_is_nan():
    got = _sunk("mean", [np.zeros((2, 0), np.int32)], _reduce_attrs(1, True))
    assert got.dtype == np.float32 and got.shape == (2, 1) and np.all(np.isnan(got))


@pytest.mark.parametrize("mode", (ms.PYNATIVE_MODE, ms.GRAPH_MODE))
def test_max_of_an_empty_integer_axis_raises(mode):
    ms.set_context(mode=mode, jit_level="O2", device_target="CPU")
    with pytest.raises(ShapeError, match="zero-size axis"):
        run_op("max", [np.zeros((2, 0), np.int32)], _reduce_attrs(1, False))


def test_unsigned_max_and_min_compare_unsigned():
    x = np.array([[0, 255, 128], [127, 129, 1]], np.uint8)
    assert np.array_equal(_sunk("max", [x], _reduce_attrs(1, False)), [255, 129])
    assert np.array_equal(_sunk("min", [x], _reduce_attrs(1, False)), [0, 1])


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", (None, 1, (0, 1)))
def test_integer_logsumexp_reads_the_input_as_float64(dtype, axis):
    rng = np.random.default_rng(3)
    x = rng.integers(0 if dtype is np.uint8 else -100, 100, (3, 4)).astype(dtype)
    attrs = _reduce_attrs(axis, False)
    sunk = _sunk("logsumexp", [x], attrs)
    eager = _eager("logsumexp", [x], attrs)
    assert sunk.dtype == np.float32 and sunk.dtype == eager.dtype
    assert np.array_equal(sunk, eager)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,k,n", [(3, 4, 5), (1, 4, 1), (1, 3, 4), (4, 3, 1), (2, 0, 3)])
def test_int32_matmul_wraps_as_numpy(ta, tb, m, k, n):
    rng = np.random.default_rng(11)
    a = rng.integers(-2 ** 31, 2 ** 31, (k, m) if ta else (m, k)).astype(np.int32)
    b = rng.integers(-2 ** 31, 2 ** 31, (n, k) if tb else (k, n)).astype(np.int32)
    attrs = {"transpose_a": ta, "transpose_b": tb}
    got = _sunk("matmul", [a, b], attrs)
    want = np.matmul(a.T if ta else a, b.T if tb else b)
    assert got.dtype == np.int32 and np.array_equal(got, want)
    assert np.array_equal(_eager("matmul", [a, b], attrs), want)


@pytest.mark.parametrize("dtype", (np.int8, np.uint8, np.int64), ids=lambda d: np.dtype(d).name)
def test_narrow_and_wide_integer_matmul_wrap_as_numpy(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    a = rng.integers(info.min, int(info.max) + 1, (2, 3, 4), dtype=np.int64).astype(dtype)
    b = rng.integers(info.min, int(info.max) + 1, (4, 5), dtype=np.int64).astype(dtype)
    attrs = {"transpose_a": False, "transpose_b": False}
    got = _sunk("matmul", [a, b], attrs)
    assert got.dtype == dtype and np.array_equal(got, np.matmul(a, b))


# numba's integer power: 0 ** negative = INT64_MIN (0 in int32), a base other than +-1 to a
# negative power = 0, exponents above 0x10000 through math.pow (+-inf -> INT64_MIN), wrapping
_POW_X = [2, -3, 0, 1, -1, 0, 7, 2, 3, 5, -2, 2, 0, 1, -1, -1, 0, 3, -7, 1, -1, 2]
_POW_Y = [3, 3, -1, -5, -3, 0, 40, 31, 70000, -2, 65537, 65536, 70000, -70000, 70001, -70001,
          -70000, 65535, 12345, -2 ** 31, -2 ** 31, -2 ** 31]


@pytest.mark.parametrize("dtype", (np.int8, np.int16, np.int32), ids=lambda d: np.dtype(d).name)
def test_integer_pow_is_numbas_power(dtype):
    x = np.array(_POW_X, np.int64).astype(dtype)
    y = np.array(_POW_Y, np.int64).astype(dtype)
    sunk = _sunk("pow", [x, y], {})
    eager = _eager("pow", [x, y], {})
    assert sunk.dtype == dtype and np.array_equal(sunk, eager)
    if dtype is np.int32:
        assert list(sunk[:6]) == [8, -27, 0, 1, -1, 1]
        assert np.array_equal(sunk[6:8], (np.array([7, 2], np.int64) ** [40, 31]).astype(np.int32))


@pytest.mark.parametrize("dtype", (np.int64, np.uint8), ids=lambda d: np.dtype(d).name)
def test_int64_and_unsigned_pow_run_kernel_by_kernel(dtype):
    """numba raises OverflowError for an int64 exponent of INT64_MIN and computes unsigned
    powers in uint64 (its float fallback converting with fptoui): the sink declines both, and
    the graph runs the eager kernel."""
    x = np.array([2, 3, 0, 1], dtype)
    y = np.array([3, 2, 5, 7], dtype)
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2", device_target="CPU")
    with pytest.warns(RuntimeWarning, match="integer 'pow'"):
        got = run_op("pow", [x, y], {}).asnumpy()
    assert type(graph_compile.last_compiled().program).__name__ == "Program"
    assert np.array_equal(got, _eager("pow", [x, y], {}))


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
@pytest.mark.parametrize("np_dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
def test_integer_argmax_and_argmin_are_native_with_the_first_index_of_the_extreme(kind,
                                                                                  np_dtype):
    info = np.iinfo(np_dtype)
    x = np.array([[3, info.max, info.max, 0], [info.min, 5, info.min, 5]], np_dtype)
    for axis in (None, 0, 1, -1):
        attrs = {"axis": axis, "keep_dims": False}

        def op(t):
            return run_op(kind, (t,), attrs)
        ms.set_context(mode=ms.PYNATIVE_MODE)
        eager = op(ms.Tensor(x)).asnumpy()
        ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            sunk = op(ms.Tensor(x)).asnumpy()
        assert type(graph_compile.last_compiled().program).__name__ == "NativeProgram"
        want = (np.argmax if kind == "argmax" else np.argmin)(x, axis=axis)
        np.testing.assert_array_equal(eager, want)
        np.testing.assert_array_equal(sunk, eager)
