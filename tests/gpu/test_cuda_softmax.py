"""The GPU backend's generated softmax / log_softmax kernel (backends/gpu/cuda_softmax.py)
without a GPU: it compiles to PTX (nvcc or NVRTC, skipped when neither exists), and the same CUDA
C compiled for the host through cuda_host_shim.h matches the ops' numpy references on every
float dtype, on rows longer and shorter than a block, along a middle axis, with NaN and -inf rows,
for any grid (the blocks walk the rows in a grid-stride loop)."""
from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

from minispore.backends.gpu import cuda_softmax
from minispore.backends.gpu import storage as S
from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY

from cuda_host import HostModule, compile_ptx, ptx_compiler
from helpers import assert_close, forward_tol

# (shape, axis): a row longer than the block (300 > 256), rows shorter than a warp, a middle
# axis (inner > 1), one element, a 0-d tensor
GEOMETRIES = [((4, 300), 1), ((5, 3), -1), ((2, 7, 3), 1), ((1,), 0), ((), 0)]
DTYPES = (dt.float32, dt.float64, dt.float16, dt.bfloat16)


def _kernels():
    out = []
    for d in DTYPES:
        for shape, axis in GEOMETRIES:
            ax = axis % len(shape) if shape else 0
            outer, inner = math.prod(shape[:ax]), math.prod(shape[ax + 1:])
            n = shape[ax] if shape else 1
            for log in (False, True):
                out.append((d, shape, axis, log,
                            cuda_softmax.softmax_kernel(d, outer, n, inner, log)))
    return out


KERNELS = _kernels()


@pytest.mark.nvcc
def test_softmax_kernels_compile_to_ptx(tmp_path):
    if ptx_compiler() is None:
        pytest.skip("neither nvcc nor the nvidia-cuda-nvrtc-cu12 wheel is available")
    ptx = compile_ptx([k for *_, k in KERNELS], tmp_path)
    missing = [k.name for *_, k in KERNELS if f".entry {k.name}(" not in ptx]
    assert not missing, missing


def _data(shape, d, rng):
    x = (rng.standard_normal(shape) * 3).astype(np.float64)
    if shape == (4, 300):
        x[1, :] = -np.inf                         # every entry -inf: NaN, as numpy gives
        x[2, 5] = np.nan                          # one NaN poisons its row
        x[3, 7] = np.inf
    return x.astype(d.np)


def test_softmax_kernel_matches_the_references_on_the_host(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    mod = HostModule([k for *_, k in KERNELS], tmp_path)
    rng = np.random.default_rng(3)
    for d, shape, axis, log, k in KERNELS:
        name = "log_softmax" if log else "softmax"
        x = _data(shape, d, rng)
        with np.errstate(all="ignore"):
            want = np.asarray(REGISTRY[name].ref(x, axis=axis if shape else 0))
        bits = S.to_storage_host(np.array(x, order="C"))
        for grid in (None, 1, 2):
            got = mod.run(k, [bits], np.empty(bits.shape, bits.dtype), grid=grid)
            got = S.from_storage_host(got, d)
            rtol, atol = forward_tol(d, True, None)
            assert_close(got, want, rtol, atol, f"{name} {d} {shape} axis={axis} grid={grid}")


def test_softmax_kernel_refuses_integer_dtypes():
    with pytest.raises(NotImplementedError, match="float dtypes only"):
        cuda_softmax.softmax_kernel(dt.int32, 1, 4, 1, False)
