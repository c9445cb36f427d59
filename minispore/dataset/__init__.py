"""`mindspore.dataset` in small: sources (GeneratorDataset, NumpySlicesDataset, the digits data
that ships inside scikit-learn) and a lazy pipeline (shuffle, map, batch, repeat) read through
tuple or dict iterators.

A dataset is a chain of nodes; iterating it pulls rows (tuples of numpy arrays, one per column)
from the source through each node, epoch by epoch. Random order comes from `config.set_seed`
(MindSpore's `dataset.config.set_seed`) combined with the epoch number, so a seeded pipeline
gives the same batches in every run and a different order in every epoch. Which rows of a
random-access source an epoch reads is a sampler's choice (`samplers.py`).
"""
from __future__ import annotations

import itertools
from typing import Callable, Iterator

import numpy as np

from ..core.arg_checks import check_bool
from . import config, samplers
from .digits import load_digits
from .samplers import (DistributedSampler, RandomSampler, Sampler, SequentialSampler,
                       SubsetRandomSampler, SubsetSampler, WeightedRandomSampler)


class Dataset:
    """A node of the pipeline. Subclasses implement `_rows(epoch)` and `_size()`."""

    column_names: list

    def __init__(self, parent: "Dataset | None" = None):
        self.parent = parent
        if parent is not None:
            self.column_names = list(parent.column_names)

    # -- pipeline -----------------------------------------------------------------------------
    # num_parallel_workers, python_multiprocessing and max_rowsize are validated; rows are
    # produced in the calling thread, the same rows in the same order as MindSpore's workers
    def batch(self, batch_size: int, drop_remainder: bool = False, num_parallel_workers=None,
              per_batch_map=None, input_columns=None, output_columns=None,
              python_multiprocessing=False, max_rowsize=None) -> "Dataset":
        _check_workers("batch", 1 if num_parallel_workers is None else num_parallel_workers,
                       python_multiprocessing, max_rowsize)
        if per_batch_map is not None or input_columns is not None or \
                output_columns is not None:
            raise NotImplementedError("batch: per_batch_map/input_columns/output_columns are "
                                      "not supported by minispore; transform the rows with "
                                      "map() before batch()")
        return BatchDataset(self, batch_size, drop_remainder)

    def shuffle(self, buffer_size: int) -> "Dataset":
        return ShuffleDataset(self, buffer_size)

    def map(self, operations, input_columns=None, output_columns=None,
            num_parallel_workers=None, python_multiprocessing=False, max_rowsize=None,
            callbacks=None) -> "Dataset":
        _check_workers("map", 1 if num_parallel_workers is None else num_parallel_workers,
                       python_multiprocessing, max_rowsize)
        if callbacks is not None:
            raise NotImplementedError("map: callbacks are not supported by minispore")
        return MapDataset(self, operations, input_columns, output_columns)

    def repeat(self, count: int | None = None) -> "Dataset":
        return RepeatDataset(self, count)

    # -- reading ------------------------------------------------------------------------------
    def get_dataset_size(self) -> int:
        """Rows per epoch (batches after `batch`)."""
        return self._size()

    def get_col_names(self) -> list:
        return list(self.column_names)

    def create_tuple_iterator(self, columns=None, num_epochs: int = -1, output_numpy=False,
                              do_copy=True) -> "_Iterator":
        return _Iterator(self, num_epochs, output_numpy, as_dict=False, columns=columns)

    def create_dict_iterator(self, num_epochs: int = -1, output_numpy=False,
                             do_copy=True) -> "_Iterator":
        return _Iterator(self, num_epochs, output_numpy, as_dict=True)

    def __iter__(self):
        return self.create_tuple_iterator(num_epochs=1)

    def _rows(self, epoch: int) -> Iterator[tuple]:
        raise NotImplementedError

    def _size(self) -> int:
        raise NotImplementedError


