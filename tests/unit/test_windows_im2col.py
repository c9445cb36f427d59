"""windows.im2col (the eager conv kernels' column matrix) against a numpy construction of the same
matrix, on both of its paths: short output rows (wo < SHORT_ROW: the listed (tap, pixel) pairs)
and long rows (the row loops), over strides, dilation, padding and groups."""
import numpy as np
import pytest

from minispore.backends.cpu import windows


def _reference(x, g, ho, wo, kh, kw, sh, sw, pt, pl, dh, dw, group):
    N, C, H, Wd = x.shape
    cg = C // group
    xp = np.zeros((N, C, H + 2 * (kh * dh + ho * sh), Wd + 2 * (kw * dw + wo * sw)), x.dtype)
    top, left = kh * dh + ho * sh, kw * dw + wo * sw          # room for any padding
    xp[:, :, top:top + H, left:left + Wd] = x
    cols = np.zeros((cg, kh, kw, N, ho, wo), x.dtype)
    for i in range(kh):
        for j in range(kw):
            ys = top - pt + i * dh + sh * np.arange(ho)
            xs = left - pl + j * dw + sw * np.arange(wo)
            patch = xp[:, g * cg:(g + 1) * cg][:, :, ys][:, :, :, xs]   # (N, cg, ho, wo)
            cols[:, i, j] = patch.transpose(1, 0, 2, 3)
    return cols.reshape(cg * kh * kw, N * ho * wo)


# (x shape, kernel, stride, top/left padding, dilation, group); output size from 'same'-like pads
CASES = [
    ((2, 3, 4, 4), (3, 3), (1, 1), (1, 1), (1, 1), 1),       # short rows, padding on all sides
    ((2, 4, 5, 6), (3, 2), (2, 1), (1, 0), (1, 2), 2),       # short rows, groups, dilation
    ((1, 2, 7, 7), (2, 3), (3, 2), (0, 2), (2, 1), 1),       # short rows, strides
    ((2, 2, 9, 12), (3, 3), (1, 1), (1, 1), (1, 1), 2),      # long rows
    ((1, 3, 10, 17), (3, 2), (2, 2), (2, 1), (1, 2), 1),     # long rows, strides and dilation
]


@pytest.mark.parametrize("case", CASES, ids=[f"case{k}" for k in range(len(CASES))])
def test_im2col_equals_numpy_construction(case):
    xs, (kh, kw), (sh, sw), (pt, pl), (dh, dw), group = case
    N, C, H, Wd = xs
    ho = (H + 2 * pt - dh * (kh - 1) - 1) // sh + 1
    wo = (Wd + 2 * pl - dw * (kw - 1) - 1) // sw + 1
    x = np.random.default_rng(len(xs) + kh).standard_normal(xs).astype(np.float32)
    for g in range(group):
        args = (g, ho, wo, kh, kw, sh, sw, pt, pl, dh, dw, group)
        np.testing.assert_array_equal(windows.im2col(x, *args), _reference(x, *args))


def test_both_im2col_paths_are_covered():
    def wo_of(case):
        xs, (kh, kw), (sh, sw), (pt, pl), (dh, dw), _ = case
        return (xs[3] + 2 * pl - dw * (kw - 1) - 1) // sw + 1
    widths = [wo_of(c) for c in CASES]
    assert min(widths) < windows.SHORT_ROW <= max(widths)
