"""Checkpoints: `save_checkpoint`, `load_checkpoint`, `load_param_into_net` in the safetensors
format (which MindSpore 2.x also writes with format="safetensors"; MindSpore's own protobuf ".ckpt"
format is refused with a clear error rather than written as something else).

safetensors holds raw tensors and a JSON header, nothing executable, so loading an untrusted
file cannot run code (unlike pickle). Keys are Parameter names (MindSpore's hierarchical names,
e.g. "fc1.weight"). bfloat16, which safetensors' numpy API does not carry, is stored as its
uint16 bits and named in the header's metadata. Whatever the file name's extension, the content
is safetensors. crc_check stores/verifies MindSpore's CRC32 of the content ("crc_num" in the
header). Options minispore cannot honour (encryption, remove_redundancy, async_save) raise.
"""
from __future__ import annotations

import binascii
import json
import os
import warnings

import numpy as np

from ..core import dtype as dt
from ..core.arg_checks import check_bool
from ..core.tensor import Parameter, Tensor

_META_KEY = "minispore_dtypes"
_CRC_KEY = "crc_num"                    # the header key MindSpore stores its CRC32 under


def _named_arrays(save_obj) -> dict:
    from ..nn.cell import Cell
    if isinstance(save_obj, Cell):
        items = [(p.name, p) for p in save_obj.get_parameters()]
    elif isinstance(save_obj, dict):
        items = list(save_obj.items())
    elif isinstance(save_obj, (list, tuple)):
        items = []
        for e in save_obj:
            if isinstance(e, dict) and "name" in e and "data" in e:
                items.append((e["name"], e["data"]))
            elif isinstance(e, Parameter):
                items.append((e.name, e))
            else:
                raise TypeError("save_checkpoint: a list must hold {'name': ..., 'data': ...} "
                                "dicts or Parameters")
    else:
        raise TypeError(f"save_checkpoint: save_obj must be a Cell, a dict or a list, got "
                        f"{type(save_obj).__name__}")
    out = {}
    for name, v in items:
        if name in out:
            raise ValueError(f"save_checkpoint: two parameters are named {name!r}; give them "
                             f"distinct names")
        out[name] = v.asnumpy() if isinstance(v, Tensor) else np.asarray(v)
    return out


def _crc32(tensors: dict) -> int:
    """MindSpore's safetensors CRC: crc32 over every (name, raw bytes) pair in name order."""
    crc = 0
    for name in sorted(tensors):
        crc = binascii.crc32(name.encode("utf-8"), crc)
        crc = binascii.crc32(np.ascontiguousarray(tensors[name]).tobytes(), crc)
    return crc


def _check_format(who: str, format) -> None:
    if format != "safetensors":
        raise ValueError(f"{who}: format={format!r} is not supported; minispore checkpoints "
                         f"are safetensors only (MindSpore reads them with "
                         f"format='safetensors'); pass format='safetensors'")


