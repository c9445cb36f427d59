"""The calls tests/api/test_mint.py checks, importable under either runtime: `mint` is
minispore.mint, or mindspore.mint when MINT_CASES_RUNTIME=mindspore. Each case is a function of
tensors made from its numpy inputs, with an optional numpy reference written from PyTorch's
semantics (used where MindSpore 2.10's CPU wheel has no kernel for the mint function).

`~/.venvs/mindspore/bin/python tests/api/mint_cases.py` runs every case in MindSpore 2.10 and
rewrites tests/api/mint_ms_values.py with what it returned (or the error it raised)."""
from __future__ import annotations

import importlib
import math
import os

import numpy as np

RUNTIME = os.environ.get("MINT_CASES_RUNTIME", "minispore")
ms = importlib.import_module(RUNTIME)
mint = importlib.import_module(RUNTIME + ".mint")

CASES = {}      # name -> (fn, inputs, numpy reference or None, runs in graph mode)


def case(*inputs, ref=None, graph=True, name=None):
    def deco(fn):
        CASES[name or fn.__name__] = (fn, inputs, ref, graph)
        return fn
    return deco


F = np.array([[1.5, -2.0, 3.0], [0.0, 4.0, -1.0]], np.float32)          # (2, 3)
G = np.array([[0.5, 2.0, -3.0], [1.0, -4.0, 2.5]], np.float32)
P = np.array([[0.25, 1.0, 2.5], [4.0, 0.5, 9.0]], np.float32)           # positive
U = np.array([[-0.75, -0.25, 0.0], [0.25, 0.5, 0.9]], np.float32)       # in (-1, 1)
I = np.array([[1, -7, 3], [0, 7, -2]], np.int32)
J = np.array([[2, 2, -2], [3, 2, 3]], np.int32)
B = np.array([[True, False, True], [False, False, True]])
C = np.array([[True, True, False], [False, True, True]])
T = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 4 - 2            # (2, 3, 4)
TIES = np.array([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]], np.float32)
V = np.array([1.0, -2.0, 3.0], np.float32)
W = np.array([0.5, 4.0, -1.0], np.float32)
M3 = np.arange(9, dtype=np.float32).reshape(3, 3) - 4
IDX = np.array([[0, 2], [1, 0]], np.int64)
NANS = np.array([1.0, np.nan, np.inf, -np.inf, -0.5], np.float32)


def _trunc(a):
    return np.trunc(a)


# ---------------------------------------------------------------- elementwise -------------------
@case(F, G, ref=lambda x, y: x + 2.5 * y)
def add_alpha(x, y):
    return mint.add(x, y, alpha=2.5)


@case(F, G, ref=lambda x, y: x - 2 * y)
def sub_alpha(x, y):
    return mint.sub(x, y, alpha=2)


@case(F, G, ref=lambda x, y: x * y)
def mul(x, y):
    return mint.mul(x, y)


@case(F, ref=lambda x: x * 3)
def mul_scalar(x):
    return mint.mul(x, 3)


@case(F, G, ref=lambda x, y: x / y)
def div(x, y):
    return mint.div(x, y)


@case(I, J, ref=lambda x, y: (x / y).astype(np.float32))
def div_int(x, y):
    return mint.div(x, y)


@case(I, J, ref=lambda x, y: np.floor_divide(x, y))
def div_floor_int(x, y):
    return mint.div(x, y, rounding_mode="floor")


@case(I, J, ref=lambda x, y: _trunc(x / y).astype(np.int32))
def div_trunc_int(x, y):
    return mint.div(x, y, rounding_mode="trunc")


@case(F, G, ref=lambda x, y: np.floor(x / y))
def div_floor_float(x, y):
    return mint.divide(x, y, rounding_mode="floor")


@case(F, G, ref=lambda x, y: _trunc(x / y))
def div_trunc_float(x, y):
    return mint.div(x, y, rounding_mode="trunc")


@case(I, J, ref=lambda x, y: np.floor_divide(x, y))
def floor_divide(x, y):
    return mint.floor_divide(x, y)


