"""JIT Fallback at run time (jit_syntax_level LAX, MindSpore's default): Python code that needs
a tensor's value while a graph is built runs in Python when the graph runs.

Reading a graph tensor's value (`x.asnumpy()`, `.numpy()`, `.item()`, `.tolist()`; a
Parameter's is refused, as MindSpore refuses it) gives a `RunTimeValue`: a Python value known only
at run time, standing for a function of the tensors' run-time values. Python code applied to it
(operators, attributes, method calls, numpy functions through `__array_ufunc__` /
`__array_function__`, calls of it) gives another RunTimeValue; nothing runs yet. Where a tensor
is needed again (`ms.Tensor(v)`, an op's input, the graph's result), the value becomes a
host-callback node (core/custom_op.py's pyfunc op, on every backend): at each run it copies the
tensors to the host, evaluates the Python expression, and converts the result as `ms.Tensor`
would. The result's shape and dtype, which the graph needs while compiling, come from running
the expression once on stand-in arrays (ones of each tensor's shape and dtype); a run whose
result has another shape or dtype (a data-dependent shape) is an error naming the line, never a
silent reshape. As the condition of an `if`, a conditional expression or a `while` it becomes a
bool graph tensor, so the branch is taken at run time. It cannot steer other compile-time Python
(`len(v)`, iterating it, a shape): that is a GraphSyntaxError with the line; `float(v)`, `int(v)`, `max(v, 1)` stay run-time
values. No gradient flows through the fallback (reading a value detaches it, as `asnumpy()`
leaves PyNative's tape), so both modes differentiate alike. Each fallback node warns once, as
MindSpore logs its fallbacks.

At jit_syntax_level STRICT or COMPATIBLE reading a graph tensor's value stays an error.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import context
from ..errors import GraphSyntaxError


def active(t) -> bool:
    """Whether reading tensor `t`'s value now defers it to run time: a graph is being built at
    jit_syntax_level LAX and `t` is one of its values or a Parameter."""
    from ..primitive import executor
    from ..tensor import Parameter
    from .builder import GraphBuilder, is_symbolic
    if not isinstance(executor.current, GraphBuilder):
        return False
    if context._state.get("jit_syntax_level") != context.LAX:
        return False
    return is_symbolic(t) or isinstance(t, Parameter)


_DEFERRED_MODULES = ("numpy", "scipy", "math", "cmath", "statistics")
_VALUE_READS = {"asnumpy": lambda a: np.array(a, copy=True),
                "numpy": lambda a: np.array(a, copy=True),
                "item": lambda a: a.reshape(()).item(),
                "tolist": lambda a: a.tolist()}


_DEFERRED_BUILTINS = (float, int, bool, abs, round, max, min, sum, complex, str)


def _is_graph_tensor(x) -> bool:
    from ..tensor import Parameter, Tensor
    from .builder import is_symbolic
    return isinstance(x, Tensor) and (is_symbolic(x) or isinstance(x, Parameter))


def value_reader(t, attr: str, text: str):
    """The method `t.<attr>` (asnumpy, numpy, item, tolist) reading a graph tensor's value at run
    time, or None when `attr` is not such a read or the fallback is off."""
    convert = _VALUE_READS.get(attr)
    if convert is None:
        return None
    from ..primitive import executor
    from ..tensor import Parameter
    from .builder import GraphBuilder
    if isinstance(t, Parameter) and isinstance(executor.current, GraphBuilder):
        # MindSpore 2.10 refuses this at every level (RuntimeError); reading the value while
        # compiling would bake in the value the Parameter has now
        raise GraphSyntaxError(
            f"the Parameter {t.name!r}'s method {attr!r} is not supported in construct or a "
            f"@jit function (its value changes between calls); read it outside, e.g. in "
            f"__init__, or use it as a tensor")
    if not active(t):
        return None

    def read(*args, **kwargs):
        if args or kwargs:
            raise TypeError(f"Tensor.{attr}() takes no arguments")
        if attr == "item" and t.size != 1:
            raise ValueError(f"Tensor.item: only a tensor with one element can be converted to "
                             f"a Python scalar, got shape {t.shape}")
        return RunTimeValue.read(t, f"{text}()", convert)
    return read


def defers_call(func, args, kwargs) -> bool:
    """Whether calling `func` (a numpy/scipy/math function) on these arguments must wait for
    run time: the fallback is on and an argument is a graph tensor or a run-time value."""
    flat = list(args) + list(kwargs.values())
    flat += [x for a in flat if type(a) in (tuple, list) for x in a]
    if any(func is b for b in _DEFERRED_BUILTINS):  # float(v), max(v, 1): of a run-time value
        return any(isinstance(x, RunTimeValue) for x in flat)
    mod = getattr(func, "__module__", None) or getattr(type(func), "__module__", "") or ""
    if mod.split(".")[0] not in _DEFERRED_MODULES or isinstance(func, type):
        return False
    hit = [x for x in flat if isinstance(x, RunTimeValue) or _is_graph_tensor(x)]
    return bool(hit) and any(isinstance(x, RunTimeValue) or active(x) for x in hit)


class _Leaf:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class RunTimeValue:
    """A Python value computed at run time from graph tensors (see the module docstring)."""

    __slots__ = ("_fn", "_args", "_kwargs", "_tensors", "_text")
    __hash__ = None
    _ms_runtime_value = True        # Tensor(value) and the builder recognise it by this

    def __init__(self, fn, args, kwargs, tensors, text):
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self._tensors, self._text = tensors, text

    # -- building -----------------------------------------------------------------------------
    @staticmethod
    def read(tensor, how: str, convert):
        """The run-time value `convert(array)` of `tensor` (`how`: the call, for messages)."""
        return RunTimeValue(convert, (_Leaf(0),), {}, [tensor], how)

    @staticmethod
    def apply(fn, args, kwargs, text):
        """fn(*args, **kwargs) deferred; args may hold RunTimeValues (their tensors merge)."""
        tensors: list = []

        def lift(a):
            if _is_graph_tensor(a):                 # a graph tensor: its value, at run time
                tensors.append(a)
                return _Leaf(len(tensors) - 1)
            if isinstance(a, RunTimeValue):
                offset = _merge(tensors, a._tensors)
                return _Shifted(a, offset)
            if isinstance(a, (tuple, list)):
                return type(a)(lift(x) for x in a) if type(a) in (tuple, list) else a
            return a
        args = tuple(lift(a) for a in args)
        kwargs = {k: lift(v) for k, v in kwargs.items()}
        return RunTimeValue(fn, args, kwargs, tensors, text)

    def _evaluate(self, arrays):
        def val(a):
            if isinstance(a, _Leaf):
                return arrays[a.index]
            if isinstance(a, _Shifted):
                return a.value._evaluate(arrays[a.offset:a.offset + len(a.value._tensors)])
            if type(a) in (tuple, list):
                return type(a)(val(x) for x in a)
            return a
        return self._fn(*[val(a) for a in self._args],
                        **{k: val(v) for k, v in self._kwargs.items()})

    # -- becoming a tensor again ----------------------------------------------------------------
    def to_tensor(self, dtype=None):
        """The graph tensor of this value (a host-callback node), as `ms.Tensor(value, dtype)`."""
        from ..custom_op import pyfunc_op
        from ..primitive import apply
        from ..tensor import Tensor, to_numpy
        from ..primitive import executor
        loc = getattr(executor.current, "loc", None)
        where = f" at {loc.short()}" if loc is not None else ""
        stand_ins = [np.ones(t.shape, t.dtype.np) for t in self._tensors]
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                probe = Tensor(self._evaluate(stand_ins), dtype)
        except Exception as e:          # noqa: BLE001  (reported: the graph cannot be typed)
            raise GraphSyntaxError(
                f"JIT Fallback{where}: `{self._text}` runs in Python at run time, but its "
                f"result's shape and dtype could not be found while compiling (running it on "
                f"stand-in arrays of ones raised {type(e).__name__}: {e}); compute it with "
                f"tensor ops, or run in PyNative mode") from None
        shape, out_dtype = tuple(probe.shape), probe.dtype
        text = self._text

        def run(*arrays):
            with np.errstate(all="ignore"):
                a = to_numpy(self._evaluate(list(arrays)), dtype)
            if tuple(a.shape) != shape or a.dtype != out_dtype.np:
                raise GraphSyntaxError(
                    f"JIT Fallback{where}: `{text}` gave shape {tuple(a.shape)} and dtype "
                    f"{a.dtype} at run time, but {shape} and {out_dtype} while compiling (a "
                    f"data-dependent shape); the graph's shapes are fixed when it compiles: "
                    f"run this code in PyNative mode")
            return a

        def no_gradient(*inputs_out_dout):
            # reading a value detaches it (asnumpy() in PyNative leaves the tape): no gradient
            # reaches the tensors it was computed from
            from ..ops.array import zeros_like
            return tuple(zeros_like(t) for t in inputs_out_dout[:-2])
        op = pyfunc_op(run, list(shape), out_dtype, no_gradient, f"JIT Fallback `{text}`")
        message = (f"graph mode (jit_syntax_level LAX){where}: `{text}` needs a tensor's value, "
                   f"so it runs in Python at every call, outside the compiled graph "
                   f"(MindSpore's JIT Fallback); no gradient flows through it")
        if loc is not None:
            warnings.warn_explicit(message, UserWarning, loc.file, loc.line)
        else:
            warnings.warn(message, UserWarning, stacklevel=2)
        return apply(op, *self._tensors)

    # -- compile-time uses: refused -------------------------------------------------------------
    def _needs_value(self, what):
        raise GraphSyntaxError(
            f"`{self._text}` is known only at run time (JIT Fallback), so it cannot be used "
            f"{what} while the graph compiles; use tensor ops and a tensor `if`/`while`, or "
            f"PyNative mode")

    def __bool__(self):
        self._needs_value("as a Python condition")

    def __len__(self):
        self._needs_value("in len()")

    def __iter__(self):
        self._needs_value("as an iterable")

    def __index__(self):
        self._needs_value("as an index or size")

    def __int__(self):
        self._needs_value("in int()")

    def __float__(self):
        self._needs_value("in float()")

    def __repr__(self):
        return f"<run-time value of `{self._text}`>"

    # -- deferred Python: attribute, call, subscript, operators, numpy -----------------------
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return RunTimeValue.apply(getattr, (self, name), {}, f"{self._text}.{name}")

    def __call__(self, *args, **kwargs):
        return RunTimeValue.apply(lambda f, *a, **k: f(*a, **k), (self,) + args, kwargs,
                                  f"{self._text}(...)")

    def __getitem__(self, key):
        return RunTimeValue.apply(operator.getitem, (self, key), {}, f"{self._text}[...]")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        fn = getattr(ufunc, method)
        return RunTimeValue.apply(fn, inputs, kwargs, f"np.{ufunc.__name__}({self._text}, ...)")

    def __array_function__(self, func, types, args, kwargs):
        return RunTimeValue.apply(func, args, kwargs, f"np.{func.__name__}({self._text}, ...)")


class _Shifted:
    """A RunTimeValue inside another, whose tensors start at `offset` of the outer's list."""
    __slots__ = ("value", "offset")

    def __init__(self, value, offset):
        self.value, self.offset = value, offset


