"""blas_threads: small conv GEMMs of the PyNative path run on the calling thread."""
import numpy as np
import pytest

import minispore as ms
from minispore import ops
from minispore.backends.cpu import blas, blas_threads


def test_conv_macs_same_for_the_forward_and_both_adjoints():
    x, w, y = (32, 16, 4, 4), (32, 16, 3, 3), (32, 32, 4, 4)
    want = 32 * 4 * 4 * 32 * 16 * 3 * 3
    assert blas_threads.conv_macs("conv2d", (x, w), y, {}) == want
    assert blas_threads.conv_macs("conv2d_backprop_input", (y, w), x, {}) == want
    assert blas_threads.conv_macs("conv2d_backprop_filter", (x, y), w, {"filter_shape": w}) == want


def test_call_serial_limits_the_calling_thread_and_restores():
    if not blas.has_thread_control():
        pytest.skip("scipy's OpenBLAS is not the conv BLAS here")

    def get():
        return blas.thread_count("scipy")
    before = get()
    assert blas_threads.call_serial(get) == 1
    assert get() == before
    with pytest.raises(ZeroDivisionError):          # restored on an exception too
        blas_threads.call_serial(lambda: 1 / 0)
    assert get() == before


def test_the_native_jit_calls_the_routines_blas_binds():
    """One binding: every symbol native code calls is the address blas.py found, the routine
    names cover both libraries and the thread-count control is bound where there is one."""
    import llvmlite.binding as llvm
    from minispore.backends.cpu import native_jit
    native_jit.state()
    symbols = blas.jit_symbols()
    for lib, prefix in (("numpy", "minispore_"), ("scipy", "minispore_scipy_")):
        assert {f"{prefix}{t}{r}" for t in "sd" for r in blas.ROUTINES} <= set(symbols), lib
        assert native_jit.blas_int_bits(lib) == blas.int_bits(lib) in (32, 64)
    assert (blas.SET_THREADS_LOCAL in symbols) == blas.has_thread_control()
    for name, addr in symbols.items():
        assert llvm.address_of_symbol(name) == addr, name


def test_small_conv_results_equal_the_unlimited_kernel():
    from minispore.backends.cpu import windows
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    got = ops.conv2d(ms.Tensor(x), ms.Tensor(w), pad_mode="same").asnumpy()
    np.testing.assert_array_equal(got, windows.conv2d(x, w, 6, 6, 1, 1, 1, 1, 1, 1, 1))


def _conv_case():
    # the digits CNN's second conv: its (32x144)@(144x512) forward GEMM rounds differently on one
    # and on two OpenBLAS threads, so every mode must pick the same thread count for it
    rng = np.random.default_rng(1)
    x = ms.Tensor(rng.standard_normal((32, 16, 4, 4)).astype(np.float32))
    w = ms.Tensor(rng.standard_normal((32, 16, 3, 3)).astype(np.float32))
    return x, w


def _conv_loss(x, w):
    return (ops.conv2d(x, w, pad_mode="same") ** 2).sum()


def test_pynative_and_every_jit_level_conv_bit_identical():
    x, w = _conv_case()
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", jit_level="O2")
    grad = ms.grad(_conv_loss, (0, 1))
    eager = [g.asnumpy() for g in grad(x, w)]
    fwd = ops.conv2d(x, w, pad_mode="same").asnumpy()
    o2 = [g.asnumpy() for g in ms.jit(grad)(x, w)]
    for a, b in zip(o2, eager):
        np.testing.assert_array_equal(a, b)
    for level in ("O0", "O1", "O2"):
        ms.set_context(jit_level=level)

        def f(a, b):
            return ops.conv2d(a, b, pad_mode="same") * 1.0
        np.testing.assert_array_equal(ms.jit(f)(x, w).asnumpy(), fwd)
    ms.set_context(jit_level="O2")


def test_o2_conv_is_one_native_program_bit_identical_to_pynative():
    """The native program brackets the conv node's GEMMs with the calling-thread setting the
    eager kernel uses: PyNative's numbers for the GEMM that rounds differently on two threads."""
    from minispore.backends.cpu.native_sink import NativeProgram
    from minispore.core.graph import compile as graph_compile
    x, w = _conv_case()
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", jit_level="O2")
    fwd = ops.conv2d(x, w, pad_mode="same").asnumpy()

    def f(a, b):
        return ops.conv2d(a, b, pad_mode="same") * 1.0
    np.testing.assert_array_equal(ms.jit(f)(x, w).asnumpy(), fwd)
    assert type(graph_compile.last_compiled().program) is NativeProgram
