"""`ms.jit`: compile a function (or method) to a graph in either mode, as MindSpore's `jit`."""
from __future__ import annotations

import functools

from .graph import compile as graph_compile

_CAPTURE_MODES = ("ast",)


def jit(function=None, *, capture_mode="ast", jit_level="O0", dynamic=0, fullgraph=False,
        backend="", **options):
    """Decorator: `@ms.jit`, `@ms.jit(...)` or `ms.jit(fn)`. The function's source is parsed to
    a graph on the first call per input signature; later calls run the cached graph. Only
    capture_mode='ast' (source conversion) exists: 'bytecode' and 'trace' are MindSpore's
    experimental alternatives and raise ValueError here rather than silently changing meaning."""
    if capture_mode not in _CAPTURE_MODES:
        raise ValueError(f"jit: capture_mode={capture_mode!r} is not supported; minispore "
                         f"converts the Python source: use capture_mode='ast'")

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return graph_compile.run(fn, args, kwargs, name=fn.__qualname__)
        wrapper.__wrapped_jit__ = fn
        return wrapper
    return deco(function) if function is not None else deco
