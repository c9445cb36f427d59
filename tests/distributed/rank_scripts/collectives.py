"""Rank script: every collective (Primitive classes and comm_func) in PyNative and GRAPH_MODE,
with gradients, on inputs that tests/distributed/test_dist_collectives.py recomputes for
every rank with numpy; prints one `RESULT <json>` line per mode."""
import json

import numpy as np

import minispore as ms
from minispore import nn, ops
from minispore.communication import comm_func as cf
from minispore.communication import get_group_size, get_rank, init

init()
rank, n = get_rank(), get_group_size()


def data(r, shape, scale=1.0):
    """Rank r's input: distinct across ranks and elements (the test builds the same)."""
    k = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return ((np.sin(k * 1.7 + r * 2.3) * 3 + r + 0.25) * scale).astype(np.float32)


x = ms.Tensor(data(rank, (2 * n, 3)))
w = ms.Tensor(data(rank + 10, (2 * n, 3)))
wg = ms.Tensor(data(rank + 20, (2 * n * n, 3)))
v = ms.Tensor(data(rank + 30, (2, 3)))
u = ms.Tensor(data(rank + 40, (2, 3 * n)))
xp = ms.Tensor(data(rank, (2 * n, 3), 0.3))


class Forward(nn.Cell):
    def __init__(self):
        super().__init__()
        self.sum = ops.AllReduce()
        self.max = ops.AllReduce(ops.ReduceOp.MAX)
        self.min = ops.AllReduce(op=ops.ReduceOp.MIN)
        self.prod = ops.AllReduce(ops.ReduceOp.PROD)
        self.gather = ops.AllGather()
        self.scatter = ops.ReduceScatter(ops.ReduceOp.SUM)
        self.scatter_max = ops.ReduceScatter(ops.ReduceOp.MAX)
        self.bcast = ops.Broadcast(1)
        self.a2a = ops.AlltoAll(n, 0, 1)
        self.avg = ops.AllReduce(ops.ReduceOp.AVG)
        self.scatter_avg = ops.ReduceScatter(ops.ReduceOp.AVG)

    def construct(self, x, xp):
        return (self.sum(x), self.max(x), self.min(x), self.prod(xp), self.gather(x),
                self.scatter(x), self.scatter_max(x), self.bcast((x,))[0], self.a2a(x),
                self.avg(x), self.scatter_avg(x))


NAMES = ("sum", "max", "min", "prod", "gather", "scatter", "scatter_max", "bcast", "a2a",
         "avg", "scatter_avg")


def g_sum(x):
    return (ops.AllReduce()(x) * w).sum()


def g_max(x):
    return (ops.AllReduce(ops.ReduceOp.MAX)(x) * w).sum()


def g_avg(x):
    return (ops.AllReduce(ops.ReduceOp.AVG)(x) * w).sum()


def g_prod(x):
    return (ops.AllReduce(ops.ReduceOp.PROD)(x) * w).sum()


def g_gather(x):
    return (ops.AllGather()(x) * wg).sum()


def g_scatter(x):
    return (ops.ReduceScatter()(x) * v).sum()


def g_bcast(x):
    return (ops.Broadcast(1)((x,))[0] * w).sum()


def g_a2a(x):
    return (ops.AlltoAll(n, 0, 1)(x) * u).sum()


GRADS = {"g_sum": (g_sum, x), "g_max": (g_max, x), "g_prod": (g_prod, xp),
         "g_gather": (g_gather, x), "g_scatter": (g_scatter, x), "g_bcast": (g_bcast, x),
         "g_a2a": (g_a2a, x), "g_avg": (g_avg, x)}

for mode, label in ((ms.PYNATIVE_MODE, "pynative"), (ms.GRAPH_MODE, "graph")):
    ms.set_context(mode=mode)
    out = {"mode": label, "rank": rank, "size": n}
    for name, t in zip(NAMES, Forward()(x, xp)):
        out[name] = t.asnumpy().tolist()
    for name, (fn, arg) in GRADS.items():
        out[name] = ms.grad(fn)(arg).asnumpy().tolist()
    if label == "pynative":
        t, handle = cf.all_reduce(x)
        out["cf_all_reduce"] = [t.asnumpy().tolist(), handle is None]
        t, handle = cf.all_reduce(x, ops.ReduceOp.MAX, async_op=True)
        handle.wait()
        out["cf_all_reduce_max"] = t.asnumpy().tolist()
        out["cf_all_gather"] = cf.all_gather_into_tensor(x)[0].asnumpy().tolist()
        out["cf_reduce_scatter"] = cf.reduce_scatter_tensor(x)[0].asnumpy().tolist()
        out["cf_broadcast"] = cf.broadcast(x, src=n - 1).asnumpy().tolist()
        out["cf_barrier"] = cf.barrier()
        try:                                   # every rank passes a different shape
            ops.AllReduce()(ms.Tensor(np.zeros(rank + 1, np.float32)))
        except ValueError as e:
            out["mismatch"] = str(e)
    print("RESULT " + json.dumps(out), flush=True)
