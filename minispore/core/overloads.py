"""Overloaded Python-level signatures, resolved the way MindSpore 2.x resolves its Tensor methods.

MindSpore documents several signatures for one Tensor method (`Tensor.sum(dim=None,
keepdim=False, *, dtype=None)` and the legacy `Tensor.sum(axis=None, dtype=None, keepdims=False,
initial=None)`) and picks the first whose parameters bind the call and whose argument types fit.
`overloaded` builds such a method from plain functions: each variant's own signature is the
binding rule, an optional `accepts(arguments)` predicate is the type rule, and a call that no
variant takes raises a TypeError listing every signature. The variants' signatures stay readable
on the result (`_ms_overloads`), so the signature audit compares all of them with MindSpore's.
"""
from __future__ import annotations

import inspect
import numbers

import numpy as np


def is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def is_bool(v) -> bool:
    """A Python or numpy bool (a keepdim flag)."""
    return isinstance(v, (bool, np.bool_))


def is_axis(v) -> bool:
    """None, an int, or a tuple/list of ints (a reduction's dim/axis)."""
    return v is None or is_int(v) or (isinstance(v, (tuple, list)) and all(map(is_int, v)))


_P = inspect.Parameter


def _binder(sig: inspect.Signature):
    """A fast `sig.bind(...)` with defaults applied: (args, kwargs) -> the arguments by name,
    or None where the call does not bind (Signature.bind costs several microseconds, and
    Tensor methods sit in eager inner loops)."""
    params = list(sig.parameters.values())
    if any(p.kind in (_P.VAR_KEYWORD, _P.POSITIONAL_ONLY) for p in params):
        def slow(args, kwargs):
            try:
                b = sig.bind(*args, **kwargs)
            except TypeError:
                return None
            b.apply_defaults()
            return b.arguments
        return slow
    pos = [(p.name, p.default) for p in params if p.kind is _P.POSITIONAL_OR_KEYWORD]
    var = next((p.name for p in params if p.kind is _P.VAR_POSITIONAL), None)
    kwonly = {p.name: p.default for p in params if p.kind is _P.KEYWORD_ONLY}
    names = {n for n, _ in pos} | set(kwonly)
    empty = _P.empty

    def bind(args, kwargs):
        if (len(args) > len(pos) and var is None) or not names.issuperset(kwargs):
            return None
        out = {}
        for i, (n, d) in enumerate(pos):
            if i < len(args):
                if n in kwargs:
                    return None
                out[n] = args[i]
            elif n in kwargs:
                out[n] = kwargs[n]
            elif d is empty:
                return None
            else:
                out[n] = d
        if var is not None:
            out[var] = tuple(args[len(pos):])
        for n, d in kwonly.items():
            if n in kwargs:
                out[n] = kwargs[n]
            elif d is empty:
                return None
            else:
                out[n] = d
        return out
    return bind


def variant(fn, accepts=None):
    """One signature of an overloaded method: `fn` binds and runs it; `accepts(arguments)`,
    given the bound arguments with defaults applied, says whether the argument types fit."""
    sig = inspect.signature(fn)
    return fn, sig, accepts, _binder(sig)


def overloaded(owner: str, name: str, *variants):
    """A function trying `variants` (from `variant`) in order; the first that binds and accepts
    the call runs it."""
    def dispatch(*args, **kwargs):
        for fn, _, accepts, bind in variants:
            arguments = bind(args, kwargs)
            if arguments is not None and (accepts is None or accepts(arguments)):
                return fn(*args, **kwargs)
        shown = [repr(a) for a in args[1:]] + [f"{k}={v!r}" for k, v in kwargs.items()]
        raise TypeError(
            f"{owner}.{name}() got arguments ({', '.join(shown)}) that match none of its "
            f"signatures: " + "; ".join(f"{name}{_public(v[1])}" for v in variants))

    dispatch.__name__ = dispatch.__qualname__ = name
    dispatch.__doc__ = f"{owner}.{name}, resolved like MindSpore's overloads:\n" + "\n".join(
        f"  {name}{_public(sig)}" + (f": {fn.__doc__.strip()}" if fn.__doc__ else "")
        for fn, sig, *_ in variants)
    dispatch._ms_overloads = tuple(v[1] for v in variants)
    return dispatch


def _public(sig: inspect.Signature) -> str:
    """The signature as a caller sees it (without `self`)."""
    params = list(sig.parameters.values())
    if params and params[0].name == "self":
        params = params[1:]
    return str(sig.replace(parameters=params))
