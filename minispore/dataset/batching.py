"""`Dataset.batch` and `Dataset.padded_batch` as MindSpore 2.x defines them, and BatchInfo.

A batch takes `batch_size` consecutive rows (an int, or a callable given a BatchInfo before
each batch), optionally runs `per_batch_map(col_1_rows, ..., col_k_rows, batch_info)` on the
lists of rows of `input_columns` (on parallel workers, batches kept in order), and stacks each
column. BatchInfo numbers batches from 0 in every pass over the input (a `repeat` above starts
it again) and epochs as the iterator counts them. `padded_batch` pads (or crops) the columns
named in `pad_info` to one shape before stacking; `bucket_batch_by_length` batches rows of
similar length together.
"""
from __future__ import annotations

import numpy as np

from ..core.arg_checks import check_bool
from . import config
from .base import Dataset, Epoch, outer_epoch
from .parallel_map import op_name, ordered_map, resolve_workers
from .pipeline_ops import _check_columns, _names, column_layout, pick


class BatchInfo:
    """What a callable batch_size and per_batch_map learn about the batch being made."""

    def __init__(self, epoch_num: int = 0, batch_num: int = 0):
        self._epoch_num, self._batch_num = int(epoch_num), int(batch_num)

    def get_epoch_num(self) -> int:
        """The iterator's epoch, from 0."""
        return self._epoch_num

    def get_batch_num(self) -> int:
        """The batch within this pass over the input, from 0."""
        return self._batch_num

    def __repr__(self):
        return f"BatchInfo(epoch_num={self._epoch_num}, batch_num={self._batch_num})"


def _check_pad_info(pad_info, columns: list):
    if pad_info is None:
        return None
    if not isinstance(pad_info, dict):
        raise TypeError(f"padded_batch: pad_info must be a dict {{column: (shape, value)}} or "
                        f"None, got {type(pad_info).__name__}")
    _check_columns("padded_batch", "pad_info keys", list(pad_info), columns)
    out = {}
    for col, spec in pad_info.items():
        if not isinstance(spec, (tuple, list)) or len(spec) != 2:
            raise TypeError(f"padded_batch: pad_info[{col!r}] must be (shape, value), got "
                            f"{spec!r}")
        shape, value = spec
        if shape is not None and (not isinstance(shape, (list, tuple)) or not all(
                d is None or (isinstance(d, int) and not isinstance(d, bool) and d > 0)
                for d in shape)):
            raise ValueError(f"padded_batch: the shape of pad_info[{col!r}] must be None or a "
                             f"list of ints > 0 (None: the batch's largest), got {shape!r}")
        out[col] = (None if shape is None else list(shape), value)
    return out


def _pad(who: str, col: str, arrays: list, shape, value) -> list:
    ranks = {a.ndim for a in arrays}
    if len(ranks) != 1:
        raise RuntimeError(f"{who}: the rows of column {col!r} have different ranks "
                           f"{sorted(ranks)}; padding needs one rank")
    rank = ranks.pop()
    largest = [max(a.shape[d] for a in arrays) for d in range(rank)]
    if shape is None:
        shape = largest
    if len(shape) != rank:
        raise RuntimeError(f"{who}: pad_info gives column {col!r} the shape {shape}, of rank "
                           f"{len(shape)}, but its rows have rank {rank}")
    target = tuple(m if s is None else s for s, m in zip(shape, largest))
    out = []
    for a in arrays:
        padded = np.full(target, value, dtype=a.dtype) if a.dtype.kind not in "US" else \
            np.full(target, "" if value in (0, None) else value, dtype=a.dtype)
        crop = tuple(slice(0, min(n, t)) for n, t in zip(a.shape, target))
        padded[crop] = a[crop]                     # a larger row is cropped, as in MindSpore
        out.append(padded)
    return out


