"""The dataset pipeline's worker pools: map, batch(per_batch_map) and random-access
GeneratorDataset on threads and on worker processes give the rows in order, re-raise a
worker's exception with its traceback (as MindSpore 2.10's RuntimeError does), compute a
bounded number of rows ahead, start lazily and leave no worker behind."""
from __future__ import annotations

import gc
import multiprocessing
import os
import threading
import time

import numpy as np
import pytest

import minispore.dataset as ds


def _values(d, column=0):
    return [r[column].tolist() for r in d.create_tuple_iterator(output_numpy=True)]


def _pool_threads():
    return [t for t in threading.enumerate() if t.name.startswith("dataset-")]


def _wait_until(cond, seconds=5.0):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def _no_workers_left():
    return _wait_until(lambda: not multiprocessing.active_children() and not _pool_threads())


def _slow_identity(x):
    time.sleep(0.002 * (int(x) % 3))          # uneven work: results finish out of order
    return x


@pytest.mark.parametrize("processes", [False, True])
def test_map_on_workers_keeps_the_order(processes):
    d = ds.NumpySlicesDataset({"x": np.arange(24)}, shuffle=False)
    m = d.map(lambda x: (_slow_identity(x), np.array(os.getpid()),
                         np.array(threading.get_ident())),
              input_columns="x", output_columns=["x", "pid", "tid"],
              num_parallel_workers=3, python_multiprocessing=processes)
    rows = list(m.create_tuple_iterator(output_numpy=True))
    assert [int(r[0]) for r in rows] == list(range(24))
    pids = {int(r[1]) for r in rows}
    if processes:
        assert os.getpid() not in pids and 1 <= len(pids) <= 3
    else:
        assert pids == {os.getpid()}
        assert threading.get_ident() not in {int(r[2]) for r in rows}
    assert _no_workers_left()


def _fails_at_two(x):
    if int(x) == 2:
        raise ValueError("boom at 2")
    return x


@pytest.mark.parametrize("workers, processes", [(1, False), (3, False), (3, True)])
def test_a_worker_exception_reaches_the_reader_with_its_traceback(workers, processes):
    d = ds.NumpySlicesDataset({"x": np.arange(8)}, shuffle=False).map(
        _fails_at_two, input_columns="x", num_parallel_workers=workers,
        python_multiprocessing=processes)
    with pytest.raises(RuntimeError) as info:
        _values(d)
    text = str(info.value)
    assert "map operation: [_fails_at_two] failed" in text and "boom at 2" in text
    assert "Traceback (most recent call last)" in text and "in _fails_at_two" in text
    assert _no_workers_left()


def test_workers_start_lazily_and_stop_with_the_iterator():
    d = ds.NumpySlicesDataset({"x": np.arange(50)}, shuffle=False).map(
        lambda x: x + 1, input_columns="x", num_parallel_workers=2,
        python_multiprocessing=True)
    it = d.create_tuple_iterator(output_numpy=True)
    assert not multiprocessing.active_children()            # nothing runs before reading
    assert int(next(it)[0]) == 1
    assert len(multiprocessing.active_children()) == 2
    del it                                                  # a half-read iterator dropped
    gc.collect()
    assert _no_workers_left()
    it = d.create_tuple_iterator(output_numpy=True)
    next(it)
    it.stop()
    assert _no_workers_left()
    thread_map = d.map(lambda x: x, input_columns="x", num_parallel_workers=3)
    assert len(_values(thread_map)) == 50 and _no_workers_left()


