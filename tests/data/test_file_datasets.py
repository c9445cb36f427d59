"""minispore.dataset's on-disk readers (MnistDataset, Cifar10Dataset, Cifar100Dataset,
ImageFolderDataset, TextFileDataset, CSVDataset): each test writes tiny files in the format
into tmp_path (the write_* functions) and reads them. Expected rows, orders, dtypes and shard
splits are values from MindSpore 2.10, which read the same files (CIFAR through full-size
10000-record files with the same leading records, since MindSpore refuses shorter ones)."""
from __future__ import annotations

import os
import struct

import numpy as np
import pytest

import minispore.dataset as ds


def _rows(d, **kw):
    return list(d.create_tuple_iterator(output_numpy=True, **kw))


# ------------------------------------------------------------------------------ writers -----
def write_mnist(root, n_train=7, n_test=3):
    """train: image k filled with 10 + k, label k % 10; t10k: image k filled with 200 + k,
    labels 9, 8, 7."""
    os.makedirs(root, exist_ok=True)
    for prefix, n, base, labels in [("train", n_train, 10, [k % 10 for k in range(n_train)]),
                                    ("t10k", n_test, 200, [9, 8, 7][:n_test])]:
        img = np.stack([np.full((28, 28), base + k, np.uint8) for k in range(n)])
        img[:, 0, 1] = 1                      # pixel (0, 1) tells rows from columns
        with open(os.path.join(root, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + img.tobytes())
        with open(os.path.join(root, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, n) + bytes(labels))


def write_cifar(root, names, labels_per_record, per_file=2):
    """Record r of file k: labels (r + k) % 10 [and (r * 7 + k) % 100]; pixels zero but
    R[0,0] = r, R[0,1] = k, R[1,0] = 77, G[0,0] = 200, B[0,0] = 100."""
    os.makedirs(root, exist_ok=True)
    for k, name in enumerate(names):
        rec = np.zeros((per_file, labels_per_record + 3072), np.uint8)
        rec[:, 0] = (np.arange(per_file) + k) % 10
        if labels_per_record == 2:
            rec[:, 1] = (np.arange(per_file) * 7 + k) % 100
        px = rec[:, labels_per_record:]
        px[:, 0], px[:, 1], px[:, 32] = np.arange(per_file), k, 77
        px[:, 1024], px[:, 2048] = 200, 100
        rec.tofile(os.path.join(root, name))


CIFAR10_FILES = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]


def write_image_folder(root):
    """Classes Zebra, bird, cat, dog, empty (no files); PNG images of known pixels (dog also
    has a hidden file, a .JPEG-named copy and a text file; cat a sub-folder)."""
    from PIL import Image
    rng = np.random.default_rng(0)
    pixels = {}
    for c in ["Zebra", "bird", "cat", "dog", "empty"]:
        os.makedirs(os.path.join(root, c), exist_ok=True)
    for rel, (h, w) in [("Zebra/q.png", (1, 1)), ("bird/z.png", (2, 3)), ("cat/x.png", (2, 2)),
                        ("dog/b.png", (2, 3)), ("dog/a.png", (3, 2)),
                        ("dog/.hidden.png", (1, 2)), ("top.png", (1, 1))]:
        arr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        Image.fromarray(arr).save(os.path.join(root, rel), format="PNG")
        pixels[rel] = arr
    with open(os.path.join(root, "dog/a.png"), "rb") as f:
        png = f.read()
    with open(os.path.join(root, "dog/c.PNG"), "wb") as f:
        f.write(png)
    with open(os.path.join(root, "cat/notes.txt"), "w") as f:
        f.write("hello")
    os.makedirs(os.path.join(root, "cat/sub"))
    return pixels


def write_text(root):
    os.makedirs(root, exist_ok=True)
    for name, text in [("a.txt", "a1\na2\na3\na4\na5\n"), ("b.txt", "b1\nb2\n"),
                       ("c.txt", "c1\n\nc3\r\n  c4 \nc5")]:
        with open(os.path.join(root, name), "w", newline="") as f:
            f.write(text)
    return os.path.join(root, "*.txt")


