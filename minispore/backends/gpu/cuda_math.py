"""The C renderer of core/scalar_math.py's definitions: exp/log/log1p/tanh/sigmoid/softplus/erf/sin/
cos as CUDA `__device__` functions in source text, rounding exactly as the CPU's LLVM rendering.

`source(names)` returns a translation-unit fragment defining `msm_<name>_f32(float)` and
`msm_<name>_f64(double)` for the requested functions (calls between them inlined); by nvcc /
NVRTC it compiles to device code, as host C or C++ (no __CUDACC__) the same functions are plain
`static inline` ones (the host check of the generator: tests/gpu/test_cuda_math.py).

Why the rendering is not a straight transliteration: the CPU renders with LLVM's `contract` flag,
so LLVM fuses a multiply into a dependent add or subtract (an FMA) by its DAG combiner's rules, and
CUDA compilers fuse by their own.  So the definitions are traced into a DAG (common subexpressions
merged and calls inlined, as LLVM's GVN and inliner do), LLVM's non-aggressive contraction rules
are applied to it (`_contract`), and every remaining operation is written as an explicitly
rounded intrinsic (__fmul_rn, __dadd_rn, ...: never contracted by nvcc) and every fused pair as
fma.  The results equal the CPU's on a host with FMA (every GPU has it).  The device must not
flush subnormals (no -ftz=true / --use_fast_math), and float64 erf is the device's libm erf
(the CPU's is glibc's: last-bit differences are possible there).
"""
from __future__ import annotations

import numpy as np

from ...core import scalar_math

_FT = {32: "float", 64: "double"}
_NP = {32: np.float32, 64: np.float64}
_UT = {32: "unsigned int", 64: "unsigned long long"}
_ST = {32: "int", 64: "long long"}

PREAMBLE = r"""
#ifdef __CUDACC__
#define MSM_FN __device__ __forceinline__
MSM_FN float msm_f32_of(unsigned int i) { return __uint_as_float(i); }
MSM_FN unsigned int msm_bits_f32(float x) { return __float_as_uint(x); }
MSM_FN double msm_f64_of(unsigned long long i) { return __longlong_as_double((long long)i); }
MSM_FN unsigned long long msm_bits_f64(double x) {
  return (unsigned long long)__double_as_longlong(x); }
#else
#include <math.h>
#include <string.h>
#define MSM_FN static inline
MSM_FN float msm_f32_of(unsigned int i) { float f; memcpy(&f, &i, 4); return f; }
MSM_FN unsigned int msm_bits_f32(float x) { unsigned int i; memcpy(&i, &x, 4); return i; }
MSM_FN double msm_f64_of(unsigned long long i) { double f; memcpy(&f, &i, 8); return f; }
MSM_FN unsigned long long msm_bits_f64(double x) {
  unsigned long long i; memcpy(&i, &x, 8); return i; }
/* the host's rounded operations: compile with -ffp-contract=off so that none is fused */
MSM_FN float __fadd_rn(float a, float b) { return a + b; }
MSM_FN float __fsub_rn(float a, float b) { return a - b; }
MSM_FN float __fmul_rn(float a, float b) { return a * b; }
MSM_FN float __fdiv_rn(float a, float b) { return a / b; }
MSM_FN double __dadd_rn(double a, double b) { return a + b; }
MSM_FN double __dsub_rn(double a, double b) { return a - b; }
MSM_FN double __dmul_rn(double a, double b) { return a * b; }
MSM_FN double __ddiv_rn(double a, double b) { return a / b; }
#endif
"""


class _Node:
    """One operation of a traced definition: op, operands (nodes, ints, names), float width,
    number of uses (counted by _count_uses)."""
    __slots__ = ("op", "args", "bits", "uses")

    def __init__(self, op, args, bits):
        self.op, self.args, self.bits, self.uses = op, args, bits, 0


