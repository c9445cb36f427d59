"""Convolution and pooling lowerings of the native sink: windows.py's kernels in LLVM IR.

Ported operation by operation from the eager kernels, so O2 natively gives PyNative's and the
numba sink's numbers bit for bit:

- conv2d, conv2d_backprop_input, conv2d_backprop_filter: windows.conv2d / conv2d_bpi / conv2d_bpf.
  Per group, the same matrices are materialised in the node's arena scratch (im2col's columns,
  `_weight_rows`, dy as (og, N*Ho*Wo) or (N*Ho*Wo, og)) and multiplied as numba's np.dot does:
  BLAS gemm, or gemv / dot when a side is a vector (numba's dispatch, so the same BLAS kernel
  sums the same products: with gemm alone most vector-shaped products differ in the last bit),
  of scipy's OpenBLAS, which numba's np.dot calls;
  col2im accumulates in windows.py's loop order; a node whose GEMMs are small calls them with
  scipy's OpenBLAS on the calling thread, as its eager kernel does (blas_threads.py: OpenBLAS
  rounds differently on one and on two threads). The copies are flat loops (c, i, j and small
  index pairs derived by div/rem): LLVM's O3 fully unrolls small constant trip counts, which
  made a conv node's IR ~25x larger and its compile ~5x slower for no speed. Small output
  planes (UNROLL_PLANE) are the exception: there the copies of one (channel, image) are
  straight-line code that skips padding at compile time, because the loops ran only a few
  elements per row (digits CNN backward, with the pools' branch-free argmax below: 0.79-0.82x
  the time, and its cold compile 2.2-2.4 -> 0.8 s). Up to 256 copies: with 1024 (the 8x8
  first conv too) the LeNet graph step's cold compile grew from ~3.7 to ~6.4 s for ~8 us of
  run time.
- max_pool2d, max_pool2d_grad, max_pool2d_gather, avg_pool2d, avg_pool2d_grad: pool_templates.py
  with the window geometry as constants and the window loops unrolled here (the per-geometry
  numba modules): argtap's first-maximum/NaN rule, max_pool's `isnan |= v != v` and numba's
  `max(best, v)` (= v > best ? v : best), avg_pool's float64 sum divided by the int count, and
  avg_pool_grad's `q = dy / count` in float64 (numba: float32 / int64 -> float64) added to dx
  in float64 and rounded on store.

Only float32/float64 nodes whose inputs and output share the dtype, with no empty tensor, are
lowered; anything else raises NativeUnsupported (the numba sink takes the graph).
"""
from __future__ import annotations

from contextlib import contextmanager, nullcontext
from types import SimpleNamespace

from llvmlite import ir as L

from ...core.graph.memplan import aligned
from ...core.ops import conv as C
from ...core.primitive import attrs_dict
from ...core.shape import size_of
from .native_emit import F32, F64, FLOAT, I32, I64, NativeUnsupported, const

MAX_TAPS = 256              # larger pooling windows are not unrolled: left to the numba sink
UNROLL_PLANE = 256          # conv copies unrolled per (channel, image) up to this many


# ---------------------------------------------------------------- shared ------------------------
def _dtype(n):
    """The LLVM type of the node's float dtype (inputs and output must share it)."""
    d = n.outputs[0].dtype
    if d not in FLOAT or any(v.dtype is not d for v in n.inputs):
        raise NativeUnsupported(f"{n.op.name} of {[v.dtype for v in n.inputs]} -> {d}")
    if any(size_of(v.shape) == 0 for v in n.inputs + n.outputs):
        raise NativeUnsupported(f"{n.op.name} of an empty tensor")
    return FLOAT[d]


def _i(x):
    return x if isinstance(x, L.Value) else const(x)


def _lin(b, *terms):
    """sum of x * k over (x, k) terms (x an IR int or a Python int, k a Python int)."""
    acc = None
    for x, k in terms:
        if isinstance(x, int):
            t = const(x * k)
        else:
            t = x if k == 1 else b.mul(x, const(k))
        acc = t if acc is None else b.add(acc, t)
    return acc if acc is not None else const(0)


