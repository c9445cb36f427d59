"""`mindspore.dataset.config`: the pipeline's global settings: the seed of its random order
(shuffles, random samplers), the default number of parallel workers of `map`/`batch`, and the
prefetch size (how many rows or batches a parallel operation computes ahead of the reader)."""
from __future__ import annotations

import os
import threading

import numpy as np

_UINT32_MAX = 2**32 - 1
_INT32_MAX = 2**31 - 1

_seed = {"value": None, "default": int(np.random.default_rng().integers(2**31))}
_reading = threading.local()            # .seed: the seed of the iterator reading in this thread
_settings = {"num_parallel_workers": max(1, min(8, os.cpu_count() or 1)), "prefetch_size": 16}


def _check_int_range(who: str, name: str, value, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"dataset.config.{who}: {name} must be an int in [{low}, {high}], got "
                         f"{value!r}")
    return value


def set_seed(seed: int) -> None:
    """Make every shuffle of every pipeline reproducible (MindSpore's dataset.config.set_seed)."""
    _seed["value"] = _check_int_range("set_seed", "seed", seed, 0, _UINT32_MAX)


def get_seed() -> int:
    """The set seed; without one, the seed of the iterator reading rows now (each new
    iterator of an unseeded pipeline draws its own, so its shuffles and random transforms
    differ from the last one's, as in MindSpore), else this process's default."""
    if _seed["value"] is not None:
        return _seed["value"]
    seed = getattr(_reading, "seed", None)
    return seed if seed is not None else _seed["default"]


# the seed of a sharded shuffle before set_seed: fixed (MindSpore's default dataset seed), so
# every rank of a data-parallel job, each its own process, shuffles with one permutation and
# the shards partition the rows
SHARD_DEFAULT_SEED = 5489


def shard_rng(epoch: int, salt: int = 0) -> np.random.Generator:
    """The generator of one epoch of a sharded shuffle (DistributedSampler): the set seed's,
    else the same in every process and every iterator."""
    seed = _seed["value"] if _seed["value"] is not None else SHARD_DEFAULT_SEED
    return np.random.default_rng([seed, int(epoch), salt])


def fresh_iterator_seed():
    """The seed a new iterator reads with: None (use the set seed) once one is set."""
    return None if _seed["value"] is not None else int(np.random.default_rng().integers(2**31))


def swap_iterator_seed(seed):
    """Make `seed` the reading iterator's seed in this thread; returns the one it replaces."""
    previous = getattr(_reading, "seed", None)
    _reading.seed = seed
    return previous


def rng(epoch: int, salt: int = 0) -> np.random.Generator:
    """The generator of one epoch of one kind of shuffle: a new order every epoch, the same
    orders in every run with the same seed."""
    return np.random.default_rng([get_seed(), int(epoch), salt])


def set_num_parallel_workers(num: int) -> None:
    """The workers `map`/`batch` use when their num_parallel_workers is None."""
    _settings["num_parallel_workers"] = _check_int_range(
        "set_num_parallel_workers", "num", num, 1, _INT32_MAX)


def get_num_parallel_workers() -> int:
    return _settings["num_parallel_workers"]


def set_prefetch_size(size: int) -> None:
    """How many results a parallel operation keeps computed ahead of its reader (bounds the
    memory of a pipeline whose consumer is slower than its workers)."""
    _settings["prefetch_size"] = _check_int_range("set_prefetch_size", "size", size, 1,
                                                  _INT32_MAX)


def get_prefetch_size() -> int:
    return _settings["prefetch_size"]


__all__ = ["set_seed", "get_seed", "set_num_parallel_workers", "get_num_parallel_workers",
           "set_prefetch_size", "get_prefetch_size"]
