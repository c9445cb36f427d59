"""`ms.mutable`: a scalar, tuple, list or dict argument of a compiled function that is a run-time
input of the graph instead of a compile-time constant, as MindSpore's `mutable`.

`mutable(v)` returns `v` marked (MindSpore's own marker classes: `_Int`, `_Float`, `_Bool`,
`_Tuple`, `_List`, `_Dict`, with `__ms_mutable__` set); in PyNative it behaves as `v`. When a
graph is called (graph/compile.py), `graph_args` turns every scalar of a marked value (in a
marked container: every scalar inside, at any depth) into a `ScalarInput`: a concrete 0-d tensor
(int64, float64 or bool) that remembers its Python type. The cache keys it by that type only, so
another value runs the same graph. While the graph is built the input is a `SymScalar`: a
symbolic 0-d tensor that follows MindSpore's scalar rules under Python operators (int op int is an
int, `/` a float, comparisons a bool; a float is computed in float32, as MindSpore's graph
scalars; with a tensor it takes the dtype a Python number would give). A SymScalar returned by
the graph comes back as a Python number (a float input returned unchanged keeps its exact value).
An op function (`ops.add(x, n)`) takes it as it takes a Python number (graph/builder.py); where
the graph needs its value at compile time (a shape, `range(n)`) it raises. `float(t)`, `int(t)`,
`bool(t)` of a one-element graph tensor, numbers joined by a tensor `if`, and `max`/`min` of
variable scalars are SymScalars too (the parser makes them). A variable scalar is not
differentiated (its gradient is a Python zero); a mutable tuple or list of tensors is a
differentiable input of a graph (autodiff.py: one gradient per element), a constant in PyNative.
"""
from __future__ import annotations

import operator

from . import dtype as dt
from .tensor import Tensor

_check_elements_set: set = set()
# builtins that parsed code calls on variable scalars and graph tensors (scalar_builtin)
SCALAR_BUILTINS = frozenset({float, int, bool, Tensor, max, min, isinstance, type})


class _Int(int):
    pass


class _Float(float):
    pass


class _Tuple(tuple):
    pass


class _List(list):
    pass


class _Dict(dict):
    pass


class _Bool(int):
    """A marked bool (bool cannot be subclassed): an int that reports itself as a bool."""

    def __init__(self, value):
        self.value = bool(value)

    @property
    def __class__(self):
        return bool

    def __and__(self, x):
        return self.value & x

    def __rand__(self, x):
        return x & self.value

    def __or__(self, x):
        return self.value | x

    def __ror__(self, x):
        return x | self.value

    def __xor__(self, x):
        return self.value ^ x

    def __rxor__(self, x):
        return x ^ self.value

    def __str__(self):
        return str(self.value)

    def __repr__(self):
        return repr(self.value)


def _valid(value) -> bool:
    """Every element is a Tensor or a number, with no self-reference (MindSpore's check)."""
    if id(value) in _check_elements_set:
        return False
    _check_elements_set.add(id(value))
    if isinstance(value, (tuple, list)):
        for element in value:
            if not _valid(element):
                return False
            _check_elements_set.discard(id(element))
        return True
    if isinstance(value, dict):
        for element in value.values():
            if not _valid(element):
                return False
            _check_elements_set.discard(id(element))
        return True
    return isinstance(value, (Tensor, int, float))


def mutable(input_data, dynamic_len=False):
    """MindSpore's `mutable`: `input_data` (a bool, int, float, Tensor, or a tuple, list or dict
    of them) made a variable input of graphs it is passed to. A Tensor is returned as it is
    (a Tensor is always a graph input here). `dynamic_len=True` is accepted as MindSpore does
    (tuple or list only) but a graph called with such a value raises NotImplementedError."""
    try:
        ok = _valid(input_data)
    finally:
        _check_elements_set.clear()
    if not ok:
        raise TypeError(
            f"For 'mutable', the 'input_data' should be one of (bool, int, float, Tensor, tuple, "
            f"list, dict) or their nested structures with no self-reference, but got "
            f"{type(input_data).__name__}: {input_data}.")
    if not isinstance(dynamic_len, bool):
        raise TypeError(f"For 'mutable', the second input should be bool, but got: "
                        f"{type(dynamic_len).__name__}")
    if dynamic_len and not isinstance(input_data, (tuple, list)):
        raise TypeError(f"For 'mutable', when the variable_len is True, the first input should "
                        f"be list or tuple, but got: {type(input_data).__name__}")
    if isinstance(input_data, Tensor):
        return input_data
    if isinstance(input_data, bool):
        ret = _Bool(input_data)
    elif isinstance(input_data, int):
        ret = _Int(input_data)
    elif isinstance(input_data, float):
        ret = _Float(input_data)
    elif isinstance(input_data, list):
        ret = _List(input_data)
    elif isinstance(input_data, tuple):
        ret = _Tuple(input_data)
    else:
        ret = _Dict(input_data)
    ret.__ms_mutable__ = True
    ret.__ms_dynamic_len__ = dynamic_len
    ret.__ms_origin_object__ = input_data
    return ret


