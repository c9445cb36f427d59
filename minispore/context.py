"""minispore.context: MindSpore's `mindspore.context`: the execution context (set_context,
get_context, the modes) and the auto-parallel context of one process (ParallelMode,
set/get/reset_auto_parallel_context, set/get/reset_ps_context)."""
from .core.auto_parallel import (ParallelMode, get_auto_parallel_context,
                                 reset_auto_parallel_context, set_auto_parallel_context)
from .core.context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context
from .core.context import COMPATIBLE, LAX, STRICT
from .core.ps_context import get_ps_context, reset_ps_context, set_ps_context

__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "STRICT", "COMPATIBLE", "LAX", "ParallelMode",
           "get_auto_parallel_context", "get_context", "reset_auto_parallel_context", "set_auto_parallel_context",
           "set_context", "get_ps_context", "set_ps_context", "reset_ps_context"]