class BatchDataset(Dataset):
    def __init__(self, parent, batch_size, drop_remainder=False, num_parallel_workers=None,
                 per_batch_map=None, input_columns=None, output_columns=None,
                 python_multiprocessing=False, max_rowsize=None, pad_info=None,
                 who: str = "batch"):
        super().__init__(parent)
        self.who = who
        if not callable(batch_size) and (not isinstance(batch_size, int) or
                                         isinstance(batch_size, bool) or batch_size < 1):
            raise ValueError(f"{who}: batch_size must be an int >= 1 or a callable taking a "
                             f"BatchInfo, got {batch_size!r}")
        self.batch_size = batch_size
        self.drop_remainder = check_bool(who, "drop_remainder", drop_remainder)
        self.workers = resolve_workers(who, num_parallel_workers, python_multiprocessing,
                                       max_rowsize)
        self.processes = python_multiprocessing
        self.pad_info = _check_pad_info(pad_info, parent.column_names)
        cols = parent.column_names
        if per_batch_map is None:
            for name, v in [("input_columns", input_columns),
                            ("output_columns", output_columns)]:
                if v is not None:
                    raise ValueError(f"{who}: {name}= needs per_batch_map (it names the "
                                     f"columns per_batch_map reads and writes)")
            self.per_batch_map, self.ins = None, list(cols)
            self.layout = [(c, ("out", k)) for k, c in enumerate(cols)]
        else:
            if not callable(per_batch_map):
                raise TypeError(f"{who}: per_batch_map must be callable, got "
                                f"{type(per_batch_map).__name__}")
            self.per_batch_map = per_batch_map
            ins = list(cols) if input_columns is None else \
                _names(who, "input_columns", input_columns)
            _check_columns(who, "input_columns", ins, cols)
            outs = ins if output_columns is None else \
                _names(who, "output_columns", output_columns)
            self.ins, self.outs, self.n_outs = ins, outs, len(outs)
            self.layout = column_layout(cols, ins, outs)
            kept = [c for c in cols if c not in ins]
            if len(ins) != len(outs) and len(kept) > 1:
                import warnings
                warnings.warn(f"{who}: per_batch_map turns {len(ins)} column(s) into "
                              f"{len(outs)}; minispore puts the untouched columns {kept} after "
                              f"the outputs in their order, MindSpore in the order of a C++ "
                              f"hash map; call .project([...]) after batch to fix the column "
                              f"order for both", stacklevel=3)
        self.column_names = [c for c, _ in self.layout]

    def get_batch_size(self):
        return -1 if callable(self.batch_size) else self.batch_size

    def _size_of_batch(self, epoch, batch_num) -> int:
        if not callable(self.batch_size):
            return self.batch_size
        size = self.batch_size(BatchInfo(outer_epoch(epoch), batch_num))
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
            raise ValueError(f"{self.who}: the batch_size callable must return an int >= 1, "
                             f"got {size!r}")
        return int(size)

    def _groups(self, epoch):
        """(rows, BatchInfo) of each batch of this pass, in order."""
        num, buf = 0, []
        want = self._size_of_batch(epoch, num)
        for row in self.parent._rows(epoch):
            buf.append(row)
            if len(buf) == want:
                yield buf, BatchInfo(outer_epoch(epoch), num)
                num, buf = num + 1, []
                want = self._size_of_batch(epoch, num)
        if buf and not self.drop_remainder:
            yield buf, BatchInfo(outer_epoch(epoch), num)

    def _make(self, group):
        rows, info = group
        if self.per_batch_map is None:
            return self._stack(list(zip(*rows)), self.column_names)
        cols = self.parent.column_names
        lists = [[r[cols.index(c)] for r in rows] for c in self.ins]
        out = self.per_batch_map(*lists, info)
        if not isinstance(out, tuple):
            raise TypeError(f"{self.who}: per_batch_map must return a tuple of lists (one list "
                            f"of rows per output column), got {type(out).__name__}; return "
                            f"(rows,) for one column")
        if len(out) != self.n_outs:
            raise RuntimeError(f"{self.who}: per_batch_map returned {len(out)} column(s) but "
                               f"output_columns names {self.n_outs}; give output_columns one "
                               f"name per returned list")
        outs = self._stack([list(o) for o in out], self.outs)
        kept = self._stack(list(zip(*rows)), cols)
        return pick(self.layout, kept, outs)

    def _stack(self, columns, names):
        out = []
        for k, rows in enumerate(columns):
            arrays = [np.asarray(x) for x in rows]
            name = names[k] if names and k < len(names) else f"#{k}"
            if self.pad_info is not None and (not self.pad_info or name in self.pad_info):
                shape, value = self.pad_info.get(name, (None, 0))
                arrays = _pad(self.who, name, arrays, shape, 0 if value is None else value)
            try:
                out.append(np.stack(arrays))
            except ValueError:
                raise RuntimeError(
                    f"{self.who}: the rows of column {name!r} have different shapes "
                    f"{sorted({a.shape for a in arrays})} and cannot be stacked; pad them "
                    f"(padded_batch with pad_info) or resize them in a map first") from None
        return tuple(out)

    def _rows(self, epoch):
        if self.per_batch_map is None:
            for group in self._groups(epoch):
                yield self._make(group)
            return
        batches = ordered_map(self._make, self._groups(epoch), self.workers, self.processes,
                              config.get_prefetch_size(), self.who,
                              op_name(self.per_batch_map), key=id(self))
        try:
            yield from batches
        finally:
            batches.close()

    def _size(self):
        n = self.parent._size()
        if not callable(self.batch_size):
            return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)
        count, num = 0, 0
        while n > 0:
            want = self._size_of_batch(Epoch(0), num)
            if want > n and self.drop_remainder:
                break
            n, count, num = n - want, count + 1, num + 1
        return count