def is_mutable(v) -> bool:
    return getattr(v, "__ms_mutable__", False) is True


# -- graph inputs ---------------------------------------------------------------------------------
_COMPUTE = {bool: dt.bool_, int: dt.int64, float: dt.float32}


def _kind(v):
    """bool, int or float: the Python type of a scalar (a marked one's original type)."""
    if isinstance(v, bool):
        return bool
    return int if isinstance(v, int) else float


class ScalarInput(Tensor):
    """A mutable scalar argument as the concrete 0-d tensor the graph takes as input (of its
    compute dtype), with its Python value."""

    __slots__ = ("kind", "value")


def _scalar_input(v) -> ScalarInput:
    kind = _kind(v)
    t = Tensor(kind(v), _COMPUTE[kind])
    s = ScalarInput.__new__(ScalarInput)
    s._buf, s.shape, s.dtype, s._node, s.kind = t._buf, t.shape, t.dtype, None, kind
    s.value = kind(v)
    return s


def graph_args(args, kwargs):
    """(args, kwargs) with the scalars of mutable values as ScalarInputs (unchanged, the same
    objects, when there are none)."""
    found = [False]

    def lift(v, inside):
        marked = inside or is_mutable(v)
        if is_mutable(v) and getattr(v, "__ms_dynamic_len__", False):
            raise NotImplementedError(
                "mutable(..., dynamic_len=True): minispore compiles a graph for each length of a "
                "sequence argument; pass mutable(value) (a fixed length, each element a graph "
                "input) instead")
        if isinstance(v, Tensor):
            return v
        if isinstance(v, (bool, int, float)):
            if marked:
                found[0] = True
                return _scalar_input(v)
            return v
        if isinstance(v, (tuple, list)):
            items = [lift(x, marked) for x in v]
            if hasattr(type(v), "_fields"):
                return type(v)(*items)
            return remark(v, tuple(items) if isinstance(v, tuple) else list(items))
        if isinstance(v, dict):
            return {k: lift(x, marked) for k, x in v.items()}
        return v

    new_args = [lift(a, False) for a in args]
    new_kwargs = {k: lift(v, False) for k, v in kwargs.items()}
    if not found[0]:
        return args, kwargs
    return new_args, new_kwargs


def remark(like, new):
    """`new` (a tuple or list rebuilt from `like`) marked mutable when `like` is."""
    if not is_mutable(like) or not isinstance(new, (tuple, list)) or \
            hasattr(type(new), "_fields"):
        return new
    new = (_Tuple if isinstance(new, tuple) else _List)(new)
    new.__ms_mutable__ = True
    new.__ms_dynamic_len__ = False
    return new


def differentiable_items(v):
    """The tensors of a mutable tuple or list given to a graph being built, which a gradient
    differentiates element by element (MindSpore: a mutable sequence of tensors is a
    differentiable input of a graph; in PyNative, or unmarked, it is a constant); else None."""
    if not is_mutable(v) or not isinstance(v, (tuple, list)) or not v:
        return None
    from .graph.builder import GraphBuilder
    from .primitive import executor
    if not isinstance(executor.current, GraphBuilder):
        return None
    if not all(isinstance(x, Tensor) and not isinstance(x, SymScalar) for x in v):
        return None
    return list(v)


def input_signature(t):
    """The cache-key part of a ScalarInput: its Python type, not its value."""
    return ("S", t.kind.__name__)


