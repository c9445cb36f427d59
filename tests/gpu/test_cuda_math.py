"""minispore.backends.gpu.cuda_math, the C renderer of core/scalar_math.py's definitions: compiled
as host C (cc -O2 -ffp-contract=off, run through ctypes) every function gives the CPU's results
bit for bit (numba's vecmath loops, which run llvm_math's IR) on grids, specials, subnormals and
random bit patterns, on a host with FMA; compiled by nvcc as device code (PTX, where nvcc exists)
it has no contractable arithmetic left, so the device rounds as written."""
import ctypes
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from llvmlite import binding as llvm
from numba import njit

from minispore.backends.cpu import vecmath
from minispore.backends.gpu import cuda_math
from minispore.core import scalar_math

NAMES = scalar_math.names("decomposed")
WIDTHS = {32: np.float32, 64: np.float64}
CTYPES = {32: "float", 64: "double"}


def _loops():
    return "".join(
        f"void loop_{n}_f{b}(const {t}* x, {t}* y, long n) {{\n"
        f"  for (long i = 0; i < n; i++) y[i] = msm_{n}_f{b}(x[i]);\n}}\n"
        for n in NAMES for b, t in CTYPES.items())


@pytest.fixture(scope="module")
def host_lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    if not llvm.get_host_cpu_features().get("fma", False):
        pytest.skip("the CPU rendering fuses only where the host has FMA")
    d = tmp_path_factory.mktemp("cuda_math")
    (d / "m.c").write_text(cuda_math.source() + _loops())
    subprocess.run([cc, "-O2", "-ffp-contract=off", "-fno-fast-math", "-shared", "-fPIC",
                    "-o", str(d / "m.so"), str(d / "m.c"), "-lm"], check=True, timeout=600)
    return ctypes.CDLL(str(d / "m.so"))


def _inputs(bits):
    dtype = WIDTHS[bits]
    fi = np.finfo(dtype)
    it = np.dtype(f"i{bits // 8}")
    rng = np.random.default_rng(11)
    rand_bits = rng.integers(np.iinfo(it).min, np.iinfo(it).max, 100_001, dtype=it).view(dtype)
    sub = np.arange(1, 500, dtype=it).view(dtype)
    special = np.array([0.0, np.inf, np.nan, fi.max, fi.tiny, fi.eps, 0.5, 1.0, 88.72, 103.9,
                        709.8, 745.2, 2.0 ** 48, 1e30], dtype)
    with np.errstate(over="ignore"):
        grid = np.concatenate([np.linspace(-120, 120, 200_001), np.geomspace(1e-30, 1e30, 50_000)])
    x = np.concatenate([rand_bits, sub, special, grid.astype(dtype)])
    return np.concatenate([x, -x])


_CPU = {}


def _cpu(name, x):
    if name not in _CPU:
        ns = {"f": getattr(vecmath, "v" + name)}
        exec("def k(a, out):\n    for i in range(a.shape[0]):\n        out[i] = f(a[i])\n", ns)
        _CPU[name] = njit(error_model="numpy")(ns["k"])
    out = np.empty_like(x)
    _CPU[name](x, out)
    return out


@pytest.mark.parametrize("bits", list(WIDTHS))
@pytest.mark.parametrize("name", NAMES)
def test_host_c_rendering_is_bit_identical_to_the_cpu(host_lib, name, bits):
    x = _inputs(bits)
    got = np.empty_like(x)
    getattr(host_lib, f"loop_{name}_f{bits}")(ctypes.c_void_p(x.ctypes.data),
                                              ctypes.c_void_p(got.ctypes.data),
                                              ctypes.c_long(x.size))
    with np.errstate(all="ignore"):
        want = _cpu(name, x)
    ib = f"u{bits // 8}"
    same = (got.view(ib) == want.view(ib)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), list(zip(x[~same][:4], got[~same][:4], want[~same][:4]))


def _nvcc():
    return shutil.which("nvcc") or ("/usr/local/bin/nvcc" if os.path.exists(
        "/usr/local/bin/nvcc") else None)


@pytest.mark.skipif(_nvcc() is None, reason="no nvcc")
def test_device_code_has_only_explicitly_rounded_arithmetic(tmp_path):
    """Every function used from a kernel, compiled to PTX: their float arithmetic is fma.rn or the
    .rn forms of add/sub/mul/div (contractable add.f32 / mul.f64 ... would let the device fuse
    what the CPU does not)."""
    def stores(b):                     # float64 erf is the device's libm erf: left out here
        return "".join(f"    y[{j} * n + i] = msm_{n}_f{b}(x[i]);\n"
                       for j, n in enumerate(NAMES) if (n, b) != ("erf", 64))
    kernels = "".join(
        f'extern "C" __global__ void k{b}(const {t}* x, {t}* y, int n) {{\n'
        f"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"  if (i < n) {{\n{stores(b)}  }}\n}}\n" for b, t in CTYPES.items())
    (tmp_path / "k.cu").write_text(cuda_math.source() + kernels)
    out = subprocess.run([_nvcc(), "-ptx", "-arch=sm_90", "-o", str(tmp_path / "k.ptx"),
                          str(tmp_path / "k.cu")], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    ptx = (tmp_path / "k.ptx").read_text()
    assert re.search(r"\bfma\.rn\.f32\b", ptx) and re.search(r"\bfma\.rn\.f64\b", ptx)
    loose = re.findall(r"\b(?:add|sub|mul|div)(?:\.ftz)?\.f(?:32|64)\b", ptx)
    assert not loose, sorted(set(loose))


def test_source_names_the_requested_functions():
    src = cuda_math.source(["exp", "log1p"])
    assert src.startswith(cuda_math.PREAMBLE)
    src = src[len(cuda_math.PREAMBLE):]
    assert re.findall(r"\bmsm_(\w+)_f(?:32|64)\(\w+ x\)", src) == ["exp", "exp", "log1p", "log1p"]
    assert "msm_log_f32(" not in src                   # log1p's call to log is inlined
    with pytest.raises(ValueError, match="gamma"):
        cuda_math.source(["gamma"])
