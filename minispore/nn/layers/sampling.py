"""Padding, resampling and norm Cells: nn.Pad, nn.Upsample, nn.ResizeBilinear, nn.Norm."""
from __future__ import annotations

__all__: list = []
