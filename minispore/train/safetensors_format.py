"""The safetensors checkpoint format (`format="safetensors"`), as MindSpore 2.x writes it.

safetensors holds raw tensors and a JSON header, nothing executable, so loading a file cannot
run code. MindSpore writes the tensors in name order with the metadata {"format": "ms"} (none
for an empty file); bfloat16 is safetensors' own "BF16". With crc_check the metadata also holds
"crc_num": the CRC32 over every (name, raw bytes) pair in name order. Files written by earlier
minispore versions (bfloat16 as uint16 bits named in a "minispore_dtypes" metadata entry) still
load.
"""
from __future__ import annotations

import binascii
import json
import warnings

import numpy as np

from ..core import dtype as dt

_CRC_KEY = "crc_num"
_LEGACY_DTYPES_KEY = "minispore_dtypes"


def _crc32(arrays: dict) -> int:
    crc = 0
    for name in sorted(arrays):
        crc = binascii.crc32(name.encode("utf-8"), crc)
        crc = binascii.crc32(np.asarray(arrays[name]).tobytes(), crc)
    return crc


def write(path: str, entries: dict, crc_check: bool) -> None:
    """Write {name: ndarray} to `path` as MindSpore's save_checkpoint(format="safetensors")."""
    from safetensors.numpy import save_file
    tensors = {}
    for name in sorted(entries):
        value = entries[name]
        if isinstance(value, str):
            raise TypeError(f"save_checkpoint: entry {name!r} is a str, which the safetensors "
                            f"format cannot hold; save it with format='ckpt' or leave it out")
        a = np.asarray(value)
        tensors[name] = a if a.flags.c_contiguous else a.copy(order="C")   # 0-d stays 0-d
    metadata = {"format": "ms"}
    if crc_check:
        metadata[_CRC_KEY] = str(_crc32(tensors))
    save_file(tensors, path, metadata=metadata if tensors else None)


def looks_like_ckpt(raw: bytes) -> bool:
    """Whether `raw` starts like MindSpore's protobuf .ckpt (field 1, length-delimited)."""
    return raw[:1] == b"\n"


def read(path: str, crc_check: bool, keep=None) -> dict:
    """{name: ndarray} of a safetensors file in name order (only names for which `keep(name)`
    is true when `keep` is given). Errors name `path` and what is wrong."""
    from safetensors import safe_open
    try:
        with safe_open(path, framework="numpy") as f:
            header = f.metadata() or {}
            arrays = {k: f.get_tensor(k) for k in sorted(f.keys())}
    except Exception as e:
        with open(path, "rb") as fh:
            head = fh.read(16)
        if not head:
            raise ValueError(f"load_checkpoint: {path!r} is empty (0 bytes), not a "
                             f"checkpoint") from None
        if looks_like_ckpt(head):
            raise ValueError(f"load_checkpoint: {path!r} is not a safetensors file: it looks "
                             f"like MindSpore's protobuf .ckpt format; load it with "
                             f"format='ckpt' under a .ckpt name") from None
        raise ValueError(f"load_checkpoint: {path!r} is not a readable safetensors checkpoint "
                         f"(truncated, damaged or not a checkpoint: {type(e).__name__}: "
                         f"{e})") from None
    if crc_check:
        if _CRC_KEY not in header:
            warnings.warn(f"load_checkpoint: crc_check=True but {path!r} holds no CRC32 (it was "
                          f"saved with crc_check=False), so it is loaded unchecked",
                          RuntimeWarning, stacklevel=3)
        elif _crc32(arrays) != int(header[_CRC_KEY]):
            raise ValueError(f"load_checkpoint: the CRC32 check of {path!r} failed: the file is "
                             f"damaged (its content does not match the CRC32 saved with it)")
    legacy = json.loads(header.get(_LEGACY_DTYPES_KEY, "{}"))
    out = {}
    for name, a in arrays.items():
        if keep is not None and not keep(name):
            continue
        if legacy.get(name) == "BFloat16" and a.dtype == np.uint16:
            a = a.view(dt.bfloat16.np)
        try:
            dt.to_dtype(a.dtype)
        except Exception:
            raise ValueError(f"load_checkpoint: entry {name!r} of {path!r} has dtype {a.dtype}, "
                             f"which minispore has no dtype for; convert it before saving "
                             f"(e.g. to int32/int64)") from None
        out[name] = a
    return out


__all__: list = []          # internal: the safetensors codec of serialization.py
