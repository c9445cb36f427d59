"""MindSpore's Primitive classes of the sorting family: Sort, TopK, CumSum, CumProd (views of
core/ops/sorting.py)."""
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