def _merge(tensors: list, more: list) -> int:
    """Append `more` to `tensors`; the offset where they start."""
    offset = len(tensors)
    tensors.extend(more)
    return offset


def _binary(name, sym):
    op = getattr(operator, name)

    def forward(self, other):
        return RunTimeValue.apply(op, (self, other), {}, f"{self._text} {sym} ...")

    def reflected(self, other):
        return RunTimeValue.apply(op, (other, self), {}, f"... {sym} {self._text}")
    return forward, reflected


for _name, _sym in (("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"),
                    ("floordiv", "//"), ("mod", "%"), ("pow", "**"), ("matmul", "@"),
                    ("and_", "&"), ("or_", "|"), ("xor", "^"), ("lshift", "<<"),
                    ("rshift", ">>")):
    _f, _r = _binary(_name, _sym)
    _dunder = _name.rstrip("_")
    setattr(RunTimeValue, f"__{_dunder}__", _f)
    setattr(RunTimeValue, f"__r{_dunder}__", _r)
for _name, _sym in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="),
                    ("ne", "!=")):
    setattr(RunTimeValue, f"__{_name}__", _binary(_name, _sym)[0])
for _name in ("neg", "pos", "abs", "invert"):
    setattr(RunTimeValue, f"__{_name}__",
            (lambda op: lambda self: RunTimeValue.apply(op, (self,), {}, f"{op.__name__}"
                                                         f"({self._text})"))(
                getattr(operator, _name)))


def condition(v):
    """A condition as the parser branches on it: a run-time value becomes a bool graph tensor,
    so `if x.asnumpy().sum() > 1:` is a tensor `if` (MindSpore's runtime fallback decides it
    at run time too)."""
    if isinstance(v, RunTimeValue):
        from .. import dtype as dt
        return v.to_tensor(dt.bool_)
    return v


def materialize(v):
    """A graph result with each RunTimeValue turned into its tensor (nested containers too)."""
    if isinstance(v, RunTimeValue):
        return v.to_tensor()
    if type(v) in (tuple, list):
        return type(v)(materialize(x) for x in v)
    if isinstance(v, dict):
        return {k: materialize(x) for k, x in v.items()}
    return v
