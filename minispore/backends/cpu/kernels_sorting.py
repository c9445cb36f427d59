"""Eager CPU kernels of sort and cumsum: their numpy references (core/ops/sorting.py), numpy's
stable sort and its left-to-right add.accumulate. The native sink's lowerings
(native_sorting.py) compute the same results: a sort's output is fixed by its order rule (stable,
NaN last ascending), so any stable sort gives the same bits, and cumsum adds in the same order
in the same dtype; tests/graph/test_o2_equals_pynative.py holds the two together."""
from __future__ import annotations

from ...core.primitive import REGISTRY

SORTING_OPS = ("sort", "cumsum")


def register(backend, ref_kernel) -> None:
    for name in SORTING_OPS:
        backend.register(name)(ref_kernel(REGISTRY[name]))
