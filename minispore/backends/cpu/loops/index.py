"""The indexing family, written once: gather, scatter_add and scatter_update along an axis,
one_hot, and the losses' class-label check.
kernels_index.py renders them as the eager numba kernels, native_index.py as the native sink's
LLVM lowerings.

Every index is read as an int64, wrapped (a negative one counts from the end of the axis) and
checked before anything is written: a first loop runs over the indices in row-major order and
stops at the first one outside [-size, size) with check site "index" (the caller binds it to
core/index_check.IndexCheck, whose IndexError names the op, the axis, the index and the valid
range), so both renderings report the index the numpy reference reports, even where the tensor
is empty along another axis. Values move as their dtype's bits; scatter_add adds each update in
the order of the indices (a repeated index accumulates as np.add.at does: for each destination
element, the updates in increasing index position).

The tensors are seen through collapsed views (`gather_view`, `scatter_view`): x as (lead...,
size, trail...), the indices flat or grouped, the updates with one axis per group of the
indexed region that they either fill or broadcast along (extent 1, read at 0), so one rendering
serves every rank.
"""
from __future__ import annotations

from ....core import scalar_expr as E
from ....core.shape import size_of
from .builder import definition, i64, like

LEAD, IDX, TRAIL = 0, 1, 2          # the segments of an indexed region: x's axes before the
                                    # indexed one, the index tensor's axes, x's axes after it


def _wrap(raw, size):
    """raw counted from the end where negative (the axis' `size` added)."""
    return E.where(raw < 0, raw + size, raw)


def _nest(b, extents, prefix: str, body):
    """Loops over `extents` (outermost first), named prefix0, prefix1, ...; body(indices)."""
    idx: list = []

    def level(k):
        if k == len(extents):
            body(tuple(idx))
            return
        with b.loop(extents[k], f"{prefix}{k}") as i:
            idx.append(i)
            level(k + 1)
            idx.pop()
    level(0)


def _check_indices(b, ind, size):
    """The check loop over every index (row-major): site "index" with the first index outside
    [-size, size)."""
    def check(q):
        raw = b.var("raw", i64(ind[q]))
        j = _wrap(raw, size)
        b.fail_if(E.logical_or(j < 0, j >= size), "index", raw)
    _nest(b, ind.dims, "k", check)


@definition
def gather(b):
    """x: (outer, size, inner), ind: (m,) -> out (outer, m, inner): out[r, q, c] =
    x[r, wrap(ind[q]), c]."""
    x, ind = b.input("x", 3), b.input("ind", 1)
    outer, size, inner = x.dims
    m = ind.dims[0]
    out = b.output("out", (outer, m, inner), like=x)
    _check_indices(b, ind, size)
    with b.loop(outer, "r") as r, b.loop(m, "q") as q:
        j = b.var("j", _wrap(i64(ind[q]), size))
        with b.loop(inner, "c") as c:
            b.store(out, (r, q, c), x[r, j, c])


@definition
def scatter(b, accumulate: bool, groups: tuple):
    """out = x with the updates written (accumulate=False: scatter_update) or added (True:
    scatter_add) at the indices along x's indexed axis. `groups` is the indexed region's
    collapsed axes, each (segment, broadcast): x is (LEAD groups..., size, TRAIL groups...), ind
    has the IDX groups, upd one axis per group (extent 1 where broadcast). An update is
    converted to x's dtype before it is stored or added, as the reference's astype."""
    seg = [s for s, _ in groups]
    n_lead, n_idx = seg.count(LEAD), seg.count(IDX)
    x, ind = b.input("x", n_lead + 1 + seg.count(TRAIL)), b.input("ind", n_idx)
    upd = b.input("upd", len(groups))
    size = x.dims[n_lead]
    out = b.output("out", x.dims, like=x)
    _check_indices(b, ind, size)
    _nest(b, x.dims, "i", lambda at: b.store(out, at, x[at]))
    lead, trail = x.dims[:n_lead], x.dims[n_lead + 1:]

    def region(at_lead):
        def at_index(at_idx):
            j = b.var("j", _wrap(i64(ind[at_idx]), size))

            def write(at_trail):
                at = at_lead + at_idx + at_trail
                u = upd[tuple(0 if bc else i for (_, bc), i in zip(groups, at))]
                dst = at_lead + (j,) + at_trail
                b.store(out, dst, out[dst] + like(out, u) if accumulate else like(out, u))
            _nest(b, trail, "t", write)
        _nest(b, ind.dims, "q", at_index)
    _nest(b, lead, "r", region)


