"""mint's matrix products (PyTorch's matmul, mm, bmm, mv, dot, outer and the add-forms with
beta and alpha), written with the matmul declaration."""
from __future__ import annotations

from ..core import tensor_methods_extra as _X
from ..core.ops import array as _A
from ..core.ops import linalg as _L
from ..core.ops import math as _M
from ..core.ops import reduce as _R

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "addmm", "addbmm", "baddbmm",
           "addmv"]


def _rank(name, what, t, n):
    if t.ndim != n:
        raise ValueError(f"mint.{name}: {what} must be {n}-D, got shape {tuple(t.shape)}")


def matmul(input, other):
    """The matrix product with numpy's rules (1-D operands are vectors, batch axes
    broadcast)."""
    return _L.matmul(input, other)


def mm(input, mat2):
    """The product of two 2-D tensors."""
    _rank("mm", "input", input, 2)
    _rank("mm", "mat2", mat2, 2)
    return _L.matmul(input, mat2)


def bmm(input, mat2):
    """The batched product of two 3-D tensors (b, n, m) @ (b, m, p)."""
    _rank("bmm", "input", input, 3)
    _rank("bmm", "mat2", mat2, 3)
    return _L.bmm(input, mat2)


def mv(input, vec):
    """The product of a 2-D matrix and a 1-D vector."""
    _rank("mv", "input", input, 2)
    _rank("mv", "vec", vec, 1)
    return _L.matmul(input, vec)


def dot(input, other):
    """The inner product of two 1-D tensors (a 0-D tensor)."""
    _rank("dot", "input", input, 1)
    _rank("dot", "other", other, 1)
    return _R.sum(_M.mul(input, other), None, False) if not input.dtype.is_float else \
        _L.matmul(input, other)


def vdot(input, other):
    """The inner product of two 1-D real tensors (conjugation is the identity for reals)."""
    return dot(input, other)


def outer(input, vec2):
    """The outer product of two 1-D tensors."""
    return _X._outer(input, vec2)


def _combine(input, prod, beta, alpha):
    prod = prod if alpha == 1 else _M.mul(prod, alpha)
    if beta == 0:                        # PyTorch: input is ignored (its NaNs do not spread)
        return _M.add(_A.zeros_like(input), prod)
    return _M.add(input if beta == 1 else _M.mul(input, beta), prod)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)."""
    return _combine(input, mm(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    return _combine(input, mv(mat, vec), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    return _combine(input, bmm(batch1, batch2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
    return _combine(input, _R.sum(bmm(batch1, batch2), 0, False), beta, alpha)
