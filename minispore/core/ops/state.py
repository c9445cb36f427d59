"""Side effects in both modes: `ops.assign` (a Parameter takes a new value: immediately in
PyNative; after the call in a graph, with later reads in the graph seeing the new value),
`ops.depend`, and printing (`ops.Print`, `ops.print_`), which prints the same text in both modes
(in a graph, at every run, with the runtime values)."""
from __future__ import annotations

from ..primitive import executor
from ..tensor import Parameter, Tensor, to_numpy


def _builder():
    from ..graph.builder import GraphBuilder
    ex = executor.current
    return ex if isinstance(ex, GraphBuilder) else None


def assign(variable: Parameter, value):
    """variable = value; returns the variable's new value."""
    if not isinstance(variable, Parameter):
        raise TypeError(f"assign: the variable must be a Parameter, got "
                        f"{type(variable).__name__}")
    b = _builder()
    if b is not None:
        b.assign(variable, value)
        from ..graph.builder import sym
        return sym(b.value_of(variable))
    if isinstance(value, Tensor):
        if tuple(value.shape) != tuple(variable.shape):
            from ..errors import ShapeError
            raise ShapeError(f"assign: Parameter '{variable.name}' has shape {variable.shape}, "
                             f"the value has shape {value.shape}; they must match")
        if value.dtype is not variable.dtype:
            value = value.astype(variable.dtype)
        # buffers are immutable: the Parameter takes the value's buffer where it lives (on a
        # device it stays there; set_data would round-trip through the host)
        variable._buf = value._buf
    else:
        variable.set_data(to_numpy(value, variable.dtype))
    return variable


def depend(value, expr):
    """Return `value`; `expr` is computed first (program order is kept in both modes)."""
    return value


def print_(*inputs):
    """Print strings and tensors (tensors as Tensor(shape=..., dtype=..., value=...))."""
    b = _builder()
    if b is not None:
        b.print_node(inputs)
        return None
    from ..graph.execute import _fmt
    print(" ".join(_fmt(a._concrete()) if isinstance(a, Tensor) else str(a) for a in inputs))
    return None


class Print:
    """MindSpore's `ops.Print()`: `ops.Print()(*inputs)`."""

    def __call__(self, *inputs):
        return print_(*inputs)


class Assign:
    def __call__(self, variable, value):
        return assign(variable, value)


class Depend:
    def __call__(self, value, expr):
        return depend(value, expr)
