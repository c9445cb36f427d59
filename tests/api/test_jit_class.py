"""ms.jit_class and ms.lazy_inline against MindSpore 2.10 (expected values observed running the
same scripts with MindSpore 2.10 on CPU; its GRAPH_MODE reads and calls methods of jit_class
instances and of plain objects alike)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn


@ms.jit_class
class Scaler:
    def __init__(self, k):
        self.k = k
        self.w = Tensor(np.array([1.0, 2.0], np.float32))

    def scale(self, x):
        return x * self.k + self.w


class PlainScaler:
    def __init__(self, k):
        self.k = k
        self.w = Tensor(np.array([1.0, 2.0], np.float32))

    def scale(self, x):
        return x * self.k + self.w


@ms.jit_class
class AddB:
    def __init__(self):
        self.b = 2.0

    def __call__(self, x):
        return x + self.b


class Holder(nn.Cell):
    def __init__(self, obj):
        super().__init__()
        self.obj = obj

    def construct(self, x):
        return self.obj.scale(x) + self.obj.k


class Makes(nn.Cell):
    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def construct(self, x):
        return self.cls(3.0).scale(x)


class Calls(nn.Cell):
    def __init__(self):
        super().__init__()
        self.c = AddB()

    def construct(self, x):
        return self.c(x)


X = np.array([3.0, 4.0], np.float32)


def test_jit_class_marks_the_class():
    assert Scaler.__ms_class__ is True
    assert not hasattr(PlainScaler, "__ms_class__")


@pytest.mark.parametrize("cls", [Scaler, PlainScaler], ids=["jit_class", "plain"])
def test_objects_in_both_modes(mode, cls):
    x = Tensor(X)
    assert Holder(cls(2.0))(x).asnumpy().tolist() == [9.0, 12.0]      # MindSpore: [9, 12]
    assert Makes(cls)(x).asnumpy().tolist() == [10.0, 14.0]           # MindSpore: [10, 14]

    @ms.jit
    def f(o, t):
        return o.scale(t)
    assert f(cls(2.0), x).asnumpy().tolist() == [7.0, 10.0]           # MindSpore: [7, 10]


def test_jit_class_call_method(mode):
    assert Calls()(Tensor(X)).asnumpy().tolist() == [5.0, 6.0]         # MindSpore: [5, 6]


def test_jit_class_refuses_what_mindspore_refuses():
    with pytest.raises(TypeError, match="can only be used for class type"):
        ms.jit_class(lambda: 1)
    with pytest.raises(TypeError, match="can only be used for class type"):
        ms.jit_class(Scaler(1.0))
    with pytest.raises(TypeError, match="cannot be used for nn.Cell"):
        ms.jit_class(Holder)


class Block(nn.Cell):
    @ms.lazy_inline
    def __init__(self, k, bias=1.0):
        super().__init__()
        self.k, self.bias = k, bias

    def construct(self, x):
        return x * self.k + self.bias


class Stack(nn.Cell):
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([Block(2.0), Block(3.0, bias=0.5)])

    def construct(self, x):
        for b in self.blocks:
            x = b(x)
        return x


class Front(nn.Cell):
    @ms.lazy_inline(attrs="k", policy="front")
    def __init__(self, k):
        super().__init__()
        self.k = k

    def construct(self, x):
        return x * self.k


def test_lazy_inline_runs_unchanged_in_both_modes(mode):
    n = Stack()
    x = Tensor(np.array([1.0, 2.0], np.float32))
    assert n(x).asnumpy().tolist() == [9.5, 15.5]                      # MindSpore PyNative
    assert ms.grad(n)(x).asnumpy().tolist() == [6.0, 6.0]
    b = Front(4.0)
    assert b(x).asnumpy().tolist() == [4.0, 8.0]


def test_lazy_inline_records_the_init_args():
    n = Stack()
    # MindSpore's cell_init_args strings, as MindSpore 2.10 sets them
    assert n.blocks[0].cell_init_args == "lazy_inline_Blockdict_values([2.0])"
    assert n.blocks[1].cell_init_args == "lazy_inline_Blockdict_values([3.0, 0.5])"
    assert Block._lazy_inline is True and Block.__init__._lazy_inline is True
    assert n.blocks[1]._lazy_inline_args == {"k": 3.0, "bias": 0.5}
    b = Front(4.0)
    assert b.cell_init_args == "lazy_inline_Front4.0" and b.no_inline is False


def test_lazy_inline_refuses_what_mindspore_refuses():
    with pytest.raises(ValueError, match="not the function: <lambda>"):
        ms.lazy_inline(lambda: 1)
    with pytest.raises(ValueError, match="not the class"):
        ms.lazy_inline(Block)

    class Back(nn.Cell):
        @ms.lazy_inline(policy="back")
        def __init__(self):
            super().__init__()
    with pytest.raises(ValueError, match="policy must be None or 'front'"):
        Back()
