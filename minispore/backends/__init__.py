"""Device backends: cpu (numba), gpu (cupy), ascend_sim (simulated Ascend NPU).

Importing this package (minispore/__init__.py does) registers each backend with core.device by
module name, and with core.context the checks of the context options a backend owns, without
importing any backend: a backend is imported on first use, and a check imports its backend's
tables only when the option is set."""
from __future__ import annotations

from ..core import context as _context
from ..core.device import register_backend as _register_backend

for _target, _module in (("CPU", "cpu"), ("GPU", "gpu"), ("Ascend", "ascend_sim")):
    _register_backend(_target, f"{__name__}.{_module}")

_ASCEND_KEYS = ("precision_mode", "device_profile")


def _check_ascend_config(v) -> None:
    """set_context(ascend_config=...): a dict of precision_mode and device_profile, each one
    of the simulated Ascend's precision modes and device profiles."""
    if not isinstance(v, dict):
        raise ValueError(f"set_context: ascend_config={v!r} is not valid; use a dict such as "
                         f"{{'precision_mode': 'force_fp32'}}")
    from .ascend_sim.kernels import PRECISION_MODES
    from .ascend_sim.profile import PROFILES
    for k, x in v.items():
        if k not in _ASCEND_KEYS:
            raise ValueError(f"set_context: ascend_config key {k!r} is not supported; valid: "
                             f"{', '.join(_ASCEND_KEYS)}")
        _context._check_choice(f"ascend_config['{k}']", x,
                               tuple(PRECISION_MODES) if k == "precision_mode"
                               else tuple(PROFILES))


_context.register_option_validator("ascend_config", _check_ascend_config)
