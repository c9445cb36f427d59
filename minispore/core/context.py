"""Process-wide context: execution mode, device target and graph options (MindSpore's
`set_context` / `get_context` / `set_device`). Unknown keys and bad values raise ValueError
listing the valid choices; a device whose backend cannot be used raises RuntimeError saying why."""
from __future__ import annotations

import re
from typing import Any, Callable

GRAPH_MODE = 0
PYNATIVE_MODE = 1
# MindSpore's jit_syntax_level values (LAX the default, COMPATIBLE its middle level). Graph mode
# converts the same code at every level, computing Python values at compile time, as MindSpore
# does; what LAX adds there (JIT Fallback running Python that needs a tensor's value at run time)
# raises a GraphSyntaxError here that says so (graph/parser.py)
STRICT = 0
COMPATIBLE = 1
LAX = 2

_TARGETS = ("CPU", "GPU", "Ascend")
_JIT_LEVELS = ("O0", "O1", "O2")

_state: dict[str, Any] = {
    # NOTE: GRAPH_MODE is the default by design (the user asked for static graph first), unlike
    # MindSpore >= 2.0 whose default is PYNATIVE_MODE.
    "mode": GRAPH_MODE,
    "device_target": "CPU",
    "device_id": 0,
    # the fastest once compiled on the MLP training step (benchmarks/graph_vs_eager.py: O2 0.78 ms
    # per step, O1 1.05, O0 1.13); O2 compiles longer on the first call (benchmarks/README.md)
    "jit_level": "O2",
    "save_graphs": False,
    "save_graphs_path": ".",
    # the simulated Ascend device (backends/ascend_sim): precision mode and device profile
    "ascend_config": {},
    "max_device_memory": None,          # e.g. "2GB": the simulated HBM capacity
    "jit_syntax_level": LAX,
}


def _check_choice(key, value, choices):
    if value not in choices:
        raise ValueError(f"set_context: {key}={value!r} is not valid; choose one of "
                         f"{', '.join(repr(c) for c in choices)}")


def _set_mode(v):
    if isinstance(v, bool) or v not in (GRAPH_MODE, PYNATIVE_MODE):
        raise ValueError(f"set_context: mode={v!r} is not valid; use ms.GRAPH_MODE (0) or "
                         f"ms.PYNATIVE_MODE (1)")
    _state["mode"] = v


def _set_device_target(v):
    _check_choice("device_target", v, _TARGETS)
    from .device import current, get_backend
    b = get_backend(v)                   # raises RuntimeError naming why it is not usable
    _state["device_target"] = v
    current.backend = b


def _set_device_id(v):
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"set_context: device_id={v!r} is not valid; use an int >= 0")
    _state["device_id"] = v


def _set_jit_level(v):
    _check_choice("jit_level", v, _JIT_LEVELS)
    _state["jit_level"] = v


def _set_jit_syntax_level(v):
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"The parameter 'jit_syntax_level' must be <class 'int'>, but got "
                        f"{type(v)}")
    if v not in (STRICT, COMPATIBLE, LAX):
        raise ValueError(f"For 'jit_syntax_level', the value should be context.STRICT or "
                         f"context.LAX, but got {v}.")
    _state["jit_syntax_level"] = v


def _set_save_graphs(v):
    if v not in (True, False, 0, 1, 2, 3):
        raise ValueError(f"set_context: save_graphs={v!r} is not valid; use True/False or 0-3")
    _state["save_graphs"] = bool(v)


def _set_save_graphs_path(v):
    if not isinstance(v, str) or not v:
        raise ValueError(f"set_context: save_graphs_path={v!r} is not valid; use a directory path")
    _state["save_graphs_path"] = v


# option -> validator(value) that raises ValueError naming the bad value: the checks a backend
# owns (the simulated Ascend's ascend_config), registered by minispore.backends so core never
# imports a backend's tables
_validators: dict[str, Callable[[Any], None]] = {}


def register_option_validator(key: str, validator: Callable[[Any], None]) -> None:
    """Let a backend check set_context's `key` before it is applied: `validator(value)` raises
    ValueError naming what is wrong and what is valid."""
    _validators[key] = validator


def _validate(key: str, v) -> None:
    check = _validators.get(key)
    if check is None:
        raise RuntimeError(f"set_context: {key} is checked by its device backend and none has "
                           f"registered a validator; import minispore (which imports "
                           f"minispore.backends) before setting it")
    check(v)


def _reconfigure_ascend():
    from .device import _cache
    b = _cache.get("Ascend")
    if b is not None:
        b.configure()


def _set_ascend_config(v):
    _validate("ascend_config", v)
    _state["ascend_config"] = {**_state["ascend_config"], **v}
    _reconfigure_ascend()


_UNITS = {"GB": 2**30, "MB": 2**20, "KB": 2**10}
_SIZE = re.compile(r"(\d+)(?:\.(\d+))?(GB|MB|KB)", re.IGNORECASE | re.ASCII)


def _size_bytes(v) -> int | None:
    """Bytes of a size string such as '3.5GB' (MindSpore's "xxGB" format; MB and KB too),
    exactly (no float rounding or overflow); None if `v` is not such a string."""
    m = _SIZE.fullmatch(v) if isinstance(v, str) else None
    if m is None:
        return None
    whole, frac, unit = m.group(1), m.group(2) or "", m.group(3).upper()
    return int(whole + frac) * _UNITS[unit] // 10**len(frac)


def _set_max_device_memory(v):
    if v is not None:
        n = _size_bytes(v)
        if n is None or n <= 0:
            raise ValueError(f"set_context: max_device_memory={v!r} is not valid; use a "
                             f"positive size of digits and a unit, such as '2GB', '3.5GB' or "
                             f"'512MB'")
    _state["max_device_memory"] = v
    _reconfigure_ascend()


def max_device_memory_bytes() -> int | None:
    v = _state["max_device_memory"]
    return None if v is None else _size_bytes(v)


_SETTERS = {
    "mode": _set_mode,
    "device_target": _set_device_target,
    "device_id": _set_device_id,
    "jit_level": _set_jit_level,
    "jit_syntax_level": _set_jit_syntax_level,
    "save_graphs": _set_save_graphs,
    "save_graphs_path": _set_save_graphs_path,
    "ascend_config": _set_ascend_config,
    "max_device_memory": _set_max_device_memory,
}


def set_context(**kwargs) -> None:
    """Set context options; all are validated before any is applied."""
    unknown = [k for k in kwargs if k not in _SETTERS]
    if unknown:
        raise ValueError(f"set_context: unknown keyword argument(s) {', '.join(unknown)}; valid: "
                         f"{', '.join(_SETTERS)}")
    from .device import current
    saved, saved_backend = dict(_state), current.backend
    try:
        for k, v in kwargs.items():
            _SETTERS[k](v)
    except Exception:
        reconfigure = any(_state[k] != saved[k] for k in ("ascend_config", "max_device_memory"))
        _state.update(saved)
        current.backend = saved_backend
        if reconfigure:
            _reconfigure_ascend()
        raise


def get_context(attr_key: str):
    if attr_key not in _state:
        raise ValueError(f"get_context: unknown key {attr_key!r}; valid: {', '.join(_state)}")
    return _state[attr_key]


def set_device(device_target: str, device_id: int | None = None) -> None:
    """MindSpore 2.x `set_device`."""
    kw = {"device_target": device_target}
    if device_id is not None:
        kw["device_id"] = device_id
    set_context(**kw)


def mode() -> int:
    return _state["mode"]


def device_target() -> str:
    return _state["device_target"]
