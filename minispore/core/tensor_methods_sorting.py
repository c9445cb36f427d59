"""The sorting family's Tensor methods with MindSpore 2.10's overloads: sort and argsort
(`(dim=-1, descending=False, stable=False)` and `(axis=-1, descending=False)`), topk (dim None
and -1 both the last axis), cumsum (`(dim, *, dtype=None)` and `(axis=None, dtype=None)`: no
axis flattens first), cumprod and msort, attached to Tensor by core.tensor_methods_extra. The sort is always stable, so `stable=False` (any order
of ties allowed) and `stable=True` give the same result, as on MindSpore's CPU."""
from __future__ import annotations

from .ops import array as A
from .ops import sorting as S
from .overloads import is_bool, is_int, overloaded, variant
from .tensor import Tensor


def _stable(name, stable):
    if not is_bool(stable):
        raise TypeError(f"Tensor.{name}: stable must be a bool, got {type(stable).__name__}")


def _sort_dim(self, dim=-1, descending=False, stable=False):
    _stable("sort", stable)
    return S.sort(self, dim, descending)


def _sort_axis(self, axis=-1, descending=False):
    return S.sort(self, axis, descending)


def _argsort_dim(self, dim=-1, descending=False, stable=False):
    _stable("argsort", stable)
    return S.argsort(self, dim, descending)


def _argsort_axis(self, axis=-1, descending=False):
    return S.argsort(self, axis, descending)


def _topk(self, k, dim=None, largest=True, sorted=True):
    return S.topk(self, k, dim, largest, sorted)


def _topk_last(self, k, dim=-1, largest=True, sorted=True):
    return S.topk(self, k, dim, largest, sorted)


def _cumsum_dim(self, dim, *, dtype=None):
    return S.cumsum(self, dim, dtype)


def _cumsum_axis(self, axis=None, dtype=None):
    if axis is None:
        return S.cumsum(A.reshape(self, (-1,)), 0, dtype)
    return S.cumsum(self, axis, dtype)


METHODS = {
    "sort": overloaded("Tensor", "sort", variant(_sort_axis),
                       variant(_sort_dim, lambda a: is_int(a["dim"]))),
    "argsort": overloaded("Tensor", "argsort", variant(_argsort_axis),
                          variant(_argsort_dim, lambda a: is_int(a["dim"]))),
    "topk": overloaded("Tensor", "topk", variant(_topk), variant(_topk_last)),   # one meaning
    "cumsum": overloaded("Tensor", "cumsum", variant(_cumsum_dim, lambda a: is_int(a["dim"])),
                         variant(_cumsum_axis)),
    "cumprod": lambda self, dim, dtype=None: S.cumprod(self, dim, dtype),
    "msort": lambda self: S.msort(self),
}
for _n, _f in METHODS.items():
    setattr(Tensor, _n, _f)