# ------------------------------------------------------------------------------ MNIST -------
def test_mnist_columns_dtypes_and_usage_order(tmp_path):
    write_mnist(tmp_path)
    d = ds.MnistDataset(str(tmp_path), shuffle=False)
    assert d.get_col_names() == ["image", "label"] and d.get_dataset_size() == 10
    rows = _rows(d)
    image, label = rows[0]
    assert image.shape == (28, 28, 1) and image.dtype == np.uint8
    assert label.shape == () and label.dtype == np.uint32        # MindSpore 2.10: UInt32
    assert image[0, 1, 0] == 1 and image[1, 0, 0] == 200
    # usage 'all' (None): the t10k files first (sorted names), as MindSpore reads them
    assert [int(r[1]) for r in rows] == [9, 8, 7, 0, 1, 2, 3, 4, 5, 6]
    assert [int(r[0][5, 5, 0]) for r in rows] == [200, 201, 202] + list(range(10, 17))
    train = ds.MnistDataset(str(tmp_path), usage="train", shuffle=False)
    test = ds.MnistDataset(str(tmp_path), usage="test", shuffle=False)
    assert train.get_dataset_size() == 7 and test.get_dataset_size() == 3
    assert [int(r[1]) for r in _rows(test)] == [9, 8, 7]


def _positions(d):
    return [int(r[0][5, 5, 0]) for r in _rows(d)]


def test_mnist_shards_and_num_samples_split_as_mindspore(tmp_path):
    write_mnist(tmp_path)
    order = _positions(ds.MnistDataset(str(tmp_path), shuffle=False))
    pos = {v: i for i, v in enumerate(order)}

    def shard(n, k, **kw):
        d = ds.MnistDataset(str(tmp_path), shuffle=False, num_shards=n, shard_id=k, **kw)
        got = [pos[v] for v in _positions(d)]
        assert d.get_dataset_size() == len(got)
        return got
    # values from MindSpore 2.10 (rows by position in the unshuffled order)
    assert [shard(3, k) for k in range(3)] == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert [shard(3, k, num_samples=2) for k in range(3)] == [[0, 3], [1, 4], [2, 5]]
    assert [shard(4, k) for k in range(4)] == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    assert ds.MnistDataset(str(tmp_path), shuffle=False, num_samples=20).get_dataset_size() == 10
    test_shard = ds.MnistDataset(str(tmp_path), usage="test", shuffle=False, num_shards=2,
                                 shard_id=1)
    assert [int(r[1]) for r in _rows(test_shard)] == [8, 9]
    # shuffled shards: one permutation shared by all shards (4 + 4 + 4 rows covering all 10)
    ds.config.set_seed(5)
    shards = [_positions(ds.MnistDataset(str(tmp_path), num_shards=3, shard_id=k))
              for k in range(3)]
    assert all(len(s) == 4 for s in shards) and set(sum(shards, [])) == set(order)
    ds.config.set_seed(5)
    assert _positions(ds.MnistDataset(str(tmp_path), num_shards=3, shard_id=0)) == shards[0]
    # shuffle with num_samples draws num_samples rows with replacement (RandomSampler)
    drawn = ds.MnistDataset(str(tmp_path), shuffle=True, num_samples=6)
    assert drawn.get_dataset_size() == 6 and len(_positions(drawn)) == 6
    picked = ds.MnistDataset(str(tmp_path), sampler=ds.SequentialSampler(start_index=8))
    assert [pos[v] for v in _positions(picked)] == [8, 9]


