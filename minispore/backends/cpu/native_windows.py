"""Convolution lowerings of the native sink: windows.py's conv kernels in LLVM IR, and the helpers
the window ops share (index arithmetic, scratch regions; native_pool.py has the pools).

Ported operation by operation from the eager kernels (windows.py's numba functions), so O2
gives PyNative's numbers bit for bit:

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
  elements per row (digits CNN backward, with the pools' branch-free argmax of loops/pool.py:
  0.79-0.82x the time, and its cold compile 2.2-2.4 -> 0.8 s). Up to 256 copies: with 1024
  (the 8x8 first conv too) the LeNet graph step's cold compile grew from ~3.7 to ~6.4 s for
  ~8 us of run time.
Only float32/float64 nodes whose inputs and output share the dtype, with no empty tensor, are
lowered; anything else raises NativeUnsupported (the graph then runs kernel by kernel, as O1).
A half node computes as its float32 node (registered half_as_float32, as kernels_nn does).
"""
from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

from llvmlite import ir as L

from ...core.graph.memplan import aligned
from ...core.ops import conv as C
from ...core.primitive import attrs_dict
from ...core.shape import size_of
from .native_emit import F32, FLOAT, I32, NativeUnsupported, const
from .native_registry import register

UNROLL_PLANE = 256          # conv copies unrolled per (channel, image) up to this many


# ---------------------------------------------------------------- shared ------------------------
def float_type(n):
    """The LLVM type of the node's float dtype (inputs and output must share it)."""
    d = n.outputs[0].dtype
    if d not in FLOAT or any(v.dtype is not d for v in n.inputs):
        raise NativeUnsupported(f"{n.op.name} of {[v.dtype for v in n.inputs]} -> {d}")
    if any(size_of(v.shape) == 0 for v in n.inputs + n.outputs):
        raise NativeUnsupported(f"{n.op.name} of an empty tensor")
    return FLOAT[d]


def _i(x):
    return x if isinstance(x, L.Value) else const(x)


def lin(b, *terms):
    """sum of x * k over (x, k) terms (x an IR int or a Python int, k a Python int)."""
    acc = None
    for x, k in terms:
        if isinstance(x, int):
            t = const(x * k)
        else:
            t = x if k == 1 else b.mul(x, const(k))
        acc = t if acc is None else b.add(acc, t)
    return acc if acc is not None else const(0)


def in_range(b, v, hi):
    """0 <= v < hi (v an IR int, hi a Python int)."""
    return b.and_(b.icmp_signed(">=", v, const(0)), b.icmp_signed("<", v, const(hi)))


def zero_fill(e, ptr, n, T, start=0):
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
    from . import blas, blas_threads
    if not blas_threads.serial(blas_threads.node_macs(n)):
        yield
        return
    fn = e.m.globals.get(blas.SET_THREADS_LOCAL) or L.Function(
        e.m, L.FunctionType(I32, [I32]), blas.SET_THREADS_LOCAL)
    e.b.call(fn, [const(1, I32)])
    yield
    e.b.call(fn, [const(0, I32)])


def _dot(e, T, M, N, K, A, B, Cp):
    """Cp (M x N) = A (M x K) @ B (K x N), all C-contiguous, through the BLAS routine numba's
    np.dot picks -- dot when M = N = 1, gemv when M or N is 1, else gemm -- of the library it
    calls (scipy's OpenBLAS, blas.libraries)."""
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
            base = lin(b, (k, q.P), (nn, q.HW))
            img = lin(b, (nn, q.Cin * q.H * q.W), (chan, q.H * q.W))
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
    with e.loop(q.cg, vectorize=False) as c:
        chan = b.add(b.mul(g, const(q.cg)), c)
        with e.loop(q.N, vectorize=False) as nn:
            img = lin(b, (nn, q.Cin * q.H * q.W), (chan, q.H * q.W))
            for i in range(q.kh):
                for j in range(q.kw):
                    row = lin(b, (c, q.kh * q.kw * q.P), (i * q.kw + j, q.P), (nn, q.HW))
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
        src = lin(b, (nn, q.O * q.HW), (g, q.og * q.HW), (o, q.HW))
        with e.loop(q.HW) as p:
            fn(b.add(b.mul(t, const(q.HW)), p), b.add(src, p))


