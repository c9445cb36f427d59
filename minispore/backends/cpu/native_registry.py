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
# ops whose eager CPU kernel computes a half (float16/bfloat16) node in float32: its half
# inputs converted to float32, the float32 kernel, each output rounded once to its half dtype
# (elementwise.py cpu_np); native_graph lowers such a node as that float32 node
HALF_AS_FLOAT32: set = set()


def register(names, fn, scratch=None, half_as_float32: bool = False):
    """Register `fn` as the lowering of each op in `names` (a name or a tuple of names), with
    `scratch(node)` as the arena bytes a node of it needs (None: none) and, with
    `half_as_float32`, its half nodes lowered as float32 nodes (HALF_AS_FLOAT32); an op
    registered twice is an error."""
    for name in (names,) if isinstance(names, str) else names:
        if name in LOWER:
            raise ValueError(f"two native lowerings of '{name}'")
        LOWER[name] = fn
        if scratch is not None:
            SCRATCH[name] = scratch
        if half_as_float32:
            HALF_AS_FLOAT32.add(name)
    return fn


def lowering(*names, scratch=None, half_as_float32: bool = False):
    """Decorator form of register: `@lowering("softmax", "log_softmax")`."""
    def deco(fn):
        return register(names, fn, scratch, half_as_float32)
    return deco
