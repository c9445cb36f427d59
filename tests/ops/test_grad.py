"""Gradients (notes/testing.md 6.3): for every differentiable op,

- float64 finite differences of the op's numpy reference against minispore's VJP (ms.grad with a
  sensitivity): the directional check of JAX's check_grads, <c, J t> vs <J^T c, t>, on every
  sample, plus the full Jacobian when the sample is tiny (<= 16 elements in and out);
- float32 (and float16 for a few ops) gradients against the float64 gradients on the same values;
- grad of grad (order 2) for every differentiable op (the elementwise and matmul families, and
  the rest too, since every bprop is written in minispore ops): minispore's second-order VJP
  against finite differences of its (already checked) first-order gradient.
"""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY, apply
from minispore.core.pynative import TAPE

from helpers import (ASCEND_CUBE_GRAD_TOL, ASCEND_F64, CUBE_OPS, FD_ATOL, FD_EPS, FD_RTOL, GRAD_TOL,
                     as_tuple, ascend_rejects, assert_close, fd_directional, fd_jacobian,
                     infer_meta, matrix, ref_op)
from minispore.core.errors import DTypeError
from opdb import CASES, rng_for

GRAD_CASES = [c for c in CASES if c.grad and c.op.differentiable]
ORDER2_CASES = [c for c in GRAD_CASES if c.order2]
TINY = 16


@pytest.fixture(autouse=True)
def _tape_is_clean():
    yield
    assert TAPE.depth == 0, "a gradient computation left the tape active"


def _grad_samples(case, rng):
    return [s for s in case.samples(rng, dt.float64) if s.grad and s.positions()]


def _op_fn(case, sample, positions):
    """f(*differentiated tensors) with the other inputs fixed: the op applied to the sample."""
    op = REGISTRY[case.name]
    fixed = [ms.Tensor(np.asarray(a)) for a in sample.args]

    def f(*xs):
        args = list(fixed)
        for p, x in zip(positions, xs):
            args[p] = x
        return apply(op, *args, **sample.attrs)
    return f


def _np_fn(case, sample, positions):
    """The same function on the float64 numpy reference."""
    def f(*xs):
        args = [np.asarray(a) for a in sample.args]
        for p, x in zip(positions, xs):
            args[p] = x
        return tuple(np.asarray(o, np.float64) for o in as_tuple(ref_op(case.name, args,
                                                                         sample.attrs)))
    return f


def _sens(outs):
    t = tuple(ms.Tensor(np.asarray(c)) for c in outs)
    return t[0] if len(t) == 1 else t


def vjp(f, xs, cts):
    """minispore's VJP of f at xs (numpy arrays) with cotangents cts: a tuple of numpy grads."""
    g = ms.grad(f, grad_position=tuple(range(len(xs))), sens_param=True)(
        *[ms.Tensor(np.asarray(x)) for x in xs], _sens(cts))
    gs = as_tuple(g)
    assert len(gs) == len(xs)
    return tuple(x.asnumpy() for x in gs), gs


def _ascend_refuses_float64(case, rng) -> None:
    """The simulated Ascend has no float64: a float64 gradient raises the op's clear error (its
    float32 gradients are checked against the CPU's float64 ones in the low-precision test)."""
    s = _grad_samples(case, rng)[0]
    pos = s.positions()
    with pytest.raises(DTypeError, match=ASCEND_F64):
        vjp(_op_fn(case, s, pos), [np.asarray(s.args[p], np.float64) for p in pos],
            [_draw(rng, sh) for sh in _out_shapes(case, s)])


def _out_shapes(case, sample):
    return [np.shape(o) for o in as_tuple(ref_op(case.name, sample.args, sample.attrs))]


def _draw(rng, shape):
    return rng.standard_normal(shape)


