"""`mindspore.train`: Model (model.py), callbacks (callback.py, checkpoint_callback.py,
schedule_callbacks.py; curves.py has minispore's curve/TensorBoard writers), metrics
(nn/metrics.py, nn/metrics_counts.py), checkpoints (serialization.py)."""
from ..nn.metrics import *  # noqa: F401,F403
from ..nn.metrics import __all__ as _metrics
from .callback import Callback, History, LambdaCallback, LossMonitor, RunContext, TimeMonitor
from .checkpoint_callback import BackupAndRestore, CheckpointConfig, ModelCheckpoint
from .curves import CurvePlotter, TensorBoardWriter
from .schedule_callbacks import EarlyStopping, LearningRateScheduler, ReduceLROnPlateau
from .model import Model
from .loss_scale_manager import (DynamicLossScaleManager, FixedLossScaleManager,
                                 LossScaleManager)
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint
from .onnx_export import export
from .ckpt_convert import ckpt_to_safetensors, load_checkpoint_async, safetensors_to_ckpt

__all__ = ["Model", *_metrics, "Callback", "RunContext", "LossMonitor", "TimeMonitor",
           "History", "LambdaCallback", "CheckpointConfig", "ModelCheckpoint", "BackupAndRestore",
           "LearningRateScheduler", "ReduceLROnPlateau", "EarlyStopping", "CurvePlotter",
           "TensorBoardWriter", "save_checkpoint",
           "load_checkpoint", "load_param_into_net", "LossScaleManager", "FixedLossScaleManager",
           "DynamicLossScaleManager", "export", "ckpt_to_safetensors", "safetensors_to_ckpt",
           "load_checkpoint_async"]
