"""MindSpore's Primitive classes of the sorting family: Sort, TopK, CumSum, CumProd (views of
core/ops/sorting.py), and RandomChoiceWithMask (a random order by topk of uniform keys)."""
from __future__ import annotations

from ..core.ops import sorting as _S
from ..core.primitive import Primitive


def _flag(cls, name, v):
    if not isinstance(v, bool):
        raise TypeError(f"{cls}: {name} must be a bool, got {type(v).__name__} {v!r}")
    return v


class Sort(Primitive):
    """`Sort(axis=-1, descending=False)(x)` -> (values, int32 indices), a stable sort."""

    def __init__(self, axis=-1, descending=False):
        self.name = "Sort"
        self.axis, self.descending = axis, _flag("Sort", "descending", descending)

    def __call__(self, x):
        return _S.sort(x, self.axis, self.descending)


class TopK(Primitive):
    """`TopK(sorted=True)(input_x, k)` -> (values, int32 indices) of the k largest elements
    along the last axis (sorted=False returns them sorted too, as MindSpore's CPU kernel)."""

    def __init__(self, sorted=True):
        self.name = "TopK"
        self.sorted = _flag("TopK", "sorted", sorted)

    def __call__(self, input_x, k):
        return _S.topk(input_x, k, -1, True, self.sorted)


class CumSum(Primitive):
    """`CumSum(exclusive=False, reverse=False)(x, axis)`: the running sum along axis."""

    def __init__(self, exclusive=False, reverse=False):
        self.name = "CumSum"
        self.exclusive = _flag("CumSum", "exclusive", exclusive)
        self.reverse = _flag("CumSum", "reverse", reverse)

    def __call__(self, x, axis):
        return _S.cumsum_scan(x, axis, self.exclusive, self.reverse)


class CumProd(Primitive):
    """`CumProd(exclusive=False, reverse=False)(x, axis)`: the running product along axis, in
    x's dtype (an integer product wraps)."""

    def __init__(self, exclusive=False, reverse=False):
        self.name = "CumProd"
        self.exclusive = _flag("CumProd", "exclusive", exclusive)
        self.reverse = _flag("CumProd", "reverse", reverse)

    def __call__(self, x, axis):
        return _S.cumprod_scan(x, axis, self.exclusive, self.reverse)


class RandomChoiceWithMask(Primitive):
    """`RandomChoiceWithMask(count=256, seed=0, seed2=0)(input_x)` -> (index int32 (count,
    rank), mask bool (count,)): up to `count` coordinates of the True elements of the bool
    tensor input_x (rank 1 to 5), in random order; rows past the number of True elements are
    zeros with mask False. Composed of a uniform draw and topk (the draws are minispore's
    stream, not MindSpore's: the same set, another order)."""

    def __init__(self, count=256, seed=0, seed2=0):
        self.name = "RandomChoiceWithMask"
        for what, v in (("count", count), ("seed", seed), ("seed2", seed2)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"For 'RandomChoiceWithMask', '{what}' must be an int, but "
                                f"got {type(v).__name__}")
        if count <= 0:
            raise ValueError(f"For 'RandomChoiceWithMask', 'count' must be positive, but got "
                             f"{count}")
        if seed < 0 or seed2 < 0:
            raise ValueError("For 'RandomChoiceWithMask', 'seed' and 'seed2' must be "
                             "non-negative")
        self.count, self.seed, self.seed2 = count, seed, seed2

    def __call__(self, input_x):
        import numpy as np
        from ..core import dtype as dt
        from ..core.ops import array as A, index_ops as I, math as M, random as R
        from ..core.tensor import Tensor
        if not isinstance(input_x, Tensor) or input_x.dtype is not dt.bool_:
            got = f"Tensor[{input_x.dtype}]" if isinstance(input_x, Tensor) else \
                type(input_x).__name__
            raise TypeError(f"For primitive[RandomChoiceWithMask], the input argument[input_x] "
                            f"must be a type of {{Tensor[Bool]}}, but got {got}.")
        rank = len(input_x.shape)
        if not 1 <= rank <= 5:
            raise ValueError(f"For 'RandomChoiceWithMask', input[0] rank should be between 1 "
                             f"and 5, but got:{rank}")
        n = int(np.prod(input_x.shape))
        coords = np.indices(input_x.shape).reshape(rank, -1).T.astype(np.int32)   # (n, rank)
        keys = R.rand((n,), seed=self.seed or self.seed2 or None)
        keys = M.where(A.reshape(input_x, (n,)), keys, -1.0)
        k = min(self.count, n)
        values, order = _S.topk(keys, k, -1, True, True)
        mask = M.ge(values, 0.0)
        index = I.gather(Tensor(coords), order, 0)
        index = M.where(A.expand_dims(mask, 1), index, 0)
        if k < self.count:                      # more rows than elements: zeros, mask False
            index = A.concat((index, A.zeros((self.count - k, rank), dt.int32)), 0)
            mask = A.concat((mask, A.zeros((self.count - k,), dt.bool_)), 0)
        return index, mask
