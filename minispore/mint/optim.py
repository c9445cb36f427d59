"""mindspore.mint.optim: PyTorch-style optimizers (torch.optim's signatures and defaults)."""
