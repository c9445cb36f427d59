"""CUDA kernels for elementwise templates, fused groups and the captured-graph GEMM (pure Python,
no CuPy), written in the C layer of cuda_source.py (types, preamble, expression rendering):

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
The 16-bit float formats: cuda_source.py."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...core import dtype as dt
from ...core import scalar_expr
from ...core.shape import broadcast_strides
from .cuda_source import (COMPUTE, EW_PARAM, FLOAT, LOAD, STORE, CudaKernel, collapse, dname,
                          kernel_name, literal_type, load, offsets, render, signature, store)

BLOCK = 256                  # threads per block of a reduction kernel (a power of two)
THREADS = 256                # suggested threads per block of an elementwise kernel
VEC = 4                      # consecutive elements per thread and step of an elementwise kernel
MAX_GRID = 65535             # blocks of an elementwise kernel at most (a grid-stride loop)


def expr_kernel(tag, expr, in_dtypes, cdts, in_shapes, out_dtype, out_shape) -> CudaKernel:
    """An elementwise kernel: out = expr(inputs converted to cdts) broadcast to out_shape."""
    out_shape = tuple(out_shape)
    n = math.prod(out_shape)
    in_names = [dname(d) for d in in_dtypes]
    in_store = [STORE[d] for d in in_names]
    comp = [COMPUTE[dname(c)] for c in cdts]
    out_name = dname(out_dtype)
    out_store = STORE[out_name]
    strides = [broadcast_strides(s, out_shape) for s in in_shapes]
    dims, cst = collapse(out_shape, strides)
    contig = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        contig[k] = contig[k + 1] * dims[k + 1]
    direct = [st == contig for st in cst]            # full-shape inputs read at i itself
    scalar = [not any(st) for st in cst]
    decode = [j for j in range(len(cst)) if not direct[j] and not scalar[j]]
    val, _ = render(expr, [(f"x{j}", c) for j, c in enumerate(comp)], literal_type(cdts))
    vec = n >= VEC                                   # the vector loop has a whole group to do
    items = n // VEC if vec else n
    grid = max(1, min((items + THREADS - 1) // THREADS, MAX_GRID))
    # 32-bit indices when no index (nor index + the grid's stride) can pass 2^31 - 1
    it = "int" if n + grid * THREADS * VEC < 2 ** 31 else "long long"
    sfx = "" if it == "int" else "LL"

    def element(i, direct_value, sink):
        """Lines computing element `i`: direct input j read as direct_value(j), result to
        sink(value)."""
        lines = offsets(i, dims, [cst[j] for j in decode], "o", itype=it)
        for j in range(len(cst)):
            if direct[j]:
                v = direct_value(j)
            else:
                v = f"a{j}[{'0' if scalar[j] else f'o{decode.index(j)}'}]"
            lines.append(f"const {comp[j]} x{j} = {load(v, in_names[j], comp[j])};")
        return lines + [sink(store(val, out_name))]

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
    inner = "(" + signature(in_store, out_store) + ") {\n  " + "\n  ".join(lines) + "\n}\n"
    name = kernel_name(tag, inner)
    body = f'extern "C" __global__ void {name}' + inner
    return CudaKernel(name, body, tuple(in_store), out_store, grid, THREADS, False)


def elementwise_kernel(op, in_dtypes, in_shapes, attrs=None) -> CudaKernel:
    """The kernel of elementwise primitive `op` (its template and dtype rule) for one signature."""
    from ...core.shape import broadcast_shapes
    in_dtypes = tuple(dt.to_dtype(d) for d in in_dtypes)
    cdts, out_dtype = op.compute(in_dtypes)
    attrs = dict(op.attrs, **(attrs or {}))
    expr = scalar_expr.build(lambda *xs: op.scalar(*xs, **attrs), op.arity)
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
    expr = scalar_expr.build(lambda *xs: op.scalar(*xs, **attrs), op.arity)
    names = [dname(d) for d in in_dtypes]
    comp = [COMPUTE[dname(c)] for c in cdts]
    out_name = dname(out_dtype)
    val, _ = render(expr, [(f"x{j}", c) for j, c in enumerate(comp)], literal_type(cdts))
    body = [f"const {c} x{j} = {load(f'a{j}', d, c)};" for j, (d, c) in
            enumerate(zip(names, comp))]
    body.append(f"y = {store(val, out_name)};")
    in_params = ", ".join(f"{EW_PARAM.get(d, d)} a{j}" for j, d in enumerate(names))
    out_params = f"{EW_PARAM.get(out_name, out_name)} y"
    operation = " ".join(body)
    return EwOperation(kernel_name(f"ew_{op.name}", in_params + "|" + out_params + "|" + operation),
                       in_params, out_params, operation, tuple(STORE[d] for d in names),
                       STORE[out_name])


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
    in_names = [dname(d) for d in in_dtypes]
    in_store = [STORE[d] for d in in_names]
    comp = [COMPUTE[d] for d in in_names]
    out_name = dname(out_dtype)
    out_store = STORE[out_name]
    vt = COMPUTE[out_name]
    if vt not in FLOAT:
        raise NotImplementedError(f"fused {red.kind} over {out_dtype}: the fusion pass fuses "
                                  f"reductions of float groups only")
    strides = [broadcast_strides(s, shape) for s in in_shapes]
    kept = [k for k in range(len(shape)) if k not in axes]
    kdims, kst = [shape[k] for k in kept], [[s[k] for k in kept] for s in strides]
    rdims, rst = [shape[k] for k in axes], [[s[k] for k in axes] for s in strides]
    n_out, count = math.prod(kdims), math.prod(rdims)
    acc_t = "double" if red.kind in ("sum", "mean") else vt
    init = {"sum": "0.0", "mean": "0.0", "max": "(-INFINITY)", "min": "INFINITY"}[red.kind]
    val, _ = render(expr, [(f"x{j}", c) for j, c in enumerate(comp)], literal_type(in_dtypes))
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
    lines += offsets("o", kdims, kst, "b")
    lines.append(f"{acc_t} acc = {init};")
    lines.append(f"for (long long j = threadIdx.x; j < {count}LL; j += {block}) {{")
    lines += ["  " + t for t in offsets("j", rdims, rst, "p", [f"b{j}" for j in range(nin)])]
    for j in range(nin):
        lines.append(f"  const {comp[j]} x{j} = {load(f'a{j}[p{j}]', in_names[j], comp[j])};")
    # each value is rounded to the group's dtype first, as the unfused kernel would store it
    rounded = load(store(val, out_name), out_name, vt) if out_name in LOAD \
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
    lines.append(f"if (threadIdx.x == 0) out[o] = {store(f'({vt})({res})', out_name)};")
    inner = "(" + signature(in_store, out_store) + ") {\n  " + "\n  ".join(lines) + "\n}\n"
    name = kernel_name(f"fused_{red.kind}", inner)
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
    name_ = dname(dtype)
    t = STORE[name_]
    if t not in FLOAT:
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
    name = kernel_name(f"gemm_{name_}", inner)
    body = f'extern "C" __global__ void {name}' + inner
    return CudaKernel(name, body, (t, t), t, max(1, min(tiles, 2 ** 31 - 1)), T * T, False)
