"""minispore.backends.cpu.vecmath: accuracy against numpy/scipy (float32 and float64, dense grids
and edge values), special values, dtype dispatch, on-disk caching of kernels that use it, and that
the float32 exp loop is vectorised."""
import math
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.special as sp
from numba import njit

from minispore.backends.cpu import vecmath as vm



def _sigmoid(x):
    e = np.exp(-np.abs(x))                                  # scipy's expit flushes below -709 to 0
    return np.where(x < 0, e, 1) / (1 + e)


def _erf(x):
    return sp.erf(x) if x.dtype != np.longdouble else np.vectorize(math.erf)(x.astype(np.float64))


# references, evaluated on float64 inputs for float32 results and on np.longdouble (x87 extended
# precision where available) for float64 results
REF = {"vexp": np.exp, "vlog": np.log, "vlog1p": np.log1p, "vtanh": np.tanh, "vsigmoid": _sigmoid,
       "vsoftplus": lambda x: np.logaddexp(0, x), "verf": _erf, "vsin": np.sin, "vcos": np.cos}
# dense-grid domains: (linear lo, hi) plus +-geomspace magnitudes (lo, hi) where meaningful
DOMAIN = {"vexp": ((-103.9, 88.7), (1e-30, 88.7)), "vlog": ((0, 10), (1e-45, 3e38)),
          "vlog1p": ((-0.9999, 10), (1e-30, 1e30)), "vtanh": ((-12, 12), (1e-30, 1e3)),
          "vsigmoid": ((-100, 40), (1e-30, 1e3)), "vsoftplus": ((-90, 90), (1e-30, 1e30)),
          "verf": ((-6, 6), (1e-30, 1e3)), "vsin": ((-1e4, 1e4), (1e-30, 1e6)),
          "vcos": ((-1e4, 1e4), (1e-30, 1e6))}
# max error of the float32 result in units of float32 spacing at the float64 reference
ULP32 = {"vexp": 1.5, "vlog": 1.5, "vlog1p": 1.5, "vtanh": 2.5, "vsigmoid": 2.5, "vsoftplus": 2.5,
         "verf": 1.5, "vsin": 2.0, "vcos": 2.0}
NAMES = sorted(REF)
_KERNELS = {}


def apply(name, x, fastmath=False):
    key = (name, fastmath)
    if key not in _KERNELS:
        ns = {"f": getattr(vm, name)}
        exec("def k(a, out):\n    for i in range(a.shape[0]):\n        out[i] = f(a[i])\n", ns)
        _KERNELS[key] = njit(error_model="numpy", fastmath=fastmath)(ns["k"])
    out = np.empty_like(x)
    _KERNELS[key](x, out)
    return out


