"""Shared test helpers: the tolerance table (notes/testing.md 6.8), assert_close with readable
failure messages, input generators (domains) and finite differences in float64."""
from __future__ import annotations

import contextlib

import numpy as np

import minispore as ms
from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY, Meta, apply
from minispore.core.tensor import Tensor

# ---------------------------------------------------------------- tolerances --------------------
# forward (rtol, atol) per dtype: torch's table; float32 reductions/matmul get the looser row.
FORWARD_TOL = {
    dt.float64: (1e-7, 1e-7),
    dt.float32: (1.3e-6, 1e-5),
    dt.float16: (1e-3, 1e-5),
    dt.bfloat16: (1.6e-2, 1e-5),
}
FORWARD_TOL_ACCUM = {          # reductions, matmul, softmax: summation order may differ
    dt.float64: (1e-7, 1e-7),
    dt.float32: (1e-5, 1e-5),
    dt.float16: (1e-3, 1e-3),
    dt.bfloat16: (1.6e-2, 1e-2),
}
# gradient of a low-precision dtype compared with the float64 gradient (JAX's defaults)
GRAD_TOL = {dt.float32: 2e-3, dt.float16: 1e-2, dt.bfloat16: 1e-1}
# finite differences (torch gradcheck defaults)
FD_EPS, FD_RTOL, FD_ATOL = 1e-6, 1e-3, 1e-5


# The simulated Ascend's Cube reads float32 operands as float16 and accumulates in float32
# (ascend_config precision_mode 'allow_fp32_to_fp16', the default): each product carries the
# operands' fp16 rounding (relative 2^-11 each), so |err| <= ~K * 2^-10 * max|a| * max|b|; with
# the op database's inputs (|x| <= 2, K <= 8) that is within these bounds.
ASCEND_CUBE_TOL = {dt.float32: (1e-2, 3e-2), dt.float16: (1e-2, 3e-2),
                   dt.bfloat16: (3e-2, 5e-2)}
ASCEND_CUBE_GRAD_TOL = 1e-2
# ops that run on the Ascend Cube (fp16 operands): they take the looser tolerances above
CUBE_OPS = ("matmul", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv1d",
            "conv3d", "conv3d_backprop_input", "attention_weights", "scaled_attention",
            "einsum")
# The message every op gives for float64 on the simulated Ascend (no float64 unit there).
ASCEND_F64 = r"float64 is not supported on device_target='Ascend'"


def ascend_rejects(backend: str, dtypes) -> bool:
    """True where the simulated Ascend must refuse the op: a float64 input or output."""
    return backend == "Ascend" and any(d is dt.float64 for d in dtypes)


def forward_tol(dtype, accum: bool = False, override=None):
    if override and dtype in override:
        return override[dtype]
    table = FORWARD_TOL_ACCUM if accum else FORWARD_TOL
    return table.get(dtype, (0.0, 0.0))


def assert_close(actual, expected, rtol: float, atol: float, what: str = "") -> None:
    """Equal shapes and dtypes; floats within rtol/atol (NaN and inf positions must agree);
    ints and bools exactly. The message names `what` and the worst element."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != expected {e.shape}"
    assert a.dtype == e.dtype, f"{what}: dtype {a.dtype} != expected {e.dtype}"
    if a.dtype.kind not in "fc" and a.dtype.name != "bfloat16":
        if not np.array_equal(a, e):
            bad = np.argwhere(a != e)
            i = tuple(bad[0])
            raise AssertionError(f"{what}: {len(bad)} of {a.size} elements differ (exact dtype "
                                 f"{a.dtype}); first at {i}: got {a[i]!r}, want {e[i]!r}\n"
                                 f"got:\n{a}\nwant:\n{e}")
        return
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    nan_a, nan_e = np.isnan(a64), np.isnan(e64)
    if not np.array_equal(nan_a, nan_e):
        raise AssertionError(f"{what}: NaN positions differ\ngot:\n{a}\nwant:\n{e}")
    inf_a, inf_e = np.isinf(a64), np.isinf(e64)
    if not np.array_equal(a64[inf_a | inf_e], e64[inf_a | inf_e]):
        raise AssertionError(f"{what}: inf values differ\ngot:\n{a}\nwant:\n{e}")
    fin = ~(nan_a | inf_a | inf_e)
    with np.errstate(invalid="ignore"):
        err = np.abs(a64 - e64)
    bound = atol + rtol * np.abs(e64)
    bad = fin & (err > bound)
    if bad.any():
        excess = np.where(bad, err - bound, -np.inf)
        i = np.unravel_index(int(np.argmax(excess)), a.shape)
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {a.size} elements outside rtol={rtol:g} atol={atol:g}; "
            f"worst at {tuple(int(k) for k in i)}: got {a64[i]!r}, want {e64[i]!r} "
            f"(abs err {err[i]:.3g})\ngot:\n{a}\nwant:\n{e}")


# ---------------------------------------------------------------- domains -----------------------
# A generator is gen(rng, shape, dtype: DType) -> np.ndarray of dtype.np. Float values are drawn
# from the domain; int dtypes get small ints from the domain's integer version; bool gets coins.

def _finish(v, dtype):
    return np.asarray(v).astype(dtype.np)


def _coins(rng, shape):
    return rng.random(shape) < 0.5


def rand_default(rng, shape, dtype):
    """Values in [-2, 2] (ints in [-5, 5])."""
    if dtype is dt.bool_:
        return _coins(rng, shape)
    if dtype.is_int:
        lo = 0 if dtype.kind == "u" else -5
        return _finish(rng.integers(lo, 6, shape), dtype)
    return _finish(rng.uniform(-2.0, 2.0, shape), dtype)


def rand_positive(rng, shape, dtype):
    """Values in [0.5, 2] (ints in [1, 5]): log, sqrt, rsqrt, pow's base."""
    if dtype is dt.bool_:
        return np.ones(shape, bool)
    if dtype.is_int:
        return _finish(rng.integers(1, 6, shape), dtype)
    return _finish(rng.uniform(0.5, 2.0, shape), dtype)


