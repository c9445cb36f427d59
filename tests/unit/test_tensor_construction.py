"""Tensor(input_data, dtype): values that cannot become the dtype raise instead of wrapping or
turning into garbage; numpy arrays in any byte order are accepted (converted to native order)."""
import numpy as np
import pytest

import minispore as ms
from minispore.core.errors import OutOfRangeError


@pytest.mark.parametrize("data, dtype, value", [
    ([2**70], None, "1180591620717411303424"),
    (2**70, None, "1180591620717411303424"),
    ([2**63], None, "9223372036854775808"),
    ([1, 2**64 - 1], None, "18446744073709551615"),    # numpy would make float64 of this mix
    ([2**70, 1.5], None, "1180591620717411303424"),
    ([300], ms.uint8, "300"),
    ([-1], ms.uint8, "-1"),
    ([2**40], ms.int32, "1099511627776"),
])
def test_python_ints_that_do_not_fit_raise(data, dtype, value):
    with pytest.raises(OutOfRangeError, match=f"Python int {value} does not fit"):
        ms.Tensor(data, dtype=dtype)
    with pytest.raises(OverflowError):          # what numpy raises
        ms.Tensor(data, dtype=dtype)
    with pytest.raises(TypeError):              # what MindSpore raises
        ms.Tensor(data, dtype=dtype)


def test_ints_that_fit_and_float_targets_are_kept():
    assert ms.Tensor([-2**63, 2**63 - 1]).asnumpy().tolist() == [-2**63, 2**63 - 1]
    assert ms.Tensor([255], dtype=ms.uint8).asnumpy().tolist() == [255]
    assert ms.Tensor([2**70], dtype=ms.float32).asnumpy()[0] == np.float32(2.0**70)
    assert ms.Tensor([1e19]).dtype is ms.float32


@pytest.mark.parametrize("data", [[np.inf], [np.nan], np.array([1e20]), np.array([2.0**63])])
def test_floats_without_an_integer_value_raise_when_cast_to_int(data):
    with pytest.raises(OutOfRangeError, match="cannot become int"):
        ms.Tensor(data, dtype=ms.int64 if isinstance(data, np.ndarray) else ms.int32)


def test_ragged_lists_raise_a_clear_type_error():
    with pytest.raises(TypeError, match="ragged or non-numeric"):
        ms.Tensor([[1, 2], [3]])


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i8", ">i4", ">f2"])
def test_big_endian_arrays_become_native(dtype):
    a = np.arange(4, dtype=dtype)
    t = ms.Tensor(a)
    native = a.astype(a.dtype.newbyteorder("="))
    assert t.dtype is ms.core.dtype.to_dtype(native.dtype) and t.asnumpy().dtype.isnative
    assert (t + 1).asnumpy().tolist() == (native + 1).tolist()
    assert ms.Tensor([np.arange(2, dtype=dtype)]).asnumpy().tolist() == [[0, 1]]
    assert ms.Tensor(a, dtype=ms.float64).asnumpy().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_arguments_that_cannot_apply_raise_instead_of_being_ignored():
    with pytest.raises(ValueError, match="with input_data, shape and init must be None"):
        ms.Tensor([1, 2], shape=(3,))
    with pytest.raises(ValueError, match="with input_data, shape and init must be None"):
        ms.Tensor([1, 2], init="ones")
    with pytest.raises(ValueError, match="device='GPU' is not valid"):
        ms.Tensor([1, 2], device="GPU")
    with pytest.raises(NotImplementedError, match="device='meta'"):
        ms.Tensor([1, 2], device="meta")
    with pytest.raises(TypeError, match="const_arg must be a bool"):
        ms.Tensor([1, 2], const_arg="yes")
    assert ms.Tensor([1, 2], device="CPU", const_arg=True).asnumpy().tolist() == [1, 2]
    with pytest.raises(NotImplementedError, match="storage_format"):
        ms.Parameter(ms.Tensor([1.0]), "p", storage_format="FRACTAL_NZ")
    with pytest.raises(TypeError, match="layerwise_parallel must be a bool"):
        ms.Parameter(ms.Tensor([1.0]), "p", layerwise_parallel=None)


def test_parameter_clone_applies_init():
    p = ms.Parameter(ms.Tensor(np.full(3, 5.0, np.float32)), "w")
    assert p.clone().asnumpy().tolist() == [5.0, 5.0, 5.0]
    q = p.clone(init="zeros")
    assert q.name == "w" and q.dtype is ms.float32 and q.asnumpy().tolist() == [0.0, 0.0, 0.0]


def test_big_endian_dtypes_name_the_native_dtype():
    assert ms.core.dtype.to_dtype(np.dtype(">f8")) is ms.float64
    t = ms.Tensor.from_numpy(np.arange(3, dtype=">i4"))
    assert t.dtype is ms.int32 and t.asnumpy().dtype.isnative
    assert (t * 2).asnumpy().tolist() == [0, 2, 4]
    assert ms.Tensor([1.5]).astype(np.dtype(">f8")).asnumpy().dtype.isnative


def test_from_numpy_keeps_a_0d_array_0d_and_shares_its_memory():
    a = np.array(3.5, np.float32)
    t = ms.Tensor.from_numpy(a)
    assert t.shape == () and float(t.asnumpy()) == 3.5      # MindSpore 2.10: shape ()
    b = np.arange(4, dtype=np.float32)
    tb = ms.Tensor.from_numpy(b)
    b[0] = 7
    assert tb.asnumpy()[0] == 7
