"""mindspore.ops' pooling and normalisation functions and Primitive classes beyond
max_pool2d/avg_pool2d/batch_norm/layer_norm, over core/ops/pool_nd.py."""
from __future__ import annotations

__all__: list = []
