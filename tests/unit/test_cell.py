"""nn.Cell: registration, hierarchical parameter names, containers, modes."""
import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, Tensor, nn


class Dense(nn.Cell):
    def __init__(self, i, o):
        super().__init__()
        self.weight = Parameter(Tensor(np.ones((o, i), np.float32)))
        self.bias = Parameter(Tensor(np.zeros(o, np.float32)))

    def construct(self, x):
        return ms.ops.matmul(x, self.weight.T) + self.bias


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = Dense(4, 3)
        self.fc2 = Dense(3, 2)
        self.frozen = Parameter(Tensor([1.0]), name="frozen", requires_grad=False)

    def construct(self, x):
        return self.fc2(ms.ops.relu(self.fc1(x))) * self.frozen


def test_hierarchical_names_and_params():
    net = MLP()
    names = [n for n, _ in net.parameters_and_names()]
    assert names == ["frozen", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [p.name for p in net.trainable_params()] == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                        "fc2.bias"]
    assert [p.name for p in net.get_parameters()][0] == "frozen"
    assert [n for n, _ in net.cells_and_names()] == ["", "fc1", "fc2"]

    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.backbone = MLP()
    assert Outer().trainable_params()[0].name == "backbone.fc1.weight"


def test_same_numbers_in_both_modes():
    net = MLP()
    x = Tensor(np.ones((2, 4), np.float32))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = net(x).asnumpy()
    np.testing.assert_allclose(eager, np.full((2, 2), 12.0))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        np.testing.assert_array_equal(net(x).asnumpy(), eager)
        # standalone ops still run eagerly in GRAPH_MODE, as in MindSpore
        np.testing.assert_allclose(ms.ops.add(x, x).asnumpy(), 2 * np.ones((2, 4)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_sequential_and_cell_list():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    seq = nn.SequentialCell([Dense(4, 3), Dense(3, 2)])
    assert [n for n, _ in seq.parameters_and_names()] == ["0.weight", "0.bias", "1.weight",
                                                          "1.bias"]
    assert seq(Tensor(np.ones((1, 4), np.float32))).shape == (1, 2)
    assert len(seq) == 2 and isinstance(seq[1], Dense)
    cl = nn.CellList([Dense(2, 2)])
    cl.append(Dense(2, 2))
    assert len(cl) == 2 and len(cl.trainable_params()) == 4
    with pytest.raises(TypeError, match="expected a Cell"):
        nn.SequentialCell([1])


def test_set_train_and_grad_flags():
    net = MLP()
    net.set_train()
    assert net.training and net.fc1.training
    net.set_train(False)
    assert not net.fc2.training
    assert net.set_grad().requires_grad


def test_repr_tree():
    r = repr(MLP())
    assert r.startswith("MLP<") and "(fc1): Dense<>" in r


def test_a_parameter_tuple_attribute_is_registered():
    """As in MindSpore: Parameters held in a ParameterTuple attribute are the Cell's too (an
    optimizer's or a step cell's `self.params = ParameterTuple(...)`)."""
    import numpy as np
    import minispore as ms
    from minispore import nn

    class Holder(nn.Cell):
        def __init__(self, n):
            super().__init__()
            self.params = ms.ParameterTuple(
                ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name=f"p{i}") for i in range(n))

    h = Holder(3)
    assert [p.name for p in h.trainable_params()] == ["p0", "p1", "p2"]
    assert [n for n, _ in h.parameters_and_names()] == ["params.0", "params.1", "params.2"]
    h.params = ()
    assert h.trainable_params() == []
