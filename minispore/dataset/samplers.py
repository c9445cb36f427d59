"""`mindspore.dataset` samplers: which rows of a random-access source one epoch reads, and in
which order (SequentialSampler, RandomSampler, SubsetSampler, SubsetRandomSampler,
DistributedSampler, WeightedRandomSampler, user `Sampler` subclasses and plain index iterables),
and `select_sampler`, which turns a dataset's sampler/shuffle/num_samples/num_shards/shard_id
arguments into one sampler as MindSpore 2.x does.

A sampler maps (number of source rows, epoch) to an int64 index array. Random samplers draw
from `config.rng(epoch, salt)`, so a seeded pipeline reads the same rows in every run and a new
order every epoch; every shard of a DistributedSampler draws the same permutation, so the
shards of one epoch are disjoint. A child sampler (`add_child`) runs first and the parent
samples positions of the child's output, as in MindSpore.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..core.arg_checks import check_bool
from . import config

_INT64_MAX = 2**63 - 1
_SALT = 2                              # config.rng salt of sampler draws (1: buffer shuffle)


def _check_num_samples(num_samples, who: str):
    if num_samples is None:
        return None
    if not isinstance(num_samples, int) or isinstance(num_samples, bool):
        raise TypeError(f"{who}: num_samples must be an int, got {num_samples!r} "
                        f"({type(num_samples).__name__})")
    if not 0 <= num_samples <= _INT64_MAX:
        raise ValueError(f"{who}: num_samples must be in [0, {_INT64_MAX}], got {num_samples}")
    return num_samples


def _check_int(value, name: str, who: str):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{who}: {name} must be an int, got {value!r} ({type(value).__name__})")
    return int(value)


def _cap(idx: np.ndarray, num_samples) -> np.ndarray:
    """num_samples None or 0 means every sampled row (MindSpore's convention)."""
    return idx if not num_samples else idx[:num_samples]


class BuiltinSampler:
    """Base of every sampler: `num_samples` caps the rows of one epoch, `add_child` chains."""

    def __init__(self, num_samples=None):
        self.num_samples = _check_num_samples(num_samples, type(self).__name__)
        self.child_sampler = None

    def add_child(self, sampler) -> None:
        if not isinstance(sampler, BuiltinSampler):
            raise TypeError(f"{type(self).__name__}.add_child: the child must be a sampler of "
                            f"mindspore.dataset, got {type(sampler).__name__}")
        if self.child_sampler is not None:
            raise RuntimeError("Cannot add child sampler, this sampler already has a child.")
        self.child_sampler = sampler

    def get_child(self):
        return self.child_sampler

    def get_num_samples(self):
        return self.num_samples

    def is_shuffled(self) -> bool:
        return self.child_sampler is not None and self.child_sampler.is_shuffled()

    def is_sharded(self) -> bool:
        return self.child_sampler is not None and self.child_sampler.is_sharded()

    def indices(self, n: int, epoch: int, depth: int = 0) -> np.ndarray:
        """The source rows one epoch reads, in order (int64)."""
        if self.child_sampler is None:
            return np.asarray(self._own(n, epoch, depth), dtype=np.int64)
        base = self.child_sampler.indices(n, epoch, depth + 1)
        return base[np.asarray(self._own(len(base), epoch, depth), dtype=np.int64)]

    def _rng(self, epoch: int, depth: int) -> np.random.Generator:
        return config.rng(epoch, salt=_SALT + depth)

    def _own(self, n: int, epoch: int, depth: int):
        raise NotImplementedError

    def _check_range(self, idx: np.ndarray, n: int) -> np.ndarray:
        bad = idx[(idx < 0) | (idx >= n)]
        if len(bad):
            raise RuntimeError(f"{type(self).__name__}: sample index {int(bad[0])} is out of "
                               f"range for a source of {n} rows (valid: 0..{n - 1})")
        return idx


class SequentialSampler(BuiltinSampler):
    """Rows start_index, start_index+1, ... in order."""

    def __init__(self, start_index=None, num_samples=None):
        if start_index is not None:
            start_index = _check_int(start_index, "start_index", "SequentialSampler")
            if start_index < 0:
                raise ValueError(f"SequentialSampler: start_index must be >= 0, got "
                                 f"{start_index}")
        self.start_index = start_index
        super().__init__(num_samples)

    def _own(self, n, epoch, depth):
        start = self.start_index or 0
        if n and start >= n:
            raise RuntimeError(f"SequentialSampler: start_index must be less than the number "
                               f"of rows, got start_index={start} for {n} rows")
        return _cap(np.arange(start, n), self.num_samples)


class RandomSampler(BuiltinSampler):
    """A random permutation (replacement=False) or num_samples uniform draws (True)."""

    def __init__(self, replacement=False, num_samples=None):
        self.replacement = check_bool("RandomSampler", "replacement", replacement)
        super().__init__(num_samples)

    def is_shuffled(self):
        return True

    def _own(self, n, epoch, depth):
        rng = self._rng(epoch, depth)
        if self.replacement:
            return rng.integers(n, size=self.num_samples or n) if n else np.arange(0)
        return _cap(rng.permutation(n), self.num_samples)


class SubsetSampler(BuiltinSampler):
    """The given indices, in the given order."""

    def __init__(self, indices, num_samples=None):
        who = type(self).__name__
        if isinstance(indices, (int, np.integer)) and not isinstance(indices, bool):
            indices = [indices]
        if isinstance(indices, str) or not hasattr(indices, "__iter__"):
            raise TypeError(f"{who}: indices must be a list, tuple or array of ints, got "
                            f"{type(indices).__name__}")
        indices = list(indices)
        for k, i in enumerate(indices):
            if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
                raise TypeError(f"{who}: indices[{k}] must be an int, got {i!r} "
                                f"({type(i).__name__})")
        self.sample_indices = np.asarray(indices, dtype=np.int64)
        super().__init__(num_samples)

    def _own(self, n, epoch, depth):
        return self._check_range(_cap(self.sample_indices, self.num_samples), n)


class SubsetRandomSampler(SubsetSampler):
    """The given indices in a random order."""

    def is_shuffled(self):
        return True

    def _own(self, n, epoch, depth):
        idx = self._rng(epoch, depth).permutation(self.sample_indices)
        return self._check_range(_cap(idx, self.num_samples), n)


class DistributedSampler(BuiltinSampler):
    """Shard `shard_id` of `num_shards`: rows shard_id, shard_id+num_shards, ... wrapping around
    so every shard reads ceil(n / num_shards) rows (offset=-1), or the uneven split that starts
    at shard `offset`; with shuffle, positions of one permutation shared by all shards, in
    every process, seeded or not (config.shard_rng), so the ranks' shards partition the rows."""

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        who = "DistributedSampler"
        self.num_shards = _check_int(num_shards, "num_shards", who)
        self.shard_id = _check_int(shard_id, "shard_id", who)
        if self.num_shards < 1:
            raise ValueError(f"{who}: num_shards must be >= 1, got {self.num_shards}")
        if not 0 <= self.shard_id < self.num_shards:
            raise ValueError(f"{who}: shard_id must be in [0, {self.num_shards - 1}] for "
                             f"num_shards={self.num_shards}, got {self.shard_id}")
        self.shuffle = check_bool(who, "shuffle", shuffle)
        self.offset = _check_int(offset, "offset", who)
        if not -1 <= self.offset <= self.num_shards:
            raise ValueError(f"{who}: offset must be -1 or in [0, num_shards={self.num_shards}]"
                             f", got {self.offset}")
        super().__init__(num_samples)

    def is_shuffled(self):
        return self.shuffle or super().is_shuffled()

    def is_sharded(self):
        return True

    def _rng(self, epoch, depth):
        # one permutation on every rank (each its own process), seeded or not, as MindSpore
        return config.shard_rng(epoch, salt=_SALT + depth)

    def _own(self, n, epoch, depth):
        if n == 0:
            return np.arange(0)
        shards, sid = self.num_shards, self.shard_id
        offset, per_shard = max(self.offset, 0), -(-n // shards)
        if self.offset != -1:
            per_shard = n // shards + (sid < n % shards) - (sid < offset)
        if self.num_samples:
            per_shard = min(per_shard, self.num_samples)
        positions, k = [], 0
        while len(positions) < per_shard:
            pos = shards * k + sid - offset
            k += 1
            if pos >= 0:                    # rows before `offset` belong to no shard
                positions.append(pos % n)
        positions = np.asarray(positions, dtype=np.int64)
        if self.shuffle:
            return self._rng(epoch, depth).permutation(n)[positions]
        return positions


class WeightedRandomSampler(BuiltinSampler):
    """num_samples draws of row i with probability weights[i] / sum(weights)."""

    def __init__(self, weights, num_samples=None, replacement=True):
        weights = list(weights) if isinstance(weights, (list, tuple, np.ndarray)) else [weights]
        for k, w in enumerate(weights):
            if not isinstance(w, numbers.Number) or isinstance(w, bool):
                raise TypeError(f"WeightedRandomSampler: weights[{k}] must be a number, got "
                                f"{w!r}")
        w = np.asarray(weights, dtype=np.float64)
        if len(w) == 0 or (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"WeightedRandomSampler: weights must be >= 0 with a positive "
                             f"sum, got {weights}")
        self.weights = w
        self.replacement = check_bool("WeightedRandomSampler", "replacement", replacement)
        super().__init__(num_samples)

    def is_shuffled(self):
        return True

    def _own(self, n, epoch, depth):
        w = self.weights
        count = self.num_samples or len(w)
        if not self.replacement and count > np.count_nonzero(w):
            raise RuntimeError(f"WeightedRandomSampler: num_samples={count} rows without "
                               f"replacement, but only {np.count_nonzero(w)} weights are "
                               f"non-zero")
        idx = self._rng(epoch, depth).choice(len(w), size=count, replace=self.replacement,
                                             p=w / w.sum())
        return self._check_range(idx, n)


class Sampler(BuiltinSampler):
    """Base of user samplers: override `__iter__` to yield row indices; `self.dataset_size` is
    the number of source rows when it runs, and `reset()` is called before every epoch after
    the first."""

    def __init__(self, num_samples=None):
        super().__init__(num_samples)
        self.dataset_size = 0

    def __iter__(self):
        raise NotImplementedError("a Sampler subclass must implement __iter__, yielding row "
                                  "indices")

    def reset(self):
        """Called before every epoch after the first; override to change per epoch."""

    def _own(self, n, epoch, depth):
        self.dataset_size = n
        if epoch > 0:
            self.reset()
        return _indices_of_iterable(self, self.num_samples, n, type(self).__name__)


class IterSampler(Sampler):
    """A plain iterable of indices (re-iterated every epoch) used as a sampler."""

    def __init__(self, sampler, num_samples=None):
        super().__init__(num_samples)
        self.sampler = sampler

    def __iter__(self):
        return iter(self.sampler)


def _indices_of_iterable(it, num_samples, n, who):
    out = []
    for i in it:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"{who}: a sampler must yield int row indices, got {i!r} "
                            f"({type(i).__name__})")
        out.append(int(i))
        if num_samples and len(out) >= num_samples:
            break
    idx = np.asarray(out, dtype=np.int64)
    bad = idx[(idx < 0) | (idx >= n)]
    if len(bad):
        raise RuntimeError(f"{who}: sample index {int(bad[0])} is out of range for a source "
                           f"of {n} rows (valid: 0..{n - 1})")
    return idx


def select_sampler(who: str, num_samples, sampler, shuffle, num_shards, shard_id):
    """The sampler a random-access dataset reads with (MindSpore's select_sampler): a sampler
    object alone; an index list/array (with num_samples); shuffle with shards: a shuffled
    DistributedSampler; shuffle without shards: RandomSampler, drawing num_samples rows WITH
    replacement when num_samples is given (as MindSpore does); no shuffle: sequential."""
    if sampler is not None:
        given = {k: v for k, v in [("num_samples", num_samples), ("shuffle", shuffle),
                                   ("num_shards", num_shards), ("shard_id", shard_id)]
                 if v is not None}
        if isinstance(sampler, BuiltinSampler):
            if given:
                raise ValueError(f"{who}: sampler= conflicts with {', '.join(given)} "
                                 f"({given}); set them on the sampler instead")
            return sampler
        given.pop("num_samples", None)
        if given:
            raise ValueError(f"{who}: an index sampler ({type(sampler).__name__}) conflicts "
                             f"with {', '.join(given)} ({given}); pass a "
                             f"mindspore.dataset sampler such as DistributedSampler instead")
        if isinstance(sampler, (np.ndarray, list, tuple)):
            return SubsetSampler(sampler, num_samples)
        if not isinstance(sampler, str) and hasattr(sampler, "__iter__"):
            if iter(sampler) is sampler:
                raise TypeError(f"{who}: sampler is a one-shot iterator "
                                f"({type(sampler).__name__}), which cannot be read again "
                                f"every epoch; pass a list of indices or a re-iterable object")
            return IterSampler(sampler, num_samples)
        raise TypeError(f"{who}: sampler must be a mindspore.dataset sampler or an iterable of "
                        f"row indices, got {type(sampler).__name__}")
    if shuffle is None or shuffle:
        if num_shards is not None:
            return DistributedSampler(num_shards, shard_id, True, num_samples)
        if num_samples is not None:
            return RandomSampler(replacement=True, num_samples=num_samples)
        return RandomSampler()
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, False, num_samples)
    return SequentialSampler(num_samples=num_samples)


__all__ = ["BuiltinSampler", "Sampler", "SequentialSampler", "RandomSampler", "SubsetSampler",
           "SubsetRandomSampler", "DistributedSampler", "WeightedRandomSampler", "IterSampler"]
