"""MindSpore's `mindspore.ops.composite` (`from mindspore.ops import composite as C`): the
gradient operations, the overloaded-function machinery (MultitypeFuncGraph, HyperMap, Map,
core/multitype.py) and the functions MindSpore keeps there, each composed of core ops."""
from __future__ import annotations

import functools as _functools

import numpy as _np

from ..core import dtype as _dt
from ..core.autodiff import GradOperation, grad, value_and_grad  # noqa: F401
from ..core.multitype import HyperMap, Map, MultitypeFuncGraph  # noqa: F401
from ..core.ops import array as _A
from ..core.ops import index_ops as _I
from ..core.ops import linalg as _L
from ..core.ops import math as _M
from ..core.ops import reduce as _R
from ..core.ops.random import normal, uniform  # noqa: F401  (MindSpore: the ops.* objects)
from ..core.tensor import Tensor
from .functional_namespace import clip_by_global_norm, clip_by_value  # noqa: F401

__all__ = ["GradOperation", "HyperMap", "Map", "MultitypeFuncGraph", "zeros_like", "ones_like",
           "matmul", "mm", "dot", "tensor_dot", "vecdot", "batch_dot", "sequence_mask", "count_nonzero",
           "repeat_elements", "repeat_interleave", "normal", "uniform", "clip_by_value",
           "clip_by_global_norm"]


