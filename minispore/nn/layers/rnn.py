"""Recurrent layers: nn.RNN, nn.GRU, nn.LSTM (multi-layer, bidirectional, batch_first,
seq_length)."""
from __future__ import annotations

__all__: list = []
