"""The data-parallel gradient buckets and their overlap with compute, in one process: the
comm_fusion / all_reduce_fusion_config rules (MindSpore's checks and stored values), the
buckets DistributedGradReducer forms from them, the asynchronous all-reduce pair on the world
of one process, and the scheduling pass that moves each start next to the gradients it needs
and each wait next to its first use (graph/passes/schedule.py)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops
from minispore.core.graph import ir
from minispore.core.graph.passes.schedule import schedule
from minispore.core.ops import collective as C


@pytest.fixture(autouse=True)
def _reset():
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()
    ms.set_context(mode=ms.PYNATIVE_MODE)


def test_comm_fusion_is_stored_and_checked_as_mindspore_does():
    # stored values and messages from MindSpore 2.10
    ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "size", "config": 32}})
    got = ms.get_auto_parallel_context("comm_fusion")
    assert got["allreduce"] == {"mode": "size", "config": 32} and got["openstate"] is True
    assert got["allgather"] == {"mode": "auto", "config": None}
    assert ms.get_auto_parallel_context("all_reduce_fusion_config") == []
    ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "index", "config": [2, 5]}})
    assert ms.get_auto_parallel_context("all_reduce_fusion_config") == [2, 5]
    ms.set_auto_parallel_context(comm_fusion={"openstate": False})
    assert ms.get_auto_parallel_context("comm_fusion")["allreduce"]["mode"] == "index"
    with pytest.raises(KeyError, match="must be auto, index or size, but got xx"):
        ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "xx", "config": 1}})
    with pytest.raises(KeyError, match="openstate,allreduce, allgather or reducescatter"):
        ms.set_auto_parallel_context(comm_fusion={"foo": 1})
    with pytest.raises(ValueError, match="larger than 0, but got -1"):
        ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "size", "config": -1}})
    with pytest.raises(KeyError, match="must be auto or size, but got index"):
        ms.set_auto_parallel_context(comm_fusion={"allgather": {"mode": "index", "config": [1]}})
    with pytest.raises(TypeError, match="must be <class 'dict'>"):
        ms.set_auto_parallel_context(comm_fusion=5)
    with pytest.raises(NotImplementedError, match="allgather runs unfused"):
        ms.set_auto_parallel_context(comm_fusion={"allgather": {"mode": "size", "config": 8}})


def _mlp():
    # parameter bytes as float32: 128 KB, 2 KB, 1 MB, 2 KB, 20 KB, 40 B
    return nn.SequentialCell(nn.Dense(64, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(),
                             nn.Dense(512, 10))


def test_buckets_fill_up_to_the_threshold_from_the_last_parameter():
    net = _mlp()
    assert nn.DistributedGradReducer(net.trainable_params()).split_indices == [(0, 6)]   # 64 MB
    ms.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "size", "config": 1}})
    assert nn.DistributedGradReducer(net.trainable_params()).split_indices == \
        [(0, 2), (2, 3), (3, 6)]
    ms.set_auto_parallel_context(comm_fusion={"openstate": False})
    assert nn.DistributedGradReducer(net.trainable_params()).split_indices == \
        [(k, k + 1) for k in range(6)]
    ms.reset_auto_parallel_context()
    ms.set_auto_parallel_context(all_reduce_fusion_config=[2, 4])
    assert nn.DistributedGradReducer(net.trainable_params()).split_indices == \
        [(0, 2), (2, 4), (4, 6)]


def test_reducer_on_one_rank_casts_through_float32_and_keeps_dtypes():
    p16 = ms.Parameter(ms.Tensor(np.zeros(3, np.float16)), name="h")
    p32 = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="f", layerwise_parallel=True)
    red = nn.DistributedGradReducer([p16, p32], mean=True, degree=2)
    g16 = ms.Tensor(np.array([60000, 1, -3], np.float16))
    g32 = ms.Tensor(np.array([1.5, 2.5], np.float32))
    out16, out32 = red((g16, g32))
    assert out16.dtype == ms.float16 and out32.dtype == ms.float32
    # the mean is taken in float32 (MindSpore casts to float32 before reducing)
    np.testing.assert_array_equal(out16.asnumpy(), np.array([30000, 0.5, -1.5], np.float16))
    np.testing.assert_array_equal(out32.asnumpy(), g32.asnumpy())     # layerwise: untouched


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_async_all_reduce_on_one_rank_returns_its_input(mode):
    ms.set_context(mode=mode)

    def f(x):
        t = C.all_reduce_start(x * 2)
        return C.all_reduce_wait(t, x) + 1

    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = ms.jit(f)(x) if mode == ms.GRAPH_MODE else f(x)
    np.testing.assert_array_equal(out.asnumpy(), np.arange(6).reshape(2, 3) * 2 + 1)


def _overlap_fn(x, w1, w2):
    h = ops.matmul(x, w1)
    a = ops.matmul(h, w2)
    late = ops.sin(ops.matmul(a, w1))           # work that does not feed the all-reduce
    g = ops.reshape(a * 2, (-1,))
    t = C.all_reduce_start(g)
    return late + 1, C.all_reduce_wait(t, g) * 3


@pytest.mark.filterwarnings("ignore:save_graphs")
def test_schedule_starts_as_soon_as_the_input_exists_and_waits_at_first_use(tmp_path):
    ms.set_context(mode=ms.GRAPH_MODE, save_graphs=True, save_graphs_path=str(tmp_path),
                   jit_level="O0")
    try:
        x = ms.Tensor(np.ones((2, 3), np.float32))
        w = ms.Tensor(np.full((3, 3), 0.5, np.float32))
        late, reduced = ms.jit(_overlap_fn)(x, w, w)
    finally:
        ms.set_context(save_graphs=False)
    a = (np.ones((2, 3)) @ np.full((3, 3), 0.5)) @ np.full((3, 3), 0.5)
    np.testing.assert_allclose(reduced.asnumpy(), (a * 2).reshape(-1) * 3, rtol=1e-6)
    text = next(tmp_path.rglob("*_schedule.ir")).read_text().splitlines()
    names = [ln.split("=", 1)[1].split("(")[0].strip() for ln in text if " = " in ln
             and "param" not in ln.split("=", 1)[1][:7]]
    start, wait = names.index("all_reduce_start"), names.index("all_reduce_wait")
    assert start < names.index("sin") < wait, names            # the start before the later work
    assert names[wait + 1] == "mul", names                     # the wait right before its use


def test_schedule_leaves_graphs_without_async_collectives_alone():
    g = ir.Graph("empty")
    assert schedule(g) is g


def test_reduce_op_avg_needs_floats_and_an_averaging_collective():
    from minispore.core.errors import DTypeError
    x = ms.Tensor(np.array([1.0, 3.0], np.float32))
    np.testing.assert_array_equal(ops.AllReduce(ops.ReduceOp.AVG)(x).asnumpy(), [1.0, 3.0])
    with pytest.raises(DTypeError, match="needs a floating-point tensor"):
        ops.AllReduce(ops.ReduceOp.AVG)(ms.Tensor(np.array([1, 2], np.int32)))
    with pytest.raises(NotImplementedError, match="AllReduce and ReduceScatter only"):
        C._check_op("reduce", "avg")
