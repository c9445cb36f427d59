"""Pooling and normalisation composites beyond the 2-D pools, batch_norm and layer_norm:
1-D and 3-D pools, adaptive pools, group and instance normalisation."""
from __future__ import annotations

__all__: list = []
