"""The elementwise language's scalar functions: one table, and each transcendental written once.

`TABLE` names every operation a scalar_expr tree may hold (name, arity, kind, simulated-Ascend
cost weight); scalar_expr builds its functions and op lists from it, and each backend reads its
own spelling lists from it (`names(kind)`).  Kinds: "operator" (a Python operator on Expr),
"logical" (and/or/not), "select" (where), "test" (isnan), "intrinsic" (one IEEE instruction:
llvm.<name>, np.<name>, C <name>), "decomposed" (defined below from + - * / and bit tricks).

The decomposed functions exp/log/log1p/tanh/sigmoid/softplus/erf/sin/cos are written once, as
Python functions `f(o, x)` of an ops handler `o` (the protocol of `Ops`: float arithmetic,
comparisons, select, a few IEEE intrinsics, fmuladd, same-width bit casts and integer ops) --
PyTorch Inductor's ops handler / tinygrad's decompositions in small.  Each backend renders them by
running them on its own handler: backends/cpu/llvm_math.py on llvmlite IR (used by the LLVM native
sink and, through a numba intrinsic, by backends/cpu/vecmath.py's numba kernels: one IR, so eager
and compiled results are equal by construction), backends/gpu/cuda_math.py as C source.  Why
decomposed at all: the PyPI llvmlite has no SVML, so libm calls inside a loop keep it scalar;
straight-line code with selects vectorises.  No numba or llvmlite is imported here.

Algorithms (float32 / float64 differ only in constants and polynomial degree; polynomials are
evaluated by Estrin's scheme with fmuladd; sqrt is an intrinsic):
  exp      n = rint(x/ln2) by the 1.5*2^23 (2^52) rounding trick, r = x - n*ln2 (Cody-Waite,
           two-part ln2), e^r = 1 + r + r^2 P(r) on |r| <= ln2/2 (float32: P of degree 4, our own
           Lawson fit of relative error 3.1e-9; float64: Taylor degree 13), times 2^n made from
           the bits of n (integer ops, no float->int conversion: NaN flows through) in two halves,
           so subnormal results and overflow round once.
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
           minimax fits, deg 5 and 6; erf = +-1 beyond 3.95).  float64: libm erf (scalar:
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
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

SOURCE_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


# ----------------------------------------------------------------- the table
@dataclass(frozen=True)
class ScalarOp:
    name: str
    arity: int
    kind: str        # operator, logical, select, test, intrinsic, decomposed (module docstring)
    weight: int      # simulated Ascend Vector-unit operations per element [E]


def _ops(kind, arity, names, weights=None):
    return [ScalarOp(n, arity, kind, (weights or {}).get(n, 1)) for n in names]


TABLE = {op.name: op for op in [
    *_ops("operator", 2, ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "lt", "le", "gt",
                          "ge", "eq", "ne", "band", "bor", "bxor", "shl", "shr"),
          {"pow": 8, "div": 2, "floordiv": 3, "mod": 3}),
    *_ops("logical", 2, ("and", "or")),
    *_ops("operator", 1, ("neg", "bnot")),
    *_ops("logical", 1, ("not",)),
    *_ops("select", 3, ("where",)),
    *_ops("decomposed", 1, ("exp", "log", "log1p", "tanh", "sigmoid", "softplus", "erf", "sin",
                            "cos"),
          {"exp": 4, "log": 4, "log1p": 4, "tanh": 6, "sigmoid": 5, "softplus": 8, "erf": 8,
           "sin": 6, "cos": 6}),
    *_ops("intrinsic", 1, ("sqrt", "floor", "ceil", "rint", "fabs"), {"sqrt": 2}),
    *_ops("test", 1, ("isnan",)),
]}


def names(*kinds: str) -> tuple:
    """Names of the table's operations of the given kinds, in table order."""
    return tuple(n for n, op in TABLE.items() if op.kind in kinds)


