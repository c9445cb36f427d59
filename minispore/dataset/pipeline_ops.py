"""The pipeline's row operations as MindSpore 2.x defines them: map, shuffle, repeat, project,
rename, take, skip, filter, zip and concat (batch is in batching.py).

Column order follows MindSpore's rules, which tuple iterators expose: a `map` whose outputs are
as many as its inputs writes them in place of the inputs (renamed to output_columns); one whose
counts differ puts its outputs first, then the untouched columns in their order; zip joins the
columns of its inputs in order; project reorders.
"""
from __future__ import annotations

import itertools

import numpy as np

from . import config
from .map_placement import INLINE_START_S, builtin_processes, copy_ops
from .vision_common import enter_row, leave_row
from .base import Dataset, Epoch, _check_count, outer_epoch
from .parallel_map import op_name, ordered_map, resolve_workers


def _names(who: str, arg: str, value) -> list:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names or \
            not all(isinstance(n, str) for n in names):
        raise TypeError(f"{who}: {arg} must be a column name or a non-empty list of them, got "
                        f"{value!r}")
    return list(names)


def _check_columns(who: str, arg: str, names: list, columns: list) -> None:
    missing = [c for c in names if c not in columns]
    if missing:
        raise ValueError(f"{who}: {arg} {missing} are not columns of the dataset {columns}")
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise ValueError(f"{who}: {arg} names {dup} more than once; name each column once")


def column_layout(columns: list, ins: list, outs: list) -> list:
    """MindSpore's column order after an operation maps `ins` to `outs`: (name, source) pairs,
    source ("out", k) for the k-th output or ("in", j) for input column j kept as it was."""
    if len(ins) == len(outs):
        where = {c: ("in", j) for j, c in enumerate(columns)}
        pos = {c: j for j, c in enumerate(columns)}
        slots = {pos[c]: None for c in ins}
        for c in ins:
            del where[c]
        for k, (c, o) in enumerate(zip(ins, outs)):
            slots[pos[c]] = (o, ("out", k))
        by_pos = {pos[c]: (c, src) for c, src in where.items()}
        for p, (o, src) in slots.items():
            by_pos = {q: v for q, v in by_pos.items() if v[0] != o}
            by_pos[p] = (o, src)
        return [by_pos[p] for p in sorted(by_pos)]
    layout = {o: (k, ("out", k)) for k, o in enumerate(outs)}
    for j, c in enumerate(columns):
        if c not in ins:
            layout[c] = (len(outs) + j, ("in", j))
    return [(c, src) for c, (_, src) in sorted(layout.items(), key=lambda kv: kv[1][0])]


def pick(layout: list, row: tuple, outs: list) -> tuple:
    return tuple(outs[k] if kind == "out" else row[k] for _, (kind, k) in layout)


def _apply_ops(ops, vals) -> tuple:
    """Each op's outputs feed the next as returned (a tuple: several columns; anything else,
    a list included, one column); numpy arrays only at the end, as in MindSpore."""
    for op in ops:
        out = op(*vals)
        vals = out if isinstance(out, tuple) else (out,)
    return tuple(np.asarray(v) for v in vals)


def _apply_row(ops, item) -> tuple:
    """The operations on one row (seed, epoch, row number, values) under the reading
    iterator's seed, with the random transforms' draws keyed by (epoch, row number)
    (vision_common.enter_row)."""
    seed, seeded, epoch, k, vals = item
    outer_seed = config.swap_iterator_seed(seed)
    token = enter_row((epoch, k), seed, seeded)
    try:
        return _apply_ops(ops, vals)
    finally:
        leave_row(token)
        config.swap_iterator_seed(outer_seed)


