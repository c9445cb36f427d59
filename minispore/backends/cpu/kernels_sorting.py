"""Eager CPU kernels of sort, cumsum and cumprod: their numpy references (core/ops/sorting.py),
numpy's stable sort and its left-to-right add/multiply.accumulate. The native sink's lowerings
(native_sorting.py) compute the same results: a sort's output is fixed by its order rule (stable,
NaN last ascending), so any stable sort gives the same bits, and the scans accumulate in the same
order in the same dtype; tests/graph/test_o2_equals_pynative.py holds the two together."""
from __future__ import annotations

from ...core.primitive import REGISTRY

SORTING_OPS = ("sort", "cumsum", "cumprod")


def register(backend, ref_kernel) -> None:
    for name in SORTING_OPS:
        backend.register(name)(ref_kernel(REGISTRY[name]))