@case(I, J, ref=lambda x, y: np.mod(x, y))
def remainder(x, y):
    return mint.remainder(x, y)


@case(F, G, ref=lambda x, y: np.fmod(x, y))
def fmod(x, y):
    return mint.fmod(x, y)


@case(P, G, ref=lambda x, y: np.power(x, y))
def pow(x, y):
    return mint.pow(x, y)


@case(F, ref=lambda x: np.power(x, 2))
def pow_scalar(x):
    return mint.pow(x, 2)


@case(P, ref=lambda x: np.power(x.astype(np.float64), 1.5))
def float_power(x):
    return mint.float_power(x, 1.5)


def _unary(name, ref, inp=F):
    def fn(x):
        return getattr(mint, name)(x)
    fn.__name__ = name
    CASES[name] = (fn, (inp,), ref, True)


for _n, _r, _inp in [
        ("abs", np.abs, F), ("neg", np.negative, F), ("negative", np.negative, F),
        ("exp", np.exp, F), ("exp2", np.exp2, F), ("log", np.log, P), ("log2", np.log2, P),
        ("log10", np.log10, P), ("log1p", np.log1p, P), ("sqrt", np.sqrt, P),
        ("rsqrt", lambda a: 1 / np.sqrt(a), P), ("square", np.square, F),
        ("reciprocal", np.reciprocal, P), ("sin", np.sin, F), ("cos", np.cos, F),
        ("tan", np.tan, F), ("tanh", np.tanh, F), ("sinh", np.sinh, F), ("cosh", np.cosh, F),
        ("asinh", np.arcsinh, F), ("arcsinh", np.arcsinh, F),
        ("acosh", np.arccosh, P + 1), ("arccosh", np.arccosh, P + 1),
        ("atanh", np.arctanh, U), ("arctanh", np.arctanh, U),
        ("sigmoid", lambda a: 1 / (1 + np.exp(-a)), F),
        ("erf", lambda a: np.vectorize(math.erf)(a).astype(np.float32), F),
        ("floor", np.floor, F * 0.7), ("ceil", np.ceil, F * 0.7), ("trunc", np.trunc, F * 0.7),
        ("fix", np.trunc, F * 0.7), ("frac", lambda a: a - np.trunc(a), F * 0.7),
        ("sign", np.sign, F), ("round", np.round, F * 0.7 + 0.05),
        ("sinc", np.sinc, F * 0.7), ("logical_not", np.logical_not, B),
        ("bitwise_not", np.invert, I), ("isnan", np.isnan, NANS),
        ("isinf", np.isinf, NANS), ("isfinite", np.isfinite, NANS),
        ("isneginf", np.isneginf, NANS)]:
    _unary(_n, _r, _inp)


@case(np.array([0.5, 1.5, 2.5, -0.5, 1.25], np.float32), ref=np.round)
def round_half_even(x):
    return mint.round(x)


@case(np.array([1.234, -5.678], np.float32), ref=lambda a: np.round(a, 1))
def round_decimals(x):
    return mint.round(x, decimals=1)


@case(F, ref=lambda x: np.clip(x, -1.0, 2.0))
def clamp(x):
    return mint.clamp(x, -1.0, 2.0)


@case(F, ref=lambda x: np.maximum(x, 0.5))
def clamp_min(x):
    return mint.clamp(x, min=0.5)


@case(F, ref=lambda x: np.clip(x, -1.0, 2.0))
def clip(x):
    return mint.clip(x, -1.0, 2.0)


@case(F, G, ref=np.maximum)
def maximum(x, y):
    return mint.maximum(x, y)


@case(F, G, ref=np.minimum)
def minimum(x, y):
    return mint.minimum(x, y)


for _n, _r in [("eq", np.equal), ("ne", np.not_equal), ("not_equal", np.not_equal),
               ("gt", np.greater), ("greater", np.greater), ("ge", np.greater_equal),
               ("greater_equal", np.greater_equal), ("lt", np.less), ("less", np.less),
               ("le", np.less_equal), ("less_equal", np.less_equal)]:
    def _fn(x, y, _n=_n):
        return getattr(mint, _n)(x, y)
    CASES[_n] = (_fn, (F, np.where(G > 0, F, G)), _r, True)

