"""Sink lowerings of the row ops (softmax, log_softmax along an axis; logsumexp over axes) as
generated numba loops in float64, the loops native_rows.py renders in LLVM IR (both sinks give
the same bits). Non-finite rows follow the ops' numpy references: softmax's x - max is NaN
where the max is +inf or every entry -inf; logsumexp shifts by the max only where it is finite
(else by 0), so +inf gives inf, NaN NaN, a row of -inf -inf. Merged into sink._LOWER."""
from __future__ import annotations

from ...core import dtype as dt
from ...core.shape import normalize_axes, size_of


def _np(d):
    from .sink import _np as np_name
    return np_name(d)


def _softmax(log: bool):
    def lower(e, n, a, ind):
        x, out = n.inputs[0], n.outputs[0]
        if not x.shape:                            # one element: 1 (softmax) or 0 (log)
            return e.fill(e.out(out), (), out.dtype, f"{_np(out.dtype)}({0 if log else 1})",
                          ind)
        axis = a["axis"] % len(x.shape)
        outer, d, inner = size_of(x.shape[:axis]), x.shape[axis], size_of(x.shape[axis + 1:])
        src, o, final = e.fresh("sm"), e.fresh("sm"), e.out(out)
        e.line(ind, f"{src} = {e.name(x)}.reshape(({outer}, {d}, {inner}))")
        e.line(ind, f"{o} = np.empty(({outer}, {d}, {inner}), {_np(out.dtype)})")
        e.line(ind, f"for r in range({outer}):")
        e.line(ind + 1, f"for c in range({inner}):")
        b = ind + 2
        e.line(b, "m = -np.inf")
        e.line(b, f"for k in range({d}):")
        e.line(b + 1, f"m = max(m, {src}[r, k, c])")
        e.line(b, "s = 0.0")
        e.line(b, f"for k in range({d}):")
        e.line(b + 1, f"s += vexp({src}[r, k, c] - m)")
        if log:
            e.line(b, "ls = vlog(s)")
            e.line(b, f"for k in range({d}):")
            e.line(b + 1, f"{o}[r, k, c] = {src}[r, k, c] - m - ls")
        else:
            e.line(b, f"for k in range({d}):")
            e.line(b + 1, f"{o}[r, k, c] = vexp({src}[r, k, c] - m) / s")
        e.line(ind, f"{final} = {o}.reshape({out.shape!r})")
    return lower


def _logsumexp(e, n, a, ind):
    """max over the axes (NaN wins), then log(sum(exp(x - s))) + s with s the max where it is
    finite, else 0 (the reference's shift): a +inf gives inf, a NaN NaN, a row of -inf -inf."""
    x, out = n.inputs[0], n.outputs[0]
    if not x.shape:
        from ...core import scalar_expr as E
        return e.loop(n, E.arg(0), ind)
    axes = normalize_axes("logsumexp", a["axis"], len(x.shape))
    keep_shape = tuple(1 if k in axes else d for k, d in enumerate(x.shape))
    m, acc = e.fresh("lm"), e.fresh("ls")
    e.fill(m, keep_shape, dt.float64, "-np.inf", ind)
    e.fill(acc, keep_shape, dt.float64, "0.0", ind)
    idx = [f"r{k}" for k in range(len(x.shape))]
    dst = ", ".join("0" if k in axes else idx[k] for k in range(len(x.shape)))
    src = f"{e.name(x)}[{', '.join(idx)}]"
    nk = size_of(keep_shape)
    e.line(ind, f"{m}_f = {m}.reshape(({nk},))")
    for pass_ in range(2):
        for k, d in enumerate(x.shape):
            e.line(ind + k, f"for {idx[k]} in range({d}):")
        if pass_ == 0:
            e.line(ind + len(x.shape), f"if {src} > {m}[{dst}] or {src} != {src}:")
            e.line(ind + len(x.shape) + 1, f"{m}[{dst}] = {src}")
            e.line(ind, f"for q in range({nk}):")                  # the shift
            e.line(ind + 1, f"if not (-np.inf < {m}_f[q] < np.inf):")
            e.line(ind + 2, f"{m}_f[q] = 0.0")
        else:
            e.line(ind + len(x.shape), f"{acc}[{dst}] += vexp({src} - {m}[{dst}])")
    flat = e.fresh("lse")
    e.line(ind, f"{flat} = np.empty(({nk},), {_np(out.dtype)})")
    e.line(ind, f"{acc}_f = {acc}.reshape(({nk},))")
    e.line(ind, f"for q in range({nk}):")
    e.line(ind + 1, f"{flat}[q] = vlog({acc}_f[q]) + {m}_f[q]")
    e.line(ind, f"{e.out(out)} = {flat}.reshape({out.shape!r})")


LOWER = {"softmax": _softmax(False), "log_softmax": _softmax(True), "logsumexp": _logsumexp}
