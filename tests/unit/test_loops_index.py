"""The indexing family of backends/cpu/loops/index.py and the protocol's run-time index check
(`b.fail_if`): a check rendered by numba and by LLVM stops at the same index and reports it
through core/index_check's IndexError; the eager gather/scatter kernels and their native
lowerings are rendered from the same definitions; over the op database's samples of the family,
and on the edge cases (negative and repeated indices, empty tensors, broadcast updates, every
dtype), PyNative, O0 and O2 give the numpy reference's bits and its IndexError."""

import numpy as np
import pytest

import minispore as ms
from minispore.backends.cpu import kernels_index
from minispore.backends.cpu.loops import index
from minispore.backends.cpu.loops.builder import definition, i64
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.backends.cpu.render import numba_source
from minispore.core import device
from minispore.core import scalar_expr as E
from minispore.core.graph import compile as graph_compile
from minispore.core.index_check import IndexCheck
from minispore.core.primitive import REGISTRY, apply
from loops_harness import llvm_call, same_bits
from helpers import as_tuple, run_op
from opdb import CASES, rng_for

INDEX_OPS = ("gather", "scatter_add", "scatter_update", "one_hot", "check_class_labels")
# every sample is a new graph of run_op's one-node function: its recompile warning says nothing here
pytestmark = pytest.mark.filterwarnings("ignore:graph '_op_graph' has been compiled")


@definition
def take_wrapped(b):
    """out[q] = x[wrap(ind[q])] * 2, after a check of every index against [-n, n)."""
    x, ind = b.input("x", 1), b.input("ind", 1)
    n, m = x.dims[0], ind.dims[0]
    out = b.output("out", (m,), like=x)
    with b.loop(m, "q") as q:
        raw = b.var("raw", i64(ind[q]))
        j = E.where(raw < 0, raw + n, raw)
        b.fail_if(E.logical_or(j < 0, j >= n), "index", raw)
    with b.loop(m, "q") as q:
        raw = b.var("raw", i64(ind[q]))
        b.store(out, q, x[E.where(raw < 0, raw + n, raw)] * 2)


@pytest.mark.parametrize("np_dtype", [np.float32, np.int32])
def test_a_wrapped_index_rendered_by_numba_and_by_llvm_gives_thesame_bits(np_dtype):
    x = np.arange(-3, 4).astype(np_dtype)
    ind = np.array([0, -1, 6, -7, 3, 3], np.int64)
    site = IndexCheck("take", 7, 0)
    eager = numba_source.checked(numba_source.module(take_wrapped).kernel, {"index": site})
    rc, _, _, (native,) = llvm_call(take_wrapped, {}, {"x": x, "ind": ind},
                                    {"out": ((6,), np_dtype)}, sites={"index": site})
    assert rc == 0
    assert same_bits(eager(x, ind), native)
    assert native.tolist() == [-6, 6, 6, -6, 0, 0]


@pytest.mark.parametrize("bad", [[0, 7, -9], [-8], [2, -1, 99]])
def test_a_failed_check_rendered_both_ways_reports_the_first_bad_index(bad):
    x = np.arange(7, dtype=np.float64)
    ind = np.array(bad, np.int32)
    site = IndexCheck("take", 7, 0)
    eager = numba_source.checked(numba_source.module(take_wrapped).kernel, {"index": site})
    with pytest.raises(IndexError) as raised:
        eager(x, ind)
    rc, word, errors, (out,) = llvm_call(take_wrapped, {}, {"x": x, "ind": ind},
                                         {"out": ((len(bad),), np.float64)},
                                         sites={"index": site})
    first = next(v for v in bad if not -7 <= v < 7)
    assert rc == 1 and errors == [site] and word == first
    assert str(raised.value) == str(site.error(word)) == \
        f"take: index {first} is out of range for axis 0 of size 7; valid indices are -7 to 6"
    assert not out.any()                         # stopped before the second loop wrote


def test_an_unbound_check_site_is_refused_by_the_llvm_renderer():
    x, ind = np.zeros(3), np.zeros(2, np.int64)
    with pytest.raises(ValueError, match="check site 'index' is not bound"):
        llvm_call(take_wrapped, {}, {"x": x, "ind": ind}, {"out": ((2,), np.float64)},
                  sites={})


def test_scatter_view_merges_the_axes_the_updates_fill_or_broadcast_alike():
    groups, xv, iv, uv = index.scatter_view((2, 3, 5, 4), 1, (6,), (2, 1, 1, 4))
    assert groups == ((index.LEAD, False), (index.IDX, True), (index.TRAIL, True),
                      (index.TRAIL, False))
    assert (xv, iv, uv) == ((2, 3, 5, 4), (6,), (2, 1, 1, 4))
    groups, xv, iv, uv = index.scatter_view((4, 1, 3), 0, (2, 2), (2, 2, 1, 3))
    assert groups == ((index.LEAD, False), (index.IDX, False), (index.TRAIL, False))
    assert (xv, iv, uv) == ((1, 4, 3), (4,), (1, 4, 3))


