"""ModelCheckpoint and CheckpointConfig (MindSpore's checkpoint-saving callback), and
BackupAndRestore (a per-epoch backup of the train network, restored when training starts).

As in MindSpore 2.10: the file of a save at step s of epoch e is `{prefix}-{e}_{s}.{format}`
(s counted within the epoch); a prefix that already has checkpoints in the directory becomes
`{prefix}_1`, `{prefix}_2`, ... (one more than the highest suffix there); a save happens when
`save_checkpoint_steps` steps passed since the last one (or `save_checkpoint_seconds`), and
once more at the end of training unless the last step was just saved; before a save, when
`keep_checkpoint_max` files of this prefix exist, the oldest (by modification time) is deleted.
The file holds the TRAIN network's parameters (the network's weights and the optimizer's state:
global_step, learning_rate, moments, ...) or `saved_network`'s, plus `append_info`
("epoch_num", "step_num": counted from the values they had, and one dict of extra scalars).

`directory=None` is the working directory when minispore was imported (MindSpore's rule).

Several ranks (data parallel): as in MindSpore, every rank's ModelCheckpoint saves, under the
same file names (no rank in them), and `integrated_save` changes nothing (data parallel
parameters are whole on every rank); MindSpore's tutorials give each rank its own directory,
e.g. `directory=f"./ckpt_{get_rank()}"`. Ranks that share a directory never leave a corrupt
or half-written file: every write goes to a temporary file renamed over the final name
(serialization.save_checkpoint), so a file is one rank's whole checkpoint (under data parallel
the ranks' values are equal); a file another rank deleted or replaced meanwhile (its
keep_checkpoint_max) is skipped, not an error.

Differences from MindSpore, all loud: MindSpore also writes `{prefix}-graph.meta` (its graph
protobuf) in GRAPH_MODE; minispore has no such graph format and writes no .meta file.
Encryption (enc_key), async_save, exception_save and remove_redundancy raise naming the
option. Writes go through `minispore.train.serialization.save_checkpoint`, so the formats are
those it supports.
"""
from __future__ import annotations

import os
import time

from .callback import Callback

_INFO_NAMES = ("epoch_num", "step_num")
# directory=None saves into the working directory of the time minispore was imported, as
# MindSpore does with its import-time working directory
_IMPORT_CWD = os.getcwd()


def _non_negative_int(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"For 'CheckpointConfig', '{name}' must be an int >= 0, got {value!r}")
    return value


def _check_type(name, value, types):
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise TypeError(f"For 'CheckpointConfig', '{name}' must be {types}, got "
                        f"{type(value).__name__}")
    return value


