"""A Parameter passed as an argument of a compiled function is the caller's Parameter, bound by
reference as one read from a Cell: ops.assign and batch_norm's moving statistics update it (as
in MindSpore 2.10, whose values these are), gradients by position still reach it, and another
Parameter of the same shape gets a graph of its own."""
from __future__ import annotations

import numpy as np

import minispore as ms
from minispore import Parameter, Tensor, ops
from minispore.core.graph import compile as graph_compile


def _bn(x, rm, rv, w, b):
    return ops.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1)


def _bump(p):
    ops.assign(p, p + 1)
    return p * 2


def _params():
    return (Parameter(Tensor(np.zeros(3, np.float32)), name="rm"),
            Parameter(Tensor(np.ones(3, np.float32)), name="rv"),
            Parameter(Tensor(np.ones(3, np.float32)), name="w"),
            Parameter(Tensor(np.zeros(3, np.float32)), name="b"))


def test_batch_norm_updates_the_moving_statistics_passed_as_arguments():
    ms.set_context(mode=ms.GRAPH_MODE)
    rm, rv, w, b = _params()
    x = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    ms.jit(_bn)(x, rm, rv, w, b)
    np.testing.assert_allclose(rm.asnumpy(), [0.75, 1.15, 1.55], rtol=1e-6)
    np.testing.assert_allclose(rv.asnumpy(), [5.157143] * 3, rtol=1e-6)


def test_assign_to_a_parameter_argument_lands_on_that_parameter():
    ms.set_context(mode=ms.GRAPH_MODE)
    f = ms.jit(_bump)
    p = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="p")
    q = Parameter(Tensor(np.array([10.0, 20.0], np.float32)), name="q")
    compiles = graph_compile.stats["compiles"]
    np.testing.assert_array_equal(f(p).asnumpy(), [4.0, 6.0])
    np.testing.assert_array_equal(p.asnumpy(), [2.0, 3.0])
    np.testing.assert_array_equal(f(q).asnumpy(), [22.0, 42.0])
    np.testing.assert_array_equal(q.asnumpy(), [11.0, 21.0])
    np.testing.assert_array_equal(p.asnumpy(), [2.0, 3.0])        # untouched by q's call
    np.testing.assert_array_equal(f(p).asnumpy(), [6.0, 8.0])     # p's graph, cached
    assert graph_compile.stats["compiles"] - compiles == 2


def test_gradients_by_position_reach_a_parameter_argument():
    ms.set_context(mode=ms.GRAPH_MODE)
    w = Parameter(Tensor(np.array([1.0, 2.0, 3.0], np.float32)), name="w")
    x = Tensor(np.full(3, 2.0, np.float32))
    gw, gx = ms.grad(lambda w, x: (w * w * x).sum(), grad_position=(0, 1))(w, x)
    np.testing.assert_array_equal(gw.asnumpy(), [4.0, 8.0, 12.0])
    np.testing.assert_array_equal(gx.asnumpy(), [1.0, 4.0, 9.0])
