"""Op-database entries (see opdb.py) for core/ops/array_nd.py."""
from __future__ import annotations


def array_nd_cases(OpCase, Sample):
    return []
