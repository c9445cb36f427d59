"""Pooling lowerings of the native sink: pool_templates.py's kernels in LLVM IR, the window
geometry as constants and the window loops unrolled (the per-geometry numba modules).

- max_pool2d, max_pool2d_grad, max_pool2d_gather, avg_pool2d, avg_pool2d_grad: pool_templates.py
  with the window geometry as constants and the window loops unrolled here (the per-geometry
  numba modules): argtap's first-maximum/NaN rule, max_pool's `isnan |= v != v` and numba's
  `max(best, v)` (= v > best ? v : best), avg_pool's float64 sum divided by the int count, and
  avg_pool_grad's `q = dy / count` in float64 (numba: float32 / int64 -> float64) added to dx
  in float64 and rounded on store.

Only float32/float64 nodes whose inputs and output share the dtype, with no empty tensor, are
lowered (native_windows.float_type); anything else raises NativeUnsupported.
"""
from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

from llvmlite import ir as L

from ...core.ops import conv as C
from ...core.shape import size_of
from .native_emit import F64, I64, NativeUnsupported, const
from .native_registry import register
from .native_windows import float_type, in_range, lin, zero_fill

MAX_TAPS = 256              # larger pooling windows are not unrolled: the graph runs as O1


def _pool_geo(n, a):
    name = n.op.name
    xs = tuple(a["input_shape"]) if name == "avg_pool2d_grad" else n.inputs[0].shape
    k, s = a["kernel_size"], a["stride"]
    pads, (ho, wo) = C.pool_geometry(name, xs, k, s, a["pad_mode"], a["pad"])
    if k[0] * k[1] > MAX_TAPS:
        raise NativeUnsupported(f"{name} window {tuple(k)} (more than {MAX_TAPS} taps)")
    N, Cc, H, W = xs
    return SimpleNamespace(NC=N * Cc, H=H, W=W, ho=ho, wo=wo, kh=k[0], kw=k[1], sh=s[0],
                           sw=s[1], pt=pads[0], pl=pads[2],
                           include_pad=bool(a.get("count_include_pad", True)))


def _windows(e, q, body):
    """The loops over (n*C + c, oy, ox); body(nc, oy, ox, out index)."""
    with e.loop(q.NC) as nc, e.loop(q.ho) as oy, e.loop(q.wo) as ox:
        body(nc, oy, ox, lin(e.b, (nc, q.ho * q.wo), (oy, q.wo), (ox, 1)))


def _inside(b, v, lo, hi, size):
    """(0 <= v < size) for v = o*s + off over outputs o: None when it holds for every o (its
    least and greatest values lo, hi are inside), else the IR test."""
    return None if lo >= 0 and hi < size else in_range(b, v, size)


def _guarded(b, test):
    """`with b.if_then(test)`, or nothing when test is None (statically true)."""
    return nullcontext() if test is None else b.if_then(test)


def _taps(e, q, oy, ox, tap):
    """pool_templates' unrolled window: for i, j (constants) inside the image, tap(y, xx). A
    tap that lies inside for every window (no padding on its side) is not tested, so such a
    window is straight-line code (_argtap_branch_free relies on it)."""
    b = e.b
    for i in range(q.kh):
        y = b.add(b.mul(oy, const(q.sh)), const(i - q.pt))
        with _guarded(b, _inside(b, y, i - q.pt, (q.ho - 1) * q.sh + i - q.pt, q.H)):
            for j in range(q.kw):
                xx = b.add(b.mul(ox, const(q.sw)), const(j - q.pl))
                with _guarded(b, _inside(b, xx, j - q.pl, (q.wo - 1) * q.sw + j - q.pl, q.W)):
                    tap(y, xx)


def _always_inside(q) -> bool:
    """Every tap of every window lies inside the image (no padding is ever read)."""
    return (q.pt == 0 and q.pl == 0 and (q.ho - 1) * q.sh + q.kh <= q.H
            and (q.wo - 1) * q.sw + q.kw <= q.W)


def _argtap(e, q, x, nc, oy, ox, T):
    """pool_templates.argtap: y*W + x of the window's first maximum (NaN counts as the
    maximum), -1 if none; compared in x's dtype."""
    b = e.b
    base = b.mul(nc, const(q.H * q.W))
    if _always_inside(q):
        return _argtap_branch_free(e, q, x, base, oy, ox, T)
    best, at = e.alloca(T), e.alloca(I64)
    b.store(L.Constant(T, float("-inf")), best)
    b.store(const(-1), at)

    def tap(y, xx):
        yx = b.add(b.mul(y, const(q.W)), xx)
        v, m = e.load(x, b.add(base, yx)), b.load(best)
        take = b.or_(b.fcmp_ordered(">", v, m), b.and_(b.fcmp_unordered("uno", v, v),
                                                       b.fcmp_ordered("ord", m, m)))
        b.store(b.select(take, v, m), best)
        b.store(b.select(take, yx, b.load(at)), at)
    _taps(e, q, oy, ox, tap)
    return b.load(at)


