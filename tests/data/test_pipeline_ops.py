"""minispore.dataset's pipeline operations against MindSpore 2.10: map's and per_batch_map's
column order, batch with a callable size and BatchInfo, padded_batch, project, rename, zip,
concat, take, skip, filter, split's sizes and samplers, the getters and the epoch semantics
of iterators. Expected values come from running the same pipelines on MindSpore 2.10."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
import minispore.dataset as ds


def _rows(d, **kw):
    return [[x.tolist() for x in r] for r in d.create_tuple_iterator(output_numpy=True, **kw)]


def _abc(n=4, k=3):
    """Columns a, b, c, ... holding arange(n) + 10 * column number, in order."""
    return ds.NumpySlicesDataset({name: np.arange(n) + 10 * i
                                  for i, name in enumerate("abcdefg"[:k])}, shuffle=False)


# (map arguments, column names, second row): values from MindSpore 2.10
MAP_LAYOUTS = [
    (dict(operations=lambda b: (b, b + 1), input_columns="b", output_columns=["x", "y"]),
     ["x", "y", "a", "c"], [11, 12, 1, 21]),
    (dict(operations=lambda b: b + 1, input_columns="b", output_columns="z"),
     ["a", "z", "c"], [1, 12, 21]),
    (dict(operations=lambda a, c: a + c, input_columns=["a", "c"], output_columns="s"),
     ["s", "b"], [22, 11]),
    (dict(operations=lambda a, c: (a, c), input_columns=["a", "c"],
          output_columns=["c", "a"]), ["c", "b", "a"], [1, 11, 21]),
    (dict(operations=lambda b: b, input_columns="b", output_columns=["a"]),
     ["a", "c"], [11, 21]),
    (dict(operations=lambda b: (b, b + 5), input_columns="b", output_columns=["x", "c"]),
     ["x", "a", "c"], [11, 1, 21]),
    (dict(operations=lambda *x: np.array(len(x))), ["a", "b", "c"], [1, 11, 21]),
    (dict(operations=[lambda b: (b, b * 2), lambda p, q: p + q], input_columns="b"),
     ["a", "b", "c"], [1, 33, 21]),
]


@pytest.mark.parametrize("kwargs, names, row", MAP_LAYOUTS)
def test_map_column_order_is_mindspores(kwargs, names, row):
    m = _abc().map(**kwargs)
    assert m.get_col_names() == names and _rows(m)[1] == row


def test_map_passes_results_between_operations_as_returned():
    # values from MindSpore 2.10: a list is one column, handed on as a Python list
    d = _abc(3, 1).map(lambda x: [x, x + 1])
    assert d.get_col_names() == ["a"] and _rows(d) == [[[0, 1]], [[1, 2]], [[2, 3]]]
    d = _abc(3, 1).map([lambda x: [x, x + 1], lambda y: y * 2])
    assert _rows(d) == [[[0, 1, 0, 1]], [[1, 2, 1, 2]], [[2, 3, 2, 3]]]


def test_map_output_count_must_match_output_columns():
    with pytest.raises(RuntimeError, match="should match the number of 'output_columns'"):
        _rows(_abc().map(lambda b: (b, b), input_columns="b"))
    with pytest.raises(NotImplementedError, match="callbacks"):
        _abc().map(abs, callbacks=[object()])
    with pytest.raises(TypeError, match="must be callable"):
        _abc().map(5)
    with pytest.raises(TypeError, match="column_order"):
        _abc().map(abs, column_order=["a"])          # removed in MindSpore 2.x


def test_project_rename_take_skip_filter():
    assert _abc().project(["c", "a"]).get_col_names() == ["c", "a"]
    assert _rows(_abc().project(["c", "a"]))[1] == [21, 1]
    assert _abc().rename(["a", "c"], ["A", "C"]).get_col_names() == ["A", "b", "C"]
    t = _abc().take(2)
    assert t.get_dataset_size() == 2 and _rows(t) == [[0, 10, 20], [1, 11, 21]]
    assert _abc().take(10).get_dataset_size() == 4 and _abc().take(-1).get_dataset_size() == 4
    s = _abc().skip(3)
    assert s.get_dataset_size() == 1 and _rows(s) == [[3, 13, 23]]
    assert _abc().skip(10).get_dataset_size() == 0
    f = _abc(6, 1).filter(lambda a: a % 2 == 0)
    assert _rows(f) == [[0], [2], [4]] and f.get_dataset_size() == 3
    with pytest.raises(ValueError, match="count must be -1 or an int >= 1"):
        _abc().take(0)
    with pytest.raises(ValueError, match="same number of names"):
        _abc().rename(["a"], ["x", "y"])
    with pytest.raises(ValueError, match=r"\['z'\] are not columns"):
        _abc().project("z")


def test_flat_map_and_apply():
    # the examples of MindSpore 2.10's flat_map docstring
    d = ds.NumpySlicesDataset([[0, 1], [2, 3]], shuffle=False)
    f = d.flat_map(lambda a: ds.NumpySlicesDataset(a, shuffle=False).repeat(2))
    assert sum(_rows(f), []) == [0, 1, 0, 1, 2, 3, 2, 3]
    d = ds.NumpySlicesDataset(([[0, 1], [2, 3]], [[0, -1], [-2, -3]]), shuffle=False)
    f = d.flat_map(lambda c1, c2: ds.NumpySlicesDataset((c1 + 1, c2 - 1), shuffle=False))
    assert _rows(f) == [[1, -1], [2, -2], [3, -3], [4, -4]]
    assert _abc().apply(lambda x: x.take(1)).get_dataset_size() == 1


def test_zip_and_concat():
    z = _abc().zip(ds.NumpySlicesDataset({"q": np.arange(3)}, shuffle=False))
    assert z.get_col_names() == ["a", "b", "c", "q"] and z.get_dataset_size() == 3
    assert _rows(z) == [[0, 10, 20, 0], [1, 11, 21, 1], [2, 12, 22, 2]]
    assert ds.zip((_abc(), ds.NumpySlicesDataset({"q": np.arange(6)}))).get_dataset_size() == 4
    c = _abc().concat(_abc().take(2))
    assert c.get_dataset_size() == 6 and _rows(c.project("a")) == [[0], [1], [2], [3], [0], [1]]
    assert (_abc() + _abc()).get_dataset_size() == 8
    assert _abc().concat([_abc(), _abc()]).get_dataset_size() == 12
    with pytest.raises(ValueError, match="share the column name"):
        _abc().zip(_abc())
    with pytest.raises(ValueError, match="needs the columns"):
        _abc().concat(ds.NumpySlicesDataset({"x": np.arange(2)}))
    with pytest.raises(RuntimeError, match="data types of the datasets differ"):
        _rows(ds.NumpySlicesDataset({"a": np.arange(2.0)}, shuffle=False).concat(_abc(2, 1)))


def test_getters():
    d = _abc()
    assert d.output_types() == [np.dtype("int64")] * 3 and d.output_shapes() == [[], [], []]
    assert _abc().batch(3).output_shapes() == [[3], [3], [3]]
    assert (d.get_batch_size(), _abc().batch(3).get_batch_size()) == (1, 3)
    assert (d.get_repeat_count(), _abc().repeat(3).get_repeat_count(),
            _abc().repeat().get_repeat_count()) == (1, 3, -1)
    assert _abc(6).batch(3).repeat(2).get_batch_size() == 3
    assert _abc(6).repeat(2).batch(3).get_repeat_count() == 2
    # MindSpore 2.10: a dataset repeating forever reports the size of one pass
    assert _abc().repeat().get_dataset_size() == 4
    assert _abc().repeat().take(5).get_dataset_size() == 4
    assert (_abc().repeat(3).batch(5).get_dataset_size(),
            _abc().batch(3).repeat(2).get_dataset_size()) == (3, 4)
    g = ds.GeneratorDataset(lambda: ((np.ones(i + 1, np.float32),) for i in range(3)), ["x"])
    assert g.get_dataset_size() == 3 and g.output_shapes() == [[1]]
    assert g.output_shapes(estimate=True) == [[None]] and d.num_classes() is None
    words = ds.NumpySlicesDataset({"s": np.array(["ab", "c"])}, shuffle=False)
    assert words.output_types() == [np.dtype("<U")] and _rows(words) == [["ab"], ["c"]]


def test_batch_size_callable_and_batch_info():
    b = _abc(10, 1).batch(lambda info: info.get_batch_num() + 1)
    assert _rows(b) == [[[0]], [[1, 2]], [[3, 4, 5]], [[6, 7, 8, 9]]]
    assert b.get_batch_size() == -1 and b.get_dataset_size() == 4

    def numbered(a, b, info):
        return ([x * 0 + info.get_batch_num() for x in a],
                [x + info.get_epoch_num() * 1000 for x in b])
    d = _abc(6).batch(2, per_batch_map=numbered, input_columns=["a", "b"]).repeat(2)
    assert _rows(d) == [[[0, 0], [10, 11], [20, 21]], [[1, 1], [12, 13], [22, 23]],
                        [[2, 2], [14, 15], [24, 25]]] * 2
    seen = []

    def record(x, info):
        seen.append((info.get_epoch_num(), info.get_batch_num()))
        return (x,)
    d = _abc(4, 1).batch(3, per_batch_map=record, input_columns=["a"]).repeat(2)
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    list(it), list(it)
    # a repeat above the batch numbers batches again; the epoch is the iterator's
    assert sorted(seen) == [(0, 0), (0, 0), (0, 1), (0, 1), (1, 0), (1, 0), (1, 1), (1, 1)]


def test_per_batch_map_columns():
    d = _abc(4).batch(2, per_batch_map=lambda a, b, c, info: (a,), output_columns=["p"])
    assert d.get_col_names() == ["p"] and _rows(d) == [[[0, 1]], [[2, 3]]]
    d = _abc(4).batch(2, per_batch_map=lambda a, b, c, info: (c, b, a))
    assert d.get_col_names() == ["a", "b", "c"]
    assert _rows(d) == [[[20, 21], [10, 11], [0, 1]], [[22, 23], [12, 13], [2, 3]]]
    d = _abc(k=5).batch(2, per_batch_map=lambda x, y, i: (y, x), input_columns=["d", "b"],
                        output_columns=["b", "d"])
    assert d.get_col_names() == ["a", "d", "c", "b", "e"]
    assert _rows(d)[0] == [[0, 1], [30, 31], [20, 21], [10, 11], [40, 41]]

    def lists(a, info):
        assert isinstance(a, list) and isinstance(a[0], np.ndarray)
        assert isinstance(info, ds.BatchInfo)
        return (a,)
    _rows(_abc(4, 1).batch(2, per_batch_map=lists, input_columns="a"))
    with pytest.warns(UserWarning, match="project"):       # MindSpore's order is a hash's
        d = _abc(4).batch(2, per_batch_map=lambda b, i: (b, b), input_columns="b",
                          output_columns=["p", "q"])
    assert d.get_col_names() == ["p", "q", "a", "c"]
    with pytest.raises(ValueError, match="input_columns= needs per_batch_map"):
        _abc().batch(2, input_columns="a")


def _ragged():
    for i in range(3):
        yield np.arange(i + 1), np.ones((i + 1, 2)) * i, np.int32(i)


def test_padded_batch():
    g = lambda: ds.GeneratorDataset(_ragged, ["x", "y", "z"])      # noqa: E731
    assert _rows(g().project(["x", "z"]).padded_batch(3, pad_info={"x": ([4], -1)})) == \
        [[[[0, -1, -1, -1], [0, 1, -1, -1], [0, 1, 2, -1]], [0, 1, 2]]]
    assert _rows(g().project("y").padded_batch(3, pad_info={"y": ([None, 3], 7)}))[0][0][0] == \
        [[0.0, 0.0, 7.0], [7.0, 7.0, 7.0], [7.0, 7.0, 7.0]]
    assert _rows(g().project("x").padded_batch(3, pad_info={"x": ([2], -1)})) == \
        [[[[0, -1], [0, 1], [0, 1]]]]                       # a longer row is cropped
    assert _rows(g().padded_batch(2, pad_info={})) == \
        [[[[0, 0], [0, 1]], [[[0.0, 0.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 1.0]]], [0, 1]],
         [[[0, 1, 2]], [[[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]], [2]]]
    assert _rows(g().project("x").padded_batch(3, pad_info={"x": (None, 9.5)})) == \
        [[[[0, 9, 9], [0, 1, 9], [0, 1, 2]]]]               # the value takes the column dtype
    with pytest.raises(RuntimeError, match="different shapes"):
        _rows(g().padded_batch(2))
    with pytest.raises(TypeError, match="pad_info"):
        _abc().batch(2, pad_info={})                        # 2.x: pad_info is padded_batch's


SPLITS = [  # (rows, sizes, each split's rows with randomize=False): values from MindSpore 2.10
    (4, [3, 1], [[0, 1, 2], [3]]),
    (7, [0.75, 0.25], [[0, 1, 2, 3, 4], [5, 6]]),
    (7, [0.5, 0.5], [[0, 1, 2], [3, 4, 5, 6]]),
    (4, [0.33, 0.67], [[0], [1, 2, 3]]),
    (10, [0.15, 0.15, 0.7], [[0], [1, 2], [3, 4, 5, 6, 7, 8, 9]]),
    (4, [0.15, 0.15, 0.7], [[0], [1], [2, 3]]),
    (7, [0.34, 0.33, 0.33], [[0, 1, 2], [3, 4], [5, 6]]),
    (10, [0.34, 0.33, 0.33], [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]),
]


@pytest.mark.parametrize("n, sizes, expected", SPLITS)
def test_split_sizes_round_as_mindspore(n, sizes, expected):
    got = [sum(_rows(s), []) for s in _abc(n, 1).split(sizes, randomize=False)]
    assert got == expected
    gen = ds.GeneratorDataset(lambda: ((np.int64(i),) for i in range(n)), ["x"])
    assert [sum(_rows(s), []) for s in gen.split(sizes, randomize=False)] == expected


def test_split_errors_and_random_splits():
    with pytest.raises(RuntimeError, match="Sum of split sizes 4 is not equal to dataset size"):
        _abc(10, 1).split([3, 1])
    with pytest.raises(RuntimeError, match="Split percentage 0.1 is too small"):
        _abc(4, 1).split([0.1, 0.9])
    with pytest.raises(ValueError, match="do not sum up to 1"):
        _abc(10, 1).split([0.3, 0.3])
    with pytest.raises(RuntimeError, match="should not be sharded"):
        ds.NumpySlicesDataset(np.arange(10), num_shards=2, shard_id=0).split([3, 2])
    ds.config.set_seed(5)
    for d in (_abc(10, 1), _abc(10, 1).map(lambda a: a)):       # by samplers; by shuffle
        parts = d.split([0.5, 0.5])
        it = [p.create_tuple_iterator(output_numpy=True, num_epochs=2) for p in parts]
        e0 = [[int(r[0]) for r in i] for i in it]
        e1 = [[int(r[0]) for r in i] for i in it]
        assert e0 == e1 and sorted(e0[0] + e0[1]) == list(range(10))   # one draw, disjoint
        assert e0[0] != [0, 1, 2, 3, 4]
    parts = _abc(10, 1).split([4, 6], randomize=False)
    assert isinstance(parts[0].sampler, ds.SequentialSampler)


def test_take_skip_and_zip_under_repeat():
    # values from MindSpore 2.10
    assert _rows(_abc(4, 1).repeat(2).take(5)) == [[0], [1], [2], [3], [0]]
    assert _rows(_abc(4, 1).take(2).repeat(2)) == [[0], [1], [0], [1]]
    assert _rows(_abc(4, 1).skip(3).repeat(2)) == [[3], [3]]
    z = _abc(2, 1).repeat(2).zip(ds.NumpySlicesDataset({"b": np.arange(3)}, shuffle=False))
    assert _rows(z) == [[0, 0], [1, 1], [0, 2]]


@pytest.fixture
def no_set_seed():
    saved = ds.config._seed["value"]
    ds.config._seed["value"] = None
    yield
    ds.config._seed["value"] = saved


def test_without_a_seed_every_iterator_draws_anew(no_set_seed):
    # MindSpore 2.10: unseeded, each new iterator shuffles differently; seeded, alike
    d = ds.NumpySlicesDataset({"a": np.arange(12)}, shuffle=False).shuffle(12)
    orders = [sum(_rows(d), []) for _ in range(3)]
    assert orders[0] != orders[1] or orders[1] != orders[2]
    for parent in (_abc(12, 1), _abc(12, 1).map(lambda a: a)):
        parts = parent.split([0.5, 0.5])                   # splits stay disjoint anyway
        assert sorted(sum(_rows(parts[0]) + _rows(parts[1]), [])) == list(range(12))
    ds.config.set_seed(4)
    assert sum(_rows(d), []) == sum(_rows(d), [])


def test_iterators_epochs_and_outputs():
    it = _abc().create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [len(list(it)) for _ in range(2)] == [4, 4]
    with pytest.raises(RuntimeError, match="num_epochs=2"):
        list(it)
    it = _abc().create_tuple_iterator(num_epochs=2, output_numpy=True)
    next(it), next(it)
    assert [int(r[0]) for r in it] == [2, 3]                # a stopped pass goes on
    assert [len(list(it)) for _ in range(1)] == [4]
    d = _abc()
    assert [len(list(d)) for _ in range(3)] == [4, 4, 4]    # each `for` over d: one epoch
    row = next(d.create_dict_iterator())
    assert list(row) == ["a", "b", "c"] and isinstance(row["a"], ms.Tensor)
    row = next(iter(d))
    assert isinstance(row, list) and isinstance(row[0], ms.Tensor)
    assert row[0].dtype is ms.int64
    x = next(d.create_tuple_iterator(columns=["c"], output_numpy=True, do_copy=True))
    assert len(x) == 1 and int(x[0]) == 20
    words = ds.NumpySlicesDataset({"s": np.array(["ab", "c"]), "v": np.arange(2)},
                                  shuffle=False)
    s, v = next(words.create_tuple_iterator())          # MindSpore 2.10: text stays numpy
    assert isinstance(s, np.ndarray) and s.tolist() == "ab" and isinstance(v, ms.Tensor)
    with pytest.raises(TypeError, match="do_copy"):
        d.create_dict_iterator(do_copy=1)


@pytest.mark.parametrize("mode", ["graph", "pynative"])
def test_pipeline_tensors_feed_a_network_in_both_modes(mode):
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        net = ms.nn.Dense(3, 1, weight_init="ones", bias_init="zeros")
        d = ds.NumpySlicesDataset({"x": np.arange(12, dtype=np.float32).reshape(4, 3)},
                                  shuffle=False).map(lambda x: x * 2, input_columns="x")
        out = [net(x).asnumpy().tolist() for (x,) in d.batch(2).create_tuple_iterator()]
        assert out == [[[6.0], [24.0]], [[42.0], [60.0]]]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


_LENGTHS = [3, 1, 4, 1, 5, 2, 6, 2, 3, 5]


def _by_length():
    for i, n in enumerate(_LENGTHS):
        yield np.arange(n) + 1, np.int32(i)


def test_bucket_batch_by_length():
    g = lambda: ds.GeneratorDataset(_by_length, ["x", "i"])      # noqa: E731
    # values from MindSpore 2.10: a full bucket is emitted at once, the rest in bucket order
    b = g().bucket_batch_by_length(["x"], [3, 5], [2, 2, 3])
    assert _rows(b) == [[[[1, 2, 3, 0], [1, 2, 3, 4]], [0, 2]], [[[1], [1]], [1, 3]],
                        [[[1, 2], [1, 2]], [5, 7]],
                        [[[1, 2, 3, 4, 5, 0], [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 0]],
                         [4, 6, 9]], [[[1, 2, 3]], [8]]]
    assert b.get_dataset_size() == 5 and b.get_batch_size() == 1
    assert len(_rows(g().bucket_batch_by_length(["x"], [3, 5], [2, 2, 3],
                                                drop_remainder=True))) == 4
    b = g().bucket_batch_by_length(["x", "i"], [3], [2, 2], pad_info={},
                                   element_length_function=lambda x, i: int(i) % 4)
    assert [r[1] for r in _rows(b)] == [[0, 1], [2, 4], [5, 6], [3, 7], [8, 9]]
    b = g().take(4).bucket_batch_by_length(["x"], [3, 5], [2, 2, 3],
                                           pad_info={"x": ([None], -1)},
                                           pad_to_bucket_boundary=True)
    assert [r[0] for r in _rows(b)] == [[[1, 2, 3, -1], [1, 2, 3, 4]], [[1, -1], [1, -1]]]
    with pytest.raises(RuntimeError, match="last bucket"):
        _rows(g().bucket_batch_by_length(["x"], [3, 5], [2, 2, 3], pad_info={"x": ([None], 0)},
                                         pad_to_bucket_boundary=True))
    with pytest.raises(ValueError, match="one element more than bucket_boundaries"):
        g().bucket_batch_by_length(["x"], [3, 5], [2, 2])
    with pytest.raises(ValueError, match="strictly increasing"):
        g().bucket_batch_by_length(["x"], [5, 3], [2, 2, 3])
    with pytest.raises(ValueError, match="exactly one column name"):
        g().bucket_batch_by_length(["x", "i"], [3, 5], [2, 2, 3])
