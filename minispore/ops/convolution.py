"""mindspore.ops' convolution, pooling and normalisation functions and Primitive classes beyond
conv2d/max_pool2d/avg_pool2d, over core/ops/conv_nd.py and the existing declarations."""
from __future__ import annotations

__all__: list = []