class _Iterator:
    """Rows as lists of Tensors (or numpy arrays). As in MindSpore, one pass of a `for` loop is
    one epoch; iterating the same iterator again runs the next epoch, up to `num_epochs`
    (-1: no limit)."""

    def __init__(self, ds: Dataset, num_epochs: int, output_numpy: bool, as_dict: bool,
                 columns=None):
        if not isinstance(num_epochs, int) or isinstance(num_epochs, bool) or \
                (num_epochs != -1 and num_epochs < 1):
            raise ValueError(f"create_iterator: num_epochs must be -1 (no limit) or an int >= "
                             f"1, got {num_epochs!r}")
        self.ds, self.num_epochs, self.numpy, self.as_dict = ds, num_epochs, output_numpy, as_dict
        if isinstance(columns, str):
            columns = [columns]
        missing = [c for c in columns or () if c not in ds.column_names]
        if missing:
            raise ValueError(f"create_tuple_iterator: columns {missing} are not columns of the "
                             f"dataset {ds.column_names}")
        self.columns = [ds.column_names.index(c) for c in columns] if columns else None
        self.epoch = -1
        self._it = None

    def __iter__(self):
        if self._it is None:
            self._start()
        return self

    def _start(self):
        self.epoch += 1
        if self.num_epochs != -1 and self.epoch >= self.num_epochs:
            raise RuntimeError(f"the iterator was created for num_epochs={self.num_epochs} and "
                               f"all of them have been read; create a new iterator")
        self._it = self.ds._rows(self.epoch)

    def __next__(self):
        if self._it is None:
            self._start()
        try:
            row = next(self._it)
        except StopIteration:
            self._it = None                     # the next iteration starts the next epoch
            raise
        if self.columns is not None:
            row = tuple(row[i] for i in self.columns)
        if not self.numpy:
            from ..core.tensor import Tensor
            row = tuple(Tensor(np.asarray(x)) for x in row)
        if self.as_dict:
            return dict(zip(self.ds.column_names, row))
        return list(row)


# ------------------------------------------------------------------------------ sources ------
def _as_row(item, n: int) -> tuple:
    row = tuple(item) if isinstance(item, (tuple, list)) else (item,)
    if len(row) != n:
        raise ValueError(f"GeneratorDataset: a row has {len(row)} column(s) but column_names "
                         f"names {n}; yield one value per column")
    return tuple(np.asarray(x) for x in row)


class GeneratorDataset(Dataset):
    """Rows from a Python source: a callable returning an iterator, an iterable, or a
    random-access object (`__getitem__` + `__len__`). A random-access source is read through a
    sampler chosen from `sampler`, `shuffle` (default: shuffled, as in MindSpore),
    `num_samples`, `num_shards` and `shard_id` (see `samplers.select_sampler`); an iterable
    source is read in its own order, at most `num_samples` rows.

    `num_parallel_workers`, `python_multiprocessing` and `max_rowsize` are validated; rows are
    produced in the calling thread, which gives the same rows in the same order as MindSpore's
    parallel workers. `column_types` casts each column to that dtype."""

    def __init__(self, source, column_names=None, column_types=None, schema=None,
                 num_samples=None, num_parallel_workers=1, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, python_multiprocessing=True, max_rowsize=None,
                 batch_sampler=None, collate_fn=None):
        super().__init__()
        who = type(self).__name__
        for name, v in [("schema", schema), ("batch_sampler", batch_sampler),
                        ("collate_fn", collate_fn)]:
            if v is not None:
                raise NotImplementedError(f"{who}: {name}= is not supported by minispore; "
                                          f"name the columns with column_names and batch "
                                          f"with .batch()")
        if column_names is None:
            raise ValueError(f"{who}: column_names is required (one name per column the "
                             f"source yields)")
        self.column_names = [column_names] if isinstance(column_names, str) \
            else list(column_names)
        self.column_types = None
        if column_types is not None:
            from ..core import dtype as dt
            if not isinstance(column_types, list) or \
                    len(column_types) != len(self.column_names):
                raise TypeError(f"{who}: column_types must be a list of one dtype per column "
                                f"({len(self.column_names)}), got {column_types!r}")
            self.column_types = [dt.to_dtype(t).np for t in column_types]
        _check_workers(who, num_parallel_workers, python_multiprocessing, max_rowsize)
        if shuffle is not None and not isinstance(shuffle, bool):
            raise TypeError(f"{who}: shuffle must be a bool or None, got {shuffle!r} "
                            f"({type(shuffle).__name__})")
        self.num_samples = samplers._check_num_samples(num_samples, who)
        _check_shards(who, num_shards, shard_id)
        if isinstance(source, zip):
            source = list(source)
        elif not callable(source) and hasattr(source, "__next__") and iter(source) is source:
            source = _Replay(source)          # a generator object: read again every epoch
        self.source = source
        self.random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if not callable(source) and not self.random_access and not _iterable(source):
            raise TypeError(f"{who}: source must be callable, iterable or random-access "
                            f"(__getitem__ and __len__), got {type(source).__name__}")
        if self.random_access:
            self.sampler = samplers.select_sampler(who, num_samples, sampler, shuffle,
                                                   num_shards, shard_id)
        else:
            for name, v in [("sampler", sampler), ("num_shards", num_shards)]:
                if v is not None:
                    raise ValueError(f"{who}: {name}= needs a random-access source "
                                     f"(__getitem__ and __len__), got "
                                     f"{type(source).__name__}")
            if shuffle:
                raise ValueError(f"{who}: shuffle=True needs a random-access source "
                                 f"(__getitem__ and __len__); use .shuffle(buffer_size) "
                                 f"instead")
            self.sampler = None

    def _row(self, item):
        row = _as_row(item, len(self.column_names))
        if self.column_types is not None:
            row = tuple(x.astype(t, copy=False) for x, t in zip(row, self.column_types))
        return row

    def _rows(self, epoch):
        if self.random_access:
            for i in self.sampler.indices(len(self.source), epoch):
                yield self._row(self.source[int(i)])
            return
        it = self.source() if callable(self.source) else iter(self.source)
        for k, item in enumerate(it):
            if self.num_samples and k >= self.num_samples:
                return
            yield self._row(item)

    def _size(self):
        if self.random_access:
            return len(self.sampler.indices(len(self.source), 0))
        n = sum(1 for _ in (self.source() if callable(self.source) else iter(self.source)))
        return min(n, self.num_samples) if self.num_samples else n