def rand_nonzero(rng, shape, dtype):
    """|values| in [0.25, 2] (ints in +-[1, 5]): divisors, and away from the kinks of abs/relu/sign
    at 0."""
    if dtype is dt.bool_:
        return np.ones(shape, bool)
    sign = np.where(_coins(rng, shape), 1, -1)
    if dtype.is_int:
        mag = rng.integers(1, 6, shape)
        return _finish(mag if dtype.kind == "u" else sign * mag, dtype)
    return _finish(sign * rng.uniform(0.25, 2.0, shape), dtype)


def rand_off_half(rng, shape, dtype):
    """Floats at least 0.15 from every multiple of 0.5 (the jumps of floor/ceil/round, and of
    floor_div/mod by +-0.5, 1, 2): k/2 + 0.25 +- 0.1."""
    if not dtype.is_float:
        return rand_default(rng, shape, dtype)
    k = rng.integers(-4, 4, shape)
    return _finish(k * 0.5 + 0.25 + rng.uniform(-0.1, 0.1, shape), dtype)


def rand_pow2_divisor(rng, shape, dtype):
    """Divisors in +-{0.5, 1, 2} (ints: +-[1, 5]); with rand_off_half numerators the quotient is
    never near an integer, so floor_div/mod are smooth there."""
    if not dtype.is_float:
        return rand_nonzero(rng, shape, dtype)
    mag = rng.choice(np.array([0.5, 1.0, 2.0]), shape)
    return _finish(np.where(_coins(rng, shape), 1.0, -1.0) * mag, dtype)


