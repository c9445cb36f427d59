"""Graph mode at jit_level O0 against PyNative on the whole op database: forward results and
gradients are bit-identical (same kernels, same order; notes/testing.md 6.4)."""
import numpy as np
import pytest

import minispore as ms
from minispore.core.primitive import REGISTRY, apply
from helpers import as_tuple, run_op
from opdb import CASES, rng_for

GRAD_CASES = [c for c in CASES if c.grad]


def _both(fn):
    out = {}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode, jit_level="O0")
        out[mode] = fn()
    return out[ms.PYNATIVE_MODE], out[ms.GRAPH_MODE]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_forward_bit_identical(case):
    for dtype in case.dtypes:
        for s in case.samples(rng_for("forward", case.name, dtype), dtype):
            eager, graph = _both(lambda: [t.asnumpy() for t in
                                         as_tuple(run_op(case.name, s.args, s.attrs))])
            for k, (e, g) in enumerate(zip(eager, graph)):
                assert e.dtype == g.dtype and e.shape == g.shape, (case.name, s.desc, k)
                np.testing.assert_array_equal(g, e, err_msg=f"{case.name} {s.desc} out {k}")


def _op_sum(name, attrs, *xs):
    outs = apply(REGISTRY[name], *xs, **attrs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    total = outs[0].sum()
    for o in outs[1:]:
        total = total + o.sum()
    return total


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c.name for c in GRAD_CASES])
def test_gradients_bit_identical(case):
    dtype = ms.float64
    for s in case.samples(rng_for("grad", case.name, dtype), dtype):
        xs = [ms.Tensor(np.asarray(a)) for a in s.args]
        diff = tuple(i for i, x in enumerate(xs) if x.dtype.is_float)
        if not diff:
            continue

        def grads():
            g = ms.grad(lambda *t: _op_sum(case.name, s.attrs, *t), grad_position=diff)(*xs)
            return [t.asnumpy() for t in as_tuple(g)]
        eager, graph = _both(grads)
        for k, (e, g) in enumerate(zip(eager, graph)):
            np.testing.assert_array_equal(g, e, err_msg=f"{case.name} {s.desc} grad {k}")
