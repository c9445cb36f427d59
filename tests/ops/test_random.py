"""Random ops driven by ms.set_seed (core/ops/random.py): the same seed gives the same numbers
(in PyNative, in GRAPH_MODE, and the same numbers in both), successive calls differ, op seeds
give other streams, and the distributions have the right moments. The forward equality with the
numpy reference is in the op database (tests/opdb_nn.py)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import ops

from helpers import graph_runs, in_mode


def _draws(x):
    return (ops.normal((400,), 0.0, 1.0), ops.uniform((400,), -1.0, 3.0),
            ops.randint(0, 10, (400,)), ops.dropout(x, p=0.25))


def _run(mode_fn, x):
    outs = mode_fn(x)
    return [o.asnumpy() for o in outs]


def test_same_seed_same_numbers_in_both_modes(backend):
    x = ms.Tensor(np.ones((20, 20), np.float32))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(42)
    eager1, eager2 = _run(_draws, x), _run(_draws, x)
    ms.set_seed(42)
    assert all(np.array_equal(a, b) for a, b in zip(eager1, _run(_draws, x)))
    assert not np.array_equal(eager1[0], eager2[0]), "successive calls must differ"
    ms.set_context(mode=ms.GRAPH_MODE)
    compiled = ms.jit(_draws)
    ms.set_seed(42)
    graph1, graph2 = _run(compiled, x), _run(compiled, x)
    for k, (e, g) in enumerate(zip(eager1 + eager2, graph1 + graph2)):
        np.testing.assert_array_equal(g, e, err_msg=f"output {k}: graph and PyNative differ "
                                                    f"for one seed")
    ms.set_seed(43)
    assert not np.array_equal(_run(compiled, x)[0], graph1[0]), "another seed, other numbers"


def _standard_normal(seed):
    return ops.standard_normal((50,), seed=seed)


def test_op_seed_selects_another_stream(backend, mode):
    ms.set_seed(1)
    a = in_mode(_standard_normal, 0).asnumpy()
    ms.set_seed(1)
    b = in_mode(_standard_normal, 5).asnumpy()
    ms.set_seed(1)
    c = in_mode(_standard_normal, 5).asnumpy()
    assert not np.array_equal(a, b) and np.array_equal(b, c)


def _moment_draws(n):
    return (ops.normal((n,), 2.0, 0.5), ops.uniform((n,), -1.0, 3.0), ops.randint(-2, 3, (n,)),
            ops.randn(3, 4), ops.rand((2, 2)))


def test_moments(backend, mode):
    ms.set_seed(7)
    n = 20000
    z, u, r, rn, ru = (t.asnumpy() for t in in_mode(_moment_draws, n))
    assert z.dtype == np.float32
    assert abs(z.mean() - 2.0) < 4 * 0.5 / np.sqrt(n) and abs(z.std() - 0.5) < 0.02
    assert u.min() >= -1.0 and u.max() < 3.0
    assert abs(u.mean() - 1.0) < 0.05 and abs(u.var() - 16 / 12) < 0.05
    assert r.dtype == np.int64 and set(np.unique(r)) == {-2, -1, 0, 1, 2}
    assert np.all(np.abs(np.bincount(r + 2) / n - 0.2) < 0.02)
    assert rn.shape == (3, 4) and ru.shape == (2, 2)


def _dropouts(x):
    return ops.dropout(x, p=0.3), ops.dropout(x, p=0.3, training=False), ops.dropout(x, p=0.0)


def test_dropout_keeps_and_scales(backend, mode):
    ms.set_seed(3)
    x = ms.Tensor(np.full((100, 100), 2.0, np.float32))
    y, off, p0 = in_mode(_dropouts, x)
    y = y.asnumpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y[kept], 2.0 / 0.7, rtol=1e-6)
    np.testing.assert_array_equal(off.asnumpy(), x.asnumpy())       # training=False, p=0: x
    np.testing.assert_array_equal(p0.asnumpy(), x.asnumpy())
    if mode == "pynative":                                           # the input itself, eagerly
        assert ops.dropout(x, p=0.3, training=False) is x and ops.dropout(x, p=0.0) is x


def test_dropout_gradient_uses_the_same_mask(backend, mode):
    ms.set_seed(5)
    x = ms.Tensor(np.ones((8, 8), np.float32))

    def f(t):
        y = ops.dropout(t, p=0.5)
        return ops.sum(y * y), y
    with graph_runs("value_and_grad"):
        (loss, y), g = ms.value_and_grad(f, has_aux=True)(x)
    # d/dx sum((x * m / 0.5)^2) = 2 * y * m / 0.5 = 2 * y / 0.5 where kept
    np.testing.assert_allclose(g.asnumpy(), 4.0 * y.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("bad,exc", [(-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_set_seed_validates(bad, exc):
    with pytest.raises(exc, match="set_seed"):
        ms.set_seed(bad)


def test_set_seed_seeds_numpy():
    ms.set_seed(11)
    a = np.random.rand(3)
    ms.set_seed(11)
    assert np.array_equal(a, np.random.rand(3)) and ms.get_seed() == 11
