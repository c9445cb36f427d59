"""mindspore.mint.nn: PyTorch-style layers (PyTorch's defaults: `Dropout(p)` drops p, conv and
BatchNorm as torch.nn), written over the same op declarations and Cells as `nn`."""
from ...nn.cell import Cell
from . import functional  # noqa: F401
from .activation import (ELU, GELU, GLU, SELU, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                         Dropout, Flatten, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, Identity,
                         LogSigmoid, LogSoftmax, Mish, PReLU, ReflectionPad1d, ReflectionPad2d,
                         ReflectionPad3d, ReLU, ReLU6, ReplicationPad1d, ReplicationPad2d,
                         ReplicationPad3d, Sigmoid, SiLU, Softmax, Softshrink, Tanh, Threshold,
                         ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .layers import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, AvgPool3d,
                     BatchNorm1d, BatchNorm2d, BatchNorm3d, Conv1d, Conv2d, Conv3d, Embedding,
                     GroupNorm, LayerNorm, Linear, MaxPool2d, MaxUnpool2d, SyncBatchNorm)
from .resample import (AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                       ConvTranspose2d, Dropout2d, Fold, PixelShuffle, Unfold, Upsample,
                       UpsamplingBilinear2d, UpsamplingNearest2d)
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, KLDivLoss,
                   L1Loss, MSELoss, NLLLoss, SmoothL1Loss, SoftMarginLoss)

__all__ = ["Cell", "ELU", "GELU", "GLU", "SELU", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "Dropout", "Flatten", "Hardshrink", "Hardsigmoid", "Hardswish",
           "Hardtanh", "Identity", "LogSigmoid", "LogSoftmax", "Mish", "PReLU",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReLU", "ReLU6",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "Sigmoid", "SiLU",
           "Softmax", "Softshrink", "Tanh", "Threshold", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "BatchNorm1d",
           "BatchNorm2d", "BatchNorm3d", "Conv1d", "Conv2d", "Embedding", "GroupNorm",
           "LayerNorm", "Linear", "MaxPool2d", "MaxUnpool2d", "BCELoss", "BCEWithLogitsLoss",
           "CosineEmbeddingLoss", "CrossEntropyLoss", "KLDivLoss", "L1Loss", "MSELoss", "NLLLoss",
           "SmoothL1Loss", "SoftMarginLoss", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "ConvTranspose2d", "Dropout2d", "Fold", "PixelShuffle", "Unfold",
           "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "AvgPool3d", "Conv3d",
           "SyncBatchNorm"]
