"""ops.RandomChoiceWithMask: the coordinates of True elements in a random order, padded with
zero rows whose mask is False, in both modes; MindSpore 2.10's dtypes, shapes and errors
(MindSpore's own draws differ: only the set chosen is compared)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops

X = np.array([[True, False, True], [False, True, True]])
TRUE = {(0, 0), (0, 2), (1, 1), (1, 2)}


class _Choose(nn.Cell):
    def __init__(self, count):
        super().__init__()
        self.op = ops.RandomChoiceWithMask(count=count)

    def construct(self, x):
        return self.op(x)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_every_true_coordinate_once_then_zero_rows_masked_off(mode):
    ms.set_context(mode=mode)
    idx, mask = _Choose(6)(Tensor(X))
    assert idx.dtype == ms.int32 and idx.shape == (6, 2)
    assert mask.dtype == ms.bool_ and mask.asnumpy().tolist() == [True] * 4 + [False] * 2
    assert {tuple(r) for r in idx.asnumpy()[:4].tolist()} == TRUE
    assert idx.asnumpy()[4:].tolist() == [[0, 0], [0, 0]]


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_fewer_rows_than_true_elements_choose_a_subset(mode):
    ms.set_context(mode=mode)
    idx, mask = _Choose(2)(Tensor(X))
    rows = {tuple(r) for r in idx.asnumpy().tolist()}
    assert len(rows) == 2 and rows <= TRUE and mask.asnumpy().all()


def test_the_order_is_random_and_reproducible_under_set_seed():
    orders = []
    for _ in range(2):
        ms.set_seed(7)
        op = ops.RandomChoiceWithMask(count=4)
        orders.append([op(Tensor(X))[0].asnumpy().tolist() for _ in range(6)])
    assert orders[0] == orders[1]
    assert len({str(o) for o in orders[0]}) > 1       # another call, another order


def test_errors_as_mindspore():
    with pytest.raises(TypeError, match=r"must be a type of \{Tensor\[Bool\]\}"):
        ops.RandomChoiceWithMask()(Tensor(np.array([1.0], np.float32)))
    with pytest.raises(ValueError, match="rank should be between 1 and 5, but got:0"):
        ops.RandomChoiceWithMask()(Tensor(np.array(True)))
    with pytest.raises(ValueError, match="'count' must be positive"):
        ops.RandomChoiceWithMask(count=0)
    with pytest.raises(TypeError, match="'seed' must be an int"):
        ops.RandomChoiceWithMask(seed=1.5)
    from minispore.ops import operations as P
    assert P.RandomChoiceWithMask is ops.RandomChoiceWithMask
