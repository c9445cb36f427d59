"""The GPU backend's relu and relu_grad kernels without a GPU: the generated CUDA C (the eager
ElementwiseKernel body and the raw kernel fused groups use), run on the host through
cuda_host_shim.h, gives +0.0 (never -0.0 or NaN) for negative, -0.0, -inf and NaN inputs, as
MindSpore's ReLU, and a +0 gradient where the output is zero even for an infinite seed."""
from __future__ import annotations

import numpy as np
import pytest

from minispore.backends.gpu import cuda_codegen
from minispore.core.primitive import REGISTRY

from cuda_host import HostModule, ew_harness

X = np.array([-np.inf, -1.0, -0.0, np.nan, 0.0, 2.0], np.float32)
RELU = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 2.0], np.float32)


def _kernels(name, n):
    op = REGISTRY[name]
    ins = ("float32",) * op.arity
    return (cuda_codegen.elementwise_kernel(op, ins, ((n,),) * op.arity),
            ew_harness(cuda_codegen.ew_operation(op, ins), n))


@pytest.mark.parametrize("name,inputs,want", [
    ("relu", (X,), RELU),
    ("relu_grad", (np.full_like(X, np.inf), X), np.array([0, 0, 0, 0, 0, np.inf], np.float32)),
])
def test_relu_kernels_give_positive_zero(name, inputs, want, tmp_path):
    kernels = _kernels(name, X.size)
    mod = HostModule(list(kernels), tmp_path)
    for k in kernels:
        got = mod.run(k, list(inputs), np.empty_like(X))
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {k.name}")
        assert not np.signbit(got).any(), f"{name} {k.name} gave -0.0: {got}"
