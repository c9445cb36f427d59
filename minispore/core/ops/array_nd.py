"""N-d indexing and masking composites: gather_nd, scatter_nd, masked_fill, tril, triu,
einsum."""
from __future__ import annotations

__all__: list = []