class _Trace(scalar_math.Ops):
    """scalar_math's ops handler building a DAG: equal operations on equal operands are one node
    (GVN), constants fold under negation, `call` inlines the callee (the inliner)."""

    def __init__(self, bits):
        self.bits, self.memo, self.nodes = bits, {}, []

    def node(self, op, args, bits=None):
        key = (op, bits or self.bits) + tuple(a if not isinstance(a, _Node) else id(a)
                                              for a in args)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = _Node(op, args, bits or self.bits)
            self.nodes.append(found)
        return found

    def k(self, v):
        bits = 32 if isinstance(v, np.float32) else 64
        raw = np.array(v, _NP[bits]).view(f"u{bits // 8}")
        return self.node("k", (int(raw),), bits)

    def ki(self, v): return self.node("ki", (int(v) % (1 << self.bits),))
    def add(self, x, y): return self.node("add", (x, y), x.bits)
    def sub(self, x, y): return self.node("sub", (x, y), x.bits)
    def mul(self, x, y): return self.node("mul", (x, y), x.bits)
    def div(self, x, y): return self.node("div", (x, y), x.bits)
    def gt(self, x, y): return self.node("gt", (x, y), x.bits)
    def lt(self, x, y): return self.node("lt", (x, y), x.bits)
    def ge(self, x, y): return self.node("ge", (x, y), x.bits)
    def le(self, x, y): return self.node("le", (x, y), x.bits)
    def eq(self, x, y): return self.node("eq", (x, y), x.bits)
    def ne(self, x, y): return self.node("ne", (x, y), x.bits)
    def iadd(self, i, j): return self.node("iadd", (i, j))
    def isub(self, i, j): return self.node("isub", (i, j))
    def iand(self, i, j): return self.node("iand", (i, j))
    def copysign(self, x, y): return self.node("copysign", (x, y), x.bits)

    def neg(self, x):
        if x.op == "k":                                    # constant folding
            return self.node("k", (x.args[0] ^ 1 << x.bits - 1,), x.bits)
        return self.node("neg", (x,), x.bits)

    def select(self, c, x, y): return self.node("select", (c, x, y), x.bits)
    def fabs(self, x): return self.node("fabs", (x,), x.bits)
    def rint(self, x): return self.node("rint", (x,), x.bits)
    def floor(self, x): return self.node("floor", (x,), x.bits)
    def fmuladd(self, a, b, c): return self.node("fma", (a, b, c), a.bits)
    def fpext(self, x): return self.node("fpext", (x,), 64)
    def fptrunc(self, x): return self.node("fptrunc", (x,), 32)
    def bits_of(self, x): return self.node("bits_of", (x,))
    def float_of(self, i): return self.node("float_of", (i,))
    def ashr(self, i, n): return self.node("ashr", (i, n))
    def shl(self, i, n): return self.node("shl", (i, n))
    def sitofp(self, i): return self.node("sitofp", (i,))
    def call(self, name, x): return scalar_math.DEFINITIONS[name](self, x)
    def libm(self, name, x): return self.node("libm", (name, x), x.bits)


def _count_uses(root):
    seen = set()

    def visit(n):
        if id(n) in seen:
            return
        seen.add(id(n))
        for a in n.args:
            if isinstance(a, _Node):
                a.uses += 1
                visit(a)
    visit(root)


def _contract(trace, root):
    """LLVM's FMA contraction of `contract`-flagged operations as its x86-64 DAG combiner does it
    on these definitions (non-aggressive fusion): an add or subtract takes in a multiply used only
    there; an add of two such multiplies fuses its right operand, a subtract its left one (its
    right one when the left has more uses).  tests/gpu/test_cuda_math.py checks the outcome bit
    for bit against the LLVM rendering, for every function on both widths."""
    _count_uses(root)
    mul1 = lambda n: n.op == "mul" and n.uses == 1  # noqa: E731
    for n in list(trace.nodes):
        if n.op == "add":
            x, y = n.args
            if mul1(y):
                n.op, n.args = "fma", (*y.args, x)
            elif mul1(x):
                n.op, n.args = "fma", (*x.args, y)
        elif n.op == "sub":
            x, y = n.args
            first_right = x.op == "mul" and y.op == "mul" and x.uses > y.uses
            for side in ((1, 0) if first_right else (0, 1)):
                if side == 0 and mul1(x):                  # x0*x1 - y -> fma(x0, x1, -y)
                    n.op, n.args = "fma", (*x.args, trace.neg(y))
                    break
                if side == 1 and mul1(y):                  # x - y0*y1 -> fma(-y0, y1, x)
                    n.op, n.args = "fma", (trace.neg(y.args[0]), y.args[1], x)
                    break