class MapDataset(Dataset):
    """`operations` (one callable or a list, each one's outputs the next one's inputs) applied
    to `input_columns`, on a pool of workers, rows in order."""

    def __init__(self, parent, operations, input_columns, output_columns,
                 num_parallel_workers=None, python_multiprocessing=False, max_rowsize=None):
        super().__init__(parent)
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        if not ops:
            raise ValueError("map: operations is empty; give at least one callable")
        for op in ops:
            if not callable(op):
                raise TypeError(f"map: every operation must be callable (a transform object "
                                f"or a function, without calling it), got {op!r}")
        self.ops = ops
        self.workers = resolve_workers("map", num_parallel_workers, python_multiprocessing,
                                       max_rowsize)
        self.processes = python_multiprocessing
        # built-in transforms only: processes (map_placement), after a short start in
        # the reader's thread, so that a small dataset never starts them and the workers
        # fork with the transforms' libraries already loaded
        self.auto_processes = builtin_processes(ops, self.workers)
        cols = parent.column_names
        ins = [cols[0]] if input_columns is None else _names("map", "input_columns",
                                                             input_columns)
        _check_columns("map", "input_columns", ins, cols)
        outs = ins if output_columns is None else _names("map", "output_columns",
                                                         output_columns)
        self.ins, self.outs = ins, outs
        self.layout = column_layout(cols, ins, outs)
        self.column_names = [c for c, _ in self.layout]
        self.name = op_name(ops[0]) if len(ops) == 1 else "/".join(op_name(o) for o in ops)

    def _apply(self, item):
        return _apply_row(self.ops, item)

    def _pool_size(self) -> int:
        """The workers that compute: num_parallel_workers, but for built-in transforms no
        more processes than the cores this process may use (they would only take turns, and
        which worker computes a row never changes it)."""
        if not self.auto_processes:
            return self.workers
        import os
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
        return max(1, min(self.workers, cores))

    def _worker_fn(self, worker: int):
        """A worker thread's operations (`map_placement.copy_ops`); a forked process has its
        own copy of everything already."""
        if self.processes or self.auto_processes:
            return self._apply
        ops = copy_ops(self.ops)
        return lambda item: _apply_row(ops, item)

    def _rows(self, epoch):
        idx = [self.parent.column_names.index(c) for c in self.ins]
        rows_a, rows_b = itertools.tee(self.parent._rows(epoch))
        # each row's random transforms draw from that row's generator (epoch, row number):
        # the same rows whatever the number of workers, threads or processes
        # the reading iterator's seed, for the workers (threads and processes)
        seed, seeded = config.get_seed(), config._seed["value"] is not None
        epoch = int(epoch)
        ins = ((seed, seeded, epoch, k, tuple(r[i] for i in idx))
               for k, r in enumerate(rows_a))
        results = ordered_map(self._apply, ins, self._pool_size(),
                              self.processes or self.auto_processes,
                              config.get_prefetch_size(), "map", self.name, key=id(self),
                              make_fn=self._worker_fn,
                              inline_start_s=INLINE_START_S if self.auto_processes else None)
        try:
            yield from self._checked(rows_b, results)
        finally:
            results.close()                     # stop the workers with the reader

    def _checked(self, rows, results):
        for row, outs in zip(rows, results):
            if len(outs) != len(self.outs):
                raise RuntimeError(f"map: Invalid columns, the number of columns returned in "
                                   f"'map' operations should match the number of "
                                   f"'output_columns', but got the number of columns returned "
                                   f"in 'map' operations: {len(outs)}, the number of "
                                   f"'output_columns': {len(self.outs)}.")
            yield pick(self.layout, row, outs)

    def _size(self):
        return self.parent._size()


