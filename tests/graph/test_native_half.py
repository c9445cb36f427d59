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
        out = _numpy(fn(*args))
    program = type(graph_compile.last_compiled().program).__name__
    return out, program, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def _pynative(fn, *args):
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O0", device_target="CPU")
    return _numpy(fn(*args))


def _numpy(outs) -> list:
    """The Tensors of a (nested) result as a flat list of numpy arrays."""
    flat = []
    for o in as_tuple(outs):
        flat.extend(_numpy(o) if isinstance(o, (tuple, list)) else [o.asnumpy()])
    return flat


def _involves_half(sample) -> bool:
    """A half input, or a half dtype attribute (a cast to half, a draw into one)."""
    return any(np.asarray(a).dtype in (np.float16, BF16) for a in sample.args) or \
        sample.attrs.get("dtype") in HALF


def _half_samples(case, dtype) -> list:
    return [s for s in case.samples(rng_for("forward", case.name, dtype), dtype)
            if _involves_half(s)]


def _half_params():
    return [pytest.param(case, d, id=f"{case.name}-{d}") for case in CASES for d in case.dtypes
            if d in HALF or _half_samples(case, d)]


@pytest.mark.parametrize("case,dtype", _half_params())
def test_op_on_half_is_native_and_gives_pynatives_bits(case, dtype):
    """Each sample of the op database with a half input or a half dtype attribute: a
    NativeProgram ran its graph, no RuntimeWarning, PyNative's bits."""
    samples = _half_samples(case, dtype)
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


def _reductions(x, idx):
    return ops.sum(x, axis=1), ops.mean(x, axis=(0, 2)), ops.max(x, axis=-1), ops.argmax(x, 1)


def _movement(x, idx):
    upd = x[:, :2] * 0.5
    return (ops.scatter_add(x, idx, upd, axis=1), ops.concat((x, x * 2), axis=1),
            ops.one_hot(idx, 5, 0.3, -1.7).astype(x.dtype) + x[0, 0],
            ops.zeros_like(x) + 1.1, x.transpose(2, 0, 1), x[:, 1:, ::2])


