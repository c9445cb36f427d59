"""guard_memo.py: a call site's guard snapshots, recomputed only where a value changed, always
equal to every location's own snapshot (a stale snapshot would run an old graph silently)."""
import gc

import numpy as np

import minispore as ms
from minispore import Parameter, ParameterTuple, Tensor, nn
from minispore.core.graph import guards
from minispore.core.graph.guard_memo import Guards


class Holder:
    prop_fails = False

    @property
    def prop(self):
        if self.prop_fails:
            raise RuntimeError("no value now")
        return 3


class Thing:
    pass


def _param(name):
    return Parameter(Tensor(np.ones(2, np.float32)), name=name)


def _plain(locs, fn=None):
    return tuple(loc.snap(fn) for loc in locs)


def test_the_memo_equals_the_plain_snapshots_through_every_kind_of_change():
    h = Holder()
    h.n, h.f, h.s, h.none = 1, 0.5, "a", None
    h.obj, h.lst, h.tup = Thing(), [1, 2], (1, 2.0, "x")
    h.t = Tensor(np.zeros(3, np.float32))
    h.params = ParameterTuple([_param("p0"), _param("p1")])
    h.arr = np.zeros(4, np.float32)
    names = ["n", "f", "s", "none", "obj", "lst", "tup", "t", "params", "arr"]
    g = Holder()            # its attribute read fails at times: that owner takes the plain path
    locs = Guards([guards.AttrLoc(h, name) for name in names] +
                  [guards.AttrLoc(g, "prop"), guards.AttrLoc(g, "gone")])
    changes = [
        lambda: None,
        lambda: setattr(h, "n", 2),
        lambda: setattr(h, "n", 10 ** 30),          # a new int object each time below
        lambda: setattr(h, "n", 10 ** 30 + 0),
        lambda: setattr(h, "f", float("nan")),
        lambda: setattr(h, "f", -0.0),
        lambda: setattr(h, "s", "b"),
        lambda: h.lst.append(3),                      # in place: the same object
        lambda: setattr(h, "tup", (1, 2.0, "y")),
        lambda: h.t.__setitem__(0, 1.0),              # rebinds the Tensor's buffer
        lambda: setattr(h, "params", ParameterTuple([_param("q0")])),
        lambda: h.arr.__setitem__(1, 5.0),            # in place
        lambda: setattr(h, "obj", Thing()),
        lambda: setattr(g, "gone", 7),                # a missing attribute appears
        lambda: delattr(g, "gone"),
        lambda: setattr(Holder, "prop_fails", True),  # a property starts raising
        lambda: setattr(Holder, "prop_fails", False),
    ]
    try:
        for change in changes:
            change()
            assert locs.snapshots(None) == _plain(locs)
            assert locs.snapshots(None) == _plain(locs)     # and again, from the memo
    finally:
        Holder.prop_fails = False


def test_an_object_that_died_and_was_replaced_by_none_is_seen():
    h = Holder()
    h.obj = Thing()
    locs = Guards([guards.AttrLoc(h, "obj")])
    before = locs.snapshots(None)
    h.obj = None                        # the held object dies: its weak reference reads None
    gc.collect()
    assert locs.snapshots(None) == _plain(locs) == (guards.snapshot(None),) != before


def test_an_unchanged_call_returns_the_same_snapshot_tuple():
    h = Holder()
    h.a, h.b = 1.5, Thing()
    locs = Guards([guards.AttrLoc(h, "a"), guards.AttrLoc(h, "b")])
    first = locs.snapshots(None)
    assert locs.snapshots(None) is first and hash(first) == hash(_plain(locs))
    h.a = 2.5
    assert locs.snapshots(None) is not first


def test_the_memo_holds_an_identity_snapshotted_object_weakly():
    h = Holder()
    h.obj = Thing()
    locs = Guards([guards.AttrLoc(h, "obj")])
    locs.snapshots(None)
    import weakref
    ref = weakref.ref(h.obj)
    h.obj = 1
    gc.collect()
    assert ref() is None


class Scaled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.dense = nn.Dense(3, 2)

    def construct(self, x):
        return self.dense(x) * self.scale


def test_a_graph_mode_cell_sees_an_attribute_changed_between_calls():
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    net = Scaled()
    x = Tensor(np.ones((1, 3), np.float32))
    a = net(x).asnumpy()
    assert np.array_equal(net(x).asnumpy(), a)
    net.scale = 3.0
    assert np.allclose(net(x).asnumpy(), a * 1.5)
    net.dense.has_bias = False          # a built-in Cell's setting: its graph reads it
    no_bias = net(x).asnumpy()
    w = net.dense.weight.asnumpy()
    assert np.allclose(no_bias, (np.ones((1, 3)) @ w.T) * 3.0, atol=1e-6)