class ShuffleDataset(Dataset):
    """MindSpore's buffer shuffle: keep `buffer_size` rows, emit a random one, refill. A new
    order every epoch unless `reshuffle_each_epoch` is False (split's shuffles)."""

    def __init__(self, parent, buffer_size):
        if not isinstance(buffer_size, int) or isinstance(buffer_size, bool) or buffer_size < 2:
            raise ValueError(f"shuffle: buffer_size must be an int >= 2 (1 would not shuffle), "
                             f"got {buffer_size!r}")
        super().__init__(parent)
        self.buffer_size = buffer_size
        self.reshuffle_each_epoch = True
        self.fixed_seed = None                  # split's: one order for every iterator

    def is_shuffled(self):
        return True

    def _rows(self, epoch):
        if self.fixed_seed is not None:
            rng = np.random.default_rng([self.fixed_seed, 0, 1])
        else:
            rng = config.rng(epoch if self.reshuffle_each_epoch else 0, salt=1)
        buf = []
        for row in self.parent._rows(epoch):
            buf.append(row)
            if len(buf) >= self.buffer_size:
                yield buf.pop(int(rng.integers(len(buf))))
        while buf:
            yield buf.pop(int(rng.integers(len(buf))))

    def _size(self):
        return self.parent._size()


class RepeatDataset(Dataset):
    """Each epoch reads the input `count` times (None or -1: forever), each pass its own
    epoch for random order, the iterator's epoch kept as `.outer`."""

    def __init__(self, parent, count):
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or
                                  (count != -1 and count < 1)):
            raise ValueError(f"repeat: count must be -1 (forever), None or an int >= 1, got "
                             f"{count!r}")
        super().__init__(parent)
        self.count = -1 if count is None else count

    def get_repeat_count(self):
        return self.count

    def _rows(self, epoch):
        reps = itertools.count() if self.count == -1 else range(self.count)
        per = 1 if self.count == -1 else self.count
        for r in reps:
            yield from self.parent._rows(Epoch(int(epoch) * per + r, outer_epoch(epoch)))

    def _size(self):
        # MindSpore 2.10 reports one pass for a dataset that repeats forever
        return self.parent._size() * (1 if self.count == -1 else self.count)


class ProjectDataset(Dataset):
    """Only `columns`, in that order."""

    def __init__(self, parent, columns):
        super().__init__(parent)
        names = _names("project", "columns", columns)
        _check_columns("project", "columns", names, parent.column_names)
        self.idx = [parent.column_names.index(c) for c in names]
        self.column_names = names

    def _rows(self, epoch):
        for row in self.parent._rows(epoch):
            yield tuple(row[i] for i in self.idx)

    def _size(self):
        return self.parent._size()


class RenameDataset(Dataset):
    """Columns `input_columns` renamed to `output_columns`, in place."""

    def __init__(self, parent, input_columns, output_columns):
        super().__init__(parent)
        ins = _names("rename", "input_columns", input_columns)
        outs = _names("rename", "output_columns", output_columns)
        if len(ins) != len(outs):
            raise ValueError(f"rename: input_columns {ins} and output_columns {outs} must have "
                             f"the same number of names")
        _check_columns("rename", "input_columns", ins, parent.column_names)
        new = [outs[ins.index(c)] if c in ins else c for c in parent.column_names]
        dup = sorted({c for c in new if new.count(c) > 1})
        if dup:
            raise ValueError(f"rename: the result would have the column(s) {dup} twice "
                             f"({new}); choose output_columns not already in the dataset")
        self.column_names = new

    def _rows(self, epoch):
        return self.parent._rows(epoch)

    def _size(self):
        return self.parent._size()


class TakeDataset(Dataset):
    """The first `count` rows of each epoch (-1: all)."""

    def __init__(self, parent, count):
        self.count = _check_count("take", "count", count, 1, allow_minus_one=True)
        super().__init__(parent)

    def _rows(self, epoch):
        if self.count == -1:
            yield from self.parent._rows(epoch)
            return
        gen = self.parent._rows(epoch)
        try:
            for row in itertools.islice(gen, self.count):
                yield row
        finally:
            gen.close()                 # stop the input (and its workers) at `count` rows

    def _size(self):
        n = self.parent._size()
        return n if self.count == -1 else min(n, self.count)


