"""The native sink's lowering registry: op name -> the function that emits a node of that op,
and op name -> the arena scratch (bytes) such a node needs while it runs.

Each family module (native_lower, native_reduce, native_matmul, native_rows, native_windows,
native_pool, native_norms, native_random, native_index) registers its lowerings here with
`@lowering("op", ...)` or `register(...)` when it is imported; no family imports another's
table. native_graph.py imports every family once and reads the tables.
"""
from __future__ import annotations

LOWER: dict = {}            # op name -> lower(emitter, node, attrs)
SCRATCH: dict = {}          # op name -> scratch(node) -> arena bytes


def register(names, fn, scratch=None):
    """Register `fn` as the lowering of each op in `names` (a name or a tuple of names), with
    `scratch(node)` as the arena bytes a node of it needs; an op registered twice is an
    error."""
    for name in (names,) if isinstance(names, str) else names:
        if name in LOWER:
            raise ValueError(f"two native lowerings of '{name}'")
        LOWER[name] = fn
        if scratch is not None:
            SCRATCH[name] = scratch
    return fn


def lowering(*names, scratch=None):
    """Decorator form of register: `@lowering("softmax", "log_softmax")`."""
    def deco(fn):
        return register(names, fn, scratch)
    return deco