def _check_directional(case, sample, label, rng):
    pos = sample.positions()
    xs = [np.asarray(sample.args[p], np.float64) for p in pos]
    cts = [_draw(rng, s) for s in _out_shapes(case, sample)]
    ts = [_draw(rng, x.shape) for x in xs]
    grads, raw = vjp(_op_fn(case, sample, pos), xs, cts)
    for p, x, g, r in zip(pos, xs, grads, raw):
        assert r.dtype is dt.float64, f"{label}: grad of input {p} has dtype {r.dtype}"
        assert g.shape == x.shape, f"{label}: grad of input {p} has shape {g.shape}, input " \
                                   f"{x.shape}"
    fd = fd_directional(_np_fn(case, sample, pos), xs, ts)
    lhs = sum(float(np.sum(c * d)) for c, d in zip(cts, fd))
    rhs = sum(float(np.sum(g * t)) for g, t in zip(grads, ts))
    assert abs(lhs - rhs) <= FD_ATOL + FD_RTOL * abs(lhs), \
        f"{label}: <c, J t> by finite differences = {lhs!r}, <J^T c, t> by minispore = {rhs!r}"
    return xs, pos


def _check_jacobian(case, sample, label, xs, pos):
    n_in = sum(x.size for x in xs)
    out_shapes = _out_shapes(case, sample)
    n_out = sum(int(np.prod(s, dtype=np.int64)) for s in out_shapes)
    if not (0 < n_in <= TINY and 0 < n_out <= TINY):
        return
    f_np = _np_fn(case, sample, pos)
    f = _op_fn(case, sample, pos)
    rows = []
    for k in range(n_out):
        flat = np.zeros(n_out)
        flat[k] = 1.0
        cts, start = [], 0
        for s in out_shapes:
            n = int(np.prod(s, dtype=np.int64))
            cts.append(flat[start:start + n].reshape(s))
            start += n
        grads, _ = vjp(f, xs, cts)
        rows.append(np.concatenate([g.ravel() for g in grads]))
    j_ad = np.stack(rows)
    j_fd = np.concatenate([fd_jacobian(f_np, xs, i) for i in range(len(xs))], axis=1)
    assert_close(j_ad, j_fd, FD_RTOL, FD_ATOL, f"{label}: Jacobian (rows: outputs, cols: inputs)")


@pytest.mark.parametrize("case,backend,mode", matrix(GRAD_CASES, test="grad", levels=True),
                         indirect=["backend"])
def test_grad_finite_differences(case, backend, mode):
    rng = rng_for("grad", case.name)
    samples = _grad_samples(case, rng)
    assert samples, f"{case.name}: no differentiable float64 sample"
    if backend == "Ascend":
        return _ascend_refuses_float64(case, rng)
    failures = []
    for s in samples:
        label = f"{case.name} [{backend}/{mode}/float64] sample {s.desc!r}"
        try:
            xs, pos = _check_directional(case, s, label, rng)
            _check_jacobian(case, s, label, xs, pos)
        except AssertionError as e:
            failures.append(str(e))
        except Exception as e:
            failures.append(f"{label}: raised {type(e).__name__}: {e}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("case,backend,mode,dtype",
                         matrix(GRAD_CASES, lambda c: c.grad_dtypes, "grad_lowp"),
                         indirect=["backend"])
def test_grad_low_precision_matches_float64(case, backend, mode, dtype):
    """The gradient in `dtype` equals the float64 gradient at the same (rounded) values."""
    rng = rng_for("grad_lowp", case.name, dtype)
    failures = []
    for s in _grad_samples(case, rng):
        label = f"{case.name} [{backend}/{mode}/{dtype}] sample {s.desc!r}"
        try:
            pos = s.positions()
            low = [np.asarray(a).astype(dtype.np) if np.asarray(a).dtype == np.float64 else a
                   for a in s.args]
            high = [a.astype(np.float64) if np.asarray(a).dtype == dtype.np else a for a in low]
            outs = _out_shapes(case, s)
            cts_low = [_draw(rng, sh).astype(dtype.np) for sh in outs]
            cts_high = [c.astype(np.float64) for c in cts_low]
            s_low = type(s)(tuple(low), s.attrs, s.desc)
            s_high = type(s)(tuple(high), s.attrs, s.desc)
            meta = infer_meta(case.name, low, s.attrs)
            metas = (meta,) if hasattr(meta, "dtype") else meta
            if ascend_rejects(backend, [m.dtype for m in metas]):     # e.g. a cast to float64
                with pytest.raises(DTypeError, match=ASCEND_F64):
                    vjp(_op_fn(case, s_low, pos), [low[p] for p in pos], cts_low)
                continue
            g_low, raw = vjp(_op_fn(case, s_low, pos), [low[p] for p in pos], cts_low)
            if backend == "Ascend":              # no float64 there: the reference is the CPU's
                ms.set_context(device_target="CPU")
            try:
                g_high, _ = vjp(_op_fn(case, s_high, pos), [high[p] for p in pos], cts_high)
            finally:
                ms.set_context(device_target=backend)
            for p, gl, gh, r in zip(pos, g_low, g_high, raw):
                assert r.dtype is dtype, f"{label}: grad of input {p} is {r.dtype}, not {dtype}"
                tol = GRAD_TOL[dtype]
                if backend == "Ascend" and case.name in CUBE_OPS:
                    tol = max(tol, ASCEND_CUBE_GRAD_TOL)     # fp16 Cube operands
                scale = max(1.0, float(np.max(np.abs(gh)))) if gh.size else 1.0
                assert_close(gl.astype(np.float64), gh, tol, tol * scale,
                             f"{label}: grad of input {p} vs float64")
        except AssertionError as e:
            failures.append(str(e))
        except Exception as e:
            failures.append(f"{label}: raised {type(e).__name__}: {e}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("case,backend,mode", matrix(ORDER2_CASES, test="grad2"),
                         indirect=["backend"])
