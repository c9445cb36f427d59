"""Checkpoints: `save_checkpoint`, `load_checkpoint`, `load_param_into_net` in the safetensors
format (which MindSpore 2.x also writes with format="safetensors"; MindSpore's own protobuf ".ckpt"
format is refused with a clear error rather than written as something else).

safetensors holds raw tensors and a JSON header, nothing executable, so loading an untrusted
file cannot run code (unlike pickle). Keys are Parameter names (MindSpore's hierarchical names,
e.g. "fc1.weight"). bfloat16, which safetensors' numpy API does not carry, is stored as its
uint16 bits and named in the header's metadata. Whatever the file name's extension, the content
is safetensors.
"""
from __future__ import annotations

import json
import os
import warnings

import numpy as np

from ..core import dtype as dt
from ..core.tensor import Parameter, Tensor

_META_KEY = "minispore_dtypes"


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


def save_checkpoint(save_obj, ckpt_file_name: str, integrated_save=True, async_save=False,
                    append_dict=None, enc_key=None, enc_mode="AES-GCM", choice_func=None,
                    crc_check=False, format="safetensors", **kwargs) -> None:
    """Write the parameters of a Cell (or a dict/list of named tensors) to `ckpt_file_name`."""
    from safetensors.numpy import save_file
    if format != "safetensors":
        raise ValueError(f"save_checkpoint: format={format!r} is not supported; minispore "
                         f"writes safetensors only (MindSpore reads it with "
                         f"format='safetensors'); pass format='safetensors'")
    if enc_key is not None or async_save or kwargs:
        what = ["enc_key"] * (enc_key is not None) + ["async_save"] * bool(async_save) + \
            sorted(kwargs)
        raise ValueError(f"save_checkpoint: {', '.join(what)} not supported by minispore")
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
    path = os.fspath(ckpt_file_name)
    tmp = path + ".tmp"
    save_file(tensors, tmp, metadata={_META_KEY: json.dumps(dtypes)})
    os.replace(tmp, path)                 # a crash never leaves a half-written checkpoint


def load_checkpoint(ckpt_file_name: str, net=None, strict_load=False, filter_prefix=None,
                    choice_func=None, **_kw) -> dict:
    """{name: Parameter} from a checkpoint; with `net`, also loads them into it."""
    from safetensors import safe_open
    path = os.fspath(ckpt_file_name)
    if not os.path.exists(path):
        raise ValueError(f"load_checkpoint: {path!r} does not exist")
    try:
        with safe_open(path, framework="numpy") as f:
            meta = json.loads((f.metadata() or {}).get(_META_KEY, "{}"))
            arrays = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as e:
        raise ValueError(f"load_checkpoint: {path!r} is not a safetensors checkpoint "
                         f"({type(e).__name__}: {e})") from None
    prefixes = (filter_prefix,) if isinstance(filter_prefix, str) else tuple(filter_prefix or ())
    out = {}
    for name, a in arrays.items():
        if prefixes and name.startswith(prefixes):
            continue
        if choice_func is not None and not choice_func(name):
            continue
        if meta.get(name) == "BFloat16":
            a = a.view(dt.bfloat16.np)
        out[name] = Parameter(Tensor(a), name=name)
    if net is not None:
        load_param_into_net(net, out, strict_load=strict_load)
    return out


def load_param_into_net(net, parameter_dict: dict, strict_load=False):
    """Copy the values of `parameter_dict` into the same-named Parameters of `net`. Shapes or
    dtypes that differ raise ValueError listing every mismatch (nothing is loaded then); names
    missing on either side raise with strict_load=True and give a warning otherwise. Returns
    (net parameters not loaded, checkpoint entries not used), as MindSpore 2.x does."""
    params = {p.name: p for p in net.get_parameters()}
    bad = []
    for name, p in params.items():
        v = parameter_dict.get(name)
        if v is not None and (tuple(v.shape) != tuple(p.shape) or v.dtype is not p.dtype):
            bad.append(f"{name}: checkpoint {v.dtype}{list(v.shape)}, network "
                       f"{p.dtype}{list(p.shape)}")
    if bad:
        raise ValueError("load_param_into_net: these parameters do not match the network "
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
