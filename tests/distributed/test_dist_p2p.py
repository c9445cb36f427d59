"""comm_func's point-to-point functions, rooted collectives and uneven all-to-alls
(communication/comm_p2p.py, core/ops/collective_p2p.py) and the Primitives ops.Reduce,
CollectiveGather, CollectiveScatter (ops/collective_rooted.py): over MPI jobs of 2 and 3 ranks
(rank_scripts/p2p.py) against numpy computed here for every rank, in PyNative and GRAPH_MODE
(the rooted collectives; point-to-point raises in a graph, as MindSpore supports it in
PyNative only), with MindSpore's gradients; and in one process before init(), where the
rooted collectives run over the world of one rank and point-to-point asks for init().

MindSpore 2.10 facts mirrored (its comm_func source and docs): send returns None, recv a
Tensor, isend a CommHandle, irecv (Tensor, CommHandle), batch_isend_irecv a tuple with a 0-d
zero tensor at each isend; reduce and gather_into_tensor give the ranks other than dst a
tensor of shape [1]; P2POp refuses tag != 0 (NotImplementedError) and an op other than
isend/irecv (ValueError); Reduce's gradient is Broadcast(dst) of the sensitivity,
CollectiveGather's Broadcast(dst) then this rank's part, CollectiveScatter's CollectiveGather
to src (zeros elsewhere)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore.communication import comm_func as cf
from minispore.core.errors import ShapeError

from dist_job import launch, results

ROOT = 1


def data(r, shape):
    k = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return (np.sin(k * 1.3 + r * 2.1) * 2 + r).astype(np.float32)


def expected(rank, n):
    """What rank `rank` of n must get (the rank script's inputs, rebuilt)."""
    xs = [data(r, (2 * n, 3)) for r in range(n)]
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    at_root = rank == ROOT
    zero1 = np.zeros(1, np.float32)
    rows = np.arange(sum(j + 1 for j in range(n)) * 2, dtype=np.float32).reshape(-1, 2)
    row_start = sum(k + 1 for k in range(rank))
    single = np.concatenate([(rows + 1000 * j)[row_start:row_start + rank + 1]
                             for j in range(n)])

    def v_c_from(i):
        sent = np.arange(sum(i + j + 1 for j in range(n)), dtype=np.float32) + 100 * i
        start = sum(i + k + 1 for k in range(rank))
        return sent[start:start + i + rank + 1]
    both = {
        "reduce": sum(xs) if at_root else zero1,
        "reduce_max": np.max(xs, 0) if at_root else zero1,
        "gather": np.concatenate(xs) if at_root else zero1,
        "scatter": xs[ROOT][2 * rank:2 * rank + 2],
        "p_reduce": sum(xs) if at_root else zero1,              # ops.Reduce and friends
        "p_gather": np.concatenate(xs) if at_root else zero1,
        "p_scatter": xs[ROOT][2 * rank:2 * rank + 2],
        "g_reduce": data(ROOT + 10, (2 * n, 3)),
        "g_gather": data(ROOT + 20, (2 * n * n, 3))[2 * n * rank:2 * n * (rank + 1)],
        "g_scatter": (np.concatenate([data(r + 30, (2, 3)) for r in range(n)]) if at_root
                      else np.zeros((2 * n, 3), np.float32)),
    }
    pynative = {
        "recv": data(prv + 40, (2, 2)),
        "a2a_single": single,
        "a2a_single_even": np.concatenate([xs[j][2 * rank:2 * rank + 2] for j in range(n)]),
        "a2a_v_c": np.concatenate([v_c_from(i) for i in range(n)]),
    }
    exact = {
        "send": None,
        "irecv": [[100 * prv + k for k in range(3)], "Int32", "CommHandle"],
        "batch": [[0.0, [], "Float32"], [float(prv + 1), [], "Float32"],
                  [[[float(nxt)] * 2], [1, 2], "Float16"], [0.0, [], "Float16"]],
        "a2a_list": [[float(10 * j + rank)] * (j + rank + 1) for j in range(n)] + [True],
        "a2a_v_c_handle": True,
    }
    return both, pynative, exact


@pytest.mark.parametrize("n", [2, 3])
def test_p2p_rooted_collectives_and_uneven_all_to_all_on_every_rank(n):
    job = launch("p2p.py", n)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    got = results(job.stdout)
    assert sorted(got) == list(range(n)), job.stdout[-3000:]
    for rank, outs in got.items():
        assert [o["mode"] for o in outs] == ["pynative", "graph"]
        both, pynative, exact = expected(rank, n)
        for out in outs:
            checks = dict(both, **(pynative if out["mode"] == "pynative" else {}))
            for name, want in checks.items():
                np.testing.assert_allclose(np.array(out[name], np.float32), want, rtol=2e-6,
                                           atol=2e-6, err_msg=f"{name} rank {rank} of {n} "
                                                              f"({out['mode']})")
        for name, want in exact.items():
            assert outs[0][name] == want, (name, rank, n)
        assert outs[1]["send_in_graph"].startswith("For send: it runs in PyNative mode only")


# ------------------------------------------------------------------ one process, no init() -------
X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_rooted_collectives_on_one_rank(mode):
    ms.set_context(mode=mode)
    try:
        class Net(ms.nn.Cell):
            def construct(self, x):
                return (cf.reduce(x, 0), cf.gather_into_tensor(x), cf.scatter_tensor(x, 0))
        for t in Net()(ms.Tensor(X)):
            np.testing.assert_array_equal(t.asnumpy(), X)
        g = ms.grad(lambda x: (cf.reduce(x, 0, "max") * 3).sum())(ms.Tensor(X))
        np.testing.assert_array_equal(g.asnumpy(), np.full((2, 3), 3, np.float32))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_uneven_all_to_all_on_one_rank():
    (t,), handle = cf.all_to_all_with_output_shape([(3, 2)], [ms.Tensor(X)])
    assert handle is None
    np.testing.assert_array_equal(t.asnumpy(), X.reshape(3, 2))
    t, handle = cf.all_to_all_single_with_output_shape((2, 3), ms.Tensor(X), async_op=True)
    handle.wait()
    np.testing.assert_array_equal(t.asnumpy(), X)
    t, _ = cf.all_to_all_single_with_output_shape((0, 3), ms.Tensor(np.zeros((0, 3),
                                                                              np.float32)))
    assert t.shape == ()                     # no element received: 0-d, as in MindSpore
    out = ms.Tensor(np.zeros((2, 3), np.float32))
    assert cf.all_to_all_v_c(out, ms.Tensor(X), [2]) is None
    np.testing.assert_array_equal(out.asnumpy(), X)


def test_point_to_point_needs_init_and_checks_arguments():
    x = ms.Tensor(X)
    for call in (lambda: cf.send(x, 0), lambda: cf.recv(x, 0), lambda: cf.isend(x),
                 lambda: cf.irecv(x), lambda: cf.batch_isend_irecv([cf.P2POp("isend", x, 0)])):
        with pytest.raises(RuntimeError, match="call mindspore.communication.init\\(\\)"):
            call()
    with pytest.raises(TypeError, match="For send, the input tensor must be tensor"):
        cf.send(X)
    with pytest.raises(TypeError, match="For recv, the src must be int"):
        cf.recv(x, 0.0)
    with pytest.raises(ValueError, match="Expected ``op`` to be of type ``isend`` or `irecv``"):
        cf.P2POp("send", x, 0)
    with pytest.raises(NotImplementedError, match="``tag`` not support yet"):
        cf.P2POp("isend", x, 0, tag=1)
    with pytest.raises(TypeError, match="peer must be type of int"):
        cf.P2POp("isend", x, "1")
    with pytest.raises(TypeError, match="p2p_op_list can not be empty list"):
        cf.batch_isend_irecv([])
    with pytest.raises(TypeError, match="send_count_matrix must be square matrix"):
        cf.all_to_all_v_c(x, x, [1, 1])
    with pytest.raises(TypeError, match="For reduce, the input op value must be one of"):
        cf.reduce(x, 0, "avg")


def test_rooted_primitives_check_their_arguments():
    from minispore.ops.collective_rooted import CollectiveGather, CollectiveScatter, Reduce
    x = ms.Tensor(X)
    np.testing.assert_array_equal(Reduce(0, "max")(x).asnumpy(), X)
    assert CollectiveGather(0).rank_size == 1 and CollectiveScatter().src_rank == 0
    with pytest.raises(ValueError, match="'dest_rank' must be a rank of group "
                                         "'hccl_world_group' in \\[0, 1\\), but got 1"):
        Reduce(1)
    with pytest.raises(TypeError, match="'src_rank' must be an int"):
        CollectiveScatter("0")
    with pytest.raises(ValueError, match="must be one of 'sum', 'max', 'min', 'prod'"):
        Reduce(0, "mean")
    with pytest.raises(ShapeError, match="at least one dimension"):
        CollectiveScatter()(ms.Tensor(np.float32(1.0)))