def test_mnist_errors_name_the_reader_the_path_and_the_fix(tmp_path):
    with pytest.raises(ValueError, match="MnistDataset.*does not exist"):
        ds.MnistDataset(str(tmp_path / "missing"))
    write_mnist(tmp_path)
    with pytest.raises(ValueError, match="usage='valid'.*'train', 'test' or 'all'"):
        ds.MnistDataset(str(tmp_path), usage="valid")
    with pytest.raises(NotImplementedError, match="cache="):
        ds.MnistDataset(str(tmp_path), cache=object())
    with pytest.raises(TypeError, match="shuffle"):
        ds.MnistDataset(str(tmp_path), shuffle=1)
    with pytest.raises(ValueError, match="num_parallel_workers"):
        ds.MnistDataset(str(tmp_path), num_parallel_workers=(os.cpu_count() or 1) + 1)
    with pytest.raises(ValueError, match="num_shards and shard_id"):
        ds.MnistDataset(str(tmp_path), num_shards=2)
    with pytest.raises(ValueError, match="conflicts"):
        ds.MnistDataset(str(tmp_path), sampler=ds.SequentialSampler(), shuffle=False)
    with pytest.raises(ValueError, match="no MNIST image file"):
        ds.MnistDataset(str(tmp_path / ".."), usage="train")
    bad = tmp_path / "bad"
    write_mnist(bad)
    path = bad / "t10k-images-idx3-ubyte"
    data = path.read_bytes()
    path.write_bytes(struct.pack(">I", 2049) + data[4:])
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte has magic number 2049, expected"
                                         " 2051"):
        ds.MnistDataset(str(bad))
    path.write_bytes(data[:-5])
    with pytest.raises(ValueError, match="truncated"):
        ds.MnistDataset(str(bad), usage="test")
    path.write_bytes(struct.pack(">IIII", 2051, 3, 27, 29) + bytes(3 * 27 * 29))
    with pytest.raises(ValueError, match="27x29; MNIST images must be 28x28"):
        ds.MnistDataset(str(bad), usage="test")
    os.remove(bad / "train-labels-idx1-ubyte")
    with pytest.raises(ValueError, match="label file"):
        ds.MnistDataset(str(bad), usage="train")


# ------------------------------------------------------------------------------ CIFAR -------
def test_cifar10_hwc_layout_usage_and_file_selection(tmp_path):
    write_cifar(tmp_path, CIFAR10_FILES + ["other.bin"], 1)
    (tmp_path / "data_batch_9.txt").write_bytes(bytes(3073))
    d = ds.Cifar10Dataset(str(tmp_path), shuffle=False)
    assert d.get_col_names() == ["image", "label"] and d.get_dataset_size() == 12
    rows = _rows(d)
    image, label = rows[0]
    assert image.shape == (32, 32, 3) and image.dtype == np.uint8
    assert label.shape == () and label.dtype == np.uint32
    # values from MindSpore 2.10: CHW records become HWC images
    assert image[0, 0].tolist() == [0, 200, 100] and image[0, 1].tolist() == [0, 0, 0]
    assert image[1, 0].tolist() == [77, 0, 0]
    # 'all': data_batch_1..5 then test_batch (sorted); other.bin has no "batch" in its name
    assert [int(r[0][0, 1, 0]) for r in rows] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert [int(r[1]) for r in rows[:4]] == [0, 1, 1, 2]
    test = _rows(ds.Cifar10Dataset(str(tmp_path), usage="test", shuffle=False))
    assert [int(r[1]) for r in test] == [5, 6] and [int(r[0][0, 0, 0]) for r in test] == [0, 1]
    assert ds.Cifar10Dataset(str(tmp_path), usage="train").get_dataset_size() == 10
    shard = ds.Cifar10Dataset(str(tmp_path), shuffle=False, num_shards=5, shard_id=1)
    assert [int(r[1]) for r in _rows(shard)] == [1, 3, 6]


def test_cifar100_columns_and_test_file_first(tmp_path):
    write_cifar(tmp_path, ["train.bin", "test.bin"], 2, per_file=3)
    d = ds.Cifar100Dataset(str(tmp_path), shuffle=False)
    assert d.get_col_names() == ["image", "coarse_label", "fine_label"]
    rows = _rows(d)
    assert all(r[1].dtype == np.uint32 and r[2].dtype == np.uint32 for r in rows)
    # values from MindSpore 2.10: 'all' reads test.bin (file 1) before train.bin (file 0)
    assert [(int(r[1]), int(r[2]), int(r[0][0, 1, 0])) for r in rows] == \
        [(1, 1, 1), (2, 8, 1), (3, 15, 1), (0, 0, 0), (1, 7, 0), (2, 14, 0)]
    assert rows[0][0].shape == (32, 32, 3) and rows[0][0][0, 0].tolist() == [0, 200, 100]
    train = _rows(ds.Cifar100Dataset(str(tmp_path), usage="train", shuffle=False))
    assert [int(r[2]) for r in train] == [0, 7, 14]


