"""minispore.core.scalar_math: its table is the one list of scalar operations that scalar_expr,
the CPU code generators and the Ascend cost model read; its definitions use only the ops-handler
protocol (so every renderer can run them); and the digest that numba's kernel cache keys on
changes when the definitions change."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from minispore.backends.ascend_sim import cost
from minispore.backends.cpu import codegen, llvm_math
from minispore.core import scalar_expr as E
from minispore.core import scalar_math as SM

PROTOCOL = {n for n, v in vars(SM.Ops).items() if v is SM.Ops._missing and n != "_missing"}


def test_scalar_expr_builds_the_table_functions():
    for name in SM.names("decomposed", "intrinsic", "test"):
        node = getattr(E, name)(E.arg(0))
        assert node.op == name and node.args[0].op == "arg"
    assert [E.logical_and(1, 2).op, E.logical_or(1, 2).op, E.logical_not(1).op] == \
        ["and", "or", "not"]
    assert set(E.UNARY_OPS) == {n for n, op in SM.TABLE.items() if op.arity == 1}
    assert set(E.BINARY_OPS) == {n for n, op in SM.TABLE.items() if op.arity == 2}
    assert (E.arg(0) + 1).op in SM.TABLE and E.where(E.arg(0), 1, 2).op in SM.TABLE


def test_backends_read_their_lists_from_the_table():
    decomposed, intrinsic = SM.names("decomposed"), SM.names("intrinsic")
    assert llvm_math.NAMES == decomposed == tuple(SM.DEFINITIONS)
    assert set(codegen.FUNCTION_NAMES) == set(decomposed) | set(intrinsic)
    assert all(codegen.FUNCTION_NAMES[n] == f"v{n}" for n in decomposed)
    assert {n: op.weight for n, op in SM.TABLE.items()} == cost._OP_WEIGHT
    assert cost.expr_ops(E.exp(E.arg(0)) * 2) == SM.TABLE["exp"].weight + SM.TABLE["mul"].weight
    for name in decomposed:                                    # each one renders for numba
        assert codegen.render(getattr(E, name)(E.arg(0)), ["x"]) == f"v{name}(x)"
        assert f"v{name}" in codegen.header_imports()


class _Recorder:
    """An ops handler that only records which protocol operations a definition calls."""

    def __init__(self, bits):
        self.bits, self.used, self.calls = bits, set(), set()

    def __getattr__(self, name):
        if name not in PROTOCOL:
            raise AttributeError(f"{name!r} is not an operation of scalar_math.Ops")
        self.used.add(name)
        return lambda *args: (self.calls.add(args[0]) if name in ("call", "libm") else None) \
            or ("value", name)


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("name", SM.names("decomposed"))
def test_definitions_use_only_the_ops_protocol(name, bits):
    rec = _Recorder(bits)
    assert SM.DEFINITIONS[name](rec, ("value", "x")) is not None
    assert rec.used and rec.used <= PROTOCOL
    called = rec.calls - {"erf"} if "libm" in rec.used else rec.calls
    assert called <= set(SM.DEFINITIONS) - {name}


def test_renderers_implement_the_whole_protocol():
    from minispore.backends.gpu import cuda_math
    assert len(PROTOCOL) == 31
    for handler in (llvm_math._Emit, cuda_math._Trace):
        missing = {n for n in PROTOCOL if getattr(handler, n) is SM.Ops._missing}
        assert not missing, (handler.__name__, missing)
    with pytest.raises(NotImplementedError):
        SM.Ops().add(1, 2)


def test_constants_are_of_their_width():
    for bits, T in ((32, np.float32), (64, np.float64)):
        c = SM.CONSTS[bits]
        for key, v in vars(c).items():
            vals = v if isinstance(v, tuple) else (v,)
            if key in ("PIO2", "TWO_OVER_PI"):                # the reduction is in float64
                assert all(type(u) is float for u in vals), key
            elif key not in ("MANT", "BIAS", "SQRT_HALF_BITS"):
                assert all(type(u) is T for u in vals), (bits, key)
        assert np.array(c.SQRT_HALF_BITS, f"u{bits // 8}").view(T) == T(np.sqrt(0.5))
        assert np.finfo(T).nmant == c.MANT and np.finfo(T).maxexp - 1 == c.BIAS


DIGESTS = textwrap.dedent("""
    from minispore.backends.cpu import codegen, llvm_math, vecmath
    print(llvm_math.DIGEST, vecmath.DIGEST, vecmath.DIGEST in codegen.header_imports())
""")


def _digests(root):
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-c", DIGESTS], env=env, cwd=root, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_kernel_digest_changes_with_the_definitions(tmp_path):
    """Generated numba kernels carry vecmath.DIGEST (numba's disk cache only sees their own
    source): editing core/scalar_math.py must change it, and llvm_math's."""
    pkg = Path(SM.__file__).resolve().parents[1]
    shutil.copytree(pkg, tmp_path / "minispore", ignore=shutil.ignore_patterns("__pycache__"))
    before = _digests(tmp_path)
    with open(tmp_path / "minispore" / "core" / "scalar_math.py", "a") as f:
        f.write("\n# edited\n")
    after = _digests(tmp_path)
    assert before[2] == after[2] == "True"
    assert before[0] != after[0] and before[1] != after[1]
