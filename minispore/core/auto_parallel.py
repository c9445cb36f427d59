"""MindSpore's auto-parallel context (`set_auto_parallel_context` / `get_auto_parallel_context` /
`reset_auto_parallel_context`, `ParallelMode`).

What runs here is stand-alone, and data parallel over the ranks of the job the process joined
with mindspore.communication.init() (one rank without init): TrainOneStepCell and Model then
all-reduce the gradients over the world (nn.DistributedGradReducer), averaged with
gradients_mean=True. device_num and global_rank may be set to what the job has (the world's
size and this process's rank); unset, MindSpore's parallel helpers read them from the job
(parallel/_utils.py). Every key MindSpore 2.10 recognises can be read back with MindSpore's
default. A setting that needs what is not implemented (semi-auto, auto and hybrid parallel,
pipeline stages, gradient accumulation, strategy checkpoints, local-norm dumps, parameter
broadcast or the parallel optimizer over several ranks, ...) raises NotImplementedError
naming it."""
from __future__ import annotations

import copy


class ParallelMode:
    """MindSpore's parallel-mode string constants."""
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


_RUNNABLE_MODES = (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL)
_SEARCH_MODES = ("recursive_programming", "dynamic_programming", "sharding_propagation")

# MindSpore 2.10's defaults, as get_auto_parallel_context returns them after
# reset_auto_parallel_context (observed by running MindSpore 2.10)
_DEFAULTS = {
    "all_reduce_fusion_config": [],
    "auto_parallel_new_interface": False,
    "auto_parallel_search_mode": "recursive_programming",
    "auto_pipeline": False,
    "comm_fusion": {"openstate": True, "allreduce": {"mode": "auto", "config": None},
                    "allgather": {"mode": "auto", "config": None},
                    "reducescatter": {"mode": "auto", "config": None}},
    "communi_parallel_mode": "all_group_parallel",
    "dataset_strategy": "data_parallel",
    "device_num": 1,
    "dump_device_local_norm": False,
    "dump_local_norm": False,
    "dump_local_norm_path": "",
    "enable_alltoall": False,
    "enable_parallel_optimizer": False,
    "force_fp32_communication": False,
    "full_batch": False,
    "full_batch_is_set": False,
    "global_rank": 0,
    "grad_accumulation_step": 1,
    "gradient_fp32_sync": True,
    "gradients_mean": False,
    "init_param_in_compile": True,
    "loss_repeated_mean": True,
    "optimizer_weight_shard_aggregated_save": False,
    "optimizer_weight_shard_size": -1,
    "parallel_mode": "stand_alone",
    "parameter_broadcast": False,
    "pipeline_interleave": False,
    "pipeline_result_broadcast": False,
    "pipeline_scheduler": "1f1b",
    "pipeline_stages": 1,
    "sharding_propagation": False,
    "strategy_ckpt_config": {"load_file": "", "save_file": "", "only_trainable_params": True},
    "strategy_ckpt_load_file": "",
    "strategy_ckpt_save_file": "",
}

# booleans whose every value means the same on one device: there is nothing to communicate,
# shard or broadcast, and the mean over one device's gradients is those gradients
_FREE_BOOLS = ("gradients_mean", "gradient_fp32_sync", "loss_repeated_mean", "parameter_broadcast",
               "full_batch", "enable_alltoall", "enable_parallel_optimizer",
               "force_fp32_communication", "pipeline_result_broadcast", "sharding_propagation",
               "auto_pipeline")
# keys MindSpore accepts on set only; each describes a multi-device job
_SET_ONLY = ("group_ckpt_save_file", "parallel_optimizer_config", "pipeline_config",
             "pipeline_segments")

# booleans that change what a job of several ranks does and are not implemented there
_ONE_RANK_BOOLS = ("enable_parallel_optimizer",)

_state: dict = {}
_is_set: set = set()        # the keys set since the last reset (MindSpore's *_is_set)


def _refuse(key, value, why):
    raise NotImplementedError(
        f"set_auto_parallel_context: {key}={value!r} is not supported by minispore ({why}); "
        f"minispore runs stand-alone and data parallel over the ranks of the job")


