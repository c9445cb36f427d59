"""The iterators of a dataset (`create_tuple_iterator`, `create_dict_iterator`) with MindSpore's
epoch semantics: one pass of a `for` loop is one epoch; iterating the same iterator again runs
the next epoch (a pass stopped early goes on where it stopped), up to `num_epochs` (-1: no
limit), after which iterating raises. Rows come as lists of Tensors, or numpy arrays with
output_numpy=True. `stop()` (or dropping the iterator) ends the epoch and its workers."""
from __future__ import annotations

import weakref

import numpy as np

from ..core.arg_checks import check_bool
from . import config
from .base import Epoch
from .parallel_map import WorkerSession


class _Iterator:
    def __init__(self, ds, num_epochs, output_numpy, do_copy, columns=None):
        who = type(self).__name__
        if not isinstance(num_epochs, int) or isinstance(num_epochs, bool) or \
                (num_epochs != -1 and num_epochs < 1):
            raise ValueError(f"{who}: num_epochs must be -1 (no limit) or an int >= 1, got "
                             f"{num_epochs!r}")
        self.numpy = check_bool(who, "output_numpy", output_numpy)
        self.do_copy = check_bool(who, "do_copy", do_copy)
        self.ds, self.num_epochs = ds, num_epochs
        if isinstance(columns, str):
            columns = [columns]
        missing = [c for c in columns or () if c not in ds.column_names]
        if missing:
            raise ValueError(f"create_tuple_iterator: columns {missing} are not columns of the "
                             f"dataset {ds.column_names}")
        self.columns = [ds.column_names.index(c) for c in columns] if columns else None
        self.epoch = -1
        self._it = None
        # the operations' workers live across this iterator's epochs and end with it
        self._session = WorkerSession()
        self._seed = config.fresh_iterator_seed()   # None once a seed is set
        self._finalizer = weakref.finalize(self, _end, self._session)

    def __iter__(self):
        if self._it is None:
            self._start()
        return self

    def _start(self):
        if self.num_epochs != -1 and self.epoch + 1 >= self.num_epochs:
            raise RuntimeError(f"the iterator was created for num_epochs={self.num_epochs} and "
                               f"all of them have been read; create a new iterator (or pass "
                               f"a larger num_epochs)")
        self.epoch += 1
        self._it = self.ds._rows(Epoch(self.epoch))

    def __next__(self):
        if self._it is None:
            self._start()
        outer_seed = config.swap_iterator_seed(self._seed)
        try:
            with self._session:
                row = next(self._it)
        except StopIteration:
            self._it = None                     # the next iteration starts the next epoch
            if self.num_epochs != -1 and self.epoch + 1 >= self.num_epochs:
                self._session.close()           # the last epoch: its workers end now
            raise
        finally:
            config.swap_iterator_seed(outer_seed)
        if self.columns is not None:
            row = tuple(row[i] for i in self.columns)
        arrays = [np.array(x) if self.do_copy else np.asarray(x) for x in row]
        if self.numpy:
            return self._pack(arrays)
        from ..core.tensor import Tensor
        # a string (or bytes) column stays a numpy array, as in MindSpore: no Tensor holds text
        return self._pack([a if a.dtype.kind in "USO" else Tensor(a) for a in arrays])

    def stop(self) -> None:
        """End the current epoch now and release the workers."""
        if self._it is not None:
            outer_seed = config.swap_iterator_seed(self._seed)
            try:
                with self._session:
                    self._it.close()
            finally:
                config.swap_iterator_seed(outer_seed)
            self._it = None
        self._session.close()

    def get_next(self):
        return next(self)

    def _pack(self, row):
        raise NotImplementedError


def _end(session) -> None:
    session.close()


class TupleIterator(_Iterator):
    """Rows as lists, one item per column (or per name in `columns`)."""

    def __init__(self, ds, columns=None, num_epochs=-1, output_numpy=False, do_copy=False):
        super().__init__(ds, num_epochs, output_numpy, do_copy, columns)

    def _pack(self, row):
        return row


class DictIterator(_Iterator):
    """Rows as {column name: value}."""

    def __init__(self, ds, num_epochs=-1, output_numpy=False, do_copy=False):
        super().__init__(ds, num_epochs, output_numpy, do_copy)

    def _pack(self, row):
        return dict(zip(self.ds.column_names, row))


__all__ = ["TupleIterator", "DictIterator"]
