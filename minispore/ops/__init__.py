"""minispore.ops: the functional API and MindSpore's Primitive classes, all thin views of the
declarations in minispore.core.ops."""
from ..core.autodiff import GradOperation, grad, value_and_grad
from ..core.multitype import HyperMap, Map, MultitypeFuncGraph
from ..core.ops.array import (arange, broadcast_to, cat, concat, expand_dims, fill, flatten, full,
                              full_like, one_hot, ones, ones_like, permute, reshape, split, squeeze,
                              stack, stop_gradient, tile, transpose, unsqueeze, zeros, zeros_like)
from ..core.ops.index_ops import gather, scatter_add
from ..core.ops.linalg import bmm, matmul
from ..core.ops.math import (abs, absolute, add, bitwise_and, bitwise_not, bitwise_or,
                             bitwise_xor, cast, ceil, cos, div, divide, eq, equal, erf, exp, floor,
                             floor_div, floor_divide, floor_mod, ge, gelu, greater, greater_equal,
                             gt, le, left_shift, less, less_equal, log, log1p, logical_and,
                             logical_not, logical_or, lt, maximum, minimum, mod, mul, multiply, ne,
                             neg, negative, not_equal, pow, reciprocal, relu, remainder,
                             right_shift, round, rsqrt, sigmoid, sign, sin, softplus, sqrt, square,
                             sub, subtract, tanh, true_divide, where)
from ..core.ops.nn import log_softmax, softmax
from ..core.ops.conv import avg_pool2d, conv2d, max_pool2d
from ..core.ops.norm import batch_norm, layer_norm
from ..core.ops.random import (dropout, normal, rand, randint, randn, standard_normal,
                               uniform)
from ..core.ops.state import Assign, Depend, Print, assign, depend, print_
from ..core.hooks import HookBackward
from ..core.vmap import vmap
from ..core.ops.sorting import argsort, cumprod, cumsum, msort, sort, topk
from .primitives_sorting import CumProd, CumSum, RandomChoiceWithMask, Sort, TopK
from ..core.ops.reduce import (amax, amin, argmax, argmin, logsumexp, max, mean, min, prod,
                               reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, sum)
from .functional import (argmin, div, divide, floor_div, floor_mod, gather, relu,  # noqa: F811
                         round, softplus, sqrt, subtract, truncate_div)
from .functional_namespace import (clip_by_global_norm, clip_by_value, dtype, identity,
                                   norm, partial, rank, scalar_to_tensor, select, shape, shape_mul,
                                   size, tensor_add, tensor_div, tensor_exp, tensor_floordiv,
                                   tensor_ge, tensor_gt, tensor_le, tensor_lt, tensor_mod,
                                   tensor_mul, tensor_pow, tensor_sub, tuple_to_array)
from ..core.primitive import Primitive
from .custom import Custom
from .losses import (binary_cross_entropy_with_logits, cross_entropy, l1_loss, mse_loss,
                     nll_loss)
from .primitives import *  # noqa: F401,F403
from .activations import *  # noqa: F401,F403
from .convolution import *  # noqa: F401,F403
from .pooling_norm import *  # noqa: F401,F403
from .shape_sampling import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .nonfinite_and_clamp import *  # noqa: F401,F403
from .collective import *  # noqa: F401,F403
from .collective_rooted import *  # noqa: F401,F403
from .primitives import _SIMPLE
from . import functional, operations  # noqa: E402  (MindSpore's ops.functional, ops.operations)
from . import composite  # noqa: E402  (MindSpore's ops.composite)
from .composite import (Partial, batch_dot, count_nonzero, dot, mm,  # noqa: E402
                        repeat_elements,
                        repeat_interleave, sequence_mask, tensor_dot, vecdot)

__all__ = [n for n in dir() if not n.startswith("_")] + list(_SIMPLE)
