"""jit_level O2 against PyNative on the CPU over the whole op database: every op's graph, on every
dtype the op takes, is sunk as one native program (none runs kernel by kernel) and its results
have PyNative's bits (NaNs compared as NaNs, zeros by sign).

They run one algorithm by construction where the eager kernel is the native lowering of the
one-node graph (backends/cpu/native_kernels.py) or where one written loop nest is rendered both
ways (backends/cpu/loops/, render/); elsewhere the native lowering follows the eager kernel
operation by operation, and this test is what holds the two together.
"""
import warnings

import numpy as np
import pytest

import minispore as ms
from minispore.core.graph import compile as graph_compile
from helpers import as_tuple, run_op
from opdb import CASES, rng_for


def _params():
    return [pytest.param(case, dtype, id=f"{case.name}-{dtype}")
            for case in CASES for dtype in case.dtypes]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f" and a.dtype.name != "bfloat16":
        return np.array_equal(a, b)
    a, b = a.astype(np.float64), b.astype(np.float64)
    na, nb = np.isnan(a), np.isnan(b)
    return (np.array_equal(na, nb) and np.array_equal(a[~na], b[~nb])
            and np.array_equal(np.signbit(a[~na]), np.signbit(b[~nb])))


def _run(case, s, mode, level):
    ms.set_context(mode=mode, jit_level=level, device_target="CPU")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        try:
            out = [t.asnumpy() for t in as_tuple(run_op(case.name, s.args, s.attrs))]
        except Exception as e:                     # both modes must raise the same error
            out = f"{type(e).__name__}: {e}"
    return out, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("case,dtype", _params())
def test_o2_gives_pynatives_bits(case, dtype):
    failures = []
    for s in case.samples(rng_for("forward", case.name, dtype), dtype):
        eager, _ = _run(case, s, ms.PYNATIVE_MODE, "O0")
        sunk, messages = _run(case, s, ms.GRAPH_MODE, "O2")
        label = f"{case.name} {s.desc}"
        if isinstance(eager, str) or isinstance(sunk, str):
            if not (isinstance(eager, str) and isinstance(sunk, str)):
                failures.append(f"{label}: PyNative gave {eager!r:.200}, O2 {sunk!r:.200}")
            continue
        program = type(graph_compile.last_compiled().program).__name__
        if program != "NativeProgram" or messages:
            failures.append(f"{label}: {program} ran, not one NativeProgram: {messages}")
        for k, (e, g) in enumerate(zip(eager, sunk)):
            if not _same_bits(e, g):
                with np.errstate(invalid="ignore"):
                    diff = np.abs(e.astype(np.float64) - g.astype(np.float64)) \
                        if e.shape == g.shape else None
                failures.append(f"{label} out {k} ({program}): PyNative and O2 differ"
                                + (f", by up to {np.nanmax(diff):.3g}" if diff is not None
                                   and diff.size else f": {e.dtype}{e.shape} vs "
                                                      f"{g.dtype}{g.shape}"))
    assert not failures, "\n".join(failures)
