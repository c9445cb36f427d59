"""The pooling family, written once: max_pool2d, its gradient max_pool2d_grad (dy routed to each
window's first maximum), max_pool2d_gather (g read at those maxima), avg_pool2d and its
gradient avg_pool2d_grad, over NCHW tensors. windows.pool_kernel renders them as the eager numba
kernels, native_pool.py as the native sink's LLVM lowerings.

The window geometry is a definition parameter, so both renderings see the window with constant
trip counts and bounds: kernel size kh x kw, stride sh/sw, padding pt/pb/pl/pr (and guard_y /
guard_x: some padding along that axis). A max pool window of up to UNROLL_TAPS taps is unrolled
at trace time, each tap tested only on the sides where it may fall in the padding; a larger one
and the average pools' windows are constant-count loops (LLVM unrolls them). With the geometry
as run-time arguments instead, the digits CNN's pools ran 2-4x slower (batch 32, 2x2 stride 2:
max_pool2d_grad 190-340 us -> 80-150 us, max_pool2d 55-68 -> 29-43 us). Shapes and dtypes stay
run-time values; the output's extents the inputs do not give (ho, wo; avg_pool2d_grad's H, W)
are int64 scalar arguments.

The rules, in the input's own dtype (a float64 running maximum was 3-4x slower):
- max_pool2d: numba's max(best, v) over the window from -inf, NaN if any tap is NaN (a window
  of -inf gives -inf);
- the first maximum (max_pool2d_grad, max_pool2d_gather): the first tap v with v > best, or v
  NaN while best is not (so the first NaN wins); none where every tap is -inf (dy is dropped,
  the gathered value is 0);
- avg_pool2d: a float64 sum divided by the int64 count (kh*kw with count_include_pad, else the
  taps inside the image); avg_pool2d_grad: q = dy / count in float64 (numba: float32 / int64 ->
  float64) added to dx in float64 and rounded on store. Gradients add in window order.
"""
from __future__ import annotations

from contextlib import ExitStack, contextmanager, nullcontext

from ....core import scalar_expr as E
from ....core.ops import conv as C
from .builder import definition, like, maximum, within


def _avg_taps(b, geo: dict, H, W, oy, ox, tap):
    """The average pools' window in order (row i, then column j): tap(y, xx) for each tap
    inside the image, row and column tested together inside the column loop, always: the
    structure whose float64 sums numba compiles with their operand order, which decides the
    sign of a NaN from inf - inf (LLVM leaves it unspecified)."""
    with b.loop(geo["kh"], "i") as i:
        y = b.var("y", oy * geo["sh"] + i - geo["pt"])
        with b.loop(geo["kw"], "j") as j:
            xx = b.var("xx", ox * geo["sw"] + j - geo["pl"])
            with b.when(E.logical_and(within(y, H), within(xx, W))):
                tap(y, xx)


UNROLL_TAPS = 64            # max pool windows up to this many taps are unrolled at trace time


def _edge_test(v, size, k: int, lo_pad: int, hi_pad: int, t: int):
    """The test that tap t (of k, along one axis) lies inside [0, size), or None where it holds
    for every output: v = o*s + t - lo_pad is negative for some o only if t < lo_pad, and
    reaches size only if t >= k - hi_pad (the last output o = (size + pads - k) // s gives
    v <= size + hi_pad - k + t)."""
    low, high = t < lo_pad, t >= k - hi_pad
    if low and high:
        return within(v, size)
    return v >= 0 if low else v < size if high else None


def _max_taps(b, geo: dict, H, W, oy, ox, tap, backwards: bool = False):
    """The max pools' window, tap(y, xx) for each tap inside the image, in order (row i, then
    column j) or backwards. A window of at most UNROLL_TAPS taps is unrolled here, each tap
    tested only on the sides where it may fall in the padding (an inner tap not at all): no
    test is left in a window away from the image's edges. A larger one is two loops, a row
    tested before its column loop, along an axis with padding only."""
    kh, kw = geo["kh"], geo["kw"]
    if kh * kw <= UNROLL_TAPS:
        for i in reversed(range(kh)) if backwards else range(kh):
            y = b.var("y", oy * geo["sh"] + (i - geo["pt"]))
            test = _edge_test(y, H, kh, geo["pt"], geo["pb"], i)
            with b.when(test) if test is not None else nullcontext():
                for j in reversed(range(kw)) if backwards else range(kw):
                    xx = b.var("xx", ox * geo["sw"] + (j - geo["pl"]))
                    test = _edge_test(xx, W, kw, geo["pl"], geo["pr"], j)
                    with b.when(test) if test is not None else nullcontext():
                        tap(y, xx)
        return
    with b.loop(kh, "i") as i:
        row = kh - 1 - i if backwards else i
        y = b.var("y", oy * geo["sh"] + row - geo["pt"])
        with b.when(within(y, H)) if geo["guard_y"] else nullcontext():
            with b.loop(kw, "j") as j:
                col = kw - 1 - j if backwards else j
                xx = b.var("xx", ox * geo["sw"] + col - geo["pl"])
                with b.when(within(xx, W)) if geo["guard_x"] else nullcontext():
                    tap(y, xx)


