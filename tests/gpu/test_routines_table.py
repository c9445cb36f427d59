"""The GPU backend's kernel table for the non-template primitives (backends/gpu/routines.py,
routines_nn.py) run with numpy as its array module, against every OpCase's samples and the ops'
numpy references: a check of the table's logic (axes, dtypes and their bfloat16/float16 storage,
casts, padding, the random streams...) on a machine without a GPU. It never serves
device_target="GPU": the backend itself always passes cupy (tests marked `gpu` run that).
The array module is numpy under CuPy's restrictions that numpy lacks (`CupyLike`): no bfloat16
arrays (constants, outputs: device storage is uint16 bits), add.at (cupyx.scatter_add) only
on the dtypes CuPy's atomics take, no concatenate of more than 8 arrays (CuPy uploads a
pointer table from the host then, which a captured CUDA graph would replay stale), no axis on a
0-d array (numpy's reductions take axis 0 or -1 there; CuPy's raise AxisError: seen on an H200)."""
from __future__ import annotations

import numpy as np
import pytest

from minispore.backends.gpu import matmul, routines
from minispore.backends.gpu import storage as S
from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY, Meta, attrs_dict, normalize_attrs, primitives

from helpers import as_tuple, assert_close, dtype_id, forward_tol
from opdb import CASES, rng_for


# the dtypes cupy's add.at (its scatter_add kernel, atomicAdd) accepts; anything else TypeErrors
ADD_AT_DTYPES = {np.dtype(t) for t in (np.int32, np.uint32, np.uint64, np.float16, np.float32,
                                       np.float64)}


def _no_bf16(a, what):
    a = np.asarray(a)
    assert a.dtype.name != "bfloat16", f"{what}: CuPy has no bfloat16 arrays (store uint16 bits)"
    return a


class _AddUfunc:
    def __call__(self, *args, **kw):
        return np.add(*args, **kw)

    @staticmethod
    def at(a, indices, b=None):
        if np.asarray(a).dtype not in ADD_AT_DTYPES:
            raise TypeError(f"cupy's add.at (scatter_add) does not take {np.asarray(a).dtype}")
        np.add.at(a, indices, b)


AxisError = getattr(np, "exceptions", np).AxisError          # numpy < 1.25: np.AxisError
# the array module's functions that take an axis and, in CuPy, reject one on a 0-d array
AXIS_FUNCTIONS = {"sum", "prod", "max", "min", "amax", "amin", "mean", "argmax", "argmin", "any",
                  "all", "cumsum", "cumprod", "sort", "argsort", "flip"}


def _no_axis_on_0d(fn, name):
    def checked(a, *args, **kw):
        axis = kw.get("axis", args[0] if args else None)
        if np.ndim(a) == 0 and axis is not None and axis != ():
            raise AxisError(f"cupy.{name}: axis {axis} is out of bounds for "
                                          f"array of dimension 0")
        return fn(a, *args, **kw)
    return checked


class CupyLike:
    """numpy as the routines' array module, with the restrictions of cupy listed above."""
    add = _AddUfunc()

    def __getattr__(self, name):
        fn = getattr(np, name)
        return _no_axis_on_0d(fn, name) if name in AXIS_FUNCTIONS else fn

    @staticmethod
    def concatenate(arrays, *a, **kw):
        assert len(arrays) <= 8, "cupy.concatenate of > 8 arrays uploads a host pointer table"
        return np.concatenate(arrays, *a, **kw)


XP = CupyLike()


class HostCtx:
    """What the backend's kernels see of it: host checks allowed, constants as they are (never
    bfloat16: the runtime uploads them with cupy.asarray)."""
    checks = True

    @staticmethod
    def const(a):
        return _no_bf16(a, "ctx.const")


def _run(name, args, attrs, ctx=HostCtx):
    op = REGISTRY[name]
    kw = attrs_dict(normalize_attrs(op, attrs))
    metas = tuple(Meta(tuple(np.shape(a)), dt.to_dtype(np.asarray(a).dtype)) for a in args)
    out = op.infer(*metas, **kw)
    k = routines.build(XP, ctx, name, metas, kw, out)
    with np.errstate(all="ignore"):
        r = k(*[S.to_storage_host(np.array(a, order="C")) for a in args])
    outs = (out,) if isinstance(out, Meta) else tuple(out)
    for x, m in zip(as_tuple(r), outs):         # device storage: bfloat16 as its uint16 bits
        assert np.asarray(x).dtype == S.storage_np(m.dtype), \
            f"{name}: output stored as {np.asarray(x).dtype}, the device keeps {m.dtype} as " \
            f"{S.storage_np(m.dtype)}"
    return [S.from_storage_host(np.asarray(x), m.dtype) for x, m in zip(as_tuple(r), outs)], outs


TABLE_CASES = [c for c in CASES if c.name in routines.TABLE]


