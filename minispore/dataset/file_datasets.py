"""mindspore.dataset's readers of image data sets in their standard on-disk formats, pointed at
files the user has (nothing is downloaded): MNIST's idx files (MnistDataset), the CIFAR-10 and
CIFAR-100 binary batches (Cifar10Dataset, Cifar100Dataset) and a folder of images per class
(ImageFolderDataset).

Each is a random-access source read through GeneratorDataset's sampler machinery, so
`num_samples`, `shuffle`, `sampler`, `num_shards` and `shard_id` choose rows exactly as for any
MindSpore mappable dataset (`samplers.select_sampler`). Files are listed and their headers
checked when the dataset is built; the pixels are read lazily (memory-mapped idx/CIFAR files,
one image file per row). Columns, dtypes and layouts are MindSpore 2.10's:

- MnistDataset: image uint8 (28, 28, 1), label uint32 ().
- Cifar10Dataset: image uint8 (32, 32, 3) HWC, label uint32 ().
- Cifar100Dataset: image uint8 (32, 32, 3), coarse_label uint32 (), fine_label uint32 ().
- ImageFolderDataset: image uint8, the file's bytes (1-D) or, with decode=True, the decoded
  (H, W, 3) image; label int32 () (MindSpore's docs say uint32; MindSpore 2.10 yields int32).

`usage="all"` (the default) reads the matching files in sorted path order, as MindSpore does:
MNIST's t10k (test) files before train, CIFAR-10's data_batch_* before test_batch, CIFAR-100's
test.bin before train.bin. `cache=` (a DatasetCache server) is not supported and raises.
"""
from __future__ import annotations

import os

import numpy as np

from . import GeneratorDataset
from .sources import _check_shards as check_shards  # noqa: F401  (the readers' too)
from .samplers import _check_num_samples

_MNIST_SIDE = 28
_CIFAR_SIDE = 32
_CIFAR_PIXELS = 3 * _CIFAR_SIDE * _CIFAR_SIDE
_CIFAR10_PER_FILE = 10000                       # records MindSpore reads from each batch file
_CIFAR100_PER_FILE = {"test": 10000, "train": 50000}


# ------------------------------------------------------------------------ shared checks -----
def check_workers(who: str, num_parallel_workers):
    """None (the configured default) or an int in [1, CPU count], MindSpore's bounds."""
    if num_parallel_workers is None:
        return None
    if not isinstance(num_parallel_workers, int) or isinstance(num_parallel_workers, bool):
        raise TypeError(f"{who}: num_parallel_workers must be an int, got "
                        f"{num_parallel_workers!r} ({type(num_parallel_workers).__name__})")
    cpus = os.cpu_count() or 1
    if not 1 <= num_parallel_workers <= cpus:
        raise ValueError(f"{who}: num_parallel_workers must be in [1, {cpus}] (this machine's "
                         f"CPU count, as MindSpore requires), got {num_parallel_workers}")
    return num_parallel_workers


def refuse_cache(who: str, cache):
    if cache is not None:
        raise NotImplementedError(f"{who}: cache= (a DatasetCache server) is not supported by "
                                  f"minispore; drop the argument (the data is read from disk "
                                  f"every epoch)")


def _check_dir(who: str, dataset_dir) -> str:
    if not isinstance(dataset_dir, (str, os.PathLike)):
        raise TypeError(f"{who}: dataset_dir must be a str path, got "
                        f"{type(dataset_dir).__name__}")
    dataset_dir = os.fspath(dataset_dir)
    if not os.path.isdir(dataset_dir):
        raise ValueError(f"{who}: dataset_dir {dataset_dir!r} does not exist or is not a "
                         f"directory")
    return dataset_dir


def _check_usage(who: str, usage) -> str:
    if usage is None:
        return "all"
    if not isinstance(usage, str):
        raise TypeError(f"{who}: usage must be a str, got {usage!r} ({type(usage).__name__})")
    if usage not in ("train", "test", "all"):
        raise ValueError(f"{who}: usage={usage!r} is not valid; use 'train', 'test' or 'all'")
    return usage


def _check_shuffle(who: str, shuffle):
    if shuffle is not None and not isinstance(shuffle, bool):
        raise TypeError(f"{who}: shuffle must be a bool or None, got {shuffle!r} "
                        f"({type(shuffle).__name__})")