# ----------------------------------------------------------------- the ops handler protocol
class Ops:
    """What a renderer implements (values are its own: IR values, C expressions...).  `bits` is
    the working float width (32 or 64); floats are of that width unless said otherwise, integers
    are always of that width.  Arithmetic rounds as IEEE; a renderer may fuse a multiply into a
    dependent add (contraction) only as `fmuladd` does.  Every method must be overridden."""
    bits: int

    def _missing(self, *args):
        raise NotImplementedError(f"{type(self).__name__} does not implement this scalar_math op")

    # constants: k(np.float32) -> float32, k(np.float64 or float) -> float64; ki(int) -> integer
    k = ki = _missing
    # float arithmetic (IEEE, rounded) and neg (sign flip, also of 0 and NaN)
    add = sub = mul = div = neg = _missing
    # comparisons -> bool: gt, lt, ge, le, eq ordered (false on NaN), ne unordered (true on NaN)
    gt = lt = ge = le = eq = ne = _missing
    # select(c, x, y): x if c else y
    select = _missing
    # IEEE intrinsics: fabs, rint (to nearest even), floor, copysign(x, y); fmuladd(a, b, c):
    # a*b + c, fused where the target has FMA (llvm.fmuladd)
    fabs = rint = floor = copysign = fmuladd = _missing
    # fpext: float32 -> float64; fptrunc: float64 -> float32 (round to nearest)
    fpext = fptrunc = _missing
    # bits_of: float -> same-width integer, same bits; float_of: the reverse; integer add, sub,
    # and; ashr(i, n) / shl(i, n) by a constant n; sitofp: signed integer -> float
    bits_of = float_of = iadd = isub = iand = ashr = shl = sitofp = _missing
    # call(name, x): another function of DEFINITIONS (the renderer's rendering of it);
    # libm(name, x): the C library's scalar function `name` (float64)
    call = libm = _missing


