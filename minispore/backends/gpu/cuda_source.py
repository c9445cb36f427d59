"""The CUDA C layer the GPU backend's kernel generators share (cuda_codegen.py, cuda_softmax.py;
pure Python, no CuPy): the storage and compute C types of each dtype, the device helper preamble
(numpy semantics for floor_div/mod/pow/shifts on ints and floats, stable sigmoid/softplus, NaN
propagation through the templates' own `isnan`), rendering a scalar_expr tree into a typed CUDA C
expression (`render`), loads and stores through the 16-bit float formats, the content-hashed
kernel name (`ms_<tag>_<sha1 of its body>`), offset arithmetic over collapsed broadcast
dimensions, and the CudaKernel record with `module_source`, one translation unit of kernels.

float16/bfloat16 are stored as their 16 bits (`unsigned short`), loaded into float, computed in
float and rounded to nearest-even once when stored: float16 through the PTX `cvt` instructions
(what cuda_fp16.h does), bfloat16 by bit arithmetic. So no source includes a header: NVRTC, which
CuPy compiles with and which has no system headers (no cuda_fp16.h, no INFINITY/NAN), compiles
it as it is, and the GPU backend keeps bfloat16 tensors as uint16 arrays (CuPy has no bfloat16
arrays)."""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from ...core import dtype as dt
from ...core import scalar_expr
from ...core import scalar_math

# storage C type of each dtype; half types are stored as their 16 bits, computed in float
STORE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short",
          "int32": "int", "int64": "long long", "float16": "unsigned short",
          "bfloat16": "unsigned short", "float32": "float", "float64": "double",
          "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "unsigned long long"}
# the parameter type names of a cupy.ElementwiseKernel (numpy dtype names; halves as bits)
EW_PARAM = {"float16": "uint16", "bfloat16": "uint16"}
# compute C type: small ints compute in int (their wrap-around is the store's cast); uint32 and
# uint64 in their own unsigned type (unsigned division, comparison and conversion to float)
COMPUTE = {"bool": "bool", "uint8": "int", "int8": "int", "int16": "int", "int32": "int",
            "int64": "long long", "float16": "float", "bfloat16": "float", "float32": "float",
            "float64": "double", "uint16": "int", "uint32": "unsigned int",
            "uint64": "unsigned long long"}
# C's usual arithmetic conversions: int with unsigned int is unsigned int, unsigned int with
# long long is long long, long long with unsigned long long is unsigned long long
_RANK = {"bool": 0, "int": 1, "unsigned int": 1.5, "long long": 2, "unsigned long long": 2.5,
         "float": 3, "double": 4}
FLOAT = ("float", "double")
# dtype name -> device function converting the stored bits to float / float to the bits
LOAD = {"float16": "ms_h2f", "bfloat16": "ms_bf2f"}
STORE_FN = {"float16": "ms_f2h", "bfloat16": "ms_f2bf"}