def _tensor(fn, name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{fn}', '{name}' must be a Tensor, but got {type(x).__name__}")
    return x


def zeros_like(x):
    """Zeros with x's shape and dtype; a Python number's zero (a bool's is 0, as MindSpore's)."""
    if isinstance(x, (bool, int)):
        return 0
    if isinstance(x, float):
        return 0.0
    return _A.zeros_like(_tensor("zeros_like", "x", x))


def ones_like(*args):
    """Ones with the shape and dtype of a Tensor, a Python number's one (True for a bool), mapped
    over nested tuples/lists (MindSpore's ones_like is a HyperMap)."""
    if len(args) != 1:
        raise TypeError(f"ones_like takes 1 argument, but got {len(args)}")
    x = args[0]
    if isinstance(x, (tuple, list)):
        return tuple(ones_like(v) for v in x)
    if isinstance(x, bool):
        return True
    if isinstance(x, (int, float)):
        return type(x)(1)
    return _A.ones_like(_tensor("ones_like", "x", x))


def matmul(x1, x2, dtype=None):
    """numpy's matmul of x1 and x2 (1-D operands included), cast to `dtype` when given."""
    out = _L.matmul(_tensor("matmul", "x1", x1), _tensor("matmul", "x2", x2))
    if dtype is not None:
        if not isinstance(dtype, _dt.DType):
            raise TypeError(f"For 'matmul', 'dtype' must be a mindspore dtype, got {dtype!r}")
        out = _M.cast(out, dtype)
    return out


def mm(input, mat2):
    """The matrix product of two 2-D tensors."""
    _tensor("mm", "input", input), _tensor("mm", "mat2", mat2)
    if len(input.shape) != 2 or len(mat2.shape) != 2:
        raise ValueError(f"For 'mm', the inputs must be 2-D, but got shapes {input.shape} and "
                         f"{mat2.shape}")
    return _L.matmul(input, mat2)


def dot(input, other):
    """The sum product over input's last axis and other's second-to-last (numpy's dot for N-D,
    N >= 2): shape input.shape[:-1] + other.shape[:-2] + other.shape[-1:]; float16/float32."""
    x1, x2 = _tensor("dot", "input", input), _tensor("dot", "other", other)
    for name, t in (("input", x1), ("other", x2)):
        if t.dtype not in (_dt.float16, _dt.float32):
            raise TypeError(f"For 'dot', '{name}' must be float16 or float32, but got "
                            f"{t.dtype}")
    if x1.dtype != x2.dtype:
        raise TypeError(f"For 'dot', the inputs must have the same dtype, but got {x1.dtype} "
                        f"and {x2.dtype}")
    s1, s2 = tuple(x1.shape), tuple(x2.shape)
    if len(s1) < 2 or len(s2) < 2:
        raise ValueError(f"For 'dot', the inputs should have dimension >= 2, but got shapes "
                         f"{s1} and {s2}")
    if s1[-1] != s2[-2]:
        raise ValueError(f"For 'dot', input.shape[-1] must equal other.shape[-2], but got "
                         f"{s1} and {s2}")
    if len(s1) == 2 and len(s2) == 2:
        return _L.matmul(x1, x2)
    n = len(s2)
    perm = (n - 2,) + tuple(range(n - 2)) + (n - 1,)
    a = _A.reshape(x1, (-1, s1[-1]))
    b = _A.reshape(_A.transpose(x2, perm), (s2[-2], -1))
    out = _L.matmul(a, b)
    return _A.reshape(out, s1[:-1] + s2[:-2] + s2[-1:])


def sequence_mask(lengths, maxlen=None):
    """mask[..., j] = j < lengths[...] (bool), j in range(maxlen); maxlen None: lengths' max
    (a value read eagerly: pass maxlen in graph mode)."""
    _tensor("sequence_mask", "lengths", lengths)
    if lengths.dtype not in _dt.INTS:
        raise TypeError(f"For 'sequence_mask', 'lengths' must be an integer Tensor, but got "
                        f"{lengths.dtype}")
    if maxlen is None:
        from ..core.graph.builder import is_symbolic
        if is_symbolic(lengths):
            raise ValueError("For 'sequence_mask', maxlen=None needs the values of 'lengths', "
                             "which a graph does not know while it compiles: pass maxlen")
        maxlen = int(_np.asarray(_R.reduce_max(lengths).asnumpy()))
    if isinstance(maxlen, bool) or not isinstance(maxlen, int):
        raise TypeError(f"For 'sequence_mask', 'maxlen' must be an int, but got {maxlen!r}")
    if maxlen <= 0:
        raise ValueError(f"For 'sequence_mask', 'maxlen' must be positive, but got {maxlen}")
    rng = _A.arange(0, maxlen, 1, dtype=lengths.dtype)
    return _M.lt(rng, _A.expand_dims(lengths, -1))


def count_nonzero(x, axis=(), keep_dims=False, dtype=_dt.int32):
    """The number of non-zero entries of x along `axis` (() or []: all axes), as `dtype`."""
    _tensor("count_nonzero", "x", x)
    if isinstance(axis, list):
        axis = tuple(axis)
    nz = _M.cast(_M.ne(x, 0), _dt.int32)
    out = _R.reduce_sum(nz, axis if axis != () else tuple(range(len(x.shape))), keep_dims)
    return _M.cast(out, dtype)


def _axis(fn, axis, ndim):
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"For '{fn}', 'axis' must be an int, but got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"For '{fn}', 'axis' must be in [{-ndim}, {ndim}), but got {axis}")
    return axis % ndim


def repeat_elements(x, rep, axis=0):
    """Each slice of x along `axis` repeated `rep` times in place ([a, b] -> [a, a, b, b])."""
    _tensor("repeat_elements", "x", x)
    if isinstance(rep, bool) or not isinstance(rep, int) or rep <= 0:
        raise ValueError(f"For 'repeat_elements', 'rep' must be a positive int, but got {rep!r}")
    shape = tuple(x.shape)
    axis = _axis("repeat_elements", axis, len(shape))
    y = _A.expand_dims(x, axis + 1)
    y = _A.broadcast_to(y, shape[:axis + 1] + (rep,) + shape[axis + 1:])
    return _A.reshape(y, shape[:axis] + (shape[axis] * rep,) + shape[axis + 1:])


def repeat_interleave(input, repeats, axis=None):
    """Slices of input along `axis` repeated in place: `repeats` an int (each slice that many
    times) or a sequence/Tensor of one count per slice; axis None: the flattened input."""
    x = _tensor("repeat_interleave", "input", input)
    if axis is None:
        x, axis = _A.reshape(x, (-1,)), 0
    if isinstance(repeats, int) and not isinstance(repeats, bool):
        return repeat_elements(x, repeats, axis)
    if isinstance(repeats, Tensor):
        from ..core.graph.builder import is_symbolic
        if is_symbolic(repeats):
            raise ValueError("For 'repeat_interleave', a Tensor 'repeats' in a graph needs its "
                             "values while the graph compiles: pass an int or a list of ints")
        repeats = repeats.asnumpy()
    counts = _np.asarray(repeats)
    if counts.ndim == 0:
        return repeat_elements(x, int(counts), axis)
    axis = _axis("repeat_interleave", axis, len(x.shape))
    if counts.ndim != 1 or counts.shape[0] != x.shape[axis] or not _np.issubdtype(
            counts.dtype, _np.integer) or (counts < 0).any():
        raise ValueError(f"For 'repeat_interleave', 'repeats' must be non-negative ints, one "
                         f"per slice along axis {axis} ({x.shape[axis]}), but got {repeats!r}")
    index = Tensor(_np.repeat(_np.arange(x.shape[axis]), counts).astype(_np.int64))
    return _I.gather(x, index, axis)


def _dot_axes(axes, n1, n2):
    """tensor_dot's axes as two tuples of non-negative axes (MindSpore's checks)."""
    if isinstance(axes, bool) or not isinstance(axes, (int, tuple, list)):
        raise TypeError(f"For 'tensor_dot', 'axes' must be an int, tuple or list, but got "
                        f"{axes!r}")
    if isinstance(axes, int):
        if axes < 0 or axes > n1 or axes > n2:
            raise ValueError(f"For 'tensor_dot', an int 'axes' must be in [0, min(ranks)], "
                             f"but got {axes}")
        return tuple(range(n1 - axes, n1)), tuple(range(axes))
    if len(axes) != 2:
        raise ValueError(f"For 'tensor_dot', the dimension of 'axes' must be 2, but got {axes}")
    pair = [(a,) if isinstance(a, int) else tuple(a) for a in axes]
    if len(pair[0]) != len(pair[1]):
        raise ValueError(f"For 'tensor_dot', both parts of 'axes' must have the same length, "
                         f"but got {axes}")
    out = []
    for part, n in zip(pair, (n1, n2)):
        if len(set(part)) != len(part):
            raise ValueError(f"For 'tensor_dot', 'axes' cannot have duplicating values, but "
                             f"got {axes}")
        for a in part:
            if not -n <= a < n:
                raise ValueError(f"For 'tensor_dot', value in 'axes' must be in range: "
                                 f"[{-n}, {n - 1}], but got {a}")
        out.append(tuple(a % n for a in part))
    return tuple(out)


def tensor_dot(x1, x2, axes):
    """The sum of products over x1's axes[0] and x2's axes[1] (numpy's tensordot): shape x1's
    free axes + x2's free axes; an int n contracts x1's last n axes with x2's first n."""
    _tensor("tensor_dot", "x1", x1), _tensor("tensor_dot", "x2", x2)
    s1, s2 = tuple(x1.shape), tuple(x2.shape)
    a1, a2 = _dot_axes(axes, len(s1), len(s2))
    for i, j in zip(a1, a2):
        if s1[i] != s2[j]:
            raise ValueError(f"For 'tensor_dot', the contracted axes must have the same sizes, "
                             f"but got x1 shape {s1} at axes {a1} and x2 shape {s2} at {a2}")
    f1 = tuple(i for i in range(len(s1)) if i not in a1)
    f2 = tuple(i for i in range(len(s2)) if i not in a2)
    k = int(_np.prod([s1[i] for i in a1], dtype=_np.int64))
    a = _A.reshape(_A.transpose(x1, f1 + a1), (-1, k) if f1 else (1, k))
    b = _A.reshape(_A.transpose(x2, a2 + f2), (k, -1) if f2 else (k, 1))
    return _A.reshape(_L.matmul(a, b), tuple(s1[i] for i in f1) + tuple(s2[i] for i in f2))


def vecdot(x, y, *, axis=-1):
    """sum(x * y, axis) (conj(x) for complex inputs, which minispore has none of)."""
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError("For vecdot, x or y must be Tensor.")
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"For vecdot, the dim should be int, but got {type(axis)}.")
    ndim = max(len(x.shape), len(y.shape))
    if axis < -ndim or axis >= ndim:
        raise ValueError("For vecdot, the dim is out of range.")
    return _R.reduce_sum(_M.mul(x, y), axis)