def _int_list(who: str, name: str, value, low: int) -> list:
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise TypeError(f"{who}: {name} must be a list of ints, got {value!r}")
    if any(v < low for v in value):
        raise ValueError(f"{who}: {name} must only contain numbers >= {low}, got {list(value)}")
    return list(value)


class BucketBatchByLengthDataset(Dataset):
    """MindSpore's bucket_batch_by_length: each row goes to the bucket its length falls in
    ([0, b0), [b0, b1), ..., [b_last, inf)); a bucket that holds its batch size is emitted at
    once, padded; what is left at the end of the pass follows in bucket order (unless
    drop_remainder). pad_info None or {} pads every column to the batch's largest with 0."""

    def __init__(self, parent, column_names, bucket_boundaries, bucket_batch_sizes,
                 element_length_function=None, pad_info=None, pad_to_bucket_boundary=False,
                 drop_remainder=False):
        super().__init__(parent)
        who = self.who = "bucket_batch_by_length"
        names = _names(who, "column_names", column_names)
        _check_columns(who, "column_names", names, parent.column_names)
        self.idx = [parent.column_names.index(c) for c in names]
        self.bounds = _int_list(who, "bucket_boundaries", bucket_boundaries, 1)
        if any(a >= b for a, b in zip(self.bounds, self.bounds[1:])):
            raise ValueError(f"{who}: bucket_boundaries should be strictly increasing, got "
                             f"{self.bounds}")
        self.sizes = _int_list(who, "bucket_batch_sizes", bucket_batch_sizes, 1)
        if len(self.sizes) != len(self.bounds) + 1:
            raise ValueError(f"{who}: bucket_batch_sizes must contain one element more than "
                             f"bucket_boundaries (got {len(self.sizes)} and "
                             f"{len(self.bounds)})")
        if element_length_function is None and len(names) != 1:
            raise ValueError(f"{who}: if element_length_function is not specified, exactly one "
                             f"column name should be passed, got {names}")
        if element_length_function is not None and not callable(element_length_function):
            raise TypeError(f"{who}: element_length_function must be callable, got "
                            f"{type(element_length_function).__name__}")
        self.length_fn = element_length_function
        self.pad_info = _check_pad_info({} if pad_info is None else pad_info,
                                        parent.column_names)
        self.to_boundary = check_bool(who, "pad_to_bucket_boundary", pad_to_bucket_boundary)
        self.drop_remainder = check_bool(who, "drop_remainder", drop_remainder)

    def _bucket(self, row) -> int:
        import bisect
        cols = [row[i] for i in self.idx]
        if self.length_fn is None:
            if np.ndim(cols[0]) == 0:
                raise RuntimeError(f"{self.who}: column {self.parent.column_names[self.idx[0]]!r}"
                                   f" holds scalars, which have no length; pass "
                                   f"element_length_function")
            length = np.shape(cols[0])[0]
        else:
            length = self.length_fn(*cols)
            if not isinstance(length, (int, np.integer)) or isinstance(length, bool) or \
                    length < 0:
                raise RuntimeError(f"{self.who}: element_length_function must return an int "
                                   f">= 0, got {length!r}")
        return bisect.bisect_right(self.bounds, int(length))

    def _batch(self, rows, bucket):
        out = []
        for k, (name, col) in enumerate(zip(self.parent.column_names, zip(*rows))):
            arrays = [np.asarray(x) for x in col]
            if not self.pad_info or name in self.pad_info:
                shape, value = self.pad_info.get(name, (None, 0))
                if self.to_boundary and shape is not None and None in shape:
                    if bucket == len(self.bounds):
                        raise RuntimeError(f"{self.who}: pad_to_bucket_boundary=True, but a "
                                           f"row fell in the last bucket (length >= "
                                           f"{self.bounds[-1]}), which has no boundary to pad "
                                           f"to; add a larger bucket boundary")
                    shape = [self.bounds[bucket] - 1 if d is None else d for d in shape]
                arrays = _pad(self.who, name, arrays, shape, 0 if value is None else value)
            try:
                out.append(np.stack(arrays))
            except ValueError:
                raise RuntimeError(f"{self.who}: the rows of column {name!r} have different "
                                   f"shapes {sorted({a.shape for a in arrays})}; give it a "
                                   f"pad_info entry") from None
        return tuple(out)

    def _rows(self, epoch):
        buckets = [[] for _ in self.sizes]
        for row in self.parent._rows(epoch):
            b = self._bucket(row)
            buckets[b].append(row)
            if len(buckets[b]) == self.sizes[b]:
                yield self._batch(buckets[b], b)
                buckets[b] = []
        if not self.drop_remainder:
            for b, rows in enumerate(buckets):
                if rows:
                    yield self._batch(rows, b)

    def _size(self):
        return sum(1 for _ in self._rows(Epoch(0)))


__all__ = ["BatchDataset", "BatchInfo", "BucketBatchByLengthDataset"]
