"""minispore.dataset.engine: MindSpore's `mindspore.dataset.engine` names that minispore.dataset
implements (the same objects as minispore.dataset's)."""
from . import (BatchDataset, Dataset, DistributedSampler, GeneratorDataset, MapDataset,
               NumpySlicesDataset, RandomSampler, RepeatDataset, Sampler, SequentialSampler,
               ShuffleDataset, SubsetRandomSampler, SubsetSampler, WeightedRandomSampler, config,
               samplers)

__all__ = ["Dataset", "GeneratorDataset", "NumpySlicesDataset", "BatchDataset", "MapDataset",
           "RepeatDataset", "ShuffleDataset", "config", "samplers", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetSampler", "SubsetRandomSampler",
           "DistributedSampler", "WeightedRandomSampler"]
