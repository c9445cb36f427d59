"""Half precision (float16, bfloat16) in the CPU's native sink (backends/cpu/native_half.py):
every op of the op database on its half dtypes runs at jit_level O2 as one NativeProgram, without
a warning, and gives PyNative's bits; the conversions give numpy's / ml_dtypes' bits for every
half bit pattern and for the float32/float64 values whose rounding is delicate (ties, subnormals,
overflow, NaN payloads); half nodes of the window ops and of matmul compute as their float32
nodes, rounded once, as their eager kernels do."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import minispore as ms
from minispore import ops
from minispore.core import dtype as dt
from minispore.core.graph import compile as graph_compile
from helpers import as_tuple, run_op
from opdb import CASES, rng_for

HALF = (dt.float16, dt.bfloat16)
BF16 = ml_dtypes.bfloat16


def _bits(a: np.ndarray) -> np.ndarray:
    """The raw bytes of an array (a half array's bit patterns), for exact comparison."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8) if a.dtype.itemsize else a


def _o2(fn, *args):
    """fn at jit_level O2 on the CPU: (numpy results, program class name, RuntimeWarnings)."""
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2", device_target="CPU")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        out = [t.asnumpy() for t in as_tuple(fn(*args))]
    program = type(graph_compile.last_compiled().program).__name__
    return out, program, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def _pynative(fn, *args):
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O0", device_target="CPU")
    return [t.asnumpy() for t in as_tuple(fn(*args))]


def _half_params():
    return [pytest.param(case, d, id=f"{case.name}-{d}") for case in CASES for d in case.dtypes
            if d in HALF]


@pytest.mark.parametrize("case,dtype", _half_params())
def test_op_on_half_is_native_and_gives_pynatives_bits(case, dtype):
    """Each half sample's graph: a NativeProgram ran, no RuntimeWarning, PyNative's bits."""
    samples = case.samples(rng_for("forward", case.name, dtype), dtype)
    assert samples
    for s in samples:
        def op(*ts):
            return run_op(case.name, ts, s.attrs)
        eager = _pynative(op, *s.args)
        sunk, program, messages = _o2(op, *s.args)
        assert program == "NativeProgram" and not messages, \
            f"{case.name} {s.desc}: {program} ran; warnings: {messages}"
        for k, (e, g) in enumerate(zip(eager, sunk)):
            assert e.dtype == g.dtype and e.shape == g.shape, f"{case.name} {s.desc} out {k}"
            assert np.array_equal(_bits(e), _bits(g)), \
                f"{case.name} {s.desc} out {k}: PyNative {e!r:.300} O2 {g!r:.300}"


def _delicate_floats():
    """float32 and float64 values at the half formats' rounding boundaries."""
    f32 = np.array([0x7F800001, 0x7FC00000, 0xFFC00001, 0x7F812345, 0x7FA00000, 0x00012345,
                    0x00008000, 0x00018000, 0x33000000, 0x33000001, 0x387FE000, 0x387FF000,
                    0x477FEFFF, 0x477FF000, 0x7F7FFFFF, 0x80000000, 0x387FFFFF, 0x3F808000,
                    0x3F818000, 0x3F800001],
                   np.uint32).view(np.float32)
    rng = np.random.default_rng(7)
    f32 = np.concatenate([f32, np.array([np.inf, -np.inf, 65504, 65519.99, 65520, 1e-8, 6e-8,
                                         -3e-5], np.float32),
                          (rng.standard_normal(2000) * 3).astype(np.float32)])
    with np.errstate(invalid="ignore"):         # the signalling NaNs among them
        f64_of_f32 = f32.astype(np.float64)
    f64 = np.concatenate([f64_of_f32,
                          np.array([1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -8 + 2 ** -40, 3.5e38,
                                    1e-310, 3e-39, 2 ** -25, 2 ** -25 * 1.0001, 2 ** -134]),
                          rng.standard_normal(2000) * 1e-6])
    return f32, f64


def _to(d):
    def cast(t):
        return ops.cast(t, d)
    return cast


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_casts_give_numpys_bits(half):
    """float32/float64/integers/bool -> half rounds as numpy/ml_dtypes (to nearest even, from
    the source directly, NaN payloads as they keep them); every half bit pattern -> float32,
    float64 and the other half dtype likewise."""
    d, nd = (ms.float16, np.float16) if half == "float16" else (ms.bfloat16, BF16)
    f32, f64 = _delicate_floats()
    rng = np.random.default_rng(3)
    sources = [f32, f64, rng.integers(-2 ** 31, 2 ** 31, 500).astype(np.int32),
               rng.integers(-2 ** 40, 2 ** 40, 500), rng.integers(0, 255, 300).astype(np.uint8),
               rng.integers(-128, 127, 300).astype(np.int8), rng.random(50) < 0.5]
    for src in sources:
        got, program, messages = _o2(ms.jit(_to(d)), ms.Tensor(src))
        assert program == "NativeProgram" and not messages, (src.dtype, messages)
        with np.errstate(all="ignore"):
            want = src.astype(nd)
        bad = np.nonzero(got[0].view(np.uint16) != want.view(np.uint16))[0]
        assert not bad.size, f"{src.dtype} -> {half}: {[(src[i], got[0][i]) for i in bad[:5]]}"
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(nd)
    for to, tnd in ((ms.float32, np.float32), (ms.float64, np.float64),
                    (ms.float16, np.float16), (ms.bfloat16, BF16), (ms.int32, np.int32),
                    (ms.bool_, np.bool_)):
        with np.errstate(all="ignore"):     # int32: the patterns whose value fits
            fits = np.abs(every.astype(np.float64)) < 2 ** 31
        pats = every[fits] if tnd is np.int32 else every
        got, program, messages = _o2(ms.jit(_to(to)), ms.Tensor(pats))
        assert program == "NativeProgram" and not messages, (to, messages)
        with np.errstate(all="ignore"):
            want = pats.astype(tnd)
        bad = np.nonzero(_bits(got[0]) != _bits(want))[0]
        assert not bad.size, f"{half} -> {to}: {bad.size} patterns differ"


def _half_inputs(rng, nd, *shapes):
    return [ms.Tensor((rng.standard_normal(s) * 2).astype(np.float32).astype(nd))
            for s in shapes]


def _conv_pool(x, w):
    y = ops.conv2d(x, w, pad_mode="pad", padding=1)
    return ops.max_pool2d(y, kernel_size=2, stride=2), ops.avg_pool2d(y, kernel_size=2, stride=1)


def _matmuls(a, b):
    return ops.matmul(a, b), ops.matmul(a, a, transpose_b=True), ops.softmax(ops.matmul(a, b))


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("graph", ["conv_pool", "matmuls"])
def test_half_windows_and_matmul_compute_as_float32(graph, half):
    """conv2d, the pools, matmul (also of a matrix and its own transpose, which the eager
    kernel copies twice: no syrk) and softmax on half tensors: one NativeProgram, PyNative's
    bits."""
    nd = np.float16 if half == "float16" else BF16
    rng = np.random.default_rng(11)
    if graph == "conv_pool":
        fn, args = _conv_pool, _half_inputs(rng, nd, (2, 3, 9, 9), (4, 3, 3, 3))
    else:
        fn, args = _matmuls, _half_inputs(rng, nd, (5, 7), (7, 6))
    eager = _pynative(fn, *args)
    sunk, program, messages = _o2(ms.jit(fn), *args)
    assert program == "NativeProgram" and not messages, messages
    for e, g in zip(eager, sunk):
        assert e.dtype == nd and np.array_equal(_bits(e), _bits(g))
