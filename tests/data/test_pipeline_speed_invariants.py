"""What the data pipeline's speed-ups must not change: a map of built-in transforms gives the
same bits (same rows, same order, same seeded random crops) on 1 worker, on threads, on
worker processes (chosen for built-in transforms, or asked for with python_multiprocessing)
and with any worker count, across epochs and with an unseeded iterator; user Python
functions stay in the main process unless python_multiprocessing=True; a small dataset never
starts worker processes."""
from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np
import pytest

import minispore.dataset as ds
from minispore.dataset import config, pipeline_ops, transforms, vision
from minispore.dataset.map_placement import builtin_processes, is_builtin


def _images(n=24, seed=3):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (int(rng.integers(20, 40)), int(rng.integers(20, 40)), 3),
                         dtype=np.uint8) for _ in range(n)]


class _Images:
    def __init__(self, n=24):
        self.images = _images(n)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], np.int32(i)


def _ops():
    return [vision.RandomResizedCrop(12), vision.RandomHorizontalFlip(),
            vision.Normalize(mean=[120.0, 110.0, 100.0], std=[50.0, 60.0, 70.0]),
            vision.HWC2CHW()]


def _read(workers, processes, epochs=2, batch=5, shuffle=True, ops=None):
    d = ds.GeneratorDataset(_Images(), ["image", "label"], shuffle=shuffle)
    d = d.map(ops or _ops(), input_columns="image", num_parallel_workers=workers,
              python_multiprocessing=processes).batch(batch)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[(img.tobytes(), lab.tolist()) for img, lab in it] for _ in range(epochs)]


def _no_workers_left(seconds=5.0):
    end = time.time() + seconds
    while multiprocessing.active_children() and time.time() < end:
        time.sleep(0.02)
    return not multiprocessing.active_children()


@pytest.fixture
def pool_starts(monkeypatch):
    """(workers, processes) of every worker pool started."""
    monkeypatch.delenv("MINISPORE_DATASET_THREADS_ONLY", raising=False)
    starts = []
    pool_class = pipeline_ops.ordered_map.__globals__["_Workers"]
    real = pool_class.__init__

    def counting(self, make_fn, n, use_processes, *args):
        starts.append((n, use_processes))
        real(self, make_fn, n, use_processes, *args)
    monkeypatch.setattr(pool_class, "__init__", counting)
    return starts


@pytest.fixture
def forking(monkeypatch, pool_starts):
    """Built-in maps start their worker processes after one row (not after 15 ms), so that
    even these small datasets are mapped by processes."""
    monkeypatch.setattr(pipeline_ops, "INLINE_START_S", 0.0)
    return pool_starts


def test_builtin_maps_give_the_same_bits_on_any_workers(forking, monkeypatch):
    ds.config.set_seed(5)
    serial = _read(1, False)
    assert not forking and serial[0] != serial[1]            # a new draw every epoch
    for workers, processes in [(2, False), (3, False), (2, True), (4, True)]:
        assert _read(workers, processes) == serial, (workers, processes)
    assert forking and all(p for _, p in forking)           # built-ins: worker processes
    assert _no_workers_left()
    forking.clear()
    monkeypatch.setenv("MINISPORE_DATASET_THREADS_ONLY", "1")
    assert _read(3, False) == serial                         # threads give the same bits
    assert forking and not any(p for _, p in forking)
    assert _no_workers_left()


def test_an_unseeded_iterator_draws_the_same_on_processes_as_in_one_thread(forking,
                                                                            monkeypatch):
    config._seed["value"], saved = None, config._seed["value"]
    try:
        ops = _ops()                  # unseeded, each op object draws its own sequence
        monkeypatch.setattr(config, "fresh_iterator_seed", lambda: 987)
        serial = _read(1, False, ops=ops)
        assert _read(2, False, ops=ops) == serial and forking
        monkeypatch.setattr(config, "fresh_iterator_seed", lambda: 988)
        assert _read(2, False, ops=ops) != serial            # another iterator's seed
    finally:
        config._seed["value"] = saved
    assert _no_workers_left()


def test_a_seed_set_between_epochs_reaches_live_worker_processes(forking):
    def run(workers):
        ds.config.set_seed(1)
        d = ds.GeneratorDataset(_Images(), ["image", "label"], shuffle=False).map(
            _ops(), input_columns="image", num_parallel_workers=workers)
        it = d.create_tuple_iterator(output_numpy=True, num_epochs=2)
        first = [r[0].tobytes() for r in it]
        ds.config.set_seed(2)                                # the pool forked under seed 1
        return first, [r[0].tobytes() for r in it]
    assert run(2) == run(1) and forking
    assert _no_workers_left()


def test_user_functions_keep_thread_semantics():
    pid = os.getpid()
    d = ds.NumpySlicesDataset({"x": np.arange(30)}, shuffle=False).map(
        [transforms.TypeCast(np.float32), lambda x: (x, np.array(os.getpid()))],
        input_columns="x", output_columns=["x", "pid"], num_parallel_workers=2)
    assert not d.auto_processes
    pids = {int(r[1]) for r in d.create_tuple_iterator(output_numpy=True)}
    assert pids == {pid}


def test_which_maps_count_as_built_in(monkeypatch):
    monkeypatch.delenv("MINISPORE_DATASET_THREADS_ONLY", raising=False)
    assert is_builtin(_ops()) and builtin_processes(_ops(), 2)
    assert not builtin_processes(_ops(), 1)                  # one worker: the caller's thread
    assert is_builtin([transforms.Compose([vision.HWC2CHW(), transforms.TypeCast(np.int32)])])
    assert not is_builtin([transforms.Compose([vision.HWC2CHW(), lambda x: x])])
    assert not is_builtin([transforms.RandomApply([np.flipud])])
    assert not is_builtin([lambda x: x]) and not is_builtin([np.flipud])


def test_a_small_dataset_never_starts_worker_processes(pool_starts):
    ds.config.set_seed(2)
    assert _read(2, False, epochs=1) == _read(1, False, epochs=1)
    assert not pool_starts                       # mapped in the reader's thread within 15 ms


def test_a_failing_builtin_op_in_a_worker_process_names_it(forking):
    rows = [np.zeros((4, 4, 3), np.float32)] * 3 + [np.zeros((4, 4), np.float32)] * 3
    d = ds.GeneratorDataset([(r,) for r in rows], ["x"], shuffle=False).map(
        [vision.Normalize(mean=[1.0, 2.0, 3.0], std=[1.0, 1.0, 1.0]), vision.HWC2CHW()],
        input_columns="x", num_parallel_workers=2)
    with pytest.raises(RuntimeError, match="Normalize"):
        list(d.create_tuple_iterator(output_numpy=True))
    assert forking and _no_workers_left()