for _n, _r, _a, _b in [("logical_and", np.logical_and, B, C), ("logical_or", np.logical_or, B, C),
                       ("logical_xor", np.logical_xor, B, C),
                       ("logical_and_float", np.logical_and, F, G * (G > 0)),
                       ("bitwise_and", np.bitwise_and, I, J), ("bitwise_or", np.bitwise_or, I, J),
                       ("bitwise_xor", np.bitwise_xor, I, J)]:
    def _fn(x, y, _n=_n.replace("_float", "")):
        return getattr(mint, _n)(x, y)
    CASES[_n] = (_fn, (_a, _b), _r, True)


@case(F, F + np.float32(1e-6), ref=lambda x, y: np.isclose(y, x))
def isclose(x, y):
    return mint.isclose(x, y)


@case(NANS, NANS, ref=lambda x, y: np.isclose(x, y, equal_nan=True))
def isclose_equal_nan(x, y):
    return mint.isclose(x, y, equal_nan=True)


@case(F, F + np.float32(1e-6), ref=lambda x, y: bool(np.allclose(y, x)), graph=False)
def allclose(x, y):
    return mint.allclose(x, y)


@case(F, F, ref=lambda x, y: True, graph=False)
def equal(x, y):
    return mint.equal(x, y)


@case(F, G, ref=lambda x, y: False, graph=False)
def equal_false(x, y):
    return mint.equal(x, y)


@case(NANS, ref=lambda x: np.nan_to_num(x, nan=0.0, posinf=np.finfo(np.float32).max,
                                        neginf=np.finfo(np.float32).min))
def nan_to_num(x):
    return mint.nan_to_num(x)


@case(NANS, ref=lambda x: np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0))
def nan_to_num_values(x):
    return mint.nan_to_num(x, 1.0, 2.0, -3.0)


@case(F, G, ref=lambda x, y: x + 0.25 * (y - x))
def lerp(x, y):
    return mint.lerp(x, y, 0.25)


@case(np.array([0.0, 1.0, 2.0, 0.0], np.float32), np.array([3.0, 2.0, 0.5, np.nan], np.float32),
      ref=lambda x, y: np.array([0.0, np.log(2.0), 2 * np.log(0.5), np.nan], np.float32))
def xlogy(x, y):
    return mint.xlogy(x, y)


@case(F, G, ref=np.logaddexp)
def logaddexp(x, y):
    return mint.logaddexp(x, y)


@case(F, G, ref=np.logaddexp2)
def logaddexp2(x, y):
    return mint.logaddexp2(x, y)


@case(F, G, P, ref=lambda x, a, b: x + 0.5 * a * b)
def addcmul(x, a, b):
    return mint.addcmul(x, a, b, value=0.5)


@case(F, G, P, ref=lambda x, a, b: x + 2 * a / b)
def addcdiv(x, a, b):
    return mint.addcdiv(x, a, b, value=2)


# ---------------------------------------------------------------- reductions --------------------
@case(F, ref=lambda x: x.sum())
def sum_all(x):
    return mint.sum(x)


@case(T, ref=lambda x: x.sum(1, keepdims=True))
def sum_dim_keepdim(x):
    return mint.sum(x, 1, True)


@case(T, ref=lambda x: x.sum((0, 2)))
def sum_dims(x):
    return mint.sum(x, (0, 2))


@case(I, ref=lambda x: x.sum(1).astype(np.int64))
def sum_int(x):
    return mint.sum(x, 1)


@case(B, ref=lambda x: x.sum().astype(np.int64))
def sum_bool(x):
    return mint.sum(x)


@case(I, ref=lambda x: x.astype(np.float32).sum(0))
def sum_dtype(x):
    return mint.sum(x, 0, dtype=ms.float32)


@case(np.array([[1.0, np.nan], [2.0, 3.0]], np.float32), ref=lambda x: np.nansum(x, 0))
def nansum(x):
    return mint.nansum(x, 0)


