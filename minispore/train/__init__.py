"""`mindspore.train`: Model (model.py), callbacks (callback.py), checkpoints
(serialization.py)."""
from ..nn.metrics import MAE, Accuracy, Metric
from ..nn.metrics import (Top1CategoricalAccuracy, Top5CategoricalAccuracy,
                         TopKCategoricalAccuracy)
from .callback import Callback, LossMonitor, RunContext, TimeMonitor
from .model import Model
from .loss_scale_manager import (DynamicLossScaleManager, FixedLossScaleManager,
                                 LossScaleManager)
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint
from .onnx_export import export

__all__ = ["Model", "Accuracy", "MAE", "Metric", "Top1CategoricalAccuracy",
           "Top5CategoricalAccuracy", "TopKCategoricalAccuracy", "Callback", "RunContext",
           "LossMonitor", "TimeMonitor", "save_checkpoint",
           "load_checkpoint", "load_param_into_net", "LossScaleManager", "FixedLossScaleManager",
           "DynamicLossScaleManager", "export"]