def test_the_table_covers_every_non_template_primitive():
    want = {op.name for op in primitives() if op.scalar is None}
    assert set(routines.TABLE) == want


@pytest.mark.parametrize("case,dtype", [pytest.param(c, d, id=f"{c.name}-{dtype_id(d)}")
                                        for c in TABLE_CASES for d in c.dtypes])
def test_table_matches_the_reference(case, dtype):
    op = case.op
    bad = []
    for s in case.samples(rng_for("gpu-table", case.name, str(dtype)), dtype):
        full = dict(op.attrs, **s.attrs)
        with np.errstate(all="ignore"):
            want = as_tuple(op.ref(*[np.asarray(a) for a in s.args], **full))
        got, metas = _run(case.name, s.args, s.attrs)
        for k, (g, e, m) in enumerate(zip(got, want, metas)):
            what = f"{case.name} {dtype} {s.desc!r} output {k}"
            if g.dtype != m.dtype.np or g.shape != tuple(m.shape) or not g.flags.c_contiguous:
                bad.append(f"{what}: got {g.dtype}{g.shape} (contiguous "
                           f"{g.flags.c_contiguous}), infer says {m.dtype}{m.shape}")
                continue
            rtol, atol = forward_tol(m.dtype, case.accum, case.tol)
            try:
                assert_close(g, np.asarray(e), rtol, atol, what)
            except AssertionError as exc:
                bad.append(str(exc).splitlines()[0])
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name,args,attrs", [
    ("cast", (np.array([1.0, -2.7, 3e38, np.nan, 1 + 2 ** -8], np.float32),),
     {"dtype": dt.bfloat16}),
    ("cast", (np.array([1.5, -2.5, 7.0], dt.bfloat16.np),), {"dtype": dt.int32}),
    ("matmul", (np.ones((2, 3), dt.bfloat16.np), np.ones((3, 2), dt.bfloat16.np)), {}),
    ("sum", (np.arange(6, dtype=np.float32).astype(dt.bfloat16.np).reshape(2, 3),),
     {"axis": 1}),
    ("softmax", (np.array([[1.0, 2.0, 3.0]], np.float16),), {"axis": -1}),
    ("concat", (np.ones(2, dt.bfloat16.np), np.zeros(3, np.float32)), {"axis": 0}),
    ("scatter_add", (np.zeros(4, np.float16), np.array([1, 1, 3]), np.ones(3, np.float16)),
     {"axis": 0}),
    ("fill", (), {"shape": (2, 2), "value": 0.1, "dtype": dt.bfloat16}),
    ("max", (np.array([1.0, 3.0, 2.0], dt.bfloat16.np),), {"axis": 0}),
])
def test_half_storage_paths(name, args, attrs):
    """bfloat16 (uint16 bits on the device) and float16 through the routines that compute."""
    op = REGISTRY[name]
    full = attrs_dict(normalize_attrs(op, attrs))
    with np.errstate(all="ignore"):
        want = as_tuple(op.ref(*args, **full))
    got, metas = _run(name, args, attrs)
    for g, e, m in zip(got, want, metas):
        assert g.dtype == m.dtype.np
        rtol, atol = forward_tol(m.dtype, True)
        assert_close(g, np.asarray(e), rtol, atol, f"{name} {attrs}")


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.int16, np.uint8, np.bool_])
def test_scatter_add_on_dtypes_cupy_atomics_lack(dtype):
    """cupy's add.at takes int32/uint32/uint64/float16/32/64 only: int64 adds as uint64 bits
    (the same two's-complement sum), small ints and bool through int32 (numpy's wrap-around,
    bool's `or`), repeated indices included."""
    x = np.array([[1, 0, 3], [120, 5, 0]]).astype(dtype)
    idx = np.array([2, 0, 2, 2])
    upd = np.array([[7, 1, 0, 100], [9, 0, 1, 60]]).astype(dtype)
    want = REGISTRY["scatter_add"].ref(x, idx, upd, axis=1)
    got, _ = _run("scatter_add", (x, idx, upd), {"axis": 1})
    assert_close(got[0], want, 0, 0, f"scatter_add {np.dtype(dtype)}")


def test_concat_of_many_inputs():
    xs = tuple(np.full((2, k + 1), k, np.float32) for k in range(11))
    got, _ = _run("concat", xs, {"axis": 1})
    assert_close(got[0], np.concatenate(xs, axis=1), 0, 0, "concat of 11")


class InGraph(HostCtx):
    """A context while a CUDA graph is captured (or in its warm-up): float matmuls must go
    through ctx.gemm (CuPy refuses cuBLAS on a capturing stream), with 3-D contiguous operands."""
    in_graph, checks, calls = True, False, 0

    @classmethod
    def gemm(cls, a, b):
        assert a.ndim == b.ndim == 3 and a.flags.c_contiguous and b.flags.c_contiguous
        assert a.dtype == b.dtype and a.dtype.kind == "f"
        cls.calls += 1
        return np.matmul(a, b)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                                   ((5, 1, 2, 3), (4, 3, 2)), ((2, 0, 3), (3, 4)),
                                   ((2, 3, 0), (0, 4)), ((1, 2, 3), (6, 3, 1))])
