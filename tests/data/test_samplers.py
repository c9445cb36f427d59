"""minispore.dataset samplers and the sampler/shuffle/num_samples/num_shards/shard_id arguments
of GeneratorDataset and NumpySlicesDataset. Expected orders of the deterministic cases are the
ones MindSpore 2.10 gives for the same calls."""
from __future__ import annotations

import numpy as np
import pytest

import minispore.dataset as ds

DATA = np.arange(10)


def _ids(d):
    return [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)]


def _both(**kw):
    """The same arguments on a NumpySlicesDataset and on a random-access GeneratorDataset."""
    return [ds.NumpySlicesDataset(DATA, column_names=["a"], **kw),
            ds.GeneratorDataset([(np.array(i),) for i in DATA], column_names=["a"], **kw)]


@pytest.mark.parametrize("kw, want", [
    (dict(num_shards=3, shard_id=0, shuffle=False), [0, 3, 6, 9]),
    (dict(num_shards=3, shard_id=2, shuffle=False), [2, 5, 8, 1]),
    (dict(num_shards=4, shard_id=3, shuffle=False), [3, 7, 1]),
    (dict(num_shards=3, shard_id=0, shuffle=False, num_samples=2), [0, 3]),
    (dict(num_shards=20, shard_id=15, shuffle=False), [5]),
    (dict(sampler=ds.SequentialSampler(start_index=2, num_samples=3)), [2, 3, 4]),
    (dict(sampler=ds.SequentialSampler(start_index=8, num_samples=5)), [8, 9]),
    (dict(sampler=[3, 1, 4]), [3, 1, 4]),
    (dict(sampler=np.array([4, 5])), [4, 5]),
    (dict(sampler=[1, 2, 3], num_samples=2), [1, 2]),
    (dict(sampler=ds.SubsetSampler([5, 2, 7])), [5, 2, 7]),
    (dict(sampler=ds.DistributedSampler(3, 1, shuffle=False)), [1, 4, 7, 0]),
    (dict(sampler=ds.DistributedSampler(4, 3, shuffle=False, offset=1)), [2, 6]),
    (dict(shuffle=False, num_samples=8), list(range(8))),
])
def test_sampling_arguments_select_the_rows_mindspore_reads(kw, want):
    for d in _both(**kw):
        assert _ids(d) == want and d.get_dataset_size() == len(want)


def test_shuffled_shards_are_disjoint_seeded_and_cover_the_data():
    ds.config.set_seed(3)
    shards = [ds.NumpySlicesDataset(DATA, column_names="a", num_shards=2, shard_id=i)
              for i in range(2)]
    e0 = [_ids(s) for s in shards]
    assert sorted(e0[0] + e0[1]) == list(range(10)) and e0[0] != [0, 2, 4, 6, 8]
    ds.config.set_seed(3)
    again = [_ids(ds.NumpySlicesDataset(DATA, column_names="a", num_shards=2, shard_id=i))
             for i in range(2)]
    assert again == e0


def test_random_samplers_draw_from_their_rows():
    ds.config.set_seed(5)
    got = _ids(ds.NumpySlicesDataset(DATA, sampler=ds.SubsetRandomSampler([1, 2, 3])))
    assert sorted(got) == [1, 2, 3]
    got = _ids(ds.NumpySlicesDataset(DATA, sampler=ds.RandomSampler(replacement=True,
                                                                    num_samples=25)))
    assert len(got) == 25 and set(got) <= set(range(10))
    got = _ids(ds.NumpySlicesDataset(DATA, sampler=ds.RandomSampler()))
    assert sorted(got) == list(range(10))
    # as in MindSpore: a shuffled source with num_samples draws rows with replacement
    got = _ids(ds.NumpySlicesDataset(DATA, num_samples=30))
    assert len(got) == 30 and set(got) <= set(range(10))
    got = _ids(ds.NumpySlicesDataset(DATA, sampler=ds.WeightedRandomSampler(
        [0, 0, 1, 0, 0, 0, 0, 0, 0, 0], num_samples=4)))
    assert got == [2, 2, 2, 2]


