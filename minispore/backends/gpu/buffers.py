"""The GPU backend's buffer type and kernel launcher (no CuPy import here).

`GpuArray` is a tensor's device buffer: `a`, the device array in storage layout (storage.py:
bfloat16 as uint16 bits), and `dtype`, the tensor's numpy dtype. It has `to_host` (synchronises
and copies back, what Tensor.asnumpy calls) and `__array__` (the executor's reads of If/While
conditions). `launcher` turns a kernel over device arrays into one over buffers: host numpy
inputs (tensors made from numpy live on the host until a device op needs them) are uploaded once
through the runtime's cache, outputs are wrapped."""
from __future__ import annotations

import numpy as np

from ...core.primitive import Meta
from . import storage as S


class GpuArray:
    __slots__ = ("a", "dtype")
    device_name = "GPU"

    def __init__(self, a, dtype: np.dtype):
        self.a, self.dtype = a, dtype

    @property
    def shape(self) -> tuple:
        return self.a.shape

    def to_host(self) -> np.ndarray:
        """The value as a host array (a cupy array's .get() synchronises and copies)."""
        a = self.a
        host = a.get() if hasattr(a, "get") else np.array(a, copy=True)
        return host.view(self.dtype) if host.dtype != self.dtype else host

    def __array__(self, dtype=None, copy=None):
        h = self.to_host()
        return h if dtype is None else h.astype(dtype)

    def __repr__(self) -> str:
        return f"GpuArray({self.dtype}{list(self.shape)})"


def launcher(rt, fn, out_meta, arity=None):
    """callable(*buffers) -> GpuArray (or a tuple of them) running `fn` over device arrays; with
    one output and `arity` 1 or 2, a fixed-argument version (the eager hot path)."""
    GA, upload = GpuArray, rt.upload
    launch = rt.launch
    if isinstance(out_meta, Meta):
        odt = np.dtype(out_meta.dtype.np)

        def run(*bufs):
            return GA(launch(fn, [b.a if b.__class__ is GA else upload(b).a for b in bufs]), odt)

        def run1(x):
            return GA(launch(fn, [x.a if x.__class__ is GA else upload(x).a]), odt)

        def run2(x, y):
            return GA(launch(fn, [x.a if x.__class__ is GA else upload(x).a,
                                  y.a if y.__class__ is GA else upload(y).a]), odt)
        return run1 if arity == 1 else run2 if arity == 2 else run
    dts = [np.dtype(m.dtype.np) for m in out_meta]

    def run_multi(*bufs):
        r = launch(fn, [b.a if b.__class__ is GA else upload(b).a for b in bufs])
        return tuple(GA(x, d) for x, d in zip(r, dts))
    return run_multi


def storage_of(buf) -> np.ndarray:
    """A host buffer in device storage layout (the upload path)."""
    return S.to_storage_host(np.asarray(buf, order="C"))
