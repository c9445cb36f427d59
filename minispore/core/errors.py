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


def at_user_site(e: Exception) -> Exception:
    """`e` with the caret of the user's line appended: the innermost calling frame outside the
    minispore package (a library layer's argument error then points at the user's call, not
    into the library). While a graph is parsed the parser attaches the user's line itself, so
    `e` is returned as is there."""
    import os
    import sys
    from .primitive import executor
    if getattr(executor.current, "loc", None) is not None:
        return e                            # the graph parser locates it at the user's line
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(pkg):
        f = f.f_back
    if f is None:
        return e
    import linecache
    from .graph.ir import Loc
    line, col = f.f_lineno, 0
    pos = next((p for i, p in enumerate(f.f_code.co_positions()) if 2 * i == f.f_lasti), None)
    if pos is not None and pos[0] == line and pos[2] is not None:
        col = pos[2]
    text = linecache.getline(f.f_code.co_filename, line).rstrip("\n")
    new = type(e)(f"{e}\n{Loc(f.f_code.co_filename, line, col, text).caret()}")
    new._ms_located = True
    return new