@contextmanager
def _nest(b, dims):
    """Nested loops over `dims` (extents), named n, c, oy, ox; yields their indices."""
    with ExitStack() as stack:
        yield tuple(stack.enter_context(b.loop(d, name))
                    for d, name in zip(dims, ("n", "c", "oy", "ox")))


def _zero(b, buf):
    with _nest(b, buf.shape) as idx:
        b.store(buf, idx, 0.0)


def _window_max(b, x, geo, n, c, oy, ox):
    """(best, isnan): the window's maximum by numba's max chain (a NaN tap leaves it) and
    whether a tap is NaN."""
    _, _, H, W = x.dims
    best = b.var("best", like(x, float("-inf")))
    isnan = b.var("isnan", False)

    def take_max(y, xx):
        v = b.var("v", x[n, c, y, xx])
        b.set(isnan, E.logical_or(isnan, E.isnan(v)))
        b.set(best, maximum(best, v))
    _max_taps(b, geo, H, W, oy, ox, take_max)
    return best, isnan


def _first_max(b, x, geo, n, c, oy, ox):
    """(y, x) of the window's first maximum (NaN counts as the maximum), (-1, -1) for a window
    with no tap inside the input: computed branch-free as max_pool computes its maximum
    (numba's max chain and a NaN flag), then the first tap equal to it, scanning the taps
    backwards with selects (the first NaN if any). A window of -inf routes to its first tap
    (none if that tap is padding), as MindSpore's MaxPoolGrad and the numpy reference do. The
    running test branches on each tap, mispredicted on random data: branch-free, the eager 2x2
    max_pool2d_grad of a (32, 16, 28, 28) float32 input takes 0.52 ms instead of 1.1 ms."""
    _, _, H, W = x.dims
    best, isnan = _window_max(b, x, geo, n, c, oy, ox)
    ay, ax = b.var("ay", -1), b.var("ax", -1)

    def match(y, xx):
        v = b.var("v", x[n, c, y, xx])
        hit = b.var("hit", E.where(isnan, E.isnan(v), v.eq(best)))
        b.set(ay, E.where(hit, y, ay))
        b.set(ax, E.where(hit, xx, ax))
    _max_taps(b, geo, H, W, oy, ox, match, backwards=True)
    # a window of -inf (no tap above it, no NaN) routes to its first tap, dropped when that tap
    # is padding: MindSpore's MaxPoolGrad starts its argmax there and never moves it
    y0 = b.var("y0", oy * geo["sh"] - geo["pt"])
    x0 = b.var("x0", ox * geo["sw"] - geo["pl"])
    none = E.logical_and(E.logical_not(isnan), best.eq(float("-inf")))
    first = E.logical_and(within(y0, H), within(x0, W))
    b.set(ay, E.where(none, E.where(first, y0, -1), ay))
    b.set(ax, E.where(none, x0, ax))
    return ay, ax


@definition
def max_pool(b, **geo):
    """x: (N, C, H, W) -> (N, C, ho, wo): each window's maximum, NaN if it holds a NaN."""
    x = b.input("x", 4)
    ho, wo = b.scalar("ho", "int64"), b.scalar("wo", "int64")
    N, Cc, H, W = x.dims
    out = b.output("out", (N, Cc, ho, wo), like=x)
    with _nest(b, out.shape) as (n, c, oy, ox):
        best, isnan = _window_max(b, x, geo, n, c, oy, ox)
        b.store(out, (n, c, oy, ox), E.where(isnan, like(x, float("nan")), best))


@definition
def max_pool_grad(b, **geo):
    """x: (N, C, H, W), dy: (N, C, ho, wo) -> dx of x's shape: each dy added at its window's
    first maximum."""
    x, dy = b.input("x", 4), b.input("dy", 4)
    out = b.output("dx", x.dims, like=dy)
    _zero(b, out)
    with _nest(b, dy.dims) as (n, c, oy, ox):
        ay, ax = _first_max(b, x, geo, n, c, oy, ox)
        with b.when(ay >= 0):
            b.store(out, (n, c, ay, ax), out[n, c, ay, ax] + dy[n, c, oy, ox])