@case(T, ref=lambda x: x.mean())
def mean_all(x):
    return mint.mean(x)


@case(T, ref=lambda x: x.mean((1, 2), keepdims=True))
def mean_dims(x):
    return mint.mean(x, (1, 2), keepdim=True)


@case(F, ref=lambda x: x.prod(1))
def prod_dim(x):
    return mint.prod(x, 1)


@case(I, ref=lambda x: x.astype(np.int64).prod())
def prod_int(x):
    return mint.prod(x)


@case(TIES, ref=lambda x: (x.max(1), x.argmax(1)))
def max_dim(x):
    return mint.max(x, 1)


@case(TIES, ref=lambda x: (x.max(0, keepdims=True), x.argmax(0)[None]))
def max_dim_keepdim(x):
    return mint.max(x, 0, keepdim=True)


@case(TIES, ref=lambda x: np.float32(x.max()))
def max_all(x):
    return mint.max(x)


@case(F, G, ref=np.maximum)
def max_other(x, y):
    return mint.max(x, y)


@case(TIES, ref=lambda x: (x.min(1), x.argmin(1)))
def min_dim(x):
    return mint.min(x, 1)


@case(F, ref=lambda x: np.float32(x.min()))
def min_all(x):
    return mint.min(x)


@case(F, G, ref=np.minimum)
def min_other(x, y):
    return mint.min(x, y)


@case(T, ref=lambda x: x.max(-1))
def amax_dim(x):
    return mint.amax(x, -1)


@case(T, ref=lambda x: np.float32(x.max()))
def amax_all(x):
    return mint.amax(x)


@case(T, ref=lambda x: x.min((0, 1), keepdims=True))
def amin_dims(x):
    return mint.amin(x, (0, 1), True)


@case(TIES, ref=lambda x: np.int64(x.argmax()))
def argmax_all(x):
    return mint.argmax(x)


@case(TIES, ref=lambda x: x.argmax(1))
def argmax_dim(x):
    return mint.argmax(x, 1)


@case(TIES, ref=lambda x: x.argmin(0)[None])
def argmin_dim_keepdim(x):
    return mint.argmin(x, 0, True)


@case(I, ref=lambda x: np.all(x))
def all_all(x):
    return mint.all(x)


@case(B, ref=lambda x: np.all(x, 1))
def all_dim(x):
    return mint.all(x, 1)


@case(B, ref=lambda x: np.any(x))
def any_all(x):
    return mint.any(x)


@case(F, ref=lambda x: np.any(x, 0, keepdims=True))
def any_dim(x):
    return mint.any(x, 0, True)


@case(T, ref=lambda x: x.std(ddof=1))
def std_all(x):
    return mint.std(x)


@case(T, ref=lambda x: x.std(1, ddof=0, keepdims=True))
def std_dim_correction0(x):
    return mint.std(x, 1, correction=0, keepdim=True)


@case(T, ref=lambda x: x.var((0, 2), ddof=1))
def var_dims(x):
    return mint.var(x, (0, 2))


@case(T, ref=lambda x: (x.std(2, ddof=1), x.mean(2)))
def std_mean(x):
    return mint.std_mean(x, 2)


@case(T, ref=lambda x: (x.var(0, ddof=2), x.mean(0)))
def var_mean(x):
    return mint.var_mean(x, 0, correction=2)


@case(T, ref=lambda x: np.log(np.exp(x).sum(1)))
def logsumexp(x):
    return mint.logsumexp(x, 1)


@case(T, ref=lambda x: np.float32(np.sqrt((x * x).sum())))
def norm_fro(x):
    return mint.norm(x)


@case(T, ref=lambda x: np.abs(x).sum(1))
def norm_p1_dim(x):
    return mint.norm(x, 1, 1)


@case(T, ref=lambda x: np.float32(np.abs(x).max()))
def norm_inf(x):
    return mint.norm(x, float("inf"))


@case(T, ref=lambda x: (np.abs(x) ** 3).sum((1, 2), keepdims=True) ** (1 / 3))
def norm_p3_dims(x):
    return mint.norm(x, 3, (1, 2), True)