def _world():
    """(size, rank) of the job's world (1, 0 without init())."""
    from .communicator import world
    w = world()
    return w.size, w.rank


def is_set(key: str) -> bool:
    """Whether `key` was set since the last reset (MindSpore's get_<key>_is_set)."""
    return key in _is_set


def _int(key, v):
    if not isinstance(v, int):            # bool is an int here, as in MindSpore's check
        raise TypeError(f"The parameter '{key}' must be {int}, but got {type(v)}")


def _positive_int(key, v):
    _int(key, v)
    if v < 1:
        raise ValueError(f"The context configuration parameter '{key}' must be a positive "
                         f"integer, but got the value of {key} : {v}.")


def _bool(key, v):
    if not isinstance(v, bool):
        raise TypeError(f"The parameter '{key}' must be {bool}, but got {type(v)}")


def _check(key, v):
    """Validate one setting; returns the {key: value} updates it makes."""
    if key == "parallel_mode":
        if not isinstance(v, str):
            raise TypeError(f"The parameter 'parallel_mode' must be {str}, but got {type(v)}")
        if v not in ParallelMode.MODE_LIST:
            raise ValueError("The context configuration parameter 'parallel_mode' only support "
                             "'stand_alone', 'data_parallel', 'hybrid_parallel', "
                             f"'semi_auto_parallel' and 'auto_parallel', but got the value : {v}.")
        if v not in _RUNNABLE_MODES:
            _refuse(key, v, "only 'stand_alone' and 'data_parallel' run")
        return {key: v}
    if key == "device_num":
        _positive_int(key, v)
        size = _world()[0]
        if v != size:
            _refuse(key, v, f"device_num must be the number of ranks the job runs, {size} "
                            f"(launch N ranks: python -m minispore run -n N script.py, and call "
                            f"mindspore.communication.init() first)")
        return {key: int(v)}
    if key == "global_rank":
        _int(key, v)
        if not 0 <= v <= 4095:
            raise ValueError(f"The context configuration parameter 'global_rank' must be in "
                             f"[0, 4095], but got the value of global_rank : {v}.")
        rank = _world()[1]
        if v != rank:
            _refuse(key, v, f"global_rank must be this process's rank in the job, {rank}")
        return {key: int(v)}
    if key in ("pipeline_stages", "grad_accumulation_step"):
        _positive_int(key, v)
        if v != 1:
            _refuse(key, v, f"{key} must be 1")
        return {key: v}
    if key in _FREE_BOOLS:
        _bool(key, v)
        if key in _ONE_RANK_BOOLS and v and _world()[0] > 1:
            _refuse(key, v, f"{key} over several ranks is not implemented")
        return {key: v, "full_batch_is_set": True} if key == "full_batch" else {key: v}
    if key in ("dump_local_norm", "dump_device_local_norm"):
        _bool(key, v)
        if v:
            _refuse(key, v, "local-norm dumps are not written")
        return {key: v}
    if key in ("search_mode", "auto_parallel_search_mode"):
        if v not in _SEARCH_MODES:
            raise ValueError("The context configuration parameter 'auto_parallel_search_mode' "
                             "only support 'recursive_programming', 'dynamic_programming' and "
                             f"'sharding_propagation', but got the value: {v}.")
        return {"auto_parallel_search_mode": v}
    if key == "all_reduce_fusion_config":
        if not isinstance(v, list):
            raise TypeError(f"The parameter '{key}' must be {list}, but got {type(v)}")
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
            raise TypeError(f"all_reduce_fusion_config must be a list of ints, got {v!r}")
        return {key: list(v)}          # the gradients' all-reduce split points: none happen here
    if key == "comm_fusion":
        merged = _comm_fusion(v)
        rule = merged["allreduce"]
        if isinstance(v.get("allreduce"), dict) and rule["mode"] == "index":
            return {key: merged, "all_reduce_fusion_config": list(rule["config"])}
        return {key: merged}
    if key == "dataset_strategy":
        if v not in ("data_parallel", "full_batch"):
            _refuse(key, v, "a dataset sharding strategy needs several devices")
        return {key: v, "full_batch": v == "full_batch"}
    if key in _SET_ONLY:
        _refuse(key, v, "it configures a multi-device job")
    if key in _DEFAULTS and key != "full_batch_is_set":
        if v != _DEFAULTS[key]:
            _refuse(key, v, f"only the default {_DEFAULTS[key]!r} applies")
        return {key: copy.deepcopy(v)}
    raise ValueError(f"Set context keyword {key} is not recognized!")


