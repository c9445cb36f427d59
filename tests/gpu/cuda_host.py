"""Test helpers for the CUDA generator (minispore/backends/gpu/cuda_codegen.py, cuda_source.py)
without a GPU: `compile_ptx` runs nvcc -ptx or NVRTC from the nvidia-cuda-nvrtc-cu12 wheel (the
compiler CuPy uses: it has no system headers) on one batch of kernels; `ew_harness` wraps the body
of a cupy.ElementwiseKernel (`cuda_codegen.ew_operation`) in a flat loop that binds the parameters
as CuPy does, so it compiles and runs like any generated kernel; `HostModule` compiles the same
generated CUDA C as host C++ with cuda_host_shim.h (g++ -O1 -shared -fPIC), loads it with ctypes
and runs a kernel on numpy buffers; `eval_expr` is an independent numpy evaluator of a scalar
expression (the reference of fused groups). A check of the generator, never a backend."""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from minispore.backends.gpu.cuda_source import module_source

HERE = Path(__file__).parent


def nvrtc_module():
    """cupy-free NVRTC: the `nvidia.cuda_nvrtc` wheel's library through ctypes, or None."""
    try:
        import nvidia.cuda_nvrtc as nvrtc_wheel  # noqa: F401  (nvidia-cuda-nvrtc-cu12)
    except ImportError:
        return None
    libdir = Path(list(nvrtc_wheel.__path__)[0]) / "lib"
    libs = sorted(libdir.glob("libnvrtc.so*"))
    return ctypes.CDLL(str(libs[0])) if libs else None


def ptx_compilers() -> list:
    """[('nvcc', path)] and/or [('nvrtc', lib)]: every compiler available here."""
    out = []
    nvcc = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists(
        "/usr/local/bin/nvcc") else None)
    if nvcc:
        out.append(("nvcc", nvcc))
    lib = nvrtc_module()
    if lib is not None:
        out.append(("nvrtc", lib))
    return out


def ptx_compiler():
    """('nvcc', path) / ('nvrtc', lib), or None (the reason to skip is the caller's)."""
    found = ptx_compilers()
    return found[0] if found else None


def cupy_nvrtc_setup():
    """(source prefix, NVRTC options) as CuPy compiles an ElementwiseKernel: its headers first
    (cupy/carray.cuh...) and its options (C++17, its include dirs, -ftz=true, device code by
    default); None where cupy is not installed (it imports without a GPU)."""
    try:
        import cupy
    except ImportError:
        return None
    inc = Path(cupy.__file__).parent / "_core" / "include"
    headers = ("cupy/complex.cuh", "cupy/carray.cuh", "cupy/atomics.cuh", "cupy/math_constants.h")
    prefix = "".join(f"#include <{h}>\n" for h in headers)
    cccl = inc / "cupy" / "_cccl"
    options = ("--std=c++17", f"-I{cccl / 'cub'}", f"-I{cccl / 'thrust'}",
               f"-I{cccl / 'libcudacxx'}", f"-I{inc}", "-ftz=true",
               "--device-as-default-execution-space")
    return prefix, options


def compile_ptx(kernels, workdir: Path, compiler=None, prefix: str = "",
                options: tuple = ()) -> str:
    """PTX (sm_90) of one translation unit holding every kernel (with `compiler`, one entry of
    ptx_compilers(); the first available by default); NVRTC only: `prefix` before the source,
    extra `options`."""
    src = prefix + module_source(kernels)
    kind, tool = compiler or ptx_compiler()
    if kind == "nvcc":
        cu, ptx = workdir / "k.cu", workdir / "k.ptx"
        cu.write_text(src)
        r = subprocess.run([tool, "-ptx", "-arch=sm_90", str(cu), "-o", str(ptx)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-4000:]
        return ptx.read_text()
    lib = tool
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None) == 0
    flags = [b"--gpu-architecture=compute_90"] + [o.encode() for o in options]
    opts = (ctypes.c_char_p * len(flags))(*flags)
    rc = lib.nvrtcCompileProgram(prog, len(flags), opts)
    if rc != 0:
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        raise AssertionError(log.value.decode()[-4000:])
    n = ctypes.c_size_t()
    lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetPTX(prog, buf)
    return buf.value.decode()


