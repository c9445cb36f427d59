"""MindSpore 2.10's wide unsigned dtypes (UInt16, UInt32, UInt64): names, conversions and
printing, MindSpore's refusal to promote them with other dtypes, their arithmetic (wrap-around,
unsigned order and division) in PyNative and in graphs (O1 kernel by kernel, O2 the native sink),
the native sink's and the CUDA generator's unsigned element types. Every hard-coded value comes
from running MindSpore 2.10 on the CPU."""
from __future__ import annotations

import os
import pickle
import shutil
import sys
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import ops
from minispore.common import dtype as mstype
from minispore.core import dtype as dt
from minispore.core.errors import OutOfRangeError
from minispore.core.primitive import REGISTRY

from helpers import in_mode

WIDE = (ms.uint16, ms.uint32, ms.uint64)
MODES = ("pynative", "graph-O1", "graph-O2")


# ----------------------------------------------------------------------- names, conversions
def test_names_reprs_and_aliases_as_mindspore():
    for d, name, np_type, size in ((ms.uint16, "UInt16", np.uint16, 2),
                                   (ms.uint32, "UInt32", np.uint32, 4),
                                   (ms.uint64, "UInt64", np.uint64, 8)):
        assert str(d) == name and repr(d) == "mindspore." + name.lower()
        assert getattr(ms.dtype, name.lower()) is d and getattr(mstype, name.lower()) is d
        assert ms.dtype_to_nptype(d) is np_type and mstype.type_size_in_bytes(d) == size
        assert ms.pytype_to_dtype(np_type) is d and mstype.dtype_to_pytype(d) is int
        assert dt.to_dtype(name.lower()) is d and dt.to_dtype(name) is d
        assert dt.to_dtype(np_type) is d and dt.to_dtype(np.dtype(np_type).newbyteorder(">")) is d
        assert pickle.loads(pickle.dumps(d)) is d
    # MindSpore 2.10's aliases and the unsigned group
    assert (mstype.ushort, mstype.uintc, mstype.uintp) == (ms.uint16, ms.uint32, ms.uint64)
    assert mstype.uint_type == (ms.uint8, ms.uint16, ms.uint32, ms.uint64)
    assert mstype.int_type == (ms.int8, ms.int16, ms.int32, ms.int64)
    with pytest.raises(AttributeError, match="dtype.uint is not implemented"):
        mstype.uint                          # MindSpore's generic `uint` type: not a dtype


def test_tensors_from_numpy_and_casts_as_mindspore():
    t = ms.Tensor(np.array([3, 4], np.uint32))
    assert t.dtype is ms.uint32 and t.asnumpy().dtype == np.uint32
    assert t.tolist() == [3, 4] and type(t[0].item()) is int
    assert (t.shape, t.itemsize, t.nbytes) == ((2,), 4, 8)
    assert ms.Tensor([1, 2], ms.uint32).asnumpy().dtype == np.uint32
    assert ms.Tensor(7, ms.uint16).asnumpy().dtype == np.uint16
    assert ms.Tensor(np.array([1, 2]), dtype=ms.uint64).asnumpy().dtype == np.uint64
    u16 = ms.Tensor(np.array([1, 2], np.uint16))
    assert u16.astype("uint32").dtype is ms.uint32 and u16.astype(np.uint64).dtype is ms.uint64
    big = ms.Tensor(np.array([18446744073709551615], np.uint64))
    assert big.item() == 18446744073709551615
    # values from MindSpore 2.10: ops.cast(Tensor([1.7, 3e9]), ms.uint32) -> [1, 3000000000]
    np.testing.assert_array_equal(ops.cast(ms.Tensor(np.array([1.7, 3e9])), ms.uint32).asnumpy(),
                                  np.array([1, 3000000000], np.uint32))


def test_printing_as_mindspore():
    # strings printed by MindSpore 2.10
    assert repr(ms.Tensor(np.array([[1, 2], [3, 4294967295]], np.uint32))) == (
        "Tensor(shape=[2, 2], dtype=UInt32, value=\n[[         1,          2],\n"
        " [         3, 4294967295]])")
    assert repr(ms.Tensor(np.array(5, np.uint64))) == "Tensor(shape=[], dtype=UInt64, value= 5)"
    assert repr(ms.Tensor(np.array([18446744073709551615, 0], np.uint64))) == (
        "Tensor(shape=[2], dtype=UInt64, value= [18446744073709551615,                    0])")
    assert repr(ms.Tensor(np.array([], np.uint16))) == "Tensor(shape=[0], dtype=UInt16, value= )"
    assert str(ms.Tensor(np.array([[1, 2], [3, 4294967295]], np.uint32))) == (
        "[[         1          2]\n [         3 4294967295]]")


