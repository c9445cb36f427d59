"""Forward results: op x backend x mode x dtype, minispore against the op's own numpy reference
(`REGISTRY[op].ref`), with the output dtype and shape equal to what `infer` declares. The
references themselves are checked against hand-computed values at the end of this file."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY

from helpers import (ASCEND_CUBE_TOL, ASCEND_F64, CUBE_OPS, as_tuple, ascend_rejects, assert_close,
                     forward_tol, in_mode, infer_meta, matrix, ref_op, run_op)
from minispore.core.errors import DTypeError
from minispore.core.graph import compile as graph_compile
from opdb import CASES, OPDB, rng_for


def _check_sample(case, sample, dtype, where: str, backend: str = "CPU") -> str | None:
    """None if minispore matches the reference on this sample, else a description. On the
    simulated Ascend a float64 input or output must raise its DTypeError instead."""
    name = case.name
    label = f"{name} [{where}] sample {sample.desc!r}"
    try:
        meta = infer_meta(name, sample.args, sample.attrs)
        metas = meta if isinstance(meta, tuple) and not hasattr(meta, "dtype") else (meta,)
        if ascend_rejects(backend, [m.dtype for m in metas] +
                          [dt.to_dtype(np.asarray(a).dtype) for a in sample.args]):
            with pytest.raises(DTypeError, match=ASCEND_F64):
                run_op(name, sample.args, sample.attrs)
            return None
        expect = as_tuple(ref_op(name, sample.args, sample.attrs))
        got = as_tuple(run_op(name, sample.args, sample.attrs))
        assert len(got) == len(expect) == len(metas), \
            f"{label}: {len(got)} outputs, reference {len(expect)}, infer {len(metas)}"
        for k, (g, e, m) in enumerate(zip(got, expect, metas)):
            what = f"{label} output {k}"
            e = np.asarray(e)
            assert g.dtype is m.dtype, f"{what}: dtype {g.dtype} but infer says {m.dtype}"
            assert tuple(g.shape) == tuple(m.shape), \
                f"{what}: shape {g.shape} but infer says {m.shape}"
            assert e.dtype == m.dtype.np, \
                f"{what}: the reference returns {e.dtype} but infer says {m.dtype}"
            assert e.shape == tuple(m.shape), \
                f"{what}: the reference returns shape {e.shape} but infer says {m.shape}"
            rtol, atol = forward_tol(m.dtype, case.accum, case.tol)
            if backend == "Ascend" and name in CUBE_OPS and m.dtype in ASCEND_CUBE_TOL:
                rtol, atol = ASCEND_CUBE_TOL[m.dtype]
            assert_close(g.asnumpy(), e, rtol, atol, what)
    except AssertionError as exc:
        return str(exc)
    except Exception as exc:                       # a crash is a failure of this sample too
        return f"{label}: raised {type(exc).__name__}: {exc}"
    return None


def _check_program(case, sample, backend, mode, caught) -> str | None:
    """None unless an O2 cell on the CPU ran its graph as another program than the native sink
    without a RuntimeWarning saying why (what the native sink declines runs kernel by kernel, as
    O1): a fallback is never silent. tests/graph/test_sink_ops.py pins the program of each op at
    its first dtype."""
    if backend != "CPU" or mode != "graph-O2":
        return None
    got = type(graph_compile.last_compiled().program).__name__
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning) and
            "lower" in str(w.message)]
    if got == "NativeProgram" or said:
        return None
    return f"{case.name} [{mode}] sample {sample.desc!r}: ran as {got} without a warning"


@pytest.mark.parametrize("case,backend,mode,dtype",
                         matrix(CASES, lambda c: c.dtypes, "forward", levels=True),
                         indirect=["backend"])
def test_forward(case, backend, mode, dtype):
    rng = rng_for("forward", case.name, dtype)
    samples = case.samples(rng, dtype)
    assert samples, f"{case.name}: no samples for {dtype}"
    where = f"{backend}/{mode}/{dtype}"
    failures = []
    for s in samples:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            failure = _check_sample(case, s, dtype, where, backend)
        failure = failure or _check_program(case, s, backend, mode, caught)
        if failure:
            failures.append(failure)
    assert not failures, f"{len(failures)} of {len(samples)} samples failed:\n\n" + \
        "\n\n".join(failures)


def test_samples_cover_the_required_cases():
    """Each elementwise case has a 0-d sample; binary ones a broadcast pair; reductions negative
    axes, keep_dims and tuple axes (notes/testing.md 6.2)."""
    rng = rng_for("coverage")
    for case in CASES:
        samples = case.samples(rng, case.dtypes[0])
        op = case.op
        if op.kind == "elementwise":
            assert any(any(np.ndim(a) == 0 for a in s.args) for s in samples), case.name
            if op.arity == 2:
                assert any(np.shape(s.args[0]) != np.shape(s.args[1]) and np.ndim(s.args[0]) and
                           np.ndim(s.args[1]) for s in samples), case.name
        if op.kind == "reduce" and "keep_dims" in op.attrs:
            axes = [s.attrs.get("axis") for s in samples]
            assert any(isinstance(a, int) and a < 0 for a in axes), case.name
            assert any(s.attrs.get("keep_dims") for s in samples), case.name
            if case.name not in ("argmax", "argmin"):
                assert any(isinstance(a, tuple) for a in axes), case.name


# ---------------------------------------------------------------- Python scalar operands --------
@pytest.mark.parametrize("dtype,scalar,want", [
    (dt.float16, 1.5, dt.float16), (dt.float32, 2, dt.float32), (dt.int32, 3, dt.int32),
    (dt.int32, 0.5, dt.float32), (dt.bool_, 2, dt.int64), (dt.uint8, 1, dt.uint8),
])
@pytest.mark.parametrize("opname", ["add", "mul"])
def test_python_scalar_operand(backend, mode, opname, dtype, scalar, want):
    """A Python scalar takes the tensor's dtype unless it is of a higher kind (MindSpore)."""
    x = np.array([[1, 2, 3], [0, 1, 2]]).astype(dtype.np)
    fn = getattr(ms.ops, opname)

    def both(t, c):
        return fn(t, c), fn(c, t)
    for out in in_mode(both, ms.Tensor(x), scalar):
        assert out.dtype is want
        ref = getattr(np, {"add": "add", "mul": "multiply"}[opname])(
            x.astype(want.np if want is not dt.float16 else np.float32), scalar)
        assert_close(out.asnumpy(), ref.astype(want.np), *forward_tol(want), f"{opname} scalar")