class CheckpointConfig:
    """When ModelCheckpoint saves and what it keeps (MindSpore's CheckpointConfig). A positive
    save_checkpoint_steps disables save_checkpoint_seconds; a positive keep_checkpoint_max
    disables keep_checkpoint_per_n_minutes."""

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False,
                 saved_network=None, append_info=None, enc_key=None, enc_mode='AES-GCM',
                 exception_save=False, crc_check=False, remove_redundancy=False, format="ckpt",
                 **kwargs):
        from ..nn.cell import Cell
        save_checkpoint_steps = _non_negative_int("save_checkpoint_steps", save_checkpoint_steps)
        save_checkpoint_seconds = _non_negative_int("save_checkpoint_seconds",
                                                    save_checkpoint_seconds)
        keep_checkpoint_max = _non_negative_int("keep_checkpoint_max", keep_checkpoint_max)
        keep_checkpoint_per_n_minutes = _non_negative_int("keep_checkpoint_per_n_minutes",
                                                          keep_checkpoint_per_n_minutes)
        if saved_network is not None and not isinstance(saved_network, Cell):
            raise TypeError(f"For 'CheckpointConfig', the type of 'saved_network' must be None or "
                            f"Cell, but got {type(saved_network)}.")
        if not save_checkpoint_steps and not save_checkpoint_seconds and \
                not keep_checkpoint_max and not keep_checkpoint_per_n_minutes:
            raise ValueError("For 'CheckpointConfig', the input arguments "
                             "'save_checkpoint_steps', 'save_checkpoint_seconds', "
                             "'keep_checkpoint_max' and 'keep_checkpoint_per_n_minutes' can't be "
                             "all None or 0.")
        for name, value in (("integrated_save", integrated_save), ("exception_save",
                            exception_save), ("crc_check", crc_check),
                            ("remove_redundancy", remove_redundancy)):
            _check_type(name, value, (bool,))
        if enc_key is not None:
            _check_type("enc_key", enc_key, (bytes,))
        _check_type("enc_mode", enc_mode, (str,))
        _check_type("format", format, (str,))
        unknown = sorted(set(kwargs) - {"incremental", "enable_redundance"})
        if unknown:
            raise TypeError(f"CheckpointConfig: unexpected keyword argument(s) "
                            f"{', '.join(unknown)}")
        refused = [n for n, v in (("enc_key", enc_key is not None),
                                  ("async_save", bool(async_save)),
                                  ("exception_save", exception_save),
                                  ("remove_redundancy", remove_redundancy),
                                  ("incremental", kwargs.get("incremental", False)),
                                  ("enable_redundance", kwargs.get("enable_redundance", False)))
                   if v]
        if refused:
            raise NotImplementedError(
                f"CheckpointConfig: {', '.join(refused)} not supported by minispore (no "
                f"encryption, background saving, save-on-exception or parallel de-duplication); "
                f"leave {'them' if len(refused) > 1 else 'it'} at the default")
        if enc_mode != "AES-GCM":
            raise ValueError(f"CheckpointConfig: enc_mode={enc_mode!r} only applies with enc_key, "
                             f"which minispore does not support; leave enc_mode at 'AES-GCM'")
        if format == "safetensors" and crc_check:
            raise ValueError("For 'save_checkpoint', when format is 'safetensors', other param "
                             "must be default.")
        self._save_checkpoint_steps = save_checkpoint_steps
        self._save_checkpoint_seconds = save_checkpoint_seconds
        if save_checkpoint_steps and save_checkpoint_steps > 0:
            self._save_checkpoint_seconds = None
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        if keep_checkpoint_max and keep_checkpoint_max > 0:
            self._keep_checkpoint_per_n_minutes = None
        elif not keep_checkpoint_per_n_minutes:
            self._keep_checkpoint_max = 1
        self._integrated_save = integrated_save
        self._async_save = False
        self._saved_network = saved_network
        self._append_dict = self._handle_append_info(append_info)
        self._enc_key, self._enc_mode = enc_key, enc_mode
        self._crc_check = crc_check
        self._format = format
        self.exception_save = exception_save
        self.remove_redundancy = remove_redundancy

    save_checkpoint_steps = property(lambda self: self._save_checkpoint_steps)
    save_checkpoint_seconds = property(lambda self: self._save_checkpoint_seconds)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_per_n_minutes = property(lambda self: self._keep_checkpoint_per_n_minutes)
    integrated_save = property(lambda self: self._integrated_save)
    async_save = property(lambda self: self._async_save)
    saved_network = property(lambda self: self._saved_network)
    enc_key = property(lambda self: self._enc_key)
    enc_mode = property(lambda self: self._enc_mode)
    crc_check = property(lambda self: self._crc_check)
    format = property(lambda self: self._format)
    append_dict = property(lambda self: self._append_dict)

    def get_checkpoint_policy(self):
        return {"save_checkpoint_steps": self.save_checkpoint_steps,
                "save_checkpoint_seconds": self.save_checkpoint_seconds,
                "keep_checkpoint_max": self.keep_checkpoint_max,
                "keep_checkpoint_per_n_minutes": self.keep_checkpoint_per_n_minutes,
                "saved_network": self.saved_network}

    @staticmethod
    def _handle_append_info(append_info):
        from ..core.tensor import Tensor
        if append_info is None or append_info == []:
            return None
        if not isinstance(append_info, list):
            raise TypeError(f"For 'CheckpointConfig', the type of 'append_info' must be list, but "
                            f"got {type(append_info)}.")
        out = {name: 0 for name in _INFO_NAMES if name in append_info}
        dicts = 0
        for element in append_info:
            if isinstance(element, str):
                if element not in _INFO_NAMES:
                    raise ValueError(f"For 'CheckpointConfig', the value of element in the "
                                     f"argument 'append_info' must be in {list(_INFO_NAMES)}, "
                                     f"but got {element}.")
            elif isinstance(element, dict):
                dicts += 1
                if dicts > 1:
                    raise TypeError("For 'CheckpointConfig', the element of 'append_info' must "
                                    "have only one dict")
                for key, value in element.items():
                    if not isinstance(key, str) or not isinstance(value, (int, float, bool, str,
                                                                          Tensor)):
                        raise TypeError(f"For 'CheckpointConfig', the keys of the dict in "
                                        f"'append_info' must be str and the values int, float, "
                                        f"bool, str or Tensor, got {type(key)}: {type(value)}")
                    out[key] = value
            else:
                raise TypeError(f"For 'CheckpointConfig', the type of 'append_info' element must "
                                f"be str or dict, but got {type(element)}.")
        return out


