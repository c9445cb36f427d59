"""MindSpore's `mindspore.ops.operations` namespace (`from mindspore.ops import operations as
P`): the Primitive classes of minispore.ops (`P.Shape()(x)`, `P.Cast()(x, dtype)`,
`P.ReduceMean(keep_dims=True)(x, axis)`, ...)."""
from __future__ import annotations

from ..core.ops.state import Assign, Depend, Print  # noqa: F401
from .primitives import *  # noqa: F401,F403
from .primitives import _SIMPLE, _call_class, _Call, _Reduce  # noqa: F401
from .primitives_sorting import CumProd, CumSum, RandomChoiceWithMask, Sort, TopK  # noqa: F401
from .composite import Partial  # noqa: F401
from . import (activations, attention, collective, collective_rooted, convolution,
               pooling_norm, shape_sampling)

# the Primitive classes the layer-family modules define (their functions stay in ops only)
globals().update({name: obj for module in (activations, attention, collective, collective_rooted,
                                           convolution, pooling_norm, shape_sampling)
                  for name in module.__all__
                  for obj in (getattr(module, name),)
                  if isinstance(obj, type) and issubclass(obj, Primitive)})
del (activations, attention, collective, collective_rooted, convolution, pooling_norm,
     shape_sampling)

globals().update({name: globals()[name] for name in _SIMPLE})
del A, M, N, R, X, linalg, rounding  # noqa: F821  (primitives' module aliases, not names here)