class SkipDataset(Dataset):
    """Each epoch without its first `count` rows."""

    def __init__(self, parent, count):
        self.count = _check_count("skip", "count", count, 0)
        super().__init__(parent)

    def _rows(self, epoch):
        yield from itertools.islice(self.parent._rows(epoch), self.count, None)

    def _size(self):
        return max(0, self.parent._size() - self.count)


class FilterDataset(Dataset):
    """The rows for which `predicate(*input_columns)` is true (default: every column). Its size
    needs a pass over the data, as in MindSpore."""

    def __init__(self, parent, predicate, input_columns=None, num_parallel_workers=None):
        super().__init__(parent)
        if not callable(predicate):
            raise TypeError(f"filter: predicate must be callable, got "
                            f"{type(predicate).__name__}")
        self.predicate = predicate
        self.workers = resolve_workers("filter", num_parallel_workers, False, None)
        ins = parent.column_names if input_columns is None else \
            _names("filter", "input_columns", input_columns)
        _check_columns("filter", "input_columns", ins, parent.column_names)
        self.idx = [parent.column_names.index(c) for c in ins]

    def _keep(self, row):
        return bool(np.asarray(self.predicate(*(row[i] for i in self.idx))))

    def _rows(self, epoch):
        rows_a, rows_b = itertools.tee(self.parent._rows(epoch))
        keeps = ordered_map(self._keep, rows_a, self.workers, False,
                            config.get_prefetch_size(), "filter", op_name(self.predicate),
                            key=id(self))
        try:
            for row, keep in zip(rows_b, keeps):
                if keep:
                    yield row
        finally:
            keeps.close()

    def _size(self):
        return sum(1 for _ in self._rows(Epoch(0)))


class _ManyInputs(Dataset):
    """A node reading several datasets; batch size, repeat count and classes are its first
    input's."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = list(datasets)

    @property
    def children(self):
        return self.datasets

    def get_batch_size(self):
        return self.datasets[0].get_batch_size()

    def get_repeat_count(self):
        return self.datasets[0].get_repeat_count()

    def num_classes(self):
        return self.datasets[0].num_classes()


class ZipDataset(_ManyInputs):
    """Rows joining one row of each input, as many as the shortest input has."""

    def __init__(self, datasets):
        super().__init__(datasets)
        names = [c for d in self.datasets for c in d.column_names]
        dup = sorted({c for c in names if names.count(c) > 1})
        if dup:
            raise ValueError(f"zip: the datasets share the column name(s) {dup}; rename them "
                             f"first (dataset.rename)")
        self.column_names = names

    def _rows(self, epoch):
        gens = [d._rows(epoch) for d in self.datasets]
        try:
            for parts in zip(*gens):
                yield tuple(x for p in parts for x in p)
        finally:
            for g in gens:
                g.close()

    def _size(self):
        return min(d._size() for d in self.datasets)


class ConcatDataset(_ManyInputs):
    """The rows of every input in turn; the inputs need the same column names."""

    def __init__(self, datasets):
        super().__init__(datasets)
        first = self.datasets[0].column_names
        for d in self.datasets[1:]:
            if d.column_names != first:
                raise ValueError(f"concat: every dataset needs the columns {first}, got "
                                 f"{d.column_names}; project or rename them first")
        self.column_names = list(first)

    def _rows(self, epoch):
        dtypes = None
        for d in self.datasets:
            for row in d._rows(epoch):
                now = [np.asarray(x).dtype for x in row]
                if dtypes is None:
                    dtypes = now
                elif now != dtypes:
                    raise RuntimeError(f"concat: the data types of the datasets differ: "
                                       f"{[str(t) for t in dtypes]} vs "
                                       f"{[str(t) for t in now]}; cast them with map first")
                yield row

    def _size(self):
        return sum(d._size() for d in self.datasets)


__all__ = ["MapDataset", "ShuffleDataset", "RepeatDataset", "ProjectDataset",
           "RenameDataset", "TakeDataset", "SkipDataset", "FilterDataset", "ZipDataset",
           "ConcatDataset"]