def save_checkpoint(save_obj, ckpt_file_name: str, integrated_save=True, async_save=False,
                    append_dict=None, enc_key=None, enc_mode="AES-GCM", choice_func=None,
                    crc_check=False, format="safetensors", **kwargs) -> None:
    """Write the parameters of a Cell (or a dict/list of named tensors) to `ckpt_file_name`.
    `crc_check` stores MindSpore's CRC32 of the content in the header; `integrated_save` only
    matters for parameters sliced across devices, which a single process never has."""
    who = "save_checkpoint"
    from safetensors.numpy import save_file
    _check_format(who, format)
    check_bool(who, "integrated_save", integrated_save)
    check_bool(who, "crc_check", crc_check)
    if enc_mode != "AES-GCM" and enc_key is None:
        raise ValueError(f"{who}: enc_mode={enc_mode!r} only applies with enc_key, which "
                         f"minispore does not support; leave enc_mode at 'AES-GCM'")
    if enc_key is not None or async_save or kwargs:
        what = ["enc_key"] * (enc_key is not None) + ["async_save"] * bool(async_save) + \
            sorted(kwargs)
        raise ValueError(f"{who}: {', '.join(what)} not supported by minispore")
    arrays = _named_arrays(save_obj)
    if choice_func is not None:
        arrays = {k: v for k, v in arrays.items() if choice_func(k)}
    for k, v in (append_dict or {}).items():
        arrays[k] = np.asarray(v.asnumpy() if isinstance(v, Tensor) else v)
    tensors, dtypes = {}, {}
    for name, a in arrays.items():
        dtypes[name] = str(dt.to_dtype(a.dtype))
        b = a.view(np.uint16) if a.dtype.name == "bfloat16" else a
        tensors[name] = np.ascontiguousarray(b).reshape(b.shape)    # 0-d stays 0-d
    metadata = {_META_KEY: json.dumps(dtypes)}
    if crc_check:
        metadata[_CRC_KEY] = str(_crc32(tensors))
    path = os.fspath(ckpt_file_name)
    tmp = path + ".tmp"
    try:
        save_file(tensors, tmp, metadata=metadata)
        os.replace(tmp, path)             # a crash never leaves a half-written checkpoint
    except BaseException:
        if os.path.exists(tmp):           # nor a stray partial file next to it
            os.remove(tmp)
        raise


def _check_prefix(name: str, prefix):
    """None, or a non-empty tuple of non-empty strings (MindSpore's rules)."""
    if prefix is None:
        return None
    if not isinstance(prefix, (str, list, tuple)):
        raise TypeError(f"load_checkpoint: {name} must be a str or a list/tuple of str, got "
                        f"{type(prefix).__name__}")
    prefix = (prefix,) if isinstance(prefix, str) else tuple(prefix)
    if not prefix:
        raise ValueError(f"load_checkpoint: {name} must not be an empty list/tuple")
    for i, p in enumerate(prefix):
        if not isinstance(p, str) or p == "":
            raise (TypeError if not isinstance(p, str) else ValueError)(
                f"load_checkpoint: {name}[{i}] must be a non-empty str, got {p!r}")
    return prefix


def load_checkpoint(ckpt_file_name: str, net=None, strict_load=False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    crc_check=False, remove_redundancy=False, format="safetensors") -> dict:
    """{name: Parameter} from a checkpoint; with `net`, also loads them into it. Only names
    starting with one of `specify_prefix` are kept, names starting with one of `filter_prefix`
    are dropped, or `choice_func(name)` decides (not together with a prefix: MindSpore would
    silently ignore choice_func then). `crc_check` verifies the CRC32 that save_checkpoint
    stored with crc_check=True."""
    who = "load_checkpoint"
    from safetensors import safe_open
    _check_format(who, format)
    if dec_key is not None:
        raise NotImplementedError(f"{who}: dec_key/dec_mode (decrypting an encrypted "
                                  f"checkpoint) is not supported by minispore")
    if dec_mode != "AES-GCM":
        raise ValueError(f"{who}: dec_mode={dec_mode!r} only applies with dec_key, which "
                         f"minispore does not support; leave dec_mode at 'AES-GCM'")
    check_bool(who, "crc_check", crc_check)
    check_bool(who, "remove_redundancy", remove_redundancy)
    if remove_redundancy:
        raise NotImplementedError(f"{who}: remove_redundancy=True (checkpoints saved without "
                                  f"data-parallel copies) is not supported by minispore")
    specify = _check_prefix("specify_prefix", specify_prefix)
    drop = _check_prefix("filter_prefix", filter_prefix)
    if choice_func is not None and (specify or drop):
        raise ValueError(f"{who}: choice_func cannot be combined with specify_prefix/"
                         f"filter_prefix; express the prefixes inside choice_func")
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"{who}: choice_func must be callable, got "
                        f"{type(choice_func).__name__}")
    path = os.fspath(ckpt_file_name)
    if not os.path.exists(path):
        raise ValueError(f"{who}: {path!r} does not exist")
    try:
        with safe_open(path, framework="numpy") as f:
            header = f.metadata() or {}
            meta = json.loads(header.get(_META_KEY, "{}"))
            arrays = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as e:
        raise ValueError(f"{who}: {path!r} is not a safetensors checkpoint "
                         f"({type(e).__name__}: {e})") from None
    if crc_check:
        if _CRC_KEY not in header:
            raise ValueError(f"{who}: crc_check=True but {path!r} holds no CRC32 (it was "
                             f"saved with crc_check=False); load it with crc_check=False")
        if _crc32(arrays) != int(header[_CRC_KEY]):
            raise ValueError(f"{who}: the CRC32 check of {path!r} failed: the file is "
                             f"damaged")
    out = {}
    for name, a in arrays.items():
        if specify and not name.startswith(specify):
            continue
        if drop and name.startswith(drop):
            continue
        if choice_func is not None and not choice_func(name):
            continue
        if meta.get(name) == "BFloat16":
            a = a.view(dt.bfloat16.np)
        out[name] = Parameter(Tensor(a), name=name)
    if arrays and not out:
        raise ValueError(f"{who}: no parameter of {path!r} is left after specify_prefix/"
                         f"filter_prefix/choice_func; check them against its names "
                         f"{sorted(arrays)[:8]}")
    if net is not None:
        load_param_into_net(net, out, strict_load=strict_load)
    return out


