"""`mindspore.train`: checkpoints (serialization.py)."""
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]
