"""Validation of Python arguments shared by the layers, the dataset samplers and the training
tools (MindSpore's `Validator`): one rule per kind of argument, one wording of its error."""
from __future__ import annotations


def check_bool(who: str, name: str, value) -> bool:
    """`value` if it is a bool, else a TypeError naming `who` and `name`. As MindSpore's
    Validator.check_bool, only `bool` itself is accepted (not 0/1, numpy bools or Tensors): a
    truthy stand-in would be accepted by one API and refused by another."""
    if not isinstance(value, bool):
        raise TypeError(f"{who}: {name} must be a bool, got {value!r} ({type_name(value)})")
    return value


def type_name(value) -> str:
    """The type of `value` as a user reads it: `int`, `numpy.bool`, `minispore...Tensor`."""
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
