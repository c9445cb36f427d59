"""Half precision in the native sink: float16 and bfloat16 values are stored as 16-bit integers
and converted by integer arithmetic on their bits, exactly as numpy (float16) and ml_dtypes
(bfloat16) convert them, so a native program rounds the same values the same way as the eager
kernels, which compute half tensors in float32 and round each op's result once (elementwise.py
cpu_np).

- widen: a half value to float32/float64, exactly (NaN payloads kept, as numpy's
  npy_halfbits_to_floatbits; bfloat16 is the top half of a float32, and ml_dtypes widens it to
  float64 through float32, whose fpext sets a NaN's quiet bit).
- narrow: a float32/float64 value to a half dtype, rounded to nearest even from the source
  directly (numpy's npy_floatbits/doublebits_to_halfbits, ml_dtypes' double and float casts; no
  double rounding through float32), subnormals included, overflow to inf; a NaN keeps the top of
  its payload (float16, numpy: 0x7c00 + (mantissa >> shift), made nonzero) or becomes the quiet
  NaN with its sign (bfloat16, and a bfloat16 cast to float16: ml_dtypes).
- bits: the 16-bit pattern of a Python number in a half dtype (constants).

No LLVM `half` type is used: its conversions lower to F16C instructions or compiler-rt calls
whose NaN rules are not numpy's, and the object file would need those symbols.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from ...core import dtype as dt

I16, I32, I64 = L.IntType(16), L.IntType(32), L.IntType(64)
F32, F64 = L.FloatType(), L.DoubleType()
HALF = (dt.float16, dt.bfloat16)
# (exponent bits, mantissa bits) of each format
_FORMAT = {dt.float16: (5, 10), dt.bfloat16: (8, 7), dt.float32: (8, 23), dt.float64: (11, 52)}


def bits(d: dt.DType, value) -> int:
    """The bit pattern of `value` (a Python or numpy number) as half dtype d, as numpy rounds."""
    return int(np.array(value, dtype=d.np).reshape(-1)[:1].view(np.uint16)[0])


def _ints(ty):
    return I32 if ty == F32 else I64


def widen(b: L.IRBuilder, h, d: dt.DType, to):
    """The i16 `h` holding a value of half dtype d as float type `to` (F32 or F64), exactly."""
    if d is dt.bfloat16 and to == F64:
        return b.fpext(widen(b, h, d, F32), F64)
    e_h, m_h = _FORMAT[d]
    e_t, m_t = (8, 23) if to == F32 else (11, 52)
    IT = _ints(to)
    w = IT.width
    x = b.zext(h, IT)
    sign = b.shl(b.lshr(x, L.Constant(IT, 15)), L.Constant(IT, w - 1))
    mag = b.and_(x, L.Constant(IT, 0x7FFF))
    mant = b.and_(x, L.Constant(IT, (1 << m_h) - 1))
    exp = b.lshr(mag, L.Constant(IT, m_h))
    top = (1 << e_h) - 1
    shift = m_t - m_h
    bias_h, bias_t = (1 << (e_h - 1)) - 1, (1 << (e_t - 1)) - 1
    normal = b.add(b.shl(mag, L.Constant(IT, shift)), L.Constant(IT, (bias_t - bias_h) << m_t))
    special = b.or_(L.Constant(IT, ((1 << e_t) - 1) << m_t), b.shl(mant, L.Constant(IT, shift)))
    # a subnormal half is mant * 2**(1 - bias - m_h): exact in the wider float
    sub = b.fmul(b.uitofp(mant, to), L.Constant(to, 2.0 ** (1 - bias_h - m_h)))
    sub = b.bitcast(sub, IT)
    r = b.select(b.icmp_unsigned("==", exp, L.Constant(IT, 0)), sub,
                 b.select(b.icmp_unsigned("==", exp, L.Constant(IT, top)), special, normal))
    return b.bitcast(b.or_(r, sign), to)


def _rne_shift(b, m, sh, IT):
    """m >> sh rounded to nearest even (sh >= 1, an IT value)."""
    one = L.Constant(IT, 1)
    half_ulp = b.sub(b.shl(one, b.sub(sh, one)), one)
    odd = b.and_(b.lshr(m, sh), one)
    return b.lshr(b.add(b.add(m, half_ulp), odd), sh)


def narrow(b: L.IRBuilder, x, d: dt.DType, quiet_nan: bool = False):
    """The float32/float64 value x as half dtype d (an i16), rounded as numpy / ml_dtypes do;
    `quiet_nan`: a NaN becomes the quiet NaN with x's sign also for float16 (ml_dtypes' cast
    of a bfloat16 to float16)."""
    src = F32 if x.type == F32 else F64
    e_s, m_s = (8, 23) if src == F32 else (11, 52)
    e_h, m_h = _FORMAT[d]
    IT = _ints(src)
    w = IT.width

    def c(v):
        return L.Constant(IT, v)
    u = b.bitcast(x, IT)
    sign = b.trunc(b.lshr(u, c(w - 16)), I16)
    sign = b.and_(sign, L.Constant(I16, 0x8000))
    a = b.and_(u, c((1 << (w - 1)) - 1))
    bias_s, bias_h = (1 << (e_s - 1)) - 1, (1 << (e_h - 1)) - 1
    shift = m_s - m_h
    inf_s, inf_h = ((1 << e_s) - 1) << m_s, ((1 << e_h) - 1) << m_h
    # normal range of the half: rebias the exponent, round the mantissa (a carry into the
    # exponent is the right result; past the largest finite value it reaches inf)
    normal = _rne_shift(b, b.sub(a, c((bias_s - bias_h) << m_s)), c(shift), IT)
    normal = b.select(b.icmp_unsigned(">", normal, c(inf_h)), c(inf_h), normal)
    # below it: the mantissa (with its implicit bit) shifted to the half's subnormal ulp
    exp = b.lshr(a, c(m_s))
    mant = b.and_(a, c((1 << m_s) - 1))
    is_sub_src = b.icmp_unsigned("==", exp, c(0))
    full = b.select(is_sub_src, mant, b.or_(mant, c(1 << m_s)))
    e_eff = b.select(is_sub_src, c(1), exp)
    sh = b.sub(c(shift + bias_s - bias_h + 1), e_eff)         # >= shift + 1 here
    sh = b.select(b.icmp_unsigned(">", sh, c(m_s + 2)), c(m_s + 2), sh)
    sh = b.select(b.icmp_signed("<", sh, c(1)), c(1), sh)       # (a normal: not selected)
    sub = _rne_shift(b, full, sh, IT)
    low = b.icmp_unsigned("<", a, c((bias_s - bias_h + 1) << m_s))
    r = b.select(low, sub, normal) if bias_s != bias_h else normal
    if d is dt.float16 and not quiet_nan:       # numpy: the payload's top bits, made nonzero
        nan = b.add(c(inf_h), b.lshr(mant, c(shift)))
        nan = b.select(b.icmp_unsigned("==", nan, c(inf_h)), c(inf_h + 1), nan)
    else:                     # ml_dtypes: the quiet NaN
        nan = c(inf_h | (1 << (m_h - 1)))
    r = b.select(b.icmp_unsigned(">", a, c(inf_s)), nan, r)
    return b.or_(b.trunc(r, I16), sign)
