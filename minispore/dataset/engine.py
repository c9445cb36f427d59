"""minispore.dataset.engine: MindSpore's `mindspore.dataset.engine` names that minispore.dataset
implements (the same objects as minispore.dataset's)."""
from . import (BatchDataset, BatchInfo, ConcatDataset, Dataset, DictIterator, DistributedSampler,
               FilterDataset, GeneratorDataset, MapDataset, NumpySlicesDataset, ProjectDataset,
               RandomSampler, RenameDataset, RepeatDataset, Sampler, SequentialSampler,
               ShuffleDataset, SkipDataset, SubsetRandomSampler, SubsetSampler, TakeDataset,
               TupleIterator, WeightedRandomSampler, ZipDataset, config, samplers, zip)

__all__ = ["Dataset", "GeneratorDataset", "NumpySlicesDataset", "BatchDataset", "MapDataset",
           "RepeatDataset", "ShuffleDataset", "ProjectDataset", "RenameDataset", "TakeDataset",
           "SkipDataset", "FilterDataset", "ZipDataset", "ConcatDataset", "BatchInfo",
           "TupleIterator", "DictIterator", "zip", "config", "samplers", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetSampler", "SubsetRandomSampler",
           "DistributedSampler", "WeightedRandomSampler"]
from .file_datasets import *  # noqa: E402,F401,F403  (the on-disk readers)
from .text_file_datasets import *  # noqa: E402,F401,F403
