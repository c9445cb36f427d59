"""Attention composites: scaled dot-product attention with its masks."""
from __future__ import annotations

__all__: list = []
