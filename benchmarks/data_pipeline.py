"""Images per second of an image-folder input pipeline: minispore's `mindspore.dataset` beside
torch's DataLoader (and MindSpore's own dataset engine) on the same files, at 1, 2 and 4 workers.

Usage (from the repository root)::

    python benchmarks/data_pipeline.py [--quick] [--json PATH] [--workers 1,2,4]

The pipeline (MindSpore's tutorial form)::

    ImageFolderDataset(dir) -> map([Decode(), RandomResizedCrop(SIZE), Normalize(mean, std),
                                    HWC2CHW()], input_columns="image", num_parallel_workers=W)
                            -> batch(32)

over JPEG files written once into a scratch folder (4 classes, IMAGES images of 160x120 pixels
of smooth random colour, so JPEG has something to decode). minispore and MindSpore run the SAME
source with only the import changed (python_multiprocessing=False; minispore computes these
built-in transforms on min(W, cores) worker processes once a pass has taken 15 ms in the
reader's thread; its "python_multiprocessing" row asks for processes). torch runs a
`torch.utils.data.Dataset` doing the same steps by hand with Pillow (decode, crop + bilinear
resize to SIZE, normalise, transpose; torchvision is not installable next to the CPU build of
torch here) under `DataLoader(batch_size=32,
num_workers=W)` (worker processes). Each row is one fresh process; a sample is one full pass
over the files, reading every batch; the figure is images / second (median over the samples,
min-max beside it) and the ratio to torch at the same worker count (> 1: minispore is faster).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402
from _harness import Runner, resolve  # noqa: E402

SIZE = 64
BATCH = 32
CLASSES = 4
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]

# --------------------------------------------------------------------------- case code (child)

MS_CASE = """
import os
import numpy as np
import {module} as ms
from {module} import dataset as ds
from {module}.dataset import vision
VERSIONS = {{"{module}": getattr(ms, "__version__", "?")}}
EXTRA = {{}}

def make(shape):
    workers, = shape
    ds.config.set_seed(0)
    def one_pass():
        data = ds.ImageFolderDataset({folder!r}, shuffle=True)
        data = data.map([vision.Decode(), vision.RandomResizedCrop({size}),
                         vision.Normalize(mean={mean!r}, std={std!r}), vision.HWC2CHW()],
                        input_columns="image", num_parallel_workers=workers,
                        python_multiprocessing={processes})
        data = data.batch({batch}, drop_remainder=False)
        n = 0
        for image, label in data.create_tuple_iterator(num_epochs=1, output_numpy=True):
            assert image.shape[1:] == (3, {size}, {size}) and image.dtype == np.float32
            n += image.shape[0]
        return n
    def run(n):
        for _ in range(n):
            EXTRA["images"] = one_pass()
    return {{"run": run, "max_n": 1}}
"""

TORCH_CASE = """
import math, os, random
import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
VERSIONS = {{"torch": torch.__version__, "Pillow": Image.__version__}}
EXTRA = {{}}
MEAN = np.array({mean!r}, np.float32)
STD = np.array({std!r}, np.float32)

