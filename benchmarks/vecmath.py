"""Throughput of minispore's vectorisable math (`minispore.backends.cpu.vecmath`) in numba loops.

Usage (from the repository root)::

    python benchmarks/vecmath.py [--quick] [--n N] [--only exp,tanh,...]

For each function, on N float32 elements (default 4M = 16 MiB per array), effective GB/s counting
8 bytes per element (4 read + 4 written) for:
  * `numba vecmath`   -- `@njit` loop `out[i] = vexp(x[i])` (one thread);
  * `numba vecmath ||` -- the same loop with `prange` (all numba threads);
  * `numba np.*`      -- the loop calling `np.exp` / `math.erf` (scalar libm, one thread);
  * `numpy`           -- the ufunc with `out=` (scipy.special.erf for erf; sigmoid and softplus
                         as short ufunc chains).
Then the fused chain `tanh(x*1.5+0.3)*sigmoid(x) - x*x/3` (perf-anchors section 3) with vecmath
and np.* under prange, vecmath on one thread, and numpy; and, measured in the same run, a plain
copy (numba prange and np.copyto) as the memory-bandwidth reference.  Timing: `_harness.measure`
(perf_counter around n calls, n chosen so a repeat lasts ~target_s; median over repeats; the first
call -- compilation -- is reported apart as `first s`).  max err: max |y - f(float64 x)| over the
input (relative for exp; absolute for the rest).  foreign CPU: share of the CPUs that
other processes used while a row was timed (the machine may be shared; rows above 25% get '!').
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
from numba import get_num_threads, njit, prange

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _harness as H  # noqa: E402
from minispore.backends.cpu import vecmath as vm  # noqa: E402

F = "np.float32"
# name: (vecmath expression, numba np.* expression, numpy function(x, out), input range)
FUNCS = {
    "exp": ("vexp(x)", "np.exp(x)", lambda x, o: np.exp(x, out=o), (-80, 80)),
    "log": ("vlog(x)", "np.log(x)", lambda x, o: np.log(x, out=o), (1e-6, 1e6)),
    "log1p": ("vlog1p(x)", "np.log1p(x)", lambda x, o: np.log1p(x, out=o), (-0.9, 100)),
    "tanh": ("vtanh(x)", "np.tanh(x)", lambda x, o: np.tanh(x, out=o), (-10, 10)),
    "sigmoid": ("vsigmoid(x)", f"{F}(1) / ({F}(1) + np.exp(-x))", lambda x, o: np.reciprocal(
        np.add(np.exp(np.negative(x, out=o), out=o), 1, out=o), out=o), (-20, 20)),
    "softplus": ("vsoftplus(x)", f"max(x, {F}(0)) + np.log1p(np.exp(-abs(x)))",
                 lambda x, o: np.logaddexp(x, 0, out=o), (-20, 20)),
    "erf": ("verf(x)", "math.erf(x)", None, (-4, 4)),
    "sin": ("vsin(x)", "np.sin(x)", lambda x, o: np.sin(x, out=o), (-100, 100)),
    "cos": ("vcos(x)", "np.cos(x)", lambda x, o: np.cos(x, out=o), (-100, 100)),
    "sqrt": (None, "np.sqrt(x)", lambda x, o: np.sqrt(x, out=o), (0, 100)),
}
FUSED_V = f"vtanh(x * {F}(1.5) + {F}(0.3)) * vsigmoid(x) - x * x / {F}(3)"
FUSED_N = f"np.tanh(x * {F}(1.5) + {F}(0.3)) / ({F}(1) + np.exp(-x)) - x * x / {F}(3)"
REF = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "tanh": np.tanh, "sin": np.sin,
       "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "softplus": lambda x: np.logaddexp(x, 0),
       "erf": np.vectorize(math.erf), "cos": np.cos, "sqrt": np.sqrt,
       "fused": lambda x: np.tanh(x * 1.5 + 0.3) / (1 + np.exp(-x)) - x * x / 3}


def kernel(expr: str, parallel: bool):
    ns = dict(vars(vm), np=np, math=math, prange=prange)
    rng = "prange" if parallel else "range"
    src = (f"def k(a, out):\n    for i in {rng}(a.shape[0]):\n"
           f"        x = a[i]\n        out[i] = {expr}\n")
    exec(src, ns)
    return njit(error_model="numpy", parallel=parallel, nogil=True)(ns["k"])


def bench(call, nbytes, target_s, repeats, quiet_s):
    """(median GB/s, min, max, first-call s, foreign CPU share while measuring)."""
    t0 = time.perf_counter()
    call()
    first = time.perf_counter() - t0

    def run(n):
        for _ in range(n):
            call()
    H.wait_for_quiet(quiet_s)
    b0, c0, w0 = H._busy_jiffies(), time.process_time(), time.perf_counter()
    r = H.measure(run, target_s=target_s, repeats=repeats)
    b1, c1, w1 = H._busy_jiffies(), time.process_time(), time.perf_counter()
    foreign = None
    if b0 is not None:
        busy = (b1 - b0) / os.sysconf("SC_CLK_TCK") - (c1 - c0)
        foreign = max(0.0, busy / ((w1 - w0) * (os.cpu_count() or 1)))
    med, lo, hi = H.summarize(r["samples"])
    return nbytes / med / 1e9, nbytes / hi / 1e9, nbytes / lo / 1e9, first, foreign


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter repeats (~1 min)")
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--only", default="", help="comma-separated subset of: " + ",".join(FUNCS))
    a = ap.parse_args()
    target_s, repeats, quiet_s = (0.1, 3, 3.0) if a.quick else (0.3, 7, 20.0)
    n, nbytes = a.n, 8 * a.n
    rng = np.random.default_rng(0)
    out = np.empty(n, np.float32)
    rows = []

    def add(label, variant, call, x, ref):
        gbs, lo, hi, first, foreign = bench(call, nbytes, target_s, repeats, quiet_s)
        with np.errstate(all="ignore"):
            r = ref(x.astype(np.float64))
            err = np.nanmax(np.abs(out - r) / (np.abs(r) if label == "exp" else 1))
        flag = "" if foreign is None or foreign <= 0.25 else " !"
        load = "?" if foreign is None else f"{100 * foreign:.0f}%{flag}"
        rows.append([label, variant, f"{gbs:.2f} ({lo:.2f}\u2013{hi:.2f})", f"{err:.1e}",
                     f"{first:.2f}", load])

    x = rng.standard_normal(n, dtype=np.float32)
    copy = kernel("x", True)
    add("copy", "numba prange copy", lambda: copy(x, out), x, lambda v: v)
    add("copy", "np.copyto", lambda: np.copyto(out, x), x, lambda v: v)
    only = [s for s in a.only.split(",") if s] or list(FUNCS)
    for name in only:
        vexpr, nexpr, npf, (lo_, hi_) = FUNCS[name]
        x = rng.uniform(lo_, hi_, n).astype(np.float32)
        if vexpr:
            kv, kp = kernel(vexpr, False), kernel(vexpr, True)
            add(name, "numba vecmath", lambda: kv(x, out), x, REF[name])
            add(name, "numba vecmath ||", lambda: kp(x, out), x, REF[name])
        kn = kernel(nexpr, False)
        label = "numba np.*" if name != "erf" else "numba math.erf"
        add(name, label, lambda: kn(x, out), x, REF[name])
        if npf is not None:
            add(name, "numpy out=", lambda: npf(x, out), x, REF[name])
        else:
            import scipy.special as sp
            add(name, "scipy.special.erf out=", lambda: sp.erf(x, out=out), x, REF[name])
    x = rng.standard_normal(n, dtype=np.float32)
    fv, fn, fs = kernel(FUSED_V, True), kernel(FUSED_N, True), kernel(FUSED_V, False)
    add("fused", "numba vecmath ||", lambda: fv(x, out), x, REF["fused"])
    add("fused", "numba np.* ||", lambda: fn(x, out), x, REF["fused"])
    add("fused", "numba vecmath", lambda: fs(x, out), x, REF["fused"])

    def numpy_fused():
        t = np.tanh(x * np.float32(1.5) + np.float32(0.3))
        np.divide(t, 1 + np.exp(-x), out=out)
        out[...] -= x * x / np.float32(3)
    add("fused", "numpy", numpy_fused, x, REF["fused"])
    head = ["function", "implementation", "GB/s median (min\u2013max)", "max err", "first s",
            "foreign CPU"]
    H.print_table(head, rows, title=f"float32, N = {n:,} ({nbytes // 2**20} MiB moved per call), "
                                    f"numba threads {get_num_threads()}, 8 B/elem; '!': other "
                                    "processes used > 25% of the CPUs meanwhile")


if __name__ == "__main__":
    main()