@definition
def one_hot(b, dtype: str):
    """ind: (outer, inner) integers -> out (outer, depth, inner) of `dtype` (float32 or
    int64): on where ind[r, c] == k, else off (an index outside [0, depth) gives off values).
    on and off are float64 scalars for a float32 output (rounded once by the store, as the
    reference's astype), int64 ones otherwise."""
    ind = b.input("ind", 2)
    depth = b.scalar("depth", "int64")
    kind = "float64" if dtype == "float32" else "int64"
    on, off = b.scalar("on", kind), b.scalar("off", kind)
    outer, inner = ind.dims
    out = b.output("out", (outer, depth, inner), dtype=dtype)
    with b.loop(outer, "r") as r, b.loop(depth, "k") as k, b.loop(inner, "c") as c:
        b.store(out, (r, k, c), E.where(i64(ind[r, c]).eq(k), on, off))


@definition
def check_labels(b, ignore: bool):
    """labels: (n,) -> a copy of them, after check site "label" with the first label outside
    [0, classes) (that is not the `ignore` scalar's value, where ignore=True): the class-label
    check of the losses (core/ops/nn.py check_class_labels)."""
    labels = b.input("labels", 1)
    classes = b.scalar("classes", "int64")
    skip = b.scalar("ignore", "int64") if ignore else None
    out = b.output("out", labels.dims, like=labels)
    with b.loop(labels.dims[0], "q") as q:
        v = b.var("v", i64(labels[q]))
        bad = E.logical_or(v < 0, v >= classes)
        b.fail_if(E.logical_and(bad, v.ne(skip)) if ignore else bad, "label", v)
        b.store(out, q, labels[q])


def one_hot_view(out_shape, axis: int):
    """(outer, depth, inner) of one_hot's output around `axis`."""
    return size_of(out_shape[:axis]), out_shape[axis], size_of(out_shape[axis + 1:])


def gather_view(x_shape, axis: int, ind_shape):
    """(x's (outer, size, inner) view, ind's (m,) view, out's (outer, m, inner) view)."""
    outer, size, inner = size_of(x_shape[:axis]), x_shape[axis], size_of(x_shape[axis + 1:])
    m = size_of(ind_shape)
    return (outer, size, inner), (m,), (outer, m, inner)


def scatter_view(x_shape, axis: int, ind_shape, upd_shape):
    """(groups, x's view, ind's view, upd's view) of scatter(x, ind, upd) along `axis`: the
    region x.shape[:axis] + ind.shape + x.shape[axis + 1:] with its extent-1 axes dropped and
    the neighbouring axes of one segment merged where the updates fill them all or broadcast
    along them all; a segment left without an axis keeps one of extent 1."""
    x_shape, ind_shape, upd_shape = tuple(x_shape), tuple(ind_shape), tuple(upd_shape)
    segments = ((LEAD, x_shape[:axis]), (IDX, ind_shape), (TRAIL, x_shape[axis + 1:]))
    rank = sum(len(dims) for _, dims in segments)
    if len(upd_shape) > rank:
        raise ValueError(f"scatter: updates of rank {len(upd_shape)} for a region of rank {rank}")
    padded = (1,) * (rank - len(upd_shape)) + upd_shape
    groups, extents, pos = [], [], 0
    for seg, dims in segments:
        start = len(groups)
        for d in dims:
            broadcast = padded[pos] == 1
            pos += 1
            if d == 1:
                continue
            if len(groups) > start and groups[-1][1] == broadcast:
                extents[-1] *= d
            else:
                groups.append((seg, broadcast))
                extents.append(d)
        if len(groups) == start:
            groups.append((seg, False))
            extents.append(1)
    lead = [n for (s, _), n in zip(groups, extents) if s == LEAD]
    idx = [n for (s, _), n in zip(groups, extents) if s == IDX]
    trail = [n for (s, _), n in zip(groups, extents) if s == TRAIL]
    upd = [1 if bc else n for (_, bc), n in zip(groups, extents)]
    return (tuple(groups), tuple(lead) + (x_shape[axis],) + tuple(trail), tuple(idx),
            tuple(upd))
