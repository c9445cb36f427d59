"""MindSpore's parameter-server context (`set_ps_context` / `get_ps_context` /
`reset_ps_context`) for one process: every key MindSpore 2.10 reads back returns its default;
enabling the parameter server, or any setting that configures its cluster, raises
NotImplementedError naming it (a parameter server needs scheduler, server and worker
processes)."""
from __future__ import annotations

# MindSpore 2.10's defaults, as get_ps_context returns them (observed by running MindSpore 2.10)
_DEFAULTS = {"enable_ps": False, "config_file_path": "", "enable_ssl": False,
             "ms_role": "MS_NOT_PS", "scheduler_ip": "127.0.0.1", "scheduler_port": 6667,
             "server_mode": "", "server_num": 0, "worker_num": 0}
_SET_ONLY = ("client_password", "server_password")
_BOOLS = ("enable_ps", "enable_ssl")
_state: dict = dict(_DEFAULTS)


def set_ps_context(**kwargs):
    """Set parameter-server options; all are validated before any is applied."""
    for k, v in kwargs.items():
        if k not in _DEFAULTS and k not in _SET_ONLY:
            raise ValueError(f"Set PS context keyword {k} is not recognized!")
        if k in _BOOLS and not isinstance(v, bool):
            raise TypeError(f"The parameter '{k}' must be {bool}, but got {type(v)}")
        if k in _SET_ONLY or v != _DEFAULTS[k]:
            raise NotImplementedError(
                f"set_ps_context: {k}={v!r} is not supported by minispore, which runs one "
                f"process; the parameter server (scheduler, server and worker processes) is "
                f"not implemented")
    _state.update(kwargs)


def get_ps_context(attr_key):
    """The value of one parameter-server option."""
    if attr_key not in _state:
        raise ValueError(f"Get PS context keyword {attr_key} is not recognized!")
    return _state[attr_key]


def reset_ps_context():
    """Every parameter-server option back to MindSpore's default."""
    _state.clear()
    _state.update(_DEFAULTS)