# ----------------------------------------------------------------- constants, per float width
def _consts(T):
    """The constants of the definitions for numpy float type T: numpy T rounding of the literals
    (the trig reduction's PIO2 and TWO_OVER_PI are float64 whatever T)."""
    f64 = T is np.float64
    K = lambda *v: tuple(T(u) for u in v)  # noqa: E731
    c = SimpleNamespace()
    c.ZERO, c.HALF, c.ONE, c.TWO, c.INF, c.NAN = K(0, .5, 1, 2, np.inf, np.nan)
    c.LOG2E = T(1 / math.log(2))
    c.M2LOG2E = -c.TWO * c.LOG2E
    c.MAGIC = T(1.5 * 2.0 ** (52 if f64 else 23))
    c.MANT, c.BIAS = (52, 1023) if f64 else (23, 127)          # float layout: the bit tricks
    c.SQRT_HALF_BITS = 0x3FE6A09E667F3BCD if f64 else 0x3F3504F3
    if f64:
        c.EXP_LO, c.EXP_HI, c.TLIM = K(-746, 710, 20)
        c.LN2HI, c.LN2LO = K(6.93147180369123816490e-01, 1.90821492927058770002e-10)
        c.EXP_P = K(*[1 / math.factorial(k) for k in range(13, 1, -1)])
        c.LOG_P = K(1.479819860511658591e-01, 1.531383769920937332e-01, 1.818357216161805012e-01,
                    2.222219843214978396e-01, 2.857142874366239149e-01, 3.999999999940941908e-01,
                    6.666666666666735130e-01)
        c.LOG_TINY, c.LOG_SCALE, c.LOG_SHIFT = K(2.0 ** -1022, 2.0 ** 54, 54)
        c.LN2HI_L, c.LN2LO_L = c.LN2HI, c.LN2LO
        c.PIO2 = (1.57079632673412561417e+00, 6.07710050630396597660e-11,
                  2.02226624879595063154e-21)
        c.SIN_P = K(1.58969099521155010221e-10, -2.50507602534068634195e-08,
                    2.75573137070700676789e-06, -1.98412698298579493134e-04,
                    8.33333333332248946124e-03, -1.66666666666666324348e-01)
        c.COS_P = K(-1.13596475577881948265e-11, 2.08757232129817482790e-09,
                    -2.75573143513906633035e-07, 2.48015872894767294178e-05,
                    -1.38888888888741095749e-03, 4.16666666666666019037e-02)
    else:
        c.EXP_LO, c.EXP_HI, c.TLIM = K(-104, 89, 10)
        c.LN2HI, c.LN2LO = K(0.693359375, -2.12194440e-4)
        c.EXP_P = K(1.3814492849633098e-3, 8.368735201656818e-3, 4.166838899254799e-2,
                    1.666652113199234e-1, 4.999999403953552e-1)    # own fit, see the docstring
        c.LOG_P = K(0.24279078841, 0.28498786688, 0.40000972152, 0.66666662693)
        c.LOG_TINY, c.LOG_SCALE, c.LOG_SHIFT = K(2.0 ** -126, 2.0 ** 25, 25)
        c.LN2HI_L, c.LN2LO_L = K(6.9313812256e-01, 9.0580006145e-06)   # for e*ln2, |e| < 2^8
        c.PIO2 = (1.5707963705062866, -4.371138828673793e-08, -1.7151244994428829e-15)
        c.SIN_P = K(-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
        c.COS_P = K(2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
        c.ERF_A = K(-0.000596428424601142, 0.004988011696907296, -0.02676313102734504,
                    0.11281721372388173, -0.37612484797514734, 0.1283791482546177)
        c.ERF_B = K(0.00019504563325467572, -0.003034458478629709, 0.022191948563022534,
                    -0.10385891851281898, -0.6372652177227609, -1.1276262526848382,
                    -0.00020765157082101548)
        c.ERF_T, c.ERF_MAX = K(0.9277, 3.95)
    c.SIG_UP, c.SIG_DOWN = K(64 if f64 else 32, 2.0 ** -(64 if f64 else 32))
    c.TWO_OVER_PI = 0.6366197723675814
    return c


CONSTS = {32: _consts(np.float32), 64: _consts(np.float64)}


# ----------------------------------------------------------------- building blocks
def poly(o, x, coeffs):
    """coeffs[0] x^k + ... + coeffs[k] by Estrin's scheme with fmuladd: pairs a + b x, then pairs
    of pairs with x^2, x^4, ... (a dependency chain of log2(k) steps instead of Horner's k: 5-10%
    faster loops, same accuracy)."""
    terms = [o.k(v) for v in reversed(coeffs)]                 # x^0 first
    p = x
    while len(terms) > 1:
        nxt = [o.fmuladd(terms[i + 1], p, terms[i]) for i in range(0, len(terms) - 1, 2)]
        terms = nxt + terms[len(terms) - len(terms) % 2:]
        p = o.mul(p, p) if len(terms) > 1 else p
    return terms[0]


def ldexp(o, p, j, steps):
    """p * 2**n, where j = n + 1.5*2**mantissa_bits holds the integer n in its low bits (the
    rounding trick: j = x*log2(e) + MAGIC rounds x*log2(e) to an integer).  Pure bit operations,
    so a NaN j cannot make poison (unlike a float->int conversion).  steps=2 scales by 2**(n>>1)
    then 2**(n-(n>>1)): exact over the whole exp range, one rounding for subnormal results."""
    c = CONSTS[o.bits]
    magic = (c.BIAS + c.MANT) << c.MANT | 1 << c.MANT - 1           # bits of 1.5 * 2**mb
    n = o.isub(o.bits_of(j), o.ki(magic))
    h = o.ashr(n, 1)
    y = p
    for part in ([n] if steps == 1 else [h, o.isub(n, h)]):
        y = o.mul(y, o.float_of(o.shl(o.iadd(part, o.ki(c.BIAS)), c.MANT)))
    return y


def frexp(o, x):
    """(m, e): x = m * 2**e, m in [sqrt(1/2), sqrt(2)), for a positive normal x (else garbage)."""
    c = CONSTS[o.bits]
    off = c.SQRT_HALF_BITS
    i = o.iadd(o.bits_of(x), o.ki((c.BIAS << c.MANT) - off))
    e = o.sitofp(o.isub(o.ashr(i, c.MANT), o.ki(c.BIAS)))
    m = o.float_of(o.iadd(o.iand(i, o.ki((1 << c.MANT) - 1)), o.ki(off)))
    return m, e


# ----------------------------------------------------------------- the definitions
def exp(o, x):
    c, k = CONSTS[o.bits], o.k
    xc = o.select(o.gt(x, k(c.EXP_HI)), k(c.EXP_HI), x)       # clamp; a NaN passes through
    xc = o.select(o.lt(xc, k(c.EXP_LO)), k(c.EXP_LO), xc)
    j = o.add(o.mul(xc, k(c.LOG2E)), k(c.MAGIC))               # n + MAGIC: n = rint(x / ln2)
    n = o.sub(j, k(c.MAGIC))
    r = o.sub(o.sub(xc, o.mul(n, k(c.LN2HI))), o.mul(n, k(c.LN2LO)))
    q = o.add(r, o.mul(o.mul(r, r), poly(o, r, c.EXP_P)))
    return ldexp(o, o.add(k(c.ONE), q), j, 2)


def log(o, x):
    c, k = CONSTS[o.bits], o.k
    sub = o.lt(x, k(c.LOG_TINY))
    m, e = frexp(o, o.select(sub, o.mul(x, k(c.LOG_SCALE)), x))
    e = o.select(sub, o.sub(e, k(c.LOG_SHIFT)), e)
    f = o.sub(m, k(c.ONE))
    s = o.div(f, o.add(k(c.TWO), f))
    z = o.mul(s, s)
    big_r = o.mul(z, poly(o, z, c.LOG_P))
    hfsq = o.mul(o.mul(k(c.HALF), f), f)
    hi = o.mul(e, k(c.LN2HI_L))
    t = o.add(o.mul(s, o.add(hfsq, big_r)), o.mul(e, k(c.LN2LO_L)))
    y = o.sub(hi, o.sub(o.sub(hfsq, t), f))
    y = o.select(o.gt(x, k(c.ZERO)), y, k(c.NAN))
    y = o.select(o.eq(x, k(c.ZERO)), o.neg(k(c.INF)), y)
    return o.select(o.lt(x, k(c.INF)), y, x)                   # +inf and nan pass through


def log1p(o, x):
    c, k = CONSTS[o.bits], o.k
    u = o.add(k(c.ONE), x)
    corr = o.div(o.sub(x, o.sub(u, k(c.ONE))), u)              # rounding error of 1 + x
    corr = o.select(o.eq(corr, corr), corr, k(c.ZERO))          # u = 0 or inf
    y = o.add(o.call("log", u), corr)
    return o.select(o.eq(u, k(c.ONE)), x, y)


def tanh(o, x):
    c, k = CONSTS[o.bits], o.k
    a = o.fabs(x)
    a = o.select(o.gt(a, k(c.TLIM)), k(c.TLIM), a)              # nan passes through
    u = o.mul(o.neg(k(c.TWO)), a)
    j = o.add(o.mul(a, k(c.M2LOG2E)), k(c.MAGIC))              # = u * LOG2E, without waiting for u
    n = o.sub(j, k(c.MAGIC))
    r = o.sub(o.sub(u, o.mul(n, k(c.LN2HI))), o.mul(n, k(c.LN2LO)))
    s = ldexp(o, k(c.ONE), j, 1)                                # 2^n, exact
    pr = o.mul(s, o.add(r, o.mul(o.mul(r, r), poly(o, r, c.EXP_P))))  # 2^n (e^r - 1)
    # tanh|x| = (1 - e^u) / (1 + e^u); 1 -+ s are exact, so numerator and denominator are
    # rounded once each (-expm1(u) and 2 + expm1(u) would round twice)
    num = o.sub(o.sub(k(c.ONE), s), pr)
    den = o.add(o.add(k(c.ONE), s), pr)
    return o.copysign(o.div(num, den), x)


def sigmoid(o, x):
    c, k = CONSTS[o.bits], o.k
    u = o.neg(o.fabs(x))                                        # exp(u) as in exp(): one clamp
    u = o.select(o.lt(u, k(c.EXP_LO)), k(c.EXP_LO), u)
    j = o.add(o.mul(u, k(c.LOG2E)), k(c.MAGIC))
    n = o.sub(j, k(c.MAGIC))
    r = o.sub(o.sub(u, o.mul(n, k(c.LN2HI))), o.mul(n, k(c.LN2LO)))
    p = o.add(k(c.ONE), o.add(r, o.mul(o.mul(r, r), poly(o, r, c.EXP_P))))
    # e = e^u computed as (e^u 2^SIG_UP) 2^-SIG_UP: the scaled value is normal for every u, so
    # one 1-step ldexp is exact and the multiplication rounds a subnormal e^u once
    e = o.mul(ldexp(o, p, o.add(j, k(c.SIG_UP)), 1), k(c.SIG_DOWN))
    top = o.select(o.ge(x, k(c.ZERO)), k(c.ONE), e)
    return o.div(top, o.add(k(c.ONE), e))


def softplus(o, x):
    c, k = CONSTS[o.bits], o.k
    pos = o.select(o.gt(x, k(c.ZERO)), x, k(c.ZERO))
    return o.add(pos, o.call("log1p", o.call("exp", o.neg(o.fabs(x)))))


def erf(o, x):
    if o.bits == 64:                                            # no vectorised float64 erf
        return o.libm("erf", x)
    c, k = CONSTS[o.bits], o.k
    a = o.fabs(x)
    t = o.select(o.gt(a, k(c.ERF_MAX)), k(c.ERF_MAX), a)       # nan stays nan
    big = o.copysign(o.sub(k(c.ONE), o.call("exp", poly(o, t, c.ERF_B))), x)
    small = o.add(x, o.mul(x, poly(o, o.mul(x, x), c.ERF_A)))
    return o.select(o.le(a, k(c.ERF_T)), small, big)


def _trig(q0):                                  # q0 = 0: sin, 1: cos(x) = sin(x + pi/2)
    def trig(o, x):
        c, k = CONSTS[o.bits], o.k
        p1, p2, p3 = c.PIO2
        xd = o.fpext(x) if o.bits == 32 else x                  # the reduction is in float64
        n = o.rint(o.mul(xd, k(c.TWO_OVER_PI)))
        r = o.sub(o.sub(o.sub(xd, o.mul(n, k(p1))), o.mul(n, k(p2))), o.mul(n, k(p3)))
        r = o.fptrunc(r) if o.bits == 32 else r
        z = o.mul(r, r)
        s = o.add(r, o.mul(o.mul(r, z), poly(o, z, c.SIN_P)))
        w = o.sub(k(c.ONE), o.mul(k(c.HALF), z))
        t = o.sub(o.sub(k(c.ONE), w), o.mul(k(c.HALF), z))
        cosr = o.add(w, o.add(t, o.mul(o.mul(z, z), poly(o, z, c.COS_P))))
        q = o.add(n, k(q0))                     # quadrant: odd -> cos r; 2, 3 mod 4 -> negate
        h = o.floor(o.mul(q, k(0.5)))
        y = o.select(o.eq(q, o.add(h, h)), s, cosr)
        odd = o.ne(h, o.mul(o.floor(o.mul(h, k(0.5))), k(2.0)))
        y = o.select(odd, o.neg(y), y)
        return o.select(o.lt(o.fabs(xd), k(2.0 ** 48)), y, k(c.NAN))   # also inf, nan
    trig.__name__ = "cos" if q0 else "sin"
    return trig


sin, cos = _trig(0.0), _trig(1.0)

DEFINITIONS = {n: globals()[n] for n in names("decomposed")}
