"""Checkpoints as MindSpore 2.10: `save_checkpoint`, `load_checkpoint`, `load_param_into_net`.

`format="ckpt"` (the default) is MindSpore's own protobuf .ckpt file (ckpt_format.py; a file
minispore writes is byte for byte the one MindSpore writes for the same tensors) and
`format="safetensors"` the safetensors file MindSpore 2.x writes (safetensors_format.py). Neither
can run code when loaded (no pickle). Keys are Parameter names (MindSpore's hierarchical names,
e.g. "fc1.weight").

MindSpore's file-name rules are kept: save_checkpoint appends ".ckpt" / ".safetensors" to a name
that does not end with the format, and load_checkpoint refuses a name that does not end with
`format`. A file is written to a temporary file in the same directory and renamed over the
final name, so a crash never leaves a truncated checkpoint under it; the saved file is made
read-only for its owner, as MindSpore does. Options minispore cannot honour (encryption,
remove_redundancy, MapParameter increments) raise naming them.
"""
from __future__ import annotations

import os
import stat
import tempfile
import warnings

import numpy as np

from ..core import dtype as dt
from ..core.arg_checks import check_bool, type_name
from ..core.tensor import Parameter, Tensor
from . import ckpt_format, safetensors_format

_FORMATS = ("ckpt", "safetensors")


class CheckpointMismatchError(ValueError, RuntimeError):
    """Checkpoint entries that cannot be loaded into a network (shape or dtype). A ValueError
    as minispore's argument errors and a RuntimeError as MindSpore raises it."""


def _check_format(who: str, format) -> None:
    if format not in _FORMATS:
        raise ValueError(f"{who}: format must be 'ckpt' (MindSpore's protobuf file, the "
                         f"default) or 'safetensors', got {format!r}")


def _file_name(who: str, name) -> str:
    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(f"{who}: ckpt_file_name must be a str (a file path), got "
                        f"{type_name(name)}")
    return os.fspath(name)


def _value(who: str, name: str, v):
    """An ndarray (or a str) for one entry to save."""
    if isinstance(v, str):
        return v
    if isinstance(v, Tensor):
        return v.asnumpy()
    if isinstance(v, np.ndarray):
        try:
            dt.to_dtype(v.dtype)
        except Exception:
            raise TypeError(f"{who}: the array {name!r} has dtype {v.dtype}, which minispore "
                            f"has no dtype for; convert it (e.g. to int32/float32)") from None
        return v
    raise TypeError(f"{who}: the value of {name!r} must be a Parameter, Tensor, numpy array or "
                    f"str, got {type_name(v)}")


def _named_values(save_obj, choice_func) -> dict:
    """{name: ndarray or str} of a Cell, a {name: value} dict or a list of Parameters /
    {'name': ..., 'data': ...} dicts, keeping the names `choice_func` accepts."""
    from ..nn.cell import Cell
    who = "save_checkpoint"
    if isinstance(save_obj, Cell):
        items = [(p.name, p) for p in save_obj.get_parameters()]
    elif isinstance(save_obj, dict):
        items = list(save_obj.items())
    else:
        items = []
        for e in save_obj:
            if isinstance(e, dict) and "name" in e and "data" in e:
                items.append((e["name"], e["data"]))
            elif isinstance(e, Parameter):
                items.append((e.name, e))
            else:
                raise TypeError(f"{who}: a list must hold {{'name': ..., 'data': ...}} dicts or "
                                f"Parameters, got {type_name(e)}")
    out = {}
    for name, v in items:
        if not isinstance(name, str):
            raise TypeError(f"{who}: parameter names must be str, got {type_name(name)}")
        if choice_func is not None and not choice_func(name):
            continue
        if name in out:
            raise ValueError(f"{who}: two parameters are named {name!r}; give them distinct "
                             f"names")
        out[name] = _value(who, name, v)
    return out


def _append_values(append_dict) -> dict:
    """append_dict's values as MindSpore stores them: a Python int as Int64, a float as
    Float32, a bool as Bool (all 0-d), a str as a str, Tensors as they are."""
    who = "save_checkpoint"
    if append_dict is None:
        return {}
    if not isinstance(append_dict, dict):
        raise TypeError(f"{who}: append_dict must be a dict, got {type_name(append_dict)}")
    out = {}
    for k, v in append_dict.items():
        if not isinstance(k, str) or not isinstance(v, (int, float, bool, str, Tensor)):
            raise TypeError(f"{who}: append_dict must map str to int, float, bool, str or "
                            f"Tensor, got {type_name(k)}: {type_name(v)}")
        if isinstance(v, (str, Tensor)):
            out[k] = _value(who, k, v)
        elif isinstance(v, (np.generic,)):          # np.float64 is a float: keep its dtype
            out[k] = np.asarray(v)
        else:
            out[k] = np.asarray(v, np.bool_ if isinstance(v, bool) else
                                np.int64 if isinstance(v, int) else np.float32)
    return out


