"""The CPU's eager kernels compiled from the native sink's lowering (backends/cpu/native_kernels.py):
the reductions and norms run the one-node graph's native program eagerly, and an op whose only
CPU implementation is a native lowering runs it in PyNative and at O0/O1 as it does at O2."""
import dataclasses

import numpy as np
import pytest

import minispore as ms
from minispore.backends import cpu
from minispore.backends.cpu import native_graph, native_registry  # noqa: F401 - fills LOWER
from minispore.backends.cpu.native_emit import NativeUnsupported
from minispore.core.device import KernelNotFound
from minispore.core.graph import compile as graph_compile
from minispore.core.primitive import REGISTRY, apply

REDUCE = "native_only_sum"


@pytest.fixture
def native_only_op(monkeypatch):
    """A new op that has a native lowering (sum's on floats, under its own name; it declines
    integers) and no eager kernel."""
    op = dataclasses.replace(REGISTRY["sum"], name=REDUCE, attr_cache={}, meta_cache={})
    monkeypatch.setitem(REGISTRY, REDUCE, op)
    sum_lowering = native_registry.LOWER["sum"]

    def lower_floats_only(e, n, attrs):          # declines integers, whatever sum's lowers
        if not n.inputs[0].dtype.is_float:
            raise NativeUnsupported(f"{REDUCE} of {n.inputs[0].dtype}")
        return sum_lowering(e, n, attrs)
    monkeypatch.setitem(native_registry.LOWER, REDUCE, lower_floats_only)
    if "sum" in native_registry.SCRATCH:
        monkeypatch.setitem(native_registry.SCRATCH, REDUCE, native_registry.SCRATCH["sum"])
    assert REDUCE not in cpu.get()._kernels
    yield op
    cpu.get().plans.clear()
    # the graphs compiled here hold the fake op: a later test that walks the compile cache (the
    # profiler rebuilds every cached program's kernels) would find it without its lowering
    graph_compile.clear_cache()


@pytest.mark.parametrize("mode,level", [(ms.PYNATIVE_MODE, "O0"), (ms.GRAPH_MODE, "O0"),
                                        (ms.GRAPH_MODE, "O1"), (ms.GRAPH_MODE, "O2")])
def test_an_op_with_only_a_native_lowering_runs_in_every_mode(native_only_op, mode, level):
    x = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    ms.set_context(mode=mode, jit_level=level, device_target="CPU")
    fn = lambda t: apply(native_only_op, t, axis=(1,), keep_dims=False)   # noqa: E731
    out = ms.jit(fn)(ms.Tensor(x)) if mode == ms.GRAPH_MODE else fn(ms.Tensor(x))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = apply(REGISTRY["sum"], ms.Tensor(x), axis=(1,), keep_dims=False).asnumpy()
    np.testing.assert_array_equal(out.asnumpy(), want)
    assert cpu.get().has_kernel(native_only_op)


def test_a_signature_the_lowering_declines_is_a_clear_error(native_only_op):
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    x = ms.Tensor(np.arange(4, dtype=np.int32))       # the lowering declines int32
    with pytest.raises(KernelNotFound, match=rf"'{REDUCE}'.*declines inputs Int32\[4\]"):
        apply(native_only_op, x, axis=(0,), keep_dims=False)


def test_eager_reductions_and_norms_are_native_programs():
    from minispore.backends.cpu.native_kernels import NATIVE_EAGER_OPS
    kernels = cpu.get()._kernels
    assert all(getattr(kernels[name], "native", False) for name in NATIVE_EAGER_OPS)