PREAMBLE = r"""
#define MS_DEV static __device__ __forceinline__
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
template <typename T> struct alignas(4 * sizeof(T)) ms_vec { T v[4]; };   // VEC elements
#ifndef MS_HOST_SHIM
MS_DEV float ms_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
MS_DEV unsigned short ms_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#endif
MS_DEV float ms_bf2f(unsigned short b) { return __uint_as_float(((unsigned int)b) << 16); }
MS_DEV unsigned short ms_f2bf(float f) {
  unsigned int u = __float_as_uint(f);
  if (f != f) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }
MS_DEV float ms_sigmoid(float x) { return x >= 0.f ? 1.f / (1.f + expf(-x)) : expf(x) / (1.f + expf(x)); }
MS_DEV double ms_sigmoid(double x) { return x >= 0. ? 1. / (1. + exp(-x)) : exp(x) / (1. + exp(x)); }
MS_DEV float ms_softplus(float x) { return (x > 0.f ? x : 0.f * x) + log1pf(expf(-fabsf(x))); }
MS_DEV double ms_softplus(double x) { return (x > 0. ? x : 0. * x) + log1p(exp(-fabs(x))); }
#define MS_FLOAT_DIVMOD(T, FMOD, FLOOR, COPYSIGN)                                          \
MS_DEV T ms_mod(T a, T b) {                                                               \
  if (!b) return FMOD(a, b);                                                              \
  T m = FMOD(a, b);                                                                       \
  if (m) { if ((b < 0) != (m < 0)) m += b; } else m = COPYSIGN((T)0, b);                  \
  return m; }                                                                             \
MS_DEV T ms_floordiv(T a, T b) {                                                          \
  if (!b) return a / b;                                                                   \
  T m = FMOD(a, b); T d = (a - m) / b;                                                    \
  if (m) { if ((b < 0) != (m < 0)) d -= (T)1; }                                           \
  if (d) { T f = FLOOR(d); if (d - f > (T)0.5) f += (T)1; return f; }                     \
  return COPYSIGN((T)0, a / b); }
MS_FLOAT_DIVMOD(float, fmodf, floorf, copysignf)
MS_FLOAT_DIVMOD(double, fmod, floor, copysign)
#define MS_INT_OPS(T, U)                                                                  \
MS_DEV T ms_floordiv(T a, T b) {                                                          \
  if (b == 0) return 0;                                                                   \
  if (b == -1) return (T)(0 - (U)a);                                                      \
  T q = a / b; if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1; return q; }              \
MS_DEV T ms_mod(T a, T b) {                                                               \
  if (b == 0 || b == -1) return 0;                                                        \
  T r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }                    \
MS_DEV T ms_pow(T a, T b) {                                                               \
  if (b < 0) return 0;                                                                    \
  U r = 1, x = (U)a;                                                                      \
  while (b) { if (b & 1) r *= x; x *= x; b >>= 1; }                                       \
  return (T)r; }                                                                          \
MS_DEV T ms_shl(T a, T b) {                                                               \
  return ((U)b < sizeof(T) * 8) ? (T)((U)a << b) : (T)0; }                                \
MS_DEV T ms_shr(T a, T b) {                                                               \
  return ((U)b < sizeof(T) * 8) ? (T)(a >> b) : (T)(a < 0 ? -1 : 0); }                    \
MS_DEV T ms_abs(T a) { return a < 0 ? (T)(0 - (U)a) : a; }                                \
MS_DEV T ms_neg(T a) { return (T)(0 - (U)a); }
MS_INT_OPS(int, unsigned int)
MS_INT_OPS(long long, unsigned long long)
#define MS_UINT_OPS(U)                                                                    \
MS_DEV U ms_floordiv(U a, U b) { return b == 0 ? (U)0 : (U)(a / b); }                     \
MS_DEV U ms_mod(U a, U b) { return b == 0 ? (U)0 : (U)(a % b); }                          \
MS_DEV U ms_pow(U a, U b) {                                                               \
  U r = 1, x = a;                                                                         \
  while (b) { if (b & 1) r *= x; x *= x; b >>= 1; }                                       \
  return r; }                                                                             \
MS_DEV U ms_shl(U a, U b) { return b < sizeof(U) * 8 ? (U)(a << b) : (U)0; }              \
MS_DEV U ms_shr(U a, U b) { return b < sizeof(U) * 8 ? (U)(a >> b) : (U)0; }              \
MS_DEV U ms_abs(U a) { return a; }                                                        \
MS_DEV U ms_neg(U a) { return (U)(0 - a); }
MS_UINT_OPS(unsigned int)
MS_UINT_OPS(unsigned long long)
"""

_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_BITS = {"band": "&", "bor": "|", "bxor": "^"}
_MATH = scalar_math.names("decomposed", "intrinsic")


