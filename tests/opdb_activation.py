"""Op-database entries (see opdb.py) for core/ops/activation.py."""
from __future__ import annotations


def activation_cases(OpCase, Sample):
    return []