def _batch_dot_axes(axes, n1, n2):
    """batch_dot's axes as [axis of x1, axis of x2], non-negative (MindSpore's rules)."""
    if axes is None:
        return [n1 - 1, n2 - 1 if n2 == 2 else n2 - 2]
    if isinstance(axes, (list, tuple)):
        if 0 in axes:
            raise ValueError(f"For 'batch_dot', the 'axes' cannot contain 0, but got axes: "
                             f"{axes}.")
        if len(axes) != 2:
            raise ValueError(f"For 'batch_dot', the length of 'axes' must be equal to 2, but "
                             f"got {len(axes)}.")
        for a in axes:
            if isinstance(a, bool) or not isinstance(a, int):
                raise TypeError(f"For 'batch_dot', the axes must be ints, but got {axes!r}")
        out = [axes[0] + n1 if axes[0] < 0 else axes[0], axes[1] + n2 if axes[1] < 0 else axes[1]]
        if out[0] < 0 or out[1] < 0 or out[0] > n1 or out[1] > n2:
            raise ValueError(f"For 'batch_dot', the axes must be in range for the inputs' ranks "
                             f"({n1}, {n2}), but got {axes}")
        return out
    if isinstance(axes, int) and not isinstance(axes, bool):
        if axes == 0 or axes > n1 or axes > n2:
            raise ValueError(f"For 'batch_dot', an int 'axes' must be nonzero and at most the "
                             f"inputs' ranks ({n1}, {n2}), but got {axes}")
        out = [axes + n1, axes + n2] if axes < 0 else [axes, axes]
        if out[0] < 0:
            raise ValueError(f"For 'batch_dot', the reversed axes must be non-negative, but got "
                             f"{axes}")
        return out
    raise ValueError(f"For 'batch_dot', the type of 'axes' must be one of those: int, "
                     f"tuple(int), list(int), but got {type(axes).__name__}.")


