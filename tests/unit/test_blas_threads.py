"""blas_threads: small conv GEMMs of the PyNative path run on the calling thread."""
import numpy as np
import pytest

import minispore as ms
from minispore import ops
from minispore.backends.cpu import blas_threads as B


def test_conv_macs_same_for_the_forward_and_both_adjoints():
    x, w, y = (32, 16, 4, 4), (32, 16, 3, 3), (32, 32, 4, 4)
    want = 32 * 4 * 4 * 32 * 16 * 3 * 3
    assert B.conv_macs("conv2d", (x, w), y, {}) == want
    assert B.conv_macs("conv2d_backprop_input", (y, w), x, {}) == want
    assert B.conv_macs("conv2d_backprop_filter", (x, y), w, {"filter_shape": w}) == want


def test_call_serial_limits_the_calling_thread_and_restores():
    if B._setter() is None:
        pytest.skip("scipy's OpenBLAS is not the conv BLAS here")
    from minispore.backends.cpu.native_jit import _blas_symbols
    get = _blas_symbols()["scipy"]["lib"].scipy_openblas_get_num_threads
    before = get()
    assert B.call_serial(get) == 1
    assert get() == before
    with pytest.raises(ZeroDivisionError):          # restored on an exception too
        B.call_serial(lambda: 1 / 0)
    assert get() == before


def test_small_conv_results_equal_the_unlimited_kernel():
    from minispore.backends.cpu import windows as W
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    got = ops.conv2d(ms.Tensor(x), ms.Tensor(w), pad_mode="same").asnumpy()
    np.testing.assert_array_equal(got, W.conv2d(x, w, 6, 6, 1, 1, 1, 1, 1, 1, 1))
