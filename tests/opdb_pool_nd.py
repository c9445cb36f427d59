"""Op-database entries (see opdb.py) for core/ops/pool_nd.py."""
from __future__ import annotations


def pool_nd_cases(OpCase, Sample):
    return []