def test_matmul_via_the_gemm_kernel_is_numpys_matmul(sa, sb):
    r = np.random.default_rng(3)
    a, b = r.standard_normal(sa), r.standard_normal(sb).astype(np.float32)
    got = matmul.matmul_via(XP, a, b, InGraph.gemm)
    want = np.matmul(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,args,attrs", [
    ("matmul", (np.ones((2, 3), np.float32), np.arange(12.0).reshape(4, 3)),
     {"transpose_b": True}),
    ("matmul", (np.ones((2, 3), dt.bfloat16.np), np.ones((3, 2), dt.bfloat16.np)), {}),
    ("matmul", (np.arange(6, dtype=np.int32).reshape(2, 3), np.ones((3, 2), np.int32)), {}),
    ("conv2d", (np.ones((1, 2, 5, 5), np.float32), np.ones((4, 2, 3, 3), np.float32)),
     {"group": 1}),
    ("conv2d_backprop_input", (np.ones((1, 4, 3, 3), np.float32),
                               np.ones((4, 2, 3, 3), np.float32)),
     {"input_shape": (1, 2, 5, 5)}),
    ("conv2d_backprop_filter", (np.ones((1, 2, 5, 5), np.float32),
                                np.ones((1, 4, 3, 3), np.float32)),
     {"filter_shape": (4, 2, 3, 3)}),
])
def test_matmuls_in_a_captured_graph_use_the_gemm_kernel(name, args, attrs):
    op = REGISTRY[name]
    full = attrs_dict(normalize_attrs(op, attrs))
    with np.errstate(all="ignore"):
        want = as_tuple(op.ref(*args, **full))
    before = InGraph.calls
    got, metas = _run(name, args, attrs, InGraph)
    assert (InGraph.calls > before) == (np.asarray(args[0]).dtype.kind != "i")
    for g, e, m in zip(got, want, metas):
        rtol, atol = forward_tol(m.dtype, True)
        assert_close(g, np.asarray(e), rtol, atol, f"{name} in a graph")


@pytest.mark.parametrize("name", ["scatter_add", "scatter_update"])
def test_scatters_check_bounds_like_gather(name):
    x, upd = np.zeros((3, 2), np.float32), np.ones((2, 2), np.float32)
    for bad in (3, -4):
        with pytest.raises(IndexError, match=rf"^{name}: index {bad} is out of range for axis 0 "
                                             rf"of size 3; valid indices are -3 to 2$"):
            _run(name, (x, np.array([0, bad]), upd), {"axis": 0})


def test_gather_checks_bounds_unless_a_graph_is_captured():
    x, bad = np.arange(6.0, dtype=np.float32).reshape(3, 2), np.array([3])
    with pytest.raises(IndexError, match=r"^gather: index 3 is out of range for axis 0 of size 3; "
                                         r"valid indices are -3 to 2$"):
        _run("gather", (x, bad), {"axis": 0})

    class Capturing(HostCtx):
        checks = False                  # inside a capture: no host round trip, no check
    got, _ = _run("gather", (x, np.array([-1, 0])), {"axis": 0}, Capturing)
    np.testing.assert_array_equal(got[0], x[[2, 0]])


def test_random_streams_are_the_references_bits():
    key = np.array([12345, 7], np.int64)
    for name, attrs in (("random_uniform", {"shape": (5, 3), "seed": 3}),
                        ("random_randint", {"shape": (9,), "dtype": dt.int32, "low": -4,
                                            "high": 9, "seed": 1})):
        op = REGISTRY[name]
        full = attrs_dict(normalize_attrs(op, attrs))
        got, _ = _run(name, (key,), attrs)
        np.testing.assert_array_equal(got[0], op.ref(key, **full))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "argmax", "argmin", "sum", "max",
                                  "logsumexp"])
def test_zero_d_input_with_an_axis(name):
    """A 0-d tensor reduced along axis -1 (MindSpore allows it): the routines must not hand CuPy
    an axis of a 0-d array (tests/ops' test_zero_d_tensor_accepts_axis_minus_one failed on an
    H200 for softmax and argmax before)."""
    x = np.array(1.5, np.float32)
    op = REGISTRY[name]
    attrs = {"axis": -1}
    full = attrs_dict(normalize_attrs(op, attrs))
    with np.errstate(all="ignore"):
        want = as_tuple(op.ref(x, **{**full, "axis": 0}))
    got, _ = _run(name, (x,), attrs)
    assert got[0].shape == ()
    assert_close(got[0], np.asarray(want[0]), 0, 0, name)