@pytest.mark.parametrize("processes", [False, True])
def test_prefetch_is_bounded(processes):
    # at most max(prefetch, workers) rows in flight on threads, prefetch per worker process
    calls = []

    class Source:
        def __len__(self):
            return 200

        def __getitem__(self, i):
            calls.append(i)
            return (np.int64(i),)
    old = ds.config.get_prefetch_size()
    ds.config.set_prefetch_size(4)
    try:
        d = ds.GeneratorDataset(Source(), ["x"], shuffle=False).map(
            _slow_identity, input_columns="x", num_parallel_workers=2,
            python_multiprocessing=processes)
        it = d.create_tuple_iterator(output_numpy=True)
        assert int(next(it)[0]) == 0
        time.sleep(0.2)                                     # let the workers run ahead
        bound = 4 * 2 if processes else 4
        assert len(calls) <= bound + 2, len(calls)          # not the whole source
        it.stop()
    finally:
        ds.config.set_prefetch_size(old)
    with pytest.raises(ValueError, match="size must be an int in"):
        ds.config.set_prefetch_size(0)
    with pytest.raises(ValueError, match="num must be an int in"):
        ds.config.set_num_parallel_workers(0)


class _Squares:
    def __len__(self):
        return 12

    def __getitem__(self, i):
        return np.int64(i * i), np.array(os.getpid())


@pytest.mark.parametrize("processes", [False, True])
def test_generator_dataset_reads_a_random_access_source_in_parallel(processes):
    ds.config.set_seed(11)
    d = ds.GeneratorDataset(_Squares(), ["sq", "pid"], num_parallel_workers=3,
                            python_multiprocessing=processes)
    serial = ds.GeneratorDataset(_Squares(), ["sq", "pid"], num_parallel_workers=1)
    rows = list(d.create_tuple_iterator(output_numpy=True))
    assert [int(r[0]) for r in rows] == _values(serial)          # the sampler's order
    assert sorted(int(r[0]) for r in rows) == [i * i for i in range(12)]
    assert (os.getpid() not in {int(r[1]) for r in rows}) == processes
    assert _no_workers_left()


def test_per_batch_map_on_worker_processes():
    def double(x, info):
        return ([v * 2 + info.get_batch_num() * 0 for v in x],)
    d = ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=False).batch(
        3, per_batch_map=double, input_columns="x", num_parallel_workers=2,
        python_multiprocessing=True)
    assert _values(d) == [[0, 2, 4], [6, 8, 10], [12, 14, 16], [18]]
    assert _no_workers_left()


def test_worker_arguments_are_checked():
    d = ds.NumpySlicesDataset({"x": np.arange(3)})
    with pytest.raises(ValueError, match="num_parallel_workers must be an int >= 1"):
        d.map(abs, num_parallel_workers=0)
    with pytest.raises(TypeError, match="python_multiprocessing"):
        d.map(abs, python_multiprocessing=1)
    with pytest.raises(ValueError, match="max_rowsize"):
        d.batch(2, per_batch_map=lambda x, i: (x,), max_rowsize=-3)
    assert _values(d.map(abs, max_rowsize=[4, 4], num_parallel_workers=2)) is not None


def _dies_at_three(x):
    if int(x) == 3:
        os._exit(1)                           # a worker killed mid-task (e.g. out of memory)
    return x


def test_a_dead_worker_process_fails_the_pipeline_instead_of_hanging():
    d = ds.NumpySlicesDataset({"x": np.arange(8)}, shuffle=False).map(
        _dies_at_three, input_columns="x", num_parallel_workers=2,
        python_multiprocessing=True)
    with pytest.raises(RuntimeError, match="a worker process died"):
        _values(d)
    assert _no_workers_left()


class _Jitter:
    """A user random operation with its own generator."""

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def __call__(self, x):
        time.sleep(0.001 * (int(x) % 2))
        return x * 1000 + self.rng.integers(1000)


def _crop_offsets(workers, processes, epochs=2):
    """The top-left pixel (its position in the image) of RandomCrop(2) of 12 equal images,
    per epoch."""
    from minispore.dataset import vision
    ds.config.set_seed(3)
    image = (np.arange(16).reshape(4, 4, 1) * np.ones((1, 1, 3))).astype(np.uint8)
    d = ds.NumpySlicesDataset({"im": np.stack([image] * 12)}, shuffle=False).map(
        vision.RandomCrop(2), input_columns="im", num_parallel_workers=workers,
        python_multiprocessing=processes)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[int(r[0][0, 0, 0]) for r in it] for _ in range(epochs)]


