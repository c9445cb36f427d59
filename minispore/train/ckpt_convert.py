"""MindSpore 2.10's checkpoint conversions and asynchronous load: `ckpt_to_safetensors`,
`safetensors_to_ckpt` (one file, or every file of the `rank*` directories under a directory,
with MindSpore's naming) and `load_checkpoint_async`.

A directory is converted one file after another: `processes_num` (MindSpore's worker-process
count) changes only how fast, never what is written, so the files are the ones MindSpore's
pool writes.
"""
from __future__ import annotations

import os
import re

from ..core.arg_checks import type_name
from .serialization import load_checkpoint, save_checkpoint

_SUFFIX = {"ckpt": ".ckpt", "safetensors": ".safetensors"}


def _renamed(param_dict: dict, name_map) -> dict:
    if name_map is None:
        return param_dict
    return {name_map.get(k, k): v for k, v in param_dict.items()}


def _convert_one(src: str, dst_dir: str, file_name: str, name_map, src_format: str,
                 dst_format: str) -> None:
    params = _renamed(load_checkpoint(src, format=src_format), name_map)
    dst_name = file_name.replace(_SUFFIX[src_format], _SUFFIX[dst_format])
    save_checkpoint(params, os.path.join(dst_dir, dst_name), format=dst_format)


def _convert(who: str, file_path, save_path, name_map, file_name_regex, processes_num,
             src_format: str, dst_format: str) -> None:
    if not isinstance(file_path, (str, os.PathLike)):
        raise TypeError(f"{who}: file_path must be a str, got {type_name(file_path)}")
    file_path = os.fspath(file_path)
    is_dir, is_file = os.path.isdir(file_path), os.path.isfile(file_path)
    if not is_dir and not is_file:
        raise ValueError(f"{who}: file_path must be an existing directory or file, got "
                         f"{file_path!r}")
    if save_path and os.path.splitext(save_path)[1]:
        raise ValueError(f"{who}: save_path must be a directory, got {save_path!r}")
    if name_map is not None and not isinstance(name_map, dict):
        raise ValueError(f"{who}: name_map must be a dict {{old name: new name}}, got "
                         f"{type_name(name_map)}")
    if isinstance(processes_num, bool) or not isinstance(processes_num, int) or \
            processes_num < 1:
        raise ValueError(f"{who}: processes_num must be a positive int, got {processes_num!r}")
    suffix = _SUFFIX[src_format]
    if is_file:
        if not file_path.endswith(suffix):
            raise ValueError(f"{who}: the input file must be a {suffix} file, got "
                             f"{file_path!r}")
        if file_name_regex is not None and not re.findall(file_name_regex, file_path):
            raise ValueError(f"{who}: the input file {file_path!r} does not match "
                             f"file_name_regex {file_name_regex!r}")
        if save_path:
            os.makedirs(save_path, exist_ok=True)
        _convert_one(file_path, save_path or os.path.dirname(file_path),
                     os.path.basename(file_path), name_map, src_format, dst_format)
        return
    rank_dirs = sorted(d for d in os.listdir(file_path)
                       if d.startswith("rank") and os.path.isdir(os.path.join(file_path, d)))
    if not rank_dirs:
        raise ValueError(f"{who}: no directories starting with 'rank' found in {file_path!r} "
                         f"(MindSpore converts the files of rank0/, rank1/, ...; pass a single "
                         f"file otherwise)")
    for rank_dir in rank_dirs:
        src_dir = os.path.join(file_path, rank_dir)
        dst_dir = os.path.join(save_path, rank_dir) if save_path is not None else src_dir
        os.makedirs(dst_dir, exist_ok=True)
        for name in sorted(os.listdir(src_dir)):
            if name.endswith(suffix) and (file_name_regex is None or
                                          re.search(file_name_regex, name)):
                _convert_one(os.path.join(src_dir, name), dst_dir, name, name_map, src_format,
                             dst_format)


def ckpt_to_safetensors(file_path, save_path=None, name_map=None, file_name_regex=None,
                        processes_num=1):
    """Convert MindSpore .ckpt files to .safetensors: `file_path` is one .ckpt file (written
    beside it, or into the directory `save_path`) or a directory whose `rank*` subdirectories
    hold them (written into the same subdirectories, or under `save_path`). `name_map` renames
    parameters; `file_name_regex` selects the files."""
    _convert("ckpt_to_safetensors", file_path, save_path, name_map, file_name_regex,
             processes_num, "ckpt", "safetensors")


def safetensors_to_ckpt(file_path, save_path=None, name_map=None, file_name_regex=None,
                        processes_num=1):
    """Convert .safetensors files to MindSpore .ckpt files, as ckpt_to_safetensors the other
    way."""
    _convert("safetensors_to_ckpt", file_path, save_path, name_map, file_name_regex,
             processes_num, "safetensors", "ckpt")


class ParamDictFuture:
    """What load_checkpoint_async returns: `result()` waits for the load and gives
    load_checkpoint's dict (or raises its error)."""

    def __init__(self, executor, future):
        self._executor, self._future = executor, future

    def result(self) -> dict:
        try:
            return self._future.result()
        finally:
            self._executor.shutdown()


def load_checkpoint_async(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                          dec_key=None, dec_mode="AES-GCM", specify_prefix=None,
                          choice_func=None):
    """load_checkpoint in a background thread, the format taken from the file name
    (".safetensors" or else "ckpt", as MindSpore); `.result()` of the returned object gives
    the parameter dict."""
    from concurrent.futures import ThreadPoolExecutor
    if not isinstance(ckpt_file_name, (str, os.PathLike)):
        raise TypeError(f"load_checkpoint_async: ckpt_file_name must be a str, got "
                        f"{type_name(ckpt_file_name)}")
    fmt = "safetensors" if os.fspath(ckpt_file_name).endswith(".safetensors") else "ckpt"
    executor = ThreadPoolExecutor(max_workers=1)
    future = executor.submit(load_checkpoint, ckpt_file_name, net, strict_load, filter_prefix,
                             dec_key, dec_mode, specify_prefix, choice_func, format=fmt)
    return ParamDictFuture(executor, future)


__all__ = ["ckpt_to_safetensors", "safetensors_to_ckpt", "load_checkpoint_async"]
