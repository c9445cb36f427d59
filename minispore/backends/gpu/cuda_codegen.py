"""CUDA C source generation for elementwise templates and fused groups (pure Python, no CuPy).

Owns: rendering a scalar_expr tree into a typed CUDA C expression, the device helper preamble
(numpy semantics for floor_div/mod/pow/shifts on ints and floats, stable sigmoid/softplus, NaN
propagation through the templates' own `isnan`), and the kernels:

- `elementwise_kernel(op, in_dtypes, in_shapes, attrs)`: one kernel per elementwise primitive
  call signature; inputs are converted to the op's compute dtypes, the result to its output dtype.
- `fused_kernel(expr, in_dtypes, in_shapes, out_dtype, out_shape, reduce=None)`: a FUSED node;
  inputs keep their own dtypes (as the CPU kernels do). With an ir.Reduction it is a reduction
  kernel: one block per output element, each of BLOCK threads folds a strided slice of the
  reduced elements into a register, then a shared-memory tree combines the BLOCK partials
  (__syncthreads between levels). sum/mean accumulate in double, max/min in the value type with
  NaN winning, as backends/cpu/fused_reduce.py does.

- `ew_operation(op, in_dtypes, attrs)`: the same rendering as the body of a
  `cupy.ElementwiseKernel` (the GPU backend's eager kernels): shape-generic, CuPy broadcasts.

Shapes and broadcast strides are baked into the raw kernels as constants (after collapsing
dimensions that are contiguous for every input), so the only kernel arguments are the data
pointers: one kernel per (expression, dtypes, shapes), named `ms_<tag>_<sha1 of its body>`
(deterministic and content-hashed). Elementwise kernels use a grid-stride loop, so any launch
geometry is correct. Inputs must be C-contiguous (minispore buffers always are).

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
from ...core import scalar_expr as E
from ...core.shape import broadcast_strides

# storage C type of each dtype; half types are stored as their 16 bits, computed in float
_STORE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short",
          "int32": "int", "int64": "long long", "float16": "unsigned short",
          "bfloat16": "unsigned short", "float32": "float", "float64": "double"}
# the parameter type names of a cupy.ElementwiseKernel (numpy dtype names; halves as bits)
_EW_PARAM = {"float16": "uint16", "bfloat16": "uint16"}
# compute C type: small ints compute in int (their wrap-around is the store's cast)
_COMPUTE = {"bool": "bool", "uint8": "int", "int8": "int", "int16": "int", "int32": "int",
            "int64": "long long", "float16": "float", "bfloat16": "float", "float32": "float",
            "float64": "double"}
_RANK = {"bool": 0, "int": 1, "long long": 2, "float": 3, "double": 4}
_FLOAT = ("float", "double")
# dtype name -> device function converting the stored bits to float / float to the bits
_LOAD = {"float16": "ms_h2f", "bfloat16": "ms_bf2f"}
_STORE_FN = {"float16": "ms_f2h", "bfloat16": "ms_f2bf"}
BLOCK = 256                  # threads per block of a reduction kernel (a power of two)
THREADS = 256                # suggested threads per block of an elementwise kernel
VEC = 4                      # consecutive elements per thread and step of an elementwise kernel
MAX_GRID = 65535             # blocks of an elementwise kernel at most (a grid-stride loop)

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
"""

_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_BITS = {"band": "&", "bor": "|", "bxor": "^"}
_MATH = ("exp", "log", "log1p", "sqrt", "sin", "cos", "tanh", "erf", "floor", "ceil", "rint",
         "fabs")


