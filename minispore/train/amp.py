"""MindSpore's module path `mindspore.train.amp`: the mixed-precision functions, which live in
`minispore.amp` (the same objects)."""
from ..amp import (auto_mixed_precision, build_train_network, custom_mixed_precision,
                   get_black_list, get_white_list)

__all__ = ["build_train_network", "auto_mixed_precision", "custom_mixed_precision",
           "get_white_list", "get_black_list"]