def test_cifar_errors(tmp_path):
    with pytest.raises(ValueError, match="Cifar10Dataset.*does not exist"):
        ds.Cifar10Dataset(str(tmp_path / "nope"))
    write_cifar(tmp_path, ["train.bin"], 2)
    with pytest.raises(ValueError, match="no data_batch_\\* .bin file for usage='train'"):
        ds.Cifar10Dataset(str(tmp_path), usage="train")
    with pytest.raises(ValueError, match="no test .bin file"):
        ds.Cifar100Dataset(str(tmp_path), usage="test")
    with pytest.raises(ValueError, match="usage="):
        ds.Cifar100Dataset(str(tmp_path), usage="valid")
    with open(tmp_path / "test.bin", "wb") as f:
        f.write(bytes(3074 + 5))
    with pytest.raises(ValueError, match="test.bin holds 3079 bytes, not a whole number of "
                                         "3074-byte records"):
        ds.Cifar100Dataset(str(tmp_path))


# ---------------------------------------------------------------------- image folders ------
def test_image_folder_raw_bytes_labels_and_order(tmp_path):
    write_image_folder(tmp_path)
    d = ds.ImageFolderDataset(str(tmp_path), shuffle=False, extensions=[".png"])
    # values from MindSpore 2.10: sorted folders (empty ones count), sorted files (hidden
    # included), case-sensitive extensions, top-level files ignored, label int32
    assert d.get_class_indexing() == {"Zebra": 0, "bird": 1, "cat": 2, "dog": 3, "empty": 4}
    assert d.num_classes() == 5 and d.get_dataset_size() == 6
    rows = _rows(d)
    files = ["Zebra/q.png", "bird/z.png", "cat/x.png", "dog/.hidden.png", "dog/a.png",
             "dog/b.png"]
    assert [int(r[1]) for r in rows] == [0, 1, 2, 3, 3, 3]
    for (image, label), rel in zip(rows, files):
        assert label.dtype == np.int32 and label.shape == ()
        assert image.dtype == np.uint8 and image.ndim == 1
        assert image.tobytes() == (tmp_path / rel).read_bytes()
    both = ds.ImageFolderDataset(str(tmp_path), shuffle=False, extensions=[".png", ".PNG"])
    assert both.get_dataset_size() == 7
    # class_indexing: only its folders, still in folder-name order, labels from the dict
    picked = ds.ImageFolderDataset(str(tmp_path), shuffle=False, extensions=[".png"],
                                   class_indexing={"dog": 0, "cat": 1, "nope": 2})
    assert [int(r[1]) for r in _rows(picked)] == [1, 0, 0, 0]
    assert ds.ImageFolderDataset(str(tmp_path), class_indexing={"dog": 7, "cat": 1}) \
        .num_classes() == 2
    # without extensions every entry is a row: notes.txt's bytes, and cat/sub fails on reading
    every = ds.ImageFolderDataset(str(tmp_path), shuffle=False)
    assert every.get_dataset_size() == 9
    with pytest.raises(RuntimeError, match="cat.sub is a directory"):
        _rows(every)
    texts = ds.ImageFolderDataset(str(tmp_path), shuffle=False, extensions=[".txt"])
    assert _rows(texts)[0][0].tobytes() == b"hello"
    shard = ds.ImageFolderDataset(str(tmp_path), shuffle=False, extensions=[".png"],
                                  num_shards=4, shard_id=1)
    assert [int(r[1]) for r in _rows(shard)] == [1, 3]


