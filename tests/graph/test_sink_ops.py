"""Every op of the op database at jit_level O2, through each CPU sink: the program that ran is
the one asked for (`graph_compile.last_compiled()`: a NativeProgram for `native`, a SunkProgram
for `numba`), no RuntimeWarning says otherwise, and the results match the op's numpy reference.
Half-precision dtypes are the exception both sinks declare: they warn ('cannot lower') and run
kernel by kernel. A graph the native sink cannot lower falls back to the numba sink with a
RuntimeWarning naming the node (test_native_fallback_warns_naming_the_node)."""
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.backends.cpu.sink import SunkProgram
from minispore.core import dtype as dt
from minispore.core.graph import compile as graph_compile
from minispore.core.graph.execute import Program
from helpers import as_tuple, assert_close, forward_tol, ref_op, run_op
from opdb import CASES, rng_for

HALF = (dt.float16, dt.bfloat16)
SINKS = {"native": NativeProgram, "numba": SunkProgram}


def _involves_half(sample) -> bool:
    arrays = [np.asarray(a) for a in sample.args]
    return any(a.dtype in (np.float16,) or a.dtype.name == "bfloat16" for a in arrays) or \
        sample.attrs.get("dtype") in HALF


def _native_declines(case, sample) -> str | None:
    """What the native sink says it cannot lower in this sample (it then warns and the numba
    sink runs the graph), or None: concat of parts of different dtypes."""
    if case.name == "concat" and len({np.asarray(a).dtype for a in sample.args}) > 1:
        return "node 'concat': concat of mixed dtypes"
    return None


def _sink_params():
    """Each op at its first dtype, and on bools where the op takes them (bool arithmetic and
    logic reach the sinks uncast: the native sink computes them as 1-bit integers)."""
    out = []
    for case in CASES:
        dtypes = [case.dtypes[0]] + ([dt.bool_] if dt.bool_ in case.dtypes[1:] else [])
        for dtype in dtypes:
            for sink in SINKS:
                reason = case.xfail_reason(f"sink-{sink}", dtype)
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                tag = "-bool" if dtype is not case.dtypes[0] else ""
                out.append(pytest.param(case, sink, dtype, marks=marks,
                                        id=f"{case.name}{tag}-{sink}"))
    return out


@pytest.mark.parametrize("case,sink,dtype", _sink_params())
def test_op_sinks_at_o2(case, sink, dtype, monkeypatch):
    """`native`: the LLVM sink ran the op's graph; `numba`: the numba sink did."""
    monkeypatch.setenv("MINISPORE_NATIVE_SINK", "1" if sink == "native" else "0")
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    for s in case.samples(rng_for("forward", case.name, dtype), dtype):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            got = as_tuple(run_op(case.name, s.args, s.attrs))
        messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        program = type(graph_compile.last_compiled().program)
        if _involves_half(s):
            assert program is Program and any("cannot lower" in m for m in messages), \
                f"{case.name} {s.desc}: half precision ran as {program.__name__}: {messages}"
        elif sink == "native" and _native_declines(case, s):
            why = _native_declines(case, s)
            assert program is SunkProgram and len(messages) == 1 and why in messages[0], \
                f"{case.name} {s.desc}: {program.__name__} ran; warnings: {messages}"
        else:
            assert program is SINKS[sink] and not messages, \
                f"{case.name} {s.desc}: the {sink} sink was asked for, {program.__name__} " \
                f"ran; warnings: {messages}"
        for k, (g, e) in enumerate(zip(got, as_tuple(ref_op(case.name, s.args, s.attrs)))):
            rtol, atol = forward_tol(g.dtype, True, case.tol)
            assert_close(g.asnumpy(), np.asarray(e), rtol, atol, f"{case.name} {s.desc} out {k}")


def test_native_fallback_warns_naming_the_node(monkeypatch):
    """A graph the native sink cannot lower (a concat of parts of different dtypes) runs in the
    numba sink, and a RuntimeWarning names the node and says so."""
    monkeypatch.setenv("MINISPORE_NATIVE_SINK", "1")
    a, b = np.ones((2, 2), np.float32), np.arange(4, dtype=np.int32).reshape(2, 2)
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    with pytest.warns(RuntimeWarning, match=r"^jit_level O2: the native CPU sink could not lower "
                                            r"graph '_op_graph' \(node 'concat': concat of mixed "
                                            r"dtypes\); it runs as one numba function"):
        out = run_op("concat", (a, b), {"axis": 0})
    assert type(graph_compile.last_compiled().program) is SunkProgram
    assert_close(out.asnumpy(), np.concatenate([a, b]).astype(np.float32), 0, 0, "concat")


_BOOL_GRAPHS = {
    "add": (lambda x, y, z: x + y, lambda x, y, z: x | y),
    "mul_add": (lambda x, y, z: x * y + x, lambda x, y, z: (x & y) | x),
    "add_read_by_equal": (lambda x, y, z: ms.ops.equal(x + y, z), lambda x, y, z: (x | y) == z),
    "sum_read_by_not_equal": (lambda x, y, z: ms.ops.not_equal(x + y + z, z),
                              lambda x, y, z: (x | y | z) != z),
    "add_read_by_xor": (lambda x, y, z: ms.ops.bitwise_xor(x + y, z),
                        lambda x, y, z: (x | y) ^ z),
    "add_cast_to_float": (lambda x, y, z: (x + y).astype(ms.float32) * 2.0,
                          lambda x, y, z: (x | y).astype(np.float32) * 2.0),
}


@pytest.mark.parametrize("level,sink", [("O1", "kernels"), ("O2", "native"), ("O2", "numba")])
@pytest.mark.parametrize("name", list(_BOOL_GRAPHS))
def test_bool_arithmetic_is_logic_in_fused_and_sunk_graphs(name, level, sink, monkeypatch):
    """bool + bool is logical or and bool * bool logical and, as PyNative computes them, also
    when the sum is one member of a fused loop (read there by eq/xor/cast) and in the native
    sink, where bools are 1-bit integers (1 + 1 would wrap to 0)."""
    monkeypatch.setenv("MINISPORE_NATIVE_SINK", "0" if sink == "numba" else "1")
    fn, ref = _BOOL_GRAPHS[name]
    x, y, z = (np.array(v, bool) for v in ([1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 0]))
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    got = ms.jit(fn)(*(ms.Tensor(v) for v in (x, y, z)))
    if level == "O2":
        assert type(graph_compile.last_compiled().program) is SINKS[sink]
    assert_close(got.asnumpy(), ref(x, y, z), 0, 0, f"{name} at {level} ({sink})")