def _iterable(source) -> bool:
    try:
        iter(source)
    except TypeError:
        return False
    return True


class _Replay:
    """A one-shot iterator (a generator object) that every epoch reads from the start, as
    MindSpore's GeneratorDataset does by teeing it (the rows read so far are kept)."""

    def __init__(self, it):
        self._src = it

    def __iter__(self):
        self._src, mine = itertools.tee(self._src)
        return mine


def _check_workers(who, num_parallel_workers, python_multiprocessing, max_rowsize):
    if not isinstance(num_parallel_workers, int) or isinstance(num_parallel_workers, bool) \
            or num_parallel_workers < 1:
        raise ValueError(f"{who}: num_parallel_workers must be an int >= 1, got "
                         f"{num_parallel_workers!r}")
    check_bool(who, "python_multiprocessing", python_multiprocessing)
    if max_rowsize is not None and (not isinstance(max_rowsize, int) or max_rowsize < -1):
        raise ValueError(f"{who}: max_rowsize must be an int >= -1, got {max_rowsize!r}")


def _check_shards(who, num_shards, shard_id):
    if (num_shards is None) != (shard_id is None):
        raise ValueError(f"{who}: num_shards and shard_id must be passed together, got "
                         f"num_shards={num_shards!r}, shard_id={shard_id!r}")
    if num_shards is None:
        return
    for name, v in [("num_shards", num_shards), ("shard_id", shard_id)]:
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{who}: {name} must be an int, got {v!r}")
    if num_shards < 1:
        raise ValueError(f"{who}: num_shards must be >= 1, got {num_shards}")
    if not 0 <= shard_id < num_shards:
        raise ValueError(f"{who}: shard_id must be in [0, {num_shards - 1}] for "
                         f"num_shards={num_shards}, got {shard_id}")


class _Slices:
    """Random access to row i of equally long columns."""

    def __init__(self, cols):
        self.cols = cols

    def __len__(self):
        return len(self.cols[0])

    def __getitem__(self, i):
        return tuple(c[i] for c in self.cols)


class NumpySlicesDataset(GeneratorDataset):
    """Rows are slices along the first axis of the data, as in MindSpore: a dict
    {column: array} or a tuple of arrays gives one column each; a list or one array is one
    column (a list of arrays: one row per array). Sampling arguments as in
    GeneratorDataset."""

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None):
        if not isinstance(data, (list, tuple, dict, np.ndarray)):
            raise TypeError(f"NumpySlicesDataset: data must be a list, tuple, dict or numpy "
                            f"array, got {type(data).__name__}")
        if len(data) == 0:
            raise ValueError("NumpySlicesDataset: data is empty; give at least one row")
        if isinstance(data, dict):
            names, cols = list(data), [np.asarray(v) for v in data.values()]
        elif isinstance(data, tuple) and data:          # a tuple is columns, a list is rows
            cols = [np.asarray(v) for v in data]
            names = [f"column_{i}" for i in range(len(cols))]
        else:
            cols, names = [np.asarray(data)], ["column_0"]
        if column_names is not None:
            names = [column_names] if isinstance(column_names, str) else list(column_names)
            if len(names) != len(cols):
                raise ValueError(f"NumpySlicesDataset: {len(cols)} column(s) of data but "
                                 f"{len(names)} column name(s)")
        lens = {len(c) for c in cols}
        if len(lens) != 1:
            raise ValueError(f"NumpySlicesDataset: the columns have different lengths "
                             f"{[len(c) for c in cols]}; slice arrays with equal first dims")
        self.cols = cols
        super().__init__(_Slices(cols), names, num_samples=num_samples,
                         num_parallel_workers=num_parallel_workers, shuffle=shuffle,
                         sampler=sampler, num_shards=num_shards, shard_id=shard_id)


