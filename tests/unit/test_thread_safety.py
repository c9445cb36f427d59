"""Per-thread op recording: which executor handles an op (core/primitive.py `executor`) and
whether a gradient is being taken (core/pynative.py `TAPE`) belong to the thread. A thread that
runs minispore ops while another builds a graph or records a tape (a dataset map worker during
Model.train in GRAPH_MODE) runs them eagerly and is recorded nowhere, and the other thread's
graph and gradient come out as if it had been alone. The interleavings are forced with events,
inside a graph traced as plain Python (graph/compile.py run with parse=False, as a library
Cell's construct is traced)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops
from minispore.core.graph import compile as graph_compile
from minispore.core.graph.builder import GraphBuilder
from minispore.core.primitive import executor
from minispore.core.pynative import EAGER, TAPE

WAIT_S = 20


class Worker(threading.Thread):
    """Runs `body()` in its own thread, keeping its result or its exception for the test."""

    def __init__(self, body):
        super().__init__(daemon=True)
        self.body, self.result, self.error = body, None, None

    def run(self):
        try:
            self.result = self.body()
        except BaseException as e:            # re-raised in the test's thread by finish()
            self.error = e

    def finish(self):
        self.join(WAIT_S)
        assert not self.is_alive(), "the worker thread did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def _eager_ops(a, b):
    """Primitives, a Tensor operator, a composite and an eager gradient, as numpy arrays."""
    grad = ms.grad(lambda x: (ops.square(x) * b).sum())(a)
    return tuple(t.asnumpy() for t in (a + b, ops.mul(a, b), ops.relu(a - b), ops.square(a),
                                       grad)), executor.current is EAGER, TAPE.depth


def _check_eager_ops(got, a, b):
    values, eager, depth = got
    want = (a + b, a * b, np.maximum(a - b, 0), a * a, 2 * a * b)
    for g, w in zip(values, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert eager and depth == 0


def test_eager_ops_in_a_thread_while_another_builds_a_graph():
    a = np.array([1.0, -2.0, 3.0], np.float32)
    b = np.array([0.5, 4.0, -1.0], np.float32)
    ta, tb = ms.Tensor(a), ms.Tensor(b)
    started, done = threading.Event(), threading.Event()
    worker = Worker(lambda: (started.wait(WAIT_S), _eager_ops(ta, tb), done.set())[1])

    def traced(x):
        y = x * 2
        builder = executor.current
        assert isinstance(builder, GraphBuilder)
        before = len(builder.graph.nodes)
        started.set()                          # the worker runs its ops now, mid-trace
        assert done.wait(WAIT_S)
        added = len(builder.graph.nodes) - before
        return ops.relu(y + 1), added

    worker.start()
    out, added = graph_compile.run(traced, (ta,), parse=False, name="thread_safety_trace")
    _check_eager_ops(worker.finish(), a, b)
    assert added == 0                           # nothing of the worker's entered the graph
    np.testing.assert_allclose(out.asnumpy(), np.maximum(2 * a + 1, 0))
    assert executor.current is EAGER


def test_a_gradient_is_recorded_while_another_thread_builds_a_graph():
    """A graph build sets the tape depth to 0 while it traces and restores it after; a
    gradient another thread takes meanwhile records its ops before and after that restore."""
    x = np.array([1.5, -0.5, 2.0], np.float32)
    inside, release = threading.Event(), threading.Event()

    def traced(v):
        inside.set()
        assert release.wait(WAIT_S)            # the build stays open while the gradient starts
        return v * 3 + 1

    worker = Worker(lambda: graph_compile.run(traced, (ms.Tensor(x),), parse=False,
                                              name="thread_safety_open_build").asnumpy())
    worker.start()
    assert inside.wait(WAIT_S)                 # the worker's graph build is now open

    def loss(t):
        y = t * t                              # recorded while the build is open
        release.set()
        worker.finish()                        # the build has ended (and restored its depth)
        return (y * ops.sin(t)).sum()          # recorded after it

    value, g = ms.value_and_grad(loss)(ms.Tensor(x))
    np.testing.assert_allclose(worker.result, 3 * x + 1, rtol=1e-6)
    np.testing.assert_allclose(value.asnumpy(), (x * x * np.sin(x)).sum(), rtol=1e-5)
    np.testing.assert_allclose(g.asnumpy(), 2 * x * np.sin(x) + x * x * np.cos(x), rtol=1e-5)


def test_each_thread_starts_eager_and_outside_any_gradient():
    seen = []
    with GraphBuilder("outer_thread_graph"):
        t = Worker(lambda: seen.append((executor.current is EAGER, TAPE.depth)))
        t.start()
        t.finish()
    assert seen == [(True, 0)] and executor.current is EAGER


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 2)

    def construct(self, x):
        return self.dense(x)


@pytest.mark.parametrize("mode", [ms.GRAPH_MODE])
def test_model_train_in_graph_mode_with_a_map_that_runs_minispore_ops(mode):
    """Dataset map workers (threads) run minispore ops while Model.train compiles its step."""
    ms.set_context(mode=mode)
    try:
        rng = np.random.default_rng(0)
        data = rng.standard_normal((24, 4)).astype(np.float32)
        labels = rng.integers(0, 2, 24).astype(np.int32)

        def scale(x):
            t = ms.Tensor(x)
            return (ops.relu(t) * 2 - ops.square(t) * 0.1).asnumpy()

        ds = ms.dataset.NumpySlicesDataset({"x": data, "y": labels}, shuffle=False)
        ds = ds.map(scale, input_columns="x", num_parallel_workers=2).batch(6)
        net = _Net()
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        model = ms.Model(net, loss, nn.SGD(net.trainable_params(), 0.1))
        model.train(2, ds, dataset_sink_mode=False)
        got = np.concatenate([b[0].asnumpy() for b in ds.create_tuple_iterator()])
        np.testing.assert_allclose(got, np.maximum(data, 0) * 2 - data * data * 0.1,
                                   rtol=1e-5, atol=1e-6)
        assert executor.current is EAGER and TAPE.depth == 0
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_per_thread_state_reads_plainly_until_a_thread_holds_its_own():
    from minispore.core.thread_state import per_thread
    s = per_thread("Probe", "a test object", level=0, who=None)
    fast = type(s)
    assert s.level == 0 and s.who is None and "level" not in fast.__dict__
    s.level = 2                                 # this thread's own value: property reads
    seen = []
    t = Worker(lambda: (seen.append((s.level, s.who)), setattr(s, "who", "worker"),
                        seen.append(s.who)))
    t.start()
    t.finish()
    assert seen == [(0, None), "worker"] and s.level == 2 and s.who is None
    assert isinstance(type(s).__dict__.get("level"), property)
    s.level = 0                                 # back to the default; the worker ended holding
    assert s.level == 0                         # its own `who`, so the reads stay per thread
    with pytest.raises(AttributeError, match="no per-thread attribute 'depth'"):
        s.depth = 1
    u = per_thread("Probe2", "another", depth=0)
    u.depth = 1
    u.depth = 0
    assert type(u) is type(u)._fast and u.depth == 0   # plain reads again
