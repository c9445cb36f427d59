"""jit_level O0 / O1 (fusion) / O2 (the whole graph as one native call) give the same numbers
(O0 bit-identical to PyNative, O1/O2 within float tolerance), and O2 really sinks the graph or
warns which node it could not lower and runs it kernel by kernel."""
import io
import re
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, ops
from minispore.core.graph import compile as graph_compile
from minispore.core.graph.execute import Program

RTOL = {np.float32: 2e-5, np.float64: 1e-12}


from golden_models import MLP, TrainStep, chain, control  # noqa: E402


def _run(level, fn):
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    return fn()


_alive: list = []      # the last step Cell: tests read its compile-cache entry after the call,
                       # and the cache drops a dead Cell's entries


def _mlp_losses():
    step = TrainStep(MLP())
    _alive[:] = [step]
    r = np.random.default_rng(1)
    x = Tensor(r.standard_normal((5, 6)).astype(np.float32))
    y = Tensor(np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]])
    return np.array([step(x, y).asnumpy() for _ in range(4)] +
                    [p.asnumpy().sum() for p in step.params])


def _chain():
    x = Tensor(np.linspace(-4, 4, 1000, dtype=np.float32))
    return ms.jit(chain)(x).asnumpy()


def _control():
    x = Tensor(np.linspace(-1, 2, 12, dtype=np.float64).reshape(4, 3))
    a, b = ms.jit(control)(x, Tensor(np.int32(3)))
    return np.concatenate([a.asnumpy().ravel(), b.asnumpy()])


@pytest.mark.parametrize("program", [_mlp_losses, _chain, _control],
                         ids=["mlp-train-step", "fused-chain", "while-if"])
def test_levels_agree(program):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = program()
    o0 = _run("O0", program)
    np.testing.assert_array_equal(o0, eager)
    for level in ("O1", "O2"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)     # O2 must really sink these
            got = _run(level, program)
        np.testing.assert_allclose(got, eager, rtol=RTOL[eager.dtype.type], atol=1e-6,
                                   err_msg=level)


def test_o2_is_one_native_call_of_a_glue_function_and_one_kernel_per_distinct_node():
    from minispore.backends.cpu.native_sink import NativeProgram
    _run("O2", _mlp_losses)
    (entry,) = graph_compile.cache.entries()
    assert isinstance(entry.program, NativeProgram)
    assert entry.program.kernel_launches == 1
    defined = re.findall(r'^define .*@"?(\w+)"?\(', entry.program.ir_text, re.M)
    kernels = [f for f in defined if f.startswith("k_")]
    assert defined[:1] == ["graph"] and set(defined) - {"graph", "steps"} - set(kernels) <= {
        f for f in defined if f.startswith(("minispore_", "chunk_"))}    # inlined helpers only
    table = entry.program.kernels
    assert sorted(kernels) == sorted(table.kernels) and len(set(kernels)) == len(kernels)
    assert table.calls >= len(kernels)


_PRINTED = io.StringIO()


def _prints_to_a_file(x):
    print("x", x, file=_PRINTED)
    return x * 2 + 1


def test_o2_warns_and_runs_kernel_by_kernel_when_a_node_cannot_be_sunk():
    """print(file=...) has no native lowering: the graph runs as the O1 Program, with O0's
    output and text, and the warning names the graph and the node and says what to do."""
    x = Tensor(np.arange(4.0, dtype=np.float32))
    texts = {}
    for level in ("O0", "O2"):
        _PRINTED.seek(0)
        _PRINTED.truncate()
        graph_compile.clear_cache()
        ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
        if level == "O2":
            with pytest.warns(RuntimeWarning, match=r"^jit_level O2: graph '_prints_to_a_file' "
                                                    r"runs kernel by kernel \(as O1\) because the "
                                                    r"CPU sink cannot lower node 'Print': "
                                                    r"print\(file=\.\.\.\) \(the native program "
                                                    r"prints to stdout only\); "
                                                    r"set jit_level='O1'"):
                out = ms.jit(_prints_to_a_file)(x)
            assert type(graph_compile.last_compiled().program) is Program
        else:
            out = ms.jit(_prints_to_a_file)(x)
        np.testing.assert_array_equal(out.asnumpy(), [1.0, 3.0, 5.0, 7.0])
        texts[level] = _PRINTED.getvalue()
    assert texts["O2"] == texts["O0"] and texts["O0"].startswith("x\nTensor(shape=[4]")


