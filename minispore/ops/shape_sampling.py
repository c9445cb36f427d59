"""mindspore.ops' padding, resampling and N-d indexing functions and Primitive classes (pad,
interpolate, ResizeBilinear, gather_nd, ScatterNd, masked_fill, tril/triu, einsum)."""
from __future__ import annotations

__all__: list = []