def _change_prefix_if_used(directory, prefix):
    """MindSpore's rule: when checkpoints of `prefix` (or `prefix_N`) exist in `directory`, the
    new prefix is `prefix_{max N + 1}` (`prefix_1` after the bare prefix)."""
    suffix = 0
    n = len(prefix)
    for filename in os.listdir(directory):
        ext = os.path.splitext(filename)[-1]
        if ext not in (".ckpt", ".safetensors") or filename.endswith("_breakpoint.ckpt"):
            continue
        if filename.startswith(prefix) and len(filename) > n and not filename[n].isalpha():
            index = filename[n:].find("-")
            if index == 0:
                suffix = max(suffix, 1)
            elif index != -1:
                num = filename[n + 1:n + index]
                if num.isdigit():
                    suffix = max(suffix, int(num) + 1)
    return f"{prefix}_{suffix}" if suffix else prefix


class ModelCheckpoint(Callback):
    """Saves checkpoints during training (see the module docstring for the names and the
    policy). `prefix` and `directory` may be functions of the callback parameters, evaluated
    at each step (a function prefix names the file `{prefix}.{format}`)."""

    def __init__(self, prefix='CKP', directory=None, config=None):
        if not callable(prefix) and (not isinstance(prefix, str) or "/" in prefix):
            raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file "
                             f"name is invalid, it must be callable or string that does not "
                             f"contain '/', but got {prefix}.")
        if config is None:
            config = CheckpointConfig()
        elif not isinstance(config, CheckpointConfig):
            raise TypeError(f"For 'ModelCheckpoint', the type of argument 'config' should be "
                            f"'CheckpointConfig', but got {type(config)}.")
        self._config = config
        self._prefix_func = prefix if callable(prefix) else None
        self._directory_func = directory if callable(directory) else None
        self._prefix = prefix
        if directory is None:
            self._directory = _IMPORT_CWD
        elif not callable(directory):
            if not isinstance(directory, (str, os.PathLike)):
                raise TypeError(f"For 'ModelCheckpoint', 'directory' must be a str, a path or a "
                                f"function, got {type(directory).__name__}")
            self._directory = self._make_directory(directory)
        if not callable(directory) and not callable(prefix):
            self._prefix = _change_prefix_if_used(self._directory, prefix)
        self._latest_ckpt_file_name = ""
        self._last_time = time.time()
        self._last_time_for_keep = time.time()
        self._last_triggered_step = 0
        self._append_dict = dict(config.append_dict or {})
        self._append_epoch_num = self._append_dict.get("epoch_num", 0)
        self._append_step_num = self._append_dict.get("step_num", 0)
        self._write_order: dict = {}

    @staticmethod
    def _make_directory(path):
        path = os.path.realpath(os.fspath(path))
        os.makedirs(path, exist_ok=True)
        return path

    @property
    def latest_ckpt_file_name(self):
        """The path of the last checkpoint this callback wrote ("" before the first)."""
        return self._latest_ckpt_file_name

    def step_end(self, run_context):
        cb = run_context.original_args()
        if self._prefix_func:
            self._prefix = self._prefix_func(cb)
            if not isinstance(self._prefix, str) or "/" in self._prefix:
                raise ValueError(f"For 'ModelCheckpoint', the prefix function must return a "
                                 f"string without '/', but got {self._prefix!r}.")
        if self._directory_func:
            self._directory = self._make_directory(self._directory_func(cb))
        self._save_ckpt(cb)

    def end(self, run_context):
        self._save_ckpt(run_context.original_args(), force_to_save=True)

    def _due(self, cb, force_to_save):
        cfg = self._config
        if cfg.save_checkpoint_steps and cfg.save_checkpoint_steps > 0:
            return force_to_save or \
                cb.cur_step_num >= self._last_triggered_step + cfg.save_checkpoint_steps
        if cfg.save_checkpoint_seconds and cfg.save_checkpoint_seconds > 0:
            now = time.time()
            if now - self._last_time > cfg.save_checkpoint_seconds or force_to_save:
                self._last_time = now
                return True
        return False

    def _own_files(self):
        """This prefix's checkpoints in the directory (`prefix-<digits and _>.<format>`) with
        their modification times; one that another rank removes meanwhile is left out."""
        ext = f".{self._config.format}"
        out = {}
        for filename in os.listdir(self._directory):
            if os.path.splitext(filename)[-1] == ext and filename.startswith(self._prefix + "-"):
                middle = filename[len(self._prefix):-len(ext)]
                if not any(ch.isalpha() for ch in middle):
                    path = os.path.join(self._directory, filename)
                    try:
                        out[path] = os.stat(path).st_mtime_ns
                    except FileNotFoundError:
                        pass
        return out

    def _oldest(self, files: dict):
        return min(files, key=lambda f: (files[f], self._write_order.get(f, -1)))

    def _remove(self, path):
        try:
            os.remove(path)
        except OSError:
            pass

    def _keep_one_per_minutes(self, files, minutes, now):
        recent = {f: t for f, t in files.items() if now - t / 1e9 < 60 * minutes}
        if recent:
            oldest = self._oldest(recent)
            for f in recent:
                if f != oldest:
                    self._remove(f)

    def _save_ckpt(self, cb, force_to_save=False):
        from .serialization import save_checkpoint
        if cb.cur_step_num == self._last_triggered_step or not self._due(cb, force_to_save):
            return
        cfg = self._config
        step_in_epoch = int((cb.cur_step_num - 1) % cb.batch_num + 1)
        if self._prefix_func:
            name = f"{self._prefix}.{cfg.format}"
        else:
            name = f"{self._prefix}-{cb.cur_epoch_num}_{step_in_epoch}.{cfg.format}"
        files = self._own_files()
        if cfg.keep_checkpoint_max and 0 < cfg.keep_checkpoint_max <= len(files):
            self._remove(self._oldest(files))
        elif cfg.keep_checkpoint_per_n_minutes and cfg.keep_checkpoint_per_n_minutes > 0:
            now = time.time()
            if now - self._last_time_for_keep < cfg.keep_checkpoint_per_n_minutes * 60:
                self._keep_one_per_minutes(files, cfg.keep_checkpoint_per_n_minutes, now)
        path = os.path.join(self._directory, name)
        self._last_time_for_keep = time.time()
        self._last_triggered_step = cb.cur_step_num
        if "epoch_num" in self._append_dict:
            self._append_dict["epoch_num"] = self._append_epoch_num + cb.cur_epoch_num
        if "step_num" in self._append_dict:
            self._append_dict["step_num"] = self._append_step_num + cb.cur_step_num
        network = cfg.saved_network if cfg.saved_network is not None else cb.train_network
        append = dict(self._append_dict) or None     # save_checkpoint stores MindSpore's dtypes
        save_checkpoint(network, path, cfg.integrated_save, False, append, None, cfg.enc_mode,
                        crc_check=cfg.crc_check, format=cfg.format)
        self._write_order[path] = len(self._write_order)
        self._latest_ckpt_file_name = path