def ew_harness(ew, n: int):
    """A CudaKernel running ElementwiseKernel body `ew` (an EwOperation) over n contiguous
    elements: each input parameter a_j is the element's value, `y` the output variable."""
    from minispore.backends.gpu.cuda_codegen import THREADS
    from minispore.backends.gpu.cuda_source import CudaKernel
    ps = [f"const {t}* __restrict__ p{j}" for j, t in enumerate(ew.in_ctypes)] + \
        [f"{ew.out_ctype}* __restrict__ out"]
    loads = " ".join(f"const {t} a{j} = p{j}[i];" for j, t in enumerate(ew.in_ctypes))
    name = f"{ew.name}_n{n}"
    body = (f'extern "C" __global__ void {name}({", ".join(ps)}) {{\n'
            f"  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < {n}LL;"
            f" i += (long long)blockDim.x * gridDim.x) {{\n"
            f"    {loads} {ew.out_ctype} y; {ew.operation} out[i] = y;\n  }}\n}}\n")
    return CudaKernel(name, body, ew.in_ctypes, ew.out_ctype, max(1, min(-(-n // THREADS),
                                                                          65535)), THREADS, False)


class HostModule:
    """The kernels compiled for the host through the shim; `run(k, inputs, out)` launches one."""

    def __init__(self, kernels, workdir: Path):
        self.kernels = {k.name: k for k in kernels}
        wrappers = []
        for k in self.kernels.values():
            ps = [f"void* a{j}" for j in range(len(k.in_ctypes))] + ["void* out"]
            args = [f"(const {t}*)a{j}" for j, t in enumerate(k.in_ctypes)] + \
                [f"({k.out_ctype}*)out"]
            wrappers.append(f'extern "C" void host_{k.name}(unsigned grid, unsigned block, '
                            f'{", ".join(ps)}) {{ ms_launch(grid, block, [&] {{ '
                            f'{k.name}({", ".join(args)}); }}); }}')
        src = f'#include "{HERE / "cuda_host_shim.h"}"\n' + module_source(kernels) + \
            "\n" + "\n".join(wrappers) + "\n"
        cpp, so = workdir / "host.cpp", workdir / "host.so"
        cpp.write_text(src)
        r = subprocess.run(["g++", "-O1", "-std=c++17", "-fwrapv", "-shared", "-fPIC",
                            "-pthread", "-w", "-o", str(so), str(cpp)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-4000:]
        self.lib = ctypes.CDLL(str(so))

    def run(self, k, inputs, out, grid=None, block=None):
        arrs = [np.ascontiguousarray(a) for a in inputs]
        assert out.flags.c_contiguous
        fn = getattr(self.lib, f"host_{k.name}")
        fn(ctypes.c_uint(grid or k.grid), ctypes.c_uint(block or k.block),
           *[a.ctypes.data_as(ctypes.c_void_p) for a in arrs],
           out.ctypes.data_as(ctypes.c_void_p))
        return out


_NP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
       "floordiv": np.floor_divide, "mod": np.mod, "pow": np.power, "lt": np.less,
       "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
       "ne": np.not_equal, "and": np.logical_and, "or": np.logical_or, "not": np.logical_not,
       "neg": np.negative, "exp": np.exp, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt,
       "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil,
       "rint": np.rint, "fabs": np.abs, "isnan": np.isnan}


def eval_expr(e, args, dtype):
    """numpy value of scalar expression `e` over arrays `args`, constants of `dtype`."""
    if e.op == "arg":
        return args[e.args[0]]
    if e.op == "const":
        return np.asarray(e.args[0], dtype=bool if isinstance(e.args[0], bool) else dtype)
    xs = [eval_expr(a, args, dtype) for a in e.args]
    with np.errstate(all="ignore"):
        if e.op == "where":
            return np.where(*xs)
        if e.op == "sigmoid":
            from scipy.special import expit
            return expit(xs[0])
        if e.op == "softplus":
            return np.logaddexp(np.zeros((), xs[0].dtype), xs[0])
        if e.op == "erf":
            from scipy.special import erf
            return erf(xs[0])
        return _NP[e.op](*xs)
