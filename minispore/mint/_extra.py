"""More of mint: einsum (contracted pairwise with matmul), expm1, cdist, index_add, conv2d,
empty/empty_like and the random functions (the process's random stream; a `generator` or a
`device` other than None is refused)."""
from __future__ import annotations

import numbers

import numpy as np

from ..core import dtype as _dt
from ..core.ops import array as _A
from ..core.ops import linalg as _L
from ..core.ops import math as _M
from ..core.ops import random as _RN
from ..core.ops import reduce as _R
from ..core.ops import sorting as _S
from ..core.overloads import is_int
from ..core.tensor import Tensor

__all__ = ["einsum", "expm1", "cdist", "index_add", "conv2d", "empty", "empty_like", "rand",
           "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm",
           "bernoulli", "normal", "multinomial"]


# ---------------------------------------------------------------- einsum ------------------------
def _parse(equation, operands):
    eq = equation.replace(" ", "")
    lhs, out = eq.split("->") if "->" in eq else (eq, None)
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"mint.einsum: the equation {equation!r} names {len(terms)} operands, "
                         f"got {len(operands)}")
    n_ell = 0
    for t, x in zip(terms, operands):
        if "..." in t:
            n_ell = max(n_ell, x.ndim - (len(t) - 3))
    ell = "".join(chr(0x3b1 + i) for i in range(n_ell))      # placeholder letters
    subs = []
    for t, x in zip(terms, operands):
        if "..." in t:
            k = x.ndim - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k:])
        if len(t) != x.ndim or not all(c.isalpha() for c in t):
            raise ValueError(f"mint.einsum: term {t!r} does not fit an operand of rank {x.ndim}")
        subs.append(t)
    if out is None:
        counts = {}
        for t in subs:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return subs, out


def _diagonal(x, t):
    """x with each letter repeated in its term t reduced to its diagonal (t's letters then
    unique)."""
    while len(set(t)) < len(t):
        c = next(c for c in t if t.count(c) > 1)
        p = t.index(c)
        q = t.index(c, p + 1)
        n = x.shape[p]
        shape = [1] * x.ndim
        shape[p] = shape[q] = n
        eye = Tensor(np.eye(n, dtype=x.dtype.np if x.dtype is not _dt.bfloat16 else np.float32)
                     .reshape(shape))
        x = _R.sum(_M.mul(x, _M.cast(eye, x.dtype)), q, False)
        t = t[:q] + t[q + 1:]
    return x, t


def _sum_out(x, t, keep):
    axes = tuple(i for i, c in enumerate(t) if c not in keep)
    if not axes:
        return x, t
    return _R.sum(x, axes, False), "".join(c for c in t if c in keep)


def _contract(a, ta, b, tb, keep):
    """a (letters ta) times b (letters tb), summing the shared letters not in keep, by one
    batched matmul: (batch, left, k) @ (batch, k, right)."""
    batch = [c for c in ta if c in tb and c in keep]
    con = [c for c in ta if c in tb and c not in keep]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]
    size = {}
    for x, t in ((a, ta), (b, tb)):
        for c, s in zip(t, x.shape):
            if c in size and size[c] != s and 1 not in (size[c], s):
                raise ValueError(f"mint.einsum: letter {c!r} has sizes {size[c]} and {s}")
            size[c] = s if c not in size or size[c] == 1 else size[c]

    def arrange(x, t, order):
        x = _A.transpose(x, tuple(t.index(c) for c in order)) if list(t) != order else x
        return _A.broadcast_to(x, tuple(size[c] for c in order))
    n = int(np.prod([size[c] for c in batch], dtype=np.int64))
    nl = int(np.prod([size[c] for c in left], dtype=np.int64))
    nr = int(np.prod([size[c] for c in right], dtype=np.int64))
    nk = int(np.prod([size[c] for c in con], dtype=np.int64))
    a3 = _A.reshape(arrange(a, ta, batch + left + con), (n, nl, nk))
    b3 = _A.reshape(arrange(b, tb, batch + con + right), (n, nk, nr))
    r = _L.bmm(a3, b3)
    return _A.reshape(r, tuple(size[c] for c in batch + left + right)), \
        "".join(batch + left + right)


