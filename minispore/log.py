"""minispore.log: MindSpore's `mindspore.log` logger functions (debug, info, warning, error,
critical, get_level, get_log_config) on one Python logger that writes to stderr in MindSpore's
line format. The level comes from GLOG_v as in MindSpore (0 DEBUG, 1 INFO, 2 WARNING (the
default), 3 ERROR, 4 CRITICAL); logging to files (GLOG_logtostderr=0) is not implemented and
raises an error when the logger is first used."""
from __future__ import annotations

import logging
import os
import sys
import threading
import time

__all__ = ["debug", "info", "warning", "error", "critical", "get_level", "get_log_config"]

STD_ON = "1"
STD_OFF = "0"
_GLOG_TO_LEVEL = {"0": logging.DEBUG, "1": logging.INFO, "2": logging.WARNING,
                  "3": logging.ERROR, "4": logging.CRITICAL}
_LEVEL_TO_GLOG = {v: k for k, v in _GLOG_TO_LEVEL.items()}
_logger = None
_lock = threading.Lock()


class _Formatter(logging.Formatter):
    """`[WARNING] ME(pid:thread,process):YYYY-mm-dd-HH:MM:SS.mmm.000 [file:line] msg`."""

    def format(self, record):
        t = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(record.created))
        ms = f"{int(record.msecs):03d}"
        return (f"[{record.levelname}] ME({record.process}:{record.thread},"
                f"{record.processName}):{t}.{ms}.00 [{record.pathname}:{record.lineno}] "
                f"{record.getMessage()}")


class _StderrHandler(logging.StreamHandler):
    """Writes to the sys.stderr of the moment (a stream replaced after the logger was made,
    as pytest's capture does, still receives the records)."""

    def __init__(self):
        logging.Handler.__init__(self)

    @property
    def stream(self):
        return sys.stderr


def _get_logger():
    global _logger
    with _lock:
        if _logger is None:
            level = os.environ.get("GLOG_v", "2")
            if level not in _GLOG_TO_LEVEL:
                raise ValueError(f"GLOG_v must be one of 0, 1, 2, 3, 4, got {level!r}")
            if os.environ.get("GLOG_logtostderr", STD_ON) != STD_ON:
                raise NotImplementedError("GLOG_logtostderr=0 (logging to files under "
                                          "GLOG_log_dir) is not supported by minispore; its "
                                          "log writes to stderr")
            logger = logging.getLogger("minispore")
            logger.propagate = False
            handler = _StderrHandler()
            handler.setFormatter(_Formatter())
            logger.addHandler(handler)
            logger.setLevel(_GLOG_TO_LEVEL[level])
            _logger = logger
    return _logger


def debug(msg, *args, **kwargs):
    """Log a message with severity 'DEBUG' on the minispore logger."""
    _get_logger().debug(msg, *args, stacklevel=2, **kwargs)


def info(msg, *args, **kwargs):
    """Log a message with severity 'INFO' on the minispore logger."""
    _get_logger().info(msg, *args, stacklevel=2, **kwargs)


def warning(msg, *args, **kwargs):
    """Log a message with severity 'WARNING' on the minispore logger."""
    _get_logger().warning(msg, *args, stacklevel=2, **kwargs)


def error(msg, *args, **kwargs):
    """Log a message with severity 'ERROR' on the minispore logger."""
    _get_logger().error(msg, *args, stacklevel=2, **kwargs)


def critical(msg, *args, **kwargs):
    """Log a message with severity 'CRITICAL' on the minispore logger."""
    _get_logger().critical(msg, *args, stacklevel=2, **kwargs)


def get_level():
    """The logger's level as MindSpore's GLOG_v string: '0' DEBUG ... '4' CRITICAL."""
    return _LEVEL_TO_GLOG.get(_get_logger().getEffectiveLevel())


def get_log_config():
    """The logger's configuration: {'GLOG_v': level, 'GLOG_logtostderr': '1'}."""
    return {"GLOG_v": get_level(), "GLOG_logtostderr": STD_ON}
