"""Random primitives (uniform, normal, randint, dropout) and the global seed, `ms.set_seed`.

Every random primitive is a pure function of a `key` input, an int64 tensor (global_seed,
counter), and an integer attribute `seed` (the op seed): element i of a call is drawn from a
counter-based generator, splitmix64 over (global seed, op seed, counter, i). Purity is what
lets one declaration serve the numpy reference, the CPU (backends/cpu/loops/random.py written
once, rendered as the eager kernels of kernels_random.py and the O2 lowerings of
native_random.py: bit-identical by construction; normal's log and cos are the C library's, which
can differ from numpy's float64 ones by an ulp) and the simulated Ascend.

The state that makes successive calls differ is one int64 Parameter, RNG_STATE = (seed, counter):
each functional call reads it as its key and advances the counter with ops.assign, so the same
code advances it eagerly in PyNative and inside the compiled graph (one step per random op per
run) in GRAPH_MODE. `set_seed(s)` resets it to (s, 0): the same seed gives the same sequence, in
both modes (and the same numbers in both, since both draw the same keys in program order). Like
MindSpore, without set_seed the global seed is random per process. set_seed also seeds numpy's
global generator, as MindSpore's does. Random ops under a tensor-dependent `if`/`while` in a
compiled graph are refused (the counter update is an assign; see GraphBuilder.assign).

Distributions (float64 arithmetic, then cast): uniform in [0, 1) from the top 24 bits (float16:
11, float64: 53) so it never rounds up to 1; normal by Box-Muller; randint low + bits % (high -
low); dropout keeps an element when its 53-bit uniform is < keep_prob, scaling by 1 / keep_prob,
and also returns the keep mask (1/0 in the input's dtype).
"""
from __future__ import annotations

import secrets

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop
from .declare import ref_array_dtype

M1, M2, M3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), \
    np.uint64(0x94D049BB133111EB)


def _mix(z):
    """splitmix64's finaliser on uint64 (arrays or scalars; wraps modulo 2^64)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * M2
        z = (z ^ (z >> np.uint64(27))) * M3
        return z ^ (z >> np.uint64(31))


def random_bits(key, seed: int, n: int) -> np.ndarray:
    """n uint64 words for (key = (global seed, counter), op seed)."""
    k = np.asarray(key).astype(np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        s = _mix(_mix(k[0] * M1 ^ np.uint64(seed & 0xFFFFFFFFFFFFFFFF)) + k[1] * M1)
        return _mix(s + (np.arange(1, n + 1, dtype=np.uint64) * M1))


_UNIT_BITS = {"Float16": 11, "Float32": 24, "BFloat16": 8, "Float64": 53}


def unit_uniform(bits, d: dt.DType):
    b = _UNIT_BITS[d.name]
    return (bits >> np.uint64(64 - b)).astype(np.float64) * (2.0 ** -b)


def _key_infer(name, key):
    if key.dtype is not dt.int64 or tuple(key.shape) != (2,):
        raise ShapeError(f"{name}: 'key' must be an int64 tensor of shape (2,) (global seed, "
                         f"counter), got {key.dtype} of shape {tuple(key.shape)}")


def _shape_dtype_infer(name, floats: bool):
    def infer(key, shape, dtype, seed, **_):
        _key_infer(name, key)
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ShapeError(f"{name}: shape must be a tuple of non-negative ints, got {shape!r}")
        if floats and not dtype.is_float:
            raise DTypeError(f"{name}: dtype {dtype} is not a float dtype; use ms.float32")
        if not floats and dtype.kind not in "iu":
            raise DTypeError(f"{name}: dtype {dtype} is not an integer dtype; use ms.int32 or "
                             f"ms.int64")
        return Meta(tuple(shape), dtype)
    return infer


def _uniform_ref(key, shape, dtype, seed):
    n = int(np.prod(shape, dtype=np.int64))
    return unit_uniform(random_bits(key, seed, n), dtype).astype(dtype.np).reshape(shape)


def _normal_ref(key, shape, dtype, seed):
    n = int(np.prod(shape, dtype=np.int64))
    bits = random_bits(key, seed, n)
    u1 = ((bits >> np.uint64(11)).astype(np.float64) + 1.0) * 2.0 ** -53
    u2 = (_mix(bits) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return z.astype(dtype.np).reshape(shape)


def _randint_infer(key, shape, dtype, seed, low, high):
    m = _shape_dtype_infer("randint", False)(key, shape, dtype, seed)
    if not (isinstance(low, int) and isinstance(high, int)) or high <= low:
        raise ValueError(f"randint: needs integers low < high, got low={low!r}, high={high!r}")
    info = np.iinfo(dtype.np)
    if low < info.min or high - 1 > info.max:
        raise ValueError(f"randint: [{low}, {high}) does not fit {dtype}; use ms.int64")
    return m


def _randint_ref(key, shape, dtype, seed, low, high):
    n = int(np.prod(shape, dtype=np.int64))
    r = random_bits(key, seed, n) % np.uint64(high - low)
    return (r.astype(np.int64) + low).astype(dtype.np).reshape(shape)


_RAND_ATTRS = {"shape": (), "dtype": dt.float32, "seed": 0}
UNIFORM = defop("random_uniform", infer=_shape_dtype_infer("random_uniform", True),
                ref=_uniform_ref, attrs=_RAND_ATTRS, arity=1, differentiable=False)
NORMAL = defop("random_normal", infer=_shape_dtype_infer("random_normal", True), ref=_normal_ref,
               attrs=_RAND_ATTRS, arity=1, differentiable=False)
RANDINT = defop("random_randint", infer=_randint_infer, ref=_randint_ref,
                attrs={**_RAND_ATTRS, "dtype": dt.int64, "low": 0, "high": 2}, arity=1,
                differentiable=False)


def _dropout_infer(x, key, keep_prob, seed):
    _key_infer("dropout", key)
    if not x.dtype.is_float:
        raise DTypeError(f"dropout: 'input' has dtype {x.dtype}; use a float dtype "
                         f"(x.astype(ms.float32))")
    if not isinstance(keep_prob, float) or not 0.0 < keep_prob <= 1.0:
        raise ValueError(f"dropout: keep_prob must be a float in (0, 1], got {keep_prob!r} "
                         f"(p = 1 - keep_prob must be in [0, 1))")
    m = Meta(tuple(x.shape), x.dtype)
    return m, m


def _dropout_ref(x, key, keep_prob, seed):
    c = ref_array_dtype(dt.to_dtype(x.dtype))
    bits = random_bits(key, seed, x.size)
    keep = (unit_uniform(bits, dt.float64) < keep_prob).reshape(x.shape)
    mask = keep.astype(c)
    return (x.astype(c) * mask * c.type(1.0 / keep_prob)).astype(x.dtype), mask.astype(x.dtype)


def _dropout_bprop(i, o, g, keep_prob, seed):
    from .math import mul
    dy = g[0]
    if dy is None:
        return None, None
    return mul(mul(dy, o[1]), 1.0 / keep_prob), None


DROPOUT = defop("dropout", infer=_dropout_infer, ref=_dropout_ref, bprop=_dropout_bprop,
                attrs={"keep_prob": 0.5, "seed": 0}, n_out=2, arity=2)


# ---------------------------------------------------------------- the global state ----------------
_STATE = None


def rng_state():
    """The Parameter (global seed, counter) every random op reads and advances."""
    global _STATE
    if _STATE is None:
        from ..tensor import Parameter
        _STATE = Parameter(np.array([secrets.randbits(62), 0], np.int64), name="_rng_state",
                           requires_grad=False)
    return _STATE


def set_seed(seed: int) -> None:
    """MindSpore's set_seed: the global seed of random ops (and of numpy's global generator)."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"set_seed: seed must be an int, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"set_seed: seed must be non-negative, got {seed}")
    rng_state().set_data(np.array([int(seed) & 0x7FFFFFFFFFFFFFFF, 0], np.int64))
    np.random.seed(int(seed) % 2 ** 32)
    global _SEEDED
    _SEEDED = int(seed)


