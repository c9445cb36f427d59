"""Pooling Cells beyond MaxPool2d/AvgPool2d: 1-D and 3-D pools and the adaptive pools."""
from __future__ import annotations

__all__: list = []
