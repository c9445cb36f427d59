"""mindspore.ops' attention functions over core/ops/attention.py."""
from __future__ import annotations

__all__: list = []
