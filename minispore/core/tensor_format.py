"""How MindSpore writes a tensor's values: its C++ tensor stringifier, used for `repr(Tensor)`
(with commas) and for graph-mode `print` / `ops.Print` (without).

- A 0-d tensor is its number as C++ streams it (floats to 6 significant digits).
- Float elements (float16/32/64) are scientific, right-aligned: float16 with 4 decimals in 11
  characters, float32/64 with 8 decimals in 15; bools right-aligned in 5 ('False'); other
  elements (integers, bfloat16) right-aligned to the widest element printed.
- The innermost dimension shows its first and last 3 elements around ' ... ' when it has more
  than 6 elements (more than 1000 for a 1-d tensor); an outer dimension of more than 6 shows
  its first and last 3 rows around a '...' line. Rows are separated by a newline and an indent
  of depth + 1 spaces.
- A 1-d tensor of more than 3 elements breaks its line after every 12th float or bool element,
  or every 24th other element (a newline and a space after that element's separator).
"""
from __future__ import annotations

import numpy as np

THRESHOLD = 6
THRESHOLD_1D = 1000
HALF = THRESHOLD >> 1


def _is_bf16(a: np.ndarray) -> bool:
    return a.dtype.name == "bfloat16"


def _scalar(v, a: np.ndarray) -> str:
    if a.dtype.kind == "b":
        return "True" if v else "False"
    if a.dtype.kind == "f" or _is_bf16(a):
        return format(float(v), "g")
    return str(int(v)) if a.dtype.kind in "iu" else str(v)


class _Writer:
    def __init__(self, a: np.ndarray, use_comma: bool):
        self.flat = a.reshape(-1)
        self.shape, self.ndim, self.comma = a.shape, a.ndim, use_comma
        kind = "bool" if a.dtype.kind == "b" else \
            "float" if a.dtype.kind == "f" and not _is_bf16(a) else "other"
        self.kind, self.bf16 = kind, _is_bf16(a)
        self.feed = 2 * THRESHOLD if kind in ("float", "bool") else 4 * THRESHOLD
        half = a.dtype == np.float16
        self.digits, self.width = (4, 11) if half else (8, 15)
        self.out: list = []
        self.others: list = []          # (position in out, text) of the padded elements
        self.max_width = 0

    def element(self, v):
        if self.kind == "float":
            self.out.append(f"{float(v):.{self.digits}e}".rjust(self.width))
        elif self.kind == "bool":
            self.out.append(("True" if v else "False").rjust(5))
        else:
            text = format(float(v), "g") if self.bf16 else str(int(v))
            self.max_width = max(self.max_width, len(text))
            self.others.append((len(self.out), text))
            self.out.append(text)

    def run(self, cursor: int, start: int, end: int):
        for i in range(start, end):
            if cursor + i >= self.flat.size:
                break
            self.element(self.flat[cursor + i])
            if i != end - 1:
                self.out.append(", " if self.comma else " ")
            if self.ndim == 1 and end - start > HALF and (i + 1) % self.feed == 0:
                self.out.append("\n ")

    def rec(self, cursor: list, depth: int):
        w = self.out
        w.append("[")
        num = self.shape[depth]
        if depth == self.ndim - 1:
            if (num > THRESHOLD and self.ndim > 1) or (num > THRESHOLD_1D and self.ndim == 1):
                self.run(cursor[0], 0, HALF)
                w.append(" ... ")
                self.run(cursor[0], num - HALF, num)
            else:
                self.run(cursor[0], 0, num)
            cursor[0] += num
        else:
            indent = "\n" + " " * (depth + 1)
            sep = ("," if self.comma else "") + indent
            for i in range(min(HALF, num)):
                if i > 0:
                    w.append(sep)
                self.rec(cursor, depth + 1)
            if num > THRESHOLD:
                w.append(sep + "...")
                cursor[0] += int(np.prod(self.shape[depth + 1:])) * (num - THRESHOLD)
            if num > HALF:
                for i in range(min(num - HALF, HALF)):
                    if self.comma and (i != 0 or num <= THRESHOLD):
                        w.append(",")
                    w.append(indent)
                    self.rec(cursor, depth + 1)
        w.append("]")

    def text(self) -> str:
        for pos, t in self.others:
            self.out[pos] = t.rjust(self.max_width)
        return "".join(self.out)


def stringify(a: np.ndarray, use_comma: bool) -> str:
    """The values of `a` as MindSpore's tensor stringifier writes them ('' when empty)."""
    a = np.asarray(a)
    if a.size == 0:
        return ""
    if a.ndim == 0:
        return _scalar(a.item() if not _is_bf16(a) else float(a), a)
    w = _Writer(a, use_comma)
    w.rec([0], 0)
    return w.text()


def repr_value(a: np.ndarray) -> str:
    """What follows 'value=' in repr(Tensor): ' ' then the values (a newline for 2-d up)."""
    a = np.asarray(a)
    return (" " if a.ndim <= 1 else "\n") + stringify(a, True)


def constant(v) -> str:
    """A Python value as MindSpore's graph-mode print shows it (C++ stream output: floats to
    6 significant digits, bools as 1/0)."""
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return format(float(v), "g")
    return str(v)


def printed(a: np.ndarray, dtype_name: str) -> str:
    """A tensor as graph-mode print / ops.Print shows it: Tensor(shape=[...], dtype=...,
    value=[...]) without commas, the values of a 2-d or larger tensor on the next line, a 0-d
    tensor as its number alone."""
    a = np.asarray(a)
    if a.ndim == 0:
        return constant(a.item() if not _is_bf16(a) else float(a))
    return (f"Tensor(shape={list(a.shape)}, dtype={dtype_name}, "
            f"value={'' if a.ndim == 1 else chr(10)}{stringify(a, False)})")
