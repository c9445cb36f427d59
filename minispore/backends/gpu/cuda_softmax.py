"""CUDA C source of softmax / log_softmax along one axis: one kernel launch for what CuPy
composes from five (max, subtract, exp, sum, divide; ~60-75 us of host launches for a 64x64
softmax on an H200, against ~7 us for PyTorch's one kernel).

The input is viewed as (outer, n, inner) with the softmax axis in the middle; each block owns
rows (an (outer, inner) pair) in a grid-stride loop and makes three passes over its row: the
maximum (NaN wins, as numpy's max), the sum of exp(x - max), then the outputs. The arithmetic is
the eager routine's: s = x - max; softmax = exp(s) / sum, log_softmax = s - log(sum), in the
dtype's compute type (float for float16/bfloat16/float32, double for float64), so a row of NaN or
of -inf gives NaN as numpy does. Pure Python, in cuda_source's C layer like cuda_codegen: the
tests compile it with nvcc and run it on the host through the same shim."""
from __future__ import annotations

from . import cuda_codegen, cuda_source


def _block_for(n: int) -> int:
    """Threads per block: a power of two from 32 to cuda_codegen.BLOCK, about one per element
    of a row."""
    b = 32
    while b < n and b < cuda_codegen.BLOCK:
        b *= 2
    return b


def softmax_kernel(dtype, outer: int, n: int, inner: int, log: bool) -> cuda_source.CudaKernel:
    name = cuda_source.dname(dtype)
    t, c = cuda_source.STORE[name], cuda_source.COMPUTE[name]
    if c not in cuda_source.FLOAT:
        raise NotImplementedError(f"softmax kernel over {name}: float dtypes only")
    f = "f" if c == "float" else ""
    exp, logf = f"exp{f}", f"log{f}"
    block, rows = _block_for(n), outer * inner
    load = cuda_source.load(f"a0[base + j * {inner}LL]", name, c)

    def tree(combine: str) -> list:
        return ["part[threadIdx.x] = acc;", "__syncthreads();",
                f"for (unsigned s = {block // 2}; s > 0; s >>= 1) {{",
                f"  if (threadIdx.x < s) {{ {c} w = part[threadIdx.x + s]; {c} acc = "
                f"part[threadIdx.x]; {combine} part[threadIdx.x] = acc; }}",
                "  __syncthreads();", "}"]
    nan_max = "if (w > acc || w != w) acc = w;"
    value = f"d - {logf}(total)" if log else f"{exp}(d) / total"
    lines = [f"__shared__ {c} part[{block}];",
             f"for (long long row = blockIdx.x; row < {rows}LL; row += gridDim.x) {{",
             f"  const long long base = (row / {inner}LL) * {n * inner}LL + row % {inner}LL;",
             f"  {c} acc = -INFINITY;",
             f"  for (long long j = threadIdx.x; j < {n}LL; j += {block}) {{",
             f"    const {c} w = {load}; {nan_max}", "  }"]
    lines += ["  " + x for x in tree(nan_max)]
    lines += [f"  const {c} top = part[0];", "  __syncthreads();",
              "  acc = 0;",
              f"  for (long long j = threadIdx.x; j < {n}LL; j += {block}) "
              f"acc += {exp}({load} - top);"]
    lines += ["  " + x for x in tree("acc += w;")]
    lines += [f"  const {c} total = part[0];", "  __syncthreads();",
              f"  for (long long j = threadIdx.x; j < {n}LL; j += {block}) {{",
              f"    const {c} d = {load} - top;",
              f"    out[base + j * {inner}LL] = {cuda_source.store(value, name)};", "  }", "}"]
    inner_src = (f"(const {t}* __restrict__ a0, {t}* __restrict__ out) {{\n  "
                 + "\n  ".join(lines) + "\n}\n")
    kname = cuda_source.kernel_name("log_softmax" if log else "softmax", inner_src)
    body = f'extern "C" __global__ void {kname}' + inner_src
    grid = max(1, min(rows, cuda_codegen.MAX_GRID))
    return cuda_source.CudaKernel(kname, body, (t,), t, grid, block, True)