class SymScalar(Tensor):
    """A variable Python scalar in a graph being built: a symbolic 0-d tensor of its compute dtype
    (int64, float32, bool) that follows MindSpore's scalar rules under Python operators.
    `exact` is the position of the graph input it is, while it is unchanged (None otherwise)."""

    __slots__ = ("kind", "exact")

    __hash__ = Tensor.__hash__

    def _concrete(self):
        from .errors import GraphSyntaxError
        raise GraphSyntaxError(
            f"this {self.kind.__name__} is a variable scalar of the graph (an ms.mutable input, "
            f"or computed from one or from a tensor): its value is known only at run time, so "
            f"it cannot be used where a compile-time value is needed (a shape, range(), a "
            f"Python function run on it). Pass it without ms.mutable to make it a compile-time "
            f"constant")

    # -- operators --------------------------------------------------------------------------------
    def _plain(self, d=None) -> Tensor:
        t = Tensor.__new__(Tensor)
        t._buf, t.shape, t.dtype, t._node = self._buf, self.shape, self.dtype, self._node
        if d is not None and d is not t.dtype:
            from .ops.math import cast
            t = cast(t, d)
        return t

    def _binary(self, op, other, reflected):
        if isinstance(other, Tensor) and not isinstance(other, SymScalar):
            d = dt.promote_with_scalar(other.dtype, self.kind(1))
            a, b = self._plain(d), other
            return op(b, a) if reflected else op(a, b)
        if not isinstance(other, (SymScalar, bool, int, float)):
            return NotImplemented
        x, y = (other, self) if reflected else (self, other)
        kx = x.kind if isinstance(x, SymScalar) else _kind(x)
        ky = y.kind if isinstance(y, SymScalar) else _kind(y)
        kind = type(op(kx(1), ky(1)))              # Python's result type for these operands
        if op is operator.truediv or float in (kx, ky):
            cd = dt.float32
        elif kx is ky is bool and op in _LOGICAL:
            cd = dt.bool_
        else:
            cd = dt.int64
        a = x._plain(cd) if isinstance(x, SymScalar) else Tensor(kx(x), cd)
        b = y._plain(cd) if isinstance(y, SymScalar) else Tensor(ky(y), cd)
        return wrap_result(op(a, b), kind)

    def _unary(self, op):
        kind = type(op(self.kind(1)))
        cd = _COMPUTE[kind]
        return wrap_result(op(self._plain(cd)), kind)

    def __bool__(self):
        return bool(self._concrete())


_LOGICAL = (operator.and_, operator.or_, operator.xor)

_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
        "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
        "pow": operator.pow, "and": operator.and_, "or": operator.or_, "xor": operator.xor}
_CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
        "gt": operator.gt, "ge": operator.ge}


def _define():
    for name, op in _OPS.items():
        setattr(SymScalar, f"__{name}__", lambda s, o, op=op: s._binary(op, o, False))
        setattr(SymScalar, f"__r{name}__", lambda s, o, op=op: s._binary(op, o, True))
    for name, op in _CMP.items():
        setattr(SymScalar, f"__{name}__", lambda s, o, op=op: s._binary(op, o, False))
    for name, op in (("neg", operator.neg), ("pos", operator.pos), ("abs", abs)):
        setattr(SymScalar, f"__{name}__", lambda s, op=op: s._unary(op))


_define()


def scalar_operands(op, inputs) -> tuple:
    """The inputs of `op` with each SymScalar cast to the dtype a Python number of its type would
    take there (pynative.scalar_operand_dtype: against the other tensors of an elementwise op)."""
    from .pynative import scalar_operand_dtype
    ref = None
    for x in inputs:
        if isinstance(x, Tensor) and not isinstance(x, SymScalar):
            ref = x.dtype if ref is None else dt.promote(ref, x.dtype)
    return tuple(x._plain(scalar_operand_dtype(op, x.kind(1), ref)) if isinstance(x, SymScalar)
                 else x for x in inputs)


def scalar_kind(*values):
    """The Python type (bool < int < float) joining `values` when each is a Python number or a
    SymScalar; None when one is anything else (a tensor)."""
    kinds = []
    for v in values:
        if isinstance(v, SymScalar):
            kinds.append(v.kind)
        elif isinstance(v, (bool, int, float)) and not isinstance(v, Tensor):
            kinds.append(_kind(v))
        else:
            return None
    return float if float in kinds else int if int in kinds else bool


