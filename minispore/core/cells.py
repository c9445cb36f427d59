"""Where core meets the Cell class without importing it: `minispore.nn.cell` registers `Cell`
here when it is defined, and core (jit, data_sink, the graph parser) asks `is_cell(obj)` /
`is_cell_class(t)`. Core sits below nn and never imports it; until nn registers, nothing is a
Cell."""
from __future__ import annotations

_cell_classes: tuple[type, ...] = ()


def register_cell_class(cls: type) -> type:
    """Make `cls` (and its subclasses) count as a Cell for core; returns `cls` (a decorator)."""
    global _cell_classes
    if cls not in _cell_classes:
        _cell_classes = _cell_classes + (cls,)
    return cls


def is_cell(obj) -> bool:
    """Whether `obj` is an instance of a registered Cell class."""
    return isinstance(obj, _cell_classes)


def is_cell_class(obj) -> bool:
    """Whether `obj` is a registered Cell class or a subclass of one."""
    return isinstance(obj, type) and issubclass(obj, _cell_classes)
