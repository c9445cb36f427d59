"""`ms.data_sink(fn, dataset, sink_size)`: several training steps per host interaction.

The returned function takes `sink_size` batches from the dataset (anything with
`create_tuple_iterator()`, or an iterable of tuples of tensors/arrays; it starts over when
exhausted) and runs `fn` on each as a compiled graph, returning the last step's result, as
MindSpore's `data_sink` does. What a device gains from it is the backend's `loop_sink` context:
on the simulated Ascend, one host launch and one H2D transfer of all the batches (a device data
queue) serve the whole loop, and each step costs only device-side task dispatch. On the CPU at
jit_level O2 the sink is one multi-step program: the batches are stacked and the native
program's N-step loop runs the step over them in one call, carrying the updated Parameters from
step to step (compile.run_steps, native_sink.py NativeProgram.run_steps); at O0/O1, and for an
O2 graph the native sink cannot lower (it runs kernel by kernel), the compiled step runs once
per batch.
"""
from __future__ import annotations

import contextlib

import numpy as np

from .cells import is_cell
from .device import current, get_backend
from . import context
from .tensor import Tensor


def _batches(dataset):
    if hasattr(dataset, "create_tuple_iterator"):
        return dataset.create_tuple_iterator()
    return iter(dataset)


def data_sink(fn, dataset, sink_size: int = 1, jit_config=None, input_signature=None):
    if not isinstance(sink_size, int) or isinstance(sink_size, bool) or sink_size < 1:
        raise ValueError(f"data_sink: sink_size must be an int >= 1, got {sink_size!r}")
    if jit_config is not None or input_signature is not None:
        raise NotImplementedError("data_sink: jit_config and input_signature are not supported "
                                  "yet; set jit_level with ms.set_context")
    from .jit import jit
    # a Cell compiles itself in GRAPH_MODE; a jitted function already is one
    step = fn if is_cell(fn) or hasattr(fn, "__wrapped_jit__") else jit(fn)
    state = {"it": _batches(dataset)}

    def take():
        try:
            b = next(state["it"])
        except StopIteration:
            state["it"] = _batches(dataset)
            try:
                b = next(state["it"])
            except StopIteration:
                raise ValueError("data_sink: the dataset yields no batches") from None
        b = b if isinstance(b, (tuple, list)) else (b,)
        return tuple(x if isinstance(x, Tensor) else Tensor(np.asarray(x)) for x in b)

    def sink_fun():
        batches = [take() for _ in range(sink_size)]
        backend = current.backend or get_backend(context._state["device_target"])
        loop = getattr(backend, "loop_sink", None)
        with (loop(batches) if loop is not None else contextlib.nullcontext()):
            return _steps(step, batches)
    return sink_fun


def _steps(step, batches):
    """The steps of one sink: one compiled program over all the batches where the backend's
    program can loop by itself (the CPU's O2 sink), else one compiled call per batch; a Cell in
    PYNATIVE_MODE runs eagerly, step by step."""
    from .graph import compile as graph_compile
    if is_cell(step):
        if context._state["mode"] != context.GRAPH_MODE:
            out = None
            for b in batches:
                out = step(*b)
            return out
        return graph_compile.run_steps(type(step).construct, (step,), batches, key_obj=step,
                                       name=type(step).__name__)
    return step._run_steps(batches)