_SEEDED = None


def get_seed():
    """The seed last given to set_seed, or None."""
    return _SEEDED


def next_key():
    """The key for one random op: the state now; the state's counter then advances by one."""
    from .math import add
    from .state import assign
    st = rng_state()
    key = add(st, np.array([0, 0], np.int64))          # a value, not the Parameter itself
    assign(st, add(st, np.array([0, 1], np.int64)))
    return key


def _op_seed(seed):
    if seed is None:
        return 0
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"random ops: seed must be a non-negative int or None, got {seed!r}")
    return int(seed)


def _shape(name, shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of ints, got {shape!r}") from None


def _scalar(v):
    from ..tensor import Tensor
    return v if isinstance(v, Tensor) else float(v)


def uniform(shape, minval, maxval, seed=None, dtype=dt.float32):
    """MindSpore's ops.uniform: values in [minval, maxval) (Tensors or numbers)."""
    from .math import add, mul, sub
    u = apply(UNIFORM, next_key(), shape=_shape("uniform", shape), dtype=dt.to_dtype(dtype),
              seed=_op_seed(seed))
    lo, hi = _scalar(minval), _scalar(maxval)
    return add(mul(u, sub(hi, lo)), lo)


def normal(shape, mean, stddev, seed=None):
    """MindSpore's ops.normal: float32 samples of N(mean, stddev**2)."""
    from .math import add, mul
    z = apply(NORMAL, next_key(), shape=_shape("normal", shape), dtype=dt.float32,
              seed=_op_seed(seed))
    return add(mul(z, _scalar(stddev)), _scalar(mean))


def standard_normal(shape, seed=None):
    return apply(NORMAL, next_key(), shape=_shape("standard_normal", shape), dtype=dt.float32,
                 seed=_op_seed(seed))


def randn(*size, dtype=None, seed=None):
    shape = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
    return apply(NORMAL, next_key(), shape=_shape("randn", shape),
                 dtype=dt.to_dtype(dtype) if dtype is not None else dt.float32,
                 seed=_op_seed(seed))


def rand(*size, dtype=None, seed=None):
    shape = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
    return apply(UNIFORM, next_key(), shape=_shape("rand", shape),
                 dtype=dt.to_dtype(dtype) if dtype is not None else dt.float32,
                 seed=_op_seed(seed))


def randint(low, high, size, seed=None, *, dtype=None):
    """MindSpore 2.x ops.randint: integers in [low, high) of shape `size` (default int64)."""
    return apply(RANDINT, next_key(), shape=_shape("randint", size),
                 dtype=dt.to_dtype(dtype) if dtype is not None else dt.int64,
                 seed=_op_seed(seed), low=int(low), high=int(high))


def dropout(input, p=0.5, training=True, seed=None):
    """MindSpore 2.x ops.dropout: zero each element with probability p, scale the rest by
    1 / (1 - p); identity when not training or p == 0."""
    if not isinstance(p, (int, float)) or not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: p must be a float in [0, 1), got {p!r}")
    if not training or p == 0:
        return input
    return apply(DROPOUT, input, next_key(), keep_prob=1.0 - float(p), seed=_op_seed(seed))[0]