def _promote(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


def _const(v, ctype: str) -> tuple:
    if isinstance(v, bool):
        return ("true" if v else "false"), "bool"
    if ctype in FLOAT:
        v = float(v)
        if math.isnan(v) or math.isinf(v):
            lit = "NAN" if math.isnan(v) else "INFINITY" if v > 0 else "(-INFINITY)"
            return f"(({ctype}){lit})", ctype
        lit = repr(v)
        lit = lit if ("." in lit or "e" in lit) else lit + ".0"
        return f"({lit}{'f' if ctype == 'float' else ''})", ctype
    return f"(({ctype}){int(v)}{'LL' if ctype == 'long long' else ''})", ctype


def render(e: scalar_expr.Expr, args: list, const_type: str) -> tuple:
    """(CUDA C source, C type) of expression `e`; args[i] = (name, compute C type)."""
    op, a = e.op, e.args
    if op == "arg":
        return args[a[0]]
    if op == "const":
        return _const(a[0], const_type)
    sub = [render(x, args, const_type) for x in a]
    if op in _ARITH or op in ("floordiv", "mod", "pow"):
        (x, tx), (y, ty) = sub
        t = _promote(tx, ty)
        if op == "div" and t not in FLOAT:
            t = "double"                    # true division of ints (the dtype rules avoid it)
        x, y = f"(({t}){x})", f"(({t}){y})"
        if op in _ARITH:
            if t == "bool":                  # numpy: + is or, * is and on bools
                return f"(({x} {_ARITH[op]} {y}) != 0)", "bool"
            return f"(({t})({x} {_ARITH[op]} {y}))", t
        if op == "pow" and t in FLOAT:
            return f"{'powf' if t == 'float' else 'pow'}({x}, {y})", t
        return f"ms_{op}({x}, {y})", t
    if op in _CMP:
        (x, tx), (y, ty) = sub
        t = _promote(tx, ty)
        return f"((({t}){x}) {_CMP[op]} (({t}){y}))", "bool"
    if op in ("and", "or"):
        return f"(({sub[0][0]}) {'&&' if op == 'and' else '||'} ({sub[1][0]}))", "bool"
    if op == "not":
        return f"(!({sub[0][0]}))", "bool"
    if op in _BITS:
        (x, tx), (y, ty) = sub
        t = _promote(tx, ty)
        return f"(({t})((({t}){x}) {_BITS[op]} (({t}){y})))", t
    if op in ("shl", "shr"):
        (x, tx), (y, ty) = sub
        t = _promote(tx, ty)
        return f"ms_{op}((({t}){x}), (({t}){y}))", t
    if op == "bnot":
        x, t = sub[0]
        return (f"(!({x}))", t) if t == "bool" else (f"(({t})(~({x})))", t)
    if op == "neg":
        x, t = sub[0]
        return (f"(-({x}))", t) if t in FLOAT else (f"ms_neg(({t})({x}))", t)
    if op == "isnan":
        x, t = sub[0]
        return (f"(({x}) != ({x}))", "bool") if t in FLOAT else ("false", "bool")
    if op == "where":
        (c, _), (x, tx), (y, ty) = sub
        t = _promote(tx, ty)
        return f"(({c}) ? (({t}){x}) : (({t}){y}))", t
    if op in ("sigmoid", "softplus"):
        x, t = sub[0]
        t = t if t in FLOAT else "float"
        return f"ms_{op}(({t})({x}))", t
    if op in _MATH:
        x, t = sub[0]
        if t not in FLOAT:
            if op in ("floor", "ceil", "rint"):
                return x, t                   # integral already, as numpy
            if op == "fabs":
                return (x, t) if t == "bool" else (f"ms_abs(({t})({x}))", t)
            t, x = "double", f"((double){x})"
        return f"{op}{'f' if t == 'float' else ''}({x})", t
    raise NotImplementedError(f"cuda codegen: no rendering for scalar op {op!r}")


@dataclass(frozen=True)
class CudaKernel:
    """One generated kernel. `body` holds the kernel only (its name included); `source()` a whole
    translation unit. Arguments: one device pointer per input (in_ctypes, const), then out."""
    name: str
    body: str
    in_ctypes: tuple
    out_ctype: str
    grid: int
    block: int
    reduce: bool

    def source(self) -> str:
        return module_source([self])


def module_source(kernels) -> str:
    """One translation unit holding `kernels` (the preamble once, duplicates by name once)."""
    seen, bodies = set(), []
    for k in kernels:
        if k.name not in seen:
            seen.add(k.name)
            bodies.append(k.body)
    return "// generated by minispore.backends.gpu\n" + PREAMBLE + "\n".join(bodies)


def dname(d) -> str:
    return dt.to_dtype(d).np.name if dt.to_dtype(d) is not dt.bfloat16 else "bfloat16"


def collapse(shape, strides_list):
    """Drop size-1 dims and merge neighbours that are contiguous for every input."""
    dims = [(n, [s[k] for s in strides_list]) for k, n in enumerate(shape) if n != 1]
    out = []
    for n, st in dims:
        if out:
            pn, pst = out[-1]
            if all(p == s * n for p, s in zip(pst, st)):
                out[-1] = (pn * n, st)
                continue
        out.append((n, st))
    return [n for n, _ in out], [[st[i] for _, st in out] for i in range(len(strides_list))]


def offsets(var: str, dims: list, strides: list, prefix: str, base=None,
             itype: str = "long long") -> list:
    """Lines computing offset variables {prefix}{j} of index `var` over row-major `dims`, in
    integer type `itype` (32-bit division is several times cheaper than 64-bit on the device)."""
    sfx = "LL" if itype == "long long" else ""
    lines = [f"{itype} {prefix}{j} = {base[j] if base else 0};" for j in range(len(strides))]
    if not dims or not strides:
        return lines
    lines.append(f"{itype} {prefix}_rem = {var};")
    for k in reversed(range(len(dims))):
        lines.append(f"{{ {itype} id = {prefix}_rem % {dims[k]}{sfx}; "
                     f"{prefix}_rem /= {dims[k]}{sfx};")
        for j, st in enumerate(strides):
            if st[k]:
                lines.append(f"  {prefix}{j} += id * {st[k]}{sfx};")
        lines.append("}")
    return lines


def load(v: str, dname: str, comp: str) -> str:
    """`v` (the stored value of a dtype named dname) converted to compute type `comp`."""
    return f"(({comp}){LOAD[dname]}({v}))" if dname in LOAD else f"(({comp}){v})"


def store(val: str, dname: str) -> str:
    """Compute value `val` converted to the stored representation of dtype `dname`."""
    if dname in STORE_FN:
        return f"{STORE_FN[dname]}((float)({val}))"
    return f"(({STORE[dname]})({val}))"


def kernel_name(tag: str, body: str) -> str:
    return f"ms_{tag}_{hashlib.sha1(body.encode()).hexdigest()[:12]}"


def signature(in_store, out_store) -> str:
    ps = [f"const {t}* __restrict__ a{j}" for j, t in enumerate(in_store)]
    return ", ".join(ps + [f"{out_store}* __restrict__ out"])


def literal_type(cdts) -> str:
    comp = [COMPUTE[dname(c)] for c in cdts]
    floats = [c for c in comp if c in FLOAT]
    return floats[0] if floats else comp[0] if comp else "double"