def grid(name, dtype, n=200_001):
    (lo, hi), (mlo, mhi) = DOMAIN[name]
    mags = np.geomspace(mlo, mhi, n // 4)
    x = np.concatenate([np.linspace(lo, hi, n), mags, -mags]).astype(dtype)
    if name == "vlog":
        x = np.abs(x)
    if name == "vlog1p":
        x = x[x > -1]
    if name in ("vsin", "vcos") and dtype == np.float32:
        x = x[np.abs(x) < 1e5]
    return x


@pytest.mark.parametrize("name", NAMES)
def test_float32_accuracy_dense(name):
    x = grid(name, np.float32)
    with np.errstate(all="ignore"):
        r = REF[name](x.astype(np.float64))
    y = apply(name, x).astype(np.float64)
    assert np.array_equal(np.isnan(y), np.isnan(r))
    fin = np.isfinite(r)
    assert np.array_equal(y[~fin], r[~fin])
    y, r = y[fin], r[fin]
    spacing = np.spacing(np.abs(r).astype(np.float32)).astype(np.float64)
    spacing = np.maximum(spacing, np.finfo(np.float32).smallest_subnormal)
    ulp = np.abs(y - r) / spacing
    assert ulp.max() <= ULP32[name], (x[fin][ulp.argmax()], ulp.max())
    if name in ("vexp", "vlog"):
        normal = np.abs(r) > np.finfo(np.float32).tiny
        assert np.max(np.abs(y - r)[normal] / np.abs(r[normal])) <= 1e-6
    if name in ("vtanh", "vsigmoid"):
        assert np.max(np.abs(y - r)) <= 2e-7


@pytest.mark.parametrize("name", NAMES)
def test_float64_accuracy_dense(name):
    x = grid(name, np.float64)
    with np.errstate(all="ignore"):
        r = REF[name](x.astype(np.longdouble))
    y = apply(name, x).astype(np.longdouble)
    assert np.array_equal(np.isnan(y), np.isnan(r))
    fin = np.isfinite(r)
    assert np.array_equal(y[~fin], r[~fin])
    rel = np.abs(y[fin] - r[fin]) / np.maximum(np.abs(r[fin]), np.finfo(np.float64).tiny)
    assert rel.max() <= 5e-16 if name != "verf" else 2.3e-16, (x[fin][rel.argmax()], rel.max())


def edge_values(dtype):
    fi = np.finfo(dtype)
    v = [0.0, fi.smallest_subnormal, fi.smallest_subnormal * 37, fi.tiny, fi.tiny * 0.5, 1e-30,
         fi.eps, 0.5, 1.0, 2.0, 10.0, 20.0, 87.0, 88.72, 88.73, 103.9, 104.5, 709.7, 709.8,
         745.2, 746.0,
         1e4, 1e30, float(fi.max), np.inf]
    v = np.array(v + [-t for t in v] + [np.nan], dtype)
    return v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fastmath", [False, True], ids=["strict", "fastmath-caller"])
def test_edge_values(name, dtype, fastmath):
    """0, +-tiny, subnormals, thresholds, +-large, +-inf, nan; also from a fastmath=True kernel
    (vecmath's own code keeps strict flags, so its NaN/inf selects survive inlining)."""
    x = edge_values(dtype)
    if name in ("vsin", "vcos"):
        x = x[~(np.abs(x) > 1e6) | ~np.isfinite(x)]        # beyond the documented range
    with np.errstate(all="ignore"):
        r = REF[name](x.astype(np.float64)).astype(dtype)
        y = apply(name, x, fastmath)
    fi = np.finfo(dtype)
    ok = np.isclose(y, r, rtol=4 * fi.eps, atol=4 * fi.smallest_subnormal, equal_nan=True)
    assert ok.all(), list(zip(x[~ok], y[~ok], r[~ok]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_documented_special_values(dtype):
    inf, nan = np.inf, np.nan
    f = lambda name, *v: apply(name, np.array(v, dtype)).tolist()  # noqa: E731
    with np.errstate(all="ignore"):
        big = 89.0 if dtype == np.float32 else 710.0
        assert f("vexp", inf, -inf, big, -big * 2) == [inf, 0.0, inf, 0.0]
        assert np.isnan(f("vexp", nan)[0])
        assert f("vlog", 0.0, -0.0, inf, 1.0) == [-inf, -inf, inf, 0.0]
        assert all(np.isnan(f("vlog", -1.0, -inf, nan)))
        assert f("vlog1p", -1.0, inf, 0.0) == [-inf, inf, 0.0] and np.isnan(f("vlog1p", -2.0)[0])
        assert f("vtanh", inf, -inf, 50.0, -50.0) == [1.0, -1.0, 1.0, -1.0]
        assert f("vsigmoid", inf, -inf, 1e4, -1e4) == [1.0, 0.0, 1.0, 0.0]
        assert f("vsoftplus", inf, -inf, 1e30) == [inf, 0.0, dtype(1e30)]
        assert f("verf", inf, -inf, 10.0) == [1.0, -1.0, 1.0]
        for name in NAMES:
            assert np.isnan(f(name, nan)[0]), name
        assert all(np.isnan(f("vsin", inf, -inf, 1e16))) and all(np.isnan(f("vcos", inf, 1e16)))


def test_sin_cos_large_arguments():
    """Three-part pi/2 reduction: exact for float32 |x| < 8e8, float64 < 1.6e6 (more with FMA)."""
    rng = np.random.default_rng(0)
    for dtype, hi in ((np.float32, 5e8), (np.float64, 1e6)):
        x = rng.uniform(-hi, hi, 100_000).astype(dtype)
        for name in ("vsin", "vcos"):
            err = np.abs(apply(name, x) - REF[name](x.astype(np.float64)))
            assert err.max() <= (1.5e-7 if dtype == np.float32 else 4e-16), (name, dtype, err.max())


def test_dtype_dispatch_and_python_fallback():
    @njit(error_model="numpy")
    def both(a32, a64, n):
        return vm.vexp(a32), vm.vexp(a64), vm.vexp(n), vm.vtanh(True)
    r32, r64, rn, rb = both(np.float32(1), 1.0, 2)
    ret = str(both.nopython_signatures[0].return_type)
    assert ret == "Tuple(float32, float64, float64, float64)"
    assert r32 == np.float32(math.e) and r64 == pytest.approx(math.e, rel=1e-15)
    assert rn == pytest.approx(math.exp(2), rel=1e-15)
    assert rb == pytest.approx(math.tanh(1), rel=1e-15)
    x = np.linspace(-3, 3, 7, dtype=np.float32)           # outside numba the stubs are numpy
    np.testing.assert_allclose(vm.vsigmoid(x), sp.expit(x), rtol=1e-6)
    np.testing.assert_allclose(vm.verf(x), sp.erf(x), rtol=1e-6)


def _x86_64():
    import platform
    return platform.machine() in ("x86_64", "AMD64")


# packed float32 (ps) and float64 (pd) instructions at any vector width: SSE (mulps %xmm), AVX2
# (vmulps %ymm) or AVX-512 (vmulps %zmm), whichever numba's target CPU has (the host's, or
# NUMBA_CPU_NAME / NUMBA_CPU_FEATURES)
_PACKED = r"\bv?(?:fmadd|fmsub|fnmadd|mul|add|sub|blendv|max|min)\w*{}\b[^\n]*%[xyz]mm"


@pytest.mark.skipif(not _x86_64(), reason="reads x86-64 assembly")
@pytest.mark.parametrize("name", ["vexp", "vtanh", "vsigmoid"])
def test_float32_loop_vectorises(name):
    """The loops of the benchmark's chain (a) are packed float32 code at the target's vector
    width: no scalar libm call, no float64 (pd) arithmetic, packed divisions."""
    x = np.ones(64, np.float32)
    apply(name, x)
    k = _KERNELS[(name, False)]
    # the float32 specialisation: another test in this process may have compiled the kernel
    # for float64 arrays first
    (sig,) = [s for s in k.signatures if str(s[0].dtype) == "float32"]
    _check_packed(name, k.inspect_asm(sig))


def _check_packed(name, asm):
    packed = re.findall(_PACKED.format("ps"), asm)
    assert len(packed) >= 10, f"the {name} loop was not vectorised"
    assert not re.search(r"call\w*\s+\S*(exp|tanh)", asm), f"{name} still calls scalar libm"
    assert not re.search(_PACKED.format("pd"), asm), f"{name} computes in float64"
    if name != "vexp":
        assert re.search(r"\bv?divps\b[^\n]*%[xyz]mm", asm), f"{name}: its division is not packed"


# x86-64 CPUs of each vector width: SSE2 (4 floats), AVX2 (8), AVX-512 preferring 256-bit (8)
# and 512-bit (16) vectors
NUMBA_TARGETS = ["x86-64", "haswell", "skylake-avx512", "znver4"]
ASM_SCRIPT = textwrap.dedent("""
    import sys
    from numba import float32, njit, void
    from minispore.backends.cpu import vecmath as vm
    ns = {"f": getattr(vm, sys.argv[1])}
    exec("def k(a, out):\\n    for i in range(a.shape[0]):\\n        out[i] = f(a[i])\\n", ns)
    k = njit(void(float32[::1], float32[::1]), error_model="numpy")(ns["k"])   # compiled, not run
    print(k.inspect_asm(k.signatures[0]))
""")


@pytest.mark.skipif(not _x86_64(), reason="reads x86-64 assembly")
@pytest.mark.parametrize("cpu", NUMBA_TARGETS)
def test_float32_loop_vectorises_at_every_x86_vector_width(cpu):
    """The same check on code numba makes for other CPUs (NUMBA_CPU_NAME, in a subprocess:
    numba reads it at import): packed float32 whatever the width."""
    checkout = os.path.abspath(os.path.join(os.path.dirname(vm.__file__), "..", "..", ".."))
    path = os.pathsep.join(p for p in (checkout, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="", PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", ASM_SCRIPT, "vtanh"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    _check_packed("vtanh", out.stdout)


CACHE_SCRIPT = textwrap.dedent("""
    import sys, numpy as np
    sys.path.insert(0, sys.argv[1])
    import kmod
    a = np.array([0, 1, np.nan, -np.inf, 100], np.float32); out = np.empty_like(a)
    kmod.k(a, out)
    st = kmod.k.stats
    print(out.tolist(), sum(st.cache_hits.values()), sum(st.cache_misses.values()))
""")
KMOD = textwrap.dedent("""
    from numba import njit
    from minispore.backends.cpu.vecmath import vexp, vtanh, vsigmoid
    @njit(cache=True, error_model="numpy", nogil=True)
    def k(a, out):
        for i in range(a.shape[0]):
            x0 = a[i]
            out[i] = vtanh(x0) * vsigmoid(x0) + vexp(x0)
""")


def test_kernel_using_vecmath_is_cached_on_disk(tmp_path):
    (tmp_path / "kmod.py").write_text(KMOD)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"))
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", CACHE_SCRIPT, str(tmp_path)], env=env,
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        runs.append(p.stdout.split("]"))
    assert runs[0][0] == runs[1][0] and "nan" in runs[0][0]
    assert runs[0][1].split() == ["0", "1"] and runs[1][1].split() == ["1", "0"]
