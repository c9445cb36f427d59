"""mindspore.ops' activation functions and Primitive classes over core/ops/activation.py."""
from __future__ import annotations

__all__: list = []