class BackupAndRestore(Callback):
    """MindSpore's BackupAndRestore: at each `save_freq`-th epoch's end (save_freq="epoch":
    every epoch) the train network's parameters go to `backup_dir/backup.ckpt`; at the start of
    training an existing backup is loaded into the train network; at the end the backup is
    deleted when delete_checkpoint. (The epoch count is not restored, as in MindSpore: pass
    initial_epoch yourself.)"""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        if not isinstance(backup_dir, (str, os.PathLike)):
            raise TypeError(f"BackupAndRestore: backup_dir must be a path, got "
                            f"{type(backup_dir).__name__}")
        self.backup_file = os.path.join(ModelCheckpoint._make_directory(backup_dir),
                                        "backup.ckpt")
        if save_freq == "epoch":
            self.save_freq = 1
        elif isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1:
            raise ValueError(f"BackupAndRestore: save_freq must be 'epoch' or an int >= 1, got "
                             f"{save_freq!r}")
        else:
            self.save_freq = save_freq
        if not isinstance(delete_checkpoint, bool):
            raise TypeError(f"BackupAndRestore: delete_checkpoint must be a bool, got "
                            f"{type(delete_checkpoint).__name__}")
        self.delete_checkpoint = delete_checkpoint

    def on_train_begin(self, run_context):
        from .serialization import load_checkpoint
        if os.path.exists(self.backup_file):
            load_checkpoint(self.backup_file, net=run_context.original_args().train_network)

    def on_train_epoch_end(self, run_context):
        from .serialization import save_checkpoint
        cb = run_context.original_args()
        if cb.cur_epoch_num % self.save_freq == 0:
            save_checkpoint(cb.train_network, self.backup_file)

    def on_train_end(self, run_context):
        if self.delete_checkpoint:
            os.remove(self.backup_file)


__all__ = ["CheckpointConfig", "ModelCheckpoint", "BackupAndRestore"]