@case(F, ref=lambda x: np.int64(np.count_nonzero(x)))
def count_nonzero(x):
    return mint.count_nonzero(x)


@case(F, ref=lambda x: np.count_nonzero(x, 0).astype(np.int64))
def count_nonzero_dim(x):
    return mint.count_nonzero(x, 0)


@case(F, ref=lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True))
def softmax(x):
    return mint.softmax(x, 1)


# ---------------------------------------------------------------- creation ----------------------
@case(ref=lambda: np.zeros((2, 3), np.float32))
def zeros():
    return mint.zeros((2, 3))


@case(ref=lambda: np.zeros((4,), np.int32))
def zeros_int_dtype():
    return mint.zeros(4, dtype=ms.int32)


@case(ref=lambda: np.ones((2, 1), np.float32))
def ones():
    return mint.ones((2, 1))


@case(ref=lambda: np.full((2, 2), 3, np.int64))
def full_int():
    return mint.full((2, 2), 3)


@case(ref=lambda: np.full((3,), 1.5, np.float32))
def full_float():
    return mint.full((3,), 1.5)


@case(ref=lambda: np.full((2,), True))
def full_bool():
    return mint.full((2,), True)


@case(I, ref=lambda x: np.zeros_like(x))
def zeros_like(x):
    return mint.zeros_like(x)


@case(I, ref=lambda x: np.ones_like(x, np.float32))
def ones_like_dtype(x):
    return mint.ones_like(x, dtype=ms.float32)


@case(F, ref=lambda x: np.full_like(x, 7.0))
def full_like(x):
    return mint.full_like(x, 7)


@case(ref=lambda: np.arange(5, dtype=np.int64))
def arange_end():
    return mint.arange(5)


@case(ref=lambda: np.arange(1, 10, 3, dtype=np.int64))
def arange_step():
    return mint.arange(1, 10, 3)


@case(ref=lambda: np.arange(0, 1, 0.25, dtype=np.float32))
def arange_float():
    return mint.arange(0, 1, 0.25)


@case(ref=lambda: np.linspace(0, 1, 5, dtype=np.float32))
def linspace():
    return mint.linspace(0, 1, 5)


@case(ref=lambda: np.linspace(-3, 7, 6, dtype=np.float32))
def linspace_6():
    return mint.linspace(-3, 7, 6)


@case(ref=lambda: np.eye(3, dtype=np.float32))
def eye():
    return mint.eye(3)


@case(ref=lambda: np.eye(2, 4, dtype=np.int32))
def eye_rect_dtype():
    return mint.eye(2, 4, ms.int32)


# ---------------------------------------------------------------- shapes and indexing -----------
@case(T, ref=lambda x: x.reshape(4, -1))
def reshape(x):
    return mint.reshape(x, (4, -1))


@case(T, ref=lambda x: x.transpose(2, 0, 1))
def permute(x):
    return mint.permute(x, (2, 0, 1))


@case(T, ref=lambda x: x.swapaxes(0, 2))
def transpose(x):
    return mint.transpose(x, 0, 2)


@case(T, ref=lambda x: x.swapaxes(-1, 1))
def transpose_negative(x):
    return mint.transpose(x, -1, 1)


@case(T, ref=lambda x: x.swapaxes(0, 1))
def swapaxes(x):
    return mint.swapaxes(x, 0, 1)


@case(F, ref=lambda x: x.T)
def t(x):
    return mint.t(x)


@case(T, ref=lambda x: x.reshape(-1))
def flatten(x):
    return mint.flatten(x)


@case(T, ref=lambda x: x.reshape(2, 12))
def flatten_start(x):
    return mint.flatten(x, 1)


@case(T, ref=lambda x: x.reshape(6, 4))
def flatten_range(x):
    return mint.flatten(x, 0, 1)


@case(T, ref=lambda x: x.reshape(-1))
def ravel(x):
    return mint.ravel(x)


@case(np.ones((2, 1, 3, 1), np.float32), ref=lambda x: x.reshape(2, 3, 1))
def squeeze(x):
    return mint.squeeze(x, 1)


