"""Activation Cells (nn.ReLU, Sigmoid, Tanh, GELU, Softmax, LogSoftmax) and `get_activation`,
which maps the activation names accepted by e.g. `nn.Dense(activation='relu')` to Cells."""
from __future__ import annotations

from ...core.arg_checks import check_bool
from ...core.errors import MinisporeError
from ...core.ops import math as _m
from ...core.ops import nn as _nn
from ..cell import Cell


def _check_axis(cls: str, axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, tuple, list)):
        raise TypeError(f"{cls}: axis must be an int, got {axis!r}; e.g. axis=-1")
    return axis


class ReLU(Cell):
    """max(x, 0)."""

    def construct(self, x):
        return _m.relu(x)


class Sigmoid(Cell):
    """1 / (1 + exp(-x))."""

    def construct(self, x):
        return _m.sigmoid(x)


class Tanh(Cell):
    def construct(self, x):
        return _m.tanh(x)


class GELU(Cell):
    """GELU; MindSpore's default approximate=True uses the tanh approximation, False uses erf."""

    def __init__(self, approximate=True):
        super().__init__()
        check_bool("GELU", "approximate", approximate)
        self.approximate = "tanh" if approximate else "none"

    def construct(self, x):
        return _m.gelu(x, approximate=self.approximate)

    def extend_repr(self):
        return f"approximate={self.approximate == 'tanh'}"


class Softmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = _check_axis("Softmax", axis)

    def construct(self, x):
        return _nn.softmax(x, self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class LogSoftmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = _check_axis("LogSoftmax", axis)

    def construct(self, x):
        return _nn.log_softmax(x, self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class UnknownActivationError(MinisporeError, ValueError, KeyError):
    """An activation name that is not known (MindSpore raises KeyError for it)."""

    def __str__(self):
        return str(self.args[0])


_ACTIVATIONS = {"relu": ReLU, "sigmoid": Sigmoid, "tanh": Tanh, "gelu": GELU, "softmax": Softmax,
                "logsoftmax": LogSoftmax, "log_softmax": LogSoftmax}


def get_activation(name, prim_name=None):
    """A new activation Cell for `name` (case-insensitive), a Cell as it is, None for None.
    `prim_name` names the caller in the error messages (as MindSpore's)."""
    who = prim_name or "get_activation"
    if name is None or isinstance(name, Cell):
        return name
    if isinstance(name, str):
        cls = _ACTIVATIONS.get(name.lower())
        if cls is not None:
            return cls()
        raise UnknownActivationError(f"{who}: unknown activation {name!r}; use one of "
                       f"{sorted(_ACTIVATIONS)}, a Cell or None")
    raise TypeError(f"{who}: activation must be a str, a Cell or None, got "
                    f"{type(name).__name__}")

__all__ = ["ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax", "get_activation"]
