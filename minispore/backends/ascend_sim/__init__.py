"""The simulated Ascend NPU backend.

Status: not implemented yet (issue 4); `available()` says so, so selecting "Ascend" raises a
RuntimeError instead of silently running on the CPU."""
from __future__ import annotations


def available() -> tuple[bool, str]:
    return False, "the simulated Ascend backend is not implemented yet (issue 4)"


def get():
    raise RuntimeError("the simulated Ascend backend is not implemented yet (issue 4)")