def _check_save_kwargs(who: str, format, kwargs) -> None:
    """The keywords MindSpore's save_checkpoint reads from **kwargs (ModelCheckpoint passes
    them): `incremental` (MapParameter increments), `global_step_num` (only used by
    MindSpore's AITurbo backend, ignored otherwise, as here) and `remove_redundancy`."""
    unknown = sorted(set(kwargs) - {"incremental", "global_step_num", "remove_redundancy"})
    if unknown:
        raise TypeError(f"{who}() got an unexpected keyword argument {unknown[0]!r}")
    if kwargs.get("incremental", False) is not False:
        raise NotImplementedError(f"{who}: incremental={kwargs['incremental']!r} (saving the "
                                  f"increments of MapParameters) is not supported by minispore; "
                                  f"leave it False")
    redundancy = kwargs.get("remove_redundancy")
    if redundancy is not None:
        check_bool(who, "remove_redundancy", redundancy)
        if redundancy:
            raise NotImplementedError(f"{who}: remove_redundancy=True (dropping data-parallel "
                                      f"copies) is not supported by minispore")
    if format == "safetensors" and kwargs.get("global_step_num") is not None:
        raise ValueError(f"{who}: with format='safetensors', global_step_num must be None, "
                         f"got {kwargs['global_step_num']!r}")


