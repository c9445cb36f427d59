"""dataset.vision (Rescale, Normalize, HWC2CHW) and dataset.transforms (TypeCast, Compose):
values against numpy, use inside a pipeline, and the clear errors where an input cannot be
handled as MindSpore would."""
import numpy as np
import pytest

import minispore as ms
from minispore.dataset import NumpySlicesDataset, transforms, vision


def test_grey_images_pass_as_mindspore_takes_them():
    # MindSpore 2.10: Normalize with one mean/std and HWC2CHW both accept a 2-D image
    g = np.arange(6, dtype=np.uint8).reshape(2, 3)
    assert vision.HWC2CHW()(g).shape == (2, 3)
    assert np.allclose(vision.Normalize([1.0], [2.0])(g), (g - 1.0) / 2.0)


def test_image_ops_against_numpy():
    img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    r = vision.Rescale(1 / 255, 0.5)(img)
    assert r.dtype == np.float32 and np.allclose(r, img / 255 + 0.5)
    n = vision.Normalize(mean=[1, 2, 3], std=[2, 4, 8])(img)
    assert n.dtype == np.float32 and np.allclose(n, (img - [1, 2, 3]) / np.array([2, 4, 8]))
    chw = vision.Normalize([1, 2], [1, 1], is_hwc=False)(np.ones((2, 3, 3)))
    assert np.allclose(chw[0], 0) and np.allclose(chw[1], -1)
    assert vision.HWC2CHW()(img).shape == (3, 2, 4)
    assert np.array_equal(vision.HWC2CHW()(img)[1], img[:, :, 1])


def test_transforms():
    assert transforms.TypeCast(ms.int32)(np.array([1.7])).dtype == np.int32
    assert transforms.TypeCast(np.float16)(np.array([1])).dtype == np.float16
    f = transforms.Compose([vision.Rescale(2.0, 0.0), vision.HWC2CHW()])
    assert np.allclose(f(np.ones((2, 2, 1))), 2 * np.ones((1, 2, 2)))


def test_in_a_pipeline():
    ds = NumpySlicesDataset({"image": np.ones((4, 8, 8, 1), np.uint8), "label": np.arange(4.0)},
                            shuffle=False)
    ds = ds.map([vision.Rescale(0.5, 0), vision.HWC2CHW()], "image")
    ds = ds.map(transforms.TypeCast(ms.int32), "label").batch(4)
    image, label = next(ds.create_tuple_iterator())
    assert image.shape == (4, 1, 8, 8) and image.dtype == ms.float32 and label.dtype == ms.int32


def test_clear_errors():
    with pytest.raises(ValueError, match="3 channel"):
        vision.Normalize([0.5], [0.5])(np.ones((2, 2, 3)))
    with pytest.raises(ValueError, match="2-D, 3-D"):
        vision.Normalize([0.5], [0.5])(np.ones((2,)))
    with pytest.raises(ValueError, match="std must be > 0"):
        vision.Normalize([0.5], [0.0])
    with pytest.raises(ValueError, match="2-D or 3-D"):
        vision.HWC2CHW()(np.ones((2,)))
    with pytest.raises(TypeError, match="data_type"):
        transforms.TypeCast("not a dtype")


def test_one_hot_is_mindspores():
    # values from MindSpore 2.10
    out = transforms.OneHot(3)(np.array([0, 2], np.int32))
    assert out.tolist() == [[1, 0, 0], [0, 0, 1]] and out.dtype == np.int32
    assert transforms.OneHot(3)(np.array([1], np.uint8)).tolist() == [0, 1, 0]   # one row
    assert transforms.OneHot(3)(np.array([-1])).tolist() == [0, 0, 0]
    smooth = transforms.OneHot(3, 0.1)(np.array(1))
    assert smooth.dtype == np.float64
    assert np.allclose(smooth, [0.1 / 3, 0.9 + 0.1 / 3, 0.1 / 3])
    with pytest.raises(ValueError, match="num_classes=3"):
        transforms.OneHot(3)(np.array([3]))
    with pytest.raises(ValueError, match="smoothing_rate with 2 labels"):
        transforms.OneHot(3, 0.1)(np.array([0, 2]))
    with pytest.raises(TypeError, match="integers"):
        transforms.OneHot(3)(np.array([0.0]))


def test_fill_concatenate_duplicate_pad_end():
    # values from MindSpore 2.10
    f = transforms.Fill(2.7)(np.array([1, 2]))
    assert f.tolist() == [2, 2] and f.dtype == np.int64
    assert transforms.Fill("x")(np.array(["ab", "c"])).tolist() == ["x", "x"]
    c = transforms.Concatenate(0, np.array([9]), np.array([7, 8]))(np.array([1, 2]))
    assert c.tolist() == [9, 1, 2, 7, 8]
    assert transforms.Concatenate(0, np.array(["x"]))(np.array(["a"])).tolist() == ["x", "a"]
    with pytest.raises(TypeError, match="dtype"):
        transforms.Concatenate(0, np.array([1.5]))(np.array([1, 2]))
    a, b = transforms.Duplicate()(np.array([1, 2]))
    assert a.tolist() == b.tolist() == [1, 2] and a is not b
    assert transforms.PadEnd([4], -1)(np.array([1, 2])).tolist() == [1, 2, -1, -1]
    assert transforms.PadEnd([1])(np.array([1, 2])).tolist() == [1]
    assert transforms.PadEnd([2, 3])(np.array([[1], [2]])).tolist() == [[1, 0, 0], [2, 0, 0]]
    assert transforms.PadEnd([3], "zz")(np.array(["a"])).tolist() == ["a", "zz", "zz"]
    assert transforms.PadEnd([3])(np.array(["a"])).tolist() == ["a", "", ""]


def test_random_combinators():
    plus = lambda x: x + 1          # noqa: E731
    assert transforms.RandomApply([plus], 1.0)(np.array([1])).tolist() == [2]
    assert transforms.RandomApply([plus], 0.0)(np.array([1])).tolist() == [1]
    choice = transforms.RandomChoice([plus, lambda x: x * 10])
    assert {int(choice(np.array([1]))[0]) for _ in range(30)} == {2, 10}
    order = transforms.RandomOrder([plus, lambda x: x * 10])
    assert {int(order(np.array([1]))[0]) for _ in range(30)} == {20, 11}
    pair = transforms.Compose([lambda x: (x, x + 1)])(np.array([1]))
    assert isinstance(pair, tuple) and pair[1].tolist() == [2]
    with pytest.raises(ValueError, match="prob"):
        transforms.RandomApply([plus], 1.5)
    with pytest.raises(TypeError, match="transforms"):
        transforms.RandomChoice([])


def test_slice():
    # values from MindSpore 2.10
    x = np.array([1, 2, 3, 4])
    assert transforms.Slice(slice(1, 3))(x).tolist() == [2, 3]
    assert transforms.Slice(1)(x).tolist() == [2]
    assert transforms.Slice([0, 2])(x).tolist() == [1, 3]
    assert transforms.Slice(None)(x).tolist() == transforms.Slice(Ellipsis)(x).tolist() == \
        [1, 2, 3, 4]
    assert transforms.Slice(slice(0, 1), slice(1, 2))(np.array([[1, 2], [3, 4]])).tolist() == \
        [[2]]
    with pytest.raises(TypeError, match="Slice"):
        transforms.Slice("a")
