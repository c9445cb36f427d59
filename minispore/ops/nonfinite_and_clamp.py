"""MindSpore's ops.isnan, ops.isinf, ops.isfinite, ops.logical_xor, ops.clamp and ops.clip:
thin functions over the elementwise ops of minispore.core.ops.math (no op of their own, so they
run on every backend, in both modes, and graphs fuse their parts), with MindSpore 2.10's
argument rules and messages."""
from __future__ import annotations

import numpy as np

from ..core import dtype as dt
from ..core.ops import math as M
from ..core.tensor import Tensor

__all__ = ["isnan", "isinf", "isfinite", "logical_xor", "clamp", "clip"]


def _check_input_tensor(who, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"For '{who}', the input must be a Tensor, but got "
                        f"{type(input).__name__}; wrap it with ms.Tensor(...)")


def isnan(input):
    """A bool Tensor, True where `input` is NaN (x != x); an integer or bool input is never
    NaN."""
    _check_input_tensor("isnan", input)
    return M.not_equal(input, input)


def isinf(input):
    """A bool Tensor, True where `input` is +inf or -inf. As MindSpore 2.10 (CPU), only
    floating inputs are taken."""
    _check_input_tensor("isinf", input)
    if input.dtype not in dt.FLOATS:
        raise TypeError(f"For 'isinf', the input must be a floating Tensor (MindSpore 2.10 has "
                        f"no IsInf kernel for {input.dtype}), but got {input.dtype}; cast it "
                        f"with .astype(ms.float32)")
    return M.equal(M.abs(input), float("inf"))


def isfinite(input):
    """A bool Tensor, True where `input` is neither NaN nor +-inf (x - x == 0 fails for both);
    every element of an integer or bool input is finite."""
    _check_input_tensor("isfinite", input)
    if input.dtype not in dt.FLOATS:
        return M.equal(input, input)
    return M.equal(M.sub(input, input), 0.0)


def _as_bool(who, x):
    if isinstance(x, Tensor):
        return x if x.dtype == dt.bool_ else M.cast(x, dt.bool_)
    if isinstance(x, bool):
        return Tensor(np.bool_(x))
    raise TypeError(f"For '{who}', the inputs must be Tensors or Python bools (MindSpore 2.10 "
                    f"refuses other numbers), but got {type(x).__name__}; pass ms.Tensor(...)")


def logical_xor(input, other):
    """A bool Tensor, True where exactly one of `input` and `other` is true (broadcast; any
    Tensor dtype, nonzero is true; either may be a Python bool, as in MindSpore 2.10)."""
    return M.not_equal(_as_bool("logical_xor", input), _as_bool("logical_xor", other))


def _clamp_checks(input, bounds):
    """MindSpore 2.10's argument rules of ops.clamp / ops.clip (the not-None bounds)."""
    _check_input_tensor("clamp", input)
    if not bounds:
        raise ValueError("For Clamp, at least one of 'min' or 'max' must not be None.")
    for b in bounds:
        if not isinstance(b, (Tensor, int, float)):
            raise TypeError(f"For Clamp, 'min' and 'max' must be Tensors or numbers, but got "
                            f"{type(b).__name__}")
    if input.dtype == dt.bool_ or any(
            isinstance(b, bool) or (isinstance(b, Tensor) and b.dtype == dt.bool_)
            for b in bounds):
        raise ValueError("For Clamp, the dtype of 'input', 'min' and 'max' must not be bool.")
    if len({isinstance(b, Tensor) for b in bounds}) > 1:
        raise TypeError("For Clamp, 'min' and 'max' must both be Tensors or both be numbers "
                        "(MindSpore 2.10 has no clamp for a mix); wrap the number with "
                        "ms.Tensor(...)")


def clamp(input, min=None, max=None):  # noqa: A002  (MindSpore's argument names)
    """`input` limited to [min, max] (either may be None; both numbers or both Tensors, which
    broadcast and promote with `input`), with MindSpore's argument checks; the values and
    gradient of Tensor.clamp (minispore.core.ops.math.clamp)."""
    _clamp_checks(input, [b for b in (min, max) if b is not None])
    return M.clamp(input, min, max)


def clip(input, min=None, max=None):  # noqa: A002
    """MindSpore's ops.clip: the same function as ops.clamp."""
    _clamp_checks(input, [b for b in (min, max) if b is not None])
    return M.clamp(input, min, max)