@case(np.ones((2, 1, 3, 1), np.float32), ref=lambda x: x.reshape(2, 1, 3))
def squeeze_not_one(x):
    return mint.squeeze(x, (0, 3))


@case(F, ref=lambda x: x[:, None])
def unsqueeze(x):
    return mint.unsqueeze(x, 1)


@case(F, G, ref=lambda x, y: np.concatenate([x, y], 1))
def cat(x, y):
    return mint.cat((x, y), 1)


@case(F, G, ref=lambda x, y: np.concatenate([x, y], 0))
def concat(x, y):
    return mint.concat([x, y])


@case(F, G, ref=lambda x, y: np.stack([x, y], 2))
def stack(x, y):
    return mint.stack((x, y), dim=2)


@case(F, G, ref=lambda x, y: np.hstack([x, y]))
def hstack(x, y):
    return mint.hstack((x, y))


@case(F, G, ref=lambda x, y: np.dstack([x, y]))
def dstack(x, y):
    return mint.dstack([x, y])


@case(T, ref=lambda x: tuple(np.split(x, [2], 2)))
def split_size(x):
    return mint.split(x, 2, 2)


@case(T, ref=lambda x: tuple(np.split(x, [2], 1)))
def split_uneven(x):
    return mint.split(x, 2, dim=1)


@case(T, ref=lambda x: tuple(np.split(x, [1, 4], 2)))
def split_sections(x):
    return mint.split(x, [1, 3], 2)


@case(T, ref=lambda x: tuple(np.split(x, [2], 1)))
def chunk(x):
    return mint.chunk(x, 2, 1)


@case(T, ref=lambda x: tuple(x[:, i] for i in range(3)))
def unbind(x):
    return mint.unbind(x, 1)


@case(T, ref=lambda x: x[:, :, 1:3])
def narrow(x):
    return mint.narrow(x, 2, 1, 2)


@case(T, ref=lambda x: x[:, -1])
def select(x):
    return mint.select(x, 1, -1)


@case(F, ref=lambda x: np.tile(x, (2, 2)))
def tile(x):
    return mint.tile(x, (2, 2))


@case(F, ref=lambda x: np.tile(x, (1, 3)))
def tile_short(x):
    return mint.tile(x, (3,))


@case(V, ref=lambda x: np.broadcast_to(x, (2, 3)))
def broadcast_to(x):
    return mint.broadcast_to(x, (2, 3))


@case(T, ref=lambda x: x[::-1, :, ::-1])
def flip(x):
    return mint.flip(x, (0, 2))


@case(F, ref=lambda x: np.roll(x, 1))
def roll_flat(x):
    return mint.roll(x, 1)


@case(T, ref=lambda x: np.roll(x, (1, -1), (1, 2)))
def roll_dims(x):
    return mint.roll(x, (1, -1), (1, 2))


@case(M3, ref=np.tril)
def tril(x):
    return mint.tril(x)


@case(M3, ref=lambda x: np.triu(x, 1))
def triu(x):
    return mint.triu(x, 1)


@case(V, W[:2], ref=lambda a, b: tuple(np.meshgrid(a, b, indexing="ij")))
def meshgrid_ij(a, b):
    return mint.meshgrid(a, b, indexing="ij")


@case(V, W[:2], ref=lambda a, b: tuple(np.meshgrid(a, b, indexing="xy")))
def meshgrid_xy(a, b):
    return mint.meshgrid(a, b, indexing="xy")


@case(F, ref=lambda x: np.repeat(x, 2, 1))
def repeat_interleave(x):
    return mint.repeat_interleave(x, 2, 1)


@case(F, ref=lambda x: np.repeat(x.reshape(-1), 2))
def repeat_interleave_flat(x):
    return mint.repeat_interleave(x, 2)


@case(F, IDX, ref=lambda x, i: np.take_along_axis(x, i, 1))
def gather(x, i):
    return mint.gather(x, 1, i)


@case(T, np.array([[[1, 0]], [[0, 1]]], np.int64),
      ref=lambda x, i: np.take_along_axis(x[:, :1, :2], i, 0))