def _atomic_write(path: str, write_to) -> None:
    """`write_to(temporary path)` in `path`'s directory, then rename it over `path`: a crash
    never leaves a half-written file under `path`, nor a stray temporary file."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp",
                               dir=directory)
    os.close(fd)
    try:
        write_to(tmp)
        with open(tmp, "rb") as f:            # on disk before the rename makes it visible
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IRUSR)               # read-only for its owner, as MindSpore
        # one rename: a reader or another rank writing the same name (ranks of a data-parallel
        # job sharing a directory) sees the old file or this one, whole, never a mix
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False,
                    append_dict=None, enc_key=None, enc_mode="AES-GCM", choice_func=None,
                    crc_check=False, format="ckpt", **kwargs) -> None:
    """Write the parameters of a Cell (or a dict/list of named tensors) and `append_dict` to
    `ckpt_file_name` in MindSpore's `format` ("ckpt" or "safetensors"; the format's extension
    is appended to a name without it). `choice_func(name)` selects the parameters (not the
    append_dict entries). `crc_check` stores MindSpore's CRC32. `integrated_save` only matters
    for parameters sliced across devices, which a single process never has. `async_save`
    (True, "thread" or "process") is accepted and the file is written before returning, which
    is the state MindSpore's asynchronous save reaches later. MindSpore writes no entry for a
    tensor without elements in the ckpt format, and neither does minispore."""
    who = "save_checkpoint"
    from ..nn.cell import Cell
    _check_format(who, format)
    if not isinstance(save_obj, (Cell, list, dict)):
        raise TypeError(f"{who}: save_obj must be a Cell, a list or a dict, got "
                        f"{type_name(save_obj)}")
    path = os.path.realpath(_file_name(who, ckpt_file_name))
    if os.path.isdir(path):
        raise IsADirectoryError(f"{who}: ckpt_file_name {path!r} is a directory; pass a file "
                                f"name")
    if not path.endswith(format):
        path += "." + format
    check_bool(who, "integrated_save", integrated_save)
    if not isinstance(async_save, (bool, str)):
        raise TypeError(f"{who}: async_save must be a bool, 'thread' or 'process', got "
                        f"{type_name(async_save)}")
    if isinstance(async_save, str) and async_save not in ("thread", "process"):
        raise ValueError(f"{who}: async_save must be a bool, 'thread' or 'process', got "
                         f"{async_save!r}")
    if not isinstance(enc_mode, str):
        raise TypeError(f"{who}: enc_mode must be a str, got {type_name(enc_mode)}")
    check_bool(who, "crc_check", crc_check)
    if enc_key is not None:
        raise NotImplementedError(f"{who}: enc_key/enc_mode (encrypting the checkpoint) is not "
                                  f"supported by minispore; save without enc_key")
    if enc_mode != "AES-GCM":
        raise ValueError(f"{who}: enc_mode={enc_mode!r} only applies with enc_key, which "
                         f"minispore does not support; leave enc_mode at 'AES-GCM'")
    _check_save_kwargs(who, format, kwargs)
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"{who}: choice_func must be callable, got {type_name(choice_func)}")
    appended = _append_values(append_dict)
    entries = _named_values(save_obj, choice_func)
    entries.update(appended)

    if format == "ckpt":
        def write_to(tmp):
            with open(tmp, "wb") as f:
                ckpt_format.write(f, entries, crc_check)
    else:
        def write_to(tmp):
            safetensors_format.write(tmp, entries, crc_check)
    _atomic_write(path, write_to)


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


def _sniffed_format(path: str):
    """'ckpt' or 'safetensors' by the file's first bytes; None if unreadable or neither."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if head[8:9] == b"{":
        return "safetensors"
    return "ckpt" if safetensors_format.looks_like_ckpt(head) else None


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    crc_check=False, remove_redundancy=False, format="ckpt") -> dict:
    """{name: Parameter} of a checkpoint in `format` ("ckpt", MindSpore's default, or
    "safetensors"; the file name must end with it); a str saved through append_dict comes back
    as a str. With `net`, also loads them into it (load_param_into_net). Only names starting
    with one of `specify_prefix` are kept, names starting with one of `filter_prefix` are
    dropped (in both formats), or `choice_func(name)` decides (not together with a prefix:
    MindSpore would silently ignore choice_func then). `crc_check` verifies the CRC32 that
    save_checkpoint stored with crc_check=True (a file without one loads with a warning, as
    in MindSpore)."""
    who = "load_checkpoint"
    specify = _check_prefix("specify_prefix", specify_prefix)
    drop = _check_prefix("filter_prefix", filter_prefix)
    if dec_key is not None:
        raise NotImplementedError(f"{who}: dec_key/dec_mode (decrypting an encrypted "
                                  f"checkpoint) is not supported by minispore")
    if dec_mode != "AES-GCM":
        raise ValueError(f"{who}: dec_mode={dec_mode!r} only applies with dec_key, which "
                         f"minispore does not support; leave dec_mode at 'AES-GCM'")
    check_bool(who, "strict_load", strict_load)
    check_bool(who, "crc_check", crc_check)
    check_bool(who, "remove_redundancy", remove_redundancy)
    if remove_redundancy:
        raise NotImplementedError(f"{who}: remove_redundancy=True (checkpoints saved without "
                                  f"data-parallel copies) is not supported by minispore")
    if choice_func is not None and (specify or drop):
        raise ValueError(f"{who}: choice_func cannot be combined with specify_prefix/"
                         f"filter_prefix; express the prefixes inside choice_func")
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"{who}: choice_func must be callable, got {type_name(choice_func)}")
    _check_format(who, format)
    path = _file_name(who, ckpt_file_name)
    if not path.endswith(format):
        found = _sniffed_format(path)
        what = f" (its content is in the {found!r} format)" if found else ""
        if not found and os.path.isfile(path + "." + format):
            what = (f" ({path + '.' + format!r} exists: save_checkpoint appends the format's "
                    f"extension to a name without it)")
        raise ValueError(f"{who}: the file name must end with format={format!r}, as in "
                         f"MindSpore, got {path!r}{what}; pass the format of the file and a "
                         f"name ending with it")
    path = os.path.realpath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{who}: the checkpoint file {path!r} does not exist")

    def keep(name):
        if specify and not name.startswith(specify):
            return False
        if drop and name.startswith(drop):
            return False
        return choice_func is None or bool(choice_func(name))

    if format == "ckpt":
        with open(path, "rb") as f:
            raw = f.read()
        values = ckpt_format.read(path, raw, crc_check, keep)
    else:
        values = safetensors_format.read(path, crc_check, keep)
    if not values:
        raise ValueError(f"{who}: no parameter of {path!r} is left after specify_prefix/"
                         f"filter_prefix/choice_func (or the file holds none); check them "
                         f"against the names in the file")
    out = {name: v if isinstance(v, str) else Parameter(Tensor(v), name=name)
           for name, v in values.items()}
    if net is not None:
        load_param_into_net(net, out, strict_load=strict_load)
    return out


def _prefixed_matches(not_loaded: list, candidates: list) -> dict:
    """MindSpore's second pass for network parameters missing from the checkpoint: find a
    checkpoint name ending with one of them, take what precedes it as a prefix, and load every
    missing parameter whose prefixed name is there; repeat while new prefixes turn up.
    {network name: checkpoint name}; `not_loaded` loses the names matched."""
    found = {}
    first, prefix = not_loaded[0], ""
    while prefix != first and not_loaded:
        prefix = first
        for net_name in not_loaded:
            key = next((k for k in candidates if k.endswith(net_name)), None)
            if key is not None:
                prefix = key[:-len(net_name)]
                break
        if prefix != first:
            for net_name in list(not_loaded):
                if prefix + net_name in candidates:
                    found[net_name] = prefix + net_name
                    not_loaded.remove(net_name)
    return found


