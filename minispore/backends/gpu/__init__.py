"""The GPU backend (CuPy). Probing is lazy: importing minispore never imports cupy.

Status: only the availability probe exists; the kernels are issue 6. Where CuPy and a device
are present, `available()` still answers False and says that the kernels are not implemented,
so selecting "GPU" raises a RuntimeError instead of pretending to work."""
from __future__ import annotations

import importlib.util


def available() -> tuple[bool, str]:
    if importlib.util.find_spec("cupy") is None:
        return False, "CuPy is not installed (pip install 'minispore[gpu]' on a CUDA machine)"
    try:
        import cupy
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver, no device, broken install
        return False, f"CuPy cannot reach a CUDA device ({type(e).__name__}: {e})"
    if n == 0:
        return False, "no CUDA device is visible"
    return False, "the GPU backend's kernels are not implemented yet (issue 6)"


def get():
    raise RuntimeError("the GPU backend is not implemented yet (issue 6)")
