"""The row family, written once: softmax and log_softmax along the middle axis of an
(outer, d, inner) view, the sparse softmax cross-entropy and its fused gradient over (rows,
classes) logits, and logsumexp over any axes. kernels_row.py renders them as the eager numba
kernels, native_rows.py as the native sink's LLVM lowerings.

Every row is accumulated in float64: the max first (numba's max, so a NaN entry after the first
leaves the running max alone; logsumexp's max takes a NaN), then exp(x - max) summed in order
(softmax and the cross-entropy keep the row's exps in a float64 scratch row, summed in a second
loop: the exp loop has no loop-carried sum and vectorises), then the outputs. Non-finite rows
follow the ops' numpy references: softmax's x - max is NaN where the max is +inf or every entry
-inf; logsumexp shifts by the max only where it is finite (else by 0), so +inf gives inf, NaN
NaN, a row of -inf (or an empty one) -inf; a label outside [0, classes) gives a loss of 0 and a
gradient row of 0.
"""
from __future__ import annotations

from ....core import scalar_expr as E
from .builder import definition, f64, i64, maximum, product


def _row_max_and_exps(b, x, index, d, exps):
    """The row's float64 max (numba's max) and its exps exp(x - max) in `exps`, then their sum
    in order; index(k) is the row's k-th element of x."""
    m = b.var("m", float("-inf"))
    with b.loop(d, "k") as k:
        b.set(m, maximum(m, f64(x[index(k)])))
    with b.loop(d, "k") as k:
        b.store(exps, k, E.exp(f64(x[index(k)]) - m))
    s = b.var("s", 0.0)
    with b.loop(d, "k") as k:
        b.set(s, s + exps[k])
    return m, s


@definition
def softmax(b, log: bool):
    """x: (outer, d, inner); softmax (log=False: exps / sum) or log_softmax (x - max - log(sum))
    along axis 1."""
    x = b.input("x", 3)
    outer, d, inner = x.dims
    out = b.output("out", (outer, d, inner), like=x)
    exps = b.scratch("exps", d)
    with b.loop(outer, "r") as r, b.loop(inner, "c") as c:
        m, s = _row_max_and_exps(b, x, lambda k: (r, k, c), d, exps)
        if log:
            ls = b.var("ls", E.log(s))
            with b.loop(d, "k") as k:
                b.store(out, (r, k, c), f64(x[r, k, c]) - m - ls)
        else:
            with b.loop(d, "k") as k:
                b.store(out, (r, k, c), exps[k] / s)


def _sce_row(b, x, labels, r, C, exps):
    """(max, log(sum of exps), label, label in [0, C)) of row r."""
    m, s = _row_max_and_exps(b, x, lambda k: (r, k), C, exps)
    ls = b.var("ls", E.log(s))
    lab = b.var("lab", i64(labels[r]))
    valid = b.var("valid", E.logical_and(lab >= 0, lab < C))
    return m, ls, lab, valid


@definition
def sparse_softmax_cross_entropy(b):
    """x: (R, C) logits, labels: (R,) -> (R,) losses log(sum(exp(x - max))) + max - x[label],
    0 where the label is outside [0, C) (x is then read at class 0, never outside the row)."""
    x, labels = b.input("x", 2), b.input("labels", 1)
    R, C = x.dims
    out = b.output("out", (R,), like=x)
    exps = b.scratch("exps", C)
    with b.loop(R, "r") as r:
        m, ls, lab, valid = _sce_row(b, x, labels, r, C, exps)
        safe = E.where(valid, lab, 0)
        b.store(out, r, E.where(valid, ls + m - f64(x[r, safe]), 0.0))


@definition
def sparse_softmax_cross_entropy_grad(b):
    """x: (R, C) logits, labels: (R,), dout: (R,) -> (softmax(x) * valid - one_hot(labels)) *
    dout[:, None], the softmax computed as exp(x - max - log(sum))."""
    x, labels, dout = b.input("x", 2), b.input("labels", 1), b.input("dout", 1)
    R, C = x.dims
    out = b.output("out", (R, C), like=x)
    exps = b.scratch("exps", C)
    with b.loop(R, "r") as r:
        m, ls, lab, valid = _sce_row(b, x, labels, r, C, exps)
        with b.loop(C, "k") as k:
            p = E.where(valid, E.exp(f64(x[r, k]) - m - ls), 0.0)
            b.store(out, (r, k), (p - E.where(k.eq(lab), 1.0, 0.0)) * f64(dout[r]))


@definition
def logsumexp(b, rank: int, axes: tuple):
    """x of `rank` dims reduced over `axes` -> the kept entries, flat in row-major order:
    log(sum(exp(x - shift))) + shift, shift the max (NaN wins) where finite, else 0."""
    x = b.input("x", rank)
    kept = [k for k in range(rank) if k not in axes]
    nk = product(x.dims[k] for k in kept)
    out = b.output("out", (nk,), like=x)
    shift, acc = b.scratch("shift", nk), b.scratch("acc", nk)
    with b.loop(nk, "q") as q:
        b.store(shift, q, float("-inf"))
        b.store(acc, q, 0.0)

    def over_x(body):
        idx = []

        def nest(level):
            if level == rank:
                slot = None                    # the kept indices, row-major
                for k in kept:
                    slot = idx[k] if slot is None else slot * x.dims[k] + idx[k]
                body(f64(x[tuple(idx)]), E.lift(0) if slot is None else slot)
                return
            with b.loop(x.dims[level], f"i{level}") as i:
                idx.append(i)
                nest(level + 1)
                idx.pop()
        nest(0)

    def take_max(v, slot):
        m = shift[slot]
        b.store(shift, slot, E.where(E.logical_or(v > m, E.isnan(v)), v, m))
    over_x(take_max)
    with b.loop(nk, "q") as q:
        m = shift[q]
        b.store(shift, q, E.where(E.logical_and(m > float("-inf"), m < float("inf")), m, 0.0))
    over_x(lambda v, slot: b.store(acc, slot, acc[slot] + E.exp(v - shift[slot])))
    with b.loop(nk, "q") as q:
        b.store(out, q, E.log(acc[q]) + shift[q])
