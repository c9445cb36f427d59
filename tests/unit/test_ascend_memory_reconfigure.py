"""A reconfigured simulated Ascend device (set_context changing max_device_memory or the device
profile) keeps the tensors already on it valid and counted in its memory pool."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import minispore as ms
from minispore.backends import ascend_sim
from minispore.backends.ascend_sim.memory import OutOfDeviceMemory


@pytest.fixture
def dev():
    ms.set_context(device_target="Ascend", mode=ms.PYNATIVE_MODE)
    return ascend_sim.device()


def _big(rows=256):
    return ms.Tensor(np.arange(rows * 256, dtype=np.float32).reshape(rows, 256)) * 2.0


def test_live_tensors_stay_counted_when_the_capacity_changes(dev):
    x = _big()
    want = x.asnumpy()
    used = ascend_sim.device().pool.allocated
    ms.set_context(max_device_memory="1GB")
    d = ascend_sim.device()
    assert d.pool.capacity == 2**30 and d.pool.allocated == used      # x is still counted
    assert x._buf.pool is d.pool
    np.testing.assert_array_equal(x.asnumpy(), want)
    np.testing.assert_array_equal((x + 1.0).asnumpy(), want + 1)
    ms.set_context(ascend_config={"device_profile": "Ascend310P"})
    d = ascend_sim.device()
    assert d.profile.name == "Ascend310P" and d.pool.allocated >= used
    np.testing.assert_array_equal(x.asnumpy(), want)


def test_a_smaller_capacity_moves_live_buffers_down_and_never_overcommits(dev):
    keep = [_big() for _ in range(4)]                   # 4 x 256 KiB
    filler = [_big() for _ in range(8)]
    del filler[:7]                                      # a live buffer far up the pool
    live = keep + filler
    want = [t.asnumpy() for t in live]
    gc.collect()            # earlier tests' garbage cycles: a refused capacity collects them
    used = ascend_sim.device().pool.allocated
    ms.set_context(max_device_memory=f"{(used + 4 * 2**20) // 1024}KB")
    d = ascend_sim.device()
    assert d.pool.allocated == used and d.pool.top <= d.pool.capacity
    addrs = sorted(t._buf.addr for t in live)
    assert addrs[-1] + live[0]._buf.size <= d.pool.capacity
    for t, w in zip(live, want):
        np.testing.assert_array_equal(t.asnumpy(), w)
    with pytest.raises(OutOfDeviceMemory, match="live tensors hold"):
        ms.set_context(max_device_memory="64KB")
    # the refusal keeps every live tensor; it may free what only garbage or caches still held
    assert ms.get_context("max_device_memory") != "64KB" and d.pool.allocated <= used
    np.testing.assert_array_equal(live[0].asnumpy(), want[0])
    free = d.pool.capacity - d.pool.allocated
    with pytest.raises(OutOfDeviceMemory, match="out of memory"):
        ms.Tensor(np.ones(free // 4 + 1024, np.float32)) + 1.0
