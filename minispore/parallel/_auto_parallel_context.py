"""minispore.parallel._auto_parallel_context: MindSpore's `auto_parallel_context()` object and
the module-level `_set/_get/_reset_auto_parallel_context` that scripts import, over minispore's
auto-parallel context (one process: see minispore.core.auto_parallel). The object's
`get_<key>()` getters read the context; its setters are not provided (use
set_auto_parallel_context, which validates what one process can honour)."""
from ..core import auto_parallel as _ap

__all__ = ["auto_parallel_context", "_set_auto_parallel_context", "_get_auto_parallel_context",
           "_reset_auto_parallel_context"]


class _AutoParallelContext:
    """`get_<key>()` for each key get_auto_parallel_context knows."""

    def __getattr__(self, name):
        key = name[4:] if name.startswith("get_") else None
        if key is None or (key != "search_mode" and key not in _ap._state):
            raise AttributeError(f"auto_parallel_context() has no attribute {name!r} in "
                                 f"minispore (it provides get_<key>() for the keys of "
                                 f"get_auto_parallel_context)")
        return lambda: _ap.get_auto_parallel_context(key)


_CONTEXT = _AutoParallelContext()


def auto_parallel_context():
    """The process's auto-parallel context object."""
    return _CONTEXT


_set_auto_parallel_context = _ap.set_auto_parallel_context
_get_auto_parallel_context = _ap.get_auto_parallel_context
_reset_auto_parallel_context = _ap.reset_auto_parallel_context
