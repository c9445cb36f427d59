"""Convolution and pooling lowerings of the native sink (windows.py's kernels in LLVM IR).

Empty for now: the graphs holding these ops go to the numba sink.
"""
from __future__ import annotations

LOWER: dict = {}            # op name -> lowering(e, n, attrs), as native_lower.LOWER
SCRATCH: dict = {}          # op name -> node -> arena bytes the lowering needs while it runs
