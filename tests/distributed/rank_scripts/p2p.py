"""Rank script: comm_func's point-to-point functions (send/recv, isend/irecv, P2POp with
batch_isend_irecv) in a ring, the rooted collectives (reduce, gather_into_tensor,
scatter_tensor, with world rank 1 as root) in PyNative and GRAPH_MODE with their gradients,
and the uneven all-to-alls, on inputs that tests/distributed/test_dist_p2p.py recomputes with
numpy; prints one `RESULT <json>` line per mode."""
import json

import numpy as np

import minispore as ms
from minispore import nn
from minispore.communication import comm_func as cf
from minispore.communication import get_group_size, get_rank, init
from minispore.ops.collective_rooted import CollectiveGather, CollectiveScatter, Reduce

init()
rank, n = get_rank(), get_group_size()
nxt, prv = (rank + 1) % n, (rank - 1) % n
ROOT = 1


def data(r, shape):
    """Rank r's input: distinct across ranks and elements (the test builds the same)."""
    k = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return (np.sin(k * 1.3 + r * 2.1) * 2 + r).astype(np.float32)


x = ms.Tensor(data(rank, (2 * n, 3)))
w = ms.Tensor(data(rank + 10, (2 * n, 3) if rank == ROOT else (1,)))
wg = ms.Tensor(data(rank + 20, (2 * n * n, 3) if rank == ROOT else (1,)))
v = ms.Tensor(data(rank + 30, (2, 3)))


def tolist(t):
    return t.asnumpy().tolist()


class Rooted(nn.Cell):
    def __init__(self):
        super().__init__()
        self.reduce = Reduce(ROOT)
        self.gather = CollectiveGather(ROOT)
        self.scatter = CollectiveScatter(src_rank=ROOT)

    def construct(self, x):
        return (cf.reduce(x, ROOT), cf.reduce(x, ROOT, "max"), cf.gather_into_tensor(x, ROOT),
                cf.scatter_tensor(x, ROOT), self.reduce(x), self.gather(x), self.scatter(x))


def g_reduce(x):
    return (cf.reduce(x, ROOT) * w).sum()


def g_gather(x):
    return (cf.gather_into_tensor(x, ROOT) * wg).sum()


def g_scatter(x):
    return (cf.scatter_tensor(x, ROOT) * v).sum()


for mode, label in ((ms.PYNATIVE_MODE, "pynative"), (ms.GRAPH_MODE, "graph")):
    ms.set_context(mode=mode)
    out = {"mode": label, "rank": rank, "size": n}
    for name, t in zip(("reduce", "reduce_max", "gather", "scatter", "p_reduce", "p_gather",
                             "p_scatter"), Rooted()(x)):
        out[name] = tolist(t)
    for name, fn in (("g_reduce", g_reduce), ("g_gather", g_gather), ("g_scatter", g_scatter)):
        out[name] = tolist(ms.grad(fn)(x))
    if label == "graph":
        class SendInGraph(nn.Cell):
            def construct(self, x):
                cf.send(x, nxt)
                return x
        try:
            SendInGraph()(x)
        except NotImplementedError as e:
            out["send_in_graph"] = str(e)
        print("RESULT " + json.dumps(out), flush=True)
        continue
    # a ring: even ranks send first, odd ranks receive first (blocking send/recv)
    mine = ms.Tensor(data(rank + 40, (2, 2)))
    if rank % 2 == 0:
        out["send"] = cf.send(mine, nxt, tag=3)
        got = cf.recv(ms.Tensor(np.zeros((2, 2), np.float32)), prv, tag=3)
    else:
        got = cf.recv(ms.Tensor(np.zeros((2, 2), np.float32)), prv, tag=3)
        out["send"] = cf.send(mine, nxt, tag=3)
    out["recv"] = tolist(got)
    # every rank posts irecv before isend: only non-blocking calls get through this
    ints = ms.Tensor(np.arange(3, dtype=np.int32) + 100 * rank)
    got, h_recv = cf.irecv(ms.Tensor(np.zeros(3, np.int32)), prv)
    h_send = cf.isend(ints, nxt)
    h_send.wait()
    h_recv.wait()
    out["irecv"] = [tolist(got), str(got.dtype), type(h_recv).__name__]
    ops = [cf.P2POp("isend", ms.Tensor(np.float32(rank + 1)), nxt),
           cf.P2POp(cf.irecv, (), prv, recv_dtype=ms.float32),
           cf.P2POp("irecv", ms.Tensor(np.zeros((1, 2), np.float16)), nxt),
           cf.P2POp(cf.isend, ms.Tensor(np.full((1, 2), rank, np.float16)), prv)]
    res = cf.batch_isend_irecv(ops)
    out["batch"] = [[tolist(t), list(t.shape), str(t.dtype)] for t in res]
    # all_to_all_with_output_shape: rank r sends r + j + 1 values to rank j
    sends = [ms.Tensor(np.full(rank + j + 1, 10 * rank + j, np.float32)) for j in range(n)]
    shapes = [(j + rank + 1,) for j in range(n)]
    res, handle = cf.all_to_all_with_output_shape(shapes, sends)
    out["a2a_list"] = [tolist(t) for t in res] + [handle is None]
    # all_to_all_single_with_output_shape: uneven rows (rank r sends j + 1 rows to rank j)
    rows = np.arange(sum(j + 1 for j in range(n)) * 2, dtype=np.float32).reshape(-1, 2)
    res, handle = cf.all_to_all_single_with_output_shape(
        (n * (rank + 1), 2), ms.Tensor(rows + 1000 * rank), [rank + 1] * n,
        [j + 1 for j in range(n)], async_op=True)
    handle.wait()
    out["a2a_single"] = tolist(res)
    even, _ = cf.all_to_all_single_with_output_shape((2 * n, 3), x)
    out["a2a_single_even"] = tolist(even)
    # all_to_all_v_c: rank i sends i + j + 1 rows to rank j (the matrix every rank knows)
    matrix = [i + j + 1 for i in range(n) for j in range(n)]
    sent = np.arange(sum(rank + j + 1 for j in range(n)), dtype=np.float32) + 100 * rank
    output = ms.Tensor(np.zeros(sum(i + rank + 1 for i in range(n)), np.float32))
    out["a2a_v_c_handle"] = cf.all_to_all_v_c(output, ms.Tensor(sent), matrix) is None
    out["a2a_v_c"] = tolist(output)
    print("RESULT " + json.dumps(out), flush=True)
