"""minispore.dataset: sources, the lazy pipeline, seeded order, iterators, the digits data."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
import minispore.dataset as ds


def _rows(d, **kw):
    return [[x.tolist() for x in r] for r in d.create_tuple_iterator(output_numpy=True, **kw)]


def test_numpy_slices_batch_and_sizes():
    d = ds.NumpySlicesDataset({"x": np.arange(10, dtype=np.float32), "y": np.arange(10) * 2},
                              shuffle=False)
    assert d.get_col_names() == ["x", "y"] and d.get_dataset_size() == 10
    b = d.batch(4)
    assert b.get_dataset_size() == 3 and d.batch(4, drop_remainder=True).get_dataset_size() == 2
    got = _rows(b)
    assert got[0] == [[0.0, 1.0, 2.0, 3.0], [0, 2, 4, 6]] and got[-1][0] == [8.0, 9.0]
    x, y = next(iter(b.create_tuple_iterator()))
    assert isinstance(x, ms.Tensor) and x.dtype is ms.float32 and y.dtype is ms.int64


def test_shuffle_is_seeded_and_changes_per_epoch():
    data = np.arange(20, dtype=np.int32)
    ds.config.set_seed(7)
    a = ds.NumpySlicesDataset(data, column_names="v").shuffle(8)
    it = a.create_tuple_iterator(output_numpy=True)
    e0 = [int(r[0]) for r in it]
    e1 = [int(r[0]) for r in it]                 # iterating again: the next epoch
    assert sorted(e0) == list(range(20)) and sorted(e1) == list(range(20))
    assert e0 != e1 and e0 != list(range(20))
    ds.config.set_seed(7)
    again = [int(r[0]) for r in ds.NumpySlicesDataset(data, column_names="v").shuffle(8)
             .create_tuple_iterator(output_numpy=True)]
    assert again == e0


def test_generator_map_repeat_and_dict_iterator():
    def gen():
        for i in range(5):
            yield np.float32(i), np.int32(i % 2)
    d = ds.GeneratorDataset(gen, ["x", "y"]).map(lambda x: x * 10, input_columns="x").repeat(2)
    assert d.get_dataset_size() == 10
    rows = list(d.create_dict_iterator(output_numpy=True))
    assert [float(r["x"]) for r in rows] == [0, 10, 20, 30, 40] * 2
    assert [int(r["y"]) for r in rows[:3]] == [0, 1, 0]


def test_random_access_source_shuffles_by_default():
    class Src:
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return (np.float32(i),)
    ds.config.set_seed(3)
    vals = [float(r[0]) for r in ds.GeneratorDataset(Src(), "x").create_tuple_iterator(
        output_numpy=True)]
    assert sorted(vals) == [0, 1, 2, 3, 4, 5] and vals != [0, 1, 2, 3, 4, 5]


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="batch_size must be an int >= 1 or a callable taking "
                                         "a BatchInfo, got 0"):
        ds.NumpySlicesDataset(np.ones(3)).batch(0)
    with pytest.raises(ValueError, match=r"different lengths \[3, 4\]"):
        ds.NumpySlicesDataset((np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match=r"input_columns \['z'\] are not columns"):
        ds.NumpySlicesDataset({"x": np.ones(3)}).map(abs, input_columns="z")
    with pytest.raises(RuntimeError, match="a row has 1 column"):    # MindSpore: RuntimeError
        list(ds.GeneratorDataset(lambda: iter([1, 2]), ["a", "b"]))
    it = ds.NumpySlicesDataset(np.ones(2)).create_tuple_iterator(num_epochs=1)
    list(it)
    with pytest.raises(RuntimeError, match="num_epochs=1"):
        list(it)


def test_digits_ship_with_scikit_learn():
    train, test = ds.load_digits("train"), ds.load_digits("test")
    assert train.get_dataset_size() + test.get_dataset_size() == 1797
    x, y = next(iter(test.batch(16).create_tuple_iterator(output_numpy=True)))
    assert x.shape == (16, 1, 8, 8) and x.dtype == np.float32 and 0 <= x.min() <= x.max() <= 1
    assert y.dtype == np.int32 and set(np.unique(y)) <= set(range(10))
    oh = next(iter(ds.load_digits("test", one_hot=True).create_tuple_iterator(
        output_numpy=True)))[1]
    assert oh.shape == (10,) and oh.sum() == 1
