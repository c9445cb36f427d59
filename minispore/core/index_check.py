"""The IndexError of an index or a class label out of range, one message for every backend, mode
and jit level: the op, the axis, the offending value, the valid range and, for a check compiled
into a graph (the CPU's native sink, the O0/O1 executor), the user's source line of the node.

`IndexCheck` describes one check site (what a kernel or a sink's generated code tests);
`error(value)` builds the exception; `check(values)` is the numpy test the eager kernels and the
references run. Indices may count from the end (gather, scatter: -size..size-1); class labels
may not (0..size-1), and a label equal to `ignore` is skipped (cross_entropy's ignore_index)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class IndexCheck:
    op: str                          # the op the user called (gather, cross_entropy, ...)
    size: int                        # the axis' length (number of classes for a label)
    axis: int | None = None          # the indexed axis (None: not meaningful to the user)
    negative: bool = True            # negative values count from the end
    what: str = "index"              # "index" or "class label"
    ignore: int | None = None        # a label value that is skipped, not checked
    loc: object = None               # graph.ir.Loc of the node in a compiled graph

    @property
    def low(self) -> int:
        return -self.size if self.negative else 0

    def error(self, value) -> IndexError:
        if self.what == "class label":
            of = f"for {self.size} classes"
        else:
            of = (f"for axis {self.axis} " if self.axis is not None else "for an axis ") + \
                f"of size {self.size}"
        plural = "indices" if self.what == "index" else f"{self.what}s"
        if self.size == 0:
            valid = f"there are no valid {plural}"
        else:
            valid = f"valid {plural} are {self.low} to {self.size - 1}"
        if self.ignore is not None:
            valid += f" (or ignore_index={self.ignore}, which is skipped)"
        msg = f"{self.op}: {self.what} {int(value)} is out of range {of}; {valid}"
        if self.loc is not None:
            msg += "\n" + self.loc.caret()
        e = IndexError(msg)
        e._ms_located = self.loc is not None
        return e

    def bad(self, values: np.ndarray) -> np.ndarray:
        """Mask of the values out of range (and not `ignore`)."""
        v = np.asarray(values)
        out = (v < self.low) | (v >= self.size)
        if self.ignore is not None:
            out &= v != self.ignore
        return out

    def check(self, values) -> None:
        """Raise error(first bad value) when any value is out of range."""
        v = np.asarray(values)
        if v.size:
            bad = self.bad(v)
            if bad.any():
                raise self.error(v[bad].flat[0])


# the primitives whose kernels check index values at run time (the O0/O1 executor adds the
# node's source line to their IndexError, as both O2 sinks do)
CHECKED_OPS = ("gather", "scatter_add", "scatter_update", "check_class_labels")


def located(kernel, loc):
    """kernel, whose IndexError gets `loc`'s source line (graph.ir.Loc) appended."""
    def run(*args):
        try:
            return kernel(*args)
        except IndexError as e:
            if loc is None or getattr(e, "_ms_located", False):
                raise
            new = IndexError(f"{e}\n{loc.caret()}")
            new._ms_located = True
            raise new from None
    return run
