"""The LLVM renderer of core/scalar_math.py's definitions: exp/log/log1p/tanh/sigmoid/softplus/erf/
sin/cos as llvmlite.ir functions.

`math_fn(module, name, ty)` returns `<ty> @minispore_<name>_<f32|f64>(<ty>)` in `module` (defined on
first request, then found in `module.globals`): internal linkage, `alwaysinline nounwind`, so that
LLVM's O3 pipeline inlines it into the caller's loop and the loop vectoriser packs it -- the PyPI
llvmlite has no SVML, so calling libm would keep the loop scalar.  Users: the LLVM native sink
(native_emit / native_rows) and, inside numba kernels, vecmath.py (an intrinsic that calls
math_fn on numba's own module): both run this IR.  No numba is imported here.

`_Emit` is scalar_math's ops handler on an IRBuilder.  Every fadd/fsub/fmul/fdiv/fcmp and every
float-returning call carries the fast-math flag `contract` and nothing else (so LLVM may fuse a
multiply into its single dependent add: FMA where the CPU has it), never nnan/ninf/reassoc:
NaN/inf handling does not depend on the caller's flags; negation is `fsub -0.0, x`; comparisons
are ordered except `ne` (fcmp une); `select` is a select; fmuladd is llvm.fmuladd; float64 erf
calls libm `erf` (declared here; the JIT resolves it from the process).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from llvmlite import ir

from ...core import scalar_math

__all__ = ["math_fn", "NAMES", "DIGEST"]
# the IR these functions are made of: this renderer and the definitions
DIGEST = hashlib.sha256(Path(__file__).read_bytes()
                        + scalar_math.SOURCE_DIGEST.encode()).hexdigest()[:16]

NAMES = scalar_math.names("decomposed")
_F32, _F64 = ir.FloatType(), ir.DoubleType()
_FLAGS = ("contract",)


class _Emit(scalar_math.Ops):
    """scalar_math's ops handler emitting llvmlite IR with builder `b` (working type `ty`)."""

    def __init__(self, module, b, ty):
        self.module, self.b, self.ty = module, b, ty
        self.bits = 32 if ty == _F32 else 64
        self.it = ir.IntType(self.bits)

    def k(self, v):
        return ir.Constant(_F32 if isinstance(v, np.float32) else _F64, float(v))

    def ki(self, v): return ir.Constant(self.it, v)

    def add(self, x, y): return self.b.fadd(x, y, flags=_FLAGS)
    def sub(self, x, y): return self.b.fsub(x, y, flags=_FLAGS)
    def mul(self, x, y): return self.b.fmul(x, y, flags=_FLAGS)
    def div(self, x, y): return self.b.fdiv(x, y, flags=_FLAGS)
    def neg(self, x): return self.sub(ir.Constant(x.type, -0.0), x)

    def _cmp(self, op, x, y):
        cmp = self.b.fcmp_unordered if op == "!=" else self.b.fcmp_ordered
        return cmp(op, x, y, flags=_FLAGS)

    def gt(self, x, y): return self._cmp(">", x, y)
    def lt(self, x, y): return self._cmp("<", x, y)
    def ge(self, x, y): return self._cmp(">=", x, y)
    def le(self, x, y): return self._cmp("<=", x, y)
    def eq(self, x, y): return self._cmp("==", x, y)
    def ne(self, x, y): return self._cmp("!=", x, y)
    def select(self, c, x, y): return self.b.select(c, x, y)

    def _intr(self, name, *args):
        ty = args[0].type
        fname = f"llvm.{name}.{'f32' if ty == _F32 else 'f64'}"
        fn = self.module.globals.get(fname)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ty, [ty] * len(args)), fname)
        return self.b.call(fn, args, fastmath=_FLAGS)

    def fabs(self, x): return self._intr("fabs", x)
    def rint(self, x): return self._intr("rint", x)
    def floor(self, x): return self._intr("floor", x)
    def copysign(self, x, y): return self._intr("copysign", x, y)
    def fmuladd(self, a, b, c): return self._intr("fmuladd", a, b, c)
    def fpext(self, x): return self.b.fpext(x, _F64)
    def fptrunc(self, x): return self.b.fptrunc(x, self.ty)

    def bits_of(self, x): return self.b.bitcast(x, self.it)
    def float_of(self, i): return self.b.bitcast(i, self.ty)
    def iadd(self, i, j): return self.b.add(i, j)
    def isub(self, i, j): return self.b.sub(i, j)
    def iand(self, i, j): return self.b.and_(i, j)
    def ashr(self, i, n): return self.b.ashr(i, self.ki(n))
    def shl(self, i, n): return self.b.shl(i, self.ki(n))
    def sitofp(self, i): return self.b.sitofp(i, self.ty)

    def call(self, name, x):
        return self.b.call(math_fn(self.module, name, self.ty), [x], fastmath=_FLAGS)

    def libm(self, name, x):
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(x.type, [x.type]), name)
            fn.attributes.add("readonly")
            fn.attributes.add("nounwind")
        return self.b.call(fn, [x], fastmath=_FLAGS)


def math_fn(module: ir.Module, name: str, ty) -> ir.Function:
    """`<ty> @minispore_<name>_<f32|f64>(<ty>)` in `module`, defined on first request.

    name: one of NAMES; ty: ir.FloatType() or ir.DoubleType().  The function is internal and
    `alwaysinline nounwind`: call it from a loop and run the O3 pipeline (loop vectorisation on)
    to get packed code.  float64 erf calls libm `erf` (declared here; the JIT must resolve it)."""
    if name not in scalar_math.DEFINITIONS:
        raise ValueError(f"unknown math function {name!r}; expected one of {NAMES}")
    if ty not in (_F32, _F64):
        raise TypeError(f"math_fn needs ir.FloatType() or ir.DoubleType(), not {ty}")
    fname = f"minispore_{name}_{'f32' if ty == _F32 else 'f64'}"
    fn = module.globals.get(fname)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ty, [ty]), fname)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(scalar_math.DEFINITIONS[name](_Emit(module, b, ty), fn.args[0]))
    return fn