# ----------------------------------------------------------------------- promotion
def _mindspore_product(a, b):
    """MindSpore 2.10 (tensor * tensor, PyNative): a wide unsigned dtype with itself or Bool is
    itself; with any other dtype (UInt8 and the other unsigned ones included) a TypeError
    'Type implicit conversion between ... is not supported'."""
    if a is b or b is ms.bool_:
        return a
    if a is ms.bool_:
        return b
    return None


@pytest.mark.parametrize("u", WIDE, ids=str)
def test_tensor_tensor_promotion_table(u):
    for other in dt.ALL:
        want = _mindspore_product(u, other)
        for a, b in ((u, other), (other, u)):
            if want is None:
                with pytest.raises(TypeError, match="Type implicit conversion between"):
                    dt.promote(a, b)
            else:
                assert dt.promote(a, b) is want, (a, b)


@pytest.mark.parametrize("mode", MODES)
def test_mixed_operands_raise_in_both_modes(mode):
    u = ms.Tensor(np.array([1, 2], np.uint32))
    for other in (np.int32, np.int64, np.uint8, np.uint16, np.float32):
        o = ms.Tensor(np.array([1, 2], other))
        with pytest.raises(TypeError, match="implicit conversion between UInt32 and"):
            in_mode(lambda a, b: a + b, u, o)


@pytest.mark.parametrize("mode", MODES)
def test_scalar_operands(mode):
    x = ms.Tensor(np.array([1, 2, 7], np.uint32))
    # values from MindSpore 2.10 (PyNative): x * 3, x + True, x / 2, x == 2 (it refuses x + 1,
    # x - 1 and x ** 2, which keep the dtype here as x * 3 does)
    r = in_mode(lambda a: (a * 3, a + True, a / 2, a == 2, a - 1), x)
    assert [t.dtype for t in r] == [ms.uint32, ms.uint32, ms.float32, ms.bool_, ms.uint32]
    assert [t.asnumpy().tolist() for t in r] == [[3, 6, 21], [2, 3, 8], [0.5, 1.0, 3.5],
                                                 [False, True, False], [0, 1, 6]]
    # a float scalar is MindSpore's TypeError ('Type implicit conversion between
    # Tensor[Float32] and UInt32 is not supported' for x * 1.5; its x / 2.0 alone is Float32)
    for fn in (lambda a: a * 1.5, lambda a: a / 2.0):
        with pytest.raises(TypeError, match="implicit conversion between UInt32 and Float32"):
            in_mode(fn, x)


# ----------------------------------------------------------------------- arithmetic
def _ops_table(x, y):
    return {
        "add": x + y, "sub": x - y, "mul": x * y, "floor_div": x // y, "div": x / y,
        "less": x < y, "greater_equal": x >= y, "equal": x == y, "neg": -x, "sum": x.sum(),
        "max": x.max(), "min": x.min(), "argmax": x.argmax(), "mean": x.mean(),
        "cumsum": ops.cumsum(x, 0), "cast_int64": ops.cast(x, ms.int64),
        "cast_float32": ops.cast(x, ms.float32), "cast_float64": ops.cast(x, ms.float64),
        "cast_uint8": ops.cast(x, ms.uint8), "cast_int32": ops.cast(x, ms.int32),
        "maximum": ops.maximum(x, y), "bitwise_and": ops.bitwise_and(x, y),
        "mul_int_scalar": x * 3, "add_true": x + True, "concat": ops.concat((x, y)),
        "transpose": x.reshape(2, 2).T, "sqrt": ops.sqrt(x),
    }


