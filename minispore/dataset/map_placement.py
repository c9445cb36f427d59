"""Where a map's operations run: in the reader's thread, on worker threads (each with its own
copy of the built-in transforms, `copy_ops`) or on worker processes. A map of built-in
transforms only (`is_builtin`) computes on processes even with python_multiprocessing=False
(`builtin_processes` says why that changes no result), after `INLINE_START_S` of work in the
reader's thread, so a small dataset never forks and the workers fork with the transforms'
libraries loaded."""
from __future__ import annotations

import os
import types


def is_builtin(obj, depth: int = 0) -> bool:
    """Whether `obj` is a minispore.dataset transform holding no user code (no callable from
    outside minispore.dataset among its attributes, lists and dicts included): a pure
    function of its input and the row's random key, safe to run in a worker process."""
    if depth > 4:
        return False
    if isinstance(obj, (list, tuple)):
        return all(is_builtin(v, depth + 1) for v in obj)
    if isinstance(obj, dict):
        return all(is_builtin(v, depth + 1) for v in obj.values())
    if not callable(obj) or isinstance(obj, type):
        return True                             # data: numbers, arrays, enums, draws, ...
    function = isinstance(obj, types.FunctionType)
    module = (obj.__module__ if function else type(obj).__module__) or ""
    if not module.startswith("minispore.dataset."):
        return False
    if function:                                # and what its closure holds
        return all(is_builtin(c.cell_contents, depth + 1) for c in obj.__closure__ or ())
    return all(is_builtin(v, depth + 1) for v in getattr(obj, "__dict__", {}).values())


def builtin_processes(ops, workers: int) -> bool:
    """Whether a map with python_multiprocessing=False runs its operations in worker
    processes. MindSpore runs its C++ transforms on native threads that compute in parallel;
    minispore's transforms are Python (numpy, OpenCV, Pillow) holding the GIL between kernel
    calls, so threads cannot overlap them. When every operation is a built-in transform
    holding no user code (`is_builtin`), the map computes in forked processes instead: their
    results are the same bits (each row's random draws are keyed by its epoch and number,
    never by its worker), and no user function runs outside the main process, so user
    Python functions keep MindSpore's thread semantics. MINISPORE_DATASET_THREADS_ONLY=1 in
    the environment keeps threads."""
    return workers > 1 and hasattr(os, "fork") and \
        os.environ.get("MINISPORE_DATASET_THREADS_ONLY", "") in ("", "0") and is_builtin(ops)


def copy_ops(ops) -> list:
    """One worker thread's operations: its own copy of each minispore.dataset transform (as
    MindSpore gives each worker a copy of its C++ transforms, random state included); user
    Python callables are shared, as MindSpore's PyFunc workers share them (a bound method
    sees its object's updates)."""
    import copy
    out = []
    for op in ops:
        if not type(op).__module__.startswith("minispore.dataset."):
            out.append(op)
            continue
        try:
            out.append(copy.deepcopy(op))
        except Exception:                   # a lock, a file, ...: the workers share it
            out.append(op)
    return out


# the compute time a map of built-in transforms spends in the reader's thread before it starts
# worker processes: a dataset it maps within that time never forks
INLINE_START_S = 0.015


__all__ = []
