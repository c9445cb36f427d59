"""Typed errors of minispore: each derives from the builtin a Python user expects and, where
MindSpore raises another class for the same mistake, from that class too (DESIGN.md, Conventions),
so `except ValueError` and a MindSpore user's `except RuntimeError` both catch a shape error."""


class MinisporeError(Exception):
    """Base of every error minispore raises on purpose."""


class ShapeError(MinisporeError, ValueError, RuntimeError):
    """Shapes that do not fit an op (MindSpore raises ValueError or RuntimeError for these)."""


class DTypeError(MinisporeError, TypeError):
    """A dtype an op or a backend does not accept."""


class DeviceError(MinisporeError, RuntimeError):
    """A device that cannot be used (missing library, driver, or not implemented)."""


class KernelNotFound(MinisporeError, NotImplementedError):
    """A backend has no kernel for a declared primitive."""


class GraphSyntaxError(MinisporeError, SyntaxError, RuntimeError):
    """Python source that graph mode cannot compile."""


class OutOfRangeError(MinisporeError, OverflowError, TypeError):
    """A value that does not fit the dtype it must become (numpy raises OverflowError, MindSpore
    TypeError, for a Python int outside int64 in Tensor(...))."""