# MindSpore 2.10, PyNative on the CPU, x = [3, max // 2 + 2, max - 1, max] and
# y = [5, max // 2, 2, 7] (max: the dtype's largest value). Left out: UInt16 maximum (MindSpore
# has no CPU kernel for it), UInt64 floor_div, sum and mean (MindSpore computes these through
# float64, inexact above 2**53, as it does for Int64; minispore's are exact)
MINDSPORE_VALUES = {
    "UInt16": {
        "add": ("UInt16", [8, 0, 0, 6]),
        "sub": ("UInt16", [65534, 2, 65532, 65528]),
        "mul": ("UInt16", [15, 65535, 65532, 65529]),
        "floor_div": ("UInt16", [0, 1, 32767, 9362]),
        "div": ("Float32", [0.6000000238418579, 1.00006103515625, 32767.0, 9362.142578125]),
        "less": ("Bool", [True, False, False, False]),
        "greater_equal": ("Bool", [False, True, True, True]),
        "equal": ("Bool", [False, False, False, False]),
        "neg": ("UInt16", [65533, 32767, 2, 1]),
        "sum": ("UInt16", 32769),
        "max": ("UInt16", 65535),
        "min": ("UInt16", 3),
        "argmax": ("Int64", 3),
        "mean": ("UInt16", 8192),
        "cumsum": ("UInt16", [3, 32772, 32770, 32769]),
        "cast_int64": ("Int64", [3, 32769, 65534, 65535]),
        "cast_float32": ("Float32", [3.0, 32769.0, 65534.0, 65535.0]),
        "cast_float64": ("Float64", [3.0, 32769.0, 65534.0, 65535.0]),
        "cast_uint8": ("UInt8", [3, 1, 254, 255]),
        "cast_int32": ("Int32", [3, 32769, 65534, 65535]),
        "bitwise_and": ("UInt16", [1, 1, 2, 7]),
        "mul_int_scalar": ("UInt16", [9, 32771, 65530, 65533]),
        "add_true": ("UInt16", [4, 32770, 65535, 0]),
        "concat": ("UInt16", [3, 32769, 65534, 65535, 5, 32767, 2, 7]),
        "transpose": ("UInt16", [[3, 65534], [32769, 65535]]),
        "sqrt": ("Float32", [1.7320507764816284, 181.0220947265625, 255.99609375, 255.998046875]),
    },
    "UInt32": {
        "add": ("UInt32", [8, 0, 0, 6]),
        "sub": ("UInt32", [4294967294, 2, 4294967292, 4294967288]),
        "mul": ("UInt32", [15, 4294967295, 4294967292, 4294967289]),
        "floor_div": ("UInt32", [0, 1, 2147483647, 613566756]),
        "div": ("Float32", [0.6000000238418579, 1.0, 2147483648.0, 613566784.0]),
        "less": ("Bool", [True, False, False, False]),
        "greater_equal": ("Bool", [False, True, True, True]),
        "equal": ("Bool", [False, False, False, False]),
        "neg": ("UInt32", [4294967293, 2147483647, 2, 1]),
        "sum": ("UInt32", 2147483649),
        "max": ("UInt32", 4294967295),
        "min": ("UInt32", 3),
        "argmax": ("Int64", 3),
        "mean": ("UInt32", 536870912),
        "cumsum": ("UInt32", [3, 2147483652, 2147483650, 2147483649]),
        "cast_int64": ("Int64", [3, 2147483649, 4294967294, 4294967295]),
        "cast_float32": ("Float32", [3.0, 2147483648.0, 4294967296.0, 4294967296.0]),
        "cast_float64": ("Float64", [3.0, 2147483649.0, 4294967294.0, 4294967295.0]),
        "cast_uint8": ("UInt8", [3, 1, 254, 255]),
        "cast_int32": ("Int32", [3, -2147483647, -2, -1]),
        "maximum": ("UInt32", [5, 2147483649, 4294967294, 4294967295]),
        "bitwise_and": ("UInt32", [1, 1, 2, 7]),
        "mul_int_scalar": ("UInt32", [9, 2147483651, 4294967290, 4294967293]),
        "add_true": ("UInt32", [4, 2147483650, 4294967295, 0]),
        "concat": ("UInt32", [3, 2147483649, 4294967294, 4294967295, 5, 2147483647, 2, 7]),
        "transpose": ("UInt32", [[3, 4294967294], [2147483649, 4294967295]]),
        "sqrt": ("Float32", [1.7320507764816284, 46340.94921875, 65536.0, 65536.0]),
    },
    "UInt64": {
        "add": ("UInt64", [8, 0, 0, 6]),
        "sub": ("UInt64", [18446744073709551614, 2, 18446744073709551612, 18446744073709551608]),
        "mul": ("UInt64", [15, 18446744073709551615, 18446744073709551612, 18446744073709551609]),
        "div": ("Float32", [0.6000000238418579, 1.0, 9.223372036854776e+18, 2.635249271191896e+18]),
        "less": ("Bool", [True, False, False, False]),
        "greater_equal": ("Bool", [False, True, True, True]),
        "equal": ("Bool", [False, False, False, False]),
        "neg": ("UInt64", [18446744073709551613, 9223372036854775807, 2, 1]),
        "max": ("UInt64", 18446744073709551615),
        "min": ("UInt64", 3),
        "argmax": ("Int64", 3),
        "cumsum": ("UInt64", [3, 9223372036854775812, 9223372036854775810, 9223372036854775809]),
        "cast_int64": ("Int64", [3, -9223372036854775807, -2, -1]),
        "cast_float32": ("Float32", [3.0, 9.223372036854776e+18, 1.8446744073709552e+19,
                                     1.8446744073709552e+19]),
        "cast_float64": ("Float64", [3.0, 9.223372036854776e+18, 1.8446744073709552e+19,
                                     1.8446744073709552e+19]),
        "cast_uint8": ("UInt8", [3, 1, 254, 255]),
        "cast_int32": ("Int32", [3, 1, -2, -1]),
        "maximum": ("UInt64", [5, 9223372036854775809, 18446744073709551614, 18446744073709551615]),
        "bitwise_and": ("UInt64", [1, 1, 2, 7]),
        "mul_int_scalar": ("UInt64", [9, 9223372036854775811, 18446744073709551610,
                                      18446744073709551613]),
        "add_true": ("UInt64", [4, 9223372036854775810, 18446744073709551615, 0]),
        "concat": ("UInt64", [3, 9223372036854775809, 18446744073709551614, 18446744073709551615,
                              5, 9223372036854775807, 2, 7]),
        "transpose": ("UInt64", [[3, 18446744073709551614], [9223372036854775809,
                                 18446744073709551615]]),
        "sqrt": ("Float32", [1.7320507764816284, 3037000448.0, 4294967296.0, 4294967296.0]),
    },
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("u", WIDE, ids=str)
def test_arithmetic_matches_mindspore(u, mode):
    top = int(np.iinfo(u.np).max)
    x = ms.Tensor(np.array([3, top // 2 + 2, top - 1, top], u.np))
    y = ms.Tensor(np.array([5, top // 2, 2, 7], u.np))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # O2: no fallback to kernel by kernel
        got = in_mode(_ops_table, x, y)
    want = MINDSPORE_VALUES[str(u)]
    for name, (dtype_name, values) in want.items():
        t = got[name]
        assert str(t.dtype) == dtype_name, (name, t.dtype)
        a = t.asnumpy()
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, np.array(values, a.dtype), rtol=1e-6, err_msg=name)
        else:
            assert a.tolist() == values, (name, a.tolist(), values)


@pytest.mark.parametrize("mode", MODES)
def test_uint64_reductions_and_division_below_two_to_the_53(mode):
    # values from MindSpore 2.10: exact below 2**53 (sum, mean truncating, prod, floor_div)
    x = ms.Tensor(np.array([3, 5, 7, 11], np.uint64))
    d = ms.Tensor(np.array([1, 1, 3, 3], np.uint64))
    r = in_mode(lambda a, b: (a.sum(), a.mean(), ops.prod(a), a // b), x, d)
    assert [t.dtype for t in r] == [ms.uint64] * 4
    assert [t.asnumpy().tolist() for t in r] == [26, 6, 1155, [3, 5, 2, 3]]
    # UInt32's mean truncates as MindSpore's does: [1, 1, 0, 0] -> 0, [1, 0, 5, 0] -> 1
    m = in_mode(lambda a: a.mean(), ms.Tensor(np.array([[1, 1, 0, 0], [1, 0, 5, 0]], np.uint32)))
    assert m.dtype is ms.uint32 and m.asnumpy().tolist() == 1


@pytest.mark.parametrize("mode", ("pynative", "graph-O2"))
def test_high_bit_order_in_selections(mode):
    """Unsigned order where the signed one differs: top bits set (the native sink's icmp ult,
    unsigned max/min initial values, argmax/argmin, sort)."""
    for u in WIDE:
        top = int(np.iinfo(u.np).max)
        x = ms.Tensor(np.array([[5, top, 1, top - 3], [top // 2 + 1, 0, 7, top // 2]], u.np))
        got = in_mode(lambda a: (a.max(axis=1), a.min(axis=0), a.argmax(axis=1),
                                 a.argmin(axis=0), ops.sort(a)[0], ops.cumsum(a, 1)), x)
        a = x.asnumpy()
        want = (a.max(1), a.min(0), a.argmax(1), a.argmin(0), np.sort(a, 1), np.cumsum(a, 1,
                                                                                dtype=u.np))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.asnumpy(), w)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
@pytest.mark.parametrize("mode", ("pynative", "graph-O2"))
def test_conversions_from_floats_and_between_integers(mode):
    f = ms.Tensor(np.array([1.5, 3e4, 4.1e9, 2.0 ** 63 + 2 ** 40, 1e19], np.float64))
    got = in_mode(lambda a: (ops.cast(a, ms.uint32), ops.cast(a, ms.uint64)), f)
    np.testing.assert_array_equal(got[1].asnumpy(), f.asnumpy().astype(np.uint64))
    np.testing.assert_array_equal(got[0].asnumpy()[:3], np.array([1, 30000, 4100000000],
                                                                 np.uint32))
    u = ms.Tensor(np.array([1, 65535, 4294967295, 18446744073709551615], np.uint64))
    got = in_mode(lambda a: (ops.cast(a, ms.uint16), ops.cast(a, ms.uint32),
                             ops.cast(ops.cast(a, ms.uint32), ms.uint64),
                             ops.cast(ops.cast(a, ms.uint16), ms.float32)), u)
    a = u.asnumpy()
    want = (a.astype(np.uint16), a.astype(np.uint32), a.astype(np.uint32).astype(np.uint64),
            a.astype(np.uint16).astype(np.float32))
    for g, w in zip(got, want):
        assert g.asnumpy().dtype == w.dtype
        np.testing.assert_array_equal(g.asnumpy(), w)


@pytest.mark.parametrize("mode", ("pynative", "graph-O1"))
def test_gather_and_indexing(mode):
    x = ms.Tensor(np.array([7, 4294967295, 1], np.uint32))
    got = in_mode(lambda a: (ops.gather(a, ms.Tensor(np.array([1, 0])), 0), a[1:], a[2]), x)
    assert [t.asnumpy().tolist() for t in got] == [[4294967295, 7], [4294967295, 1], 1]
    assert all(t.dtype is ms.uint32 for t in got)


# ----------------------------------------------------------------------- CUDA generator
_CUDA_OPS = ("add", "sub", "mul", "floor_div", "mod", "div", "less", "greater_equal", "equal",
             "neg", "maximum", "minimum", "bitwise_and", "bitwise_xor", "right_shift", "sign",
             "relu", "abs", "pow", "sqrt")


def _cuda_cases():
    from minispore.backends.gpu import cuda_codegen
    cases = []
    for name in _CUDA_OPS:
        op = REGISTRY[name]
        assert op.scalar is not None, f"{name} has no scalar template"
        for d in ("uint16", "uint32", "uint64"):
            ins, shapes = (d,) * op.arity, ((6,),) * op.arity
            cases.append((op, ins, cuda_codegen.elementwise_kernel(op, ins, shapes)))
    return cases


def _cuda_data(name, j, d):
    top = int(np.iinfo(d).max)
    if name in ("right_shift", "pow") and j == 1:
        return np.array([0, 1, 3, 5, 7, 2], d)
    if j == 1 and name in ("floor_div", "mod", "div"):
        return np.array([1, 2, 7, top, top // 2, 3], d)
    return np.array([0, 5, top, top - 1, top // 2 + 1, 9], d)


def test_cuda_templates_compute_unsigned_as_numpy(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))
    from cuda_host import HostModule, compile_ptx, ptx_compiler
    cases = _cuda_cases()
    host = HostModule([k for *_, k in cases], tmp_path)
    bad = []
    for op, ins, k in cases:
        xs = [_cuda_data(op.name, j, d) for j, d in enumerate(ins)]
        want = np.asarray(op.ref(*xs))
        got = host.run(k, xs, np.empty(want.shape, want.dtype), grid=2, block=2)
        ok = np.allclose(got, want, rtol=1e-6) if want.dtype.kind == "f" else \
            np.array_equal(got, want)
        if not ok:
            bad.append(f"{op.name} {ins}: got {got} want {want}")
    assert not bad, "\n".join(bad)
    if ptx_compiler() is not None:
        ptx = compile_ptx([k for *_, k in cases], tmp_path)
        assert all(f".entry {k.name}(" in ptx for *_, k in cases)


# ----------------------------------------------------------------------- topk above 2**63
# values from MindSpore 2.10 (CPU, both modes): unsigned order, 2**64-1 first
_TOP_BIT = np.array([2**63 - 1, 2**63, 2**63 + 1, 5, 2**64 - 1, 0], np.uint64)
_TOPK_WANT = {3: ([2**64 - 1, 2**63 + 1, 2**63], [4, 2, 1]),
              6: ([2**64 - 1, 2**63 + 1, 2**63, 2**63 - 1, 5, 0], [4, 2, 1, 0, 3, 5])}


@pytest.mark.filterwarnings("ignore:jit_level O2:RuntimeWarning")
@pytest.mark.parametrize("mode", MODES)
def test_topk_orders_uint64_above_two_to_the_63(mode):
    """The eager kernel, the O1 graph's kernel and the native sink (which hands uint64 to the
    kernel) all compare through topk_select.compare_keys."""
    x = ms.Tensor(_TOP_BIT)
    for k, (values, indices) in _TOPK_WANT.items():
        v, i = in_mode(lambda a: ops.topk(a, k), x)
        assert v.dtype is ms.uint64 and i.dtype is ms.int32
        assert v.asnumpy().tolist() == values and i.asnumpy().tolist() == indices
    v, i = in_mode(lambda a: ops.topk(a, 2, sorted=False), ms.Tensor(_TOP_BIT[None, ::-1]))
    assert sorted(v.asnumpy()[0].tolist()) == [2**63 + 1, 2**64 - 1]


def test_topk_reference_and_gpu_routine_order_uint64_above_two_to_the_63():
    from minispore.backends.gpu import routines
    from minispore.core.primitive import Meta, attrs_dict, normalize_attrs

    class HostCtx:
        checks = True
    op = REGISTRY["topk"]
    for k, (values, indices) in _TOPK_WANT.items():
        v, i = op.ref(_TOP_BIT, k=k, sorted=True)
        assert v.tolist() == values and i.tolist() == indices
        kw = attrs_dict(normalize_attrs(op, {"k": k}))
        metas = (Meta(_TOP_BIT.shape, ms.uint64),)
        run = routines.build(np, HostCtx, "topk", metas, kw, op.infer(*metas, **kw))
        v, i = run(_TOP_BIT.copy())       # numpy as the routine's array module
        assert v.tolist() == values and i.tolist() == indices


# ----------------------------------------------------------------------- big Python ints
def test_python_ints_up_to_two_to_the_64_make_uint64_tensors():
    # values from MindSpore 2.10: Tensor(2**64-1, ms.uint64) is exact, and a lone int in
    # [2**63, 2**64) without a dtype is UInt64
    top = 2**64 - 1
    for data, want in ((top, top), ([top, 0, 5], [top, 0, 5]), ([[top], [3]], [[top], [3]]),
                       ((top, True), [top, 1]), ([2**63, 1], [2**63, 1])):
        t = ms.Tensor(data, ms.uint64)
        assert t.dtype is ms.uint64 and t.asnumpy().tolist() == want
    t = ms.Tensor(2**63)
    assert t.dtype is ms.uint64 and t.asnumpy().tolist() == 2**63
    assert ms.Tensor(2**63, ms.float32).asnumpy().tolist() == 2.0**63
    # MindSpore wraps these silently (2**64 -> error, -1 -> 2**64-1, 2**32 as UInt32 -> 0) and
    # gives [0, 0, 5] for [2**64-1, 0, 5]; minispore keeps every value or names it
    for data, d, name in ((2**64, ms.uint64, "uint64"), (-1, ms.uint64, "uint64"),
                          ([-1, 2**63], ms.uint64, "uint64"), (2**63, ms.int64, "int64"),
                          (2**63, ms.int32, "int32"), ([2**63, 1], None, "int64"),
                          (2**64, None, "int64")):
        with pytest.raises(OutOfRangeError, match=f"does not fit {name} "):
            ms.Tensor(data, d)
