"""Side effects in both modes: `ops.assign` (a Parameter takes a new value: immediately in
PyNative; after the call in a graph, with later reads in the graph seeing the new value),
`ops.depend`, and printing (`ops.Print`, `ops.print_`), which prints the same text in both modes
(in a graph, at every run, with the runtime values)."""
from __future__ import annotations

from ..primitive import executor
from ..tensor import Parameter


def assign(variable: Parameter, value):
    """variable = value; returns the variable's new value (the executor decides when it takes
    it: at once in PyNative, after the call in a graph)."""
    if not isinstance(variable, Parameter):
        raise TypeError(f"assign: the variable must be a Parameter, got "
                        f"{type(variable).__name__}")
    return executor.current.assign_parameter(variable, value)


def depend(value, expr):
    """Return `value`; `expr` is computed first (program order is kept in both modes)."""
    return value


def print_(*inputs):
    """Print strings and tensors (tensors as Tensor(shape=..., dtype=..., value=...))."""
    executor.current.print_values(inputs)
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
