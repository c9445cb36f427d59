"""Op-database entries (see opdb.py) for core/ops/collective.py and collective_p2p.py.

The op database runs in one process, whose world before init() is a group of one rank: there
each collective gives what MPI gives for one rank (the reduction of one contribution is that
contribution, a gather of one is its input, AlltoAll with split_count 1 keeps it), in PyNative
and in graphs (the host callback is a graph node), with the gradients of the declared bprops
(AllReduce(max/min/prod)'s formulas included). The values over 2 and 3 ranks are checked by
tests/distributed/, which launches MPI jobs."""
from __future__ import annotations

from minispore.core import dtype as dt

from helpers import rand_default, rand_nonzero

f16, f32, f64, i32 = dt.float16, dt.float32, dt.float64, dt.int32

SHAPES = ((2, 3), (5,), (0, 3), (1, 2, 2))


def _reduce_samples(Sample, ops=("sum", "max", "min", "prod")):
    def gen(rng, dtype):
        out = []
        for s in SHAPES:
            for op in ops:
                x = (rand_nonzero if op == "prod" else rand_default)(rng, s, dtype)
                out.append(Sample((x,), {"reduce_op": op}, f"x{s} op={op}"))
        return out
    return gen


def _all_reduce_samples(Sample):
    base = _reduce_samples(Sample)
    avg = _reduce_samples(Sample, ops=("avg",))         # ReduceOp.AVG: floating point only

    def gen(rng, dtype):
        return base(rng, dtype) + (avg(rng, dtype) if dtype.is_float else []) + [
            Sample((rand_default(rng, (), dtype),), {"reduce_op": "sum"}, "x() op=sum")]
    return gen


def _plain_samples(Sample, attrs=({},)):
    def gen(rng, dtype):
        return [Sample((rand_default(rng, s, dtype),), dict(a), f"x{s} {a}".strip())
                for s in SHAPES for a in attrs]
    return gen


def _broadcast_samples(Sample):
    def gen(rng, dtype):
        return [Sample((rand_default(rng, s, dtype),), {"root_rank": 0}, f"x{s} root 0")
                for s in SHAPES + ((),)]
    return gen


def _all_to_all_samples(Sample):
    def gen(rng, dtype):
        out = []
        for s, sd, cd in (((2, 3), 0, 1), ((2, 3), 1, 0), ((4,), 0, 0), ((1, 2, 2), -1, 1),
                          ((0, 3), 1, 0)):
            out.append(Sample((rand_default(rng, s, dtype),),
                              {"split_count": 1, "split_dim": sd, "concat_dim": cd},
                              f"x{s} split_dim={sd} concat_dim={cd}"))
        return out
    return gen


def _rooted_samples(Sample, root, ops=(None,)):
    def gen(rng, dtype):
        out = []
        for s in SHAPES:
            for op in ops:
                a = {root: 0} if op is None else {root: 0, "reduce_op": op}
                x = (rand_nonzero if op == "prod" else rand_default)(rng, s, dtype)
                out.append(Sample((x,), a, f"x{s} {a}"))
        return out
    return gen


def collective_cases(OpCase, Sample):
    return [
        OpCase("all_reduce", _all_reduce_samples(Sample), dtypes=(f16, f32, f64, i32)),
        OpCase("all_gather", _plain_samples(Sample), dtypes=(f16, f32, f64, i32)),
        # MindSpore defines ReduceScatter's gradient for ReduceOp.SUM only (the others raise
        # its RuntimeError), and the op database takes every sample's gradient: max/min/prod
        # are checked by tests/distributed/ (values over 1, 2 and 3 ranks, and the error)
        OpCase("reduce_scatter", _reduce_samples(Sample, ops=("sum",)),
               dtypes=(f32, f64, i32)),
        OpCase("collective_broadcast", _broadcast_samples(Sample), dtypes=(f16, f32, f64, i32)),
        OpCase("all_to_all", _all_to_all_samples(Sample), dtypes=(f32, f64, i32)),
        # rooted collectives (collective_p2p.py): over one rank the root is rank 0 and gets the
        # input back; the other ranks' [1]-shaped result is checked by tests/distributed/
        OpCase("reduce", _rooted_samples(Sample, "dest_rank", ("sum", "max", "min", "prod")),
               dtypes=(f16, f32, f64, i32)),
        OpCase("collective_gather", _rooted_samples(Sample, "dest_rank"),
               dtypes=(f16, f32, f64, i32)),
        OpCase("collective_scatter", _rooted_samples(Sample, "src_rank"),
               dtypes=(f16, f32, f64, i32)),
    ]
