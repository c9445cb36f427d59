"""minispore's core: dtypes, context, tensors, the op registry, the executors and autodiff."""