def einsum(equation, *operands):
    """The Einstein summation of operands by equation ('ij,jk->ik'; '...' broadcasts; no
    '->' gives the letters used once, in alphabetical order)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str) or not operands:
        raise TypeError("mint.einsum: expects an equation string and at least one tensor")
    subs, out = _parse(equation, operands)
    terms = []
    for i, (x, t) in enumerate(zip(operands, subs)):
        x, t = _diagonal(x, t)
        later = set(out).union(*[set(s) for j, s in enumerate(subs) if j != i])
        terms.append(_sum_out(x, t, later))
    x, t = terms[0]
    for i in range(1, len(terms)):
        y, ty = terms[i]
        keep = set(out).union(*[set(subs[j]) for j in range(i + 1, len(subs))])
        x, t = _contract(x, t, y, ty, keep)
    x, t = _sum_out(x, t, set(out))
    if sorted(t) != sorted(out):
        raise ValueError(f"mint.einsum: output letters {out!r} must each appear in an input")
    return _A.transpose(x, tuple(t.index(c) for c in out)) if t != out else x


# ---------------------------------------------------------------- math --------------------------
def expm1(input):
    """exp(input) - 1, accurate near 0 (Kahan's (u - 1) * x / log(u), u = exp(x))."""
    x = input if input.dtype.is_float else _M.cast(input, _dt.float32)
    u = _M.exp(x)
    um1 = _M.sub(u, 1.0)
    one = _M.equal(u, 1.0)
    safe = _M.where(one, _M.add(_M.zeros_like(u), 2.0), u)
    r = _M.div(_M.mul(_M.sub(safe, 1.0), x), _M.log(safe))
    r = _M.where(one, x, r)
    r = _M.where(_M.equal(um1, -1.0), um1, r)
    return _M.where(_M.equal(u, float("inf")), u, r)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R)."""
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"mint.cdist: compute_mode must be one of {modes}, got {compute_mode!r}")
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or p < 0:
        raise ValueError(f"mint.cdist: p must be a non-negative number, got {p!r}")
    d = _M.abs(_M.sub(_A.expand_dims(x1, -2), _A.expand_dims(x2, -3)))
    if p == 0:
        return _R.sum(_M.cast(_M.not_equal(d, 0), d.dtype), -1, False)
    if p == float("inf"):
        return _R.amax(d, -1, False)
    if p == 1:
        return _R.sum(d, -1, False)
    if p == 2:
        return _M.sqrt(_R.sum(_M.square(d), -1, False))
    return _M.pow(_R.sum(_M.pow(d, float(p)), -1, False), 1.0 / p)


def index_add(input, dim, index, source, *, alpha=1):
    """input with alpha * source[..., i, ...] added at input[..., index[i], ...] along dim
    (repeated indices add up)."""
    from ._shape import scatter_add
    if not isinstance(index, Tensor) or index.ndim != 1 or not index.dtype.is_int:
        raise TypeError("mint.index_add: index must be a 1-D int Tensor")
    d = _A.normalize_axis("mint.index_add", dim, input.ndim)
    shape = [1] * source.ndim
    shape[d] = index.shape[0]
    full = _A.broadcast_to(_A.reshape(index, tuple(shape)), tuple(source.shape))
    src = source if alpha == 1 else _M.mul(source, alpha)
    return scatter_add(input, d, full, src)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (mint.nn.functional.conv2d): padding an int, a pair, 'valid' or 'same'."""
    from .nn import functional as _F
    return _F.conv2d(input, weight, bias, stride, padding, dilation, groups)


# ---------------------------------------------------------------- creation and random -----------
def _no(who, **given):
    for name, v in given.items():
        if name == "pin_memory":
            if v:
                raise NotImplementedError(f"mint.{who}: pin_memory=True is not supported by "
                                          f"minispore")
        elif v is not None:
            what = "random stream" if name == "generator" else "device target"
            raise NotImplementedError(f"mint.{who}: {name}={v!r} is not supported by minispore "
                                      f"(pass None: the process's {what})")