def _run(name, args, attrs, mode, level):
    ms.set_context(mode=mode, jit_level=level)
    try:
        return [t.asnumpy() for t in as_tuple(run_op(name, args, attrs))]
    except IndexError as e:
        return f"IndexError: {str(e).splitlines()[0]}"


def _agree(name, args, attrs, native=True):
    """PyNative, O0 and O2 give the reference's bits (or its IndexError); O2 runs natively."""
    ref = REGISTRY[name].ref
    try:
        want = [ref(*args, **attrs)]
    except IndexError as e:
        want = f"IndexError: {e}"
    for mode, level in ((ms.PYNATIVE_MODE, "O0"), (ms.GRAPH_MODE, "O0"), (ms.GRAPH_MODE, "O2")):
        got = _run(name, args, attrs, mode, level)
        if isinstance(want, str):
            assert got == want, (name, level)
            continue
        assert not isinstance(got, str), (name, level, got)
        assert same_bits(got[0], want[0]), (name, mode, level)
        if level == "O2" and native:
            assert isinstance(graph_compile.last_compiled().program, NativeProgram)


DTYPES = [np.float32, np.float64, np.int32, np.bool_, np.float16]


@pytest.mark.parametrize("np_dtype", DTYPES, ids=[d.__name__ for d in DTYPES])
def test_gather_and_scatter_edge_cases_agree_with_the_reference_in_every_mode(np_dtype):
    rng = np.random.default_rng(5)

    def arr(shape):
        a = rng.standard_normal(shape) * 3
        return (a > 0) if np_dtype is np.bool_ else a.astype(np_dtype)
    x = arr((5, 4, 3))
    for axis, ind in [(0, np.array([4, -1, 0, 2, 2, -5])), (2, np.array(1, np.int32)),
                      (1, np.array([[3, -4], [1, 1]], np.int32)), (0, np.zeros((0,), np.int64))]:
        _agree("gather", (x, ind), {"axis": axis})
        region = x.shape[:axis] + ind.shape + x.shape[axis + 1:]
        unique = np.unique(ind % x.shape[axis]).astype(ind.dtype) if ind.ndim == 1 else \
            ind[:1] if ind.ndim else ind
        uregion = x.shape[:axis] + unique.shape + x.shape[axis + 1:]
        _agree("scatter_update", (x, unique, arr(uregion)), {"axis": axis})
        _agree("scatter_update", (x, unique, arr(uregion[-1:])), {"axis": axis})
        if np_dtype is not np.bool_:            # np.add.at of bool is a logical or
            _agree("scatter_add", (x, ind, arr(region)), {"axis": axis})
            _agree("scatter_add", (x, ind, arr(())), {"axis": axis})
    _agree("gather", (arr((0, 3)), np.array([2, -3])), {"axis": 1})


