"""Tiered execution (core/graph/tiered.py): with MINISPORE_TIERED=1 an O2 graph runs its O1
program (the eager kernels) while its native program is built on the background worker, and the
native program from the first call after the build; PyNative's compiled backward is lowered on
the same worker while the tape is walked eagerly. The O1 and O2 programs give the same bits on
the MLP, LeNet and conv + BatchNorm training steps, so the switch changes no number. The suite
runs with MINISPORE_TIERED=0 (conftest.py); these tests turn tiering on. A build is held back by
making the backend's sink (or bprop_program) wait for an event, so the tier that runs is known.
"""
import os
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.core import bprop_graph
from minispore.core.device import get_backend
from minispore.core.graph import compile as graph_compile
from minispore.core.graph import tiered
from minispore.core.graph.compile import last_compiled

from helpers import SmallMLP as MLP
from helpers import train_small_mlp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def tiering(monkeypatch):
    monkeypatch.setenv("MINISPORE_TIERED", "1")
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")


def _held(monkeypatch, name, fail=None):
    """Make the CPU backend's `name` (sink or bprop_program) wait for the returned event, then
    build as usual, or raise `fail` when given."""
    cls = type(get_backend("CPU"))
    release = threading.Event()
    original = getattr(cls, name)

    def held(self, graph):
        assert release.wait(120), "the held build was never released"
        if fail is not None:
            raise fail
        return original(self, graph)
    monkeypatch.setattr(cls, name, held)
    return release


@pytest.fixture
def held_sink(monkeypatch):
    release = _held(monkeypatch, "sink")
    yield release
    release.set()


class ConvBN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="pad", padding=1, has_bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.fc = nn.Dense(4, 10)

    def construct(self, x):
        return self.fc(ops.mean(self.relu(self.bn(self.conv(x))), (2, 3)))


def _conv_bn():
    ms.set_seed(2)
    net = ConvBN()
    net.set_train()
    return net, ((8, 1, 6, 6), 10)


def _mlp():
    ms.set_seed(3)
    return MLP(), ((5, 6), 3)


def _lenet():
    from minispore.digits_demo import LeNet
    ms.set_seed(1)
    return LeNet(), ((16, 1, 8, 8), 10)


def _step(make):
    net, (xs, classes) = make()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    r = np.random.default_rng(0)

    def batch():
        return (Tensor(r.standard_normal(xs).astype(np.float32)),
                Tensor(r.integers(0, classes, xs[0]).astype(np.int32)))
    return step, net, batch


def _train(make, steps, between=None, programs=None):
    """Losses and final parameters of `steps` training steps; `between(k)` after step k. The
    program the last step ran is appended to `programs` while the step Cell is alive
    (last_compiled holds its entry weakly)."""
    step, net, batch = _step(make)
    losses = []
    for k in range(steps):
        losses.append(step(*batch()).asnumpy())
        if between is not None:
            between(k)
    if programs is not None:
        programs.append(last_compiled().program)
    return np.array(losses), [p.asnumpy() for p in net.trainable_params()]


def _assert_same(a, b):
    assert np.array_equal(a[0], b[0])
    assert len(a[1]) == len(b[1])
    for x, y in zip(a[1], b[1]):
        assert np.array_equal(x, y)


def test_the_first_calls_run_o1_while_the_sink_builds_and_later_calls_run_o2(tiering,
                                                                           held_sink):
    step, _, batch = _step(_mlp)
    step(*batch())
    p = last_compiled().program
    assert isinstance(p, tiered.TieredProgram)
    assert p.active == "O1" and p.sink_program is None and not p.ready
    assert p.kernel_launches == p.o1_program.kernel_launches > 1
    step(*batch())
    assert p.active == "O1" and last_compiled().program is p
    held_sink.set()
    assert p.wait(120) and p.ready
    step(*batch())
    assert p.active == "O2" and isinstance(p.sink_program, NativeProgram)
    assert p.kernel_launches == 1 and p.ir_text == p.sink_program.ir_text
    assert p.arena_bytes == p.sink_program.arena_bytes      # the rest: the sink's own