def _argtap_branch_free(e, q, x, base, oy, ox, T):
    """argtap's answer for a window without padding, as max_pool computes its maximum (a
    `v > best` chain and a NaN flag: maxss and blends) and then the first tap equal to it (the
    first NaN if any; -1 if the maximum is -inf, which argtap's `v > best` never takes). The
    running `v > best or (v is NaN and best is not)` of argtap made LLVM branch on each tap,
    mispredicted on random data: the digits CNN's first max_pool2d_grad took ~32 cycles a
    window, ~13 now."""
    b = e.b
    offsets = []                             # y*W + x of each tap, in argtap's order
    _taps(e, q, oy, ox, lambda y, xx: offsets.append(b.add(b.mul(y, const(q.W)), xx)))
    taps = [(yx, e.load(x, b.add(base, yx))) for yx in offsets]
    best, isnan = L.Constant(T, float("-inf")), const(0, L.IntType(1))
    for _, v in taps:
        isnan = b.or_(isnan, b.fcmp_unordered("!=", v, v))
        best = b.select(b.fcmp_ordered(">", v, best), v, best)
    at = const(-1)
    for yx, v in reversed(taps):             # the first match wins
        hit = b.select(isnan, b.fcmp_unordered("uno", v, v), b.fcmp_ordered("==", v, best))
        at = b.select(hit, yx, at)
    none = b.and_(b.not_(isnan), b.fcmp_ordered("==", best, L.Constant(T, float("-inf"))))
    return b.select(none, const(-1), at)


def _max_pool(e, n, a):
    T = float_type(n)
    q, b = _pool_geo(n, a), e.b
    x, out = n.inputs[0], n.outputs[0]
    best, isnan = e.alloca(T), e.alloca(L.IntType(1))

    def body(nc, oy, ox, k):
        b.store(L.Constant(T, float("-inf")), best)
        b.store(const(0, L.IntType(1)), isnan)
        base = b.mul(nc, const(q.H * q.W))

        def tap(y, xx):
            v = e.load(x, b.add(base, b.add(b.mul(y, const(q.W)), xx)))
            b.store(b.or_(b.load(isnan), b.fcmp_unordered("!=", v, v)), isnan)
            m = b.load(best)                               # numba's max(best, v)
            b.store(b.select(b.fcmp_ordered(">", v, m), v, m), best)
        _taps(e, q, oy, ox, tap)
        e.store(b.select(b.load(isnan), L.Constant(T, float("nan")), b.load(best)), out, k)
    _windows(e, q, body)


def _max_pool_grad(e, n, a, gather=False):
    T = float_type(n)
    q, b = _pool_geo(n, a), e.b
    x, src = n.inputs
    out = n.outputs[0]
    zero_fill(e, e.ptr(out), size_of(out.shape), T)

    def body(nc, oy, ox, k):
        at = _argtap(e, q, x, nc, oy, ox, T)
        with b.if_then(b.icmp_signed(">=", at, const(0))):
            flat = b.add(b.mul(nc, const(q.H * q.W)), at)
            if gather:              # out[n, c, oy, ox] = g[n, c, at // W, at % W]
                e.store(e.load(src, flat), out, k)
            else:                   # dx[n, c, at // W, at % W] += dy[n, c, oy, ox]
                p = b.gep(e.ptr(out), [flat])
                b.store(b.fadd(b.load(p), e.load(src, k)), p)
    _windows(e, q, body)


def _count(e, q, oy, ox):
    """pool_templates.window_count as float64: KH*KW, or the taps inside the image."""
    b = e.b
    if q.include_pad:
        return L.Constant(F64, float(q.kh * q.kw))

    def inside(o, s, p, k, size):
        c = const(0)
        for i in range(k):
            t = b.add(b.mul(o, const(s)), const(i - p))
            c = b.add(c, b.zext(in_range(b, t, size), I64))
        return c
    cnt = b.mul(inside(oy, q.sh, q.pt, q.kh, q.H), inside(ox, q.sw, q.pl, q.kw, q.W))
    return b.sitofp(cnt, F64)


def _widen(e, v, T):
    return v if T == F64 else e.b.fpext(v, F64)


def _narrow(e, v, T):
    return v if T == F64 else e.b.fptrunc(v, T)


def _avg_pool(e, n, a):
    T = float_type(n)
    q, b = _pool_geo(n, a), e.b
    x, out = n.inputs[0], n.outputs[0]
    s = e.alloca(F64)

    def body(nc, oy, ox, k):
        b.store(L.Constant(F64, 0.0), s)                   # s = 0.0 (float64)
        base = b.mul(nc, const(q.H * q.W))

        def tap(y, xx):
            v = e.load(x, b.add(base, b.add(b.mul(y, const(q.W)), xx)))
            b.store(b.fadd(b.load(s), _widen(e, v, T)), s)
        _taps(e, q, oy, ox, tap)
        e.store(_narrow(e, b.fdiv(b.load(s), _count(e, q, oy, ox)), T), out, k)
    _windows(e, q, body)


def _avg_pool_grad(e, n, a):
    T = float_type(n)
    q, b = _pool_geo(n, a), e.b
    dy, dx = n.inputs[0], n.outputs[0]
    zero_fill(e, e.ptr(dx), size_of(dx.shape), T)

    def body(nc, oy, ox, k):
        qv = b.fdiv(_widen(e, e.load(dy, k), T), _count(e, q, oy, ox))   # float64
        base = b.mul(nc, const(q.H * q.W))

        def tap(y, xx):
            p = b.gep(e.ptr(dx), [b.add(base, b.add(b.mul(y, const(q.W)), xx))])
            b.store(_narrow(e, b.fadd(_widen(e, b.load(p), T), qv), T), p)
        _taps(e, q, oy, ox, tap)
    _windows(e, q, body)


# kernels_nn.window_factory runs a half node's float32 kernel (compute_dtype) and rounds once
register("max_pool2d", _max_pool, half_as_float32=True)
register("max_pool2d_grad", _max_pool_grad, half_as_float32=True)
register("max_pool2d_gather", lambda e, n, a: _max_pool_grad(e, n, a, gather=True),
         half_as_float32=True)
register("avg_pool2d", _avg_pool, half_as_float32=True)
register("avg_pool2d_grad", _avg_pool_grad, half_as_float32=True)