def _sizes(who, size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if not all(is_int(s) and s >= 0 for s in size):
        raise TypeError(f"mint.{who}: size must be non-negative ints, got {size!r}")
    return tuple(int(s) for s in size)


def empty(*size, dtype=None, device=None, pin_memory=False):
    """A tensor of shape size (its values are zeros in minispore), float32 unless dtype."""
    _no("empty", device=device, pin_memory=pin_memory)
    return _A.zeros(_sizes("empty", size), _dt.float32 if dtype is None else _dt.to_dtype(dtype))


def empty_like(input, *, dtype=None, device=None, pin_memory=False):
    """A tensor of input's shape (zeros in minispore), in input's dtype unless dtype."""
    _no("empty_like", device=device, pin_memory=pin_memory)
    return _A.zeros_like(input, dtype)


def _float_dtype(who, dtype):
    d = _dt.float32 if dtype is None else _dt.to_dtype(dtype)
    if not d.is_float:
        raise TypeError(f"mint.{who}: dtype must be a float type, got {d}")
    return d


def rand(*size, generator=None, dtype=None, device=None):
    """Uniform samples in [0, 1) of shape size (float32 unless dtype)."""
    _no("rand", generator=generator, device=device)
    return _RN.rand(_sizes("rand", size), dtype=_float_dtype("rand", dtype))


def randn(*size, generator=None, dtype=None, device=None):
    """Standard normal samples of shape size (float32 unless dtype)."""
    _no("randn", generator=generator, device=device)
    return _RN.randn(_sizes("randn", size), dtype=_float_dtype("randn", dtype))


def _randint_args(who, args):
    if len(args) == 2:
        (high, size), low = args, 0
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError(f"mint.{who}: takes (high, size) or (low, high, size), got {len(args)} "
                        f"arguments")
    return int(low), int(high), size


def randint(*args, generator=None, dtype=None, device=None):
    """Integers uniform in [low, high) (low 0 when omitted) of shape size (int64 unless
    dtype): randint(high, size) or randint(low, high, size)."""
    _no("randint", generator=generator, device=device)
    low, high, size = _randint_args("randint", args)
    return _RN.randint(low, high, _sizes("randint", (size,)), dtype=dtype)


def rand_like(input, *, dtype=None, device=None):
    """mint.rand of input's shape, in input's dtype unless dtype."""
    _no("rand_like", device=device)
    return _RN.rand(tuple(input.shape), dtype=_float_dtype(
        "rand_like", input.dtype if dtype is None else dtype))


def randn_like(input, *, dtype=None, device=None):
    """mint.randn of input's shape, in input's dtype unless dtype."""
    _no("randn_like", device=device)
    return _RN.randn(tuple(input.shape), dtype=_float_dtype(
        "randn_like", input.dtype if dtype is None else dtype))


def randint_like(*args, dtype=None, device=None):
    """mint.randint of input's shape: randint_like(input, high) or (input, low, high), in
    input's dtype unless dtype."""
    _no("randint_like", device=device)
    if len(args) not in (2, 3) or not isinstance(args[0], Tensor):
        raise TypeError("mint.randint_like: takes (input, high) or (input, low, high)")
    low, high = (0, args[1]) if len(args) == 2 else args[1:]
    d = args[0].dtype if dtype is None else _dt.to_dtype(dtype)
    r = _RN.randint(int(low), int(high), tuple(args[0].shape), dtype=_dt.int64)
    return r if d is _dt.int64 else _M.cast(r, d)


def randperm(n, *, generator=None, dtype=_dt.int64):
    """A random permutation of 0..n-1 (the order of n uniform samples)."""
    _no("randperm", generator=generator)
    if not is_int(n) or n < 0:
        raise ValueError(f"mint.randperm: n must be a non-negative int, got {n!r}")
    if n == 0:
        return _A.zeros((0,), _dt.to_dtype(dtype))
    return _M.cast(_S.sort(_RN.rand((n,)), 0, False)[1], _dt.to_dtype(dtype))


def bernoulli(input, *, generator=None):
    """1 with probability input (elementwise), else 0, in input's dtype."""
    _no("bernoulli", generator=generator)
    return _M.cast(_M.less(_RN.rand(tuple(input.shape), dtype=_dt.float32),
                           _M.cast(input, _dt.float32)), input.dtype)


def normal(mean=0.0, std=1.0, size=None, generator=None):
    """Normal samples: of shape size for number mean and std, else of mean's and std's
    broadcast shape."""
    _no("normal", generator=generator)
    if size is not None:
        if isinstance(mean, Tensor) or isinstance(std, Tensor):
            raise TypeError("mint.normal: size goes with number mean and std")
        z = _RN.randn(_sizes("normal", (size,)))
    else:
        shapes = [tuple(t.shape) for t in (mean, std) if isinstance(t, Tensor)]
        if not shapes:
            raise TypeError("mint.normal: give size, or a Tensor mean or std")
        from ..core.shape import broadcast_shapes
        d = next(t.dtype for t in (mean, std) if isinstance(t, Tensor))
        z = _RN.randn(broadcast_shapes("normal", *shapes),
                      dtype=d if d.is_float else _dt.float32)
    return _M.add(_M.mul(z, std), mean)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """num_samples int64 category indices per row of input (1-D or 2-D, non-negative weights):
    with replacement by inverting the cumulative weights at uniform draws, without it by the
    Gumbel top-k of log(weights) (each category at most once)."""
    _no("multinomial", generator=generator)
    if input.ndim not in (1, 2) or not input.dtype.is_float:
        raise ValueError(f"mint.multinomial: input must be a 1-D or 2-D float tensor, got "
                         f"{input.dtype} of shape {tuple(input.shape)}")
    if not is_int(num_samples) or num_samples <= 0:
        raise ValueError(f"mint.multinomial: num_samples must be a positive int, got "
                         f"{num_samples!r}")
    w = input if input.ndim == 2 else _A.reshape(input, (1, -1))
    rows, n = w.shape
    w = _M.cast(w, _dt.float32)
    if replacement:
        from ._sorting import searchsorted
        cdf = _S.cumsum_scan(w, 1)
        total = cdf[:, n - 1:n]
        u = _M.mul(_RN.rand((rows, num_samples)), total)
        idx = _M.minimum(searchsorted(cdf, u, right=True), n - 1)
    else:
        if num_samples > n:
            raise ValueError(f"mint.multinomial: num_samples {num_samples} exceeds the {n} "
                             f"categories without replacement")
        u = _M.maximum(_RN.rand((rows, n)), 1e-20)
        keys = _M.sub(_M.log(w), _M.log(_M.neg(_M.log(u))))
        idx = _M.cast(_S.topk(keys, num_samples, 1, True, True)[1], _dt.int64)
    return idx if input.ndim == 2 else _A.reshape(idx, (num_samples,))
