"""mindspore.mint.nn: PyTorch-style layers (PyTorch's defaults: `Dropout(p)` drops p, conv and
BatchNorm as torch.nn), written over the same op declarations and Cells as `nn`."""
from . import functional  # noqa: F401
