"""Helpers shared by the graph-mode frontend tests (test_parser.py, test_control_flow.py): a
fresh compile cache at O0 for every test, tensor shorthands, and the graph-vs-PyNative check
(same values, dtypes, shapes and output structure, bit for bit)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn
from minispore.core.graph import compile as graph_compile

F32 = np.float32


@pytest.fixture(autouse=True)
def fresh_cache():
    """An empty compile cache, and jit_level O0 (kernel by kernel: bit-identical to PyNative);
    conftest restores the context afterwards. Autouse in every module that imports it."""
    graph_compile.clear_cache()
    ms.set_context(jit_level="O0")
    yield
    graph_compile.clear_cache()


def t(a, dtype=F32):
    return Tensor(np.asarray(a, dtype))


def _flat(out):
    """(leaves, structure): tensors become numpy arrays, containers keep their type."""
    if isinstance(out, Tensor):
        return [out.asnumpy()], "T"
    if isinstance(out, (tuple, list)):
        leaves, trees = [], []
        for o in out:
            lv, tr = _flat(o)
            leaves += lv
            trees.append(tr)
        return leaves, (type(out).__name__, tuple(trees))
    if isinstance(out, dict):
        leaves, tree = _flat(list(out.values()))
        return leaves, ("dict", tuple(out), tree)
    return [out], ("C", type(out).__name__)


def assert_same(graph, eager):
    (lg, tg), (le, te) = _flat(graph), _flat(eager)
    assert tg == te, f"output structure differs: graph {tg} vs pynative {te}"
    for i, (a, b) in enumerate(zip(lg, le)):
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape, \
                f"output {i}: graph {a.dtype}{a.shape} vs pynative {b.dtype}{b.shape}"
            np.testing.assert_array_equal(a, b, err_msg=f"output {i}")
        else:
            assert a == b, f"output {i}: graph {a!r} vs pynative {b!r}"


def graph_vs_pynative(fn, *args, **kwargs):
    """`fn(*args)` in PyNative vs `ms.jit(fn)(*args)` in GRAPH_MODE (called twice: compiled, then
    cached). `fn` is a plain function or a Cell (whose call compiles in GRAPH_MODE)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = fn(*args, **kwargs)
    ms.set_context(mode=ms.GRAPH_MODE)
    compiled = fn if isinstance(fn, nn.Cell) else ms.jit(fn)
    first = compiled(*args, **kwargs)
    assert_same(first, eager)
    assert_same(compiled(*args, **kwargs), eager)
    return first


def line_of(fn_or_cls, needle: str) -> int:
    """The line number of the first source line of fn containing `needle`."""
    lines, start = inspect.getsourcelines(fn_or_cls)
    for i, text in enumerate(lines):
        if needle in text:
            return start + i
    raise AssertionError(f"{needle!r} not in the source of {fn_or_cls}")
