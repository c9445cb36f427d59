"""ops.pad/interpolate/gather_nd/scatter_nd/masked_fill/tril/triu/einsum, their Primitive
classes, clip_by_global_norm and the nn padding, Upsample and Norm Cells against MindSpore 2.10:
values, argument rules and gradients, in PyNative and compiled. Expected values are from
MindSpore 2.10 (CPU) run on the same inputs, but einsum's: MindSpore 2.10 has no CPU Einsum
kernel, so its values are numpy's einsum."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops

from helpers import in_mode

# the per-case graphs share one function's code: their recompiles are expected here
pytestmark = pytest.mark.filterwarnings("ignore:graph .* has been compiled")

_X = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
_X5 = np.array([1.0, 3.0, 2.0, 7.0, 4.0], np.float32).reshape(1, 1, 5)
_X7 = np.array([1.0, 3.0, 2.0, 7.0, 4.0, -1.0, 5.0], np.float32).reshape(1, 1, 7)
_X2 = (np.arange(15, dtype=np.float32).reshape(1, 1, 3, 5) ** 1.5).astype(np.float32)


def T(a):
    return ms.Tensor(np.asarray(a))


def _call(fn, *xs):
    """fn(*xs) on tensors, compiled in GRAPH_MODE."""
    return in_mode(fn, *[T(x) for x in xs]).asnumpy()


def _close(got, want, tol=1e-5):
    np.testing.assert_allclose(got, np.asarray(want, np.float32), rtol=tol, atol=tol)


# ---------------------------------------------------------------- pad ---------------------------
_PAD_CASES = [   # (padding, mode, value, rows of the (1, 3, 4) -> output) values from MindSpore
    ((1, 2, 0, 1), "constant", 5.0, [[5, 0, 1, 2, 3, 5, 5], [5, 4, 5, 6, 7, 5, 5],
                                     [5, 8, 9, 10, 11, 5, 5], [5] * 7]),
    ((-1, 1), "constant", None, [[1, 2, 3, 0], [5, 6, 7, 0], [9, 10, 11, 0]]),
    ((2, 1), "reflect", None, [[2, 1, 0, 1, 2, 3, 2], [6, 5, 4, 5, 6, 7, 6],
                               [10, 9, 8, 9, 10, 11, 10]]),
    ((1, 1, 1, 1), "reflect", None, [[5, 4, 5, 6, 7, 6], [1, 0, 1, 2, 3, 2],
                                     [5, 4, 5, 6, 7, 6], [9, 8, 9, 10, 11, 10],
                                     [5, 4, 5, 6, 7, 6]]),
    ((2, 1), "replicate", None, [[0, 0, 0, 1, 2, 3, 3], [4, 4, 4, 5, 6, 7, 7],
                                 [8, 8, 8, 9, 10, 11, 11]]),
    ((1, 1, 1, 1), "circular", None, [[11, 8, 9, 10, 11, 8], [3, 0, 1, 2, 3, 0],
                                      [7, 4, 5, 6, 7, 4], [11, 8, 9, 10, 11, 8],
                                      [3, 0, 1, 2, 3, 0]]),
    ((-1, 2), "circular", None, [[1, 2, 3, 1, 2], [5, 6, 7, 5, 6], [9, 10, 11, 9, 10]]),
    ((-1, 1), "replicate", None, [[1, 2, 3, 3], [5, 6, 7, 7], [9, 10, 11, 11]]),
]


@pytest.mark.parametrize("case", range(len(_PAD_CASES)))
def test_pad_modes(mode, case):
    padding, pad_mode, value, want = _PAD_CASES[case]

    def f(x):
        return ops.pad(x, padding, pad_mode, value)
    _close(_call(f, _X), [want])


def test_pad_rules_and_dtypes():
    # MindSpore: an int tensor keeps its dtype, a float value is truncated; list padding works
    r = ops.pad(T(np.arange(4, dtype=np.int32)), (1, 1), value=2.7)
    assert r.dtype is ms.int32 and r.asnumpy().tolist() == [2, 0, 1, 2, 3, 2]
    assert ops.pad(T(_X), [1, 1]).shape == (1, 3, 6)
    with pytest.raises(ValueError, match="divisible by 2"):
        ops.pad(T(_X), (1,))
    with pytest.raises(ValueError, match="can not set value"):
        ops.pad(T(_X), (1, 1), mode="reflect", value=1.0)
    with pytest.raises(ValueError, match="rank 2 or 3"):        # MindSpore refuses 1-D reflect
        ops.pad(T(np.arange(4.0, dtype=np.float32)), (1, 1), mode="reflect")
    with pytest.raises(ValueError, match="rank 4 or 5"):
        ops.pad(T(_X), (1,) * 6, mode="replicate")
    with pytest.raises(ValueError, match="smaller than"):
        ops.pad(T(_X), (4, 0), mode="reflect")
    with pytest.raises(ValueError, match="output size"):
        ops.pad(T(np.ones((2, 2), np.float32)), (-1, -1))
    with pytest.raises(TypeError, match="tuple of int"):
        ops.pad(T(_X), (1.0, 1))


def test_pad_gradient(mode):
    # values from MindSpore: ReflectionPad1d((2, 1)) of [0, 1, 2, 3] weighted by arange(7)
    w = T(np.arange(7, dtype=np.float32))
    g = ms.grad(lambda a: (nn.ReflectionPad1d((2, 1))(a) * w).sum())(
        T(np.arange(4, dtype=np.float32).reshape(1, 1, 4)))
    _close(g.asnumpy(), [[[2, 4, 10, 5]]])


def test_pad_primitives():
    x = T(_X)
    want = [[5, 0, 1, 2, 3, 5, 5], [5, 4, 5, 6, 7, 5, 5], [5, 8, 9, 10, 11, 5, 5], [5] * 7]
    _close(ops.PadV3()(x, T(np.array([1, 2, 0, 1])), T(np.float32(5))).asnumpy(), [want])
    _close(ops.PadV3(paddings_contiguous=False)(x, T(np.array([1, 0, 2, 1])),
                                                T(np.float32(5))).asnumpy(), [want])
    _close(ops.PadV3("edge")(x, T(np.array([1, 2]))).asnumpy(),
           [[[0, 0, 1, 2, 3, 3, 3], [4, 4, 5, 6, 7, 7, 7], [8, 8, 9, 10, 11, 11, 11]]])
    with pytest.raises(ValueError, match="must be equal to 4"):
        ops.PadV3("reflect")(x, T(np.array([1, 2, 1, 0])))
    p = T(np.array([[0, 0], [1, 1], [2, 1]]))
    _close(ops.MirrorPad("SYMMETRIC")(x, p).asnumpy(),
           [[[1, 0, 0, 1, 2, 3, 3], [1, 0, 0, 1, 2, 3, 3], [5, 4, 4, 5, 6, 7, 7],
             [9, 8, 8, 9, 10, 11, 11], [9, 8, 8, 9, 10, 11, 11]]])
    _close(ops.MirrorPad("SYMMETRIC")(T(np.arange(6, dtype=np.float32).reshape(2, 3)),
                                      T(np.array([[2, 0], [0, 3]]))).asnumpy(),
           [[3, 4, 5, 5, 4, 3], [0, 1, 2, 2, 1, 0], [0, 1, 2, 2, 1, 0], [3, 4, 5, 5, 4, 3]])


# ---------------------------------------------------------------- nn padding Cells -------------
_CELL_CASES = [   # (cell, input, expected) values from MindSpore
    (lambda: nn.Pad(((0, 0), (1, 1), (2, 1)), mode="REFLECT"), _X,
     [[[6, 5, 4, 5, 6, 7, 6], [2, 1, 0, 1, 2, 3, 2], [6, 5, 4, 5, 6, 7, 6],
       [10, 9, 8, 9, 10, 11, 10], [6, 5, 4, 5, 6, 7, 6]]]),
    (lambda: nn.Pad(((0, 0), (0, 0), (4, 1)), mode="SYMMETRIC"), _X,
     [[[3, 2, 1, 0, 0, 1, 2, 3, 3], [7, 6, 5, 4, 4, 5, 6, 7, 7],
       [11, 10, 9, 8, 8, 9, 10, 11, 11]]]),
    (lambda: nn.ZeroPad2d((1, 2, 0, 1)), np.arange(4.0, dtype=np.float32).reshape(2, 2),
     [[0, 0, 1, 0, 0], [0, 2, 3, 0, 0], [0, 0, 0, 0, 0]]),
    (lambda: nn.ConstantPad1d((-1, 2), 3.5), _X,
     [[[1, 2, 3, 3.5, 3.5], [5, 6, 7, 3.5, 3.5], [9, 10, 11, 3.5, 3.5]]]),
    (lambda: nn.ConstantPad3d((1, 0, 0, 1, 1, 0), 3.5), _X,
     [[[3.5] * 5] * 4, [[3.5, 0, 1, 2, 3], [3.5, 4, 5, 6, 7], [3.5, 8, 9, 10, 11],
                        [3.5] * 5]]),
    (lambda: nn.ReflectionPad1d(2), np.arange(4.0, dtype=np.float32),
     [2, 1, 0, 1, 2, 3, 2, 1]),
    (lambda: nn.ReplicationPad2d((1, 2, 0, 1)), _X,
     [[[0, 0, 1, 2, 3, 3, 3], [4, 4, 5, 6, 7, 7, 7], [8, 8, 9, 10, 11, 11, 11],
       [8, 8, 9, 10, 11, 11, 11]]]),
]


@pytest.mark.parametrize("case", range(len(_CELL_CASES)))
def test_padding_cells(mode, case):
    make, x, want = _CELL_CASES[case]
    _close(make()(T(x)).asnumpy(), want)


def test_padding_cell_rules():
    # MindSpore: replication crops with a negative pad and needs (C, *) or (N, C, *); reflection
    # refuses negative pads; a bool tensor pads with a bool value; an empty output is refused
    x = T(np.arange(3, dtype=np.float32).reshape(1, 1, 3))
    _close(nn.ReplicationPad1d((-1, 2))(x).asnumpy().reshape(-1), [1, 2, 2, 2])
    with pytest.raises(ValueError, match="rank 4 or 5"):
        nn.ReplicationPad3d(1)(T(np.ones((2, 2, 2), np.float32)))
    with pytest.raises(ValueError, match=">= 0"):
        nn.ReflectionPad1d((-1, 1))
    r = ops.pad(T(np.ones((2,), np.bool_)), (1, 1), value=True)
    assert r.dtype is ms.bool_ and r.asnumpy().tolist() == [True] * 4
    with pytest.raises(ValueError, match="output size"):
        ops.pad(T(np.zeros((0, 3), np.float32)), (1, 1))


def test_padding_cell_arguments():
    with pytest.raises(ValueError, match="CONSTANT"):
        nn.Pad(((1, 1),), mode="constant")
    with pytest.raises(TypeError, match="must be tuple"):
        nn.Pad([[1, 1]])
    with pytest.raises(ValueError, match=">= 0"):
        nn.Pad(((0, 0), (-1, 2)))
    with pytest.raises(ValueError, match="length of 'paddings'"):
        nn.Pad(((1, 2),))(T(_X))
    with pytest.raises(TypeError, match="tuple of 4 ints"):
        nn.ZeroPad2d((1, 2))


# ---------------------------------------------------------------- interpolate -------------------
_INTERP_CASES = [   # (input, size, mode, align_corners, expected) values from MindSpore
    (_X5, 7, "nearest", None, [1, 1, 3, 2, 2, 7, 4]),
    (_X7, 5, "nearest", None, [1, 3, 2, 4, -1]),
    (_X5, 7, "nearest-exact", None, [1, 3, 3, 2, 7, 7, 4]),
    (_X7, 5, "nearest-exact", None, [1, 2, 7, 4, 5]),
    (_X5, 7, "linear", None, [1, 2.14286, 2.71429, 2, 5.57143, 5.71429, 4]),
    (_X7, 5, "linear", False, [1.4, 2.4, 7, 2, 3.8]),
    (_X5, 7, "linear", True, [1, 2.33333, 2.66667, 2, 5.33333, 6, 4]),
    (_X7, 5, "linear", True, [1, 2.5, 7, 1.5, 5]),
    (_X5, 2, "linear", None, [2.5, 6.25]),
    (_X2, (2, 3), "bilinear", None, [3.33813, 6.75138, 11.68466, 28.02024, 35.80698,
                                     44.29526]),
    (_X2, (2, 3), "bilinear", True, [0, 2.82843, 8, 31.62278, 41.56922, 52.3832]),
    (_X2, (2, 3), "area", None, [6.71932, 10.81153, 15.70589, 23.49573, 30.12815, 37.2207]),
    (_X2, (2, 3), "nearest-exact", None, [0, 2.82843, 8, 31.62278, 41.56922, 52.3832]),
    (_X2, (2, 3), "nearest", None, [0, 1, 5.19615, 11.18034, 14.69694, 22.62742]),
    (_X2, (2, 3), "bicubic", None, [1.99812, 5.30172, 10.29436, 29.10357, 37.53858, 46.68983]),
    (_X2, (4, 7), "bicubic", None, [-0.63456, -0.21281, 0.69931, 2.0087, 3.58548, 5.63623,
                                    7.16577, 5.42869, 6.76331, 8.86351, 11.04625, 13.41935,
                                    16.278, 18.34308, 19.35084, 21.64642, 25.03379, 28.22411,
                                    31.53786, 35.37278, 38.09263, 32.40392, 35.1061, 39.07278,
                                    42.77327, 46.58228, 50.94979, 54.03318]),
    (_X2, (4, 7), "bicubic", True, [0, 0.48238, 1.55473, 2.82843, 4.24148, 6.34094, 8,
                                    5.39317, 6.81956, 9.02609, 11.02478, 13.12686, 16.013,
                                    18.20486, 18.85097, 21.24948, 24.67588, 27.51182, 30.41915,
                                    34.25029, 37.09317, 31.62278, 34.3894, 38.32817, 41.56922,
                                    44.87442, 49.19439, 52.3832]),
]


@pytest.mark.parametrize("case", range(len(_INTERP_CASES)))
def test_interpolate(mode, case):
    x, size, how, ac, want = _INTERP_CASES[case]

    def f(t):
        return ops.interpolate(t, size=size, mode=how, align_corners=ac)
    _close(_call(f, x).reshape(-1), want)


def test_interpolate_rules_and_upsample():
    x = T(_X5)
    # MindSpore uses a scale factor only with recompute_scale_factor=True: floor(5 * 1.5) = 7
    _close(ops.interpolate(x, scale_factor=1.5, mode="linear",
                           recompute_scale_factor=True).asnumpy().reshape(-1),
           [1, 2.14286, 2.71429, 2, 5.57143, 5.71429, 4])
    with pytest.raises(ValueError, match="scale_factor"):
        ops.interpolate(x, scale_factor=1.5)
    with pytest.raises(ValueError, match="align_corners"):
        ops.interpolate(x, size=3, align_corners=False)
    with pytest.raises(ValueError, match="simultaneously"):
        ops.interpolate(x, size=3, scale_factor=2.0)
    with pytest.raises(ValueError, match="only support"):
        ops.interpolate(x, size=3, mode="bilinear")
    with pytest.raises(ValueError, match="divisible"):              # MindSpore's 1-D area
        ops.interpolate(T(_X7), size=5, mode="area")
    with pytest.raises(ValueError, match="scale_factor"):
        ops.interpolate(T(_X2), scale_factor=2.0, mode="bilinear")
    with pytest.raises(TypeError):
        ops.interpolate(T(np.arange(5, dtype=np.int32)[None, None]), size=7)
    up = nn.Upsample(size=7, mode="linear")
    _close(up(x).asnumpy().reshape(-1), [1, 2.14286, 2.71429, 2, 5.57143, 5.71429, 4])
    _close(ops.upsample(x, size=7).asnumpy().reshape(-1), [1, 1, 3, 2, 2, 7, 4])


_X3 = (np.arange(30, dtype=np.float32).reshape(1, 1, 2, 3, 5) ** 1.5).astype(np.float32)


def test_interpolate_scale_factor_5d(mode):
    # values from MindSpore: 5-D trilinear and nearest use a scale factor as given (source
    # step 1 / scale_factor); recompute_scale_factor=True and 'area' use in / out instead
    def tri(t):
        return ops.interpolate(t, scale_factor=(1.5, 1.7, 0.6), mode="trilinear")

    def tri_rc(t):
        return ops.interpolate(t, scale_factor=(1.5, 1.7, 0.6), mode="trilinear",
                               recompute_scale_factor=True)
    got = _call(tri, _X3)
    assert got.shape == (1, 1, 3, 5, 3)
    _close(got[0, 0, 0].reshape(-1), [0.33333, 2.82843, 7.06538, 4.92891, 8.82824, 14.13015,
                                      11.99903, 18.05873, 24.99903, 24.02651, 31.40056,
                                      39.51513, 33.24281, 41.56922, 50.54619], 2e-5)
    _close(_call(tri_rc, _X3)[0, 0, 0, 1], [5.14102, 9.10516, 14.45622], 2e-5)

    def area(t):
        return ops.interpolate(t, scale_factor=(1.5, 1.7, 0.6), mode="area")
    _close(_call(area, _X3)[0, 0, 0, 0], [0.5, 3.00819, 6.59808])


def test_interpolate_float16_rounds_once():
    # values from MindSpore: float16 resamples in float32 and rounds the result once
    x = T(np.arange(5.0, dtype=np.float16)[None, None])
    r = ops.interpolate(x, size=7, mode="linear")
    assert r.dtype is ms.float16
    assert r.asnumpy().reshape(-1).tolist() == np.array(
        [0, 0.5713, 1.286, 2, 2.715, 3.428, 4], np.float16).tolist()
    x2 = T(_X2.astype(np.float16))
    r = ops.interpolate(x2, size=(4, 7), mode="bicubic").asnumpy().reshape(-1)[:7]
    assert r.tolist() == np.array([-0.635, -0.2128, 0.699, 2.008, 3.584, 5.637, 7.164],
                                  np.float16).tolist()


def test_bicubic_gradient(mode):
    w = T(np.arange(28, dtype=np.float32).reshape(1, 1, 4, 7))
    g = ms.grad(lambda a: (ops.interpolate(a, size=(4, 7), mode="bicubic") * w).sum())(T(_X2))
    _close(g.asnumpy().reshape(-1), [2.72443, 5.17292, 8.03432, 10.42319, 13.52045, 19.68378,
                                     21.33048, 24.54975, 26.32517, 29.95424, 38.65761,
                                     39.67105, 43.57766, 44.92132, 49.45363], 2e-5)


def test_resize_bilinear_v2(mode):
    # values from MindSpore: the default is the asymmetric transform d * in / out
    def f(t):
        return ops.ResizeBilinearV2()(t, (2, 3))

    def g(t):
        return ops.ResizeBilinearV2(half_pixel_centers=True)(t, (2, 3))
    _close(_call(f, _X2).reshape(-1), [0, 2.21895, 6.13077, 21.40156, 28.5598, 36.39706])
    _close(_call(g, _X2).reshape(-1), [3.33813, 6.75138, 11.68466, 28.02024, 35.80698,
                                       44.29526])
    with pytest.raises(ValueError, match="half_pixel_centers"):
        ops.ResizeBilinearV2(True, True)


def test_interpolate_gradients(mode):
    # values from MindSpore
    w7 = T(np.arange(7, dtype=np.float32))
    g = ms.grad(lambda a: (ops.interpolate(a, size=7, mode="linear") * w7).sum())(
        T(np.arange(5, dtype=np.float32).reshape(1, 1, 5)))
    _close(g.asnumpy().reshape(-1), [0.42857, 2.0, 4.71429, 5.71429, 8.14286])
    w3 = T(np.arange(3, dtype=np.float32) + 1)
    g = ms.grad(lambda a: (ops.interpolate(a, size=3) * w3).sum())(
        T(np.arange(5, dtype=np.float32).reshape(1, 1, 5)))
    _close(g.asnumpy().reshape(-1), [1, 2, 0, 3, 0])
    w6 = T(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3) + 1)
    g = ms.grad(lambda a: (ops.interpolate(a, size=(2, 3), mode="area") * w6).sum())(
        T(np.arange(15, dtype=np.float32).reshape(1, 1, 3, 5)))
    _close(g.asnumpy().reshape(3, 5), [[0.25, 0.58333, 0.33333, 1.08333, 0.75],
                                       [1.25, 2.41667, 1.16667, 3.41667, 2.25],
                                       [1.0, 1.83333, 0.83333, 2.33333, 1.5]])


# ---------------------------------------------------------------- N-d indexing ------------------
_M = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_gather_nd_and_scatter_nd(mode):
    def gather(x, i):
        return ops.gather_nd(x, i)
    _close(_call(gather, _M, np.array([[0, 1], [2, 3]], np.int32)), [1, 11])
    _close(_call(gather, _M, np.array([[2], [0]], np.int32)), [[8, 9, 10, 11], [0, 1, 2, 3]])

    def scatter(i, u):
        return ops.scatter_nd(i, u, (2, 2))
    # MindSpore sums repeated index tuples
    _close(_call(scatter, np.array([[0, 1], [0, 1], [1, 0]], np.int32),
                 np.array([1.0, 2.0, 3.0], np.float32)), [[0, 3], [3, 0]])
    r = ops.ScatterNd()(T(np.array([[0], [2]], np.int32)),
                        T(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)), (4, 2))
    _close(r.asnumpy(), [[1, 2], [0, 0], [3, 4], [0, 0]])


def test_nd_indexing_gradients_and_errors(mode):
    # values from MindSpore: a repeated gathered tuple gets both gradients
    idx = T(np.array([[0, 1], [0, 1], [2, 2]], np.int32))
    w = T(np.array([1.0, 2.0, 3.0], np.float32))
    g = ms.grad(lambda a: (ops.gather_nd(a, idx) * w).sum())(T(_M))
    _close(g.asnumpy(), [[0, 3, 0, 0], [0, 0, 0, 0], [0, 0, 3, 0]])
    sidx = T(np.array([[0, 1], [0, 1], [1, 0]], np.int32))
    wm = T(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    g = ms.grad(lambda u: (ops.scatter_nd(sidx, u, (2, 2)) * wm).sum())(
        T(np.array([1.0, 2.0, 3.0], np.float32)))
    _close(g.asnumpy(), [2, 2, 3])
    with pytest.raises(IndexError, match="does not index"):   # MindSpore refuses negatives
        ops.gather_nd(T(_M), T(np.array([[-1, 1]], np.int32)))
    with pytest.raises(IndexError, match="does not index"):
        ops.scatter_nd(T(np.array([[0, 5]], np.int32)), T(np.ones(1, np.float32)), (2, 2))
    r = ops.scatter_nd(T(np.array([[0, 1]], np.int32)), T(np.array([True])), (2, 2))
    assert r.dtype is ms.bool_ and r.asnumpy().tolist() == [[False, True], [False, False]]
    with pytest.raises(TypeError, match="tuple of ints"):
        ops.scatter_nd(sidx, T(np.ones(3, np.float32)), [2, 2])
    with pytest.raises(ValueError, match="updates must have shape"):
        ops.scatter_nd(T(np.array([[0, 1]], np.int32)), T(np.ones(2, np.float32)), (2, 2))


def test_masked_fill(mode):
    m = np.array([[True, False, True, False]] * 3)

    def f(x, mask):
        return ops.masked_fill(x, mask, 5.5)
    _close(_call(f, _M, m), [[5.5, 1, 5.5, 3], [5.5, 5, 5.5, 7], [5.5, 9, 5.5, 11]])

    def up(x, mask):
        return ops.masked_fill(x, mask, 1.0)
    # values from MindSpore: the output has the broadcast shape of input and mask
    _close(_call(up, np.arange(4, dtype=np.float32),
                 np.array([[True, False, True, False], [False] * 4])),
           [[1, 1, 1, 3], [0, 1, 2, 3]])
    r = ops.masked_fill(T(np.arange(4, dtype=np.int64)), T(m[0]), T(np.int32(5)))
    assert r.dtype is ms.int64 and r.asnumpy().tolist() == [5, 1, 5, 3]
    r = ops.MaskedFill()(T(_M), T(m), T(np.float64(2.5)))
    assert r.dtype is ms.float32
    # values from MindSpore: the value's gradient sums the filled positions' gradients
    ga, gv = ms.grad(lambda a, v: (ops.masked_fill(a, T(m), v) * a).sum(),
                     grad_position=(0, 1))(T(_M), T(np.float32(2.0)))
    _close(ga.asnumpy(), [[2, 2, 2, 6], [2, 10, 2, 14], [2, 18, 2, 22]])
    _close(gv.asnumpy(), 30.0)
    with pytest.raises(TypeError, match="does not fit"):
        ops.masked_fill(T(np.arange(4, dtype=np.int32)), T(m[0]), 5.7)
    with pytest.raises(TypeError, match="does not fit"):
        ops.masked_fill(T(_M), T(m), T(np.int32(2)))
    with pytest.raises(TypeError, match="bool"):
        ops.masked_fill(T(_M), T(np.ones((3, 4), np.int32)), 1.0)
    with pytest.raises(ValueError, match="0-D"):
        ops.masked_fill(T(_M), T(m), T(np.array([2.5], np.float32)))


def test_tril_triu(mode):
    y = np.arange(1, 13, dtype=np.float32).reshape(3, 4)

    def lower(x):
        return ops.tril(x, 1)

    def upper(x):
        return ops.triu(x, -1)
    _close(_call(lower, y), [[1, 2, 0, 0], [5, 6, 7, 0], [9, 10, 11, 12]])
    _close(_call(upper, y), [[1, 2, 3, 4], [5, 6, 7, 8], [0, 10, 11, 12]])
    assert ops.tril(T(y), -5).asnumpy().sum() == 0 and ops.triu(T(y), -5).asnumpy().sum() == 78
    _close(ops.Tril(1)(T(y)).asnumpy(), [[1, 2, 0, 0], [5, 6, 7, 0], [9, 10, 11, 12]])
    _close(ops.Triu()(T(y)).asnumpy(), [[1, 2, 3, 4], [0, 6, 7, 8], [0, 0, 11, 12]])
    r = ops.tril(T(np.ones((2, 2), np.bool_)))
    assert r.dtype is ms.bool_ and r.asnumpy().tolist() == [[True, False], [True, True]]
    # values from MindSpore
    g = ms.grad(lambda a: (ops.triu(a, 1) * a).sum())(T(y))
    _close(g.asnumpy(), [[0, 4, 6, 8], [0, 0, 14, 16], [0, 0, 0, 24]])
    with pytest.raises(ValueError, match="rank"):
        ops.tril(T(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="diagonal"):
        ops.tril(T(y), 1.0)


# ---------------------------------------------------------------- einsum ------------------------
_EINSUM_CASES = [   # values from numpy's einsum (MindSpore 2.10 has no CPU Einsum); a full
    # reduction is shape (1,) in MindSpore
    ("ij,jk->ik", ((2, 3), (3, 4))), ("ij,jk", ((2, 3), (3, 4))), ("ii->i", ((3, 3),)),
    ("ii", ((3, 3),)), ("ij->", ((2, 3),)), ("ji", ((2, 3),)), ("i,j->ij", ((2,), (3,))),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (3, 3, 4))), ("iij->j", ((2, 2, 3),)),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))), ("Ij , jK -> KI", ((2, 3), (3, 2))),
]


@pytest.mark.parametrize("case", range(len(_EINSUM_CASES)))
def test_einsum(mode, case):
    eq, shapes = _EINSUM_CASES[case]
    rng = np.random.default_rng(case)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]

    def f(*ts):
        return ops.einsum(eq, *ts)
    want = np.einsum(eq.replace(" ", ""), *xs)
    _close(_call(f, *xs), want.reshape(1) if want.ndim == 0 else want, 1e-4)


def test_einsum_documented_examples():
    # MindSpore 2.10's ops.einsum docstring (GPU only, so not run here): a full reduction is
    # shape (1,), '...' missing from the output is summed, the sublist form labels 0-51
    r = ops.einsum("i->", T(np.array([1.0, 2.0, 4.0], np.float32)))
    assert r.shape == (1,) and r.asnumpy().tolist() == [7.0]
    r = ops.einsum("...->", T(np.arange(1, 7, dtype=np.float32).reshape(2, 3)))
    assert r.shape == (1,) and r.asnumpy().tolist() == [21.0]
    _close(ops.einsum("j,i->ji", T(np.array([1.0, 2.0, 3.0], np.float32)),
                      T(np.array([2.0, 4.0, 1.0], np.float32))).asnumpy(),
           [[2, 4, 1], [4, 8, 2], [6, 12, 3]])
    x, y = T(np.array([1, 2, 3, 4], np.float32)), T(np.array([1, 2], np.float32))
    _close(ops.einsum(x, [..., 1], y, [..., 2], [..., 1, 2]).asnumpy(),
           [[1, 2], [2, 4], [3, 6], [4, 8]])
    _close(ops.einsum(x, [0], x, [0]).asnumpy(), [30])
    with pytest.raises(ValueError, match=r"range \[0, 52\)"):
        ops.einsum(x, [52])


def test_einsum_forms_gradient_and_errors(mode):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    _close(ops.Einsum("ij,jk->ik")((T(a), T(b))).asnumpy(), a @ b)
    _close(ops.einsum("ij,jk->ik", [T(a), T(b)]).asnumpy(), a @ b)
    ga, gb = ms.grad(lambda p, q: ops.einsum("ij,jk->ik", p, q).sum(),
                     grad_position=(0, 1))(T(a), T(b))
    _close(ga.asnumpy(), np.ones((2, 4)) @ b.T)
    _close(gb.asnumpy(), a.T @ np.ones((2, 4)))
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        ops.einsum("ij->j", T(np.ones((2, 2), np.int32)))
    with pytest.raises(TypeError, match="share one dtype"):
        ops.einsum("ij,jk->ik", T(a), T(b.astype(np.float64)))
    with pytest.raises(ValueError, match="size"):
        ops.einsum("ij,jk->ik", T(a), T(a))


# ---------------------------------------------------------------- norms -------------------------
def test_clip_by_global_norm_and_nn_norm(mode):
    xs = (T(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)), T(np.array([5.0, -6.0], np.float32)))
    r = ops.clip_by_global_norm(xs, 1.0)             # values from MindSpore
    _close(r[0].asnumpy(), [[0.10483, 0.20966], [0.31449, 0.41931]])
    _close(r[1].asnumpy(), [0.52414, -0.62897])
    r = ops.clip_by_global_norm(xs[0], 2.0)          # one Tensor in, one Tensor out
    assert isinstance(r, ms.Tensor)
    _close(r.asnumpy(), [[0.36515, 0.7303], [1.09545, 1.46059]])
    m = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)

    def norm_rows(x):
        return nn.Norm(axis=1, keep_dims=True)(x)
    _close(_call(norm_rows, m), [[3.74166], [8.77496]])
    _close(nn.Norm()(T(m)).asnumpy(), 9.53939)
    r = nn.Norm()(T(np.array([3, 4], np.int32)))
    assert r.dtype is ms.float32 and r.asnumpy().item() == 5.0
    g = ms.grad(nn.Norm(axis=1))(T(m))
    _close(g.asnumpy(), [[0.26726, -0.53452, 0.80178], [0.45584, 0.5698, -0.68376]])
    with pytest.raises(ValueError, match="for matrices"):   # MindSpore's message
        ops.norm(T(m), 3)
    with pytest.raises(TypeError, match="can not be str for vectors"):
        ops.norm(T(m), "fro", 1)


# ---------------------------------------------------------------- tensor_scatter, indices -------
def test_tensor_scatter(mode):
    i = np.array([[0, 1], [0, 1], [2, 3]], np.int32)
    u = np.array([10.0, 20.0, 30.0], np.float32)

    def add(x, idx, upd):
        return ops.tensor_scatter_add(x, idx, upd)

    def sub(x, idx, upd):
        return ops.tensor_scatter_sub(x, idx, upd)

    def update(x, idx, upd):
        return ops.tensor_scatter_update(x, idx, upd)
    # values from MindSpore: repeated tuples sum; an update's repeated tuple takes the last
    _close(_call(add, _M, i, u).reshape(-1), [0, 31, 2, 3, 4, 5, 6, 7, 8, 9, 10, 41])
    _close(_call(sub, _M, i, u).reshape(-1), [0, -29, 2, 3, 4, 5, 6, 7, 8, 9, 10, -19])
    _close(_call(update, _M, i, u).reshape(-1), [0, 20, 2, 3, 4, 5, 6, 7, 8, 9, 10, 30])
    _close(ops.TensorScatterAdd()(T(_M), T(np.array([[1]], np.int32)),
                                  T(np.ones((1, 4), np.float32))).asnumpy()[1], [5, 6, 7, 8])
    # values from MindSpore: each update's gradient is the output's gradient at its tuple
    w = T(_M)
    gx, gu = ms.grad(lambda a, b: (ops.tensor_scatter_update(a, T(i), b) * w).sum(),
                     grad_position=(0, 1))(T(np.ones((3, 4), np.float32)), T(u))
    _close(gu.asnumpy(), [1, 1, 11])
    assert gx.asnumpy()[0, 1] == 0 and gx.asnumpy()[2, 3] == 0 and gx.asnumpy()[1, 1] == 5
    with pytest.raises(IndexError, match="does not index"):
        ops.tensor_scatter_add(T(_M), T(np.array([[3, 0]], np.int32)), T(np.ones(1, np.float32)))


def test_mirror_pad_and_triangle_indices():
    # values from MindSpore
    r = ops.mirror_pad(T(_M), T(np.array([[1, 1], [2, 0]])), "SYMMETRIC")
    _close(r.asnumpy().reshape(-1), [1, 0, 0, 1, 2, 3, 1, 0, 0, 1, 2, 3, 5, 4, 4, 5, 6, 7, 9, 8,
                                     8, 9, 10, 11, 9, 8, 8, 9, 10, 11])
    with pytest.raises(TypeError, match="must be Tensor"):
        ops.mirror_pad(T(_M), ((1, 1), (2, 0)), "REFLECT")
    r = ops.tril_indices(3, 4, 1)
    assert r.dtype is ms.int64 and r.asnumpy().tolist() == [[0, 0, 1, 1, 1, 2, 2, 2, 2],
                                                            [0, 1, 0, 1, 2, 0, 1, 2, 3]]
    r = ops.triu_indices(3, 4, -1)
    assert r.asnumpy().tolist() == [[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2],
                                    [0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3]]
    assert ops.tril_indices(3, 3, dtype=ms.int32).dtype is ms.int32
    r = ops.TrilIndices(3, 4, 1)()
    assert r.dtype is ms.int32 and r.shape == (2, 9)
    assert ops.TriuIndices(3, 4, -1)().shape == (2, 11)


def test_nn_tril_triu(mode):
    # values from MindSpore: nn.Tril()(x, k) and nn.Triu()(x, k)
    _close(nn.Tril()(T(_M), 1).asnumpy().reshape(-1), [0, 1, 0, 0, 4, 5, 6, 0, 8, 9, 10, 11])
    _close(nn.Triu()(T(_M), -1).asnumpy().reshape(-1), [0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11])
    _close(nn.Tril()(T(_M)).asnumpy().reshape(-1), [0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0])


# ---------------------------------------------------------------- resize primitives -------------
def test_resize_primitives(mode):
    # values from MindSpore
    size2 = T(np.array([4, 7], np.int32))
    r = ops.ResizeLinear1D("half_pixel")(T(_X7), T(np.array([5], np.int64)))
    _close(r.asnumpy().reshape(-1), [1.4, 2.4, 7, 2, 3.8])
    r = ops.ResizeLinear1D()(T(_X5), T(np.array([7], np.int64)))
    _close(r.asnumpy().reshape(-1), [1, 2.33333, 2.66667, 2, 5.33333, 6, 4])
    row0 = {(False, False): [0, 0, 1, 2.82843, 2.82843, 5.19615, 8],
            (True, False): [0, 1, 1, 2.82843, 5.19615, 5.19615, 8],
            (False, True): [0, 1, 1, 2.82843, 5.19615, 5.19615, 8]}
    for (ac, hp), want in row0.items():
        r = ops.ResizeNearestNeighborV2(ac, hp)(T(_X2), size2)
        _close(r.asnumpy()[0, 0, 0], want)
    r = ops.ResizeNearestNeighborV2(True)(T(_X2), T(np.array([2, 3], np.int32)))
    _close(r.asnumpy().reshape(-1), [0, 2.82843, 8, 31.62278, 41.56922, 52.3832])
    r = ops.ResizeBicubic()(T(_X2), size2)
    _close(r.asnumpy()[0, 0, 0], [0, 0.53575, 1.68639, 3.22137, 4.71377, 7.00889, 8.30663])
    r = ops.ResizeBicubic(half_pixel_centers=True)(T(_X2), size2)
    _close(r.asnumpy()[0, 0, 0], [-0.63456, -0.21281, 0.69931, 2.0087, 3.58548, 5.63623,
                                  7.16577])
    r = ops.UpsampleTrilinear3D(True)(T(_X3), None, [1.5, 1.7, 0.6])
    _close(r.asnumpy()[0, 0, 0, 1], [5.59017, 10.67434, 17.5])
    r = ops.UpsampleTrilinear3D()(T(_X3), [3, 5, 3])
    _close(r.asnumpy()[0, 0, 0, 1], [5.14102, 9.10516, 14.45622], 2e-5)
    r = ops.UpsampleNearest3D()(T(_X3), None, [1.5, 1.7, 0.6])
    _close(r.asnumpy()[0, 0, 0, 4], [31.62278, 36.48287, 46.87217])
    _close(r.asnumpy()[0, 0, 2, 4], [125, 132.57451, 148.16206])
    with pytest.raises(ValueError, match="half_pixel_centers"):
        ops.ResizeBicubic(True, True)
    with pytest.raises(ValueError, match="exactly one"):
        ops.UpsampleNearest3D()(T(_X3), [3, 5, 3], [1.5, 1.7, 0.6])