# ---------------------------------------------------------------- large inputs ------------------
@pytest.mark.parametrize("opname,shapes", [
    ("add", ((300, 300), (300, 300))),        # above the cheap-op prange threshold
    ("mul", ((300, 300), ())),                 # prange with a hoisted scalar
    ("maximum", ((90000,), (90000,))),         # 1-d direct path, prange
    ("exp", ((70, 70),)),                      # transcendental threshold
    ("sin", ((5000,),)),
    ("sub", ((300, 1), (1, 300))),             # strided broadcast loop on a big output
])
@pytest.mark.parametrize("dtype", [dt.float32, dt.float64])
def test_large_inputs_use_the_parallel_kernels(backend, mode, opname, shapes, dtype):
    """Sizes above the CPU backend's prange thresholds run the parallel variants; same values."""
    rng = np.random.default_rng(1)
    args = [rng.uniform(-2, 2, s).astype(dtype.np) for s in shapes]
    if ascend_rejects(backend, [dtype]):
        with pytest.raises(DTypeError, match=ASCEND_F64):
            run_op(opname, args, {})
        return
    got = run_op(opname, args, {})
    assert_close(got.asnumpy(), ref_op(opname, args, {}), *forward_tol(dtype),
                 f"{opname} {shapes} {dtype}")


