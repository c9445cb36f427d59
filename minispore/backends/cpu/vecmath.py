"""Vectorisable exp/log/log1p/tanh/sigmoid/softplus/erf/sin/cos for generated numba kernels.

Why: the PyPI llvmlite has no SVML, so inside an njit loop `np.exp`/`np.tanh`/`math.erf` are scalar
libm calls and the loop cannot vectorise (0.4-0.8 GB/s on 4M float32).  The functions are those of
core/scalar_math.py (the algorithms, their constants and accuracy are documented there): straight-
line code -- polynomials, a few integer bit tricks, selects -- so `for i in range(n): out[i] =
vexp(x[i])` becomes a packed (ymm/zmm) loop.

Use from generated code: `from minispore.backends.cpu.vecmath import vexp, vlog, ...` and call
`vexp(x0)` on a float32 or float64 scalar.  Each name is a stub with a `numba.extending.overload`:
at compile time the float32 or float64 function is picked from the argument type (integers and
booleans go to float64, like numpy) and lowered by an intrinsic that emits llvm_math's IR for it
(`llvm_math.math_fn` on numba's own module: an internal `alwaysinline` function, so LLVM inlines it
into the kernel and vectorises the loop).  The numba kernels and the LLVM native sink thus run the
same IR: their results are equal by construction.  Called from plain Python the stubs fall back to
numpy.  Notes for the code generator:
  * the IR keeps its own strict flags ('contract' only) even inside a fastmath kernel, so NaN/inf
    handling does not depend on the caller; but the kernel's own divisions branch (and block
    vectorisation) unless it uses error_model="numpy";
  * float32 kernels must keep the arithmetic in float32 (numba types `x * 1.5` as float64, so emit
    constants as np.float32(1.5)), otherwise the float64 function -- twice the cost -- is used;
  * numba's on-disk cache does not see changes to the IR's sources: put `DIGEST` (a hash of this
    file, llvm_math.py and core/scalar_math.py) into the generated source so that cached kernels
    are rebuilt when they change.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
from numba import types
from numba.extending import intrinsic, overload

from ...core import scalar_math
from . import llvm_math

__all__ = ["vexp", "vlog", "vlog1p", "vtanh", "vsigmoid", "vsoftplus", "verf", "vsin", "vcos"]
DIGEST = hashlib.sha256(Path(__file__).read_bytes()
                        + llvm_math.DIGEST.encode()).hexdigest()[:16]   # see the docstring


# ----------------------------------------------------------------- public stubs (numpy in Python)
def vexp(x): return np.exp(x)
def vlog(x): return np.log(x)
def vlog1p(x): return np.log1p(x)
def vtanh(x): return np.tanh(x)
def vsigmoid(x): return 1 / (1 + np.exp(-x))
def vsoftplus(x): return np.logaddexp(0, x)
def verf(x): return np.vectorize(math.erf, otypes=[np.result_type(x, np.float32)])(x)
def vsin(x): return np.sin(x)
def vcos(x): return np.cos(x)


_STUBS = {"exp": vexp, "log": vlog, "log1p": vlog1p, "tanh": vtanh, "sigmoid": vsigmoid,
          "softplus": vsoftplus, "erf": verf, "sin": vsin, "cos": vcos}
assert set(_STUBS) == set(scalar_math.names("decomposed"))


def _lowering(name):
    """An intrinsic computing `name` on a float32/float64 scalar with llvm_math's IR."""
    @intrinsic
    def impl(typingctx, x):
        if isinstance(x, types.Float) and x.bitwidth in (32, 64):
            def codegen(ctx, b, sig, args):
                return b.call(llvm_math.math_fn(b.module, name, args[0].type), args)
            return x(x), codegen
    return impl


# the overload is a one-call wrapper, marked LLVM `alwaysinline` (forceinline) like the function it
# calls, so that nothing of it is left in the kernel's loop
_JIT = dict(forceinline=True)


def _register(stub, name):
    lower = _lowering(name)

    @overload(stub, jit_options=_JIT)
    def _ov(x):
        if isinstance(x, types.Float) and x.bitwidth in (32, 64):
            return lambda x: lower(x)
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x: stub(np.float64(x))


for _name, _stub in _STUBS.items():
    _register(_stub, _name)