def _in(b, v, hi):
    """0 <= v < hi (v an IR int, hi a Python int)."""
    return b.and_(b.icmp_signed(">=", v, const(0)), b.icmp_signed("<", v, const(hi)))


def _zero(e, ptr, n, T, start=0):
    with e.loop(_i(n), start=_i(start)) as k:
        e.b.store(L.Constant(T, 0.0), e.b.gep(ptr, [k]))


def _carve(e, n, T, sizes):
    """Typed pointers to consecutive 64-byte aligned regions of node n's scratch."""
    base, off, out = e.scratch(n, L.IntType(8)), 0, []
    with e.at_entry() as b:
        for s in sizes:
            out.append(b.bitcast(b.gep(base, [const(off)]), T.as_pointer()))
            off += aligned(s * (4 if T == F32 else 8))
    return out


def _region_bytes(itemsize, sizes):
    return sum(aligned(s * itemsize) for s in sizes)


# ---------------------------------------------------------------- BLAS, as numba's np.dot -------
@contextmanager
def _blas_on_calling_thread(e, n):
    """Bracket a conv node's BLAS calls as blas_threads does for its eager kernel: when the node's
    GEMMs are small, scipy's OpenBLAS runs on the calling thread (set 1 before, 0 = its global
    count after), so O2 multiplies with the thread count, hence the rounding, of PyNative."""
    from . import blas_threads, native_jit
    if not blas_threads.serial(blas_threads.node_macs(n)):
        yield
        return
    fn = e.m.globals.get(native_jit.SET_THREADS_LOCAL) or L.Function(
        e.m, L.FunctionType(I32, [I32]), native_jit.SET_THREADS_LOCAL)
    e.b.call(fn, [const(1, I32)])
    yield
    e.b.call(fn, [const(0, I32)])


def _dot(e, T, M, N, K, A, B, Cp):
    """Cp (M x N) = A (M x K) @ B (K x N), all C-contiguous, through the BLAS routine numba's
    np.dot picks -- dot when M = N = 1, gemv when M or N is 1, else gemm -- of the library it
    calls (scipy's OpenBLAS, native_jit._blas_symbols)."""
    b = e.b
    if M > 1 and N > 1:
        return e.gemm(T, False, False, M, N, K, A, K, B, N, Cp, N, lib="scipy")
    fn, IT = e.blas(T, "gemv" if M > 1 or N > 1 else "dot", lib="scipy")
    one, zero, i1 = L.Constant(T, 1.0), L.Constant(T, 0.0), const(1, IT)
    if M == 1 and N == 1:
        b.store(b.call(fn, [const(K, IT), A, i1, B, i1]), Cp)
    elif N == 1:            # matrix @ vector: row-major A, no transpose
        b.call(fn, [const(101, I32), const(111, I32), const(M, IT), const(K, IT), one, A,
                    const(K, IT), B, i1, zero, Cp, i1])
    else:                   # vector @ matrix: row-major B, transposed
        b.call(fn, [const(101, I32), const(112, I32), const(K, IT), const(N, IT), one, B,
                    const(N, IT), A, i1, zero, Cp, i1])


