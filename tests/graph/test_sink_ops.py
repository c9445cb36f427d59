"""Every op of the op database at jit_level O2: the graph is sunk into one numba function (no
'cannot lower' warning) and matches the op's numpy reference. Half-precision dtypes are the
exception the sink declares: they warn and run kernel by kernel."""
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore.core import dtype as dt
from helpers import as_tuple, assert_close, forward_tol, ref_op, run_op
from opdb import CASES, rng_for

HALF = (dt.float16, dt.bfloat16)


def _involves_half(sample) -> bool:
    arrays = [np.asarray(a) for a in sample.args]
    return any(a.dtype in (np.float16,) or a.dtype.name == "bfloat16" for a in arrays) or \
        sample.attrs.get("dtype") in HALF


@pytest.mark.parametrize("sink", ["native", "numba"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_sinks_at_o2(case, sink, monkeypatch):
    """`native`: the LLVM sink where it lowers every node of the op's graph, else the numba
    sink; `numba`: the numba sink only."""
    monkeypatch.setenv("MINISPORE_NATIVE_SINK", "1" if sink == "native" else "0")
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    dtype = case.dtypes[0]
    for s in case.samples(rng_for("forward", case.name, dtype), dtype):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            got = as_tuple(run_op(case.name, s.args, s.attrs))
        sunk = not any("cannot lower" in str(w.message) for w in caught)
        assert sunk != _involves_half(s), \
            f"{case.name} {s.desc}: sunk={sunk}: {[str(w.message) for w in caught]}"
        for k, (g, e) in enumerate(zip(got, as_tuple(ref_op(case.name, s.args, s.attrs)))):
            rtol, atol = forward_tol(g.dtype, True, case.tol)
            assert_close(g.asnumpy(), np.asarray(e), rtol, atol, f"{case.name} {s.desc} out {k}")