def load_param_into_net(net, parameter_dict: dict, strict_load=False, remove_redundancy=False):
    """Copy the values of `parameter_dict` (Parameters or Tensors) into the same-named
    Parameters of `net`. Shapes or dtypes that differ raise ValueError listing every mismatch
    with what differs (nothing is loaded then); names missing on either side raise with
    strict_load=True and give a warning otherwise. Returns (net parameters not loaded,
    checkpoint entries not used), as MindSpore 2.x does."""
    who = "load_param_into_net"
    check_bool(who, "strict_load", strict_load)
    check_bool(who, "remove_redundancy", remove_redundancy)
    if remove_redundancy:
        raise NotImplementedError(f"{who}: remove_redundancy=True is not supported by "
                                  f"minispore")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"{who}: parameter_dict must be a dict {{name: Parameter}}, got "
                        f"{type(parameter_dict).__name__}")
    params = {p.name: p for p in net.get_parameters()}
    bad = []
    for name, p in params.items():
        v = parameter_dict.get(name)
        if v is None:
            continue
        if not isinstance(v, Tensor):
            raise TypeError(f"{who}: parameter_dict[{name!r}] must be a Parameter or Tensor, "
                            f"got {type(v).__name__}; wrap it as ms.Parameter(ms.Tensor(...))")
        diffs = []
        if tuple(v.shape) != tuple(p.shape):
            diffs.append(f"shape {list(v.shape)} vs {list(p.shape)}")
        if v.dtype is not p.dtype:
            diffs.append(f"dtype {v.dtype} vs {p.dtype}")
        if diffs:
            bad.append(f"{name}: checkpoint {v.dtype}{list(v.shape)}, network "
                       f"{p.dtype}{list(p.shape)} (differs in {' and '.join(diffs)})")
    if bad:
        raise ValueError(f"{who}: these parameters do not match the network "
                         "(nothing was loaded):\n  " + "\n  ".join(bad))
    not_loaded = [n for n in params if n not in parameter_dict]
    unused = [n for n in parameter_dict if n not in params]
    if not_loaded or unused:
        msg = (f"load_param_into_net: network parameters missing from the checkpoint: "
               f"{not_loaded}; checkpoint entries with no network parameter: {unused}")
        if strict_load:
            raise ValueError(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
    for name, p in params.items():
        if name in parameter_dict:
            p.set_data(parameter_dict[name])
    return not_loaded, unused