def gather_dim0(x, i):
    return mint.gather(x, 0, i)


@case(T, np.array([2, 0], np.int64), ref=lambda x, i: x[:, i])
def index_select(x, i):
    return mint.index_select(x, 1, i)


@case(F, IDX, ref=lambda x, i: x.reshape(-1)[i])
def take(x, i):
    return mint.take(x, i)


def _scatter_ref(x, i, s, add):
    out = x.copy()
    for r in range(i.shape[0]):
        for c in range(i.shape[1]):
            if add:
                out[r, i[r, c]] += s[r, c]
            else:
                out[r, i[r, c]] = s[r, c]
    return out


@case(F, IDX, G, ref=lambda x, i, s: _scatter_ref(x, i, s, False))
def scatter(x, i, s):
    return mint.scatter(x, 1, i, s)


@case(F, np.array([[0, 0], [1, 1]], np.int64), G,
      ref=lambda x, i, s: _scatter_ref(x, i, s, True))
def scatter_add(x, i, s):
    return mint.scatter_add(x, 1, i, s)


@case(F, B, ref=lambda x, m: x[m], graph=False)
def masked_select(x, m):
    return mint.masked_select(x, m)


@case(F, ref=lambda x: np.argwhere(x).astype(np.int64), graph=False)
def nonzero(x):
    return mint.nonzero(x)


@case(F, ref=lambda x: tuple(i.astype(np.int64) for i in np.nonzero(x)), graph=False)
def nonzero_tuple(x):
    return mint.nonzero(x, as_tuple=True)


@case(B, F, G, ref=np.where)
def where(c, x, y):
    return mint.where(c, x, y)


@case(B, F, ref=lambda c, x: np.where(c, x, np.float32(0.5)))
def where_scalar(c, x):
    return mint.where(c, x, 0.5)


@case(np.array([2.5], np.float32), ref=lambda x: 2.5, graph=False)
def item(x):
    return mint.item(x)


@case(F, ref=lambda x: x.copy())
def clone(x):
    return mint.clone(x)


@case(V, ref=np.diag)
def diag_vector(x):
    return mint.diag(x)


@case(V, ref=lambda x: np.diag(x, -1))
def diag_vector_below(x):
    return mint.diag(x, -1)


@case(M3, ref=lambda x: np.diag(x, 1))
def diag_matrix(x):
    return mint.diag(x, 1)


@case(F, ref=lambda x: np.diag(x, -1))
def diag_rect_below(x):
    return mint.diag(x, -1)


@case(M3, ref=lambda x: np.float32(np.trace(x)))
def trace(x):
    return mint.trace(x)


@case(T, ref=lambda x: np.diff(x, 2, 1))
def diff(x):
    return mint.diff(x, 2, 1)


@case(V, W, ref=lambda x, p: np.diff(x, prepend=p))
def diff_prepend(x, p):
    return mint.diff(x, prepend=p)


@case(np.stack([V, W]), np.stack([W, V]), ref=lambda a, b: np.cross(a, b))
def cross(a, b):
    return mint.cross(a, b)


# ---------------------------------------------------------------- products ----------------------
@case(T, np.ones((4, 2), np.float32) * W[:2], ref=lambda a, b: a @ b)
def matmul(a, b):
    return mint.matmul(a, b)


@case(T[0], W[:4] if False else np.arange(4, dtype=np.float32), ref=lambda a, b: a @ b)
def matmul_vector(a, b):
    return mint.matmul(a, b)


@case(F, M3, ref=lambda a, b: a @ b)
def mm(a, b):
    return mint.mm(a, b)


@case(T, T.swapaxes(1, 2), ref=lambda a, b: a @ b)
def bmm(a, b):
    return mint.bmm(a, b)


@case(F, V, ref=lambda a, b: a @ b)
def mv(a, b):
    return mint.mv(a, b)


@case(V, W, ref=lambda a, b: np.float32(a @ b))
def dot(a, b):
    return mint.dot(a, b)


@case(V, W, ref=lambda a, b: np.float32(a @ b))
def vdot(a, b):
    return mint.vdot(a, b)