def test_a_child_sampler_runs_first():
    parent = ds.SequentialSampler(start_index=1, num_samples=2)
    parent.add_child(ds.SubsetSampler([9, 8, 7, 6]))
    assert _ids(ds.NumpySlicesDataset(DATA, sampler=parent)) == [8, 7]


def test_user_sampler_sees_the_dataset_size():
    class Reverse(ds.Sampler):
        def __iter__(self):
            return iter(range(self.dataset_size - 1, -1, -1))
    assert _ids(ds.NumpySlicesDataset(DATA, sampler=Reverse())) == list(range(9, -1, -1))


@pytest.mark.parametrize("kw, err, words", [
    (dict(sampler=ds.SequentialSampler(), shuffle=True), ValueError, "shuffle"),
    (dict(sampler=ds.SequentialSampler(), num_shards=2, shard_id=0), ValueError, "num_shards"),
    (dict(sampler=ds.SequentialSampler(), num_samples=3), ValueError, "num_samples"),
    (dict(sampler=[1, 2], shuffle=True), ValueError, "shuffle"),
    (dict(num_shards=2), ValueError, "together"),
    (dict(shard_id=0), ValueError, "together"),
    (dict(num_shards=2, shard_id=2), ValueError, "shard_id"),
    (dict(num_shards=0, shard_id=0), ValueError, "num_shards"),
    (dict(sampler="x"), TypeError, "sampler"),
    (dict(sampler=iter([1, 2])), TypeError, "one-shot"),
    (dict(shuffle=1), TypeError, "shuffle"),
    (dict(num_samples=-1), ValueError, "num_samples"),
    (dict(num_parallel_workers=0), ValueError, "num_parallel_workers"),
    (dict(no_such_option=1), TypeError, "no_such_option"),
])
def test_conflicting_or_unknown_arguments_raise(kw, err, words):
    for make in (lambda: ds.NumpySlicesDataset(DATA, column_names="a", **kw),
                 lambda: ds.GeneratorDataset([(np.array(i),) for i in DATA], "a", **kw)):
        with pytest.raises(err, match=words):
            make()


def test_out_of_range_sample_indices_raise_when_read():
    for d in _both(sampler=[1, 30]):
        with pytest.raises(RuntimeError, match="index 30 is out of range"):
            _ids(d)
    with pytest.raises(RuntimeError, match="start_index"):
        _ids(ds.NumpySlicesDataset(DATA, sampler=ds.SequentialSampler(start_index=10)))


def test_iterable_sources_refuse_sampling_arguments():
    def gen():
        return iter([(np.array(i),) for i in range(5)])
    assert _ids(ds.GeneratorDataset(gen, "a", num_samples=3)) == [0, 1, 2]
    for kw in (dict(sampler=[1]), dict(num_shards=2, shard_id=0), dict(shuffle=True)):
        with pytest.raises(ValueError, match="random-access"):
            ds.GeneratorDataset(gen, "a", **kw)


def test_generator_column_types_cast_and_schema_is_refused():
    d = ds.GeneratorDataset([(np.array(1),)], ["a"], column_types=[np.float16])
    assert next(d.create_tuple_iterator(output_numpy=True))[0].dtype == np.float16
    with pytest.raises(NotImplementedError, match="schema"):
        ds.GeneratorDataset([(1,)], ["a"], schema={"a": 1})


def test_iterator_columns_must_exist():
    d = ds.NumpySlicesDataset({"x": np.arange(3), "y": np.arange(3)}, shuffle=False)
    assert [r[0].tolist() for r in d.create_tuple_iterator(columns="y", output_numpy=True)] \
        == [0, 1, 2]
    with pytest.raises(ValueError, match=r"columns \['z'\] are not columns"):
        d.create_tuple_iterator(columns=["z"])


