"""dataset.vision's ops against MindSpore 2.10's numbers: every op and parameter combination in
vision_mindspore_values.py (values from MindSpore 2.10) exactly for uint8 outputs, the random
ops at degenerate ranges / prob 0 and 1 and their seeded reproducibility, decoding, PIL images
where MindSpore takes them, use inside Dataset.map, and the errors naming the op."""
import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest

import minispore as ms
from minispore.dataset import NumpySlicesDataset, config, transforms, vision as V

_spec = importlib.util.spec_from_file_location(
    "vision_mindspore_values", Path(__file__).with_name("vision_mindspore_values.py"))
_values = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_values)


def _encoded(fmt, arr, **kw):
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format=fmt, **kw)
    return np.frombuffer(buf.getvalue(), np.uint8)


def inputs():
    """The images MindSpore's values were computed on."""
    rng = np.random.default_rng(0)
    d = {"u8": rng.integers(0, 256, (5, 7, 3), dtype=np.uint8),
         "u8e": rng.integers(0, 256, (6, 8, 3), dtype=np.uint8),
         "f32": rng.random((5, 7, 3), dtype=np.float32) * 255,
         "g2": rng.integers(0, 256, (5, 7), dtype=np.uint8),
         "g1": rng.integers(0, 256, (5, 7, 1), dtype=np.uint8),
         "big": rng.integers(0, 256, (16, 20, 3), dtype=np.uint8)}
    r = np.arange(256)
    d["ramp"] = np.stack([r, (r * 7) % 256, (r * 13 + 5) % 256], -1).reshape(16, 16, 3) \
        .astype(np.uint8)
    d["b4"] = np.stack([d["u8"], d["u8"][::-1]])
    yy, xx = np.mgrid[0:16, 0:20]
    d["coord"] = np.stack([xx * 10, yy * 10, np.full_like(xx, 255)], -1).astype(np.uint8)
    d["png"] = _encoded("PNG", d["big"])
    d["f16"] = d["f32"].astype(np.float16)
    d["i32"] = d["u8"].astype(np.int32) * 1000 - 100000
    d["u16"] = d["u8"].astype(np.uint16) * 250
    d["i16"] = d["u8"].astype(np.int16) * 100 - 12000
    d["f64"] = d["f32"].astype(np.float64)
    d["i8"] = (d["u8"].astype(np.int16) - 128).astype(np.int8)
    d["bool"] = d["u8"] > 128
    return d


IMAGES = inputs()


@pytest.fixture(autouse=True)
def _restore_the_pipeline_seed():
    saved = config._seed["value"]
    yield
    config._seed["value"] = saved


def _checksums(out):
    o = np.asarray(out).astype(np.float64)
    w = (np.arange(o.size) % 7 + 1).reshape(o.shape)
    return float(o.sum()), float((o * w).sum())


@pytest.mark.parametrize("expr,image,shape,dtype,total,weighted", _values.EXPECTED,
                         ids=[f"{e}-{i}" for e, i, *_ in _values.EXPECTED])
def test_matches_mindspore(expr, image, shape, dtype, total, weighted):
    out = eval(expr, {"V": V, "np": np})(IMAGES[image].copy())
    assert out.shape == shape and out.dtype == np.dtype(dtype)
    got = _checksums(out)
    if out.dtype.kind in "biu":
        assert got == (total, weighted)
    else:
        assert np.allclose(got, (total, weighted), rtol=1e-6)


def test_a_few_pixels_of_mindspore():
    # values from MindSpore 2.10
    img = IMAGES["u8"]
    assert V.Resize((3, 4), V.Inter.BICUBIC)(img)[1, 2].tolist() == [76, 152, 61]
    assert V.Resize(4)(img)[0, 0].tolist() == [111, 146, 179]
    assert V.RandomRotation((30, 30), V.Inter.BILINEAR)(img)[2, 3].tolist() == [128, 113, 123]
    assert V.RandomColorAdjust(saturation=(1.7, 1.7))(IMAGES["big"])[0, 0].tolist() == \
        [190, 57, 152]
    assert V.RandomColorAdjust(hue=(0.1, 0.1))(img)[1, 1].tolist() == [29, 240, 193]
    assert V.RandomAffine((-20, -20), resample=V.Inter.BICUBIC)(IMAGES["ramp"])[3, 3].tolist() \
        == [32, 67, 175]
    assert V.CenterCrop((2, 4))(img).tolist() == img[1:3, 1:5].tolist()
    big = V.CenterCrop((9, 10))(img)                       # pads 2 above, 2 left (the larger
    assert big[2:7, 2:9].tolist() == img.tolist()           # half first), then crops
    assert big[:2].max() == 0 and big[:, :2].max() == 0


