"""`mindspore.dataset` in small: sources (GeneratorDataset, NumpySlicesDataset, the digits data
that ships inside scikit-learn), a lazy pipeline with MindSpore 2.x's operations (map on
parallel workers, batch with per_batch_map, padded_batch, shuffle, repeat, project, rename,
zip, concat, take, skip, filter, split) and its tuple/dict iterators.

A dataset is a chain of nodes (base.py); iterating it pulls rows (tuples of numpy arrays, one
per column) from the source through each node, epoch by epoch. Random order comes from
`config.set_seed` (MindSpore's `dataset.config.set_seed`) combined with the epoch number, so a
seeded pipeline gives the same batches in every run and a different order in every epoch.
Which rows of a random-access source an epoch reads is a sampler's choice (`samplers.py`).
Where each part lives: base.py (Dataset and its methods), sources.py, pipeline_ops.py,
batching.py, splitting.py, parallel_map.py (the workers), iterators.py, config.py.
"""
from __future__ import annotations

# the node classes are re-exported for minispore.dataset.engine (MindSpore's module path) and
# the sources' helpers for the file readers that subclass GeneratorDataset
from . import config, samplers
from .base import Dataset, _dataset_list
from .batching import BatchDataset, BatchInfo  # noqa: F401
from .digits import load_digits
from .iterators import DictIterator, TupleIterator  # noqa: F401
from .pipeline_ops import (  # noqa: F401
    ConcatDataset, FilterDataset, MapDataset, ProjectDataset, RenameDataset, RepeatDataset,
    ShuffleDataset, SkipDataset, TakeDataset, ZipDataset)
from .samplers import (DistributedSampler, RandomSampler, Sampler, SequentialSampler,
                       SubsetRandomSampler, SubsetSampler, WeightedRandomSampler)
from .sources import GeneratorDataset, NumpySlicesDataset, _check_shards, _Slices  # noqa: F401


def zip(datasets) -> Dataset:  # noqa: A001  (MindSpore's name: mindspore.dataset.zip)
    """One dataset whose rows join the rows of `datasets` (a tuple of at least 2 datasets with
    distinct column names); as many rows as the shortest."""
    if not isinstance(datasets, tuple):
        raise TypeError(f"zip: datasets must be a tuple of Datasets, got "
                        f"{type(datasets).__name__}")
    if len(datasets) < 2:
        raise ValueError(f"zip: datasets must hold at least 2 Datasets, got {len(datasets)}")
    return ZipDataset(_dataset_list("zip", datasets))


__all__ = ["Dataset", "GeneratorDataset", "NumpySlicesDataset", "zip", "BatchInfo", "config",
           "load_digits", "samplers", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetSampler", "SubsetRandomSampler", "DistributedSampler",
           "WeightedRandomSampler"]

from . import engine  # noqa: E402,F401  (MindSpore's module path mindspore.dataset.engine)
from .file_datasets import *  # noqa: E402,F401,F403
from .text_file_datasets import *  # noqa: E402,F401,F403
from . import file_datasets as _file_datasets, text_file_datasets as _text_file_datasets  # noqa: E402
__all__ += _file_datasets.__all__ + _text_file_datasets.__all__
