"""Eager CPU kernels of sort, topk, cumsum and cumprod.

sort, cumsum and cumprod run their numpy references (core/ops/sorting.py): numpy's stable sort
and its left-to-right add/multiply.accumulate. The native sink's lowerings (native_sorting.py)
compute the same results: a sort's output is fixed by its order rule (stable, NaN last
ascending), so any stable sort gives the same bits, and the scans accumulate in the same order
in the same dtype; tests/graph/test_o2_equals_pynative.py holds the two together.

topk is MindSpore's CPU selection (core/ops/topk_select.py, which its numpy reference runs as
Python), compiled with numba from that module's own source: `select_module()` is that source
with each function rebound to its numba compilation (so they call one another compiled) and two
C functions over it, loaded from the disk cache as a kernel module (codegen.module_for, numba's
cache=True beside it). The eager kernel calls the compiled select_rows; the native lowering
calls the C functions (`select_cfunc`).
"""
from __future__ import annotations

import inspect
import threading

import numpy as np

from ...core.primitive import REGISTRY

REF_OPS = ("sort", "cumsum", "cumprod")
_lock = threading.RLock()
_module: list = []

_TAIL = """
import numba as _nb
from numba import types as _nt
for _name in JIT_FUNCTIONS:
    globals()[_name] = _nb.njit(cache=True, nogil=True)(globals()[_name])


def _rows(x, m, n, k, sorted_, out):
    select_rows(_nb.carray(x, (m, n)), k, sorted_ != 0, _nb.carray(out, (m, k)))


def _cfunc(key_type):
    sig = _nt.void(_nt.CPointer(key_type), _nt.int64, _nt.int64, _nt.int64, _nt.int64,
                   _nt.CPointer(_nt.int64))
    return _nb.cfunc(sig, cache=True, nogil=True)(_rows)
"""


def select_module():
    """The compiled selection module (made once per process, from the disk cache when there)."""
    if not _module:
        with _lock:
            if not _module:
                from ...core.ops import topk_select as T
                from .codegen import module_for
                _module.append(module_for("topk_select", inspect.getsource(T) + _TAIL))
    return _module[0]


_cfuncs: dict = {}


def select_cfunc(kind: str):
    """The C function `void(key* x, i64 m, i64 n, i64 k, i64 sorted, i64* out)` running
    select_rows on the (m, n) keys at x, for keys of kind "f64" or "i64" (compiled on first
    use, cached on disk)."""
    if kind not in _cfuncs:
        with _lock:
            if kind not in _cfuncs:
                from numba import types as nt
                mod = select_module()
                _cfuncs[kind] = mod._cfunc(nt.float64 if kind == "f64" else nt.int64)
    return _cfuncs[kind]


def _topk(in_metas, attrs, out_meta):
    from ...core.ops.topk_select import compare_keys
    k, sorted_ = attrs["k"], attrs["sorted"]
    select_rows = select_module().select_rows

    def run(x):
        n = x.shape[-1]
        keys = compare_keys(x.reshape(-1, n))
        pos = np.zeros((keys.shape[0], k), np.int64)
        select_rows(keys, k, sorted_, pos)
        pos = pos.reshape(x.shape[:-1] + (k,))
        return (np.ascontiguousarray(np.take_along_axis(x, pos, -1)),
                np.ascontiguousarray(pos.astype(np.int32)))
    return run


def register(backend, ref_kernel) -> None:
    for name in REF_OPS:
        backend.register(name)(ref_kernel(REGISTRY[name]))
    backend.register("topk")(_topk)
