"""Op-database entries (see opdb.py) for core/ops/conv_nd.py."""
from __future__ import annotations


def conv_nd_cases(OpCase, Sample):
    return []