def _literal(bits, raw):
    v = np.array(raw, f"u{bits // 8}").view(_NP[bits])[()]
    if not np.isfinite(v):
        return f"msm_f{bits}_of({raw:#x}u{'ll' if bits == 64 else ''})"
    return float(v).hex() + ("f" if bits == 32 else "")


_RN = {"add": "add", "sub": "sub", "mul": "mul", "div": "div"}
_CMP = {"gt": ">", "lt": "<", "ge": ">=", "le": "<=", "eq": "==", "ne": "!="}


def _function(name, bits):
    """The C function msm_<name>_f<bits>."""
    trace = _Trace(bits)
    x = trace.node("x", ())
    root = scalar_math.DEFINITIONS[name](trace, x)
    _contract(trace, root)
    ft, ut, st = _FT[bits], _UT[bits], _ST[bits]
    lines, names = [], {id(x): "x"}

    def val(n):
        if not isinstance(n, _Node):
            return str(n)
        if n.op == "k":
            return _literal(n.bits, n.args[0])
        if n.op == "ki":
            return f"{n.args[0]:#x}u{'ll' if bits == 64 else ''}"
        if id(n) not in names:
            emit(n)
        return names[id(n)]

    def emit(n):
        a = [val(v) for v in n.args]
        f, sfx = _FT[n.bits], "f" if n.bits == 32 else ""
        op, ctype = n.op, f
        if op in _RN:
            expr = f"__{'f' if n.bits == 32 else 'd'}{_RN[op]}_rn({a[0]}, {a[1]})"
        elif op in _CMP:
            expr, ctype = f"({a[0]} {_CMP[op]} {a[1]})", "int"
        elif op == "neg":
            expr = f"(-{a[0]})"
        elif op == "select":
            expr = f"({a[0]} ? {a[1]} : {a[2]})"
        elif op in ("fabs", "rint", "floor", "copysign", "fma"):
            expr = f"{op}{sfx}({', '.join(a)})"
        elif op == "fpext":
            expr = f"(double){a[0]}"
        elif op == "fptrunc":
            expr = f"(float){a[0]}"
        elif op == "bits_of":
            expr, ctype = f"msm_bits_f{bits}({a[0]})", ut
        elif op == "float_of":
            expr = f"msm_f{bits}_of({a[0]})"
        elif op in ("iadd", "isub", "iand"):
            expr, ctype = f"({a[0]} {dict(iadd='+', isub='-', iand='&')[op]} {a[1]})", ut
        elif op == "ashr":
            expr, ctype = f"({ut})(({st}){a[0]} >> {a[1]})", ut
        elif op == "shl":
            expr, ctype = f"({a[0]} << {a[1]})", ut
        elif op == "sitofp":
            expr = f"({ft})({st}){a[0]}"
        elif op == "libm":
            expr = f"{n.args[0]}{sfx}({a[1]})"
        else:
            raise NotImplementedError(f"cuda_math: no C for {op!r}")
        names[id(n)] = f"t{len(names)}"
        lines.append(f"  const {ctype} {names[id(n)]} = {expr};\n")

    result = val(root)
    return (f"MSM_FN {ft} msm_{name}_f{bits}({ft} x) {{\n" + "".join(lines)
            + f"  return {result};\n}}\n")


def source(names=None) -> str:
    """PREAMBLE and the functions `names` (default: all of scalar_math's decomposed ones) for
    float32 and float64: `msm_<name>_f32` / `msm_<name>_f64`."""
    wanted = tuple(names or scalar_math.names("decomposed"))
    unknown = set(wanted) - set(scalar_math.DEFINITIONS)
    if unknown:
        raise ValueError(f"cuda_math: unknown functions {sorted(unknown)}; expected some of "
                         f"{scalar_math.names('decomposed')}")
    parts = [PREAMBLE]
    for name in wanted:
        for bits in (32, 64):
            parts.append(_function(name, bits))
    return "".join(parts)
