"""Recurrent cells: nn.RNNCell, nn.GRUCell, nn.LSTMCell, and the one-step functions the
layers in rnn.py share."""
from __future__ import annotations

__all__: list = []