def test_image_folder_decode_and_decrypt(tmp_path):
    pixels = write_image_folder(tmp_path)
    calls = []

    def decrypt(path):
        calls.append(os.path.basename(path))
        with open(path, "rb") as f:
            return f.read()
    raw = _rows(ds.ImageFolderDataset(str(tmp_path), shuffle=False, extensions=[".png"],
                                      decrypt=decrypt, class_indexing={"bird": 1}))
    assert calls == ["z.png"] and raw[0][0].tobytes() == (tmp_path / "bird/z.png").read_bytes()
    try:
        from minispore.dataset.vision import Decode  # noqa: F401
    except ImportError:
        pytest.skip("minispore.dataset.vision.Decode is not available")
    d = ds.ImageFolderDataset(str(tmp_path), shuffle=False, extensions=[".png"], decode=True)
    rows = _rows(d)
    for (image, _), rel in zip(rows, ["Zebra/q.png", "bird/z.png", "cat/x.png",
                                      "dog/.hidden.png", "dog/a.png", "dog/b.png"]):
        assert image.dtype == np.uint8 and image.shape == pixels[rel].shape
        np.testing.assert_array_equal(image, pixels[rel])
    broken = ds.ImageFolderDataset(str(tmp_path), shuffle=False, extensions=[".txt"],
                                   decode=True)
    with pytest.raises(RuntimeError, match="notes.txt could not be decoded"):
        _rows(broken)


def test_image_folder_argument_errors(tmp_path):
    write_image_folder(tmp_path)
    root = str(tmp_path)
    with pytest.raises(TypeError, match="extensions must be a list"):
        ds.ImageFolderDataset(root, extensions=".png")
    with pytest.raises(TypeError, match="class_indexing must be a dict"):
        ds.ImageFolderDataset(root, class_indexing=["dog"])
    with pytest.raises(TypeError, match="decode must be a bool"):
        ds.ImageFolderDataset(root, decode=1)
    with pytest.raises(TypeError, match="decrypt must be a callable"):
        ds.ImageFolderDataset(root, decrypt="key")
    with pytest.raises(NotImplementedError, match="cache="):
        ds.ImageFolderDataset(root, cache=1)
    with pytest.raises(ValueError, match="no image files"):
        ds.ImageFolderDataset(root, extensions=["png"])        # MindSpore's need the dot
    with pytest.raises(ValueError, match="no image files"):
        ds.ImageFolderDataset(str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="does not exist or is not a directory"):
        ds.ImageFolderDataset(str(tmp_path / "top.png"))


# ------------------------------------------------------------------------- text files ------
def _texts(d):
    return [r[0].item() for r in _rows(d)]