def test_the_first_call_runs_the_sink_when_it_is_made_before_the_o1_program(monkeypatch,
                                                                             tiering):
    release = _held(monkeypatch, "program")
    step, _, batch = _step(_mlp)
    try:
        step(*batch())
        p = last_compiled().program
        assert p.active == "O2" and p.o1_program is None
    finally:
        release.set()


def test_an_o1_program_still_being_made_when_the_sink_is_built_is_abandoned(monkeypatch,
                                                                           tiering, held_sink):
    # the O1 program's remaining kernels would compile for nothing, slowing the O2 calls
    from minispore.core.graph import execute
    made, gate = [], threading.Event()
    original = execute.Program.node_kernel

    def node_kernel(self, n):
        made.append(n)
        if len(made) == 1:
            held_sink.set()                  # the sink is built while this kernel is made
            assert gate.wait(120)
        return original(self, n)
    monkeypatch.setattr(execute.Program, "node_kernel", node_kernel)
    step, _, batch = _step(_mlp)
    step(*batch())                           # waits for the sink: the O1 program is held
    p = last_compiled().program
    assert p.wait(120) and p.active == "O2"
    helpers = list(tiered._helpers)
    gate.set()
    for t in helpers:
        t.join(120)
    assert len(made) == 1 and p.o1_program is None
    assert execute.BUILD_STOP.__dict__ == {}   # nothing left on this thread
    step(*batch())
    assert p.active == "O2"


def test_an_o1_program_that_cannot_be_made_raises_only_when_the_sink_failed_too(monkeypatch,
                                                                              tiering):
    _held(monkeypatch, "program", fail=RuntimeError("no O1 program")).set()
    step, _, batch = _step(_mlp)
    step(*batch())
    assert last_compiled().program.active == "O2"
    _held(monkeypatch, "sink", fail=RuntimeError("no sink program")).set()
    step, _, batch = _step(_mlp)
    with pytest.raises(RuntimeError, match="no O1 program"):
        step(*batch())


@pytest.mark.parametrize("make", [_mlp, _lenet, _conv_bn], ids=["mlp", "lenet", "conv_bn"])
def test_steps_switching_tier_midway_equal_the_all_o2_run_bit_for_bit(make, monkeypatch,
                                                                    tiering):
    monkeypatch.setenv("MINISPORE_TIERED", "0")
    programs = []
    all_o2 = _train(make, 6, programs=programs)
    assert isinstance(programs[0], NativeProgram)
    monkeypatch.setenv("MINISPORE_TIERED", "1")
    release = _held(monkeypatch, "sink")
    tiers = []

    def between(k):
        p = last_compiled().program
        tiers.append(p.active)
        if k == 2:
            release.set()
            assert p.wait(120)
    try:
        switched = _train(make, 6, between)
    finally:
        release.set()
    assert tiers == ["O1"] * 3 + ["O2"] * 3
    _assert_same(switched, all_o2)