def _promote(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


def _const(v, ctype: str) -> tuple:
    if isinstance(v, bool):
        return ("true" if v else "false"), "bool"
    if ctype in _FLOAT:
        v = float(v)
        if math.isnan(v) or math.isinf(v):
            lit = "NAN" if math.isnan(v) else "INFINITY" if v > 0 else "(-INFINITY)"
            return f"(({ctype}){lit})", ctype
        lit = repr(v)
        lit = lit if ("." in lit or "e" in lit) else lit + ".0"
        return f"({lit}{'f' if ctype == 'float' else ''})", ctype
    return f"(({ctype}){int(v)}{'LL' if ctype == 'long long' else ''})", ctype


def render(e: E.Expr, args: list, const_type: str) -> tuple:
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
        if op == "div" and t not in _FLOAT:
            t = "double"                    # true division of ints (the dtype rules avoid it)
        x, y = f"(({t}){x})", f"(({t}){y})"
        if op in _ARITH:
            if t == "bool":                  # numpy: + is or, * is and on bools
                return f"(({x} {_ARITH[op]} {y}) != 0)", "bool"
            return f"(({t})({x} {_ARITH[op]} {y}))", t
        if op == "pow" and t in _FLOAT:
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
        return (f"(-({x}))", t) if t in _FLOAT else (f"ms_neg(({t})({x}))", t)
    if op == "isnan":
        x, t = sub[0]
        return (f"(({x}) != ({x}))", "bool") if t in _FLOAT else ("false", "bool")
    if op == "where":
        (c, _), (x, tx), (y, ty) = sub
        t = _promote(tx, ty)
        return f"(({c}) ? (({t}){x}) : (({t}){y}))", t
    if op in ("sigmoid", "softplus"):
        x, t = sub[0]
        t = t if t in _FLOAT else "float"
        return f"ms_{op}(({t})({x}))", t
    if op in _MATH:
        x, t = sub[0]
        if t not in _FLOAT:
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
    return "// generated by minispore.backends.gpu.cuda_codegen\n" + PREAMBLE + "\n".join(bodies)


def _dname(d) -> str:
    return dt.to_dtype(d).np.name if dt.to_dtype(d) is not dt.bfloat16 else "bfloat16"


def _collapse(shape, strides_list):
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


def _offsets(var: str, dims: list, strides: list, prefix: str, base=None,
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


def _load(v: str, dname: str, comp: str) -> str:
    """`v` (the stored value of a dtype named dname) converted to compute type `comp`."""
    return f"(({comp}){_LOAD[dname]}({v}))" if dname in _LOAD else f"(({comp}){v})"


def _store(val: str, dname: str) -> str:
    """Compute value `val` converted to the stored representation of dtype `dname`."""
    if dname in _STORE_FN:
        return f"{_STORE_FN[dname]}((float)({val}))"
    return f"(({_STORE[dname]})({val}))"


def _name(tag: str, body: str) -> str:
    return f"ms_{tag}_{hashlib.sha1(body.encode()).hexdigest()[:12]}"


def _signature(in_store, out_store) -> str:
    ps = [f"const {t}* __restrict__ a{j}" for j, t in enumerate(in_store)]
    return ", ".join(ps + [f"{out_store}* __restrict__ out"])


def _const_type(cdts) -> str:
    comp = [_COMPUTE[_dname(c)] for c in cdts]
    floats = [c for c in comp if c in _FLOAT]
    return floats[0] if floats else comp[0] if comp else "double"


def expr_kernel(tag, expr, in_dtypes, cdts, in_shapes, out_dtype, out_shape) -> CudaKernel:
    """An elementwise kernel: out = expr(inputs converted to cdts) broadcast to out_shape."""
    out_shape = tuple(out_shape)
    n = math.prod(out_shape)
    in_names = [_dname(d) for d in in_dtypes]
    in_store = [_STORE[d] for d in in_names]
    comp = [_COMPUTE[_dname(c)] for c in cdts]
    out_name = _dname(out_dtype)
    out_store = _STORE[out_name]
    strides = [broadcast_strides(s, out_shape) for s in in_shapes]
    dims, cst = _collapse(out_shape, strides)
    contig = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        contig[k] = contig[k + 1] * dims[k + 1]
    direct = [st == contig for st in cst]            # full-shape inputs read at i itself
    scalar = [not any(st) for st in cst]
    decode = [j for j in range(len(cst)) if not direct[j] and not scalar[j]]
    val, _ = render(expr, [(f"x{j}", c) for j, c in enumerate(comp)], _const_type(cdts))
    vec = n >= VEC                                   # the vector loop has a whole group to do
    items = n // VEC if vec else n
    grid = max(1, min((items + THREADS - 1) // THREADS, MAX_GRID))
    # 32-bit indices when no index (nor index + the grid's stride) can pass 2^31 - 1
    it = "int" if n + grid * THREADS * VEC < 2 ** 31 else "long long"
    sfx = "" if it == "int" else "LL"

    def element(i, direct_value, sink):
        """Lines computing element `i`: direct input j read as direct_value(j), result to
        sink(value)."""
        lines = _offsets(i, dims, [cst[j] for j in decode], "o", itype=it)
        for j in range(len(cst)):
            if direct[j]:
                v = direct_value(j)
            else:
                v = f"a{j}[{'0' if scalar[j] else f'o{decode.index(j)}'}]"
            lines.append(f"const {comp[j]} x{j} = {_load(v, in_names[j], comp[j])};")
        return lines + [sink(_store(val, out_name))]

    lines = [f"const {it} start = ({it})blockIdx.x * blockDim.x + threadIdx.x, "
             f"stride = ({it})blockDim.x * gridDim.x;", f"{it} first = 0;"]
    if vec:
        # VEC consecutive elements per thread and step, loaded and stored as one aligned vector
        # (several independent elements in flight per thread: ~1.4x the bandwidth of one
        # element per step on an H200) when every full-shape pointer is aligned to its vector
        vin = [j for j in range(len(cst)) if direct[j]]
        misaligned = " | ".join([f"((unsigned long long)a{j} % sizeof(ms_vec<{in_store[j]}>))"
                                 for j in vin]
                                + [f"((unsigned long long)out % sizeof(ms_vec<{out_store}>))"])
        lines.append(f"if (({misaligned}) == 0) {{")
        lines.append(f"  for ({it} v = start; v < {items}{sfx}; v += stride) {{")
        lines += [f"    const ms_vec<{in_store[j]}> l{j} = "
                  f"*(const ms_vec<{in_store[j]}>*)(a{j} + {VEC} * v);" for j in vin]
        lines.append(f"    ms_vec<{out_store}> r;")
        lines.append("    #pragma unroll")
        lines.append(f"    for (int k = 0; k < {VEC}; ++k) {{")
        lines.append(f"      const {it} i = {VEC} * v + k;")
        lines += ["      " + t for t in element("i", lambda j: f"l{j}.v[k]",
                                                 lambda x: f"r.v[k] = {x};")]
        lines.append("    }")
        lines.append(f"    *(ms_vec<{out_store}>*)(out + {VEC} * v) = r;")
        lines.append("  }")
        lines.append(f"  first = {VEC * items}{sfx};")
        lines.append("}")
    lines.append(f"for ({it} i = first + start; i < {n}{sfx}; i += stride) {{")
    lines += ["  " + t for t in element("i", lambda j: f"a{j}[i]", lambda x: f"out[i] = {x};")]
    lines.append("}")
    inner = "(" + _signature(in_store, out_store) + ") {\n  " + "\n  ".join(lines) + "\n}\n"
    name = _name(tag, inner)
    body = f'extern "C" __global__ void {name}' + inner
    return CudaKernel(name, body, tuple(in_store), out_store, grid, THREADS, False)


def elementwise_kernel(op, in_dtypes, in_shapes, attrs=None) -> CudaKernel:
    """The kernel of elementwise primitive `op` (its template and dtype rule) for one signature."""
    from ...core.shape import broadcast_shapes
    in_dtypes = tuple(dt.to_dtype(d) for d in in_dtypes)
    cdts, out_dtype = op.compute(in_dtypes)
    attrs = dict(op.attrs, **(attrs or {}))
    expr = E.build(lambda *xs: op.scalar(*xs, **attrs), op.arity)
    out_shape = broadcast_shapes(op.name, *map(tuple, in_shapes))
    return expr_kernel(op.name, expr, in_dtypes, cdts, in_shapes, out_dtype, out_shape)


@dataclass(frozen=True)
class EwOperation:
    """The pieces of one `cupy.ElementwiseKernel(in_params, out_params, operation, name,
    preamble=PREAMBLE)`: inputs `a0, a1, ...` and output `y`, declared with numpy dtype names
    (16-bit floats as uint16: the caller passes `.view(uint16)` of float16 arrays; bfloat16
    arrays are uint16 already). `in_ctypes`/`out_ctype` are the matching C types."""
    name: str
    in_params: str
    out_params: str
    operation: str
    in_ctypes: tuple
    out_ctype: str


def ew_operation(op, in_dtypes, attrs=None) -> EwOperation:
    """The ElementwiseKernel of elementwise primitive `op` for input dtypes `in_dtypes`
    (shape-generic: CuPy broadcasts the operands and loops over the output)."""
    in_dtypes = tuple(dt.to_dtype(d) for d in in_dtypes)
    cdts, out_dtype = op.compute(in_dtypes)
    attrs = dict(op.attrs, **(attrs or {}))
    expr = E.build(lambda *xs: op.scalar(*xs, **attrs), op.arity)
    names = [_dname(d) for d in in_dtypes]
    comp = [_COMPUTE[_dname(c)] for c in cdts]
    out_name = _dname(out_dtype)
    val, _ = render(expr, [(f"x{j}", c) for j, c in enumerate(comp)], _const_type(cdts))
    body = [f"const {c} x{j} = {_load(f'a{j}', d, c)};" for j, (d, c) in
            enumerate(zip(names, comp))]
    body.append(f"y = {_store(val, out_name)};")
    in_params = ", ".join(f"{_EW_PARAM.get(d, d)} a{j}" for j, d in enumerate(names))
    out_params = f"{_EW_PARAM.get(out_name, out_name)} y"
    operation = " ".join(body)
    return EwOperation(_name(f"ew_{op.name}", in_params + "|" + out_params + "|" + operation),
                       in_params, out_params, operation, tuple(_STORE[d] for d in names),
                       _STORE[out_name])


def fused_kernel(expr, in_dtypes, in_shapes, out_dtype, out_shape, reduce=None,
                 block: int = BLOCK) -> CudaKernel:
    """The kernel of a FUSED node (inputs in their own dtypes); `reduce`: its ir.Reduction."""
    in_dtypes = tuple(dt.to_dtype(d) for d in in_dtypes)
    if reduce is None:
        return expr_kernel("fused", expr, in_dtypes, in_dtypes, in_shapes, out_dtype, out_shape)
    return _reduce_kernel(expr, in_dtypes, in_shapes, dt.to_dtype(out_dtype), reduce, block)


def _reduce_kernel(expr, in_dtypes, in_shapes, out_dtype, red, block) -> CudaKernel:
    if block & (block - 1):
        raise ValueError(f"reduction block size {block} is not a power of two")
    shape, axes = tuple(red.shape), tuple(red.axes)
    in_names = [_dname(d) for d in in_dtypes]
    in_store = [_STORE[d] for d in in_names]
    comp = [_COMPUTE[d] for d in in_names]
    out_name = _dname(out_dtype)
    out_store = _STORE[out_name]
    vt = _COMPUTE[out_name]
    if vt not in _FLOAT:
        raise NotImplementedError(f"fused {red.kind} over {out_dtype}: the fusion pass fuses "
                                  f"reductions of float groups only")
    strides = [broadcast_strides(s, shape) for s in in_shapes]
    kept = [k for k in range(len(shape)) if k not in axes]
    kdims, kst = [shape[k] for k in kept], [[s[k] for k in kept] for s in strides]
    rdims, rst = [shape[k] for k in axes], [[s[k] for k in axes] for s in strides]
    n_out, count = math.prod(kdims), math.prod(rdims)
    acc_t = "double" if red.kind in ("sum", "mean") else vt
    init = {"sum": "0.0", "mean": "0.0", "max": "(-INFINITY)", "min": "INFINITY"}[red.kind]
    val, _ = render(expr, [(f"x{j}", c) for j, c in enumerate(comp)], _const_type(in_dtypes))
    if red.kind in ("sum", "mean"):
        def combine(dst, src):
            return f"{dst} += {src};"
    else:
        cmp = ">" if red.kind == "max" else "<"

        def combine(dst, src):                   # NaN wins, as numpy's max/min
            return f"if ({src} {cmp} {dst} || {src} != {src}) {dst} = {src};"
    nin = len(in_shapes)
    lines = [f"__shared__ {acc_t} part[{block}];",
             "const long long o = blockIdx.x;", f"if (o >= {n_out}LL) return;"]
    lines += _offsets("o", kdims, kst, "b")
    lines.append(f"{acc_t} acc = {init};")
    lines.append(f"for (long long j = threadIdx.x; j < {count}LL; j += {block}) {{")
    lines += ["  " + t for t in _offsets("j", rdims, rst, "p", [f"b{j}" for j in range(nin)])]
    for j in range(nin):
        lines.append(f"  const {comp[j]} x{j} = {_load(f'a{j}[p{j}]', in_names[j], comp[j])};")
    # each value is rounded to the group's dtype first, as the unfused kernel would store it
    rounded = _load(_store(val, out_name), out_name, vt) if out_name in _LOAD \
        else f"(({vt})({val}))"
    lines.append(f"  const {acc_t} v = ({acc_t}){rounded};")
    lines.append("  " + combine("acc", "v"))
    lines.append("}")
    lines.append("part[threadIdx.x] = acc;")
    lines.append("__syncthreads();")
    lines.append(f"for (unsigned s = {block // 2}; s > 0; s >>= 1) {{")
    lines.append(f"  if (threadIdx.x < s) {{ {acc_t} w = part[threadIdx.x + s]; "
                 f"{acc_t} a = part[threadIdx.x]; {combine('a', 'w')} part[threadIdx.x] = a; }}")
    lines.append("  __syncthreads();")
    lines.append("}")
    res = "part[0]" + (f" / {count}.0" if red.kind == "mean" else "")
    lines.append(f"if (threadIdx.x == 0) out[o] = {_store(f'({vt})({res})', out_name)};")
    inner = "(" + _signature(in_store, out_store) + ") {\n  " + "\n  ".join(lines) + "\n}\n"
    name = _name(f"fused_{red.kind}", inner)
    body = f'extern "C" __global__ void {name}' + inner
    return CudaKernel(name, body, tuple(in_store), out_store, max(n_out, 1), block, True)


def node_kernel(node, block: int = BLOCK) -> CudaKernel:
    """The kernel of a FUSED ir.Node (its inputs' and output's metadata give dtypes and shapes)."""
    out = node.outputs[0]
    return fused_kernel(node.attr("expr"), [v.dtype for v in node.inputs],
                        [tuple(v.shape) for v in node.inputs], out.dtype, tuple(out.shape),
                        node.attr("reduce"), block)


GEMM_TILE = 16               # the GEMM kernel's square tile; its block is GEMM_TILE**2 threads


def gemm_kernel(dtype, batch: int, m: int, k: int, n: int) -> CudaKernel:
    """C[b] = A[b] @ B[b] for C-contiguous A (batch, m, k), B (batch, k, n), C (batch, m, n) of
    float32/float64 `dtype`, accumulated in that type (cuBLAS's FP32 compute for float32): the
    GPU backend's matmul while a CUDA graph is captured, since CuPy refuses every cuBLAS call
    during stream capture. Shared-memory tiles of GEMM_TILE x GEMM_TILE, one output element per
    thread, a grid-stride loop over (batch, row tile, column tile): any grid is correct."""
    name_ = _dname(dtype)
    t = _STORE[name_]
    if t not in _FLOAT:
        raise NotImplementedError(f"gemm kernel over {name_}: float32/float64 only")
    T = GEMM_TILE
    rt, ct = -(-m // T), -(-n // T)
    tiles = batch * rt * ct
    inner = f"""(const {t}* __restrict__ a0, const {t}* __restrict__ a1, {t}* __restrict__ out) {{
  __shared__ {t} As[{T}][{T}];
  __shared__ {t} Bs[{T}][{T + 1}];
  const int tx = threadIdx.x % {T}, ty = threadIdx.x / {T};
  for (long long tile = blockIdx.x; tile < {tiles}LL; tile += gridDim.x) {{
    const long long b = tile / {rt * ct}LL, rc = tile % {rt * ct}LL;
    const long long row = (rc / {ct}LL) * {T} + ty, col = (rc % {ct}LL) * {T} + tx;
    const {t}* A = a0 + b * {m * k}LL;
    const {t}* B = a1 + b * {k * n}LL;
    {t} acc = 0;
    for (long long k0 = 0; k0 < {k}LL; k0 += {T}) {{
      As[ty][tx] = (row < {m}LL && k0 + tx < {k}LL) ? A[row * {k}LL + k0 + tx] : ({t})0;
      Bs[ty][tx] = (k0 + ty < {k}LL && col < {n}LL) ? B[(k0 + ty) * {n}LL + col] : ({t})0;
      __syncthreads();
      for (int kk = 0; kk < {T}; ++kk) acc += As[ty][kk] * Bs[kk][tx];
      __syncthreads();
    }}
    if (row < {m}LL && col < {n}LL) out[b * {m * n}LL + row * {n}LL + col] = acc;
  }}
}}
"""
    name = _name(f"gemm_{name_}", inner)
    body = f'extern "C" __global__ void {name}' + inner
    return CudaKernel(name, body, (t, t), t, max(1, min(tiles, 2 ** 31 - 1)), T * T, False)