def test_text_file_lines_workers_and_shards(tmp_path):
    pattern = write_text(tmp_path)
    one = ds.TextFileDataset(str(tmp_path / "c.txt"), shuffle=False)
    assert one.get_col_names() == ["text"] and one.get_dataset_size() == 4
    row = _rows(one)[0][0]
    assert row.dtype.kind == "U" and row.shape == ()
    # values from MindSpore 2.10: empty lines skipped, '\r' kept, no newline at the end is fine
    assert _texts(one) == ["c1", "c3\r", "  c4 ", "c5"]

    def read(**kw):
        d = ds.TextFileDataset(pattern, shuffle=False, **kw)
        got = _texts(d)
        assert d.get_dataset_size() == len(got)
        return got
    every = ["a1", "a2", "a3", "a4", "a5", "b1", "b2", "c1", "c3\r", "  c4 ", "c5"]
    assert read(num_parallel_workers=1) == every
    assert read(num_parallel_workers=1, num_samples=3) == ["a1", "a2", "a3"]
    assert [read(num_parallel_workers=1, num_shards=3, shard_id=k) for k in range(3)] == \
        [every[0:4], every[4:8], every[8:] + ["a1"]]
    assert [read(num_parallel_workers=1, num_shards=2, shard_id=k, num_samples=3)
            for k in range(2)] == [["a1", "a2", "a3"], ["b2", "c1", "c3\r"]]
    assert [read(num_parallel_workers=1, num_shards=4, shard_id=k) for k in range(4)][3] == \
        ["  c4 ", "c5", "a1"]
    if (os.cpu_count() or 1) >= 2:
        # two workers: one row from each in turn (worker 0 reads a then c, worker 1 reads b)
        assert read(num_parallel_workers=2) == \
            ["a1", "b1", "a2", "b2", "a3", "a4", "a5", "c1", "c3\r", "  c4 ", "c5"]
        assert [read(num_parallel_workers=2, num_shards=3, shard_id=k) for k in range(1, 3)] \
            == [["a5", "b1", "c1", "b2"], ["c3\r", "a1", "  c4 ", "c5"]]
        assert [read(num_parallel_workers=2, num_shards=2, shard_id=k) for k in range(2)] == \
            [["a1", "b1", "a2", "a3", "a4", "a5"], ["b2", "c1", "a1", "c3\r", "  c4 ", "c5"]]
    files = [str(tmp_path / "b.txt"), str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert _texts(ds.TextFileDataset(files, shuffle=False, num_parallel_workers=1)) == \
        ["a1", "a2", "a3", "a4", "a5", "b1", "b2", "b1", "b2"]
    two = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert [_texts(ds.TextFileDataset(two, shuffle=False, num_parallel_workers=1, num_shards=5,
                                      shard_id=k)) for k in (3, 4)] == [["b2", "a1"],
                                                                       ["a2", "a3"]]


def test_text_file_shuffle_modes(tmp_path):
    pattern = write_text(tmp_path)
    every = _texts(ds.TextFileDataset(pattern, shuffle=False, num_parallel_workers=1))
    files = {"a": every[:5], "b": every[5:7], "c": every[7:]}
    ds.config.set_seed(3)
    d = ds.TextFileDataset(pattern, shuffle=ds.Shuffle.FILES, num_parallel_workers=1)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=4)
    epochs = [[r[0].item() for r in it] for _ in range(4)]
    for e in epochs:                        # whole files in some order, each file in order
        order = sorted(files, key=lambda f: e.index(files[f][0]))
        assert e == sum((files[f] for f in order), [])
    assert len({tuple(e) for e in epochs}) > 1
    # the shards of one FILES/GLOBAL epoch see the same file order: disjoint runs, wrapping
    for mode in (ds.Shuffle.FILES, ds.Shuffle.GLOBAL, True, None):
        ds.config.set_seed(3)
        shards = [_texts(ds.TextFileDataset(pattern, shuffle=mode, num_shards=2, shard_id=k,
                                            num_parallel_workers=1)) for k in range(2)]
        assert len(shards[0]) == len(shards[1]) == 6
        assert set(shards[0] + shards[1]) == set(every)         # 12 rows: one wraps around
    ds.config.set_seed(3)
    first = _texts(ds.TextFileDataset(pattern, num_parallel_workers=1))
    ds.config.set_seed(3)
    assert _texts(ds.TextFileDataset(pattern, num_parallel_workers=1)) == first
    assert sorted(first) == sorted(every) and first != every
    # values from MindSpore 2.10: INFILE, ADAPTIVE, PARTIAL and FALSE read in file order
    for mode in (ds.Shuffle.INFILE, ds.Shuffle.ADAPTIVE, ds.Shuffle.PARTIAL, ds.Shuffle.FALSE):
        assert _texts(ds.TextFileDataset(pattern, shuffle=mode, num_parallel_workers=1)) == every
    assert ds.TextFileDataset(pattern, shuffle=False).is_shuffled() is False
    assert ds.TextFileDataset(pattern).is_shuffled() is True
    assert ds.Shuffle.GLOBAL.value == "global" and ds.Shuffle("files") is ds.Shuffle.FILES