def _conv2d(e, n, a):
    T = float_type(n)
    q, b = _conv_geo(n, a), e.b
    x, w = n.inputs
    out = n.outputs[0]
    cols, wr, r = _carve(e, n, T, (q.K * q.P, q.og * q.K, q.og * q.P))
    zero_fill(e, cols, q.K * q.P, T)            # im2col's np.zeros (every group fills the same)
    with _blas_on_calling_thread(e, n), e.loop(q.grp) as g:
        base = b.mul(g, const(q.og * q.K))
        with e.loop(q.og * q.K) as t:                              # _weight_rows
            b.store(e.load(w, b.add(base, t)), b.gep(wr, [t]))
        _im2col(e, x, cols, g, q)
        _dot(e, T, q.og, q.P, q.K, wr, cols, r)
        _dy_rows(e, q, g, lambda at, o_at: e.store(b.load(b.gep(r, [at])), out, o_at))


def _conv2d_bpi(e, n, a):
    T = float_type(n)
    q, b = _conv_geo(n, a), e.b
    dy, w = n.inputs
    dx = n.outputs[0]
    rows, wt, r = _carve(e, n, T, (q.og * q.P, q.K * q.og, q.K * q.P))
    zero_fill(e, e.ptr(dx), size_of(dx.shape), T)
    with _blas_on_calling_thread(e, n), e.loop(q.grp) as g:
        _dy_rows(e, q, g, lambda at, d_at: b.store(e.load(dy, d_at), b.gep(rows, [at])))
        with e.loop(q.K * q.og) as t:                 # _weight_rows, transposed
            k, o = b.udiv(t, const(q.og)), b.urem(t, const(q.og))
            b.store(e.load(w, lin(b, (g, q.og * q.K), (o, q.K), (k, 1))), b.gep(wt, [t]))
        _dot(e, T, q.K, q.P, q.og, wt, rows, r)
        _col2im(e, r, dx, g, q)


def _conv2d_bpf(e, n, a):
    T = float_type(n)
    q, b = _conv_geo(n, a), e.b
    x, dy = n.inputs
    out = n.outputs[0]
    dyt, cols, r = _carve(e, n, T, (q.P * q.og, q.K * q.P, q.K * q.og))
    zero_fill(e, cols, q.K * q.P, T)            # im2col's np.zeros (every group fills the same)
    with _blas_on_calling_thread(e, n), e.loop(q.grp) as g:
        with e.loop(q.N) as nn:                       # dyt[n*HW + p, o] = dy[n, g*og+o, p]
            with e.loop(q.HW) as p:                   # (nested: no div/rem per element;
                src = lin(b, (nn, q.O * q.HW), (g, q.og * q.HW), (p, 1))   # dyt written in
                dst = lin(b, (nn, q.HW * q.og), (p, q.og))                  # order)
                with e.loop(q.og) as o:
                    b.store(e.load(dy, b.add(src, b.mul(o, const(q.HW)))),
                            b.gep(dyt, [b.add(dst, o)]))
        _im2col(e, x, cols, g, q)
        _dot(e, T, q.K, q.og, q.P, cols, dyt, r)
        with e.loop(q.K * q.og) as t:                 # out[g*og + o, k] = r[k, o]
            k, o = b.udiv(t, const(q.og)), b.urem(t, const(q.og))
            e.store(b.load(b.gep(r, [t])), out, lin(b, (g, q.og * q.K), (o, q.K), (k, 1)))


def _conv_scratch(n):
    q = _conv_geo(n, attrs_dict(n.attrs))
    sizes = {"conv2d": (q.K * q.P, q.og * q.K, q.og * q.P),
             "conv2d_backprop_input": (q.og * q.P, q.K * q.og, q.K * q.P),
             "conv2d_backprop_filter": (q.P * q.og, q.K * q.P, q.K * q.og)}[n.op.name]
    return _region_bytes(n.outputs[0].dtype.itemsize, sizes)


def _rolled(lower):
    """`lower` with its loops kept rolled (Emitter.loops_kept_rolled): a conv's time is its
    GEMMs; unrolling its copy loops halved nothing but the compile's speed."""
    def lowering(e, n, a):
        with e.loops_kept_rolled():
            return lower(e, n, a)
    return lowering


# kernels_nn.window_factory runs a half node's float32 kernel (compute_dtype) and rounds once
register("conv2d", _rolled(_conv2d), _conv_scratch, half_as_float32=True)
register("conv2d_backprop_input", _rolled(_conv2d_bpi), _conv_scratch, half_as_float32=True)
register("conv2d_backprop_filter", _rolled(_conv2d_bpf), _conv_scratch, half_as_float32=True)