def _prepared(p, v, strict_load: bool):
    """(ndarray to load into Parameter `p`, None) or (None, why it cannot be loaded), with
    MindSpore's rule for dtypes: without strict_load a float is cast to another float dtype
    and an int8..int64 to another of those. Shapes must be equal (MindSpore 2.10 accepts a
    checkpoint shape with extra trailing 1s but then leaves the parameter at that shape, so
    minispore refuses it)."""
    a = v.asnumpy()
    if tuple(a.shape) != tuple(p.shape):
        return None, (f"{p.name}: checkpoint {v.dtype}{list(a.shape)}, network "
                      f"{p.dtype}{list(p.shape)} (differs in shape {list(a.shape)} vs "
                      f"{list(p.shape)}" + (f" and dtype {v.dtype} vs {p.dtype})"
                                            if v.dtype is not p.dtype else ")"))
    if v.dtype is p.dtype:
        return a, None
    ints = (dt.int8, dt.int16, dt.int32, dt.int64)
    if not strict_load and ({v.dtype, p.dtype} <= set(dt.FLOATS) or
                            {v.dtype, p.dtype} <= set(ints)):
        return a.astype(p.dtype.np), None
    hint = " (strict_load=True allows no cast)" if strict_load else ""
    return None, (f"{p.name}: checkpoint {v.dtype}{list(a.shape)}, network "
                  f"{p.dtype}{list(p.shape)} (differs in dtype {v.dtype} vs {p.dtype}){hint}")


def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    """Copy the values of `parameter_dict` (Parameters or Tensors; str entries are skipped)
    into the same-named Parameters of `net`, as MindSpore 2.10: without `strict_load` a float
    (int) value is cast to the parameter's float (int) dtype, and network parameters missing
    from the dict are looked up under a common prefix (a network saved inside a wrapper).
    Shapes or dtypes that cannot be loaded raise CheckpointMismatchError (a ValueError and a
    RuntimeError) listing every one (nothing is loaded then). Network parameters left unloaded
    give a warning. Returns (network parameters not loaded, dict entries not loaded by name)."""
    from ..nn.cell import Cell
    who = "load_param_into_net"
    if not isinstance(net, Cell):
        raise TypeError(f"{who}: net must be a Cell, got {type_name(net)}")
    check_bool(who, "strict_load", strict_load)
    check_bool(who, "remove_redundancy", remove_redundancy)
    if remove_redundancy:
        raise NotImplementedError(f"{who}: remove_redundancy=True is not supported by "
                                  f"minispore")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"{who}: parameter_dict must be a dict {{name: Parameter}}, got "
                        f"{type(parameter_dict).__name__}")
    for name, v in parameter_dict.items():
        if not isinstance(v, (Tensor, str)):
            raise TypeError(f"{who}: parameter_dict[{name!r}] must be a Parameter or Tensor, "
                            f"got {type(v).__name__}; wrap it as ms.Parameter(ms.Tensor(...))")
    params = list(net.get_parameters())
    plan, not_loaded = {}, []
    for p in params:
        v = parameter_dict.get(p.name)
        if isinstance(v, Tensor):
            plan[p.name] = p.name
        elif v is None and not p.name.startswith("accu_grads"):
            not_loaded.append(p.name)
    unused = [n for n in parameter_dict if n not in plan]
    if not_loaded and not strict_load:
        tensors = [k for k, v in parameter_dict.items() if isinstance(v, Tensor)]
        plan.update(_prefixed_matches(not_loaded, tensors))
    ready, bad = {}, []
    for p in params:
        if p.name in plan:
            arr, why = _prepared(p, parameter_dict[plan[p.name]], strict_load)
            if why:
                bad.append(why)
            ready[p.name] = arr
    if bad:
        raise CheckpointMismatchError(f"{who}: these parameters do not match the network "
                                      "(nothing was loaded):\n  " + "\n  ".join(bad))
    for p in params:
        if p.name in ready:
            p.set_data(Tensor(ready[p.name]))
    if not_loaded:
        warnings.warn(f"{who}: {len(not_loaded)} network parameters are not in the checkpoint "
                      f"and keep their values: {not_loaded}", RuntimeWarning, stacklevel=2)
    return not_loaded, unused


__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]

# mindspore.train.serialization.export: MindSpore keeps export in this module too
from .onnx_export import export  # noqa: E402,F401
