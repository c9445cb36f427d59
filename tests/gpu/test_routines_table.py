"""The GPU backend's kernel table for the non-template primitives (backends/gpu/routines.py,
routines_nn.py) run with numpy as its array module, against every OpCase's samples and the ops'
numpy references: a check of the table's logic (axes, dtypes and their bfloat16/float16 storage,
casts, padding, the random streams...) on a machine without a GPU. It never serves
device_target="GPU": the backend itself always passes cupy (tests marked `gpu` run that)."""
from __future__ import annotations

import numpy as np
import pytest

from minispore.backends.gpu import routines
from minispore.backends.gpu import storage as S
from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY, Meta, attrs_dict, normalize_attrs

from helpers import as_tuple, assert_close, dtype_id, forward_tol
from opdb import CASES, rng_for


class HostCtx:
    """What the backend's kernels see of it: host checks allowed, constants as they are."""
    checks = True

    @staticmethod
    def const(a):
        return np.asarray(a)


def _run(name, args, attrs, ctx=HostCtx):
    op = REGISTRY[name]
    kw = attrs_dict(normalize_attrs(op, attrs))
    metas = tuple(Meta(tuple(np.shape(a)), dt.to_dtype(np.asarray(a).dtype)) for a in args)
    out = op.infer(*metas, **kw)
    k = routines.build(np, ctx, name, metas, kw, out)
    with np.errstate(all="ignore"):
        r = k(*[S.to_storage_host(np.array(a, order="C")) for a in args])
    outs = (out,) if isinstance(out, Meta) else tuple(out)
    return [S.from_storage_host(np.asarray(x), m.dtype) for x, m in zip(as_tuple(r), outs)], outs


TABLE_CASES = [c for c in CASES if c.name in routines.TABLE]


def test_the_table_covers_every_non_template_primitive():
    want = {n for n, op in REGISTRY.items() if op.scalar is None}
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


def test_gather_checks_bounds_unless_a_graph_is_captured():
    x, bad = np.arange(6.0, dtype=np.float32).reshape(3, 2), np.array([3])
    with pytest.raises(IndexError, match=r"^gather: index out of range for axis 0 of size 3"):
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
