"""Transposed convolution Cells: nn.Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose."""
from __future__ import annotations

__all__: list = []
