"""mint.nn activation Cells and the parameter-free basics (Identity, Flatten, Dropout, padding),
PyTorch's names and defaults, each over a mint.nn.functional function."""
from __future__ import annotations

import numbers

from ...core import dtype as dt
from ...core.tensor import Parameter, Tensor
from ...nn.cell import Cell
from . import functional as F


class ReLU(Cell):
    def __init__(self):
        super().__init__()

    def construct(self, input):
        return F.relu(input)


class ReLU6(Cell):
    def __init__(self, inplace=False):
        super().__init__()
        F._not_supported("ReLU6", "inplace", inplace, False)

    def construct(self, input):
        return F.relu6(input)


class SiLU(Cell):
    def __init__(self, inplace=False):
        super().__init__()
        F._not_supported("SiLU", "inplace", inplace, False)

    def construct(self, input):
        return F.silu(input)


class Sigmoid(Cell):
    def __init__(self):
        super().__init__()

    def construct(self, input):
        return F.sigmoid(input)


class Tanh(Cell):
    def __init__(self):
        super().__init__()

    def construct(self, input):
        return F.tanh(input)


class Mish(Cell):
    def construct(self, input):
        return F.mish(input)


class SELU(Cell):
    def construct(self, input):
        return F.selu(input)


class LogSigmoid(Cell):
    def __init__(self):
        super().__init__()

    def construct(self, input):
        return F.logsigmoid(input)


class Hardsigmoid(Cell):
    def __init__(self):
        super().__init__()

    def construct(self, input):
        return F.hardsigmoid(input)


class Hardswish(Cell):
    def __init__(self):
        super().__init__()

    def construct(self, input):
        return F.hardswish(input)


class GELU(Cell):
    """GELU with PyTorch's default approximate='none' (erf); 'tanh' for the approximation."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def construct(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extend_repr(self):
        return f"approximate={self.approximate!r}"


class ELU(Cell):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        F._not_supported("ELU", "inplace", inplace, False)
        self.alpha = F._check_real("ELU", "alpha", alpha)

    def construct(self, input):
        return F.elu(input, self.alpha)


class Hardtanh(Cell):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        F._not_supported("Hardtanh", "inplace", inplace, False)
        self.min_val = F._check_real("Hardtanh", "min_val", min_val)
        self.max_val = F._check_real("Hardtanh", "max_val", max_val)
        if self.min_val > self.max_val:
            raise ValueError(f"Hardtanh: min_val={min_val} must be <= max_val={max_val}")

    def construct(self, input):
        return F.hardtanh(input, self.min_val, self.max_val)


class Hardshrink(Cell):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = F._check_real("Hardshrink", "lambd", lambd)

    def construct(self, input):
        return F.hardshrink(input, self.lambd)


class Softshrink(Cell):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = F._check_real("Softshrink", "lambd", lambd)
        if self.lambd < 0:
            raise ValueError(f"Softshrink: lambd must be >= 0, got {lambd}")

    def construct(self, input):
        return F.softshrink(input, self.lambd)


class Threshold(Cell):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        F._not_supported("Threshold", "inplace", inplace, False)
        self.threshold = F._check_real("Threshold", "threshold", threshold)
        self.value = F._check_real("Threshold", "value", value)

    def construct(self, input):
        return F.threshold(input, self.threshold, self.value)


class GLU(Cell):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = F._check_int("GLU", "dim", dim)

    def construct(self, input):
        return F.glu(input, self.dim)


class Softmax(Cell):
    """softmax over `dim` (None: PyTorch's implicit choice, 0 for 0/1/3-d inputs, else 1)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = None if dim is None else F._check_int("Softmax", "dim", dim)

    def construct(self, input):
        return F.softmax(input, self.dim)

    def extend_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Cell):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = None if dim is None else F._check_int("LogSoftmax", "dim", dim)

    def construct(self, input):
        return F.log_softmax(input, self.dim)

    def extend_repr(self):
        return f"dim={self.dim}"


class PReLU(Cell):
    """x where x > 0, weight * x elsewhere; weight (num_parameters,) starts at `init`."""

    def __init__(self, num_parameters=1, init=0.25, dtype=None):
        super().__init__()
        self.num_parameters = F._check_int("PReLU", "num_parameters", num_parameters)
        if self.num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be >= 1, got {num_parameters}")
        import numpy as np
        d = dt.float32 if dtype is None else dt.to_dtype(dtype)
        self.weight = Parameter(Tensor(np.full((self.num_parameters,),
                                               F._check_real("PReLU", "init", init), d.np)),
                                name="weight")

    def construct(self, input):
        return F.prelu(input, self.weight)


class Identity(Cell):
    """The input as it is; any constructor arguments are accepted and unused (as PyTorch)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def construct(self, input):
        return input


class Flatten(Cell):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = F._check_int("Flatten", "start_dim", start_dim)
        self.end_dim = F._check_int("Flatten", "end_dim", end_dim)

    def construct(self, input):
        return F.flatten(input, self.start_dim, self.end_dim)


class Dropout(Cell):
    """Zero each element with probability p (PyTorch's meaning: p drops) and scale the rest by
    1 / (1 - p) in training; the identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        F._not_supported("Dropout", "inplace", inplace, False)
        pv = F._check_real("Dropout", "p", p)
        if not 0.0 <= pv <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = pv

    def construct(self, input):
        return F.dropout(input, self.p, self.training)

    def extend_repr(self):
        return f"p={self.p}"


class _ConstantPad(Cell):
    ndim = 1

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _padding(type(self).__name__, padding, self.ndim)
        if isinstance(value, bool) or not isinstance(value, numbers.Number):
            raise TypeError(f"{type(self).__name__}: value must be a number, got {value!r}")
        self.value = value

    def construct(self, input):
        return F.pad(input, self.padding, "constant", self.value)


def _padding(who, padding, n):
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * (2 * n)
    if not isinstance(padding, (tuple, list)) or len(padding) != 2 * n:
        raise TypeError(f"{who}: padding must be an int or a tuple of {2 * n} ints, got "
                        f"{padding!r}")
    return tuple(int(p) for p in padding)


class ConstantPad1d(_ConstantPad):
    ndim = 1


class ConstantPad2d(_ConstantPad):
    ndim = 2


class ConstantPad3d(_ConstantPad):
    ndim = 3


class _ModePad(Cell):
    ndim, mode = 1, "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding(type(self).__name__, padding, self.ndim)

    def construct(self, input):
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", 0)
        return F.pad(input, self.padding, self.mode)


def _mode_pad(name, n, mode):
    return type(name, (_ModePad,), {"ndim": n, "mode": mode, "__module__": __name__,
                                    "__qualname__": name})


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_mode_pad(f"ZeroPad{n}d", n, "constant") for n in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (
    _mode_pad(f"ReflectionPad{n}d", n, "reflect") for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _mode_pad(f"ReplicationPad{n}d", n, "replicate") for n in (1, 2, 3))
