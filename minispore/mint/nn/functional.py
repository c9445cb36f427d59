"""mindspore.mint.nn.functional: PyTorch-style functional layers (torch.nn.functional's
signatures and defaults) over the op declarations."""