def test_a_failed_build_warns_at_the_next_call_and_the_calls_stay_on_o1(monkeypatch, tiering):
    ms.set_context(jit_level="O1")
    reference = _train(_mlp, 4)
    ms.set_context(jit_level="O2")
    release = _held(monkeypatch, "sink", fail=RuntimeError("the held build gives up"))
    step, net, batch = _step(_mlp)
    losses = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            losses.append(step(*batch()).asnumpy())
    finally:
        release.set()
    p = last_compiled().program
    assert p.wait(120)
    with pytest.warns(RuntimeWarning, match=r"graph 'TrainOneStepCell' runs kernel by kernel "
                      r"\(as O1\) because building its CPU sink program failed \(RuntimeError: "
                      r"the held build gives up\)"):
        losses.append(step(*batch()).asnumpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # once
        for _ in range(2):
            losses.append(step(*batch()).asnumpy())
            assert p.active == "O1" and p.sink_program is None
    _assert_same((np.array(losses), [q.asnumpy() for q in net.trainable_params()]), reference)


def test_a_sink_that_cannot_lower_warns_as_the_synchronous_path_does(monkeypatch, tiering):
    release = _held(monkeypatch, "sink", fail=NotImplementedError("node 'foo' (a test)"))
    step, _, batch = _step(_mlp)
    try:
        step(*batch())
    finally:
        release.set()
    p = last_compiled().program
    assert p.wait(120)
    with pytest.warns(RuntimeWarning, match=r"runs kernel by kernel \(as O1\) because the CPU "
                      r"sink cannot lower node 'foo' \(a test\); set jit_level='O1'"):
        step(*batch())
    assert p.active == "O1"


def test_tiering_off_builds_the_native_program_before_the_first_call(monkeypatch, tiering):
    monkeypatch.setenv("MINISPORE_TIERED", "0")
    step, _, batch = _step(_mlp)
    step(*batch())
    assert isinstance(last_compiled().program, NativeProgram)


def test_a_bad_tiered_value_is_an_error(monkeypatch, tiering):
    monkeypatch.setenv("MINISPORE_TIERED", "yes")
    step, _, batch = _step(_mlp)
    with pytest.raises(ValueError, match=r"MINISPORE_TIERED must be '1' .* or '0' .*'yes'"):
        step(*batch())


def test_save_graphs_and_a_running_profiler_build_the_native_program_first(tmp_path, tiering):
    ms.set_context(save_graphs=True, save_graphs_path=str(tmp_path))
    step, _, batch = _step(_mlp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # no Graphviz here: DOT only
        step(*batch())
    assert isinstance(last_compiled().program, NativeProgram)
    assert list(tmp_path.glob("*_native.ll"))
    ms.set_context(save_graphs=False)
    profiler = ms.Profiler(output_path=str(tmp_path / "prof"))
    try:
        step, _, batch = _step(_mlp)
        step(*batch())
        assert not isinstance(last_compiled().program, tiered.TieredProgram)
    finally:
        profiler.stop()


def test_o0_and_o1_never_tier(tiering):
    for level in ("O0", "O1"):
        ms.set_context(jit_level=level)
        step, _, batch = _step(_mlp)
        step(*batch())
        assert not isinstance(last_compiled().program, tiered.TieredProgram)


def test_data_sink_runs_o1_steps_then_the_sinks_run_steps_with_the_same_numbers(monkeypatch,
                                                                               tiering):
    xs = np.arange(24, dtype=np.float32).reshape(8, 3) / 7

    def sinks(between):
        acc = ms.Parameter(Tensor(np.zeros(3, np.float32)), name="acc")

        def step(x):
            ops.assign(acc, acc * 0.5 + ops.exp(x) * 2)
            return acc.sum()
        graph_compile.clear_cache()
        outs = []
        for k in range(2):
            outs.append(ms.data_sink(step, [(x,) for x in xs[4 * k:4 * k + 4]], sink_size=4)())
            between(k)
        return [o.asnumpy() for o in outs], acc.asnumpy()
    monkeypatch.setenv("MINISPORE_TIERED", "0")
    all_o2 = sinks(lambda k: None)
    monkeypatch.setenv("MINISPORE_TIERED", "1")
    release = _held(monkeypatch, "sink")
    tiers = []

    def between(k):
        (entry,) = graph_compile.cache.entries()
        tiers.append(entry.program.active)
        release.set()
        assert entry.program.wait(120)
    try:
        switched = sinks(between)
    finally:
        release.set()
    assert tiers == ["O1", "O2"]
    assert all(np.array_equal(a, b) for a, b in zip(switched[0], all_o2[0]))
    assert np.array_equal(switched[1], all_o2[1])


def test_builds_run_one_at_a_time_in_submission_order():
    spans = []

    def build(k):
        def run():
            t0 = time.perf_counter()
            time.sleep(0.05)
            spans.append((k, t0, time.perf_counter()))
            return k
        return run
    builds = [tiered.submit(build(k), f"b{k}") for k in range(3)]
    assert all(b.wait(60) for b in builds)
    assert [b.result for b in builds] == [0, 1, 2] and [s[0] for s in spans] == [0, 1, 2]
    assert all(spans[k][2] <= spans[k + 1][1] for k in range(2))
    assert threading.current_thread().name != "minispore-tiered-compile"


_EXIT_SCRIPT = """
import sys, threading, time
from minispore.core.graph import tiered
out = sys.argv[1]
started = threading.Event()
def slow():
    started.set()
    time.sleep(2)
    open(out + '.first', 'w').write('done')
def second():
    open(out + '.second', 'w').write('ran')
tiered.submit(slow, 'slow')
tiered.submit(second, 'second')
assert started.wait(60)
"""


def test_exit_waits_for_the_build_in_flight_and_cancels_the_queued_ones(tmp_path):
    out = str(tmp_path / "mark")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", _EXIT_SCRIPT, out], check=True, env=env, timeout=120)
    assert open(out + ".first").read() == "done"
    assert not os.path.exists(out + ".second")


_FORK_SCRIPT = """
import os, threading
from minispore.core.graph import tiered
release, started = threading.Event(), threading.Event()
def build():
    started.set()
    assert release.wait(60)
    return os.getpid()
b = tiered.submit(build, 'held')
assert started.wait(60)
pid = os.fork()
if pid == 0:                       # the child: the build it inherited unfinished runs there
    release.set()
    os._exit(0 if b.wait(60) and b.result == os.getpid() else 3)
release.set()
assert b.wait(60) and b.result == os.getpid()
assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_forked_child_builds_what_the_parent_had_not_finished():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", _FORK_SCRIPT], check=True, env=env, timeout=120)


@pytest.fixture
def pynative_o2(monkeypatch):
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O2")
    monkeypatch.delenv("MINISPORE_BPROP_GRAPH", raising=False)
    bprop_graph.clear()
    yield
    bprop_graph.clear()


def _pending():
    return [e for e in bprop_graph._compiled.values() if isinstance(e, bprop_graph._Pending)]


def test_pynative_hot_step_walks_the_tape_while_the_backward_compiles(monkeypatch, pynative_o2):
    monkeypatch.setenv("MINISPORE_BPROP_GRAPH", "0")
    eager = train_small_mlp(8)
    monkeypatch.delenv("MINISPORE_BPROP_GRAPH")
    monkeypatch.setenv("MINISPORE_TIERED", "1")
    bprop_graph.clear()
    release = _held(monkeypatch, "bprop_program")
    before = dict(bprop_graph.stats)
    runs = []

    def between(k):
        runs.append(bprop_graph.stats["runs"] - before["runs"])
        if k == bprop_graph.HOT:            # the HOT step and one more walked the tape
            (pending,) = _pending()
            release.set()
            assert pending.wait(120)
    try:
        tiered_run = train_small_mlp(8, between)
    finally:
        release.set()
    hot = bprop_graph.HOT
    # steps 1..HOT+1 eager (HOT-1 counting, the HOT step's build held, one more while held);
    # every later step runs the compiled backward
    assert runs == [0] * (hot + 1) + list(range(1, 8 - hot))
    assert bprop_graph.stats["compiles"] - before["compiles"] == 1
    assert not _pending()
    _assert_same(tiered_run, eager)


def test_pynative_backward_whose_lowering_fails_warns_and_stays_eager(monkeypatch, pynative_o2):
    monkeypatch.setenv("MINISPORE_BPROP_GRAPH", "0")
    eager = train_small_mlp(6)
    monkeypatch.delenv("MINISPORE_BPROP_GRAPH")
    monkeypatch.setenv("MINISPORE_TIERED", "1")
    bprop_graph.clear()
    release = _held(monkeypatch, "bprop_program", fail=RuntimeError("held lowering gives up"))
    before = dict(bprop_graph.stats)
    caught = []

    def between(k):
        if k == bprop_graph.HOT - 1:
            (pending,) = _pending()
            release.set()
            assert pending.wait(120)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            failed = train_small_mlp(6, between)
    finally:
        release.set()
    msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert [m for m in msgs if "held lowering gives up" in m] == [
        "PyNative: the repeated backward could not be compiled (RuntimeError: held lowering "
        "gives up); the tape's eager walk computes the gradients instead (the same numbers, "
        "slower). MINISPORE_BPROP_GRAPH=0 turns the compiled backward off"]
    assert dict(bprop_graph.stats) == before
    _assert_same(failed, eager)


def test_pynative_tiering_off_compiles_at_the_hot_step(monkeypatch, pynative_o2):
    monkeypatch.setenv("MINISPORE_TIERED", "0")
    before = dict(bprop_graph.stats)
    train_small_mlp(bprop_graph.HOT)
    assert bprop_graph.stats["runs"] - before["runs"] == 1
    assert not _pending()