def _files_in(dataset_dir: str) -> list:
    """The regular files directly inside `dataset_dir`, as sorted full paths."""
    return sorted(p for p in (os.path.join(dataset_dir, n) for n in os.listdir(dataset_dir))
                  if os.path.isfile(p))


class _Rows:
    """Random access to the rows of a reader: `row(i)` -> tuple of numpy values."""

    def __init__(self, n: int, row):
        self._n, self._row = n, row

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        return self._row(int(i))


class _FileReader(GeneratorDataset):
    """A mappable on-disk reader: validates the common arguments and samples `rows` with
    GeneratorDataset's sampler selection (in this thread: the row order does not depend on
    the number of workers for a mappable source)."""

    def __init__(self, rows: _Rows, column_names, num_samples, num_parallel_workers, shuffle,
                 sampler, num_shards, shard_id, cache):
        who = type(self).__name__
        refuse_cache(who, cache)
        check_workers(who, num_parallel_workers)
        _check_shuffle(who, shuffle)
        _check_num_samples(num_samples, who)
        check_shards(who, num_shards, shard_id)
        super().__init__(rows, column_names=column_names, num_samples=num_samples,
                         num_parallel_workers=1, shuffle=shuffle, sampler=sampler,
                         num_shards=num_shards, shard_id=shard_id,
                         python_multiprocessing=False)


