"""minispore.backends.cpu.llvm_math, the LLVM renderer of core/scalar_math.py's definitions: its
functions are accurate against numpy (float32 vs float64 references, float64 vs long double, on
test_vecmath's grids), give results bit-identical to numba's vecmath loops (every function, float32
and float64, on those grids, edge values and random bit patterns: numba's pipeline and the native
sink's get the same IR), define each function once with the inlining attributes, and the float32
exp loop is vectorised after O3.

The harness builds one llvmlite module with a loop kernel `void k_<name>_<f32|f64>(T* x, T* out,
i64 n)` per function, optimises it with the new pass manager at speed level 3 for the host CPU and
runs it through MCJIT and ctypes. The target is the native JIT's (native_jit.target(): the host,
or MINISPORE_LLVM_CPU / MINISPORE_LLVM_FEATURES); vectorisation is checked on code for several
x86-64 CPUs without assuming a vector width (LLVM picks 4, 8 or 16 floats by CPU)."""
import ctypes
import math
import re

import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir
from numba import njit

from minispore.backends.cpu import llvm_math as lm
from minispore.backends.cpu import native_jit
from minispore.backends.cpu import vecmath as vm

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()

DTYPES = {"f32": np.float32, "f64": np.float64}
LLTYPES = {"f32": ir.FloatType(), "f64": ir.DoubleType()}


# ----------------------------------------------------------------- harness: llvmlite loop kernels
def _loop_kernel(module, name, sfx):
    """void k_<name>_<sfx>(T* noalias x, T* noalias out, i64 n): out[i] = minispore_<name>(x[i])."""
    ty = LLTYPES[sfx]
    i64 = ir.IntType(64)
    fnty = ir.FunctionType(ir.VoidType(), [ty.as_pointer(), ty.as_pointer(), i64])
    fn = ir.Function(module, fnty, f"k_{name}_{sfx}")
    xp, op, n = fn.args
    xp.add_attribute("noalias")
    op.add_attribute("noalias")
    entry, loop, done = (fn.append_basic_block(s) for s in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(i64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    y = b.call(lm.math_fn(module, name, ty), [b.load(b.gep(xp, [i], inbounds=True))])
    b.store(y, b.gep(op, [i], inbounds=True))
    i1 = b.add(i, ir.Constant(i64, 1), flags=("nuw", "nsw"))
    i.add_incoming(i1, loop)
    b.cbranch(b.icmp_signed("<", i1, n), loop, done)
    b.position_at_end(done)
    b.ret_void()


def _optimised(names, cpu, features):
    """(the loop kernels of `names`, both dtypes, after O3 for CPU `cpu` with `features`, the
    target machine)."""
    module = ir.Module("test_llvm_math")
    module.triple = llvm.get_process_triple()
    for sfx in DTYPES:
        for name in names:
            _loop_kernel(module, name, sfx)
    tm = llvm.Target.from_default_triple().create_target_machine(cpu=cpu, features=features,
                                                                 opt=3)
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod, tm


class _Jit:
    def __init__(self):
        self.target = native_jit.target()
        mod, tm = _optimised(lm.NAMES, *self.target)
        self.mod = mod
        self.engine = llvm.create_mcjit_compiler(mod, tm)      # keeps mod and tm alive
        self.engine.finalize_object()
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
        self.fns = {(name, sfx): proto(self.engine.get_function_address(f"k_{name}_{sfx}"))
                    for sfx in DTYPES for name in lm.NAMES}

    def __call__(self, name, x):
        out = np.empty_like(x)
        self.fns[name, "f32" if x.dtype == np.float32 else "f64"](x.ctypes.data, out.ctypes.data,
                                                                   x.size)
        return out


@pytest.fixture(scope="module")
def jit():
    return _Jit()


_NUMBA = {}


def numba_apply(name, x):
    """The numba vecmath loop (as test_vecmath's `apply`)."""
    if name not in _NUMBA:
        ns = {"f": getattr(vm, "v" + name)}
        exec("def k(a, out):\n    for i in range(a.shape[0]):\n        out[i] = f(a[i])\n", ns)
        _NUMBA[name] = njit(error_model="numpy")(ns["k"])
    out = np.empty_like(x)
    _NUMBA[name](x, out)
    return out


# ----------------------------------------------------------------- inputs (as test_vecmath's)
DOMAIN = {"exp": ((-103.9, 88.7), (1e-30, 88.7)), "log": ((0, 10), (1e-45, 3e38)),
          "log1p": ((-0.9999, 10), (1e-30, 1e30)), "tanh": ((-12, 12), (1e-30, 1e3)),
          "sigmoid": ((-100, 40), (1e-30, 1e3)), "softplus": ((-90, 90), (1e-30, 1e30)),
          "erf": ((-6, 6), (1e-30, 1e3)), "sin": ((-1e4, 1e4), (1e-30, 1e6)),
          "cos": ((-1e4, 1e4), (1e-30, 1e6))}


def inputs(name, dtype, n=100_001):
    """Dense grid over the function's domain (+- geometric magnitudes), test_vecmath's edge values
    (0, +-subnormals, thresholds, +-huge, +-inf, nan), and random bit patterns (all exponents,
    NaN payloads); an odd length so that the vector loop's scalar tail runs too."""
    (lo, hi), (mlo, mhi) = DOMAIN[name]
    mags = np.geomspace(mlo, mhi, n // 4)
    fi = np.finfo(dtype)
    edge = [0.0, fi.smallest_subnormal, fi.smallest_subnormal * 37, fi.tiny, fi.tiny * 0.5, 1e-30,
            fi.eps, 0.5, 1.0, 2.0, 10.0, 20.0, 87.0, 88.72, 88.73, 103.9, 104.5, 709.7, 709.8,
            745.2, 746.0, 1e4, 1e30, 2.0 ** 48, float(fi.max), np.inf]
    it = np.int32 if dtype == np.float32 else np.int64
    bits = np.random.default_rng(7).integers(np.iinfo(it).min, np.iinfo(it).max, 50_001, dtype=it)
    with np.errstate(over="ignore"):
        x = np.concatenate([np.linspace(lo, hi, n), mags, -mags, edge, [-v for v in edge],
                            [np.nan]]).astype(dtype)
    return np.concatenate([x, bits.view(dtype)])


# ----------------------------------------------------------------- tests
@pytest.mark.parametrize("sfx", list(DTYPES))
@pytest.mark.parametrize("name", lm.NAMES)
def test_bit_identical_to_numba_vecmath(jit, name, sfx):
    x = inputs(name, DTYPES[sfx])
    with np.errstate(all="ignore"):
        got, want = jit(name, x), numba_apply(name, x)
    ibits = np.int32 if sfx == "f32" else np.int64
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)               # NaNs: payload/sign not compared
    diff = got.view(ibits) != want.view(ibits)
    diff &= ~nan
    assert not diff.any(), list(zip(x[diff][:5], got[diff][:5], want[diff][:5]))


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x < 0, e, 1) / (1 + e)


def _erf(x):
    import scipy.special as sp
    return sp.erf(x) if x.dtype != np.longdouble else np.vectorize(math.erf)(x.astype(np.float64))


# references: float64 numpy/scipy for float32 results, long double for float64 results
REF = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "tanh": np.tanh, "sigmoid": _sigmoid,
       "softplus": lambda x: np.logaddexp(0, x), "erf": _erf, "sin": np.sin, "cos": np.cos}