def test_text_file_errors(tmp_path):
    pattern = write_text(tmp_path)
    with pytest.raises(ValueError, match="TextFileDataset: these dataset_files patterns match "
                                         "no file: .*nope"):
        ds.TextFileDataset(str(tmp_path / "nope*.txt"))
    with pytest.raises(ValueError, match="match no file"):
        ds.TextFileDataset([str(tmp_path / "a.txt"), str(tmp_path / "gone.txt")])
    with pytest.raises(ValueError, match="match no file"):
        ds.TextFileDataset(str(tmp_path))                      # a directory is no file
    with pytest.raises(ValueError, match="empty"):
        ds.TextFileDataset([])
    with pytest.raises(TypeError, match="shuffle must be a bool or a mindspore.dataset.Shuffle"):
        ds.TextFileDataset(pattern, shuffle="global")
    with pytest.raises(NotImplementedError, match="cache="):
        ds.TextFileDataset(pattern, cache=0)
    with pytest.raises(ValueError, match="num_shards and shard_id"):
        ds.TextFileDataset(pattern, num_shards=2)
    with pytest.raises(ValueError, match="shard_id must be in"):
        ds.TextFileDataset(pattern, num_shards=2, shard_id=2)
    with pytest.raises(TypeError, match="num_samples"):
        ds.TextFileDataset(pattern, num_samples=1.5)