# ------------------------------------------------------------------------------ pipeline -----
class BatchDataset(Dataset):
    def __init__(self, parent, batch_size, drop_remainder):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch: batch_size must be an int >= 1, got {batch_size!r}")
        check_bool("batch", "drop_remainder", drop_remainder)
        super().__init__(parent)
        self.batch_size, self.drop_remainder = batch_size, drop_remainder

    def _rows(self, epoch):
        buf = []
        for row in self.parent._rows(epoch):
            buf.append(row)
            if len(buf) == self.batch_size:
                yield self._stack(buf)
                buf = []
        if buf and not self.drop_remainder:
            yield self._stack(buf)

    def _stack(self, rows):
        try:
            return tuple(np.stack(col) for col in zip(*rows))
        except ValueError as e:
            raise ValueError(f"batch: rows of one column have different shapes and cannot be "
                             f"stacked ({e}); pad or resize them in a map first") from None

    def _size(self):
        n = self.parent._size()
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)


class ShuffleDataset(Dataset):
    """MindSpore's buffer shuffle: keep `buffer_size` rows, emit a random one, refill."""

    def __init__(self, parent, buffer_size):
        if not isinstance(buffer_size, int) or isinstance(buffer_size, bool) or buffer_size < 2:
            raise ValueError(f"shuffle: buffer_size must be an int >= 2 (1 would not shuffle), "
                             f"got {buffer_size!r}")
        super().__init__(parent)
        self.buffer_size = buffer_size

    def _rows(self, epoch):
        rng = config.rng(epoch, salt=1)
        buf = []
        for row in self.parent._rows(epoch):
            buf.append(row)
            if len(buf) >= self.buffer_size:
                yield buf.pop(int(rng.integers(len(buf))))
        while buf:
            yield buf.pop(int(rng.integers(len(buf))))

    def _size(self):
        return self.parent._size()


class MapDataset(Dataset):
    """Apply `operations` (one callable or a list applied in order) to `input_columns`; their
    results become `output_columns` (default: the input columns)."""

    def __init__(self, parent, operations, input_columns, output_columns):
        super().__init__(parent)
        ops = operations if isinstance(operations, (list, tuple)) else [operations]
        if not all(callable(op) for op in ops):
            raise TypeError("map: operations must be callables (or a list of them)")
        self.ops = ops
        cols = parent.column_names
        ins = input_columns if input_columns is not None else cols
        ins = [ins] if isinstance(ins, str) else list(ins)
        missing = [c for c in ins if c not in cols]
        if missing:
            raise ValueError(f"map: input_columns {missing} are not columns of the dataset "
                             f"{cols}")
        outs = output_columns if output_columns is not None else ins
        self.ins, self.outs = ins, [outs] if isinstance(outs, str) else list(outs)
        kept = [c for c in cols if c not in ins]
        self.column_names = (self.outs + kept) if output_columns is not None and \
            self.outs != ins else list(cols)

    def _rows(self, epoch):
        cols = self.parent.column_names
        idx = [cols.index(c) for c in self.ins]
        for row in self.parent._rows(epoch):
            vals = [row[i] for i in idx]
            for op in self.ops:
                out = op(*vals)
                vals = list(out) if isinstance(out, tuple) else [out]
            vals = [np.asarray(v) for v in vals]
            named = dict(zip(cols, row))
            named.update(zip(self.outs, vals))
            yield tuple(named[c] for c in self.column_names)

    def _size(self):
        return self.parent._size()


class RepeatDataset(Dataset):
    def __init__(self, parent, count):
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or
                                  (count != -1 and count < 1)):
            raise ValueError(f"repeat: count must be -1 (forever), None or an int >= 1, got "
                             f"{count!r}")
        super().__init__(parent)
        self.count = count

    def _rows(self, epoch):
        reps = itertools.count() if self.count in (None, -1) else range(self.count)
        for r in reps:
            yield from self.parent._rows(epoch * (self.count or 1) + r)

    def _size(self):
        if self.count in (None, -1):
            raise ValueError("get_dataset_size: the dataset repeats forever")
        return self.parent._size() * self.count


__all__ = ["Dataset", "GeneratorDataset", "NumpySlicesDataset", "config", "load_digits",
           "samplers", "Sampler", "SequentialSampler", "RandomSampler", "SubsetSampler",
           "SubsetRandomSampler", "DistributedSampler", "WeightedRandomSampler"]

from . import engine  # noqa: E402,F401  (MindSpore's module path mindspore.dataset.engine)
