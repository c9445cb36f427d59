"""Convolutions other than conv2d as composites over the conv2d declarations: 1-D and 3-D
convolution and the transposed convolutions (1-D, 2-D, 3-D)."""
from __future__ import annotations

__all__: list = []
