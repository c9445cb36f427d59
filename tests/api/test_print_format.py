"""print and ops.Print output against MindSpore 2.10: every expected text below is what
MindSpore 2.10 printed on CPU for the same code (PyNative: Python's print shows str(Tensor),
ops.Print one input a line with tensors as their repr; GRAPH_MODE: print and ops.Print alike,
one item a line, tensors in MindSpore's C++ format without commas, 0-d tensors and Python
numbers as C++ streams them). Empty tensors are left out: MindSpore's graph-mode print shows
uninitialised memory for them."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops

P = ops.Print()


class Mixed(nn.Cell):
    def construct(self, a, m, s, b, h):
        print("==pyprint")
        print(a)
        print("x:", a)
        print(m)
        print(s)
        print(b)
        print(h)
        print(3)
        print("k", 2.5, a)
        print((a, m))
        print("==Print")
        P(a)
        P("x:", a)
        P(m)
        P(s)
        P(b)
        P(h)
        P("k", a, m)
        P((a, m))
        return a


class Constants(nn.Cell):
    def construct(self, a):
        print("A", a)
        print("B", 1 / 3, 1e20, 123456789.0, 0.1, False)
        print((1, 2), [3, "s"])
        print("C", (a, 2))
        P("D", (a, (a, 1)))
        print("E")
        print("F")
        P(-0.0, 1e-7, 7.0)
        return a


class EachPrinted(nn.Cell):
    def construct(self, *v):
        for t in v:
            P(t)
        return v[0]


class EachThenConstants(nn.Cell):
    def construct(self, *v):
        for t in v:
            P(t)
        P("a", "b")
        P(1, 2.5, True)
        return v[0]


def _mixed_inputs():
    return (Tensor(np.array([1.5, -2.0], np.float32)),
            Tensor(np.arange(6, dtype=np.int32).reshape(2, 3)),
            Tensor(np.array(3.25, np.float32)), Tensor(np.array([True, False])),
            Tensor(np.array([0.1, 2.0], np.float16)))


def _values():
    return [Tensor(np.array([1.0, 2.0], np.float32)), Tensor(np.array(1 / 3, np.float32)),
            Tensor(np.array(7, np.int32)), Tensor(np.array(True)),
            Tensor(np.array([1 / 3, 100.0], np.float64)),
            Tensor(np.arange(2000, dtype=np.float32)), Tensor(np.array(2.0, np.float16)),
            Tensor(np.array([[1.5]], np.float32)), Tensor(np.array([1, -2], np.int64)),
            Tensor(np.array([np.nan, np.inf, -np.inf], np.float32))]


def _wide():
    return [Tensor(np.arange(20, dtype=np.float32)), Tensor(np.arange(40, dtype=np.int32)),
            Tensor(np.arange(4000, dtype=np.float32).reshape(2, 2000)),
            Tensor(np.arange(2000, dtype=np.float32).reshape(1000, 2))]


MIXED_PYNATIVE = (
    '==pyprint\n'
    '[ 1.5 -2. ]\n'
    'x: [ 1.5 -2. ]\n'
    '[[0 1 2]\n'
    ' [3 4 5]]\n'
    '3.25\n'
    '[ True False]\n'
    '[0.1 2. ]\n'
    '3\n'
    'k 2.5 [ 1.5 -2. ]\n'
    '(Tensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.00000000e+00]), Te'
    'nsor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0, 1, 2],\n'
    ' [3, 4, 5]]))\n'
    '==Print\n'
    'Tensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.00000000e+00])\n'
    'x:\n'
    'Tensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.00000000e+00])\n'
    'Tensor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0, 1, 2],\n'
    ' [3, 4, 5]])\n'
    'Tensor(shape=[], dtype=Float32, value= 3.25)\n'
    'Tensor(shape=[2], dtype=Bool, value= [ True, False])\n'
    'Tensor(shape=[2], dtype=Float16, value= [ 9.9976e-02,  2.0000e+00])\n'
    'k\n'
    'Tensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.00000000e+00])\n'
    'Tensor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0, 1, 2],\n'
    ' [3, 4, 5]])\n'
    '(Tensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.00000000e+00]), Te'
    'nsor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0, 1, 2],\n'
    ' [3, 4, 5]]))\n')

MIXED_GRAPH = (
    '==pyprint\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'x:\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'Tensor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0 1 2]\n'
    ' [3 4 5]])\n'
    '3.25\n'
    'Tensor(shape=[2], dtype=Bool, value=[ True False])\n'
    'Tensor(shape=[2], dtype=Float16, value=[ 9.9976e-02  2.0000e+00])\n'
    '3\n'
    'k\n'
    '2.5\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'Tensor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0 1 2]\n'
    ' [3 4 5]])\n'
    '==Print\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'x:\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'Tensor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0 1 2]\n'
    ' [3 4 5]])\n'
    '3.25\n'
    'Tensor(shape=[2], dtype=Bool, value=[ True False])\n'
    'Tensor(shape=[2], dtype=Float16, value=[ 9.9976e-02  2.0000e+00])\n'
    'k\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'Tensor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0 1 2]\n'
    ' [3 4 5]])\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'Tensor(shape=[2, 3], dtype=Int32, value=\n'
    '[[0 1 2]\n'
    ' [3 4 5]])\n')

CONSTANTS_PYNATIVE = (
    'A [ 1.5 -2. ]\n'
    'B 0.3333333333333333 1e+20 123456789.0 0.1 False\n'
    "(1, 2) [3, 's']\n"
    'C (Tensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.00000000e+00]), 2)\n'
    'D\n'
    '(Tensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.00000000e+00]), (T'
    'ensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.00000000e+00]), 1))\n'
    'E\n'
    'F\n'
    '-0.0\n'
    '1e-07\n'
    '7.0\n')

CONSTANTS_GRAPH = (
    'A\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'B\n'
    '0.333333\n'
    '1e+20\n'
    '1.23457e+08\n'
    '0.1\n'
    '0\n'
    '(1, 2)\n'
    '3\n'
    's\n'
    'C\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    '2\n'
    'D\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    'Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00 -2.00000000e+00])\n'
    '1\n'
    'E\n'
    'F\n'
    '-0\n'
    '1e-07\n'
    '7\n')

VALUES_GRAPH = (
    'Tensor(shape=[2], dtype=Float32, value=[ 1.00000000e+00  2.00000000e+00])\n'
    '0.333333\n'
    '7\n'
    '1\n'
    'Tensor(shape=[2], dtype=Float64, value=[ 3.33333333e-01  1.00000000e+02])\n'
    'Tensor(shape=[2000], dtype=Float32, value=[ 0.00000000e+00  1.00000000e+00  2.00'
    '000000e+00 ...  1.99700000e+03  1.99800000e+03  1.99900000e+03])\n'
    '2\n'
    'Tensor(shape=[1, 1], dtype=Float32, value=\n'
    '[[ 1.50000000e+00]])\n'
    'Tensor(shape=[2], dtype=Int64, value=[ 1 -2])\n'
    'Tensor(shape=[3], dtype=Float32, value=[            nan             inf         '
    '   -inf])\n'
    'a\n'
    'b\n'
    '1\n'
    '2.5\n'
    '1\n')

VALUES_REPR = (
    'Tensor(shape=[2], dtype=Float32, value= [ 1.00000000e+00,  2.00000000e+00])\n'
    'Tensor(shape=[], dtype=Float32, value= 0.333333)\n'
    'Tensor(shape=[], dtype=Int32, value= 7)\n'
    'Tensor(shape=[], dtype=Bool, value= True)\n'
    'Tensor(shape=[2], dtype=Float64, value= [ 3.33333333e-01,  1.00000000e+02])\n'
    'Tensor(shape=[2000], dtype=Float32, value= [ 0.00000000e+00,  1.00000000e+00,  2'
    '.00000000e+00 ...  1.99700000e+03,  1.99800000e+03,  1.99900000e+03])\n'
    'Tensor(shape=[], dtype=Float16, value= 2)\n'
    'Tensor(shape=[1, 1], dtype=Float32, value=\n'
    '[[ 1.50000000e+00]])\n'
    'Tensor(shape=[2], dtype=Int64, value= [ 1, -2])\n'
    'Tensor(shape=[3], dtype=Float32, value= [            nan,             inf,      '
    '      -inf])\n')

WIDE_GRAPH = (
    'Tensor(shape=[20], dtype=Float32, value=[ 0.00000000e+00  1.00000000e+00  2.0000'
    '0000e+00  3.00000000e+00  4.00000000e+00  5.00000000e+00  6.00000000e+00  7.0000'
    '0000e+00  8.00000000e+00  9.00000000e+00  1.00000000e+01  1.10000000e+01 \n'
    '  1.20000000e+01  1.30000000e+01  1.40000000e+01  1.50000000e+01  1.60000000e+01'
    '  1.70000000e+01  1.80000000e+01  1.90000000e+01])\n'
    'Tensor(shape=[40], dtype=Int32, value=[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13'
    ' 14 15 16 17 18 19 20 21 22 23 \n'
    ' 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39])\n'
    'Tensor(shape=[2, 2000], dtype=Float32, value=\n'
    '[[ 0.00000000e+00  1.00000000e+00  2.00000000e+00 ...  1.99700000e+03  1.9980000'
    '0e+03  1.99900000e+03]\n'
    ' [ 2.00000000e+03  2.00100000e+03  2.00200000e+03 ...  3.99700000e+03  3.9980000'
    '0e+03  3.99900000e+03]])\n'
    'Tensor(shape=[1000, 2], dtype=Float32, value=\n'
    '[[ 0.00000000e+00  1.00000000e+00]\n'
    ' [ 2.00000000e+00  3.00000000e+00]\n'
    ' [ 4.00000000e+00  5.00000000e+00]\n'
    ' ...\n'
    ' [ 1.99400000e+03  1.99500000e+03]\n'
    ' [ 1.99600000e+03  1.99700000e+03]\n'
    ' [ 1.99800000e+03  1.99900000e+03]])\n')

WIDE_REPR = (
    'Tensor(shape=[20], dtype=Float32, value= [ 0.00000000e+00,  1.00000000e+00,  2.0'
    '0000000e+00,  3.00000000e+00,  4.00000000e+00,  5.00000000e+00,  6.00000000e+00,'
    '  7.00000000e+00,  8.00000000e+00,  9.00000000e+00,  1.00000000e+01,  1.10000000e+01, \n'
    '  1.20000000e+01,  1.30000000e+01,  1.40000000e+01,  1.50000000e+01,  1.60000000'
    'e+01,  1.70000000e+01,  1.80000000e+01,  1.90000000e+01])\n'
    'Tensor(shape=[40], dtype=Int32, value= [ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, '
    '10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, \n'
    ' 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39])\n'
    'Tensor(shape=[2, 2000], dtype=Float32, value=\n'
    '[[ 0.00000000e+00,  1.00000000e+00,  2.00000000e+00 ...  1.99700000e+03,  1.9980'
    '0000e+03,  1.99900000e+03],\n'
    ' [ 2.00000000e+03,  2.00100000e+03,  2.00200000e+03 ...  3.99700000e+03,  3.9980'
    '0000e+03,  3.99900000e+03]])\n'
    'Tensor(shape=[1000, 2], dtype=Float32, value=\n'
    '[[ 0.00000000e+00,  1.00000000e+00],\n'
    ' [ 2.00000000e+00,  3.00000000e+00],\n'
    ' [ 4.00000000e+00,  5.00000000e+00],\n'
    ' ...\n'
    ' [ 1.99400000e+03,  1.99500000e+03],\n'
    ' [ 1.99600000e+03,  1.99700000e+03],\n'
    ' [ 1.99800000e+03,  1.99900000e+03]])\n')


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_print_and_ops_print(mode, capsys):
    Mixed()(*_mixed_inputs())
    assert capsys.readouterr().out == (MIXED_PYNATIVE if mode == "pynative" else MIXED_GRAPH)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_python_values_and_nested_tuples(mode, capsys):
    Constants()(Tensor(np.array([1.5, -2.0], np.float32)))
    assert capsys.readouterr().out == (CONSTANTS_PYNATIVE if mode == "pynative" else
                                       CONSTANTS_GRAPH)


def test_graph_print_values_and_summaries(capsys):
    ms.set_context(mode=ms.GRAPH_MODE)
    EachThenConstants()(*_values())
    assert capsys.readouterr().out == VALUES_GRAPH
    EachPrinted()(*_wide())
    assert capsys.readouterr().out == WIDE_GRAPH


def test_repr_matches_mindspore():
    assert "".join(repr(t) + "\n" for t in _values()) == VALUES_REPR
    assert "".join(repr(t) + "\n" for t in _wide()) == WIDE_REPR
    assert repr(Tensor(np.zeros((0,), np.float32))) == \
        "Tensor(shape=[0], dtype=Float32, value= )"
    assert repr(Tensor(np.zeros((2, 0), np.float32))) == \
        "Tensor(shape=[2, 0], dtype=Float32, value=\n)"


def test_graph_print_honours_an_explicit_sep_and_end(capsys):
    ms.set_context(mode=ms.GRAPH_MODE)

    @ms.jit
    def f(x):
        print("s", x, sep="|", end="!\n")
        return x
    f(Tensor(np.array([1.0], np.float32)))
    assert capsys.readouterr().out == \
        "s|Tensor(shape=[1], dtype=Float32, value=[ 1.00000000e+00])!\n"


class ParamPrint(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="w")

    def construct(self, x):
        ops.Print()("w", self.w)
        print(self.w)
        ops.print_("v", x, 3)
        return x


PARAM_PYNATIVE = (
    "w\n"
    "Tensor(shape=[2], dtype=Float32, value= [ 1.00000000e+00,  2.00000000e+00])\n"
    "Parameter (name=w, shape=(2,), dtype=Float32, requires_grad=True)\n"
    "v\n"
    "Tensor(shape=[1], dtype=Float32, value= [ 5.00000000e-01])\n"
    "3\n")

PARAM_GRAPH = (
    "w\n"
    "Tensor(shape=[2], dtype=Float32, value=[ 1.00000000e+00  2.00000000e+00])\n"
    "Tensor(shape=[2], dtype=Float32, value=[ 1.00000000e+00  2.00000000e+00])\n"
    "v\n"
    "Tensor(shape=[1], dtype=Float32, value=[ 5.00000000e-01])\n"
    "3\n")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_parameters_and_print_(mode, capsys):
    ParamPrint()(Tensor(np.array([0.5], np.float32)))
    assert capsys.readouterr().out == (PARAM_PYNATIVE if mode == "pynative" else PARAM_GRAPH)