def _comm_fusion(v) -> dict:
    """comm_fusion merged into the current setting, with MindSpore's checks and messages."""
    if not isinstance(v, dict):
        raise TypeError(f"The parameter 'comm_fusion' must be {dict}, but got {type(v)}")
    merged = copy.deepcopy(_state.get("comm_fusion", _DEFAULTS["comm_fusion"]))
    for kind, rule in v.items():
        if kind == "openstate":
            _bool("openstate", rule)
            merged[kind] = rule
            continue
        if kind not in ("allreduce", "allgather", "reducescatter"):
            raise KeyError(f"comm fusion type must be openstate,allreduce, allgather or "
                           f"reducescatter, but got {kind}")
        if not isinstance(rule, dict) or "mode" not in rule:
            raise KeyError(f"comm_fusion {kind!r} must be a dict with 'mode' and 'config', "
                           f"but got {rule!r}")
        modes = ("auto", "index", "size") if kind == "allreduce" else ("auto", "size")
        mode, config = rule["mode"], rule.get("config")
        if mode not in modes:
            raise KeyError(f"fusion method mode must be {', '.join(modes[:-1])} or "
                           f"{modes[-1]}, but got {mode}")
        if mode == "size":
            if not isinstance(config, int) or isinstance(config, bool):
                raise TypeError(f"The parameter 'config' of comm_fusion {kind!r} must be "
                                f"{int}, but got {type(config)}")
            if config <= 0:
                raise ValueError(f"fusion threshold must be larger than 0, but got {config}")
        if mode == "index":
            _check("all_reduce_fusion_config", config)
        if kind != "allreduce" and mode != "auto":
            _refuse("comm_fusion", v, f"minispore fuses the gradients' all-reduces only; "
                                      f"{kind} runs unfused")
        merged[kind] = {"mode": mode, "config": copy.deepcopy(config)}
    return merged


def allreduce_fusion_rule() -> tuple:
    """How the data-parallel gradient all-reduces are fused: ("index", split indices) from
    all_reduce_fusion_config or comm_fusion's index mode, ("size", threshold MB) from its size
    mode or 64 MB under "auto" (MindSpore's), ("size", 0) when fusion is off (openstate
    False): every gradient its own all-reduce."""
    fusion = _state["comm_fusion"]
    rule = fusion["allreduce"]
    if not fusion.get("openstate", True):
        return "size", 0
    if rule["mode"] == "index":
        return "index", list(rule["config"])
    if _state["all_reduce_fusion_config"]:
        return "index", list(_state["all_reduce_fusion_config"])
    return "size", rule["config"] if rule["mode"] == "size" else 64


def set_auto_parallel_context(**kwargs):
    """Set auto-parallel options; all are validated before any is applied."""
    updates = {}
    for k, v in kwargs.items():
        updates.update(_check(k, v))
    _state.update(updates)
    _is_set.update(kwargs)


def get_auto_parallel_context(attr_key):
    """The value of one auto-parallel option (a copy for lists and dicts)."""
    key = "auto_parallel_search_mode" if attr_key == "search_mode" else attr_key
    if not isinstance(key, str) or key not in _state:
        raise ValueError(f"Get context keyword {attr_key} is not recognized!")
    return copy.deepcopy(_state[key])


def reset_auto_parallel_context():
    """Every auto-parallel option back to MindSpore's default."""
    _state.clear()
    _state.update(copy.deepcopy(_DEFAULTS))
    _is_set.clear()


reset_auto_parallel_context()
