"""dtypes and type promotion, following MindSpore 2.x.

A DType prints as MindSpore's (`str(ms.float32) == 'Float32'`, `repr` gives `mindspore.float32`)
and maps to one numpy dtype (bfloat16 comes from ml_dtypes). `promote` is the only promotion table:
tensor with tensor as PyTorch/MindSpore do it; a Python scalar never widens a tensor of the same
kind (a float scalar keeps a float tensor's dtype; an int scalar keeps an int tensor's dtype); a
float scalar with an int/bool tensor gives float32; scalars alone give int64/float32/bool.
MindSpore's wide unsigned dtypes (UInt16, UInt32, UInt64) combine only with themselves, Bool and
int scalars; any other mix is MindSpore's TypeError.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .errors import DTypeError


class DType:
    """One element type: its MindSpore name, numpy dtype, kind ('b', 'u', 'i', 'f') and rank."""

    __slots__ = ("name", "np", "kind", "rank", "itemsize")

    def __init__(self, name: str, np_dtype, kind: str, rank: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.kind = kind
        self.rank = rank
        self.itemsize = self.np.itemsize

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return "mindspore." + _ALIAS.get(self.name, self.name.lower())

    def __reduce__(self):
        return (to_dtype, (self.np.name if self.name != "BFloat16" else "bfloat16",))

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def has_grad(self) -> bool:
        """Whether a gradient flows to a tensor of this dtype: floats and integers do (an
        integer input's gradient is computed through the bprops and cast to its dtype, as in
        MindSpore); bool does not."""
        return self.kind != "b"


_ALIAS: dict = {}                   # MindSpore 2.10: repr(mindspore.bool_) is "mindspore.bool"

bool_ = DType("Bool", np.bool_, "b", 0)
uint8 = DType("UInt8", np.uint8, "u", 1)
uint16 = DType("UInt16", np.uint16, "u", 2)
uint32 = DType("UInt32", np.uint32, "u", 3)
uint64 = DType("UInt64", np.uint64, "u", 4)
int8 = DType("Int8", np.int8, "i", 1)
int16 = DType("Int16", np.int16, "i", 2)
int32 = DType("Int32", np.int32, "i", 3)
int64 = DType("Int64", np.int64, "i", 4)
float16 = DType("Float16", np.float16, "f", 5)
bfloat16 = DType("BFloat16", ml_dtypes.bfloat16, "f", 5)
float32 = DType("Float32", np.float32, "f", 6)
float64 = DType("Float64", np.float64, "f", 7)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, uint16,
       uint32, uint64)
FLOATS = (float16, bfloat16, float32, float64)
# MindSpore's wide unsigned types: promoted with nothing but themselves and bool (promote)
WIDE_UNSIGNED = (uint16, uint32, uint64)
INTS = (uint8, int8, int16, int32, int64) + WIDE_UNSIGNED
NUMERIC = INTS + FLOATS

_FROM_NP = {d.np: d for d in ALL}


def to_dtype(x) -> DType:
    """A DType from a DType, a numpy dtype/type, or a name ('float32', 'Float32', 'bool')."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        key = x.lower().rstrip("_")
        for d in ALL:
            if d.name.lower() == key or d.np.name == key:
                return d
        raise DTypeError(f"unknown dtype name {x!r}; valid: {', '.join(d.np.name for d in ALL)}")
    if x is bool:
        return bool_
    if x is int:
        return int64
    if x is float:
        return float32
    if isinstance(x, np.generic):          # np.dtype(np.True_) is bool: a value, not a dtype
        raise DTypeError(f"dtype {x!r} is a numpy value, not a dtype; pass a dtype such as "
                         f"mindspore.float32 or np.float32")
    try:
        npd = np.dtype(x)
        d = _FROM_NP.get(npd if npd.isnative else npd.newbyteorder("="))   # '>f4': Float32
    except TypeError:
        d = None
    if d is None:
        raise DTypeError(f"dtype {x!r} is not supported by minispore; supported: "
                         f"{', '.join(str(d) for d in ALL)}")
    return d


def dtype_to_nptype(type_: DType):
    """MindSpore's `dtype_to_nptype`: the numpy scalar type of a DType."""
    return to_dtype(type_).np.type


def pytype_to_dtype(obj) -> DType:
    """MindSpore's `pytype_to_dtype`: the DType of a Python or numpy type."""
    if obj is float:                        # MindSpore: a Python float is Float64 here
        return float64
    return to_dtype(obj)


def _no_implicit_conversion(a, b):
    """MindSpore 2.10's refusal to combine a wide unsigned dtype with another dtype."""
    return DTypeError(f"Type implicit conversion between {a} and {b} is not supported: "
                      f"MindSpore converts UInt16/UInt32/UInt64 implicitly only with Bool. "
                      f"Cast one operand with .astype(), e.g. x.astype(ms.{b.np.name})")


def promote(a: DType, b: DType) -> DType:
    """The result dtype of a binary op on two tensors. A wide unsigned dtype (UInt16, UInt32,
    UInt64) combines only with itself and Bool, as in MindSpore 2.10 (every other pair, UInt8
    and the other unsigned types included, is a TypeError there)."""
    if a is b:
        return a
    if a in WIDE_UNSIGNED or b in WIDE_UNSIGNED:
        if a is bool_ or b is bool_:
            return b if a is bool_ else a
        raise _no_implicit_conversion(a, b)
    if a.kind == b.kind == "f" or a.kind in "iu" and b.kind in "iu":
        if {a, b} == {float16, bfloat16}:
            return float32
        if {a.kind, b.kind} == {"i", "u"}:           # uint8 with a signed int
            s = a if a.kind == "i" else b
            return int16 if s.rank <= 2 else s
        return a if a.rank >= b.rank else b
    return a if a.rank > b.rank else b                 # bool < ints < floats


def scalar_dtype(value) -> DType:
    """The dtype of a Python scalar standing alone (Tensor(1) is Int64, Tensor(1.0) Float32)."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (float, np.floating)):
        return float32
    raise DTypeError(f"cannot make a tensor element from {type(value).__name__} {value!r}")


def promote_with_scalar(t: DType, value) -> DType:
    """The result dtype of tensor (dtype t) op Python scalar: the scalar never widens its kind.
    With a wide unsigned tensor MindSpore 2.10 refuses most scalars (`x + 1`, `x + 0.5`) but
    computes some: an int scalar keeps the dtype, as its `x * 2` and graph-mode `x < 2` do; a
    float scalar is its TypeError here (a float scalar is a Float32 operand, which the tensor
    rule refuses; MindSpore's `x / 2.0` alone computes, Float32)."""
    if isinstance(value, (bool, np.bool_)):
        return t
    if isinstance(value, (int, np.integer)):
        return int64 if t is bool_ else t
    if isinstance(value, (float, np.floating)):
        if t in WIDE_UNSIGNED:
            raise _no_implicit_conversion(t, float32)
        return t if t.kind == "f" else float32
    raise DTypeError(f"cannot combine a tensor with {type(value).__name__} {value!r}")