def rand_distinct(rng, shape, dtype):
    """All-distinct values (a shuffled grid, spacing 0.37): no ties for max/min/argmax."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype is dt.bool_:
        return _coins(rng, shape)
    if dtype.is_int:
        v = rng.permutation(n) - n // 2
        if dtype.kind == "u":
            v = v - v.min() if n else v
        return _finish(v.reshape(shape), dtype)
    v = (rng.permutation(n) - n / 2) * 0.37 + rng.uniform(-0.05, 0.05, n)
    return _finish(v.reshape(shape), dtype)


def rand_grid_a(rng, shape, dtype):
    """Integers + noise: with rand_grid_b (half-integers + noise) no element pair is within 0.3,
    so maximum/minimum never tie."""
    if not dtype.is_float:
        return _finish(2 * rng.integers(-3, 3, shape), dtype) if dtype is not dt.bool_ \
            else _coins(rng, shape)
    return _finish(rng.integers(-3, 3, shape) + rng.uniform(-0.1, 0.1, shape), dtype)


def rand_grid_b(rng, shape, dtype):
    if not dtype.is_float:
        return _finish(2 * rng.integers(-3, 3, shape) + 1, dtype) if dtype is not dt.bool_ \
            else _coins(rng, shape)
    return _finish(rng.integers(-3, 3, shape) + 0.5 + rng.uniform(-0.1, 0.1, shape), dtype)


def rand_small_nonneg_int(rng, shape, dtype):
    """Shift amounts and int exponents: [0, 3]."""
    return _finish(rng.integers(0, 4, shape), dtype)


def rand_bool(rng, shape, dtype=None):
    return _coins(rng, shape)


# ---------------------------------------------------------------- running ops -------------------
def to_tensor(a: np.ndarray) -> Tensor:
    return Tensor(np.asarray(a))


def _op_graph(name, attrs, *xs):
    return apply(REGISTRY[name], *xs, **attrs)


def run_op(name: str, args, attrs):
    """Run primitive `name` on numpy `args` through `apply`: a Tensor, or a tuple of them. In
    GRAPH_MODE the call is compiled: a jitted function whose graph holds the op (asserted)."""
    ts = [to_tensor(a) for a in args]
    if ms.get_context("mode") == ms.GRAPH_MODE:
        return in_graph(_op_graph, name, attrs, *ts)
    return apply(REGISTRY[name], *ts, **attrs)


def in_graph(fn, *args):
    """`ms.jit(fn)(*args)`, asserting that a compiled graph ran it (not the eager path): the
    compile module counts every top-level graph call."""
    from minispore.core.graph import compile as graph_compile
    before = graph_compile.ran["calls"]
    out = ms.jit(fn)(*args)
    assert graph_compile.ran["calls"] == before + 1, \
        f"{getattr(fn, '__qualname__', fn)}: GRAPH_MODE ran no compiled graph"
    return out


@contextlib.contextmanager
def warnings_as_errors(category=Warning):
    """Turns `category` warnings into errors inside the block, but for the compile cache's
    KernelCacheWarning: a stale or damaged cache entry on this machine is rebuilt with that
    warning, which says nothing about the code under test (the cache's own behaviour is tested in
    tests/unit/test_kernel_cache_faults.py)."""
    import warnings
    from minispore.backends.cpu.kernel_cache import KernelCacheWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", category)
        warnings.simplefilter("default", KernelCacheWarning)
        yield


@contextlib.contextmanager
def graph_runs(what: str = "the block"):
    """In GRAPH_MODE, asserts that the block compiled or ran a graph (ms.grad, a Cell call, an
    ms.jit function): its ops did not all run eagerly. Nothing is checked in PyNative."""
    from minispore.core.graph import compile as graph_compile
    before = graph_compile.stats["parses"], graph_compile.ran["calls"]
    yield
    if ms.get_context("mode") == ms.GRAPH_MODE:
        after = graph_compile.stats["parses"], graph_compile.ran["calls"]
        assert after != before, f"{what}: GRAPH_MODE compiled and ran no graph"


def in_mode(fn, *args):
    """fn(*args) as the context mode says: eagerly in PyNative, compiled (in_graph) in
    GRAPH_MODE. The graph cells of the op tests call their ops through this."""
    if ms.get_context("mode") == ms.GRAPH_MODE:
        return in_graph(fn, *args)
    return fn(*args)


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def infer_meta(name: str, args, attrs):
    op = REGISTRY[name]
    full = dict(op.attrs)
    full.update(attrs)
    metas = [Meta(tuple(np.shape(a)), dt.to_dtype(np.asarray(a).dtype)) for a in args]
    return op.infer(*metas, **full)


def ref_op(name: str, args, attrs):
    op = REGISTRY[name]
    full = dict(op.attrs)
    full.update(attrs)
    return op.ref(*[np.asarray(a) for a in args], **full)


def _canary_ops(x):
    return ms.ops.sum(ms.ops.mul(x, x), 1)


def canary():
    """After an error: an unrelated op, with a signature fresh to this process's plan cache,
    still works (in the context's mode: compiled in GRAPH_MODE)."""
    x = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    y = in_mode(_canary_ops, x)
    assert_close(y.asnumpy(), np.array([5.0, 25.0], np.float32), 0, 0, "canary after an error")


# ---------------------------------------------------------------- finite differences ------------
def fd_directional(f, xs, ts, eps: float = FD_EPS):
    """Central difference of f (float64 numpy -> tuple of float64 arrays) along tangents ts:
    (f(x + eps t) - f(x - eps t)) / 2 eps, one array per output."""
    plus = as_tuple(f(*[x + eps * t for x, t in zip(xs, ts)]))
    minus = as_tuple(f(*[x - eps * t for x, t in zip(xs, ts)]))
    out = []
    for p, m in zip(plus, minus):
        p, m = np.asarray(p, np.float64), np.asarray(m, np.float64)
        same = (p == m) | (np.isnan(p) & np.isnan(m))      # unchanged, also nan/inf: slope 0
        with np.errstate(invalid="ignore"):
            out.append(np.where(same, 0.0, (p - m) / (2 * eps)))
    return tuple(out)


def fd_jacobian(f, xs, wrt: int, eps: float = FD_EPS):
    """Full Jacobian of f's outputs (flattened, concatenated) w.r.t. xs[wrt]: (n_out, n_in)."""
    x = xs[wrt]
    cols = []
    for k in range(x.size):
        t = [np.zeros_like(a) for a in xs]
        t[wrt].reshape(-1)[k] = 1.0
        d = fd_directional(f, xs, t, eps)
        cols.append(np.concatenate([np.ravel(o) for o in d]) if d else np.zeros(0))
    n_out = sum(np.size(o) for o in as_tuple(f(*xs)))
    return np.stack(cols, axis=1) if cols else np.zeros((n_out, 0))


# ---------------------------------------------------------------- the matrix --------------------
ALL_BACKENDS = ("CPU", "GPU", "Ascend")
MODES = ("pynative", "graph")
# the op matrix's extra graph columns on the CPU: jit_level O1 (fusion) and O2 (the sinks);
# conftest sets the level from the mode's suffix
LEVEL_MODES = ("graph-O1", "graph-O2")
_availability = None


def selected_backends() -> tuple:
    """Backends named in MINISPORE_TEST_BACKENDS (comma-separated, any case), default all."""
    import os
    env = os.environ.get("MINISPORE_TEST_BACKENDS", "").strip()
    if not env:
        return ALL_BACKENDS
    want = {w.strip().lower() for w in env.split(",") if w.strip()}
    unknown = want - {b.lower() for b in ALL_BACKENDS}
    if unknown:
        raise ValueError(f"MINISPORE_TEST_BACKENDS names unknown backend(s) {sorted(unknown)}; "
                         f"valid: {', '.join(ALL_BACKENDS)}")
    return tuple(b for b in ALL_BACKENDS if b.lower() in want)


def backend_availability() -> dict:
    global _availability
    if _availability is None:
        from minispore.core.device import availability
        _availability = availability()
    return _availability


def backend_marks(name: str) -> list:
    import pytest
    marks = [pytest.mark.gpu] if name == "GPU" else []
    ok, why = backend_availability()[name]
    if not ok:
        marks.append(pytest.mark.skip(reason=f"backend {name} not available: {why}"))
    return marks


def backend_params() -> list:
    import pytest
    return [pytest.param(b, marks=backend_marks(b), id=b) for b in selected_backends()]


def mode_marks(mode: str) -> list:
    return []


def mode_params() -> list:
    import pytest
    return [pytest.param(m, marks=mode_marks(m), id=m) for m in MODES]


def dtype_id(d) -> str:
    return "bfloat16" if d is dt.bfloat16 else d.np.name


def matrix(cases, dtypes_of=None, test: str = "forward", levels: bool = False):
    """pytest.params for (case, backend, mode[, dtype]) with ids like sin-CPU-pynative-float32;
    an (test, dtype) xfail listed in the OpCase becomes a strict xfail mark. With `levels`, the
    CPU also gets the graph-O1 and graph-O2 columns (xfails keyed (test + '-O1', dtype) etc.)."""
    import pytest
    out = []
    for case in cases:
        dts = dtypes_of(case) if dtypes_of is not None else (None,)
        for b in selected_backends():
            for m in MODES + (LEVEL_MODES if levels and b == "CPU" else ()):
                for d in dts:
                    marks = backend_marks(b) + mode_marks(m)
                    key = test + m[len("graph"):]             # forward, forward-O1, ...
                    reason = case.xfail_reason(key, d) or case.xfail_reason(test, d)
                    if reason:
                        marks.append(pytest.mark.xfail(strict=True, reason=reason))
                    parts = [case.name, b, m] + ([dtype_id(d)] if d is not None else [])
                    vals = (case, b, m) + ((d,) if d is not None else ())
                    out.append(pytest.param(*vals, marks=marks, id="-".join(parts)))
    return out


class SmallMLP(ms.nn.Cell):
    """Dense(6, 8) -> ReLU -> Dense(8, 3): the training step the compiled-backward and tiering
    tests run."""

    def __init__(self):
        super().__init__()
        self.fc1 = ms.nn.Dense(6, 8)
        self.relu = ms.nn.ReLU()
        self.fc2 = ms.nn.Dense(8, 3)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def train_small_mlp(steps: int, between=None):
    """(losses, parameters) of `steps` TrainOneStepCell steps of a seeded SmallMLP (softmax
    cross-entropy, Momentum) on seeded batches of 5; `between(k)` runs after step k."""
    nn = ms.nn
    ms.set_seed(3)
    net = SmallMLP()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    r = np.random.default_rng(0)
    losses = []
    for k in range(steps):
        x = Tensor(r.standard_normal((5, 6)).astype(np.float32))
        y = Tensor(r.integers(0, 3, 5).astype(np.int32))
        losses.append(step(x, y).asnumpy())
        if between is not None:
            between(k)
    return np.array(losses), [p.asnumpy() for p in net.trainable_params()]
