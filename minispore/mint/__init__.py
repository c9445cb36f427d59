"""mindspore.mint: MindSpore's PyTorch-style functional API (PyTorch names, signatures and
defaults: `dim`/`keepdim`, `mint.transpose(input, dim0, dim1)`), written as thin views over
the same op declarations as `ops`, never as aliases of `ops` (whose defaults differ)."""
from . import nn, optim  # noqa: F401
