"""`ms.jit`: compile a function (or method) to a graph in either mode, as MindSpore's `jit`.

What is compiled is always the user's own function: a bound method compiles its function with
the object as the first argument, a functools.partial its function with the bound arguments in
front (tensors among them are graph inputs), a Cell its `construct` (as calling the Cell in
GRAPH_MODE does), an object with a `__call__` method that method. The compile cache
(graph/cache.py) keys on that function, never on the wrapper ms.jit makes."""
from __future__ import annotations

import functools
import types

from . import context
from .cells import is_cell
from .graph import compile as graph_compile

_CAPTURE_MODES = ("ast",)


def _target(function):
    """(the function to compile, arguments bound in front of the call's, keywords bound,
    the Cell it belongs to or None)."""
    fn, front, kw = function, (), {}
    for _ in range(100):
        if isinstance(fn, functools.partial):
            fn, front, kw = fn.func, tuple(fn.args) + front, {**fn.keywords, **kw}
        elif isinstance(fn, types.MethodType):
            fn, front = fn.__func__, (fn.__self__,) + front
        elif isinstance(fn, staticmethod):
            fn = fn.__func__
        else:
            break
    if is_cell(fn):
        return type(fn).construct, (fn,) + front, kw, fn
    if isinstance(fn, classmethod):
        raise TypeError(f"jit: cannot compile the classmethod object {fn.__func__.__qualname__}"
                        f" itself; put @ms.jit below @classmethod (so it wraps the function)")
    if not callable(fn):
        raise TypeError(f"jit: expected a function, method, functools.partial, Cell or callable"
                        f" object, got {type(fn).__name__}")
    if not isinstance(fn, (types.FunctionType, types.BuiltinFunctionType, type)):
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType):     # a callable object: its __call__ runs
            return call, (fn,) + front, kw, None
    return fn, front, kw, None


def jit(function=None, *, capture_mode="ast", jit_level=None, dynamic=0, fullgraph=False,
        backend="", **options):
    """Decorator: `@ms.jit`, `@ms.jit(...)` or `ms.jit(fn)`. The function's source is parsed to
    a graph on the first call per input signature; later calls run the cached graph. Only
    capture_mode='ast' (source conversion) exists: 'bytecode' and 'trace' are MindSpore's
    experimental alternatives and raise ValueError here rather than silently changing meaning.
    `jit_level` (O0/O1/O2) applies to this function; None uses the context's jit_level.
    `dynamic` (0/1) and `backend` ('', 'ms_backend', 'GE') are checked; minispore compiles one
    graph per input shape and runs its own backend either way. `fullgraph` is MindSpore 2.10's
    per-function syntax level (True: STRICT, False: LAX): code the parser cannot convert raises a
    GraphSyntaxError at either (minispore has no run-time JIT Fallback, see
    set_context(jit_syntax_level)). Other keyword options raise TypeError."""
    if jit_level is not None and jit_level not in ("O0", "O1", "O2"):
        raise ValueError(f"jit: jit_level={jit_level!r} is not valid; choose 'O0', 'O1' or 'O2'")
    if capture_mode not in _CAPTURE_MODES:
        raise ValueError(f"jit: capture_mode={capture_mode!r} is not supported; minispore "
                         f"converts the Python source: use capture_mode='ast'")

    unknown = sorted(options)
    if unknown:
        raise TypeError(f"jit: unexpected keyword argument(s) {unknown}; ms.jit takes "
                        f"capture_mode, jit_level, dynamic, fullgraph and backend")
    if dynamic not in (0, 1):
        raise ValueError(f"jit: dynamic={dynamic!r} is not valid; choose 0 or 1 (minispore "
                         f"compiles one graph per input shape either way)")
    if backend not in ("", "ms_backend", "GE"):
        raise ValueError(f"jit: backend={backend!r} is not valid; choose '', 'ms_backend' or "
                         f"'GE' (minispore runs its own backend for each device either way)")

    def deco(function):
        fn, front, bound_kw, cell = _target(function)
        name = getattr(fn, "__qualname__", type(fn).__name__)

        def at_level(run, *args):
            """run(*args) with this function's jit_level in force (if it names one)."""
            if jit_level is None:
                return run(*args)
            state = context._state
            saved, state["jit_level"] = state["jit_level"], jit_level
            try:
                return run(*args)
            finally:
                state["jit_level"] = saved

        # the name and docstring of what was decorated (a Cell's: its construct's)
        @functools.wraps(fn if cell is not None else function)
        def wrapper(*args, **kwargs):
            call_args = front + args
            # a Cell method (an @ms.jit construct): its graphs key on, and go with, that Cell
            owner = cell if cell is not None or not call_args or \
                not is_cell(call_args[0]) else call_args[0]
            return at_level(lambda: graph_compile.run(fn, call_args, {**bound_kw, **kwargs},
                                                      key_obj=owner, name=name))

        def run_steps(batches):
            """fn over each batch in order, as one compiled program where the backend can
            (ms.data_sink)."""
            if bound_kw:
                raise TypeError(f"data_sink: {name} is a functools.partial with bound keyword "
                                f"arguments {sorted(bound_kw)}; bind them positionally")
            return at_level(lambda: graph_compile.run_steps(fn, front, batches, key_obj=cell,
                                                            name=name))
        wrapper.__wrapped_jit__ = fn
        wrapper._run_steps = run_steps
        # @ms.jit above @staticmethod: still a static method of its class (no `self` passed)
        return staticmethod(wrapper) if isinstance(function, staticmethod) else wrapper
    return deco(function) if function is not None else deco


