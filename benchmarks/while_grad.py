"""Gradient through a tensor-conditioned `while`: time per call against the trip count.

    python benchmarks/while_grad.py [--quick]

The loop carries a (3,) float state and an int counter for n trips (n is a tensor, so one
compiled graph serves every n); `ms.value_and_grad` over it in PyNative (the tape: O(n)) and in
GRAPH_MODE at O0 (kernel by kernel) and O2 (the native program). Graph mode's While gradient keeps
checkpoints in fixed-slot buffers (core/graph/cf_grad.py), so the cost of one more trip stays
flat while n <= C^2 (C = 64 slots for a state this small); it used to recompute every state from
the first, O(n^2). The last columns are the cost of one more trip between successive n (a fixed
per-call cost drops out): equal columns mean linear growth. minispore only: the question is how
the cost grows, not a comparison with a peer.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _harness as H  # noqa: E402
import minispore as ms  # noqa: E402
from minispore import Parameter, Tensor, nn, ops  # noqa: E402


class CountedWhile(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([0.9, 1.05, 0.5], np.float32)), name="w")

    def construct(self, x, n):
        i = ops.zeros((), ms.int32)
        y = x
        while i < n:
            y = ops.tanh(y * self.w) + 0.1 * x
            i = i + 1
        return (y * y).sum()


def per_call(f, x, n: int, repeats: int) -> float:
    f(x, Tensor(np.int32(n)))                                  # compile / warm
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f(x, Tensor(np.int32(n)))[0].asnumpy()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer trip counts and repeats")
    args = ap.parse_args()
    trips = (10, 100, 1000) if args.quick else (10, 100, 1000, 4000)
    repeats = 3 if args.quick else 7
    x = Tensor(np.array([0.3, -0.7, 1.2], np.float32))
    rows = []
    for label, mode, level in (("PyNative (tape)", ms.PYNATIVE_MODE, "O0"),
                               ("Graph O0", ms.GRAPH_MODE, "O0"),
                               ("Graph O2 (native)", ms.GRAPH_MODE, "O2")):
        ms.set_context(mode=mode, jit_level=level, device_target="CPU")
        net = CountedWhile()
        f = ms.value_and_grad(net, 0, net.trainable_params())
        ts = [per_call(f, x, n, repeats) for n in trips]
        marginal = [(b - a) / (nb - na) * 1e6 for a, b, na, nb in
                     zip(ts, ts[1:], trips, trips[1:])]
        rows.append([label] + [H.fmt_num(t * 1e3) for t in ts]
                    + [H.fmt_num(m) for m in marginal])
    H.print_table(["mode"] + [f"n={n} ms" for n in trips]
                  + [f"µs/trip {a}->{b}" for a, b in zip(trips, trips[1:])], rows,
                  "value_and_grad through a tensor while, time per call (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