# -------------------------------------------------------------------------------- CSV -------
def _csv(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return str(path)


def _values(d):
    return [[x.item() for x in r] for r in _rows(d)]


def test_csv_string_columns_quotes_and_headers(tmp_path):
    f1 = _csv(tmp_path, "f1.csv", 'a,b,c,d\n1,2.5,x,7\n3,,"q,u",8\n,4.25,"say ""hi""",\n')
    _csv(tmp_path, "f2.csv", "a,b,c,d\n10,20.5,y,9\n")
    d = ds.CSVDataset(f1, shuffle=False)
    assert d.get_col_names() == ["a", "b", "c", "d"] and d.get_dataset_size() == 3
    rows = _rows(d)
    assert all(x.dtype.kind == "U" and x.shape == () for x in rows[0])
    # values from MindSpore 2.10 (every column str without column_defaults)
    assert _values(d) == [["1", "2.5", "x", "7"], ["3", "", "q,u", "8"],
                          ["", "4.25", 'say "hi"', ""]]
    both = ds.CSVDataset(str(tmp_path / "*.csv"), shuffle=False, num_parallel_workers=1)
    assert both.get_dataset_size() == 4 and _values(both)[3] == ["10", "20.5", "y", "9"]
    if (os.cpu_count() or 1) >= 2:
        two = ds.CSVDataset(str(tmp_path / "*.csv"), shuffle=False, num_parallel_workers=2)
        assert [r[0] for r in _values(two)] == ["1", "10", "3", ""]
    multi = _csv(tmp_path, "m.csv", 'a,b\n"x\ny",z\r\n\r\n"",w\n x , y ')
    assert _values(ds.CSVDataset(multi, shuffle=False)) == [["x\ny", "z"], ["", "w"],
                                                           [" x ", " y "]]
    # the header is split as it is (MindSpore keeps its quotes); column_names: no header
    quoted = _csv(tmp_path, "h.csv", '"a b";c\n1;2\n')
    assert ds.CSVDataset(quoted, field_delim=";").get_col_names() == ['"a b"', "c"]
    named = ds.CSVDataset(quoted, field_delim=";", column_names=["p", "q"], shuffle=False)
    assert _values(named) == [["a b", "c"], ["1", "2"]]


def test_csv_column_defaults_types_and_c_parsing(tmp_path):
    path = _csv(tmp_path, "t.csv", "i,f,s,rest\n+3,2.5abc,x,7\n 7 ,1e,,8\n3abc,0x1p3,y,9\n"
                                   "2.5,-inf,z,1\n-2147483648,Infinity,w,2\n")
    d = ds.CSVDataset(path, column_defaults=[0, 0.0, "s"], shuffle=False)
    rows = _rows(d)
    assert [x.dtype for x in rows[0]] == [np.int32, np.float32, np.dtype("<U1"),
                                         np.dtype("<U1")]
    # values from MindSpore 2.10: std::stoi / std::stof prefixes; an empty str field is ''
    assert _values(d) == [[3, 2.5, "x", "7"], [7, 1.0, "", "8"], [3, 8.0, "y", "9"],
                          [2, float("-inf"), "z", "1"], [-2147483648, float("inf"), "w", "2"]]
    assert _values(ds.CSVDataset(path, column_defaults=[True, 1.0], shuffle=False))[0][:2] == \
        [3, 2.5]                                                  # bool is an int: int32
    for field, default, what in [("", 0, "column 'a' holds '', which is not an int32"),
                                 ("", 0.0, "holds '', which is not a float32"),
                                 ("2147483648", 0, "not an int32"), ("abc", 0.0, "not a float32"),
                                 ("1e40", 0.0, "not a float32"), ("1e-50", 0.0, "not a float32")]:
        bad = _csv(tmp_path, "bad.csv", f"a,b\n{field},1\n")
        with pytest.raises(ValueError, match=what):
            _rows(ds.CSVDataset(bad, column_defaults=[default, 0], shuffle=False))


def test_csv_errors(tmp_path):
    path = _csv(tmp_path, "g.csv", "a,b\nx,y\n")
    for text, what in [("a,b\nx,y,\n", "line 2 has 3 field\\(s\\) but there are 2 columns"),
                       ("a,b\nx\n", "has 1 field"),
                       ('a,b\nx,"y"z\n', "after a closing quote"),
                       ('a,b\nx,y"z\n', "a quote inside an unquoted field"),
                       ('a,b\nx,"yz\n', "not closed")]:
        bad = _csv(tmp_path, "bad.csv", text)
        with pytest.raises(ValueError, match=what):
            _rows(ds.CSVDataset(bad, shuffle=False))
    with pytest.raises(ValueError, match="3 column_defaults for 2 column"):
        ds.CSVDataset(path, column_defaults=[0, 0, 0])
    with pytest.raises(TypeError, match="column_defaults\\[1\\] must be an int, float or str"):
        ds.CSVDataset(path, column_defaults=[0, None])
    with pytest.raises(TypeError, match="column_defaults must be a list"):
        ds.CSVDataset(path, column_defaults=(0, 0))
    with pytest.raises(TypeError, match="column_names must be a list of str"):
        ds.CSVDataset(path, column_names=["a", 1])
    with pytest.raises(ValueError, match="repeat a name"):
        ds.CSVDataset(path, column_names=["a", "a"])
    for delim in ['"', "\n", ";;"]:
        with pytest.raises(ValueError, match="field_delim"):
            ds.CSVDataset(path, field_delim=delim)
    with pytest.raises(NotImplementedError, match="cache="):
        ds.CSVDataset(path, cache=1)
    with pytest.raises(ValueError, match="match no file"):
        ds.CSVDataset(str(tmp_path / "*.tsv"))


def test_reader_signatures_match_mindspore():
    import inspect
    sig = {name: str(inspect.signature(getattr(ds, name))) for name in
           ["MnistDataset", "Cifar10Dataset", "Cifar100Dataset", "ImageFolderDataset",
            "CSVDataset", "TextFileDataset"]}
    # MindSpore 2.10's signatures (tools/reference/mindspore-2.10-signatures.json)
    assert sig["ImageFolderDataset"] == (
        "(dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,"
        " extensions=None, class_indexing=None, decode=False, num_shards=None, shard_id=None, "
        "cache=None, decrypt=None)")
    assert sig["CSVDataset"] == (
        "(dataset_files, field_delim=',', column_defaults=None, column_names=None, "
        "num_samples=None, num_parallel_workers=None, shuffle=<Shuffle.GLOBAL: 'global'>, "
        "num_shards=None, shard_id=None, cache=None)")
    for name in ["MnistDataset", "Cifar10Dataset", "Cifar100Dataset"]:
        assert sig[name] == ("(dataset_dir, usage=None, num_samples=None, "
                             "num_parallel_workers=None, shuffle=None, sampler=None, "
                             "num_shards=None, shard_id=None, cache=None)")
    from minispore.dataset import engine
    assert engine.MnistDataset is ds.MnistDataset and engine.Shuffle is ds.Shuffle
