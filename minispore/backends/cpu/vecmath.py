"""Vectorisable exp/log/log1p/tanh/sigmoid/softplus/erf/sin/cos for generated numba kernels.

Why: the PyPI llvmlite has no SVML, so inside an njit loop `np.exp`/`np.tanh`/`math.erf` are scalar
libm calls and the loop cannot vectorise (0.4-0.8 GB/s on 4M float32).  Every function here is
straight-line code -- polynomials, a few integer bit tricks, and `a if c else b` selects that LLVM
turns into blends or min/max -- so `for i in range(n): out[i] = vexp(x[i])` becomes a packed
(ymm/zmm) loop.

Use from generated code: `from minispore.backends.cpu.vecmath import vexp, vlog, ...` and call
`vexp(x0)` on a float32 or float64 scalar.  Each name is a stub with a `numba.extending.overload`:
at compile time the float32 or float64 algorithm is picked from the argument type (integers and
booleans go to float64, like numpy); it is compiled once per dtype with `forceinline` (LLVM
`alwaysinline`) and its own flags, then inlined and vectorised inside the kernel.  Called from
plain Python the stubs fall back to numpy.  Notes for the code generator:
  * our code keeps its own strict flags ('contract' only) and error_model="numpy" even inside a
    fastmath/error_model="python" kernel, so NaN/inf handling does not depend on the caller; but
    the kernel's own divisions branch (and block vectorisation) unless it uses error_model="numpy";
  * float32 kernels must keep the arithmetic in float32 (numba types `x * 1.5` as float64, so emit
    constants as np.float32(1.5)), otherwise the float64 algorithm -- twice the cost -- is used;
  * numba's on-disk cache does not see changes to this file: put `DIGEST` (a hash of this source)
    into the generated source so that cached kernels are rebuilt when it changes.

Algorithms (float32 / float64 differ only in constants and polynomial degree; polynomials are
evaluated by Estrin's scheme with llvm.fmuladd; sqrt needs nothing: np.sqrt is llvm.sqrt, already
a packed vsqrtps in a numba loop):
  exp      n = rint(x/ln2) by the 1.5*2^23 (2^52) rounding trick, r = x - n*ln2 (Cody-Waite,
           two-part ln2), e^r = 1 + r + r^2 P(r) on |r| <= ln2/2 (float32: P of degree 4, our own
           Lawson fit of relative error 3.1e-9; float64: Taylor degree 13), times 2^n made from the bits of n (integer ops, no float->int conversion:
           NaN flows through) in two halves, so subnormal results and overflow round once.
  log      x = m 2^e with m in [sqrt(1/2), sqrt(2)) by musl's offset-bit trick (subnormals scaled
           first), f = m-1, s = f/(2+f), log(1+f) = f - f^2/2 + s(f^2/2 + R(s^2)) (fdlibm/FreeBSD
           Lg1..Lg4 / Lg1..Lg7 minimax).
  log1p    u = 1+x, log(u) + (x-(u-1))/u (the rounding of 1+x, corrected to first order).
  tanh     from the exp reduction of u = -2|x| (clamped to 10 / 20): with s = 2^n, p = s (e^r-1),
           tanh|x| = ((1-s) - p) / ((1+s) + p); 1-s and 1+s are exact, so numerator (-expm1(u))
           and denominator (2+expm1(u)) round once each; no branch, one division; sign copied.
  sigmoid  e = exp(-|x|) (inlined: one clamp; a subnormal e is made as (e 2^32) 2^-32 / (e 2^64)
           2^-64, one rounding, without the 2-step ldexp): 1/(1+e) for x >= 0, e/(1+e) below (no
           overflow, full relative accuracy).
  softplus max(x,0) + log1p(exp(-|x|)).
  erf      float32: |x| <= 0.9277: x + x P(x^2); else 1 - exp(Q(|x|)), Q ~ log erfc (own Lawson
           minimax fits, deg 5 and 6; erf = +-1 beyond 3.95).  float64: math.erf (scalar libm:
           correct but not vectorised).
  sin/cos  n = rint(x 2/pi), r = x - n pi/2 in float64 with a three-part pi/2 (24-bit parts for
           float32 inputs, fdlibm's 33-bit parts for float64), sin r and cos r polynomials on
           |r| <= pi/4 (Cephes sinf/cosf, fdlibm __kernel_sin/cos), the quadrant picks/negates.
           With FMA (contracted n*pi/2 products) the reduction stays exact to |x| < 2^48; without
           FMA hardware only to 2^29 pi/2 ~ 8e8 (float32) / 2^20 pi/2 ~ 1.6e6 (float64), then it
           degrades gradually.  |x| >= 2^48 (no Payne-Hanek reduction here), inf, nan -> nan.
Special values follow numpy: exp(+-inf) = inf/0, log(0) = -inf, log(<0) = nan, tanh -> +-1,
sigmoid -> 0/1, NaN propagates.  (Signed zero is not always kept: sin(-0.) is +0.)
Max error on tests/unit/test_vecmath.py's grids, float32 (vs float64 numpy/scipy): exp, log 1.0
ulp, log1p, erf, sin, cos 1.5, tanh, softplus 1.9, sigmoid 2.0 (tanh, sigmoid abs <= 1.1e-7);
float64 (vs long double): <= 2.1 ulp, relative <= 3.2e-16.  Over every float32 (stride 11-13
samples of all bit patterns): exp 1.03 ulp, tanh 1.90, sigmoid 2.31.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["vexp", "vlog", "vlog1p", "vtanh", "vsigmoid", "vsoftplus", "verf", "vsin", "vcos"]
DIGEST = hashlib.sha1(Path(__file__).read_bytes()).hexdigest()[:16]   # see the module docstring


# ----------------------------------------------------------------- LLVM-level building blocks
def _llvm(b, name, args):
    """Call the LLVM intrinsic llvm.<name>.f32/f64 (all arguments of one float type)."""
    ty = args[0].type
    suffix = "f32" if ty == ir.FloatType() else "f64"
    fn = cgutils.get_or_insert_function(b.module, ir.FunctionType(ty, [ty] * len(args)),
                                        f"llvm.{name}.{suffix}")
    return b.call(fn, args)


def _unary(name):
    @intrinsic
    def impl(typingctx, x):
        if isinstance(x, types.Float):
            return x(x), lambda ctx, b, sig, args: _llvm(b, name, args)
    return impl


_rint, _floor = _unary("rint"), _unary("floor")


@intrinsic
def _copysign(typingctx, x, y):
    if isinstance(x, types.Float) and x == y:
        return x(x, y), lambda ctx, b, sig, args: _llvm(b, "copysign", args)


@intrinsic
def _poly(typingctx, x, c):
    """c[0] x^k + ... + c[k] (c a constant tuple of x's type) by Estrin's scheme with
    llvm.fmuladd: pairs a + b x, then pairs of pairs with x^2, x^4, ... (a dependency chain of
    log2(k) steps instead of Horner's k: 5-10% faster loops here, same accuracy)."""
    if isinstance(x, types.Float) and isinstance(c, types.UniTuple) and c.dtype == x:
        def codegen(ctx, b, sig, args):
            terms = [b.extract_value(args[1], i) for i in reversed(range(c.count))]  # x^0 first
            p = args[0]
            while len(terms) > 1:
                nxt = [_llvm(b, "fmuladd", [terms[i + 1], p, terms[i]])
                       for i in range(0, len(terms) - 1, 2)]
                terms = nxt + terms[len(terms) - len(terms) % 2:]
                p = b.fmul(p, p) if len(terms) > 1 else p
            return terms[0]
        return x(x, c), codegen


def _layout(ft):
    """(integer type, mantissa bits, exponent bias) of an LLVM float type."""
    return (ir.IntType(32), 23, 127) if ft == ir.FloatType() else (ir.IntType(64), 52, 1023)


def _ldexp(steps):
    """p * 2**n, where j = n + 1.5*2**mantissa_bits holds the integer n in its low bits (the
    rounding trick: j = x*log2(e) + MAGIC rounds x*log2(e) to an integer).  Pure bit operations,
    so a NaN j cannot make poison (unlike fptosi).  steps=2 scales by 2**(n>>1) then 2**(n-(n>>1)):
    exact over the whole exp range, one rounding for subnormal results."""
    @intrinsic
    def impl(typingctx, p, j):
        if isinstance(p, types.Float) and p == j:
            def codegen(ctx, b, sig, args):
                ft = args[0].type
                it, mb, bias = _layout(ft)
                magic = (bias + mb) << mb | 1 << mb - 1              # bits of 1.5 * 2**mb
                n = b.sub(b.bitcast(args[1], it), ir.Constant(it, magic))
                h = b.ashr(n, ir.Constant(it, 1))
                parts = [n] if steps == 1 else [h, b.sub(n, h)]
                y = args[0]
                for k in parts:
                    k = b.shl(b.add(k, ir.Constant(it, bias)), ir.Constant(it, mb))
                    y = b.fmul(y, b.bitcast(k, ft))
                return y
            return p(p, j), codegen
    return impl


_ldexp1, _ldexp2 = _ldexp(1), _ldexp(2)


@intrinsic
def _frexp(typingctx, x):
    """(m, e): x = m * 2**e, m in [sqrt(1/2), sqrt(2)), for a positive normal x (else garbage)."""
    if isinstance(x, types.Float):
        def codegen(ctx, b, sig, args):
            ft = args[0].type
            it, mb, bias = _layout(ft)
            off = 0x3F3504F3 if mb == 23 else 0x3FE6A09E667F3BCD     # bits of sqrt(1/2)
            i = b.add(b.bitcast(args[0], it), ir.Constant(it, (bias << mb) - off))
            e = b.sitofp(b.sub(b.ashr(i, ir.Constant(it, mb)), ir.Constant(it, bias)), ft)
            m = b.and_(i, ir.Constant(it, (1 << mb) - 1))
            m = b.bitcast(b.add(m, ir.Constant(it, off)), ft)
            return ctx.make_tuple(b, sig.return_type, [m, e])
        return types.UniTuple(x, 2)(x), codegen


# ----------------------------------------------------------------- public stubs (numpy in Python)
def vexp(x): return np.exp(x)
def vlog(x): return np.log(x)
def vlog1p(x): return np.log1p(x)
def vtanh(x): return np.tanh(x)
def vsigmoid(x): return 1 / (1 + np.exp(-x))
def vsoftplus(x): return np.logaddexp(0, x)
def verf(x): return np.vectorize(math.erf, otypes=[np.result_type(x, np.float32)])(x)
def vsin(x): return np.sin(x)
def vcos(x): return np.cos(x)


# ----------------------------------------------------------------- the algorithms, per dtype
def _build(T):  # noqa: C901  (one closure per function; constants are frozen into the code)
    f64 = T is np.float64
    K = lambda *v: tuple(T(u) for u in v)  # noqa: E731
    ZERO, HALF, ONE, TWO, INF, NAN = K(0, .5, 1, 2, np.inf, np.nan)
    LOG2E = T(1 / math.log(2))
    M2LOG2E = -TWO * LOG2E
    MAGIC = T(1.5 * 2.0 ** (52 if f64 else 23))
    if f64:
        EXP_LO, EXP_HI, TLIM = K(-746, 710, 20)
        LN2HI, LN2LO = K(6.93147180369123816490e-01, 1.90821492927058770002e-10)
        EXP_P = K(*[1 / math.factorial(k) for k in range(13, 1, -1)])
        LOG_P = K(1.479819860511658591e-01, 1.531383769920937332e-01, 1.818357216161805012e-01,
                  2.222219843214978396e-01, 2.857142874366239149e-01, 3.999999999940941908e-01,
                  6.666666666666735130e-01)
        LOG_TINY, LOG_SCALE, LOG_SHIFT = K(2.0 ** -1022, 2.0 ** 54, 54)
        LN2HI_L, LN2LO_L = LN2HI, LN2LO
        PIO2 = (1.57079632673412561417e+00, 6.07710050630396597660e-11, 2.02226624879595063154e-21)
        SIN_P = K(1.58969099521155010221e-10, -2.50507602534068634195e-08,
                  2.75573137070700676789e-06, -1.98412698298579493134e-04,
                  8.33333333332248946124e-03, -1.66666666666666324348e-01)
        COS_P = K(-1.13596475577881948265e-11, 2.08757232129817482790e-09,
                  -2.75573143513906633035e-07, 2.48015872894767294178e-05,
                  -1.38888888888741095749e-03, 4.16666666666666019037e-02)
    else:
        EXP_LO, EXP_HI, TLIM = K(-104, 89, 10)
        LN2HI, LN2LO = K(0.693359375, -2.12194440e-4)
        EXP_P = K(1.3814492849633098e-3, 8.368735201656818e-3, 4.166838899254799e-2,
                  1.666652113199234e-1, 4.999999403953552e-1)    # own fit, see the docstring
        LOG_P = K(0.24279078841, 0.28498786688, 0.40000972152, 0.66666662693)
        LOG_TINY, LOG_SCALE, LOG_SHIFT = K(2.0 ** -126, 2.0 ** 25, 25)
        LN2HI_L, LN2LO_L = K(6.9313812256e-01, 9.0580006145e-06)   # for e*ln2, |e| < 2^8
        PIO2 = (1.5707963705062866, -4.371138828673793e-08, -1.7151244994428829e-15)
        SIN_P = K(-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
        COS_P = K(2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
        ERF_A = K(-0.000596428424601142, 0.004988011696907296, -0.02676313102734504,
                  0.11281721372388173, -0.37612484797514734, 0.1283791482546177)
        ERF_B = K(0.00019504563325467572, -0.003034458478629709, 0.022191948563022534,
                  -0.10385891851281898, -0.6372652177227609, -1.1276262526848382,
                  -0.00020765157082101548)
        ERF_T, ERF_MAX = K(0.9277, 3.95)
    P1, P2, P3 = PIO2
    SIG_UP, SIG_DOWN = K(64 if f64 else 32, 2.0 ** -(64 if f64 else 32))
    TWO_OVER_PI = 0.6366197723675814

    def exp(x):
        xc = EXP_HI if x > EXP_HI else x            # clamp; a NaN passes through
        xc = EXP_LO if xc < EXP_LO else xc
        j = xc * LOG2E + MAGIC                      # n + MAGIC: n = rint(x / ln2)
        n = j - MAGIC
        r = (xc - n * LN2HI) - n * LN2LO
        return _ldexp2(ONE + (r + r * r * _poly(r, EXP_P)), j)

    def log(x):
        sub = x < LOG_TINY
        m, e = _frexp(x * LOG_SCALE if sub else x)
        e = e - LOG_SHIFT if sub else e
        f = m - ONE
        s = f / (TWO + f)
        z = s * s
        R = z * _poly(z, LOG_P)
        hfsq = HALF * f * f
        y = e * LN2HI_L - ((hfsq - (s * (hfsq + R) + e * LN2LO_L)) - f)
        y = y if x > ZERO else NAN
        y = -INF if x == ZERO else y
        return y if x < INF else x                  # +inf and nan pass through

    def log1p(x):
        u = ONE + x
        c = (x - (u - ONE)) / u                     # rounding error of 1 + x, to first order
        c = c if c == c else ZERO                   # u = 0 or inf
        y = vlog(u) + c
        return x if u == ONE else y

    def tanh(x):
        a = abs(x)
        a = TLIM if a > TLIM else a                 # nan passes through
        u = -TWO * a
        j = a * M2LOG2E + MAGIC                     # = u * LOG2E exactly, without waiting for u
        n = j - MAGIC
        r = (u - n * LN2HI) - n * LN2LO
        s = _ldexp1(ONE, j)                         # 2^n, exact
        pr = s * (r + r * r * _poly(r, EXP_P))      # 2^n (e^r - 1): e^u = s + pr
        # tanh|x| = (1 - e^u) / (1 + e^u); 1 -+ s are exact, so numerator and denominator are
        # rounded once each (-expm1(u) and 2 + expm1(u) would round twice)
        return _copysign(((ONE - s) - pr) / ((ONE + s) + pr), x)

    def sigmoid(x):
        u = -abs(x)                                 # exp(u) as in exp(), one clamp needed
        u = EXP_LO if u < EXP_LO else u
        j = u * LOG2E + MAGIC
        n = j - MAGIC
        r = (u - n * LN2HI) - n * LN2LO
        # e = e^u computed as (e^u 2^SIG_UP) 2^-SIG_UP: the scaled value is normal for every u, so
        # one 1-step ldexp is exact and the multiplication rounds a subnormal e^u once
        e = _ldexp1(ONE + (r + r * r * _poly(r, EXP_P)), j + SIG_UP) * SIG_DOWN
        return (ONE if x >= ZERO else e) / (ONE + e)

    def softplus(x):
        return (x if x > ZERO else ZERO) + vlog1p(vexp(-abs(x)))

    def erf32(x):
        a = abs(x)
        t = ERF_MAX if a > ERF_MAX else a           # nan stays nan
        big = _copysign(ONE - vexp(_poly(t, ERF_B)), x)
        return x + x * _poly(x * x, ERF_A) if a <= ERF_T else big

    def erf64(x):                                   # no vectorised float64 erf: scalar libm
        return math.erf(x)

    def _trig(q0):                                  # q0 = 0: sin, 1: cos(x) = sin(x + pi/2)
        def trig(x):
            xd = np.float64(x)
            n = _rint(xd * TWO_OVER_PI)
            r = T(((xd - n * P1) - n * P2) - n * P3)
            z = r * r
            s = r + r * z * _poly(z, SIN_P)
            w = ONE - HALF * z
            c = w + (((ONE - w) - HALF * z) + z * z * _poly(z, COS_P))
            q = n + q0                              # quadrant: odd -> cos r; 2, 3 mod 4 -> negate
            h = _floor(q * 0.5)
            y = s if q == h + h else c
            y = -y if h != _floor(h * 0.5) * 2.0 else y
            return y if abs(xd) < 2.0 ** 48 else NAN    # also inf, nan
        return trig

    return dict(exp=exp, log=log, log1p=log1p, tanh=tanh, sigmoid=sigmoid, softplus=softplus,
                erf=erf64 if f64 else erf32, sin=_trig(0.0), cos=_trig(1.0))


# Compiled once per dtype as separate functions marked LLVM `alwaysinline` (forceinline): LLVM
# inlines them into each kernel and vectorises the loop.  (numba-IR inlining, overload(inline=
# "always"), vectorises too but re-types the whole body at every call site: 2-10x the compile
# time.)  The flags are their own, whatever the caller's: 'contract' only (FMA fusion), never
# nnan/ninf/reassoc; error_model="numpy" so that divisions do not branch.
_JIT = dict(forceinline=True, error_model="numpy", fastmath={"contract"})
_IMPL = {32: _build(np.float32), 64: _build(np.float64)}


def _register(stub, name):
    @overload(stub, jit_options=_JIT)
    def _ov(x):
        if isinstance(x, types.Float) and x.bitwidth in _IMPL:
            return _IMPL[x.bitwidth][name]
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x: stub(np.float64(x))


for _stub in (vexp, vlog, vlog1p, vtanh, vsigmoid, vsoftplus, verf, vsin, vcos):
    _register(_stub, _stub.__name__[1:])