@definition
def max_pool_gather(b, **geo):
    """x, g: (N, C, H, W) -> (N, C, ho, wo): g at each window's first maximum (0 if none)."""
    x, g = b.input("x", 4), b.input("g", 4)
    ho, wo = b.scalar("ho", "int64"), b.scalar("wo", "int64")
    N, Cc, _, _ = x.dims
    out = b.output("out", (N, Cc, ho, wo), like=g)
    with _nest(b, out.shape) as (n, c, oy, ox):
        ay, ax = _first_max(b, x, geo, n, c, oy, ox)
        b.store(out, (n, c, oy, ox), 0.0)
        with b.when(ay >= 0):
            b.store(out, (n, c, oy, ox), g[n, c, ay, ax])


def _count(b, geo: dict, H, W, oy, ox):
    """The window's divisor: kh*kw (count_include_pad), else its taps inside (counted in
    numba's window_count loop even without padding, which keeps the sum's machine code)."""
    if geo["include_pad"]:
        return E.lift(geo["kh"] * geo["kw"])
    k = b.var("k", 0)
    with b.loop(geo["kh"], "ci") as i:
        y = b.var("cy", oy * geo["sh"] + i - geo["pt"])
        with b.loop(geo["kw"], "cj") as j:
            xx = b.var("cx", ox * geo["sw"] + j - geo["pl"])
            with b.when(E.logical_and(within(y, H), within(xx, W))):
                b.set(k, k + 1)
    return k


@definition
def avg_pool(b, include_pad: bool, **geo):
    """x: (N, C, H, W) -> (N, C, ho, wo): each window's float64 sum / its count."""
    geo["include_pad"] = include_pad
    x = b.input("x", 4)
    ho, wo = b.scalar("ho", "int64"), b.scalar("wo", "int64")
    N, Cc, H, W = x.dims
    out = b.output("out", (N, Cc, ho, wo), like=x)
    with _nest(b, out.shape) as (n, c, oy, ox):
        s = b.var("s", 0.0)
        _avg_taps(b, geo, H, W, oy, ox, lambda y, xx: b.set(s, s + x[n, c, y, xx]))
        b.store(out, (n, c, oy, ox), s / _count(b, geo, H, W, oy, ox))


@definition
def avg_pool_grad(b, include_pad: bool, **geo):
    """dy: (N, C, ho, wo) -> dx: (N, C, H, W): dy / count added to each tap of its window."""
    geo["include_pad"] = include_pad
    dy = b.input("dy", 4)
    H, W = b.scalar("H", "int64"), b.scalar("W", "int64")
    N, Cc, _, _ = dy.dims
    out = b.output("dx", (N, Cc, H, W), like=dy)
    _zero(b, out)
    with _nest(b, dy.dims) as (n, c, oy, ox):
        q = b.var("q", dy[n, c, oy, ox] / _count(b, geo, H, W, oy, ox))
        _avg_taps(b, geo, H, W, oy, ox,
                  lambda y, xx: b.store(out, (n, c, y, xx), out[n, c, y, xx] + q))


DEFINITIONS = {"max_pool2d": max_pool, "max_pool2d_grad": max_pool_grad,
               "max_pool2d_gather": max_pool_gather, "avg_pool2d": avg_pool,
               "avg_pool2d_grad": avg_pool_grad}


def plan(name: str, x_shape: tuple, attrs: dict):
    """(definition, its parameters, the scalar arguments by name) of a pooling node whose first
    input has shape `x_shape` (avg_pool2d_grad: the input_shape attribute is used)."""
    k, s = attrs["kernel_size"], attrs["stride"]
    if name == "avg_pool2d_grad":
        x_shape = tuple(attrs["input_shape"])
    pads, (ho, wo) = C.pool_geometry(name, x_shape, k, s, attrs["pad_mode"], attrs["pad"])
    params = dict(kh=k[0], kw=k[1], sh=s[0], sw=s[1], pt=pads[0], pb=pads[1], pl=pads[2],
                  pr=pads[3], guard_y=bool(pads[0] or pads[1]), guard_x=bool(pads[2] or pads[3]))
    if name.startswith("avg"):
        params["include_pad"] = bool(attrs["count_include_pad"])
    scalars = {"max_pool2d_grad": {}, "avg_pool2d_grad": {"H": x_shape[2], "W": x_shape[3]}
               }.get(name, {"ho": ho, "wo": wo})
    return DEFINITIONS[name], params, scalars
