"""minispore.parallel._utils: the getters of MindSpore's `mindspore.parallel._utils` that training
scripts import, reading minispore's auto-parallel context as MindSpore's do: stand-alone is one
device of rank 0; otherwise device_num and global_rank are the context's where set, else the
job's (get_group_size(), get_rank())."""
from ..core.auto_parallel import get_auto_parallel_context as _get
from ..core.auto_parallel import is_set as _is_set


def _get_parallel_mode():
    return _get("parallel_mode")


def _get_device_num():
    if _get("parallel_mode") == "stand_alone":
        return 1
    if not _is_set("device_num"):
        from ..communication.management import get_group_size
        return get_group_size()
    return _get("device_num")


def _get_global_rank():
    if _get("parallel_mode") == "stand_alone":
        return 0
    if not _is_set("global_rank"):
        from ..communication.management import get_rank
        return get_rank()
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
