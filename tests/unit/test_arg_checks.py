"""Every bool argument of the layers, optimizers, dataset and training tools is checked by one
rule (core/arg_checks.py, MindSpore's Validator.check_bool): only a Python bool passes; 1 and
numpy's bool are refused with the same wording, naming the API, the argument and the type."""
import numpy as np
import pytest

import minispore as ms
from minispore import dataset, nn


def _param():
    return [ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="w")]


CALLS = {
    "Dense has_bias": lambda v: nn.Dense(2, 3, has_bias=v),
    "Conv2d has_bias": lambda v: nn.Conv2d(1, 1, 3, has_bias=v),
    "BatchNorm2d affine": lambda v: nn.BatchNorm2d(2, affine=v),
    "GELU approximate": lambda v: nn.GELU(approximate=v),
    "SoftmaxCrossEntropyWithLogits sparse": lambda v: nn.SoftmaxCrossEntropyWithLogits(sparse=v),
    "SGD nesterov": lambda v: nn.SGD(_param(), momentum=0.9, nesterov=v),
    "Momentum use_nesterov": lambda v: nn.Momentum(_param(), 0.1, 0.9, use_nesterov=v),
    "Adam use_nesterov": lambda v: nn.Adam(_param(), use_nesterov=v),
    "Parameter layerwise_parallel": lambda v: ms.Parameter(ms.Tensor([1.0]), name="p",
                                                         layerwise_parallel=v),
    "RandomSampler replacement": lambda v: dataset.RandomSampler(replacement=v),
    "batch drop_remainder": lambda v: dataset.NumpySlicesDataset(
        np.zeros((4, 2), np.float32)).batch(2, drop_remainder=v),
    "save_checkpoint crc_check": lambda v: ms.save_checkpoint({"w": ms.Tensor([1.0])},
                                                              "/nonexistent/x.ckpt",
                                                              crc_check=v),
}


@pytest.mark.parametrize("what", list(CALLS))
@pytest.mark.parametrize("value,type_name", [(1, "int"), (np.bool_(True), "numpy.bool")])
def test_only_a_python_bool_is_a_bool(what, value, type_name):
    name = what.split()[-1]
    with pytest.raises(TypeError, match=rf"{name} must be a bool, got .* \({type_name}\)"):
        CALLS[what](value)