def test_scatter_add_of_repeated_indices_adds_in_the_order_of_the_indices():
    """float32 sums of many updates at few destinations: np.add.at's order, in every mode."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((7, 3)).astype(np.float32)
    ind = rng.integers(-7, 7, 300)
    upd = (rng.standard_normal((300, 3)) * 1e4).astype(np.float32)
    _agree("scatter_add", (x, ind, upd), {"axis": 0})
    _agree("scatter_add", (x, ind, upd[:, :1]), {"axis": 0})


@pytest.mark.parametrize("name,args,attrs", [
    ("gather", (np.zeros((4, 3), np.float32), np.array([0, 4, -9])), {"axis": 0}),
    ("gather", (np.zeros((4, 3), np.float32), np.array([[0, 2], [-4, -5]], np.int32)),
     {"axis": 1}),
    ("gather", (np.zeros((0, 3), np.float32), np.array([5])), {"axis": 1}),
    ("scatter_add", (np.zeros((3, 0), np.float32), np.array([1, 3]),
                     np.zeros((2, 0), np.float32)), {"axis": 0}),
    ("scatter_add", (np.zeros((4, 3), np.float16), np.array([1, -5]),
                     np.ones((2, 3), np.float16)), {"axis": 0}),
    ("scatter_update", (np.zeros((4, 3)), np.array([3]), np.ones((4, 1))), {"axis": 1}),
], ids=["gather-axis0", "gather-axis1", "gather-empty-lead", "scatter_add-empty-trail",
        "scatter_add-half", "scatter_update"])
def test_an_index_out_of_range_raises_the_references_index_error_in_every_mode(name, args,
                                                                                 attrs):
    _agree(name, args, attrs)


def _index_cases():
    return [c for c in CASES if c.name in INDEX_OPS]


@pytest.mark.parametrize("case", _index_cases(), ids=[c.name for c in _index_cases()])
def test_index_family_pynative_and_o2_give_thesame_bits(case):
    for dtype in case.dtypes:
        for s in case.samples(rng_for("forward", case.name, dtype), dtype):
            eager = _run(case.name, s.args, s.attrs, ms.PYNATIVE_MODE, "O0")
            native = _run(case.name, s.args, s.attrs, ms.GRAPH_MODE, "O2")
            assert isinstance(graph_compile.last_compiled().program, NativeProgram)
            for k, (a, b) in enumerate(zip(eager, native)):
                assert same_bits(a, b), f"{case.name} {dtype} {s.desc} out {k}"


def _index_loss(x, ind, upd):
    g = ms.ops.gather(x, ind, 0)
    s = apply(REGISTRY["scatter_add"], x, ind, upd, axis=0)
    v = apply(REGISTRY["scatter_update"], x, ind[:2], upd[:2], axis=0)
    return (g * g).sum() + (s * s).sum() + (v * v * v).sum()


def test_eager_index_kernels_and_native_lowerings_render_the_same_definitions():
    """The eager gather is the numba rendering of index.gather, and the native program of a
    graph holding gather, scatter_add and scatter_update (and their gradients) renders
    index.gather and index.scatter in LLVM; the gradients agree bit for bit."""
    assert kernels_index.numba_source.module(index.gather).DEFINITION == index.gather.name
    cpu = device.get_backend("CPU")
    for name in INDEX_OPS:                         # the backend runs kernels_index's kernels
        assert cpu._kernels[name].__module__ == kernels_index.__name__, name
    before = {d.name: dict(d.renders) for d in (index.gather, index.scatter)}
    x = ms.Tensor(np.linspace(-2, 2, 24).reshape(6, 4).astype(np.float32))
    ind = ms.Tensor(np.array([5, -1, 0, 2], np.int64))
    upd = ms.Tensor(np.linspace(1, 3, 16).reshape(4, 4).astype(np.float32))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = [g.asnumpy() for g in ms.grad(_index_loss, grad_position=(0, 2))(x, ind, upd)]
    assert index.scatter.renders["numba"] + index.gather.renders["numba"] >= 2
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    native = [g.asnumpy() for g in ms.jit(ms.grad(_index_loss, grad_position=(0, 2)))(x, ind, upd)]
    assert isinstance(graph_compile.last_compiled().program, NativeProgram)
    for d in (index.gather, index.scatter):
        assert d.renders["llvm"] > before[d.name].get("llvm", 0), d.name
    for a, b in zip(eager, native):
        assert np.isfinite(a).all() and same_bits(a, b)


@pytest.mark.parametrize("on,off", [(1.0, 0.0), (5, -1), (0.3, -2.5)])
def test_one_hot_eager_and_o2_render_the_same_definition(on, off):
    """one_hot's eager kernel and its native lowering are renderings of index.one_hot (depth, on
    and off its scalar arguments), with the reference's bits for labels inside and outside
    [0, depth)."""
    labels = np.array([[0, 3, -1], [2, 7, 1]], np.int32)
    attrs = {"depth": 4, "on_value": on, "off_value": off, "axis": 1}
    before = dict(index.one_hot.renders)
    _agree("one_hot", (labels,), attrs)
    assert index.one_hot.renders["llvm"] > before.get("llvm", 0)
    name = "float32" if isinstance(on, float) else "int64"
    assert numba_source.module(index.one_hot, dtype=name).DEFINITION == index.one_hot.name


@pytest.mark.parametrize("labels,ignore", [([[0, 3], [2, 1]], None), ([0, -100, 3], -100),
                                           ([[1, 4, 0], [0, -1, 2]], None), ([2, -100, -1, 5], -100),
                                           ([1, 7], 7), ([], None)])
def test_class_labels_are_checked_by_one_definition_in_every_mode(labels, ignore):
    """check_class_labels' eager kernel and native lowering are renderings of
    index.check_labels: the labels back, or the reference's IndexError for the first label
    outside [0, classes) that is not ignore_index."""
    attrs = {"classes": 4, "ignore_index": ignore, "caller": "cross_entropy"}
    before = dict(index.check_labels.renders)
    _agree("check_class_labels", (np.array(labels, np.int32),), attrs)
    if labels:                  # an empty label tensor: the native program has no code to run
        assert index.check_labels.renders["llvm"] > before.get("llvm", 0)
    assert numba_source.module(index.check_labels, ignore=ignore is not None).DEFINITION == \
        index.check_labels.name
