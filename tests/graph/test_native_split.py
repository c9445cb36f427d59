"""The native program's kernels (backends/cpu/native_split.py): one LLVM function per distinct node
computation, shared by the nodes, graphs and processes that compute the same thing; signatures
that find a kernel without lowering the node, checked against the node's own text; run-time
checks of a shared kernel that still name their own node's line."""
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops
from minispore.backends.cpu import native_jit, native_lower, native_split
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.core.graph import compile as graph_compile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(ms.__file__)))


def _compile(fn, *args):
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = fn(*args)
    (entry,) = graph_compile.cache.entries()
    assert isinstance(entry.program, NativeProgram)
    return out, entry.program


class _Deep(nn.Cell):
    def __init__(self, depth, width=16):
        super().__init__()
        self.body = nn.SequentialCell([nn.SequentialCell([nn.Dense(width, width), nn.ReLU()])
                                       for _ in range(depth)])

    def construct(self, x):
        return self.body(x)


def _x(width=16):
    return Tensor(np.random.default_rng(0).standard_normal((4, width)).astype(np.float32))


def test_repeated_layers_share_their_kernels_and_match_pynative():
    ms.set_seed(3)
    net = _Deep(6)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = net(_x()).asnumpy()
    got, prog = _compile(net, _x())
    np.testing.assert_array_equal(got.asnumpy(), want)
    table = prog.kernels
    assert table.calls >= 12                        # six matmul + bias-add/relu pairs at least
    assert len(table.kernels) <= table.calls // 4   # ... computed by a few distinct kernels
    assert len(re.findall(r'^define i32 @"k_', prog.ir_text, re.M)) == len(table.kernels)


def test_a_second_graph_links_the_kernels_it_has_seen(tmp_path, monkeypatch):
    monkeypatch.setenv("MINISPORE_CACHE_DIR", str(tmp_path))
    native_split._MEMO.clear()
    _, first = _compile(_Deep(3), _x())
    assert first.lib.compiled == 1 + len(first.kernels.kernels)     # the glue and each kernel
    _, deeper = _compile(_Deep(5), _x())
    assert deeper.lib.compiled == 1                                  # only its own glue
    assert set(deeper.kernels.kernels) == set(first.kernels.kernels)


def test_a_kernel_found_by_signature_is_not_lowered_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MINISPORE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MINISPORE_KERNEL_KEY_CHECK", "0")
    native_split._MEMO.clear()
    lowered = []
    real = native_split.lower_kernel
    monkeypatch.setattr(native_split, "lower_kernel",
                        lambda *a: lowered.append(1) or real(*a))
    _, prog = _compile(_Deep(6), _x())
    assert len(lowered) == len(prog.kernels.kernels) < prog.kernels.calls


def test_a_signature_that_misses_a_tunable_is_caught_by_the_key_check(monkeypatch):
    """With the lowering's tunables left out of the signature, a threshold change would reuse a
    kernel lowered under the old one: the key check (on in the suite) raises instead."""
    assert os.environ.get("MINISPORE_KERNEL_KEY_CHECK") == "1"
    native_split._MEMO.clear()
    monkeypatch.setattr(native_split, "_environment", lambda: ())
    monkeypatch.setattr(native_split.kernel_cache, "load", lambda *a, **k: None)

    def f(x):
        return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x)
    x = Tensor(np.linspace(-3, 3, 5000, dtype=np.float32))
    _compile(ms.jit(f), x)
    monkeypatch.setattr(native_lower, "PARALLEL_MIN_TRANSCENDENTAL", 1000)
    monkeypatch.setattr(native_jit, "threads", lambda: 3)
    with pytest.raises(AssertionError, match="kernel signature of node 'Fused' misses"):
        _compile(ms.jit(f), x)


def _two_gathers(x, i, j):
    a = ops.gather(x, i, 0)
    b = ops.gather(x, j, 0)                       # the same kernel as the line above
    return a + b


def test_a_shared_kernel_that_fails_a_check_names_its_own_node():
    x = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    ok = Tensor(np.array([0, 1], np.int32))
    bad = Tensor(np.array([1, 7], np.int32))
    got, prog = _compile(ms.jit(_two_gathers), x, ok, ok)
    np.testing.assert_array_equal(got.asnumpy(), 2 * x.asnumpy()[[0, 1]])
    names = [k for k in prog.kernels.kernels if prog.kernels.kernels[k].n_errors]
    assert len(names) == 1 and len(prog.errors) == 2      # one kernel, each node its checks
    for first, second, line in ((ok, bad, "b = ops.gather"), (bad, ok, "a = ops.gather")):
        with pytest.raises(IndexError, match="index 7 is out of range") as info:
            ms.jit(_two_gathers)(x, first, second)
        assert line in str(info.value)


_SCRIPT = textwrap.dedent("""
    import numpy as np, minispore as ms
    from minispore import nn
    from minispore.backends.cpu import native_split
    from minispore.core.graph import compile as graph_compile
    lowered = []
    real = native_split.lower_kernel
    native_split.lower_kernel = lambda *a: lowered.append(1) or real(*a)
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(8, 8), nn.ReLU(), nn.Dense(8, 8), nn.ReLU()])
    out = net(ms.Tensor(np.ones((2, 8), np.float32))).asnumpy()
    (entry,) = graph_compile.cache.entries()
    print(entry.program.lib.compiled, len(lowered), float(out.sum()).hex())
""")


def test_a_warm_process_lowers_and_compiles_no_kernel(tmp_path):
    script = tmp_path / "warm.py"
    script.write_text(_SCRIPT)
    env = dict(os.environ, MINISPORE_CACHE_DIR=str(tmp_path / "cache"),
               MINISPORE_KERNEL_KEY_CHECK="0",
               PYTHONPATH=os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p))
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=600) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    cold, warm = (r.stdout.split() for r in runs)
    assert int(cold[0]) >= 2 and int(cold[1]) >= 2
    assert warm[:2] == ["0", "0"] and warm[2] == cold[2]


def _stack_and_split(x):
    parts = ops.split(x * 2.0, 1, axis=1)                 # 6 parts of (4, 1, 5)
    return ops.concat(parts[::-1], axis=1), ops.concat([x, x], axis=2)


def test_concat_and_split_kernels_are_block_copies_compiled_at_o2():
    """concat and split move bits with one llvm.memcpy per contiguous block; such a kernel has
    no arithmetic, so LLVM compiles it at O2 (O3 spent tens of seconds on many copy loops),
    and the arithmetic kernel beside it stays at O3."""
    x = Tensor(np.random.default_rng(1).standard_normal((4, 6, 5)).astype(np.float32))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    want = [t.asnumpy() for t in _stack_and_split(x)]
    got, prog = _compile(ms.jit(_stack_and_split), x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w)
    speeds = {k.name: native_split.kernel_speed(k.text) for k in prog.kernels.kernels.values()}
    copies = [k for k in prog.kernels.kernels.values() if "llvm.memcpy" in k.text]
    assert len(copies) >= 2 and all(speeds[k.name] == 2 for k in copies)
    assert not any(re.search(r"\bfmul\b", k.text) for k in copies)
    assert 3 in speeds.values()                           # x * 2.0