def test_resize_shorter_side_rule_is_mindspores():
    # shapes from MindSpore 2.10: the longer side is floor(long / short * size) in float32
    cases = {(3, 7): [(4, (4, 9)), (7, (7, 16))], (11, 13): [(11, (11, 12)), (9, (9, 10))],
             (9, 7): [(7, (9, 7)), (4, (5, 4))], (6, 10): [(2, (2, 3)), (100, (100, 166))],
             (17, 29): [(16, (16, 27))], (7, 5): [(3, (4, 3))]}
    for (h, w), pairs in cases.items():
        for size, want in pairs:
            assert V.Resize(size)(np.zeros((h, w, 3), np.uint8)).shape[:2] == want


def test_random_ops_at_their_limits_and_seeded():
    img = IMAGES["big"]
    assert np.array_equal(V.RandomHorizontalFlip(0.0)(img), img)
    assert np.array_equal(V.RandomVerticalFlip(1.0)(img), img[::-1])
    assert np.array_equal(V.RandomCrop((16, 20))(img), img)
    config.set_seed(7)
    crop, rrc = V.RandomCrop(8), V.RandomResizedCrop(5)
    a, b = [crop(img) for _ in range(4)], [rrc(img) for _ in range(4)]
    config.set_seed(7)                                      # the same seed: the same images
    crop, rrc = V.RandomCrop(8), V.RandomResizedCrop(5)
    assert all(np.array_equal(x, crop(img)) for x in a)
    assert all(np.array_equal(x, rrc(img)) for x in b)
    assert len({x.tobytes() for x in a}) > 1                # the draws move between calls
    # like MindSpore (every op seeded with the global seed), two ops of a kind draw alike
    assert np.array_equal(V.RandomCrop(8)(img), V.RandomCrop(8)(img))


def test_rows_keyed_draws_do_not_depend_on_the_order_rows_are_mapped_in():
    from minispore.dataset.vision_common import random_row
    img = IMAGES["big"]
    config.set_seed(11)
    op = V.RandomResizedCrop(4)
    forward = []
    for i in range(4):
        with random_row(0, i):
            forward.append(op(img))
    for i in reversed(range(4)):
        with random_row(0, i):
            assert np.array_equal(op(img), forward[i])
    assert len({x.tobytes() for x in forward}) > 1


def test_random_parameters_stay_in_their_documented_ranges():
    config.set_seed(3)
    flat = np.full((4, 4, 3), 100, np.uint8)
    op = V.RandomColorAdjust(brightness=(0.5, 1.5))
    vals = {int(op(flat)[0, 0, 0]) for _ in range(40)}
    assert min(vals) >= 50 and max(vals) <= 150 and len(vals) > 5
    assert V.RandomColorAdjust(brightness=0.3).brightness == (0.7, 1.3)
    assert V.RandomColorAdjust(hue=0.3).hue == (-0.3, 0.3)
    rrc = V.RandomResizedCrop(4, scale=(0.2, 0.6), ratio=(0.5, 2.0))
    for _ in range(30):
        top, left, h, w = rrc.crop_box(40, 50)
        assert 0 <= top <= 40 - h and 0 <= left <= 50 - w
        assert 0.15 <= h * w / 2000 <= 0.65 and 0.4 <= w / h <= 2.5
    assert V.RandomRotation(30).degrees == (-30, 30)
    assert V.RandomRotation((-45, -45)).degrees == (315, 315)    # MindSpore's degrees % 360


def test_random_color_adjust_applies_its_steps_in_a_random_order():
    # MindSpore 2.10 gave two different orders on two calls; each call equals one order
    from minispore.dataset import vision_color as C
    img = IMAGES["ramp"]
    op = V.RandomColorAdjust((1.3, 1.3), (0.6, 0.6), (1.4, 1.4), (0.2, 0.2))
    steps = {"b": (C.adjust_brightness, 1.3), "c": (C.adjust_contrast, 0.6),
             "s": (C.adjust_saturation, 1.4), "h": (C.adjust_hue, 0.2)}
    import itertools
    outs = set()
    for perm in itertools.permutations("bcsh"):
        x = img
        for k in perm:
            x = steps[k][0](x, steps[k][1])
        outs.add(x.tobytes())
    seen = {op(img).tobytes() for _ in range(20)}
    assert seen <= outs and len(seen) > 1