# ------------------------------------------------------------------------------ MNIST -------
def _read_idx_header(who: str, path: str, magic: int, ndim: int) -> tuple:
    """The dimensions an idx file's header declares, after checking its magic and size."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(4 + 4 * ndim)
    if len(head) < 4 + 4 * ndim:
        raise ValueError(f"{who}: {path} is too short ({size} bytes) to be an idx file; "
                         f"expected a {4 + 4 * ndim}-byte header")
    found, *dims = np.frombuffer(head, dtype=">u4").tolist()
    if found != magic:
        raise ValueError(f"{who}: {path} has magic number {found}, expected {magic} (an "
                         f"idx{ndim}-ubyte {'image' if ndim == 3 else 'label'} file)")
    need = 4 + 4 * ndim + int(np.prod(dims))
    if size < need:
        raise ValueError(f"{who}: {path} holds {size} bytes but its header {dims} needs "
                         f"{need}; the file is truncated")
    return tuple(dims)


class MnistDataset(_FileReader):
    """MNIST's idx files in `dataset_dir` (train-images-idx3-ubyte, train-labels-idx1-ubyte,
    t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte; `usage` 'train', 'test' or 'all' (None)).
    Columns image uint8 (28, 28, 1) and label uint32 (). Images must be 28x28, as MindSpore
    requires."""

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        who = "MnistDataset"
        self.dataset_dir = _check_dir(who, dataset_dir)
        self.usage = _check_usage(who, usage)
        prefix = {"train": "train", "test": "t10k", "all": ""}[self.usage]
        names = [(p, os.path.basename(p)) for p in _files_in(self.dataset_dir)]
        images = [p for p, n in names if prefix + "-images" in n and "idx3-ubyte" in n]
        labels = [p for p, n in names if prefix + "-labels" in n and "idx1-ubyte" in n]
        if not images:
            raise ValueError(f"{who}: no MNIST image file ('{prefix or '*'}-images-idx3-ubyte')"
                             f" for usage={self.usage!r} in {self.dataset_dir!r}")
        if len(images) != len(labels):
            raise ValueError(f"{who}: {len(images)} image file(s) {images} but {len(labels)} "
                             f"label file(s) {labels} in {self.dataset_dir!r}; each "
                             f"*-images-idx3-ubyte needs its *-labels-idx1-ubyte")
        self._pairs = []
        for img, lab in zip(images, labels):
            n, h, w = _read_idx_header(who, img, 2051, 3)
            (m,) = _read_idx_header(who, lab, 2049, 1)
            if (h, w) != (_MNIST_SIDE, _MNIST_SIDE):
                raise ValueError(f"{who}: the images in {img} are {h}x{w}; MNIST images must "
                                 f"be {_MNIST_SIDE}x{_MNIST_SIDE}")
            if n != m:
                raise ValueError(f"{who}: {img} holds {n} images but {lab} holds {m} labels")
            self._pairs.append((img, lab, n))
        self._maps = None
        starts = np.cumsum([0] + [n for _, _, n in self._pairs])
        self._starts = starts

        def row(i):
            maps = self._open()
            k = int(np.searchsorted(self._starts, i, side="right")) - 1
            imgs, labs = maps[k]
            j = i - int(self._starts[k])
            return np.array(imgs[j]), np.uint32(labs[j])

        super().__init__(_Rows(int(starts[-1]), row), ["image", "label"], num_samples,
                         num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _open(self):
        if self._maps is None:
            self._maps = [(np.memmap(img, np.uint8, "r", offset=16,
                                     shape=(n, _MNIST_SIDE, _MNIST_SIDE, 1)),
                           np.memmap(lab, np.uint8, "r", offset=8, shape=(n,)))
                          for img, lab, n in self._pairs]
        return self._maps


# ------------------------------------------------------------------------------ CIFAR -------
class _CifarReader(_FileReader):
    """The records of the selected .bin files: `labels` label bytes, then 3x32x32 pixels (CHW),
    turned into an HWC image. A file may hold fewer records than the standard batch (MindSpore
    refuses such files; minispore reads them, which keeps test files small); records past the
    standard count are not read, as in MindSpore."""

    _labels: int
    _columns: list

    def __init__(self, dataset_dir, usage, num_samples, num_parallel_workers, shuffle, sampler,
                 num_shards, shard_id, cache):
        who = type(self).__name__
        self.dataset_dir = _check_dir(who, dataset_dir)
        self.usage = _check_usage(who, usage)
        files = [p for p in _files_in(self.dataset_dir)
                 if p.endswith(".bin") and self._selects(os.path.basename(p))]
        if not files:
            raise ValueError(f"{who}: no {self._wanted()} .bin file for usage={self.usage!r} in "
                             f"{self.dataset_dir!r}")
        record = self._labels + _CIFAR_PIXELS
        self._files = []
        for p in files:
            size, cap = os.path.getsize(p), self._per_file(os.path.basename(p))
            if size == 0 or size % record:
                raise ValueError(f"{who}: {p} holds {size} bytes, not a whole number of "
                                 f"{record}-byte records ({self._labels} label byte(s) + "
                                 f"{_CIFAR_PIXELS} pixels); a standard batch file is "
                                 f"{cap * record} bytes")
            self._files.append((p, min(size // record, cap)))
        self._maps = None
        self._starts = np.cumsum([0] + [n for _, n in self._files])

        def row(i):
            if self._maps is None:
                self._maps = [np.memmap(p, np.uint8, "r", shape=(n, record))
                              for p, n in self._files]
            k = int(np.searchsorted(self._starts, i, side="right")) - 1
            rec = self._maps[k][i - int(self._starts[k])]
            image = np.array(rec[self._labels:].reshape(3, _CIFAR_SIDE, _CIFAR_SIDE)
                             .transpose(1, 2, 0))
            return (image,) + tuple(np.uint32(b) for b in rec[:self._labels])

        super().__init__(_Rows(int(self._starts[-1]), row), self._columns, num_samples,
                         num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)


class Cifar10Dataset(_CifarReader):
    """CIFAR-10's binary batches in `dataset_dir`: data_batch_*.bin (usage 'train'),
    test_batch.bin ('test'), both ('all', None). Columns image uint8 (32, 32, 3) HWC and label
    uint32 ()."""

    _labels, _columns = 1, ["image", "label"]

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_dir, usage, num_samples, num_parallel_workers, shuffle,
                         sampler, num_shards, shard_id, cache)

    def _selects(self, name):
        return {"train": "data_batch", "test": "test_batch", "all": "batch"}[self.usage] in name

    def _wanted(self):
        return {"train": "data_batch_*", "test": "test_batch", "all": "*batch*"}[self.usage]

    def _per_file(self, name):
        return _CIFAR10_PER_FILE


class Cifar100Dataset(_CifarReader):
    """CIFAR-100's binary files in `dataset_dir`: train.bin (usage 'train'), test.bin ('test'),
    both ('all', None; test.bin first, sorted order). Columns image uint8 (32, 32, 3) HWC,
    coarse_label uint32 () and fine_label uint32 ()."""

    _labels, _columns = 2, ["image", "coarse_label", "fine_label"]

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_dir, usage, num_samples, num_parallel_workers, shuffle,
                         sampler, num_shards, shard_id, cache)

    def _selects(self, name):
        if self.usage == "all":
            return "train" in name or "test" in name
        return self.usage in name

    def _wanted(self):
        return {"train": "train", "test": "test", "all": "train/test"}[self.usage]

    def _per_file(self, name):
        return _CIFAR100_PER_FILE["test" if "test" in name else "train"]


# ---------------------------------------------------------------------- image folders ------
class ImageFolderDataset(_FileReader):
    """A folder per class under `dataset_dir`; every entry of a class folder is a row (only
    those whose extension, the path's text from its last '.', is in `extensions`, case
    sensitive, when given), files in sorted name order, classes in sorted folder-name order.
    A class's label is its index among the sorted folder names (empty folders count) or
    `class_indexing[name]`; with `class_indexing` only its folders are read. Files at the top
    of `dataset_dir` and deeper folders are not read, as in MindSpore.

    Columns image uint8 (the file's bytes, 1-D; with decode=True the decoded (H, W, 3) image,
    by `minispore.dataset.vision.Decode`) and label int32 (). `decrypt` (a callable taking the
    file's path and returning its decrypted bytes) replaces reading the file."""

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, extensions=None, class_indexing=None, decode=False,
                 num_shards=None, shard_id=None, cache=None, decrypt=None):
        who = "ImageFolderDataset"
        self.dataset_dir = _check_dir(who, dataset_dir)
        if extensions is not None and (not isinstance(extensions, list) or
                                       not all(isinstance(e, str) for e in extensions)):
            raise TypeError(f"{who}: extensions must be a list of str such as ['.jpg', '.png'],"
                            f" got {extensions!r}")
        if class_indexing is not None:
            if not isinstance(class_indexing, dict) or not all(
                    isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                    for k, v in class_indexing.items()):
                raise TypeError(f"{who}: class_indexing must be a dict of folder name (str) -> "
                                f"label (int), got {class_indexing!r}")
        if not isinstance(decode, bool):
            raise TypeError(f"{who}: decode must be a bool, got {decode!r} "
                            f"({type(decode).__name__})")
        if decrypt is not None and not callable(decrypt):
            raise TypeError(f"{who}: decrypt must be a callable (path -> bytes) or None, got "
                            f"{type(decrypt).__name__}")
        self.extensions = list(extensions or [])
        self.decode, self.decrypt = decode, decrypt
        folders = sorted(n for n in os.listdir(self.dataset_dir)
                         if os.path.isdir(os.path.join(self.dataset_dir, n)))
        self.class_indexing = dict(class_indexing) if class_indexing else \
            {name: k for k, name in enumerate(folders)}
        self._items = []
        for name in folders:
            if name not in self.class_indexing:
                continue
            folder = os.path.join(self.dataset_dir, name)
            for entry in sorted(os.listdir(folder)):
                path = os.path.join(folder, entry)
                dot = path.rfind(".")
                if self.extensions and (dot < 0 or path[dot:] not in self.extensions):
                    continue
                self._items.append((path, self.class_indexing[name]))
        if not self._items:
            raise ValueError(f"{who}: no image files in the class folders of "
                             f"{self.dataset_dir!r} (extensions={self.extensions or 'any'}, "
                             f"class_indexing={class_indexing}); expected "
                             f"dataset_dir/<class>/<image file>")
        self._decoder = None
        super().__init__(_Rows(len(self._items), self._read), ["image", "label"], num_samples,
                         num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _read(self, i):
        path, label = self._items[i]
        if os.path.isdir(path):
            raise RuntimeError(f"ImageFolderDataset: {path} is a directory, not an image file; "
                               f"pass extensions= or move it out of the class folder")
        if self.decrypt is not None:
            data = self.decrypt(path)
            if not isinstance(data, (bytes, bytearray, memoryview, np.ndarray)):
                raise TypeError(f"ImageFolderDataset: decrypt({path!r}) must return bytes, got "
                                f"{type(data).__name__}")
            raw = np.frombuffer(bytes(data), dtype=np.uint8).copy()
        else:
            raw = np.fromfile(path, dtype=np.uint8)
        if self.decode:
            if self._decoder is None:
                from .vision import Decode
                self._decoder = Decode()
            try:
                raw = np.asarray(self._decoder(raw))
            except (RuntimeError, ValueError, TypeError) as e:
                raise RuntimeError(f"ImageFolderDataset: {path} could not be decoded ({e}); "
                                   f"the file is not an image or is broken") from None
        return raw, np.int32(label)

    def get_class_indexing(self) -> dict:
        """{folder name: label}."""
        return dict(self.class_indexing)

    def num_classes(self):
        return len(self.class_indexing)


__all__ = ["MnistDataset", "Cifar10Dataset", "Cifar100Dataset", "ImageFolderDataset"]
