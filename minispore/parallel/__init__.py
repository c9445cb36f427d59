"""minispore.parallel: the helpers of MindSpore's `mindspore.parallel._utils` that scripts import
(the parallel context as one process reads it); MindSpore's sharding API is not implemented."""
