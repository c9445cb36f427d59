"""`ms.jit`: compile a function (or method) to a graph in either mode, as MindSpore's `jit`."""
from __future__ import annotations

import functools

from . import context
from .graph import compile as graph_compile

_CAPTURE_MODES = ("ast",)


def jit(function=None, *, capture_mode="ast", jit_level=None, dynamic=0, fullgraph=False,
        backend="", **options):
    """Decorator: `@ms.jit`, `@ms.jit(...)` or `ms.jit(fn)`. The function's source is parsed to
    a graph on the first call per input signature; later calls run the cached graph. Only
    capture_mode='ast' (source conversion) exists: 'bytecode' and 'trace' are MindSpore's
    experimental alternatives and raise ValueError here rather than silently changing meaning.
    `jit_level` (O0/O1/O2) applies to this function; None uses the context's jit_level."""
    if jit_level is not None and jit_level not in ("O0", "O1", "O2"):
        raise ValueError(f"jit: jit_level={jit_level!r} is not valid; choose 'O0', 'O1' or 'O2'")
    if capture_mode not in _CAPTURE_MODES:
        raise ValueError(f"jit: capture_mode={capture_mode!r} is not supported; minispore "
                         f"converts the Python source: use capture_mode='ast'")

    def deco(fn):
        def at_level(run, *args):
            """run(*args) with this function's jit_level in force (if it names one)."""
            if jit_level is None:
                return run(*args)
            state = context._state
            saved, state["jit_level"] = state["jit_level"], jit_level
            try:
                return run(*args)
            finally:
                state["jit_level"] = saved

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return at_level(lambda: graph_compile.run(fn, args, kwargs, name=fn.__qualname__))

        def run_steps(batches):
            """fn over each batch in order, as one compiled program where the backend can
            (ms.data_sink)."""
            return at_level(graph_compile.run_steps, fn, (), batches)
        wrapper.__wrapped_jit__ = fn
        wrapper._run_steps = run_steps
        return wrapper
    return deco(function) if function is not None else deco