def test_grad_of_grad(case, backend, mode):
    """order 2: d/dx <grad_x <f(x), c>, c2> by minispore vs finite differences of grad_x."""
    rng = rng_for("grad2", case.name)
    if backend == "Ascend":
        return _ascend_refuses_float64(case, rng)
    failures = []
    for s in _grad_samples(case, rng):
        label = f"{case.name} [{backend}/{mode}/float64] order-2 sample {s.desc!r}"
        try:
            pos = s.positions()
            xs = [np.asarray(s.args[p], np.float64) for p in pos]
            if any(x.size == 0 for x in xs):
                continue
            f = _op_fn(case, s, pos)
            cts = _sens([_draw(rng, sh) for sh in _out_shapes(case, s)])
            first = ms.grad(f, grad_position=tuple(range(len(xs))), sens_param=True)

            def g(*ys):                                  # the first-order VJP, in minispore
                return first(*ys, cts)

            def g_np(*ys):
                return tuple(t.asnumpy() for t in as_tuple(g(*[ms.Tensor(y) for y in ys])))

            c2 = [_draw(rng, x.shape) for x in xs]
            ts = [_draw(rng, x.shape) for x in xs]
            grads2, _ = vjp(g, xs, c2)
            fd = fd_directional(g_np, xs, ts, FD_EPS)
            lhs = sum(float(np.sum(c * d)) for c, d in zip(c2, fd))
            rhs = sum(float(np.sum(gg * t)) for gg, t in zip(grads2, ts))
            assert abs(lhs - rhs) <= FD_ATOL + FD_RTOL * abs(lhs), \
                f"{label}: <c2, d(grad) t> by finite differences = {lhs!r}, by minispore's " \
                f"grad of grad = {rhs!r}"
        except AssertionError as e:
            failures.append(str(e))
        except Exception as e:
            failures.append(f"{label}: raised {type(e).__name__}: {e}")
    assert not failures, "\n\n".join(failures)


# ---------------------------------------------------------------- rules with a stated choice ----
def test_stop_gradient_blocks(backend, mode):
    x = ms.Tensor(np.array([1.0, -2.0, 3.0], np.float32))
    g = ms.grad(lambda x: ms.ops.sum(ms.ops.stop_gradient(x) * x))(x)
    assert_close(g.asnumpy(), x.asnumpy(), 0, 0, "d/dx sum(stop_gradient(x) * x) = x")
    g0 = ms.grad(lambda x: ms.ops.sum(ms.ops.stop_gradient(x)))(x)
    assert_close(g0.asnumpy(), np.zeros(3, np.float32), 0, 0, "nothing flows through stop_gradient")


@pytest.mark.parametrize("opname", ["max", "min"])
def test_reduction_ties_split_the_gradient(backend, mode, opname):
    """max/min split the gradient evenly between tied extrema (the documented choice, as JAX)."""
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]], np.float32)
    op = REGISTRY[opname]
    g = ms.grad(lambda t: apply(op, t, axis=1, keep_dims=False))(ms.Tensor(x))
    want = {"max": [[0, 0.5, 0.5], [1, 0, 0]], "min": [[1, 0, 0], [0, 0.5, 0.5]]}[opname]
    assert_close(g.asnumpy(), np.array(want, np.float32), 0, 0, f"{opname} ties")


