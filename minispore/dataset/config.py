"""`mindspore.dataset.config`: the seed of the data pipeline's random order (shuffles)."""
from __future__ import annotations

import numpy as np

_seed = {"value": None, "default": int(np.random.default_rng().integers(2**31))}


def set_seed(seed: int) -> None:
    """Make every shuffle of every pipeline reproducible (MindSpore's dataset.config.set_seed)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"dataset.config.set_seed: seed must be an int >= 0, got {seed!r}")
    _seed["value"] = seed


def get_seed() -> int:
    return _seed["value"] if _seed["value"] is not None else _seed["default"]


def rng(epoch: int, salt: int = 0) -> np.random.Generator:
    """The generator of one epoch of one kind of shuffle: a new order every epoch, the same
    orders in every run with the same seed."""
    return np.random.default_rng([get_seed(), epoch, salt])