def jit_class(cls):
    """`@ms.jit_class`: the class's instances may be used inside graphs (attributes read,
    methods parsed). minispore's parser already reads any object's attributes and parses its
    methods, so this checks the target as MindSpore does and marks it `__ms_class__`."""
    import inspect
    from .cells import is_cell_class
    if not inspect.isclass(cls):
        raise TypeError(f"Decorator jit_class can only be used for class type, but got {cls}.")
    if is_cell_class(cls):
        raise TypeError(f"Decorator jit_class is used for user-defined classes and cannot be "
                        f"used for nn.Cell: {cls}.")
    cls.__ms_class__ = True
    return cls


def lazy_inline(fn=None, attrs=None, policy=None):
    """`@ms.lazy_inline` on a Cell's `__init__` (MindSpore's compile-time hint for a repeated
    sub-Cell). The Cell behaves the same; the call records, as MindSpore does,
    `cell_init_args` ('lazy_inline_<class><init args or `attrs` values>') and, for
    policy='front', `no_inline = False` on the instance, and `_lazy_inline = True` with the
    bound init arguments (`_lazy_inline_args`). What the hint asks for, compiling a repeated
    Cell's computation once, the CPU's native sink does for every graph, decorated or not: each
    distinct node computation is one kernel, compiled once and called at every place
    (backends/cpu/native_split.py), so the mark changes nothing there."""
    import inspect

    def wrap(init):
        if inspect.isclass(init):
            raise ValueError(f"The lazy_inline should decorate the __init__ function, not the "
                             f"class {init.__name__}.")
        if getattr(init, "__name__", None) != "__init__":
            raise ValueError(f"The lazy_inline should decorate the __init__ function, not the "
                             f"function: {getattr(init, '__name__', init)}.")

        @functools.wraps(init)
        def lazy_inline_init(self, *args, **kwargs):
            bound = inspect.signature(init).bind(self, *args, **kwargs).arguments
            bound.pop(next(iter(bound)))                   # self
            init(self, *args, **kwargs)
            if policy == "front":
                self.no_inline = False
            elif policy is not None:
                raise ValueError("policy must be None or 'front'")
            if attrs is not None and not isinstance(attrs, (list, str)):
                raise ValueError("attrs must be list or string")
            if attrs is None:
                values = list(bound.values())
            elif isinstance(attrs, str):
                values = getattr(self, attrs) if hasattr(self, attrs) else []
            else:
                if not all(isinstance(a, str) for a in attrs):
                    raise ValueError("attr must be a string")
                values = [getattr(self, a) for a in attrs if hasattr(self, a)]
            self.cell_init_args = "lazy_inline_" + type(self).__name__ + \
                (str(dict(bound).values()) if attrs is None else str(values))
            self.__dict__["_lazy_inline_args"] = dict(bound)
            type(self)._lazy_inline = True
        lazy_inline_init._lazy_inline = True
        return lazy_inline_init
    return wrap(fn) if fn is not None else wrap
