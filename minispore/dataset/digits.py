"""The digits data that ships inside scikit-learn (1797 8x8 grey images, 10 classes): no
download, so the demo and the tests run on machines without internet."""
from __future__ import annotations

import numpy as np


def load_digits(split: str = "train", test_fraction: float = 0.2, seed: int = 0,
                shuffle=None, one_hot: bool = False):
    """A NumpySlicesDataset with columns "image" (float32 (1, 8, 8), scaled to [0, 1]) and
    "label" (int32; float32 one-hot when `one_hot`). The train/test split is a fixed seeded
    permutation, stratified by nothing: the same split in every run for a given seed."""
    if split not in ("train", "test", "all"):
        raise ValueError(f"load_digits: split={split!r} is not valid; use 'train', 'test' or "
                         f"'all'")
    try:
        from sklearn.datasets import load_digits as _sk_digits
    except ImportError as e:              # scikit-learn is an install requirement
        raise ImportError("load_digits needs scikit-learn (pip install scikit-learn)") from e
    from . import NumpySlicesDataset
    d = _sk_digits()
    x = (d.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = d.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(len(y) * test_fraction))
    idx = {"test": order[:n_test], "train": order[n_test:], "all": order}[split]
    labels = np.eye(10, dtype=np.float32)[y[idx]] if one_hot else y[idx]
    return NumpySlicesDataset({"image": x[idx], "label": labels},
                              shuffle=(split == "train") if shuffle is None else shuffle)
