"""minispore.parallel._utils: the getters of MindSpore's `mindspore.parallel._utils` that training
scripts import, reading minispore's auto-parallel context (one process: device_num 1, rank 0)."""
from ..core.auto_parallel import get_auto_parallel_context as _get


def _get_parallel_mode():
    return _get("parallel_mode")


def _get_device_num():
    return _get("device_num")


def _get_global_rank():
    return _get("global_rank")


def _get_gradients_mean():
    return _get("gradients_mean")


def _get_enable_parallel_optimizer():
    return _get("enable_parallel_optimizer")


def _get_pipeline_stages():
    return _get("pipeline_stages")


def _get_full_batch():
    return _get("full_batch")


def _is_in_auto_parallel_mode():
    return _get("parallel_mode") in ("semi_auto_parallel", "auto_parallel")
