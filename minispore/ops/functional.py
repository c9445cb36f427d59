"""ops functions whose MindSpore 2.x signature takes more than the core op: division with
`rounding_mode`, subtraction with `alpha`, rounding at `decimals`, softplus with `beta` and
`threshold`, relu's `inplace` and gather's `batch_dims`; those whose MindSpore parameter names
differ from the core op's (floor_div(x, y), floor_mod(x, y), sqrt(x)); and argmin, whose
indices are int32 in MindSpore. Each composes core ops (so PyNative, graph mode and autodiff
share them) and refuses, by name, what minispore cannot do.

It is also MindSpore's `mindspore.ops.functional` namespace (`from mindspore.ops import
functional as F`): its own functions (shape, dtype, rank, size, shape_mul, tuple_to_array,
scalar_to_tensor, identity, partial, the tensor_* aliases, select, clip_by_value,
clip_by_global_norm, norm) are defined in functional_namespace.py, and every other lower-case
name resolves to `minispore.ops`'s function of that name."""
from __future__ import annotations

from ..core.ops import index_ops as X
from ..core.ops import math as M
from ..core.ops import reduce as R
from ..core.ops.rounding import div, round  # noqa: F401  (Tensor.div/round share them)
from ..core.ops.rounding import truncate_div as truncate


divide = div


def subtract(input, other, *, alpha=1):
    """input - alpha * other."""
    return M.sub(input, other if alpha == 1 else M.mul(other, alpha))


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    if beta == 1 and threshold == 20:
        bx = input
        sp = M.softplus(input)
    else:
        bx = M.mul(input, beta)
        sp = M.div(M.softplus(bx), beta)
    return M.where(M.greater(bx, threshold), input, sp)


def relu(input, inplace=False):
    """max(x, 0), +0.0 for every non-positive input."""
    if inplace:
        raise NotImplementedError("relu: inplace=True is not supported by minispore (tensors "
                                  "are values); use y = ops.relu(x)")
    return M.relu(input)


def gather(input_params, input_indices, axis=0, batch_dims=0):
    """input_params indexed by input_indices along axis."""
    if batch_dims != 0:
        raise NotImplementedError(f"gather: batch_dims={batch_dims!r} is not supported by "
                                  f"minispore; use batch_dims=0")
    return X.gather(input_params, input_indices, axis)


def floor_div(x, y):
    """x / y rounded down (MindSpore's ops.floor_div(x, y))."""
    return M.floor_div(x, y)


def truncate_div(x, y):
    """x / y rounded towards zero (MindSpore's ops.truncate_div(x, y))."""
    return truncate(x, y)


def floor_mod(x, y):
    """x - floor_div(x, y) * y, the sign of y (MindSpore's ops.floor_mod(x, y))."""
    return M.mod(x, y)


def sqrt(x):
    """The square root (MindSpore's ops.sqrt(x))."""
    return M.sqrt(x)


def argmin(input, axis=None, keepdims=False):
    """Indices of the minima along `axis` (None: of the flattened input), int32 as MindSpore
    2.10's ops.argmin and Tensor.argmin give (its argmax, and the indices of ops.min, are
    int64)."""
    from ..core import dtype as dt
    return M.cast(R.argmin(input, axis, keepdims), dt.int32)


from .functional_namespace import (  # noqa: E402
    assign, cast, clip_by_global_norm, clip_by_value, depend, dtype, identity, partial, rank,
    norm, reshape, scalar_to_tensor, select, shape, shape_mul, size, stop_gradient, tensor_add,
    tensor_div, tensor_exp, tensor_floordiv, tensor_ge, tensor_gt, tensor_le, tensor_lt,
    tensor_mod, tensor_mul, tensor_pow, tensor_sub, tuple_to_array)


def __getattr__(name):
    """MindSpore's ops.functional holds the ops functions: a lower-case name not defined here is
    minispore.ops's."""
    if not name.startswith("_") and name[:1].islower():
        from .. import ops
        value = vars(ops).get(name)
        if value is not None and not isinstance(value, type(ops)):
            return value
    raise AttributeError(f"module 'minispore.ops.functional' has no attribute {name!r}")


def __dir__():
    from .. import ops
    return sorted(set(globals()) | {n for n, v in vars(ops).items()
                                    if n[:1].islower() and not isinstance(v, type(ops))})
