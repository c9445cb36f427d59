"""`Dataset.split` as MindSpore 2.x does it.

Sizes are ints summing to the dataset size, or fractions in (0, 1] summing to 1, each rounded
with Python's round (half to even); a shortfall goes to the first split, an excess comes off
the first split that keeps at least one row. A random-access source (GeneratorDataset,
NumpySlicesDataset with no operation after it) is split by samplers: each split reads the
positions [start, start + size) of one random permutation drawn once (the same in every epoch
and every split) of the rows its own sampler gives, or of those rows in order with
randomize=False. Any other pipeline is split as shuffle (a buffer of 10000, the same order
every epoch) + skip + take.
"""
from __future__ import annotations

import copy

from .samplers import BuiltinSampler, SequentialSampler
from . import config

_SPLIT_BUFFER = 10000                    # MindSpore's shuffle buffer of a non-mappable split


class _FixedPermutationSampler(BuiltinSampler):
    """A RandomSampler that draws one permutation for every epoch and every iterator
    (reshuffle_each_epoch=False), from the seed of the split that made it, so the splits
    stay disjoint even when no seed is set."""

    def __init__(self, seed: int):
        super().__init__()
        self.seed = seed

    def is_shuffled(self):
        return True

    def _own(self, n, epoch, depth):
        import numpy as np
        return np.random.default_rng([self.seed, 0, 3 + depth]).permutation(n)


def absolute_sizes(sizes, dataset_size: int) -> list:
    """MindSpore's split sizes: checked, fractions rounded and corrected to sum to the size."""
    if not isinstance(sizes, list):
        raise TypeError(f"split: sizes must be a list of ints or of floats, got "
                        f"{type(sizes).__name__}")
    if not sizes:
        raise ValueError("split: sizes cannot be empty")
    all_int = all(isinstance(s, int) and not isinstance(s, bool) for s in sizes)
    all_float = all(isinstance(s, float) for s in sizes)
    if not (all_int or all_float):
        raise ValueError(f"split: sizes must be a list of ints or a list of floats, got "
                         f"{sizes}")
    if all_int and not all(s > 0 for s in sizes):
        raise ValueError(f"split: sizes is a list of ints, so each must be > 0, got {sizes}")
    if all_float:
        if not all(0 < s <= 1 for s in sizes):
            raise ValueError(f"split: sizes is a list of floats, so each must be in (0, 1], "
                             f"got {sizes}")
        if not abs(sum(sizes) - 1) < 1e-5:
            raise ValueError(f"split: sizes is a list of floats, but the percentages do not "
                             f"sum up to 1 (sum {sum(sizes)})")
    if dataset_size is None or dataset_size <= 0:
        raise RuntimeError("split: dataset_size is unknown, unable to split.")
    if all_int:
        if sum(sizes) != dataset_size:
            raise RuntimeError(f"split: Sum of split sizes {sum(sizes)} is not equal to "
                               f"dataset size {dataset_size}.")
        return list(sizes)
    out = []
    for s in sizes:
        size = int(round(s * dataset_size))
        if size == 0:
            raise RuntimeError(f"split: Split percentage {s} is too small (0 of "
                               f"{dataset_size} rows).")
        out.append(size)
    diff = dataset_size - sum(out)
    if diff > 0:
        out[0] += diff
    else:
        for i, size in enumerate(out):
            if size + diff > 0:
                out[i] += diff
                break
    if sum(out) != dataset_size:
        raise RuntimeError(f"split: Sum of calculated split sizes {sum(out)} is not equal to "
                           f"dataset size {dataset_size}.")
    return out


def split(ds, sizes, randomize: bool = True) -> tuple:
    from ..core.arg_checks import check_bool
    check_bool("split", "randomize", randomize)
    if ds.is_sharded():
        raise RuntimeError("split: Dataset should not be sharded before split; split first, "
                           "then shard each split with a DistributedSampler")
    counts = absolute_sizes(sizes, ds.get_dataset_size())
    mappable = getattr(ds, "sampler", None) is not None and \
        getattr(ds, "random_access", False)
    seed = config.get_seed()          # one draw shared by every split, in every iterator
    splits, start = [], 0
    for size in counts:
        if mappable:
            part = copy.copy(ds)
            base = copy.deepcopy(ds.sampler)
            if randomize:
                shuffled = _FixedPermutationSampler(seed)
                shuffled.add_child(base)
                base = shuffled
            window = SequentialSampler(start_index=start, num_samples=size)
            window.add_child(base)
            part.sampler = window
        else:
            part = ds
            if randomize:
                from .pipeline_ops import ShuffleDataset
                part = ShuffleDataset(part, _SPLIT_BUFFER)
                part.reshuffle_each_epoch, part.fixed_seed = False, seed
            if start:
                part = part.skip(start)
            part = part.take(size)
        splits.append(part)
        start += size
    return tuple(splits)


__all__ = ["split", "absolute_sizes"]
