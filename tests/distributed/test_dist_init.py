"""mindspore.communication in one process, as MindSpore 2.10 behaves there (values from running
MindSpore 2.10): before init() get_rank() is 0 and get_group_size() 1 for any group name,
release() is None, create_group and the rank mappings raise RuntimeError asking for init();
init() outside a launcher raises RuntimeError saying how to launch; bad backends raise
MindSpore's errors. The collectives run on the world of one process (identity-like, as MPI
gives for one rank) and check their arguments."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import minispore as ms
from minispore import communication as comm
from minispore import ops
from minispore.communication import comm_func as cf


def test_queries_before_init_are_one_rank():
    assert comm.get_rank() == 0 and comm.get_group_size() == 1
    assert comm.get_rank("foo") == 0 and comm.get_group_size("foo") == 1
    assert comm.get_local_rank() == 0 and comm.get_local_rank_size() == 1
    assert comm.release() is None
    assert (comm.GlobalComm.BACKEND, comm.GlobalComm.WORLD_COMM_GROUP,
            comm.GlobalComm.INITED) == ("hccl", "hccl_world_group", False)
    with pytest.raises(TypeError, match="For 'get_rank', the argument 'group' must be type of "
                                        "string"):
        comm.get_rank(1)


@pytest.mark.parametrize("call", [lambda: comm.create_group("g", [0]),
                                  lambda: comm.destroy_group("g"),
                                  lambda: comm.get_group_rank_from_world_rank(0, "g"),
                                  lambda: comm.get_world_rank_from_group_rank("g", 0)])
def test_group_functions_need_init(call):
    with pytest.raises(RuntimeError, match="has not been inited.*call `init\\(\\)`"):
        call()


def test_init_outside_a_launcher_says_how_to_launch(monkeypatch):
    for k in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(RuntimeError, match="python -m minispore run -n 2 script.py.*mpirun"):
        comm.init()
    assert comm.GlobalComm.INITED is False


def test_init_backend_errors():
    with pytest.raises(RuntimeError, match="must be one of 'hccl', 'nccl' and 'mccl', but got "
                                           "'backend_name' : gloo"):
        comm.init("gloo")
    with pytest.raises(TypeError, match="'backend_name' must be a string"):
        comm.init(3)
    with pytest.raises(RuntimeError, match="should be 'mccl' to init 'CPU', but got 'hccl'"):
        comm.init("hccl")


def test_init_without_mpi4py_names_the_extra(monkeypatch):
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r'pip install "minispore\[mpi\]"'):
        comm.init()
    assert comm.GlobalComm.INITED is False


X = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_collectives_on_one_rank(mode):
    ms.set_context(mode=mode)
    x = ms.Tensor(X)
    for prim in (ops.AllReduce(), ops.AllReduce(ops.ReduceOp.MAX), ops.AllGather(),
                 ops.ReduceScatter(ops.ReduceOp.MIN), ops.ReduceScatter(ops.ReduceOp.PROD),
                 ops.AlltoAll(1, 0, 1)):
        np.testing.assert_array_equal(prim(x).asnumpy(), X)
    (b,) = ops.Broadcast(0)((x,))
    np.testing.assert_array_equal(b.asnumpy(), X)
    t, handle = cf.all_reduce(x)
    assert handle is None
    np.testing.assert_array_equal(t.asnumpy(), X)
    assert cf.all_gather_into_tensor(x, async_op=True)[1] is not None
    np.testing.assert_array_equal(cf.broadcast(x, 0).asnumpy(), X)


def test_collective_argument_errors():
    x = ms.Tensor(X)
    with pytest.raises(TypeError, match="'op' must be a str"):
        ops.AllReduce(3)
    with pytest.raises(ValueError, match="'op' must be one of"):
        ops.AllReduce("mean")
    ops.AllReduce(ops.ReduceOp.AVG)                 # AllReduce and ReduceScatter average
    with pytest.raises(NotImplementedError, match="ReduceOp.AVG"):
        ops.Reduce(0, ops.ReduceOp.AVG)
    with pytest.raises(ValueError, match="group 'nope' does not exist"):
        ops.AllGather("nope")
    with pytest.raises(ValueError, match="'root_rank' must be a rank"):
        ops.Broadcast(1)((x,))
    with pytest.raises(TypeError, match="must be a tuple of tensors"):
        ops.Broadcast(0)(x)
    with pytest.raises(ValueError, match="'split_count' must equal the group size 1"):
        ops.AlltoAll(2, 0, 1)(x)
    with pytest.raises(TypeError, match="For all_reduce, the input tensor must be tensor"):
        cf.all_reduce(X)
    with pytest.raises(TypeError, match="the input op value must be one of"):
        cf.all_reduce(x, "avg")
    with pytest.raises(TypeError, match="For broadcast, the src must be int"):
        cf.broadcast(x, 0.0)


def test_reduce_scatter_gradient_is_defined_for_sum_only():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    x = ms.Tensor(X)
    g = ms.grad(lambda t: (ops.ReduceScatter()(t) * 2).sum())(x)
    np.testing.assert_array_equal(g.asnumpy(), np.full_like(X, 2))
    with pytest.raises(RuntimeError, match="ReduceOp.SUM only"):
        ms.grad(lambda t: ops.ReduceScatter(ops.ReduceOp.MAX)(t).sum())(x)


def test_barrier_is_pynative_only():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert cf.barrier() is None

    @ms.jit
    def f(x):
        cf.barrier()
        return x
    with pytest.raises(NotImplementedError, match="barrier"):
        f(ms.Tensor(X))


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_grad_reducer_degree_scales_the_mean_as_mindspore(mode):
    """MindSpore 2.10 accepts any positive degree (reducer.degree is then the float32 Tensor
    1/degree, 0.125 for 8) and multiplies each all-reduced gradient by it when mean is True."""
    ms.set_context(mode=mode)
    params = ms.nn.Dense(2, 1).trainable_params()
    reducer = ms.nn.DistributedGradReducer(params, True, 8)
    assert float(reducer.degree.asnumpy()) == 0.125 and reducer.mean is True
    grads = (ms.Tensor(np.array([[1.0, -2.0]], np.float32)), ms.Tensor(np.array([4.0], np.float32)))
    out = reducer(grads)
    np.testing.assert_array_equal(out[0].asnumpy(), [[0.125, -0.25]])
    np.testing.assert_array_equal(out[1].asnumpy(), [0.5])
    same = ms.nn.DistributedGradReducer(params, False, 8)(grads)
    np.testing.assert_array_equal(same[1].asnumpy(), [4.0])
    with pytest.raises(ValueError, match="'degree' in DistributedGradReducer should large than "
                                         "0 and be int, degree: 0."):
        ms.nn.DistributedGradReducer(params, True, 0)
