"""minispore.mint against MindSpore 2.10's mint: every call of mint_cases.py, in PyNative and
compiled in GRAPH_MODE (ms.jit), gives the value, dtype, shape and return structure MindSpore
returned (mint_ms_values.py: observed by running MindSpore 2.10's CPU wheel), or, where that
wheel has no CPU kernel for the function, what PyTorch's semantics give (the case's numpy
reference). Also: the references agree with MindSpore wherever both exist, gradients of a few
differentiable functions, the errors for arguments mint refuses, and the names mint exports."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

import minispore as ms
from minispore import mint

sys.path.insert(0, os.path.dirname(__file__))
from helpers import assert_close, graph_runs, in_mode  # noqa: E402
from mint_cases import CASES  # noqa: E402
from mint_ms_values import VALUES  # noqa: E402

RTOL, ATOL = 2e-6, 1e-6
# composites whose rounding differs from one kernel by a few float32 ulps
LOOSE = {"tan", "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh",
         "log2", "log10", "exp2", "logaddexp", "logaddexp2", "sinc", "std_all", "var_dims",
         "std_mean", "var_mean", "std_dim_correction0", "norm_p3_dims", "linspace_6",
         "float_power", "pow", "erf", "atan", "arctan", "atan2", "arctan2", "asin", "arcsin",
         "acos", "arccos", "expm1", "erfc", "erfinv"}


# cases where MindSpore 2.10's CPU kernel gives another result than its mint documentation and
# PyTorch (its Ascend kernels): compared with the reference instead
MS_CPU_DIVERGES = {
    # mint.any(x, 0) of a float32 x: a column holding -2 and 4 gives False on the CPU
    "any_dim": "MindSpore's CPU any along an axis of a float tensor misses nonzero elements",
    # tanh(4.0) is 0.99932933 on MindSpore's CPU (an approximation, 1.5e-5 off)
    "tanh": "MindSpore's CPU tanh approximates (abs error 1.5e-5 near 4.0)",
    # erfinv(-0.9999) is -2.4168 on MindSpore's CPU; the inverse of erf there is -2.7510
    "erfinv": "MindSpore's CPU erfinv is 12% off in the tail (|x| = 0.9999)",
}


def _from_literal(v):
    kind = v[0]
    if kind == "tuple":
        return tuple(_from_literal(e) for e in v[1])
    if kind == "array":
        return np.array(v[3], dtype=v[1]).reshape(v[2])
    return v[-1]


def _expected(name):
    v = VALUES.get(name)
    if v is not None and v[0] != "error" and name not in MS_CPU_DIVERGES:
        return _from_literal(v), "MindSpore 2.10"
    ref = CASES[name][2]
    assert ref is not None, f"{name}: MindSpore raised {v} and the case has no reference"
    return ref(*CASES[name][1]), "PyTorch semantics"


def _compare(got, want, name, source):
    what = f"mint case {name} (vs {source})"
    if isinstance(want, tuple):
        assert isinstance(got, tuple), f"{what}: got {type(got).__name__}, want a tuple"
        assert len(got) == len(want), f"{what}: {len(got)} results, want {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{name}[{i}]", source)
        return
    if isinstance(want, (bool, int, float)) and not isinstance(want, np.generic):
        assert type(got) is type(want) and got == want, f"{what}: got {got!r}, want {want!r}"
        return
    assert isinstance(got, ms.Tensor), f"{what}: got {type(got).__name__}, want a Tensor"
    tol = (5e-6, 1e-6) if name.split("[")[0] in LOOSE else (RTOL, ATOL)
    assert_close(got.asnumpy(), np.asarray(want), *tol, what=what)


def _run(name):
    fn, inputs, _, graph = CASES[name]
    tensors = [ms.Tensor(a) for a in inputs]
    if ms.get_context("mode") == ms.GRAPH_MODE:
        if not graph:
            pytest.skip(f"{name} reads tensor values (PyNative only, as in MindSpore)")
        return in_mode(fn, *tensors)
    return fn(*tensors)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mint_case(name, mode):
    want, source = _expected(name)
    _compare(_run(name), want, name, source)


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][2] is not None and
                                        VALUES.get(n, ("error",))[0] != "error" and
                                        n not in MS_CPU_DIVERGES))
def test_reference_agrees_with_mindspore(name):
    """The numpy references (used where MindSpore has no CPU kernel) give MindSpore's results
    wherever MindSpore ran: they encode the same semantics."""
    ref = CASES[name][2](*CASES[name][1])
    want = _from_literal(VALUES[name])
    if isinstance(ref, tuple):
        for r, w in zip(ref, want):
            assert_close(np.asarray(r), w, 5e-6, 1e-6, what=name)
    elif isinstance(want, np.ndarray):
        assert_close(np.asarray(ref), want, 5e-6, 1e-6, what=name)
    else:
        assert ref == want


@pytest.mark.parametrize("name", sorted(MS_CPU_DIVERGES))
def test_the_mindspore_cpu_divergences_are_real(name):
    ref = CASES[name][2](*CASES[name][1])
    assert not np.allclose(np.asarray(ref), _from_literal(VALUES[name]), 5e-6, 1e-6)


def test_names_cover_the_common_mint_functions():
    common = ["split", "matmul", "mul", "repeat_interleave", "cat", "stack", "zeros", "ones",
              "full", "arange", "linspace", "eye", "zeros_like", "ones_like", "full_like",
              "reshape", "permute", "transpose", "flatten", "squeeze", "unsqueeze", "narrow",
              "chunk", "gather", "index_select", "where", "sum", "mean", "prod", "max", "min",
              "amax", "amin", "argmax", "argmin", "all", "any", "norm", "std", "var",
              "logsumexp", "bmm", "baddbmm", "outer", "dot", "tile", "broadcast_to", "flip",
              "roll", "tril", "triu", "meshgrid", "item", "addcmul", "clamp", "div"]
    assert not [n for n in common if not callable(getattr(mint, n, None))]
    assert len(mint.__all__) >= 150
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "tools", "reference",
                           "mindspore-2.10-signatures.json")) as f:
        ref = json.load(f)["namespaces"]["mindspore.mint"]
    extra = {"addcmul", "clip", "equal", "fix", "ge", "item", "linspace", "ones", "trunc",
             "unique"}
    assert not [n for n in mint.__all__ if n not in ref and n not in extra]


# ---------------------------------------------------------------- gradients ---------------------
X = np.array([[0.5, -1.5, 2.0], [1.0, 3.0, -0.25]], np.float32)


def _grad(fn, *arrays, argnum=0):
    return ms.grad(fn, grad_position=argnum)(*[ms.Tensor(a) for a in arrays]).asnumpy()


def test_grad_of_max_dim_goes_to_the_first_maximum(mode):
    x = np.array([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]], np.float32)

    def f(t):
        return mint.sum(mint.max(t, 1)[0])
    g = _grad(f, x)
    assert g.shape == (2, 3) and g.sum() == 2.0 and g[0, 0] == 0 and g[1, 1] == 0


def test_grad_of_transpose_gather_and_norm(mode):
    def f(t):
        i = ms.Tensor(np.array([[2, 2], [0, 1]], np.int64))
        return mint.sum(mint.gather(mint.transpose(t, 0, 1), 0, i) * 2)
    g = _grad(f, X)
    # gather from t.T (3, 2) at rows [[2, 2], [0, 1]]: t[0, 2] twice, t[0, 0]... each times 2
    want = np.zeros((3, 2), np.float32)
    for r, c in [(2, 0), (2, 1), (0, 0), (1, 1)]:
        want[r, c] += 2
    assert_close(g, want.T, 0, 0, what="grad gather(transpose)")

    def n(t):
        return mint.norm(t)
    assert_close(_grad(n, X), X / np.sqrt((X * X).sum()), 1e-6, 1e-6, what="grad norm")


def test_grad_of_std_addcmul_and_baddbmm(mode):
    def s(t):
        return mint.std(t)
    xm = X - X.mean()
    assert_close(_grad(s, X), xm / ((X.size - 1) * X.std(ddof=1)), 1e-5, 1e-6,
                 what="grad std")

    def a(t, u):
        return mint.sum(mint.addcmul(t, t, u, value=0.5))
    assert_close(_grad(a, X, X * 2), 1 + 0.5 * X * 2, 1e-6, 1e-6, what="grad addcmul")

    def b(t, u):
        return mint.sum(mint.baddbmm(t, u, u, beta=0.5, alpha=2.0))
    x = np.ones((1, 2, 2), np.float32)
    u = np.array([[[1.0, 2.0], [3.0, 4.0]]], np.float32)
    assert_close(_grad(b, x, u), np.full((1, 2, 2), 0.5, np.float32), 0, 0, what="grad baddbmm")


# ---------------------------------------------------------------- refusals ----------------------
def test_refused_arguments_raise():
    x = ms.Tensor(X)
    with pytest.raises(ValueError, match="rounding_mode"):
        mint.div(x, x, rounding_mode="round")
    with pytest.raises(ValueError, match="min"):
        mint.clamp(x)
    with pytest.raises(NotImplementedError, match="nuc"):
        mint.norm(x, "nuc")
    with pytest.raises(TypeError, match="match none"):
        mint.max(x, 1.5)
    with pytest.raises(ValueError, match="shifts"):
        mint.roll(x, (1, 2), (0,))
    with pytest.raises(TypeError, match="float tensor"):
        mint.std(ms.Tensor(np.arange(3, dtype=np.int32)))
    with pytest.raises(ValueError, match="size 3"):
        mint.cross(x, x, dim=0)


def test_squeeze_needs_dim_as_in_mindspore():
    with pytest.raises(TypeError):
        mint.squeeze(ms.Tensor(np.ones((1, 2), np.float32)))       # noqa (dim is required)


# ---------------------------------------------------------------- random ------------------------
def test_random_functions_shapes_ranges_and_seed():
    ms.set_seed(7)
    a = mint.rand(2, 3)
    ms.set_seed(7)
    b = mint.rand((2, 3))
    assert a.shape == (2, 3) and a.dtype == ms.float32
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert ((a.asnumpy() >= 0) & (a.asnumpy() < 1)).all()
    assert mint.randn(4, dtype=ms.float64).dtype == ms.float64
    r = mint.randint(2, 5, (200,)).asnumpy()
    assert r.dtype == np.int64 and r.min() >= 2 and r.max() < 5
    assert mint.randint(3, (2, 2)).shape == (2, 2)
    np.testing.assert_array_equal(np.sort(mint.randperm(10).asnumpy()), np.arange(10))
    assert mint.randperm(4, dtype=ms.int32).dtype == ms.int32
    np.testing.assert_array_equal(
        mint.bernoulli(ms.Tensor(np.array([0.0, 1.0, 1.0], np.float32))).asnumpy(), [0, 1, 1])
    x = ms.Tensor(np.zeros((3, 2), np.float32))
    assert mint.normal(x, 1.0).shape == (3, 2) and mint.normal(0.0, 2.0, (5,)).shape == (5,)
    assert mint.rand_like(x).shape == (3, 2) and mint.randn_like(x).dtype == ms.float32
    assert mint.randint_like(x, 4).dtype == ms.float32
    p = ms.Tensor(np.array([[0.0, 1.0, 3.0], [5.0, 0.0, 0.0]], np.float32))
    draws = mint.multinomial(p, 400, True).asnumpy()
    assert draws.dtype == np.int64 and draws.shape == (2, 400)
    assert set(draws[0]) <= {1, 2} and set(draws[1]) == {0}
    assert 0.65 < (draws[0] == 2).mean() < 0.85
    once = mint.multinomial(ms.Tensor(np.array([1.0, 2.0, 0.5, 4.0], np.float32)), 4).asnumpy()
    np.testing.assert_array_equal(np.sort(once), np.arange(4))
    with pytest.raises(NotImplementedError, match="generator"):
        mint.rand(2, generator=object())
    with pytest.raises(NotImplementedError, match="device"):
        mint.empty(2, device="Ascend")


def test_grad_of_einsum_cumsum_and_sort(mode):
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[0.5, -1.0], [2.0, 1.0]], np.float32)

    def e(x, y):
        return mint.sum(mint.einsum("ij,jk->ik", x, y))
    assert_close(_grad(e, a, b), np.ones((2, 2), np.float32) @ b.T, 0, 0, what="grad einsum")

    def c(x):
        return mint.sum(mint.cumsum(x, 1) * x)
    # d/dx_j sum_i x_i * sum_{k<=i} x_k = sum_{i>=j} x_i + cumsum_j
    x = a
    want = np.cumsum(x[:, ::-1], 1)[:, ::-1] + np.cumsum(x, 1)
    assert_close(_grad(c, x), want.astype(np.float32), 1e-6, 1e-6, what="grad cumsum")

    def s(x):
        v, _ = mint.sort(x, dim=1, descending=True)
        return mint.sum(v * ms.Tensor(np.array([2.0, 1.0], np.float32)))
    want = np.array([[1.0, 2.0], [1.0, 2.0]], np.float32)
    assert_close(_grad(s, a), want, 0, 0, what="grad sort")


# the differentiable composites: ms.grad of sum(w * f(x)) along a random direction against
# central differences of the same function in float64
GRAD_CASES = ["tan", "sinh", "cosh", "asinh", "acosh", "atanh", "atan", "asin", "acos",
              "expm1", "logaddexp", "logaddexp2", "lerp", "sinc", "log2", "log10",
              "exp2", "norm_p3_dims", "norm_p1_dim", "std_dim_correction0", "std_mean",
              "logsumexp", "cumprod", "cumsum", "cummax", "cummin", "softmax", "cdist",
              "einsum_bmm",
              "einsum_three_ellipsis", "addcdiv", "gather", "take", "index_select",
              "scatter_add", "index_add", "diag_vector", "diag_matrix", "trace", "roll_dims",
              "flip", "diff", "cross", "tril", "repeat_interleave", "median_dim", "kthvalue",
              "topk", "sort", "prod_dim", "clamp", "arctan2", "addmm", "baddbmm", "mv", "dot",
              "outer", "unbind", "chunk", "narrow", "select", "meshgrid_xy", "transpose",
              "max_dim", "amax_dim", "nan_to_num_values", "float_power", "hstack", "dstack",
              "asinh_at_zero", "atan_at_zero", "acos_at_zero", "xlogy_finite", "erfinv_inside",
              "logaddexp_tie", "logaddexp2_tie"]
# inputs without ties or kinks (finite differences across a tie or a clamp bound see neither
# side's slope) or with the points where a composite's slope is easy to get wrong (0 for
# the functions of |x|)
DISTINCT = np.array([[0.3, 2.1, -1.2, 1.7, -0.4], [1.1, -2.6, 0.8, 3.3, 0.05]], np.float32)
ZERO = np.array([0.0, 0.5, -0.3], np.float32)
GRAD_INPUTS = {"cummax": (DISTINCT,), "cummin": (DISTINCT,), "median_dim": (DISTINCT,),
               "kthvalue": (DISTINCT,), "sort": (DISTINCT,), "clamp": (DISTINCT,),
               "max_dim": (DISTINCT,), "topk": (DISTINCT,)}
GRAD_EXTRA = {"asinh_at_zero": ("asinh", ZERO), "atan_at_zero": ("atan", ZERO),
              "acos_at_zero": ("acos", ZERO),
              "erfinv_inside": ("erfinv", np.array([-0.9, -0.2, 0.0, 0.4, 0.99], np.float32)),
              "logaddexp_tie": ("logaddexp", ZERO, ZERO),
              "logaddexp2_tie": ("logaddexp2", ZERO, ZERO),
              "xlogy_finite": ("xlogy", np.array([0.5, 1.0, 2.0], np.float32),
                               np.array([3.0, 2.0, 0.5], np.float32))}


@pytest.mark.parametrize("name", GRAD_CASES)
def test_grad_matches_finite_differences(name, mode):
    if name in GRAD_EXTRA:
        fn, _, _, graph = CASES[GRAD_EXTRA[name][0]]
        inputs = GRAD_EXTRA[name][1:]
    else:
        fn, inputs, _, graph = CASES[name]
        inputs = GRAD_INPUTS.get(name, inputs)
    if mode == "graph" and not graph:
        pytest.skip("PyNative only")
    rng = np.random.default_rng(0)
    xs = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in inputs]
    out = fn(*[ms.Tensor(a) for a in xs])
    outs = out if isinstance(out, tuple) else (out,)
    ws = [rng.standard_normal(o.shape) if o.dtype.is_float else None for o in outs]

    def loss(*ts):
        r = fn(*ts)
        rs = r if isinstance(r, tuple) else (r,)
        total = None
        for o, w in zip(rs, ws):
            if w is not None:
                term = mint.sum(o * ms.Tensor(w))
                total = term if total is None else total + term
        return total

    def loss_np(x0):
        return loss(ms.Tensor(x0), *[ms.Tensor(a) for a in xs[1:]]).asnumpy()

    g = ms.grad(loss, grad_position=0)(*[ms.Tensor(a) for a in xs]).asnumpy()
    t = rng.standard_normal(xs[0].shape)
    eps = 1e-6
    fd = (loss_np(xs[0] + eps * t) - loss_np(xs[0] - eps * t)) / (2 * eps)
    assert abs(float((g * t).sum()) - float(fd)) <= 1e-5 * max(1.0, abs(float(fd))), \
        f"{name}: grad . t = {(g * t).sum()}, finite differences {fd}"


def test_grad_of_erfc_is_its_derivative(mode):
    """-2/sqrt(pi) exp(-x^2), 0 included (the approximation's values at +-0 differ by 6e-8,
    too little for its gradient but enough to mislead finite differences there)."""
    x = np.array([-1.5, -0.2, 0.0, 0.5, 2.0, 4.0])

    def f(t):
        return mint.sum(mint.erfc(t))
    assert_close(_grad(f, x), -2 / np.sqrt(np.pi) * np.exp(-x * x), 2e-5, 1e-7,
                 what="grad erfc")


class _Attention(ms.nn.Cell):
    """A multi-head attention step written with mint only, as ported PyTorch code is."""

    def __init__(self, heads):
        super().__init__()
        self.heads = heads

    def construct(self, x, w):
        b, n, d = x.shape
        q, k, v = mint.split(mint.matmul(x, w), d, dim=-1)
        q = mint.transpose(mint.reshape(q, (b, n, self.heads, -1)), 1, 2)
        k = mint.transpose(mint.reshape(k, (b, n, self.heads, -1)), 1, 2)
        v = mint.transpose(mint.reshape(v, (b, n, self.heads, -1)), 1, 2)
        s = mint.matmul(q, mint.transpose(k, -2, -1)) / (d // self.heads) ** 0.5
        mask = mint.triu(mint.ones((n, n), dtype=ms.bool_), 1)
        s = mint.where(mask, mint.full_like(s, -1e9), s)
        p = mint.softmax(s, -1)
        o = mint.flatten(mint.transpose(mint.matmul(p, v), 1, 2), 2)
        top, idx = mint.max(o, dim=-1)
        return o, mint.cat((top, mint.mean(o, -1)), 0), idx


def _attention_np(x, w, heads):
    b, n, d = x.shape
    q, k, v = np.split(x @ w, 3, -1)
    q, k, v = (t.reshape(b, n, heads, -1).transpose(0, 2, 1, 3) for t in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // heads)
    s = np.where(np.triu(np.ones((n, n), bool), 1), -1e9, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(b, n, d)
    return o, np.concatenate([o.max(-1), o.mean(-1)], 0), o.argmax(-1)


def test_a_cell_of_mint_calls_compiles_in_graph_mode(mode):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 24)) / 3).astype(np.float32)
    with graph_runs("the mint attention Cell"):
        got = _Attention(2)(ms.Tensor(x), ms.Tensor(w))
    for g, e in zip(got, _attention_np(x, w, 2)):
        if e.dtype.kind == "f":
            assert_close(g.asnumpy(), e.astype(np.float32), 1e-5, 1e-5, what="attention")
        else:
            np.testing.assert_array_equal(g.asnumpy(), e)


def _gather_out_of_range(x, i):
    return mint.gather(x, 1, i)


def _scatter_add_out_of_range(x, i):
    return mint.scatter_add(x, 0, i, x)


def test_an_index_out_of_range_raises_in_both_modes(mode):
    """gather/scatter compose a flat index: an index past its axis must raise, not land in
    the next row."""
    x = ms.Tensor(X)
    with pytest.raises(IndexError, match="index 3 is out of range"):
        in_mode(_gather_out_of_range, x, ms.Tensor(np.array([[3, 0], [2, 1]], np.int64)))
    with pytest.raises(IndexError, match="index 2 is out of range"):
        in_mode(_scatter_add_out_of_range, x, ms.Tensor(np.array([[2, 0, 0]], np.int64)))


def test_grad_of_norm_at_zero_is_zero(mode):
    """PyTorch's vector norm has gradient 0 at a zero vector (not NaN)."""
    z = np.zeros((2, 3), np.float32)

    def n2(t):
        return mint.sum(mint.norm(t, 2, 1))

    def n3(t):
        return mint.norm(t, 3)
    assert_close(_grad(n2, z), z, 0, 0, what="grad norm 2 at 0")
    assert_close(_grad(n3, z), z, 0, 0, what="grad norm 3 at 0")


def _random_draws(x):
    return (mint.rand(2, 3) + mint.randn_like(x) * 0, mint.randint(0, 4, (3,)), mint.randperm(4),
            mint.bernoulli(x * 0 + 1), mint.multinomial(x + 1, 2))


def test_random_functions_compile_in_graph_mode(mode):
    out = in_mode(_random_draws, ms.Tensor(np.zeros((2, 3), np.float32)))
    assert [(tuple(t.shape), t.dtype) for t in out] == [
        ((2, 3), ms.float32), ((3,), ms.int64), ((4,), ms.int64), ((2, 3), ms.float32),
        ((2, 2), ms.int64)]
    np.testing.assert_array_equal(np.sort(out[2].asnumpy()), np.arange(4))
    assert (out[3].asnumpy() == 1).all()
