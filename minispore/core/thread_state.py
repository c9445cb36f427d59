"""Attributes with one value per thread, read as fast as a plain attribute while no thread has
changed them.

What records an op (the executor: eager, or the graph builder of a graph being traced) and
whether a gradient is being taken (the tape's depth) belong to the thread that set them: a
dataset map worker calling minispore ops while the main thread traces Model.train's graph must
run them eagerly, not into that graph. Those attributes are read on every eager op, where a
`threading.local` read costs about four times a plain one; so `per_thread` makes an object whose
attributes live in its instance dict, holding the defaults, while every thread has the defaults
(the plain read), and whose class is switched to one with a property per attribute, reading the
calling thread's value, while any thread holds its own. Writes go through `__setattr__`: they
store the thread's value and switch the class under a lock, so a reader in another thread sees
either the defaults (right for it: it has set nothing) or its own value. A thread that ends
while holding its own value leaves the property reads on; they stay correct, only slower.
"""
from __future__ import annotations

import threading

_lock = threading.Lock()


def _is_default(value, default) -> bool:
    return value is default or (value.__class__ is default.__class__ and value == default)


class _Defaults:
    """The state while every thread has the defaults: plain instance-dict reads."""
    _local: threading.local
    _defaults: dict
    _fast: type
    _slow: type
    _held = 0           # how many (thread, attribute) pairs hold a value other than the default

    def __setattr__(self, name, value):
        fast = self._fast
        default = fast._defaults.get(name, _is_default)
        if default is _is_default:
            raise AttributeError(f"{type(self).__name__} has no per-thread attribute {name!r}; "
                                 f"its attributes are {', '.join(fast._defaults)}")
        own = fast._local.__dict__                  # this thread's values
        with _lock:
            if _is_default(value, default):
                if own.pop(name, _is_default) is not _is_default:
                    fast._held -= 1
            else:
                if name not in own:
                    fast._held += 1
                own[name] = value
            object.__setattr__(self, "__class__", fast._slow if fast._held else fast)

    def set_default(self, name: str, value) -> None:
        """The value every thread that has not set its own reads (set once, at import)."""
        fast = self._fast
        if name not in fast._defaults:
            raise AttributeError(f"{type(self).__name__} has no per-thread attribute {name!r}")
        with _lock:
            fast._defaults[name] = value
            self.__dict__[name] = value
            for cls in (fast, fast._slow):
                if isinstance(cls.__dict__.get(name), property):
                    setattr(cls, name, _thread_property(fast._local, name, value))


def _thread_property(local: threading.local, name: str, default):
    def get(self):
        return local.__dict__.get(name, default)

    def put(self, value):
        _Defaults.__setattr__(self, name, value)
    return property(get, put, doc=f"this thread's {name} (default {default!r})")


def per_thread(name: str, doc: str, **defaults):
    """An object whose attributes `defaults` (name=default value) hold one value per thread."""
    local = threading.local()
    fast = type(name, (_Defaults,), {"__doc__": doc, "__module__": __name__, "_local": local,
                                     "_defaults": dict(defaults), "_held": 0})
    slow = type(name, (fast,), {"__doc__": doc, "__module__": __name__, **{
        k: _thread_property(local, k, v) for k, v in defaults.items()}})
    fast._fast, fast._slow = fast, slow
    obj = object.__new__(fast)
    obj.__dict__.update(defaults)
    return obj