def random_resized_crop(img, size, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    w, h = img.size
    for _ in range(10):
        area = w * h * random.uniform(*scale)
        aspect = math.exp(random.uniform(math.log(ratio[0]), math.log(ratio[1])))
        cw, ch = int(round(math.sqrt(area * aspect))), int(round(math.sqrt(area / aspect)))
        if 0 < cw <= w and 0 < ch <= h:
            x, y = random.randint(0, w - cw), random.randint(0, h - ch)
            return img.resize((size, size), Image.BILINEAR, box=(x, y, x + cw, y + ch))
    return img.resize((size, size), Image.BILINEAR)

class Folder(Dataset):
    def __init__(self, root):
        classes = sorted(os.listdir(root))
        self.items = [(os.path.join(root, c, f), i) for i, c in enumerate(classes)
                      for f in sorted(os.listdir(os.path.join(root, c)))]
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        path, label = self.items[i]
        img = Image.open(path).convert("RGB")
        img = random_resized_crop(img, {size})
        arr = (np.asarray(img, np.float32) - MEAN) / STD
        return torch.from_numpy(arr.transpose(2, 0, 1).copy()), label

def make(shape):
    workers, = shape
    torch.manual_seed(0)
    random.seed(0)
    folder = Folder({folder!r})
    def run(n):
        for _ in range(n):
            count = 0
            for image, label in DataLoader(folder, batch_size={batch}, shuffle=True,
                                           num_workers=workers):
                count += image.shape[0]
            EXTRA["images"] = count
    return {{"run": run, "max_n": 1}}
"""


def write_images(root: str, count: int) -> None:
    """`count` JPEG files in CLASSES class folders: smooth random colour fields, 160x120."""
    from PIL import Image
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:120, 0:160].astype(np.float32)
    for i in range(count):
        cls = os.path.join(root, f"class_{i % CLASSES}")
        os.makedirs(cls, exist_ok=True)
        f = rng.uniform(0.01, 0.08, size=(3, 2))
        phase = rng.uniform(0, 6.3, size=3)
        img = np.stack([127 + 120 * np.sin(f[c, 0] * xx + f[c, 1] * yy + phase[c])
                        for c in range(3)], axis=-1)
        Image.fromarray(img.astype(np.uint8)).save(os.path.join(cls, f"{i:05d}.jpg"),
                                                   quality=90)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer images and samples")
    ap.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    args.target_s, args.repeats = 0.0, 3 if args.quick else 5
    images = 256 if args.quick else 1024
    workers = [int(w) for w in args.workers.split(",")]
    runner = Runner(args, timeout=300)
    tmp = tempfile.mkdtemp(prefix="minispore-data-bench-")
    results: dict = {"machine": H.machine_info(), "images": images, "rows": {}}
    try:
        folder = os.path.join(tmp, "images")
        write_images(folder, images)
        fmt = dict(folder=folder, size=SIZE, batch=BATCH, mean=MEAN, std=STD)
        cases = {"minispore": ("minispore", MS_CASE.format(module="minispore",
                                                           processes=False, **fmt)),
                 "minispore python_multiprocessing": (
                     "minispore", MS_CASE.format(module="minispore", processes=True, **fmt)),
                 "torch DataLoader": ("torch", TORCH_CASE.format(**fmt)),
                 "MindSpore": ("mindspore", MS_CASE.format(module="mindspore",
                                                           processes=False, **fmt))}
        for name, (peer, code) in cases.items():
            row = results["rows"].setdefault(name, {})
            found = resolve(row, peer)
            if found is None:
                print(f"  {name}: skipped ({row['skipped']})", file=sys.stderr)
                continue
            python, sys_path = found
            out = runner.run(name, python, code, [(w,) for w in workers], sys_path)
            row["result"] = out
            print(f"  {name}: {out.get('status')} {out.get('reason', '')}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _report(results, workers, images)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 0


def _rate(row: dict, workers: int, images: int):
    """(median, min, max) images/s of a row at a worker count, or None."""
    out = row.get("result") or {}
    shape = (out.get("shapes") or {}).get(str((workers,))) or {}
    if "samples" not in shape:
        return None
    rates = sorted(images / s for s in shape["samples"])
    return rates[len(rates) // 2], rates[0], rates[-1]


def _report(results: dict, workers: list[int], images: int) -> None:
    rows = []
    for w in workers:
        torch_rate = _rate(results["rows"].get("torch DataLoader", {}), w, images)
        for name, row in results["rows"].items():
            rate = _rate(row, w, images)
            if rate is None:
                out = row.get("result") or {}
                why = row.get("skipped") or out.get("reason") or \
                    next(iter((out.get("shapes") or {}).values()), {}).get("error", "?")
                rows.append([str(w), name, f"skipped: {why}", ""])
                continue
            ratio = "" if torch_rate is None or name == "torch DataLoader" else \
                f"{rate[0] / torch_rate[0]:.2f}x"
            rows.append([str(w), name, f"{rate[0]:.0f} ({rate[1]:.0f}-{rate[2]:.0f})", ratio])
    H.print_table(["workers", "pipeline", "images/s", "vs torch"], rows,
                  title=f"ImageFolder -> Decode -> RandomResizedCrop({SIZE}) -> Normalize -> "
                        f"HWC2CHW -> batch({BATCH}), {images} JPEG files")


if __name__ == "__main__":
    sys.exit(main())