def test_decode_gives_mindspores_pixels():
    # MindSpore 2.10 decoded these to exactly Pillow's RGB pixels; GIF/WebP only with to_pil
    from PIL import Image
    img = IMAGES["big"]
    for fmt, kw in [("JPEG", {"quality": 90}), ("PNG", {}), ("BMP", {}), ("TIFF", {})]:
        raw = _encoded(fmt, img, **kw)
        want = np.asarray(Image.open(io.BytesIO(raw.tobytes())).convert("RGB"))
        out = V.Decode()(raw)
        assert out.dtype == np.uint8 and out.shape == (16, 20, 3) and np.array_equal(out, want)
    assert V.Decode()(_encoded("PNG", img[:, :, 0])).shape == (16, 20, 3)   # grey -> RGB
    assert V.Decode(to_pil=True)(_encoded("GIF", img)).mode == "RGB"
    with pytest.raises(RuntimeError, match="unsupported image type"):
        V.Decode()(_encoded("GIF", img))
    with pytest.raises(RuntimeError, match="decode failed"):
        V.Decode()(np.zeros(10, np.uint8))
    with pytest.raises(TypeError, match="1-D"):
        V.Decode()(np.zeros((2, 10), np.uint8))


# MindSpore 2.10 on Image.fromarray(IMAGES["u8"]): (op, result is a PIL image, shape, sum,
# weighted sum) -- its Pillow paths (ImageEnhance, ImageOps, rotate, crop + resize, affine
# transform without a fill colour on Pillow >= 10), values from MindSpore 2.10
PIL_EXPECTED = [
    ('V.Equalize()', True, (5, 7, 3), 14145, 56361),
    ('V.AdjustBrightness(1.4)', True, (5, 7, 3), 18029, 71158),
    ('V.AdjustContrast(0.6)', True, (5, 7, 3), 14367, 57343),
    ('V.AdjustSaturation(1.7)', True, (5, 7, 3), 13876, 55811),
    ('V.AdjustHue(0.2)', True, (5, 7, 3), 14181, 57088),
    ('V.AdjustHue(-0.3)', True, (5, 7, 3), 14132, 56661),
    ('V.RandomColorAdjust()', True, (5, 7, 3), 14152, 56346),
    ('V.RandomColorAdjust(hue=(-0.2, -0.2))', True, (5, 7, 3), 14130, 56778),
    ('V.RandomRotation((30, 30))', True, (5, 7, 3), 11884, 46773),
    ('V.RandomRotation((30, 30), V.Inter.BILINEAR, expand=True, '
     'fill_value=(1, 2, 3))', True, (9, 9, 3), 14424, 54046),
    ('V.RandomRotation((-45, -45), V.Inter.BICUBIC, center=(1, 2))', True, (5, 7, 3), 7073, 27274),
    ('V.Rotate(20, V.Inter.BILINEAR)', False, (5, 7, 3), 12043, 47561),
    ('V.RandomResizedCrop(3, (1, 1), (1.4, 1.4))', True, (3, 3, 3), 3646, 14418),
    ('V.RandomResizedCrop((4, 6), (1, 1), (3.0, 3.0), '
     'V.Inter.BICUBIC)', True, (4, 6, 3), 9750, 38462),
    ('V.RandomResizedCrop(5, (1, 1), (0.3, 0.3), V.Inter.NEAREST)', True, (5, 5, 3), 8865, 35238),
    ('V.RandomAffine((30, 30))', True, (5, 7, 3), 11459, 45054),
    ('V.RandomAffine((30, 30), resample=V.Inter.BILINEAR, '
     'fill_value=(1, 2, 3))', True, (5, 7, 3), 11618, 46178),
    ('V.RandomAffine(0, scale=(1.5, 1.5), '
     'resample=V.Inter.BICUBIC)', True, (5, 7, 3), 13297, 52807),
    ('V.RandomAffine(0, shear=(10, 10))', True, (5, 7, 3), 14145, 56361),
    ('V.RandomAffine(0, shear=(10, 10, -5, -5))', True, (5, 7, 3), 13726, 55424),
    ('V.RandomAffine((-20, -20), scale=(0.8, 0.8), shear=(5, 5, '
     '7, 7), resample=V.Inter.BILINEAR)', True, (5, 7, 3), 9508, 37695),
    ('V.RandomAffine(0, translate=(0.0, 0.0, 0.0, 0.0))', True, (5, 7, 3), 14145, 56361),
]


@pytest.mark.parametrize("expr,is_pil,shape,total,weighted", PIL_EXPECTED,
                         ids=[e for e, *_ in PIL_EXPECTED])
