"""OpenCV 4's warpAffine (the build MindSpore's numbers come from) in numpy: source coordinates
quantised to 1/32 pixel with OpenCV's fixed-point steps, nearest / bilinear / bicubic taps from
its interpolation tables (integer weights with a final 15-bit rounding shift for uint8) and a
constant border. Newer OpenCV builds compute warps at a higher precision, which moves pixels of
MindSpore's output by a few levels, hence this reproduction."""
from __future__ import annotations

import functools

import numpy as np

_INTER_BITS, _TAB = 5, 32                   # 1/32-pixel steps
_AB_BITS = 10
_AB_SCALE = 1 << _AB_BITS
_COEF_BITS = 15
_COEF_SCALE = 1 << _COEF_BITS


def _invert(m):
    """OpenCV's in-place inversion of a 2x3 affine matrix (the same operation order)."""
    m = [float(v) for v in np.asarray(m, np.float64).ravel()]
    det = m[0] * m[4] - m[1] * m[3]
    det = 1.0 / det if det != 0 else 0.0
    a11, a22 = m[4] * det, m[0] * det
    m[0], m[4] = a11, a22
    m[1] *= -det
    m[3] *= -det
    b1 = -m[0] * m[2] - m[1] * m[5]
    b2 = -m[3] * m[2] - m[4] * m[5]
    m[2], m[5] = b1, b2
    return m


def _taps_1d(kind: str) -> np.ndarray:
    """Per 1/32 fraction, the float32 weights of the 2 (linear) or 4 (cubic) taps."""
    x = (np.arange(_TAB, dtype=np.float32) * np.float32(1.0 / _TAB)).astype(np.float32)
    if kind == "linear":
        return np.stack([np.float32(1) - x, x], 1)
    a = np.float32(-0.75)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    c3 = np.float32(1) - c0 - c1 - c2
    return np.stack([c0, c1, c2, c3], 1).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _tables(kind: str):
    """OpenCV's 2-D tables: float weights [32*32, k, k] and their fixed-point versions (used for
    uint8; 16-bit and float images are weighted in float32), the latter corrected so each set
    sums to 2**15 (the fix goes to the largest or smallest of the central 2x2 taps, as OpenCV
    does)."""
    t = _taps_1d(kind)
    k = t.shape[1]
    ftab = (t[:, None, :, None] * t[None, :, None, :]).astype(np.float32)  # [i(y), j(x), ky, kx]
    ftab = ftab.reshape(_TAB * _TAB, k, k)
    itab = np.rint(ftab.astype(np.float64) * _COEF_SCALE).astype(np.int64)
    half = k // 2                           # OpenCV searches taps half..half+1 (in range)
    centre = [(a, b) for a in range(half, half + 2) for b in range(half, half + 2)
              if a < k and b < k]
    for n in range(len(itab)):
        diff = int(itab[n].sum()) - _COEF_SCALE
        if diff:
            lo = hi = (half, half) if half < k else centre[0]
            for a, b in centre:
                if itab[n, a, b] < itab[n][lo]:
                    lo = (a, b)
                elif itab[n, a, b] > itab[n][hi]:
                    hi = (a, b)
            if diff < 0:
                itab[n][hi] -= diff
            else:
                itab[n][lo] -= diff
    return ftab, itab


def warp_affine(img: np.ndarray, matrix, size, kind: str, fill) -> np.ndarray:
    """Warp `img` (H, W[, C]) with the forward 2x3 `matrix` to `size` (w, h); kind is
    'nearest', 'linear' or 'cubic'; outside pixels take `fill` (one value per channel)."""
    m = _invert(matrix)
    ow, oh = size
    xs, ys = np.arange(ow, dtype=np.float64), np.arange(oh, dtype=np.float64)
    nearest = kind == "nearest"
    delta = _AB_SCALE // 2 if nearest else _AB_SCALE // _TAB // 2
    adelta = np.rint(m[0] * xs * _AB_SCALE).astype(np.int64)
    bdelta = np.rint(m[3] * xs * _AB_SCALE).astype(np.int64)
    x0 = np.rint((m[1] * ys + m[2]) * _AB_SCALE).astype(np.int64) + delta
    y0 = np.rint((m[4] * ys + m[5]) * _AB_SCALE).astype(np.int64) + delta
    gx, gy = x0[:, None] + adelta[None, :], y0[:, None] + bdelta[None, :]
    src = img if img.ndim == 3 else img[:, :, None]
    h, w, c = src.shape
    fill_px = np.asarray(fill, np.float64)[:c] if len(fill) >= c else np.full(c, fill[0])
    if img.dtype == np.uint8:
        fill_px = np.clip(np.rint(fill_px), 0, 255)
    fill_px = fill_px.astype(src.dtype)
    if nearest:
        sx, sy = gx >> _AB_BITS, gy >> _AB_BITS
        inside = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
        out = src[np.clip(sy, 0, h - 1), np.clip(sx, 0, w - 1)]
        out[~inside] = fill_px
        return out.reshape(oh, ow, *img.shape[2:])
    shift = _AB_BITS - _INTER_BITS
    gx, gy = gx >> shift, gy >> shift
    frac = (gy & (_TAB - 1)) * _TAB + (gx & (_TAB - 1))
    sx, sy = gx >> _INTER_BITS, gy >> _INTER_BITS
    ftab, itab = _tables(kind)
    k = ftab.shape[1]
    first = 0 if k == 2 else -1
    integer = src.dtype == np.uint8             # OpenCV's fixed-point path; others in float
    acc = np.zeros((oh, ow, c), np.int64 if integer else np.float32)
    any_inside = np.zeros((oh, ow), bool)
    for a in range(k):
        for b in range(k):
            px, py = sx + first + b, sy + first + a
            ok = (px >= 0) & (px < w) & (py >= 0) & (py < h)
            any_inside |= ok
            vals = src[np.clip(py, 0, h - 1), np.clip(px, 0, w - 1)]
            vals = np.where(ok[..., None], vals, fill_px[None, None, :])
            if integer:
                acc += vals.astype(np.int64) * itab[frac, a, b][..., None]
            else:
                acc = (acc + vals.astype(np.float32) * ftab[frac, a, b][..., None]).astype(
                    np.float32)
    if integer:
        out = np.clip((acc + (1 << (_COEF_BITS - 1))) >> _COEF_BITS, 0, 255).astype(np.uint8)
    elif np.issubdtype(src.dtype, np.integer):
        info = np.iinfo(src.dtype)
        out = np.clip(np.rint(acc), info.min, info.max).astype(src.dtype)
    else:
        out = acc.astype(src.dtype)
    out[~any_inside] = fill_px
    return out.reshape(oh, ow, *img.shape[2:])
