"""`mindspore.dataset.Dataset`: the node every pipeline is built of, and MindSpore's methods on
it (the operations that chain a new node: map, batch, shuffle, repeat, ...; the getters:
get_dataset_size, output_shapes, ...; the iterators).

A dataset is a chain of nodes; iterating it pulls rows (tuples of numpy arrays, one per column)
from the source through each node, epoch by epoch. A node implements `_rows(epoch)` (a
generator of the rows of that epoch) and `_size()` (rows per epoch, computed from the sizes
of its inputs where that is possible without reading them). `epoch` is an int that also
carries `.outer`, the epoch of the iterator (it differs from `epoch` below a `repeat`, which
gives each of its passes its own epoch so random samplers and shuffles draw anew).
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ..core.arg_checks import check_bool


class Epoch(int):
    """The epoch number a node reads, with `.outer`, the iterator's epoch (BatchInfo's)."""

    def __new__(cls, value: int, outer: int | None = None):
        self = super().__new__(cls, value)
        self.outer = int(value) if outer is None else int(outer)
        return self


def outer_epoch(epoch) -> int:
    return getattr(epoch, "outer", int(epoch))


def _check_count(who: str, name: str, value, low: int, allow_minus_one: bool = False):
    if not isinstance(value, int) or isinstance(value, bool) or \
            (value < low and not (allow_minus_one and value == -1)):
        extra = "-1 or " if allow_minus_one else ""
        raise ValueError(f"{who}: {name} must be {extra}an int >= {low}, got {value!r}")
    return value


class Dataset:
    """A node of the pipeline. Subclasses implement `_rows(epoch)` and `_size()`."""

    column_names: list

    def __init__(self, parent: "Dataset | None" = None):
        self.parent = parent
        if parent is not None:
            self.column_names = list(parent.column_names)

    @property
    def children(self) -> list:
        return [] if self.parent is None else [self.parent]

    # -- operations ---------------------------------------------------------------------------
    def map(self, operations, input_columns=None, output_columns=None,
            num_parallel_workers=None, *, python_multiprocessing=False, max_rowsize=None,
            cache=None, callbacks=None, offload=None) -> "Dataset":
        """Apply `operations` in order (each one's outputs are the next one's inputs) to
        `input_columns` (default: the first column); the last one's outputs are named
        `output_columns` (default: the input columns). Runs on `num_parallel_workers` threads
        (processes with python_multiprocessing=True), rows kept in order. max_rowsize sizes
        MindSpore's shared memory; minispore's worker processes pickle the rows, so it is
        only checked."""
        for name, v in [("cache", cache), ("callbacks", callbacks), ("offload", offload)]:
            if v is not None:
                raise NotImplementedError(f"map: {name}= is not supported by minispore; "
                                          f"remove it (callbacks: watch the rows in the "
                                          f"training loop instead)")
        return _ops.MapDataset(self, operations, input_columns, output_columns,
                               num_parallel_workers, python_multiprocessing, max_rowsize)

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, *,
              per_batch_map=None, input_columns=None, output_columns=None,
              python_multiprocessing=False, max_rowsize=None) -> "Dataset":
        """Stack `batch_size` consecutive rows (an int, or a callable taking a BatchInfo),
        after `per_batch_map(col_1_list, ..., col_k_list, batch_info)` if given."""
        return _batch.BatchDataset(self, batch_size, drop_remainder, num_parallel_workers,
                                   per_batch_map, input_columns, output_columns,
                                   python_multiprocessing, max_rowsize)

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None,
                     pad_info=None) -> "Dataset":
        """batch, padding each column named in `pad_info` {column: (shape or None, value)}
        (pad_info={}: every column to the largest shape in the batch, with 0)."""
        return _batch.BatchDataset(self, batch_size, drop_remainder, num_parallel_workers,
                                   pad_info=pad_info, who="padded_batch")

    def bucket_batch_by_length(self, column_names, bucket_boundaries, bucket_batch_sizes,
                               element_length_function=None, pad_info=None,
                               pad_to_bucket_boundary=False, drop_remainder=False):
        """Batch rows of similar length: bucket k holds lengths in [boundary[k-1],
        boundary[k]) and is emitted, padded, whenever it holds bucket_batch_sizes[k] rows."""
        return _batch.BucketBatchByLengthDataset(
            self, column_names, bucket_boundaries, bucket_batch_sizes, element_length_function,
            pad_info, pad_to_bucket_boundary, drop_remainder)

    def shuffle(self, buffer_size: int) -> "Dataset":
        return _ops.ShuffleDataset(self, buffer_size)

    def repeat(self, count: int | None = None) -> "Dataset":
        return _ops.RepeatDataset(self, count)

    def project(self, columns) -> "Dataset":
        return _ops.ProjectDataset(self, columns)

    def rename(self, input_columns, output_columns) -> "Dataset":
        return _ops.RenameDataset(self, input_columns, output_columns)

    def take(self, count: int = -1) -> "Dataset":
        return _ops.TakeDataset(self, count)

    def skip(self, count: int) -> "Dataset":
        return _ops.SkipDataset(self, count)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None) -> "Dataset":
        return _ops.FilterDataset(self, predicate, input_columns, num_parallel_workers)

    def zip(self, datasets) -> "Dataset":
        others = [datasets] if isinstance(datasets, Dataset) else _dataset_list("zip",
                                                                                datasets)
        return _ops.ZipDataset([self] + others)

    def concat(self, datasets) -> "Dataset":
        others = [datasets] if isinstance(datasets, Dataset) else _dataset_list("concat",
                                                                                datasets)
        return _ops.ConcatDataset([self] + others)

    def __add__(self, datasets) -> "Dataset":
        return self.concat(datasets)

    def flat_map(self, func) -> "Dataset":
        """The concatenation of the datasets `func(*row)` returns for each row (read once,
        now, as MindSpore does)."""
        if not callable(func):
            raise TypeError(f"flat_map: func must be callable, got {type(func).__name__}")
        out = None
        for row in self.create_tuple_iterator(num_epochs=1, output_numpy=True):
            part = func(*row)
            if not isinstance(part, Dataset):
                raise TypeError(f"flat_map: func must return a Dataset, got "
                                f"{type(part).__name__}")
            out = part if out is None else out + part
        if out is None:
            raise ValueError("flat_map: the dataset has no rows, so func made no dataset")
        return out

    def apply(self, apply_func) -> "Dataset":
        if not callable(apply_func):
            raise TypeError(f"apply: apply_func must be callable, got "
                            f"{type(apply_func).__name__}")
        out = apply_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"apply: apply_func must return a Dataset, got "
                            f"{type(out).__name__}")
        return out

    def split(self, sizes, randomize: bool = True) -> tuple:
        """Non-overlapping datasets of the given sizes (ints summing to the dataset size, or
        fractions summing to 1, rounded as MindSpore does); see splitting.py."""
        from .splitting import split
        return split(self, sizes, randomize)

    # -- getters ------------------------------------------------------------------------------
    def get_dataset_size(self) -> int:
        """Rows per epoch (batches after `batch`)."""
        return self._size()

    def get_col_names(self) -> list:
        return list(self.column_names)

    def get_batch_size(self) -> int:
        return self.parent.get_batch_size() if self.parent is not None else 1

    def get_repeat_count(self) -> int:
        return self.parent.get_repeat_count() if self.parent is not None else 1

    def num_classes(self):
        return self.parent.num_classes() if self.parent is not None else None

    def is_shuffled(self) -> bool:
        return any(c.is_shuffled() for c in self.children)

    def is_sharded(self) -> bool:
        return any(c.is_sharded() for c in self.children)

    def output_shapes(self, estimate: bool = False) -> list:
        """The shape of each column of the first row (estimate=True: over every row of one
        epoch, None where a dimension varies), as lists."""
        check_bool("output_shapes", "estimate", estimate)
        shapes = None
        for row in self._first_rows(all_rows=estimate):
            now = [list(np.shape(x)) for x in row]
            if shapes is None:
                shapes = now
                continue
            shapes = [s if len(s) == len(n) and s == n else
                      ([a if a == b else None for a, b in zip(s, n)] if len(s) == len(n)
                       else [None] * len(n)) for s, n in zip(shapes, now)]
        return shapes if shapes is not None else []

    def output_types(self) -> list:
        """The numpy dtype of each column (of the first row); a string column is
        np.dtype('<U') whatever its length, as in MindSpore."""
        for row in self._first_rows(all_rows=False):
            kinds = [np.asarray(x).dtype for x in row]
            return [np.dtype(t.kind) if t.kind in "US" else t for t in kinds]
        return []

    def _first_rows(self, all_rows: bool):
        gen = self._rows(Epoch(0))
        try:
            for row in gen:
                yield row
                if not all_rows:
                    return
        finally:
            gen.close()

    # -- iterators ----------------------------------------------------------------------------
    def create_tuple_iterator(self, columns=None, num_epochs: int = -1, output_numpy=False,
                              do_copy=False):
        """Rows as lists of Tensors (numpy arrays with output_numpy=True)."""
        from .iterators import TupleIterator
        return TupleIterator(self, columns, num_epochs, output_numpy, do_copy)

    def create_dict_iterator(self, num_epochs: int = -1, output_numpy=False, do_copy=False):
        """Rows as {column name: Tensor} (numpy arrays with output_numpy=True)."""
        from .iterators import DictIterator
        return DictIterator(self, num_epochs, output_numpy, do_copy)

    def __iter__(self):
        return self.create_tuple_iterator(num_epochs=1)

    def _rows(self, epoch) -> Iterator[tuple]:
        raise NotImplementedError

    def _size(self) -> int:
        raise NotImplementedError


def _dataset_list(who: str, datasets) -> list:
    if not isinstance(datasets, (list, tuple)) or not datasets or \
            not all(isinstance(d, Dataset) for d in datasets):
        raise TypeError(f"{who}: datasets must be a Dataset or a non-empty list/tuple of "
                        f"Datasets, got {datasets!r}")
    return list(datasets)


from . import batching as _batch  # noqa: E402  (the operation nodes subclass Dataset)
from . import pipeline_ops as _ops  # noqa: E402