def test_numpy_slices_tuples_are_columns_and_lists_are_rows():
    a, b = np.arange(3), np.arange(3) * 10
    d = ds.NumpySlicesDataset([a, b], shuffle=False)            # MindSpore: one column
    assert d.get_col_names() == ["column_0"]
    assert [r[0].tolist() for r in d.create_tuple_iterator(output_numpy=True)] == \
        [[0, 1, 2], [0, 10, 20]]
    d = ds.NumpySlicesDataset((a, b), shuffle=False)
    assert d.get_col_names() == ["column_0", "column_1"]
    assert [[x.tolist() for x in r] for r in d.create_tuple_iterator(output_numpy=True)] == \
        [[0, 0], [1, 10], [2, 20]]
    with pytest.raises(ValueError, match="data is empty"):
        ds.NumpySlicesDataset([])
    with pytest.raises(TypeError, match="data must be a list"):
        ds.NumpySlicesDataset(range(3))


def test_map_and_batch_take_mindspores_worker_options_and_refuse_the_rest():
    d = ds.NumpySlicesDataset(DATA, column_names="a", shuffle=False)
    m = d.map(lambda a: a * 2, input_columns="a", num_parallel_workers=4,
              python_multiprocessing=True).batch(5, num_parallel_workers=2)
    assert [r[0].tolist() for r in m.create_tuple_iterator(output_numpy=True)] == \
        [[0, 2, 4, 6, 8], [10, 12, 14, 16, 18]]
    with pytest.raises(ValueError, match="num_parallel_workers"):
        d.map(abs, num_parallel_workers=0)
    first = next(d.batch(2, per_batch_map=lambda a, info: (a,)).create_tuple_iterator(
        output_numpy=True))
    assert first[0].tolist() == [0, 1]
    with pytest.raises(TypeError, match="no_such_option"):
        d.batch(2, no_such_option=1)


def test_a_generator_object_is_read_again_every_epoch():
    def gen():
        for i in range(4):
            yield (np.array(i),)
    d = ds.GeneratorDataset(gen(), ["a"])
    assert d.get_dataset_size() == 4                    # counting does not use the rows up
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=2)
    assert [int(r[0]) for r in it] == [0, 1, 2, 3] and [int(r[0]) for r in it] == [0, 1, 2, 3]
    z = ds.GeneratorDataset(zip(range(3), range(3)), ["a", "b"])
    assert z.get_dataset_size() == 3 and len(list(z)) == 3


@pytest.mark.parametrize("call, err, words", [
    (lambda d: d.repeat(0), ValueError, "count must be"),
    (lambda d: d.repeat(-5), ValueError, "count must be"),
    (lambda d: d.shuffle(1), ValueError, "buffer_size must be an int >= 2"),
    (lambda d: d.batch(2, drop_remainder=1), TypeError, "drop_remainder must be a bool"),
])
def test_pipeline_arguments_mindspore_rejects_raise(call, err, words):
    with pytest.raises(err, match=words):
        call(ds.NumpySlicesDataset(DATA, shuffle=False))


def test_a_source_that_is_no_sequence_raises():
    with pytest.raises(TypeError, match="source must be callable, iterable or random-access"):
        ds.GeneratorDataset(3, ["a"])
    with pytest.raises(ValueError, match="num_epochs must be -1"):
        ds.NumpySlicesDataset(DATA).create_tuple_iterator(num_epochs=0)


def test_unseeded_shards_of_separate_processes_partition_the_rows():
    # each rank of a data-parallel job is its own process: without set_seed their shuffled
    # shards must still come from one permutation (MindSpore's do: its sharded shuffle is
    # seeded the same in every process), and one shard reads that permutation whole
    import subprocess
    import sys
    code = ("import sys, numpy as np, minispore.dataset as ds; n, r = map(int, sys.argv[1:]); "
            "d = ds.NumpySlicesDataset({'a': np.arange(20)}, shuffle=True, num_shards=n, "
            "shard_id=r); print([int(x['a']) for x in d.create_dict_iterator(num_epochs=1, "
            "output_numpy=True)])")
    got = {}
    for n, r in ((1, 0), (2, 0), (2, 1)):
        out = subprocess.run([sys.executable, "-c", code, str(n), str(r)], capture_output=True,
                             text=True, check=True).stdout
        got[n, r] = eval(out)
    whole = got[1, 0]
    assert sorted(whole) == list(range(20)) and whole != list(range(20))
    assert got[2, 0] == whole[0::2] and got[2, 1] == whole[1::2]