def _arith(x, idx):
    y = x * 1.3 + 0.1
    return (ops.maximum(y, x), ops.greater(y, x), ops.where(y > 0, y, x * 0.01),
            ops.exp(y) / (x + 3.0), y // 0.7, y % 0.7, y.astype(ms.float32) * 2.0)


def _control(x, idx):
    s = ops.sum(x)
    if s > 0:
        x = x * 2.0
    else:
        x = x - 1.0
    i = 0
    while i < 3:
        x = x * 0.5 + 0.25
        i += 1
    return x


def _native_with_pynatives_bits(op, *args, compiled=None):
    """Run `op` in PyNative and `compiled` (default `op`, whose run_op compiles the op) at O2:
    one NativeProgram, no warning, PyNative's bits for every output; returns PyNative's
    outputs."""
    eager = _pynative(op, *args)
    sunk, program, messages = _o2(compiled or op, *args)
    assert program == "NativeProgram" and not messages, messages
    assert len(eager) == len(sunk)
    for k, (e, g) in enumerate(zip(eager, sunk)):
        assert e.dtype == g.dtype and np.array_equal(_bits(e), _bits(g)), f"output {k}"
    return eager


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("graph", ["reductions", "movement", "arith", "control"])
def test_half_graphs_are_native_with_pynatives_bits(graph, half):
    """Graphs of several nodes on half tensors (reductions, data movement and scatter, one_hot,
    broadcasting arithmetic with constants, comparisons, If/While): one NativeProgram, no
    warning, PyNative's bits for every output."""
    nd = np.float16 if half == "float16" else BF16
    fn = {"reductions": _reductions, "movement": _movement, "arith": _arith,
          "control": _control}[graph]
    rng = np.random.default_rng(5)
    x = ms.Tensor((rng.standard_normal((3, 4, 5)) * 2).astype(np.float32).astype(nd))
    idx = ms.Tensor(np.array([[1, 3], [0, 0], [2, 1]], np.int32))
    _native_with_pynatives_bits(fn, x, idx, compiled=ms.jit(fn))


_DECLINED = {   # op -> (args, attrs): its eager half kernel rounds every partial product
    "prod": ((np.linspace(0.5, 1.5, 12).astype(np.float16).reshape(3, 4),), {"axis": 1}),
}


@pytest.mark.parametrize("name", list(_DECLINED))
def test_half_ops_with_other_eager_arithmetic_are_declined_naming_the_node(name):
    """prod's eager kernel rounds every partial product to the half dtype (numpy's float16
    multiply). The
    native sink declines them on half tensors: the graph runs kernel by kernel, the warning
    names the node and the dtype, and the numbers are PyNative's."""
    args, attrs = _DECLINED[name]

    def op(*ts):
        return run_op(name, ts, attrs)
    eager = _pynative(op, *args)
    sunk, program, messages = _o2(op, *args)
    assert program == "Program" and any(f"node '{name}'" in m and "Float16" in m
                                        for m in messages), messages
    for e, g in zip(eager, sunk):
        assert np.array_equal(_bits(e), _bits(g))


_NORMS = {
    "layer_norm": lambda x, h: ((x, np.ones(6, h), np.zeros(6, h)),
                                {"begin_norm_axis": -1, "begin_params_axis": -1}),
    "batch_norm": lambda x, h: ((x.reshape(2, 3, 2, 2), np.ones(3, h), np.zeros(3, h),
                                 np.zeros(3, h), np.ones(3, h)), {"training": True}),
}


@pytest.mark.parametrize("name", list(_NORMS))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_norms_are_native_with_pynatives_bits(name, dtype):
    """The norms' eager kernel is their native program (native_kernels.py): on half inputs both
    modes run the float32 twin of the lowering and round each output once."""
    h = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    args, attrs = _NORMS[name](np.linspace(-3, 5, 24).reshape(4, 6).astype(h), h)

    def op(*ts):
        return run_op(name, ts, attrs)
    _native_with_pynatives_bits(op, *args)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_logsumexp_is_native_with_pynatives_bits(dtype):
    """logsumexp's eager kernel (loops/rows.py rendered by numba) computes a half input in
    float32 and rounds once; the native sink lowers it as that float32 twin."""
    x = np.linspace(-30, 30, 24).reshape(4, 6).astype(BF16 if dtype == "bfloat16" else dtype)

    def op(t):
        return run_op("logsumexp", (t,), {"axis": 1})
    _native_with_pynatives_bits(op, x)


@pytest.mark.parametrize("parts", [("float32", "int32"), ("float16", "int32", "bool"),
                                   ("float64", "bfloat16"), ("int64", "float32"),
                                   ("uint8", "int8")])
def test_concat_of_mixed_dtypes_converts_each_part(parts):
    """concat of parts of different dtypes: one NativeProgram, each part converted to the
    promoted dtype as the eager kernel's astype does (PyNative's bits)."""
    rng = np.random.default_rng(2)
    nds = {"float16": np.float16, "bfloat16": BF16}
    arrays = [(rng.standard_normal((2, 3)) * 300).astype(np.float32).astype(nds.get(p, p))
              if p in ("float16", "bfloat16", "float32", "float64") else
              rng.integers(-120, 120, (2, 3)).astype(p) if p != "uint8" else
              rng.integers(0, 255, (2, 3)).astype(p) for p in parts]
    arrays = [a if p != "bool" else a != 0 for a, p in zip(arrays, parts)]
    if "int64" in parts:
        arrays[0] = np.array([[2 ** 40 + 1, 2 ** 62 + 2 ** 38 + 1, -7]] * 2, np.int64)
    ts = [ms.Tensor(a) for a in arrays]
    eager = _pynative(_concat, *ts)
    sunk, program, messages = _o2(ms.jit(_concat), *ts)
    assert program == "NativeProgram" and not messages, messages
    assert eager[0].dtype == sunk[0].dtype and np.array_equal(_bits(eager[0]), _bits(sunk[0]))


def _concat(*ts):
    return ops.concat(ts, axis=1)



@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["random_uniform", "random_normal", "dropout"])
def test_half_random_ops_are_native_with_pynatives_bits(name, half):
    """uniform and normal draws into a half dtype (the reference's float64 draw rounded once)
    and dropout of a half tensor (computed in float32): one NativeProgram, PyNative's bits."""
    d, nd = (dt.float16, np.float16) if half == "float16" else (dt.bfloat16, BF16)
    key = np.array([12345, 7], np.int64)
    if name == "dropout":
        x = (np.random.default_rng(1).standard_normal((4, 50)) * 3).astype(np.float32)
        args, attrs = (x.astype(nd), key), {"keep_prob": 0.7, "seed": 5}
    else:
        args, attrs = (key,), {"shape": (6, 40), "dtype": d, "seed": 9}

    def op(*ts):
        return run_op(name, ts, attrs)
    for e in _native_with_pynatives_bits(op, *args):
        assert e.dtype == nd
