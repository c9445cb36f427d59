"""Op-database entries (see opdb.py) for core/ops/attention.py."""
from __future__ import annotations


def attention_cases(OpCase, Sample):
    return []