def test_random_transforms_give_the_same_rows_on_any_workers():
    # each row draws from its own generator (seed, epoch, row): reproducible whatever the
    # workers' number, kind and timing, and new in every epoch
    serial = _crop_offsets(1, False)
    assert serial[0] != serial[1] and len(set(serial[0])) > 2
    assert _crop_offsets(3, False) == serial == _crop_offsets(3, True)
    assert _no_workers_left()


def test_user_callables_are_shared_by_threads_and_copied_by_processes():
    d = lambda p: ds.NumpySlicesDataset({"x": np.arange(12)}, shuffle=False).map(  # noqa
        _Jitter(), input_columns="x", num_parallel_workers=3, python_multiprocessing=p)
    threads = [int(r[0]) % 1000 for r in d(False).create_tuple_iterator(output_numpy=True)]
    one = np.random.default_rng(0)
    assert sorted(threads) == sorted(int(one.integers(1000)) for _ in range(12))  # shared
    procs = [int(r[0]) % 1000 for r in d(True).create_tuple_iterator(output_numpy=True)]
    one = np.random.default_rng(0)
    sequence = {int(one.integers(1000)) for _ in range(12)}
    assert set(procs) <= sequence and len(set(procs)) < 12   # each fork's copy starts anew
    assert _no_workers_left()


def test_worker_processes_live_across_the_iterators_epochs():
    d = ds.NumpySlicesDataset({"x": np.arange(40)}, shuffle=False).map(
        lambda x: np.array(os.getpid()), input_columns="x", num_parallel_workers=2,
        python_multiprocessing=True)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=2)
    e0, e1 = [{int(r[0]) for r in it} for _ in range(2)]
    assert e0 == e1 and len(e0) == 2 and _no_workers_left()


def test_one_mapped_node_read_twice_at_once():
    m = ds.NumpySlicesDataset({"x": np.arange(5)}, shuffle=False).map(
        lambda x: x * 3, input_columns="x", num_parallel_workers=2)
    z = ds.zip((m.rename("x", "y"), m))
    assert [[int(v) for v in r] for r in z.create_tuple_iterator(output_numpy=True)] == \
        [[3 * i, 3 * i] for i in range(5)]
    t = m.take(2).concat(m)                                 # an early stop, then a full pass
    assert _values(t) == [0, 3, 0, 3, 6, 9, 12] and _no_workers_left()


_KILLED_READER = """
import os, signal, sys
import numpy as np
import minispore.dataset as ds
import multiprocessing
d = ds.NumpySlicesDataset({"x": np.arange(100)}, shuffle=False).map(
    lambda x: x, input_columns="x", num_parallel_workers=2, python_multiprocessing=True)
it = d.create_tuple_iterator(output_numpy=True)
next(it)
print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_worker_processes_end_when_their_reader_is_killed():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _KILLED_READER], capture_output=True,
                         text=True, timeout=60, cwd=os.path.dirname(os.path.dirname(
                             os.path.dirname(os.path.abspath(__file__)))))
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2, out.stderr

    def gone(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    assert _wait_until(lambda: all(gone(p) for p in pids), seconds=10)


def test_large_rows_reach_worker_processes_and_come_back_in_order():
    # a chunk too large for the pipe goes through a queue, marked in the pipe: order kept
    # (chunks of prefetch / 2 = 8 rows: the 1st and 4th large, 720 kB a row, others small)
    rows = [np.full((300, 300) if i < 8 or i >= 24 else (3, 3), i, np.float64)
            for i in range(32)]
    d = ds.GeneratorDataset([(r,) for r in rows], ["x"], shuffle=False).map(
        lambda x: (x * 2)[:3, :3], input_columns="x", num_parallel_workers=2,
        python_multiprocessing=True)
    got = [r[0] for r in d.create_tuple_iterator(output_numpy=True)]
    assert [float(g[0, 0]) for g in got] == [2.0 * i for i in range(32)]
    assert all(g.shape == (3, 3) for g in got) and _no_workers_left()
