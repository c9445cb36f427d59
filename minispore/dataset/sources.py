"""The Python-data sources of a pipeline: `GeneratorDataset` (a callable returning an iterator,
an iterable, or a random-access object) and `NumpySlicesDataset` (slices of arrays), with
MindSpore 2.x's arguments.

A random-access source (`__getitem__` + `__len__`) is read through a sampler chosen from
`sampler`, `shuffle` (default: shuffled, as in MindSpore), `num_samples`, `num_shards` and
`shard_id` (`samplers.select_sampler`); with num_parallel_workers > 1 its rows are fetched by
that many worker processes (python_multiprocessing=True, MindSpore's default) or threads, in
the sampler's order. An iterable source is read in its own order, in the calling thread (an
iterator has one position, so it cannot be read in parallel), at most `num_samples` rows. An
exception raised by the source reaches the reader as a RuntimeError carrying its traceback
text, as in MindSpore.
"""
from __future__ import annotations

import itertools

import numpy as np

from . import config, samplers
from .base import Dataset
from .parallel_map import error_text, ordered_map, resolve_workers


def _as_row(item, n: int) -> tuple:
    row = tuple(item) if isinstance(item, (tuple, list)) else (item,)
    if len(row) != n:
        raise ValueError(f"GeneratorDataset: a row has {len(row)} column(s) but column_names "
                         f"names {n}; yield one value per column")
    return tuple(np.asarray(x) for x in row)


class GeneratorDataset(Dataset):
    """Rows from a Python source (see the module docstring). `column_types` casts each column
    to that dtype. `max_rowsize` sizes shared memory in MindSpore; here rows travel between
    processes pickled, so it needs no setting and is only checked."""

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
        self.workers = resolve_workers(who, num_parallel_workers, python_multiprocessing,
                                       max_rowsize)       # None: the configured default
        self.processes = python_multiprocessing
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

    def is_shuffled(self):
        return self.sampler is not None and self.sampler.is_shuffled()

    def is_sharded(self):
        return self.sampler is not None and self.sampler.is_sharded()

    def _row(self, item):
        row = _as_row(item, len(self.column_names))
        if self.column_types is not None:
            row = tuple(x.astype(t, copy=False) for x, t in zip(row, self.column_types))
        return row

    def _fetch(self, i):
        return self._row(self.source[int(i)])

    def _rows(self, epoch):
        who = type(self).__name__
        if self.random_access:
            idx = self.sampler.indices(len(self.source), epoch)
            rows = ordered_map(self._fetch, idx, self.workers, self.processes,
                               config.get_prefetch_size(), who, type(self.source).__name__,
                               key=id(self))
            try:
                yield from rows
            finally:
                rows.close()
            return
        it = self.source() if callable(self.source) else iter(self.source)
        for k in itertools.count():
            if self.num_samples and k >= self.num_samples:
                return
            try:
                row = self._row(next(it))
            except StopIteration:
                return
            except Exception as e:
                raise RuntimeError(error_text(who, type(self.source).__name__, e)) from e
            yield row

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


def _check_shards(who, num_shards, shard_id):
    if (num_shards is None) != (shard_id is None):
        raise ValueError(f"{who}: num_shards and shard_id must be passed together, got "
                         f"num_shards={num_shards!r}, shard_id={shard_id!r}")
    if num_shards is None:
        return
    for name, v in [("num_shards", num_shards), ("shard_id", shard_id)]:
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{who}: {name} must be an int, got {v!r} ({type(v).__name__})")
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
    GeneratorDataset; num_parallel_workers > 1 slices on threads (the arrays are in memory)."""

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
                         sampler=sampler, num_shards=num_shards, shard_id=shard_id,
                         python_multiprocessing=False)


__all__ = ["GeneratorDataset", "NumpySlicesDataset"]
