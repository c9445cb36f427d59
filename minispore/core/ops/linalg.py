"""matmul: (batched, broadcasting) matrix product with transpose flags, and its functional API.
The primitive takes operands of rank >= 2; `matmul()` adds numpy's 1-D vector rules on top."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..primitive import Meta, apply, defop, tracked
from ..shape import broadcast_shapes
from .declare import ref_array_dtype, sum_to


def _matmul_infer(a, b, transpose_a, transpose_b):
    for name, x in (("a", a), ("b", b)):
        if len(x.shape) < 2:
            raise ShapeError(f"matmul: '{name}' must have at least 2 dims, got shape {x.shape}; "
                             f"use ops.matmul for vectors or reshape to (1, n)")
        if x.dtype not in dt.NUMERIC:
            raise DTypeError(f"matmul: '{name}' has dtype {x.dtype}; use a number dtype")
    m, k = (a.shape[-1], a.shape[-2]) if transpose_a else (a.shape[-2], a.shape[-1])
    k2, n = (b.shape[-1], b.shape[-2]) if transpose_b else (b.shape[-2], b.shape[-1])
    if k != k2:
        raise ShapeError(
            f"matmul: 'a' of shape {a.shape}{' (transposed)' if transpose_a else ''} and 'b' of "
            f"shape {b.shape}{' (transposed)' if transpose_b else ''} cannot be multiplied: the "
            f"contracted dims are {k} and {k2}; they must be equal (transpose an operand or fix "
            f"the shapes)")
    try:
        batch = broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
    except ShapeError:
        raise ShapeError(f"matmul: the batch dims {tuple(a.shape[:-2])} of 'a' of shape {a.shape} "
                         f"and {tuple(b.shape[:-2])} of 'b' of shape {b.shape} cannot be "
                         f"broadcast together; make each batch dim equal or 1") from None
    return Meta(batch + (m, n), dt.promote(a.dtype, b.dtype))


def _matmul_ref(a, b, transpose_a, transpose_b):
    out = dt.promote(dt.to_dtype(a.dtype), dt.to_dtype(b.dtype))
    c = ref_array_dtype(out)
    a = np.swapaxes(a, -1, -2) if transpose_a else a
    b = np.swapaxes(b, -1, -2) if transpose_b else b
    return np.matmul(a.astype(c), b.astype(c)).astype(out.np)


# (transpose_a, transpose_b) -> the products giving da and db: (lhs, rhs, transpose lhs, rhs)
_MATMUL_ADJOINTS = {
    (False, False): (("g", "b", False, True), ("a", "g", True, False)),
    (False, True): (("g", "b", False, False), ("g", "a", True, False)),
    (True, False): (("b", "g", False, True), ("a", "g", False, False)),
    (True, True): (("b", "g", True, True), ("g", "a", True, True)),
}


def _matmul_bprop(i, o, g, transpose_a, transpose_b):
    a, b = i
    env = {"a": a, "b": b, "g": g}
    grads = []
    for x, (lhs, rhs, tl, tr) in zip(i, _MATMUL_ADJOINTS[(transpose_a, transpose_b)]):
        grads.append(sum_to(_mm(env[lhs], env[rhs], tl, tr), x.shape) if tracked(x) else None)
    return tuple(grads)


MATMUL = defop("matmul", infer=_matmul_infer, ref=_matmul_ref, bprop=_matmul_bprop,
               attrs={"transpose_a": False, "transpose_b": False}, arity=2)


def _mm(a, b, ta, tb):
    return apply(MATMUL, a, b, transpose_a=ta, transpose_b=tb)


def matmul(input, other, transpose_a=False, transpose_b=False):
    """Matrix product with numpy's rules (1-D operands are vectors; batch dims broadcast)."""
    a_vec, b_vec = len(input.shape) == 1, len(other.shape) == 1
    if not (a_vec or b_vec):
        return _mm(input, other, transpose_a, transpose_b)
    from .array import expand_dims, squeeze
    if a_vec:
        input = expand_dims(input, 0)
    if b_vec:
        other = expand_dims(other, -1)
    out = _mm(input, other, transpose_a, transpose_b)
    if a_vec:
        out = squeeze(out, -2)
    if b_vec:
        out = squeeze(out, -1)
    return out


def bmm(input_x, mat2):
    """Batched matrix product (MindSpore's ops.bmm(input_x, mat2))."""
    return _mm(input_x, mat2, False, False)