# max error of float32 results in float32 spacings at the reference (scalar_math's docstring)
ULP32 = {"exp": 1.5, "log": 1.5, "log1p": 1.5, "tanh": 2.5, "sigmoid": 2.5, "softplus": 2.5,
         "erf": 1.5, "sin": 2.0, "cos": 2.0}


def _grid(name, dtype, n=100_001):
    """The function's dense domain grid and +- magnitudes (no random bits, no specials)."""
    (lo, hi), (mlo, mhi) = DOMAIN[name]
    mags = np.geomspace(mlo, mhi, n // 4)
    x = np.concatenate([np.linspace(lo, hi, n), mags, -mags]).astype(dtype)
    x = np.abs(x) if name == "log" else x[x > -1] if name == "log1p" else x
    return x[np.abs(x) < 1e5] if name in ("sin", "cos") and dtype == np.float32 else x


@pytest.mark.parametrize("name", lm.NAMES)
def test_float32_accurate_against_float64_numpy(jit, name):
    x = _grid(name, np.float32)
    with np.errstate(all="ignore"):
        ref, got = REF[name](x.astype(np.float64)), jit(name, x).astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    fin = np.isfinite(ref)
    assert np.array_equal(got[~fin], ref[~fin])
    spacing = np.maximum(np.spacing(np.abs(ref[fin]).astype(np.float32)).astype(np.float64),
                         np.finfo(np.float32).smallest_subnormal)
    ulp = np.abs(got[fin] - ref[fin]) / spacing
    assert ulp.max() <= ULP32[name], (x[fin][ulp.argmax()], ulp.max())


@pytest.mark.parametrize("name", lm.NAMES)
def test_float64_accurate_against_long_double(jit, name):
    x = _grid(name, np.float64)
    with np.errstate(all="ignore"):
        ref, got = REF[name](x.astype(np.longdouble)), jit(name, x).astype(np.longdouble)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    fin = np.isfinite(ref)
    assert np.array_equal(got[~fin], ref[~fin])
    rel = np.abs(got[fin] - ref[fin]) / np.maximum(np.abs(ref[fin]), np.finfo(np.float64).tiny)
    assert rel.max() <= (2.3e-16 if name == "erf" else 5e-16), (x[fin][rel.argmax()], rel.max())


def test_math_fn_defines_each_function_once():
    module = ir.Module()
    f32 = ir.FloatType()
    fn = lm.math_fn(module, "log1p", f32)
    assert fn.name == "minispore_log1p_f32" and fn.linkage == "internal"
    assert {"alwaysinline", "nounwind"} <= set(fn.attributes)
    assert fn.function_type == ir.FunctionType(f32, [f32])
    assert lm.math_fn(module, "log1p", f32) is fn
    assert "minispore_log_f32" in module.globals                # log1p calls log
    assert lm.math_fn(module, "log", f32) is module.globals["minispore_log_f32"]
    lm.math_fn(module, "softplus", ir.DoubleType())
    text = str(module)
    assert text.count("define internal") == 6   # log1p, log; softplus, exp, log1p, log (f64)
    assert "fmul contract" in text                              # numba's fastmath rewrite
    assert not re.search(r"\bf(add|sub|mul|div) (?!contract)", text)
    llvm.parse_assembly(text).verify()
    with pytest.raises(ValueError):
        lm.math_fn(module, "gamma", f32)
    with pytest.raises(TypeError):
        lm.math_fn(module, "exp", ir.IntType(32))
    assert re.fullmatch(r"[0-9a-f]{16}", lm.DIGEST)


def _float_vector_widths(body: str) -> set:
    return {int(n) for n in re.findall(r"<(\d+) x float>", body)}


def _has_vector_unit(features: str) -> bool:
    """Every x86-64 CPU has SSE2 and every AArch64 one NEON: only a feature string turning them
    off leaves a target without float vectors."""
    return not {f.strip() for f in features.split(",")} & {"-sse", "-sse2", "-neon"}


def test_float32_exp_loop_is_vectorised(jit):
    """On the native JIT's target the exp loop is packed code (at the width LLVM picks for that
    CPU) with the polynomial inlined: no libm call."""
    body = str(jit.mod.get_function("k_exp_f32"))
    if _has_vector_unit(jit.target[1]):
        assert _float_vector_widths(body), f"the exp loop was not vectorised for {jit.target[0]}"
    assert not re.search(r"call .*@(exp|expf|minispore_)", body)    # inlined, no libm


# x86-64 targets LLVM vectorises at different widths: SSE2 4 floats, AVX2 8, AVX-512 8 or 16 by
# the CPU's preferred vector width (Intel's 256, AMD Zen 4/5's 512), none without SSE (x87 code)
X86_TARGETS = {"sse2": ("x86-64", ""), "avx2": ("haswell", ""),
               "avx512-256bit": ("skylake-avx512", ""), "avx512-512bit": ("znver4", ""),
               "scalar": ("x86-64", "-sse,-sse2")}


@pytest.mark.skipif(not llvm.get_process_triple().startswith("x86_64"), reason="x86-64 targets")
@pytest.mark.parametrize("target", X86_TARGETS.values(), ids=list(X86_TARGETS))
def test_exp_loop_vectorisation_is_checked_without_assuming_a_width(target):
    """The exp loop compiled (never run) for CPUs of every vector width: packed wherever the CPU
    has float vectors, whatever their width, scalar where it has none, never a libm call."""
    cpu, features = target
    mod, _ = _optimised(["exp"], cpu, features)
    body = str(mod.get_function("k_exp_f32"))
    widths = _float_vector_widths(body)
    if _has_vector_unit(features):
        assert widths, f"the exp loop was not vectorised for {cpu}"
    else:
        assert not widths, f"{cpu} {features} has no float vectors, yet: {sorted(widths)}"
    assert not re.search(r"call .*@(exp|expf|minispore_)", body)


def test_special_values(jit):
    """A few of test_vecmath's documented special values, through the llvmlite path."""
    inf, nan = np.inf, np.nan
    for dtype in (np.float32, np.float64):
        f = lambda name, *v: jit(name, np.array(v, dtype)).tolist()  # noqa: E731
        assert f("exp", inf, -inf, 0.0) == [inf, 0.0, 1.0]
        assert f("log", 0.0, -0.0, inf, 1.0) == [-inf, -inf, inf, 0.0]
        assert f("tanh", inf, -inf) == [1.0, -1.0] and f("sigmoid", inf, -inf) == [1.0, 0.0]
        assert f("erf", inf, -inf) == [1.0, -1.0]
        assert f("sin", 0.0) == [0.0] and f("cos", 0.0) == [1.0]
        for name in lm.NAMES:
            assert math.isnan(f(name, nan)[0]), name
