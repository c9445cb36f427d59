"""minispore.common.dtype: MindSpore's `mindspore.common.dtype` (imported as `mstype`): the
dtypes minispore implements, MindSpore's aliases of them, and the conversion helpers."""
from ..core.dtype import (ALL, DType, bfloat16, bool_, dtype_to_nptype, float16, float32,
                          float64, int8, int16, int32, int64, pytype_to_dtype, to_dtype, uint8,
                          uint16, uint32, uint64)

__all__ = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
           "float16", "bfloat16", "float32", "float64", "half", "single", "double", "short",
           "intc", "long", "intp", "byte", "ubyte", "ushort", "uintc", "uintp", "bool", "int",
           "float", "int_type", "uint_type", "dtype_to_nptype", "pytype_to_dtype",
           "dtype_to_pytype", "type_size_in_bytes"]

_PYTYPES = {"b": bool, "u": int, "i": int, "f": float}


def dtype_to_pytype(type_):
    """MindSpore's `dtype_to_pytype`: the Python type a scalar of this dtype converts to."""
    return _PYTYPES[to_dtype(type_).kind]


def type_size_in_bytes(dtype):
    """MindSpore's `type_size_in_bytes`: the size of one element."""
    return to_dtype(dtype).itemsize


# MindSpore's aliases (the same objects as the dtypes they name); `bool`, `int` and `float`
# shadow the builtins, so they come last
half, single, double = float16, float32, float64
byte, short, intc, long, intp, ubyte = int8, int16, int32, int64, int64, uint8
ushort, uintc, uintp = uint16, uint32, uint64
# MindSpore's groups of the integer dtypes (both complete here)
int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)
bool, int, float = bool_, int32, float32  # noqa: A001

# MindSpore dtype names and type groups minispore does not implement: reading one raises an
# AttributeError that says so (a partial group such as number_type would differ silently)
_ABSENT = ("uint", "int_", "float_", "complex64", "complex128", "cfloat", "cdouble",
           "float8_e4m3fn", "float8_e5m2", "hifloat8", "qint4x2", "string", "number",
           "number_type", "float_type", "complex_type", "signed_type", "all_types",
           "tensor_type", "list_", "tuple_", "type_none", "get_py_obj_dtype")


_SUPPORTED = ALL


def __getattr__(name):
    if name in _ABSENT:
        raise AttributeError(
            f"mindspore.common.dtype.{name} is not implemented by minispore; its dtypes are "
            f"{', '.join(map(repr, _SUPPORTED))}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
