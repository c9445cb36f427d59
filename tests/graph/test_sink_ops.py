"""Every op of the op database at jit_level O2 through the CPU's native sink: the program that
ran is a NativeProgram (`graph_compile.last_compiled()`), no RuntimeWarning says otherwise, and
the results match the op's numpy reference. A graph the native sink declines runs kernel by
kernel (the O1 Program) with a RuntimeWarning naming the node
(test_native_fallback_warns_naming_the_node)."""
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.core import dtype as dt
from minispore.core.graph import compile as graph_compile
from minispore.core.graph.execute import Program
from helpers import as_tuple, assert_close, forward_tol, ref_op, run_op
from opdb import CASES, rng_for

def _sink_params():
    """Each op at its first dtype, and on bools where the op takes them (bool arithmetic and
    logic reach the sink uncast: the native sink computes them as 1-bit integers)."""
    out = []
    for case in CASES:
        dtypes = [case.dtypes[0]] + ([dt.bool_] if dt.bool_ in case.dtypes[1:] else [])
        for dtype in dtypes:
            reason = case.xfail_reason("sink", dtype)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            tag = "-bool" if dtype is not case.dtypes[0] else ""
            out.append(pytest.param(case, dtype, marks=marks, id=f"{case.name}{tag}"))
    return out


@pytest.mark.parametrize("case,dtype", _sink_params())
def test_op_sinks_at_o2(case, dtype):
    """The native sink ran the op's graph, with the numpy reference's results."""
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    for s in case.samples(rng_for("forward", case.name, dtype), dtype):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            got = as_tuple(run_op(case.name, s.args, s.attrs))
        messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        program = type(graph_compile.last_compiled().program)
        assert program is NativeProgram and not messages, \
            f"{case.name} {s.desc}: {program.__name__} ran; warnings: {messages}"
        for k, (g, e) in enumerate(zip(got, as_tuple(ref_op(case.name, s.args, s.attrs)))):
            rtol, atol = forward_tol(g.dtype, True, case.tol)
            assert_close(g.asnumpy(), np.asarray(e), rtol, atol, f"{case.name} {s.desc} out {k}")


def test_native_fallback_warns_naming_the_node():
    """A graph the native sink cannot lower (a float16 prod: eager rounds every partial product
    to half) runs kernel by kernel (the O1 Program), and a RuntimeWarning names the graph and
    the node, and says how to ask for that without the warning."""
    x = np.array([[1.5, 2.0], [3.0, 0.5]], np.float16)
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    with pytest.warns(RuntimeWarning, match=r"^jit_level O2: graph '_op_graph' runs kernel by "
                                            r"kernel \(as O1\) because the CPU sink cannot lower "
                                            r"node 'prod': prod over Float16; set "
                                            r"jit_level='O1' to run it so without this warning$"):
        out = run_op("prod", (x,), {"axis": 0})
    assert type(graph_compile.last_compiled().program) is Program
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(out.asnumpy(), run_op("prod", (x,), {"axis": 0}).asnumpy())


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


@pytest.mark.parametrize("level", ["O1", "O2"])
@pytest.mark.parametrize("name", list(_BOOL_GRAPHS))
def test_bool_arithmetic_is_logic_in_fused_and_sunk_graphs(name, level):
    """bool + bool is logical or and bool * bool logical and, as PyNative computes them, also
    when the sum is one member of a fused loop (read there by eq/xor/cast) and in the native
    sink, where bools are 1-bit integers (1 + 1 would wrap to 0)."""
    fn, ref = _BOOL_GRAPHS[name]
    x, y, z = (np.array(v, bool) for v in ([1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 0]))
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    got = ms.jit(fn)(*(ms.Tensor(v) for v in (x, y, z)))
    program = type(graph_compile.last_compiled().program)
    assert program is (NativeProgram if level == "O2" else Program)
    assert_close(got.asnumpy(), ref(x, y, z), 0, 0, f"{name} at {level}")