def wrap_result(t, kind):
    """A 0-d tensor result of scalar arithmetic as a SymScalar of Python type `kind`; anything
    else (a tensor of another shape) as it is."""
    if not isinstance(t, Tensor) or t.shape != ():
        return t
    s = SymScalar.__new__(SymScalar)
    s._buf, s.shape, s.dtype, s._node = t._buf, t.shape, t.dtype, t._node
    s.kind, s.exact = kind, None
    return s


def symbolic_input(builder, t: ScalarInput) -> SymScalar:
    """The graph input of a ScalarInput, as a SymScalar."""
    s = wrap_result(builder.input(t.shape, t.dtype), t.kind)
    s.exact = len(builder.root.inputs) - 1
    return s


def _cast(t, d):
    from .ops.math import cast
    return cast(t, d)


def output_value(s: SymScalar) -> Tensor:
    """The tensor a graph outputs for a SymScalar."""
    return s._plain()


def python_value(t: Tensor, kind, exact=None, inputs=()):
    """A graph output for a SymScalar as the Python number MindSpore returns: an input returned
    unchanged (`exact`: its position among the call's graph `inputs`) as the value passed."""
    if exact is not None and exact < len(inputs) and isinstance(inputs[exact], ScalarInput):
        return inputs[exact].value
    return kind(t.item())


def scalar_of(t: Tensor, kind) -> SymScalar:
    """`float(t)`, `int(t)` or `bool(t)` of a one-element tensor computed in the graph: a
    variable scalar of that type (MindSpore's graph mode converts it at run time): float in
    float32, int truncated toward zero in int64, bool as `t != 0`."""
    if t.size != 1:
        raise ValueError(f"Can not convert Tensor with more than one element to Scalar, while "
                         f"the data's shape is: {t.shape}")
    plain = t._plain() if isinstance(t, SymScalar) else t
    from .ops.array import stop_gradient        # a Python number: no gradient flows through
    plain = stop_gradient(plain)
    if plain.shape != ():
        from .ops.array import reshape
        plain = reshape(plain, ())
    if kind is bool:
        out = plain if plain.dtype is dt.bool_ else plain != 0
    else:
        out = _cast(plain, _COMPUTE[kind])
    return wrap_result(out, kind)


def extremum(func, values) -> SymScalar:
    """`max(...)` / `min(...)` of numbers, some of them variable scalars: a variable scalar of
    their joined type (MindSpore's graph mode computes it at run time)."""
    from .ops.math import maximum, minimum
    kind = scalar_kind(*values)
    d = _COMPUTE[kind]
    pick = maximum if func is max else minimum
    parts = [v._plain(d) if isinstance(v, SymScalar) else Tensor(kind(v), d) for v in values]
    out = parts[0]
    for p in parts[1:]:
        out = pick(out, p)
    return wrap_result(out, kind)


def scalar_builtin(func, args, kwargs):
    """A builtin called in parsed code on a variable scalar or a graph tensor, as MindSpore's
    graph mode runs it: `float/int/bool(t)` of a one-element tensor (scalar_of), `Tensor(s)`,
    `max/min` of numbers, `isinstance/type` (a variable scalar's Python type); NotImplemented
    when the call is none of these (it then runs as it is)."""
    first = args[0] if args else None
    if func is isinstance or func is type:
        if isinstance(first, SymScalar) and (func is isinstance or len(args) == 1):
            return first.kind if func is type else isinstance(first.kind(0), *args[1:])
    elif func is max or func is min:
        if len(args) >= 2 and not kwargs and any(isinstance(a, SymScalar) for a in args) and \
                scalar_kind(*args) is not None:
            return extremum(func, args)
    elif func is Tensor:
        if isinstance(first, SymScalar) and len(args) <= 2 and set(kwargs) <= {"dtype"}:
            return tensor_of(*args, **kwargs)
    elif len(args) == 1 and not kwargs and isinstance(first, Tensor) and \
            isinstance(first._buf, _ir_value()):
        return scalar_of(first, func)
    return NotImplemented


def _ir_value():
    from .graph.ir import Value
    return Value


def tensor_of(s: SymScalar, dtype=None) -> Tensor:
    """`Tensor(s)` of a variable scalar: a 0-d tensor of `dtype` (default: the scalar's own,
    int64 / float32 / bool)."""
    d = _COMPUTE[s.kind] if dtype is None else dt.to_dtype(dtype)
    return s._plain(d)