@case(V, W[:2], ref=np.outer)
def outer(a, b):
    return mint.outer(a, b)


@case(F, F, M3, ref=lambda x, a, b: 0.5 * x + 2 * (a @ b))
def addmm(x, a, b):
    return mint.addmm(x, a, b, beta=0.5, alpha=2)


@case(V[:2], F, V, ref=lambda x, a, b: x + a @ b)
def addmv(x, a, b):
    return mint.addmv(x, a, b)


@case(T[:, :, :3], T, T.swapaxes(1, 2)[:, :, :3],
      ref=lambda x, a, b: 2 * x + 0.5 * (a @ b))
def baddbmm(x, a, b):
    return mint.baddbmm(x, a, b, beta=2, alpha=0.5)


@case(F[:, :2] * 0 + np.float32(1), T.swapaxes(1, 2)[:, :2], T[:, :, :2],
      ref=lambda x, a, b: x[:2, :2] + (a @ b).sum(0), name="addbmm")
def _addbmm(x, a, b):
    return mint.addbmm(x[:, :2], a, b)


def _to_numpy(v):
    """A case's result as plain values: arrays for tensors, tuples for tuples."""
    if isinstance(v, (tuple, list)):
        return tuple(_to_numpy(e) for e in v)
    if isinstance(v, ms.Tensor):
        return v.asnumpy()
    return v


def sys_argv_one():
    """`--one NAME`: run that case alone and print its result (for _record_isolated)."""
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        for name in list(CASES):
            if name != sys.argv[2]:
                del CASES[name]
        print("RESULT " + repr(_record()[sys.argv[2]]))
        return True
    return False


def _record():
    """Run every case in this runtime: name -> the result as a Python literal, or the error."""
    out = {}
    for name, (fn, inputs, _, _) in CASES.items():
        try:
            r = _to_numpy(fn(*[ms.Tensor(a) for a in inputs]))
            _sync()                     # an error of an asynchronous kernel surfaces here
            out[name] = _literal(r)
        except Exception as e:          # noqa: BLE001 (recorded: the kernel is missing)
            out[name] = ("error", f"{type(e).__name__}: {str(e).splitlines()[0][:100]}")
            for _ in range(3):          # MindSpore reports a failed launch on a later op too
                try:
                    _sync()
                    break
                except Exception:       # noqa: BLE001
                    pass
    return out


def _sync():
    (ms.Tensor(np.ones(1, np.float32)) + 1).asnumpy()


def _literal(r):
    if isinstance(r, tuple):
        return ("tuple", [_literal(e) for e in r])
    if isinstance(r, np.ndarray):
        return ("array", str(r.dtype), list(r.shape), r.tolist())
    if isinstance(r, (bool, np.bool_)):
        return ("bool", bool(r))
    return ("number", type(r).__name__, float(r) if isinstance(r, float) else r)


def _record_isolated(values):
    """Each failed case again in a process of its own (MindSpore reports a failed launch on
    later ops as well, so an error may belong to an earlier case)."""
    import subprocess
    import sys
    for name, v in values.items():
        if v[0] == "error":
            r = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True,
                               text=True, env={**os.environ, "GLOG_v": "3"})
            line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
            if line:
                values[name] = eval(line[-1][7:], {"nan": math.nan, "inf": math.inf})
    return values


def _main():
    import pprint
    values = _record_isolated(_record())
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mint_ms_values.py")
    with open(path, "w") as f:
        f.write('"""What MindSpore 2.10 (CPU wheel) returned for each case of mint_cases.py '
                '(written by\nrunning that file with MINT_CASES_RUNTIME=mindspore); ("error", ...) '
                'where it raised (most\noften: no CPU kernel for that mint function)."""\n'
                'nan, inf = float("nan"), float("inf")\n\nVALUES = ')
        f.write(pprint.pformat(values, width=100, compact=True))
        f.write("\n")
    print(f"wrote {path}: {sum(v[0] != 'error' for v in values.values())} of {len(values)} ran")


if __name__ == "__main__" and not sys_argv_one():
    _main()
