"""The calls tests/api/test_mint.py checks, importable under either runtime: `mint` is
minispore.mint, or mindspore.mint when MINT_CASES_RUNTIME=mindspore. Each case is a function of
tensors made from its numpy inputs, with an optional numpy reference written from PyTorch's
semantics (used where MindSpore 2.10's CPU wheel has no kernel for the mint function).

`~/.venvs/mindspore/bin/python tests/api/mint_cases.py` runs every case in MindSpore 2.10 and
rewrites tests/api/mint_ms_values.py with what it returned (or the error it raised)."""
from __future__ import annotations

import importlib
import math
import os

import numpy as np

RUNTIME = os.environ.get("MINT_CASES_RUNTIME", "minispore")
ms = importlib.import_module(RUNTIME)
mint = importlib.import_module(RUNTIME + ".mint")

CASES = {}      # name -> (fn, inputs, numpy reference or None, runs in graph mode)


def case(*inputs, ref=None, graph=True, name=None):
    def deco(fn):
        CASES[name or fn.__name__] = (fn, inputs, ref, graph)
        return fn
    return deco


F = np.array([[1.5, -2.0, 3.0], [0.0, 4.0, -1.0]], np.float32)          # (2, 3)
G = np.array([[0.5, 2.0, -3.0], [1.0, -4.0, 2.5]], np.float32)
P = np.array([[0.25, 1.0, 2.5], [4.0, 0.5, 9.0]], np.float32)           # positive
U = np.array([[-0.75, -0.25, 0.0], [0.25, 0.5, 0.9]], np.float32)       # in (-1, 1)
I = np.array([[1, -7, 3], [0, 7, -2]], np.int32)
J = np.array([[2, 2, -2], [3, 2, 3]], np.int32)
B = np.array([[True, False, True], [False, False, True]])
C = np.array([[True, True, False], [False, True, True]])
T = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 4 - 2            # (2, 3, 4)
TIES = np.array([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]], np.float32)
V = np.array([1.0, -2.0, 3.0], np.float32)
W = np.array([0.5, 4.0, -1.0], np.float32)
M3 = np.arange(9, dtype=np.float32).reshape(3, 3) - 4
IDX = np.array([[0, 2], [1, 0]], np.int64)
NANS = np.array([1.0, np.nan, np.inf, -np.inf, -0.5], np.float32)


def _to_numpy(v):
    """A case's result as plain values: arrays for tensors, tuples for tuples."""
    if isinstance(v, (tuple, list)):
        return tuple(_to_numpy(e) for e in v)
    if isinstance(v, ms.Tensor):
        return v.asnumpy()
    return v


def sys_argv_one():
    """`--one NAME`: run that case alone and print its result (for _record_isolated)."""
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        for name in list(CASES):
            if name != sys.argv[2]:
                del CASES[name]
        print("RESULT " + repr(_record()[sys.argv[2]]))
        return True
    return False


def _record():
    """Run every case in this runtime: name -> the result as a Python literal, or the error."""
    out = {}
    for name, (fn, inputs, _, _) in CASES.items():
        try:
            r = _to_numpy(fn(*[ms.Tensor(a) for a in inputs]))
            _sync()                     # an error of an asynchronous kernel surfaces here
            out[name] = _literal(r)
        except Exception as e:          # noqa: BLE001 (recorded: the kernel is missing)
            out[name] = ("error", f"{type(e).__name__}: {str(e).splitlines()[0][:100]}")
            for _ in range(3):          # MindSpore reports a failed launch on a later op too
                try:
                    _sync()
                    break
                except Exception:       # noqa: BLE001
                    pass
    return out


def _sync():
    (ms.Tensor(np.ones(1, np.float32)) + 1).asnumpy()


def _literal(r):
    if isinstance(r, tuple):
        return ("tuple", [_literal(e) for e in r])
    if isinstance(r, np.ndarray):
        return ("array", str(r.dtype), list(r.shape), r.tolist())
    if isinstance(r, (bool, np.bool_)):
        return ("bool", bool(r))
    return ("number", type(r).__name__, float(r) if isinstance(r, float) else r)


def _record_isolated(values):
    """Each failed case again in a process of its own (MindSpore reports a failed launch on
    later ops as well, so an error may belong to an earlier case)."""
    import subprocess
    import sys
    for name, v in values.items():
        if v[0] == "error":
            r = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True,
                               text=True, env={**os.environ, "GLOG_v": "3"})
            line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
            if line:
                values[name] = eval(line[-1][7:], {"nan": math.nan, "inf": math.inf})
    return values


def _main():
    import pprint
    values = _record_isolated(_record())
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mint_ms_values.py")
    with open(path, "w") as f:
        f.write('"""What MindSpore 2.10 (CPU wheel) returned for each case of mint_cases.py '
                '(written by\nrunning that file with MINT_CASES_RUNTIME=mindspore); ("error", ...) '
                'where it raised (most\noften: no CPU kernel for that mint function)."""\n'
                'nan, inf = float("nan"), float("inf")\n\nVALUES = ')
        f.write(pprint.pformat(values, width=100, compact=True))
        f.write("\n")
    print(f"wrote {path}: {sum(v[0] != 'error' for v in values.values())} of {len(values)} ran")


# the cases themselves (each module registers its own into CASES)
import mint_cases_math  # noqa: E402,F401
import mint_cases_more  # noqa: E402,F401
import mint_cases_reduce  # noqa: E402,F401
import mint_cases_shape  # noqa: E402,F401

if __name__ == "__main__":
    import mint_cases       # the module the case files registered into, not this __main__
    if not mint_cases.sys_argv_one():
        mint_cases._main()