def test_pil_paths_match_mindspore(expr, is_pil, shape, total, weighted):
    from PIL import Image
    out = eval(expr, {"V": V})(Image.fromarray(IMAGES["u8"]))
    assert isinstance(out, Image.Image) == is_pil
    out = np.asarray(out)
    assert out.shape == shape and _checksums(out) == (total, weighted)


def test_pil_images_where_mindspore_takes_them():
    from PIL import Image
    img = IMAGES["u8"]
    pil = Image.fromarray(img)
    out = V.Resize(4, V.Inter.ANTIALIAS)(pil)                 # Pillow's path, a PIL result
    assert isinstance(out, Image.Image) and out.size == (5, 4)
    assert np.array_equal(np.asarray(V.RandomHorizontalFlip(1.0)(pil)), img[:, ::-1])
    assert np.array_equal(V.ToTensor()(pil), V.ToTensor()(img))
    with pytest.raises(TypeError, match="PIL images only"):
        V.Resize(4, V.Inter.ANTIALIAS)(img)
    with pytest.raises(TypeError, match="numpy images only"):
        V.RandomResizedCrop(4, interpolation=V.Inter.AREA)(pil)
    grey = V.Grayscale(3)(pil)                  # MindSpore: Pillow's convert('L'), PIL only
    assert grey.mode == "RGB" and np.array_equal(np.asarray(grey)[..., 0],
                                                 np.asarray(pil.convert("L")))
    assert V.RandomGrayscale(1.0)(pil.convert("L")).mode == "L"
    with pytest.raises(TypeError, match="PIL images only"):
        V.Grayscale()(img)


def test_in_a_pipeline_both_modes():
    raw = [_encoded("PNG", IMAGES["big"]), _encoded("PNG", IMAGES["big"][::-1].copy())]
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        data = NumpySlicesDataset({"image": np.stack(raw), "label": np.array([0, 2])},
                                  shuffle=False)
        data = data.map([V.Decode(), V.Resize((8, 10)), V.RandomHorizontalFlip(0.0),
                         V.Normalize([127.5] * 3, [127.5] * 3), V.HWC2CHW()], "image")
        data = data.map(transforms.OneHot(3), "label").batch(2)
        image, label = next(data.create_tuple_iterator())
        assert image.shape == (2, 3, 8, 10) and image.dtype == ms.float32
        want = (V.Resize((8, 10))(IMAGES["big"]).astype(np.float32) - 127.5) / 127.5
        assert np.allclose(image.asnumpy()[0], want.transpose(2, 0, 1))
        assert label.asnumpy().tolist() == [[1, 0, 0], [0, 0, 1]]
    ms.set_context(mode=ms.PYNATIVE_MODE)


def test_errors_name_the_op():
    img = IMAGES["u8"]
    with pytest.raises(ValueError, match="Resize: size"):
        V.Resize(0)
    with pytest.raises(ValueError, match="Resize: the image"):
        V.Resize(4)(np.zeros(5, np.uint8))
    with pytest.raises(TypeError, match="Resize: the input"):
        V.Resize(4)([1, 2, 3])
    with pytest.raises(ValueError, match="PILCUBIC needs a uint8"):
        V.Resize(4, V.Inter.PILCUBIC)(IMAGES["f32"])
    with pytest.raises(ValueError, match="RandomCrop: the crop size"):
        V.RandomCrop(9)(img)
    with pytest.raises(ValueError, match="Pad: padding"):
        V.Pad((1, 2, 3))
    with pytest.raises(TypeError, match="fill_value"):
        V.Pad(1, fill_value=(1, 2))
    with pytest.raises(ValueError, match=r"\(min, max\)"):
        V.RandomResizedCrop(3, scale=(2, 1))
    with pytest.raises(ValueError, match="hue must lie"):
        V.RandomColorAdjust(hue=(0.6, 0.6))
    with pytest.raises(ValueError, match="brightness must be >= 0"):
        V.RandomColorAdjust(brightness=-1)
    with pytest.raises(TypeError, match="hue works on uint8"):
        V.RandomColorAdjust(hue=(0.1, 0.1))(IMAGES["f32"])
    with pytest.raises(ValueError, match="3 channel"):
        V.RandomColorAdjust((0.5, 0.5))(IMAGES["g1"])
    with pytest.raises(TypeError, match="Equalize: the image dtype"):
        V.Equalize()(IMAGES["f32"])
    with pytest.raises(ValueError, match="RandomRotation: degrees must be >= 0"):
        V.RandomRotation(-30)
    with pytest.raises(ValueError, match="mean must lie"):
        V.Normalize([1, 2, 300], [1, 1, 1])
    with pytest.raises(TypeError, match="interpolation"):
        V.Resize(4, interpolation="bilinear")