def _batch_dot_operand(shape, axis, second):
    """(transpose permutation, 3-D shape, free dims) of one operand around its contracted axis."""
    free = tuple(i for i in range(1, len(shape)) if i != axis)
    dims = tuple(shape[i] for i in free)
    n = int(_np.prod(dims, dtype=_np.int64))
    perm = (0,) + ((axis,) + free if second else free + (axis,))
    return perm, ((shape[0], shape[axis], n) if second else (shape[0], n, shape[axis])), dims


def batch_dot(x1, x2, axes=None):
    """Per sample of the first (batch) axis, the dot product over x1's axes[0] and x2's
    axes[1]: shape (batch,) + x1's free axes + x2's free axes (a 2-D input's extra axis squeezed
    again); float32 inputs, ranks >= 2."""
    _tensor("batch_dot", "x1", x1), _tensor("batch_dot", "x2", x2)
    s1, s2 = tuple(x1.shape), tuple(x2.shape)
    if len(s1) < 2 or len(s2) < 2:
        raise ValueError(f"For 'batch_dot', the inputs x1, x2 should have 'dimension >= 2', but "
                         f"got 'len(x1_shape)': ({len(s1)}) and 'len(x2_shape)': ({len(s2)}).")
    for name, t in (("x1", x1), ("x2", x2)):
        if t.dtype != _dt.float32:
            raise TypeError(f"For 'batch_dot', '{name}' must be float32, but got {t.dtype}")
    if s1[0] != s2[0]:
        raise ValueError(f"For 'batch_dot', the inputs 'x1', 'x2' should have the same batch "
                         f"sizes, but got 'x1_batch_size': {s1[0]} and 'x2_batch_size': {s2[0]}.")
    axes = _batch_dot_axes(axes, len(s1), len(s2))
    if len(s1) == 2:
        x1, axes[0] = _A.expand_dims(x1, 1), axes[0] + 1
    if len(s2) == 2:
        x2 = _A.expand_dims(x2, 2)
    t1, t2 = tuple(x1.shape), tuple(x2.shape)
    if t1[axes[0]] != t2[axes[1]]:
        raise ValueError(f"For 'batch_dot', the contracted axes must have the same size, but got "
                         f"shapes {s1} and {s2} with axes {axes}")
    p1, r1, f1 = _batch_dot_operand(t1, axes[0], False)
    p2, r2, f2 = _batch_dot_operand(t2, axes[1], True)
    a = _A.reshape(_A.transpose(x1, p1), r1)
    b = _A.reshape(_A.transpose(x2, p2), r2)
    out = _A.reshape(_L.bmm(a, b), (s1[0],) + f1 + f2)
    if len(s1) == 2:
        return _A.squeeze(out, 1)
    if len(s2) == 2:
        return _A.squeeze(out, -1)
    return out


class Partial:
    """MindSpore's `ops.Partial()` primitive: `Partial()(func, *args)` is `func` with its first
    arguments bound (functools.partial; in graph mode the call is parsed when it runs)."""

    def __init__(self):
        self.name = "Partial"

    def __call__(self, func, *args):
        if not callable(func):
            raise TypeError(f"For 'Partial', the first input must be a function, but got "
                            f"{type(func).__name__}")
        return _functools.partial(func, *args)
