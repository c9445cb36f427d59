"""`mindspore.dataset` in small: sources (GeneratorDataset, NumpySlicesDataset, the digits data
that ships inside scikit-learn) and a lazy pipeline (shuffle, map, batch, repeat) read through
tuple or dict iterators.

A dataset is a chain of nodes; iterating it pulls rows (tuples of numpy arrays, one per column)
from the source through each node, epoch by epoch. Random order comes from `config.set_seed`
(MindSpore's `dataset.config.set_seed`) combined with the epoch number, so a seeded pipeline
gives the same batches in every run and a different order in every epoch.
"""
from __future__ import annotations

import itertools
from typing import Callable, Iterator

import numpy as np

from . import config
from .digits import load_digits


class Dataset:
    """A node of the pipeline. Subclasses implement `_rows(epoch)` and `_size()`."""

    column_names: list

    def __init__(self, parent: "Dataset | None" = None):
        self.parent = parent
        if parent is not None:
            self.column_names = list(parent.column_names)

    # -- pipeline -----------------------------------------------------------------------------
    def batch(self, batch_size: int, drop_remainder: bool = False) -> "Dataset":
        return BatchDataset(self, batch_size, drop_remainder)

    def shuffle(self, buffer_size: int) -> "Dataset":
        return ShuffleDataset(self, buffer_size)

    def map(self, operations, input_columns=None, output_columns=None) -> "Dataset":
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
        self.ds, self.num_epochs, self.numpy, self.as_dict = ds, num_epochs, output_numpy, as_dict
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
    random-access object (`__getitem__` + `__len__`, shuffled by default as in MindSpore)."""

    def __init__(self, source, column_names, shuffle=None, num_samples=None, **_ignored):
        super().__init__()
        if isinstance(column_names, str):
            column_names = [column_names]
        self.column_names = list(column_names)
        self.source = source
        self.random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if shuffle and not self.random_access:
            raise ValueError("GeneratorDataset: shuffle=True needs a random-access source "
                             "(__getitem__ and __len__); use .shuffle(buffer_size) instead")
        self.do_shuffle = self.random_access if shuffle is None else bool(shuffle)
        self.num_samples = num_samples

    def _rows(self, epoch):
        n = len(self.column_names)
        if self.random_access:
            order = np.arange(len(self.source))
            if self.do_shuffle:
                order = config.rng(epoch).permutation(order)
            if self.num_samples is not None:
                order = order[:self.num_samples]
            for i in order:
                yield _as_row(self.source[int(i)], n)
            return
        it = self.source() if callable(self.source) else iter(self.source)
        for k, item in enumerate(it):
            if self.num_samples is not None and k >= self.num_samples:
                return
            yield _as_row(item, n)

    def _size(self):
        if self.random_access:
            n = len(self.source)
        else:
            n = sum(1 for _ in (self.source() if callable(self.source) else iter(self.source)))
        return n if self.num_samples is None else min(n, self.num_samples)


class NumpySlicesDataset(Dataset):
    """Rows are slices along the first axis of arrays: a list/tuple of arrays, a dict
    {column: array} or one array."""

    def __init__(self, data, column_names=None, shuffle=None, **_ignored):
        super().__init__()
        if isinstance(data, dict):
            names, cols = list(data), [np.asarray(v) for v in data.values()]
        elif isinstance(data, (list, tuple)) and data and isinstance(data[0], np.ndarray):
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
        self.cols, self.column_names = cols, names
        self.do_shuffle = True if shuffle is None else bool(shuffle)

    def _rows(self, epoch):
        order = np.arange(len(self.cols[0]))
        if self.do_shuffle:
            order = config.rng(epoch).permutation(order)
        for i in order:
            yield tuple(c[i] for c in self.cols)

    def _size(self):
        return len(self.cols[0])


# ------------------------------------------------------------------------------ pipeline -----
class BatchDataset(Dataset):
    def __init__(self, parent, batch_size, drop_remainder):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch: batch_size must be an int >= 1, got {batch_size!r}")
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
        if not isinstance(buffer_size, int) or buffer_size < 1:
            raise ValueError(f"shuffle: buffer_size must be an int >= 1, got {buffer_size!r}")
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


__all__ = ["Dataset", "GeneratorDataset", "NumpySlicesDataset", "config", "load_digits"]