# ---------------------------------------------------------------- functional wrappers -----------
def test_functional_wrappers(backend, mode):
    """The public functional API adds conventions on top of the primitives; spot-check them."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)
    tol = forward_tol(dt.float32, accum=True)
    if backend == "Ascend":                            # fp16 Cube operands
        tol = ASCEND_CUBE_TOL[dt.float32]
    (mv, vm, dot, at, s_all, s_list, (vals, idx), st, sq, ed, parts, tr, bc, wh, ar_i, ar_f,
     oh) = in_mode(_wrappers, ms.Tensor(a), ms.Tensor(v), ms.Tensor(a.T),
                   ms.Tensor(a[None, :, None]), ms.Tensor(np.arange(7.0, dtype=np.float32)),
                   ms.Tensor(np.array([1, 0])))
    assert_close(mv.asnumpy(), a @ v, *tol, "matmul matrix-vector")
    assert_close(vm.asnumpy(), v @ a.T, *tol, "matmul vector-matrix")
    assert_close(dot.asnumpy(), np.asarray(v @ v, np.float32), *tol, "dot")
    assert_close(at.asnumpy(), a @ a.T, *tol, "@ operator")
    assert_close(s_all.asnumpy(), np.sum(a), *tol, "sum axis=() is all")
    assert_close(s_list.asnumpy(), np.sum(a, (0, 1), keepdims=True), *tol, "sum axis as a list")
    assert_close(vals.asnumpy(), a.max(1), 0, 0, "ops.max values")
    assert_close(idx.asnumpy(), a.argmax(1).astype(np.int64), 0, 0, "ops.max indices")
    assert_close(st.asnumpy(), np.stack([a, a], -1), 0, 0, "stack")
    assert sq.shape == (2, 3) and ed.shape == (2, 3, 1)
    assert [p.shape for p in parts] == [(3,), (3,), (1,)]
    assert tr.shape == (3, 2)
    assert_close(bc.asnumpy(), np.broadcast_to(v, (2, 3)), 0, 0, "broadcast_to")
    assert_close(wh.asnumpy(), np.where(a > 0, a, 0), 0, 0, "where")
    assert ar_i.dtype is dt.int64 and ar_f.dtype is dt.float32
    assert_close(oh.asnumpy(), np.eye(3, dtype=np.float32)[[1, 0]], 0, 0, "one_hot")


def _wrappers(A_, V, AT, A3, R7, I2):
    """The functional wrappers test_functional_wrappers checks, in one function (compiled in
    GRAPH_MODE)."""
    return (ms.ops.matmul(A_, V), ms.ops.matmul(V, AT), ms.ops.matmul(V, V), A_ @ AT,
            ms.ops.sum(A_, (), False), ms.ops.sum(A_, [0, 1], True), ms.ops.max(A_, 1),
            ms.ops.stack([A_, A_], -1), ms.ops.squeeze(A3), ms.ops.expand_dims(A_, -1),
            ms.ops.split(R7, 3), ms.ops.transpose(A_, (-1, 0)), ms.ops.broadcast_to(V, (2, -1)),
            ms.ops.where(A_ > 0, A_, 0.0), ms.ops.arange(5), ms.ops.arange(0.0, 1.0, 0.25),
            ms.ops.one_hot(I2, 3, 1.0, 0.0))


# ---------------------------------------------------------------- the references themselves -----
_S2 = math.sqrt(2.0)
HAND = [  # (op, args, attrs, expected): values computed by hand / from tables
    ("sin", ([0.0, math.pi / 2, math.pi / 6],), {}, [0.0, 1.0, 0.5]),
    ("exp", ([0.0, 1.0, -1.0],), {}, [1.0, math.e, 1 / math.e]),
    ("log", ([1.0, math.e, 0.0],), {}, [0.0, 1.0, -np.inf]),
    ("sqrt", ([4.0, 2.0, 0.0],), {}, [2.0, _S2, 0.0]),
    ("rsqrt", ([4.0, 0.25],), {}, [0.5, 2.0]),
    ("sigmoid", ([0.0, math.log(3.0)],), {}, [0.5, 0.75]),
    ("softplus", ([0.0, 50.0, -50.0],), {}, [math.log(2.0), 50.0, math.exp(-50.0)]),
    ("erf", ([0.0, 0.5, -1.0],), {}, [0.0, 0.5204998778130465, -0.8427007929497149]),
    ("gelu", ([1.0, -1.0, 0.0],), {"approximate": "none"},
     [0.8413447460685429, -0.15865525393145707, 0.0]),
    ("gelu", ([1.0],), {"approximate": "tanh"}, [0.8411919906082768]),
    ("round", ([0.5, 1.5, 2.5, -0.5, 2.6],), {}, [0.0, 2.0, 2.0, -0.0, 3.0]),   # half to even
    ("floor", ([-1.5, 1.5],), {}, [-2.0, 1.0]),
    ("sign", ([-3.0, 0.0, 2.0],), {}, [-1.0, 0.0, 1.0]),
    ("relu", ([-1.0, 0.0, 2.0],), {}, [0.0, 0.0, 2.0]),
]
HAND2 = [  # binary and structured ops: (op, args, attrs, expected)
    ("mod", ([-7, 7, -7, 7], [3, -3, -3, 3]), {}, [2, -2, -1, 1]),             # sign of divisor
    ("floor_div", ([-7, 7, -7, 7], [2, -2, -2, 2]), {}, [-4, -4, 3, 3]),
    ("mod", ([-7.5, 7.5], [2.0, -2.0]), {}, [0.5, -0.5]),
    ("pow", ([2.0, 4.0, 9.0], [3.0, 0.5, -0.5]), {}, [8.0, 2.0, 1 / 3]),
    ("pow", ([2, 3], [10, 0]), {}, [1024, 1]),
    ("div", ([1, 3], [2, 4]), {}, [0.5, 0.75]),                                 # int -> float32
    ("maximum", ([1.0, np.nan], [np.nan, 1.0]), {}, [np.nan, np.nan]),
    ("left_shift", ([1, 3], [4, 1]), {}, [16, 6]),
    ("right_shift", ([-16, 17], [2, 1]), {}, [-4, 8]),                          # arithmetic
    ("bitwise_xor", ([12, 5], [10, 5]), {}, [6, 0]),
    ("matmul", ([[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]), {},
     [[19.0, 22.0], [43.0, 50.0]]),
    ("matmul", ([[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]), {"transpose_a": True},
     [[26.0, 30.0], [38.0, 44.0]]),
    ("sum", ([[1, 2, 3], [4, 5, 6]],), {"axis": 1}, [6, 15]),
    ("mean", ([[1, 2], [3, 5]],), {"axis": None}, 2.75),
    ("prod", ([[2.0, 0.0, 3.0], [1.0, 4.0, 5.0]],), {"axis": -1, "keep_dims": True},
     [[0.0], [20.0]]),
    ("logsumexp", ([0.0, 0.0],), {"axis": 0}, math.log(2.0)),
    ("logsumexp", ([1000.0, 1000.0],), {"axis": 0}, 1000.0 + math.log(2.0)),     # stable
    ("softmax", ([0.0, math.log(3.0)],), {"axis": -1}, [0.25, 0.75]),
    ("log_softmax", ([0.0, 0.0],), {"axis": 0}, [-math.log(2.0)] * 2),
    ("argmax", ([[1, 5, 5], [7, 0, 7]],), {"axis": 1}, [1, 0]),                 # first wins
    ("argmin", ([3, 1, 1],), {}, 1),
    ("one_hot", ([2, 0],), {"depth": 3, "on_value": 1.0, "off_value": 0.0},
     [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
    ("tile", ([1, 2],), {"reps": (2, 2)}, [[1, 2, 1, 2], [1, 2, 1, 2]]),
    ("scatter_add", ([0.0, 0.0, 0.0], [0, 2, 0], [1.0, 2.0, 3.0]), {}, [4.0, 0.0, 2.0]),
    ("strided_slice", ([0, 1, 2, 3, 4],), {"begin": (4,), "end": (-1,), "strides": (-2,)},
     [4, 2, 0]),
    ("arange", (), {"start": 1, "stop": 2, "step": 0.25, "dtype": dt.float32},
     [1.0, 1.25, 1.5, 1.75]),
]


def _as_np(v, int_default=np.int64):
    a = np.asarray(v)
    if a.dtype == np.float64:
        return a
    if a.dtype.kind == "i":
        return a.astype(int_default)
    return a


@pytest.mark.parametrize("opname,args,attrs,expected",
                         HAND + HAND2,
                         ids=lambda v: v if isinstance(v, str) else None)
def test_reference_hand_values(opname, args, attrs, expected):
    """The numpy references agree with hand-computed values (float64 and int64 inputs)."""
    arrays = [_as_np(a) for a in args]
    got = np.asarray(ref_op(opname, arrays, attrs))
    want = np.asarray(expected, dtype=np.float64)
    assert got.shape == want.shape, f"{opname}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-12, atol=1e-300,
                               err_msg=f"{opname} reference")


def test_hand_values_through_minispore(backend, mode):
    """The same hand values, computed by minispore on the backend (in float32 on the simulated
    Ascend, which has no float64)."""
    for opname, args, attrs, expected in HAND + HAND2:
        arrays = [_as_np(a) for a in args]
        rtol = 1e-12
        if backend == "Ascend":
            arrays = [a.astype(np.float32) if a.dtype == np.float64 else a for a in arrays]
            rtol = 1e-2 if opname == "matmul" else 2e-6
        out = run_op(opname, arrays, attrs)
        np.testing.assert_allclose(out.asnumpy().astype(np.float64),
                                   np.asarray(expected, np.float64), rtol=rtol, atol=1e-300,
                                   err_msg=f"{opname} on {backend}")


def test_every_case_has_a_reference_check_or_matrix():
    """Every declared op is exercised by the matrix (redundant with test_registry, but keeps this
    file self-checking when run alone)."""
    assert set(OPDB) == set(REGISTRY)


@pytest.mark.parametrize("opname,attrs", [("sum", {"axis": -1}), ("softmax", {"axis": -1}),
                                          ("argmax", {"axis": -1})])
def test_zero_d_tensor_accepts_axis_minus_one(backend, mode, opname, attrs):
    x = np.array(1.5, np.float32)
    out = run_op(opname, (x,), attrs)
    assert out.shape == ()
    assert_close(out.asnumpy(), ref_op(opname, (x,), {**attrs, "axis": 0}), 0, 0, opname)