def test_prod_gradient_with_zeros(backend, mode):
    """d prod / d x_j is the product of the others, also where x has one or two zeros."""
    x = np.array([[2.0, 0.0, 3.0], [0.0, 5.0, 0.0], [1.0, 2.0, 4.0]], np.float32)
    g = ms.grad(lambda t: ms.ops.prod(t, 1))(ms.Tensor(x))
    want = [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 4.0, 2.0]]
    assert_close(g.asnumpy(), np.array(want, np.float32), 0, 0, "prod grad with zeros")


def test_grad_cases_cover_every_differentiable_op():
    for name, op in REGISTRY.items():
        if op.differentiable:
            case = next(c for c in CASES if c.name == name)
            assert case.grad or case.grad_skip, \
                f"{name} is differentiable but its OpCase neither checks gradients nor says why"


def test_int_inputs_get_no_gradient(backend, mode):
    """Integer inputs are not differentiated: the grad of an int index is zeros of its dtype."""
    x = ms.Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    idx = ms.Tensor(np.array([2, 0], np.int32))
    gx, gi = ms.grad(lambda x, i: ms.ops.sum(ms.ops.gather(x, i, 0)), grad_position=(0, 1))(x, idx)
    assert_close(gx.asnumpy(), np.array([1.0, 0.0, 1.0], np.float32), 0, 0, "gather grad")
    assert gi.dtype is dt.int32 and not gi.asnumpy().any()


def _max_sum(x, y):
    return ms.ops.maximum(x, y).sum()


def _min_sum(x, y):
    return ms.ops.minimum(x, y).sum()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_maximum_minimum_share_the_gradient_of_a_tie(mode):
    # MindSpore 2.10: grad of ops.maximum(x, -1.).sum() at [-2, 0.5, 3, 0, -1] is
    # [0, 1, 1, 1, 0.5] and of ops.minimum(x, 0.5).sum() [1, 0.5, 0, 1, 1]: where x == y
    # each input gets half
    x = ms.Tensor(np.array([-2.0, 0.5, 3.0, 0.0, -1.0], np.float32))
    gx, gy = ms.grad(_max_sum, grad_position=(0, 1))(x, ms.Tensor(np.float32(-1.0)))
    assert gx.asnumpy().tolist() == [0, 1, 1, 1, 0.5] and gy.asnumpy().item() == 1.5
    gx, gy = ms.grad(_min_sum, grad_position=(0, 1))(x, ms.Tensor(np.float32(0.5)))
    assert gx.asnumpy().tolist() == [1, 0.5, 0, 1, 1] and gy.asnumpy().item() == 1.5


def _clamp_sum(x, lo, hi):
    return x.clamp(lo, hi).sum()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_clamp_gradient_keeps_ties_and_reaches_the_bounds(mode):
    # MindSpore 2.10: grad of x.clamp(-1., 0.5).sum() (and x.clip) at [-2, 0.5, 3, 0, -1] is
    # [0, 1, 0, 1, 1] (a tie with a bound is inside, unlike ops.maximum's shared tie); Tensor
    # bounds get 1 each (one element below, one above); with min 1 > max 0.5 every element is
    # max: x gets zeros, min 0 and max 5
    x = ms.Tensor(np.array([-2.0, 0.5, 3.0, 0.0, -1.0], np.float32))
    lo, hi = ms.Tensor(np.float32(-1.0)), ms.Tensor(np.float32(0.5))
    gx, glo, ghi = ms.grad(_clamp_sum, grad_position=(0, 1, 2))(x, lo, hi)
    assert gx.asnumpy().tolist() == [0, 1, 0, 1, 1]
    assert (glo.asnumpy().item(), ghi.asnumpy().item()) == (1, 1)
    gx, glo, ghi = ms.grad(_clamp_sum, grad_position=(0, 1, 2))(x, ms.Tensor(np.float32(1.0)), hi)
    assert not gx.asnumpy().any() and (glo.asnumpy().item(), ghi.asnumpy().item()) == (0, 5)
    assert ms.grad(lambda t: t.clip(-1.0, 0.5).sum())(x).asnumpy().tolist() == [0, 1, 0, 1, 1]