def test_native_sink_switched_off_runs_o2_kernel_by_kernel_without_a_warning(monkeypatch):
    """MINISPORE_NATIVE_SINK=0: the O2 graph's program is the O1 one (the user asked: no
    warning), with O1's numbers; another value is an error naming the variable."""
    monkeypatch.setenv("MINISPORE_NATIVE_SINK", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        o2 = _run("O2", _mlp_losses)
    assert type(graph_compile.last_compiled().program) is Program
    monkeypatch.delenv("MINISPORE_NATIVE_SINK")
    np.testing.assert_array_equal(o2, _run("O1", _mlp_losses))
    monkeypatch.setenv("MINISPORE_NATIVE_SINK", "off")
    with pytest.raises(ValueError, match="MINISPORE_NATIVE_SINK"):
        _run("O2", _mlp_losses)


def test_jit_level_argument_applies_to_that_function():
    from minispore.backends.cpu.native_sink import NativeProgram

    def double(x):
        return x * 2 + 1
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O0")
    out = ms.jit(double, jit_level="O2")(Tensor(np.ones(3, np.float32)))
    np.testing.assert_array_equal(out.asnumpy(), [3.0, 3.0, 3.0])
    (entry,) = graph_compile.cache.entries()
    assert isinstance(entry.program, NativeProgram)
    assert ms.get_context("jit_level") == "O0"
    with pytest.raises(ValueError, match="jit_level"):
        ms.jit(double, jit_level="O9")


def printing(x):
    y = x * 2
    print("y is", y, "sum", y.sum(), sep=" | ")
    return y + 1


def test_print_in_the_sink_prints_like_o0_at_every_call(capsys):
    """The native sink calls back into Python for a Print node: it prints O0's text at every
    call."""
    from minispore.backends.cpu.native_sink import NativeProgram
    texts = {}
    for level in ("O0", "O2"):
        graph_compile.clear_cache()
        ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            for _ in range(2):
                ms.jit(printing)(Tensor(np.ones(2, np.float32)))
        texts[level] = capsys.readouterr().out
        if level == "O2":
            (entry,) = graph_compile.cache.entries()
            assert isinstance(entry.program, NativeProgram)
    assert texts["O0"] == texts["O2"] and texts["O0"].count("y is | Tensor(shape=[2]") == 2


def test_window_kernels_conv_generic_pools_per_geometry():
    """Convolutions share one numba function for every geometry; a pool's module is compiled
    for its window geometry (and max pools do not depend on count_include_pad)."""
    from minispore.backends.cpu import windows
    attrs = dict(stride=(1, 1), dilation=(1, 1), group=1, pad_mode="pad", pad=(1, 1, 1, 1))
    m1, f1, e1 = windows.conv_kernel("conv2d", ((2, 3, 5, 5), (4, 3, 3, 3)), attrs)
    m2, f2, e2 = windows.conv_kernel("conv2d", ((2, 3, 5, 5), (4, 3, 1, 1)),
                                     dict(attrs, pad=(0, 0, 0, 0)))
    assert m1 is m2 is windows and f1 == f2 == "conv2d" and e1 != e2
    pool = dict(kernel_size=(2, 2), stride=(2, 2), pad_mode="valid", pad=(0, 0, 0, 0))
    p1, _, _ = windows.pool_kernel("max_pool2d", (1, 1, 4, 4), pool)
    p2, _, _ = windows.pool_kernel("max_pool2d", (1, 1, 4, 4), dict(pool, stride=(1, 1)))
    p3, _, _ = windows.pool_kernel("max_pool2d", (1, 1, 4, 4), dict(pool, count_include_pad=True))
    from minispore.backends.cpu.loops import pool as pool_family
    assert p1 is not p2 and p1 is p3 and p1.DEFINITION == pool_family.max_pool.name
    assert "(oy * 2)" in p1.SOURCE and "(oy * 1)" in p2.SOURCE
