"""Attention Cells: nn.MultiheadAttention, nn.TransformerEncoderLayer / DecoderLayer,
nn.TransformerEncoder / Decoder, nn.Transformer."""
from __future__ import annotations

__all__: list = []