# ---------------------------------------------------------------- convolution -------------------
def _conv_geo(n, a):
    """windows.conv_kernel's geometry of a conv-family node, with the derived sizes."""
    name = n.op.name
    if name == "conv2d":
        xs, ws = n.inputs[0].shape, n.inputs[1].shape
    elif name == "conv2d_backprop_input":
        xs, ws = tuple(a["input_shape"]), n.inputs[1].shape
    else:
        xs, ws = n.inputs[0].shape, tuple(a["filter_shape"])
    s, d, grp = a["stride"], a["dilation"], a["group"]
    pads, (ho, wo) = C.conv_geometry(name, xs, ws, s, a["pad_mode"], a["pad"], d, grp)
    N, Cin, H, W = xs
    O, cg, kh, kw = ws
    return SimpleNamespace(N=N, Cin=Cin, H=H, W=W, O=O, cg=cg, kh=kh, kw=kw, ho=ho, wo=wo,
                           sh=s[0], sw=s[1], pt=pads[0], pl=pads[2], dh=d[0], dw=d[1], grp=grp,
                           og=O // grp, K=cg * kh * kw, HW=ho * wo, P=N * ho * wo)


def _span(b, o, s, off, size):
    """[lo, hi) as IR ints: the outputs k < o whose tap at k*s + off (off an IR int) lies in
    [0, size): windows.py's _ox_range (and its row check, as a range)."""
    lo = b.select(b.icmp_signed("<", off, const(0)),
                  b.sdiv(b.sub(const(s - 1), off), const(s)), const(0))
    last = b.sub(const(size - 1), off)
    hi = b.add(b.sdiv(last, const(s)), const(1))
    hi = b.select(b.icmp_signed("<", hi, const(o)), hi, const(o))
    hi = b.select(b.icmp_signed("<", last, const(0)), const(0), hi)
    return lo, b.select(b.icmp_signed("<", hi, lo), lo, hi)


def _taps_rows(e, q, g, body):
    """windows.im2col's / _col2im's loops for group g (an IR int), one loop over the column rows
    k = (c*kh + i)*kw + j (c, i, j derived: constant trip counts of kh and kw would be unrolled
    by LLVM, the loop nests below with them): for every image n and output row oy whose tap row
    y is inside the image, body(index of cols[k, (n*Ho + oy)*Wo], index of x[n, channel, y,
    j*dw - pl], lo, hi) for the columns lo <= ox < hi whose tap column is inside."""
    b = e.b
    with e.loop(q.K) as k:
        c, i = b.udiv(k, const(q.kh * q.kw)), b.urem(b.udiv(k, const(q.kw)), const(q.kh))
        chan = b.add(b.mul(g, const(q.cg)), c)
        yoff = b.sub(b.mul(i, const(q.dh)), const(q.pt))
        off = b.sub(b.mul(b.urem(k, const(q.kw)), const(q.dw)), const(q.pl))
        oy0, oy1 = _span(b, q.ho, q.sh, yoff, q.H)
        lo, hi = _span(b, q.wo, q.sw, off, q.W)
        with e.loop(q.N) as nn:
            base = _lin(b, (k, q.P), (nn, q.HW))
            img = _lin(b, (nn, q.Cin * q.H * q.W), (chan, q.H * q.W))
            with e.loop(oy1, start=oy0) as oy:
                y = b.add(b.mul(oy, const(q.sh)), yoff)
                src = b.add(img, b.add(b.mul(y, const(q.W)), off))
                body(b.add(base, b.mul(oy, const(q.wo))), src, lo, hi)


def _plane_copies(e, q, g, body):
    """The same copies as _taps_rows for a small output plane (q.kh*q.kw*q.ho*q.wo at most
    UNROLL_PLANE), unrolled per (channel c, image n): for every tap (i, j) and output (oy, ox)
    whose input pixel is inside the image, body(index of cols[k, n*Ho*Wo + oy*Wo + ox], index
    of x[n, g*cg + c, y, xx]), in windows.py's (i, j, oy, ox) order. Which taps read padding is
    known here, so the copies are straight-line code at constant offsets (LLVM packs the
    contiguous ones): _taps_rows' loops ran a few elements per row (digits CNN's second conv,
    4x4 images: im2col ~145 -> ~42 kcycles, col2im ~86 -> ~25)."""
    b = e.b
    with e.loop(q.cg) as c:
        chan = b.add(b.mul(g, const(q.cg)), c)
        with e.loop(q.N) as nn:
            img = _lin(b, (nn, q.Cin * q.H * q.W), (chan, q.H * q.W))
            for i in range(q.kh):
                for j in range(q.kw):
                    row = _lin(b, (c, q.kh * q.kw * q.P), (i * q.kw + j, q.P), (nn, q.HW))
                    for oy in range(q.ho):
                        y = oy * q.sh + i * q.dh - q.pt
                        if not 0 <= y < q.H:
                            continue
                        for ox in range(q.wo):
                            xx = ox * q.sw + j * q.dw - q.pl
                            if 0 <= xx < q.W:
                                body(b.add(row, const(oy * q.wo + ox)),
                                     b.add(img, const(y * q.W + xx)))


def _copies(e, q, g, element):
    """element(index in cols, index in x) for every copy of group g, in windows.py's order:
    _plane_copies for a small output plane, else _taps_rows with a loop over each row."""
    if q.kh * q.kw * q.ho * q.wo <= UNROLL_PLANE:
        return _plane_copies(e, q, g, element)
    b = e.b

    def row(dst, src, lo, hi):
        with e.loop(hi, start=lo) as ox:
            element(b.add(dst, ox), b.add(src, b.mul(ox, const(q.sw))))
    _taps_rows(e, q, g, row)


def _im2col(e, x, cols, g, q):
    """im2col's copies; the padding entries of cols stay as zeroed once per node."""
    b = e.b
    _copies(e, q, g, lambda dst, src: b.store(e.load(x, src), b.gep(cols, [dst])))


def _col2im(e, r, dx, g, q):
    b = e.b

    def element(dst, src):
        at = b.gep(e.ptr(dx), [src])
        b.store(b.fadd(b.load(at), b.load(b.gep(r, [dst]))), at)
    _copies(e, q, g, element)


def _dy_rows(e, q, g, fn):
    """For t = o*N + n (one loop) and p < Ho*Wo: fn(t*HW + p, index of dy[n, g*og + o, p]),
    i.e. (og, N*Ho*Wo) rows against a (N, O, Ho*Wo) tensor."""
    b = e.b
    with e.loop(q.og * q.N) as t:
        o, nn = b.udiv(t, const(q.N)), b.urem(t, const(q.N))
        src = _lin(b, (nn, q.O * q.HW), (g, q.og * q.HW), (o, q.HW))
        with e.loop(q.HW) as p:
            fn(b.add(b.mul(t, const(q.HW)), p), b.add(src, p))


def _conv2d(e, n, a):
    T = _dtype(n)
    q, b = _conv_geo(n, a), e.b
    x, w = n.inputs
    out = n.outputs[0]
    cols, wr, r = _carve(e, n, T, (q.K * q.P, q.og * q.K, q.og * q.P))
    _zero(e, cols, q.K * q.P, T)            # im2col's np.zeros (every group fills the same)
    with _blas_on_calling_thread(e, n), e.loop(q.grp) as g:
        base = b.mul(g, const(q.og * q.K))
        with e.loop(q.og * q.K) as t:                              # _weight_rows
            b.store(e.load(w, b.add(base, t)), b.gep(wr, [t]))
        _im2col(e, x, cols, g, q)
        _dot(e, T, q.og, q.P, q.K, wr, cols, r)
        _dy_rows(e, q, g, lambda at, o_at: e.store(b.load(b.gep(r, [at])), out, o_at))


def _conv2d_bpi(e, n, a):
    T = _dtype(n)
    q, b = _conv_geo(n, a), e.b
    dy, w = n.inputs
    dx = n.outputs[0]
    rows, wt, r = _carve(e, n, T, (q.og * q.P, q.K * q.og, q.K * q.P))
    _zero(e, e.ptr(dx), size_of(dx.shape), T)
    with _blas_on_calling_thread(e, n), e.loop(q.grp) as g:
        _dy_rows(e, q, g, lambda at, d_at: b.store(e.load(dy, d_at), b.gep(rows, [at])))
        with e.loop(q.K * q.og) as t:                 # _weight_rows, transposed
            k, o = b.udiv(t, const(q.og)), b.urem(t, const(q.og))
            b.store(e.load(w, _lin(b, (g, q.og * q.K), (o, q.K), (k, 1))), b.gep(wt, [t]))
        _dot(e, T, q.K, q.P, q.og, wt, rows, r)
        _col2im(e, r, dx, g, q)


def _conv2d_bpf(e, n, a):
    T = _dtype(n)
    q, b = _conv_geo(n, a), e.b
    x, dy = n.inputs
    out = n.outputs[0]
    dyt, cols, r = _carve(e, n, T, (q.P * q.og, q.K * q.P, q.K * q.og))
    _zero(e, cols, q.K * q.P, T)            # im2col's np.zeros (every group fills the same)
    with _blas_on_calling_thread(e, n), e.loop(q.grp) as g:
        with e.loop(q.N) as nn:                       # dyt[n*HW + p, o] = dy[n, g*og+o, p]
            with e.loop(q.HW) as p:                   # (nested: no div/rem per element;
                src = _lin(b, (nn, q.O * q.HW), (g, q.og * q.HW), (p, 1))   # dyt written in
                dst = _lin(b, (nn, q.HW * q.og), (p, q.og))                  # order)
                with e.loop(q.og) as o:
                    b.store(e.load(dy, b.add(src, b.mul(o, const(q.HW)))),
                            b.gep(dyt, [b.add(dst, o)]))
        _im2col(e, x, cols, g, q)
        _dot(e, T, q.K, q.og, q.P, cols, dyt, r)
        with e.loop(q.K * q.og) as t:                 # out[g*og + o, k] = r[k, o]
            k, o = b.udiv(t, const(q.og)), b.urem(t, const(q.og))
            e.store(b.load(b.gep(r, [t])), out, _lin(b, (g, q.og * q.K), (o, q.K), (k, 1)))


def _conv_scratch(n):
    q = _conv_geo(n, attrs_dict(n.attrs))
    sizes = {"conv2d": (q.K * q.P, q.og * q.K, q.og * q.P),
             "conv2d_backprop_input": (q.og * q.P, q.K * q.og, q.K * q.P),
             "conv2d_backprop_filter": (q.P * q.og, q.K * q.P, q.K * q.og)}[n.op.name]
    return _region_bytes(n.outputs[0].dtype.itemsize, sizes)


# ---------------------------------------------------------------- pooling -----------------------
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
        body(nc, oy, ox, _lin(e.b, (nc, q.ho * q.wo), (oy, q.wo), (ox, 1)))


def _inside(b, v, lo, hi, size):
    """(0 <= v < size) for v = o*s + off over outputs o: None when it holds for every o (its
    least and greatest values lo, hi are inside), else the IR test."""
    return None if lo >= 0 and hi < size else _in(b, v, size)


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
    T = _dtype(n)
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
    T = _dtype(n)
    q, b = _pool_geo(n, a), e.b
    x, src = n.inputs
    out = n.outputs[0]
    _zero(e, e.ptr(out), size_of(out.shape), T)

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
            c = b.add(c, b.zext(_in(b, t, size), I64))
        return c
    cnt = b.mul(inside(oy, q.sh, q.pt, q.kh, q.H), inside(ox, q.sw, q.pl, q.kw, q.W))
    return b.sitofp(cnt, F64)


def _widen(e, v, T):
    return v if T == F64 else e.b.fpext(v, F64)


def _narrow(e, v, T):
    return v if T == F64 else e.b.fptrunc(v, T)


def _avg_pool(e, n, a):
    T = _dtype(n)
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
    T = _dtype(n)
    q, b = _pool_geo(n, a), e.b
    dy, dx = n.inputs[0], n.outputs[0]
    _zero(e, e.ptr(dx), size_of(dx.shape), T)

    def body(nc, oy, ox, k):
        qv = b.fdiv(_widen(e, e.load(dy, k), T), _count(e, q, oy, ox))   # float64
        base = b.mul(nc, const(q.H * q.W))

        def tap(y, xx):
            p = b.gep(e.ptr(dx), [b.add(base, b.add(b.mul(y, const(q.W)), xx))])
            b.store(_narrow(e, b.fadd(_widen(e, b.load(p), T), qv), T), p)
        _taps(e, q, oy, ox, tap)
    _windows(e, q, body)


LOWER = {
    "conv2d": _conv2d, "conv2d_backprop_input": _conv2d_bpi,
    "conv2d_backprop_filter": _conv2d_bpf,
    "max_pool2d": _max_pool, "max_pool2d_grad": _max_pool_grad,
    "max_pool2d_gather": lambda e, n, a: _max_pool_grad(e, n, a, gather=True),
    "avg_pool2d": _avg_pool, "avg_pool2d_grad": _avg_pool_grad,
}
SCRATCH = {"conv2d": _conv_scratch, "conv2d_backprop_input": _conv_scratch,
           "conv2d_backprop_filter": _conv_scratch}
