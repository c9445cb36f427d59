"""Hooks: a Cell's forward (pre) hooks and backward (pre) hooks, `ops.HookBackward` and
`Tensor.register_hook`, with MindSpore 2.10's semantics.

A Cell call with hooks runs (as MindSpore's `Cell._run_construct`): the forward pre hooks
`hook(cell, args)` (or `hook(cell, args, kwargs)` with_kwargs; a non-tuple result becomes a
1-tuple of new args), the backward hooks' input marker, construct, the forward hooks
`hook(cell, args, output)` (a result other than None replaces the output), then the markers of
the backward hooks and backward pre hooks on the output. Forward hooks with always_call=True
run even when construct raised (their own errors then only warn).

The markers are identity ops on the tape (the output shares the input's buffer) whose bprop
calls the user's function: the output marker calls `hook(cell, grad_output)` of the backward
pre hooks (a result replaces grad_output, which then flows into the Cell's backward, its
Parameters' gradients included) and remembers grad_output; the input marker calls
`hook(cell, grad_input, grad_output)` of the backward hooks once the gradients of the Cell's
Tensor inputs are complete (a result replaces grad_input). A tape holding a marker is walked
eagerly (its attribute is unhashable, so bprop_graph does not compile it): a hook runs on every
backward, as in MindSpore's PyNative mode.

Both modes: in a graph being built, hook functions are parsed like construct (Parser.call_cell
runs `call` here), and the markers' bprops parse them when the backward is built. Every
registration or removal bumps VERSION, which each graph calling a Cell is keyed on, so a
compiled graph never runs a stale set of hooks.
"""
from __future__ import annotations

import itertools
import warnings
import weakref
from collections import namedtuple

from .primitive import OpDef, executor
from .pynative import TAPE, _tensor, record
from .tensor import Tensor

VERSION = 0             # bumped by every registration and removal (a guard of compiled graphs)
_ids = itertools.count()
Entry = namedtuple("Entry", "hid fn with_kwargs always_call")
KINDS = ("forward_pre", "forward", "backward", "backward_pre")


def _bump():
    global VERSION
    VERSION += 1


class HookHandle:
    """What a register_*hook returns: `remove()` unregisters the hook (again: nothing)."""

    def __init__(self, remove):
        self.handle_id = next(_ids)
        self._remove = remove

    def remove(self):
        if self._remove is not None:
            self._remove(self.handle_id)
            self._remove = None
            _bump()


def check_hook_fn(hook_fn):
    if not callable(hook_fn):
        raise TypeError(f"Expected a callable hook function, but got {type(hook_fn).__name__}.")
    if getattr(hook_fn, "__wrapped_jit__", None) is not None:
        raise TypeError(f"Decorating hook function {getattr(hook_fn, '__name__', hook_fn)} "
                        f"with '@jit' is not supported.")


# -- Cell hooks ---------------------------------------------------------------------------------
def cell_hooks(cell) -> tuple | None:
    """(pre, forward, backward, backward_pre) tuples of Entry, or None without hooks."""
    return cell.__dict__.get("_ms_hooks")


def register(cell, kind: str, hook_fn, prepend=False, with_kwargs=False, always_call=False):
    check_hook_fn(hook_fn)
    if getattr(executor.current, "parser", None) is not None:
        name = f"register_{kind}_hook"
        raise RuntimeError(f"Failed to compile in GRAPH_MODE because the method or function "
                           f"'mindspore.nn.cell.Cell.{name}' is not supported in 'construct' or "
                           f"function with @jit decorator. Try to use the method or function "
                           f"'mindspore.nn.cell.Cell.{name}' externally such as initialized in "
                           f"the method '__init__' before assigning.")
    k = KINDS.index(kind)
    ref = weakref.ref(cell)

    def remove(hid):
        c = ref()
        state = None if c is None else cell_hooks(c)
        if state is None:
            return
        new = list(state)
        new[k] = tuple(e for e in state[k] if e.hid != hid)
        c.__dict__["_ms_hooks"] = tuple(new) if any(new) else None

    handle = HookHandle(remove)
    entry = Entry(handle.handle_id, hook_fn, bool(with_kwargs), bool(always_call))
    new = list(cell_hooks(cell) or ((), (), (), ()))
    new[k] = (entry,) + new[k] if prepend else new[k] + (entry,)
    cell.__dict__["_ms_hooks"] = tuple(new)
    _bump()
    return handle


def guard() -> None:
    """In a graph being built: key it on VERSION (a hook registered or removed later
    recompiles)."""
    from .graph import guards
    r = guards.Recorder.active
    if r is not None:
        r.touch(guards.GlobalLoc(globals(), "VERSION"), VERSION)


def _caller():
    """How a hook function is called: parsed inside a graph being built, else as Python."""
    parser = getattr(executor.current, "parser", None)
    if parser is None:
        return lambda f, *a: f(*a)
    return lambda f, *a: parser.call_function(f, a) if _parsable(f) else f(*a)


def _parsable(f) -> bool:
    from .graph.parser import is_user_function
    return is_user_function(f)


def call(cell, args: tuple, kwargs: dict, construct):
    """construct(*args, **kwargs) of a Cell with hooks, the hooks run around it."""
    pre, fwd, bwd, bpre = cell_hooks(cell)
    run = _caller()
    called = set()
    output = None
    try:
        for e in pre:
            if e.with_kwargs:
                ret = run(e.fn, cell, args, kwargs)
                if ret is not None:
                    if not (isinstance(ret, tuple) and len(ret) == 2):
                        raise RuntimeError(f"forward pre hook with kwargs must return None or a "
                                           f"tuple of (new_args, new_kwargs), but got {ret}")
                    args, kwargs = ret
            else:
                ret = run(e.fn, cell, args)
                if ret is not None:
                    args = ret if isinstance(ret, tuple) else (ret,)
        state = _BackwardState(cell, bwd, bpre) if (bwd or bpre) and TAPE.depth else None
        if state is not None and bwd:
            args = state.mark_inputs(tuple(args))
        output = construct(*args, **kwargs)
        for e in fwd:
            if e.always_call:
                called.add(e.hid)
            ret = run(e.fn, cell, args, kwargs, output) if e.with_kwargs else \
                run(e.fn, cell, args, output)
            if ret is not None:
                output = ret
        if state is not None:
            output = state.mark_output(output)
        return output
    except Exception:
        for e in fwd:
            if e.always_call and e.hid not in called:
                try:
                    ret = run(e.fn, cell, args, kwargs, output) if e.with_kwargs else \
                        run(e.fn, cell, args, output)
                    if ret is not None:
                        output = ret
                except Exception as err:   # the forward's error is the one raised
                    warnings.warn("cell forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced because another error was "
                                  f"already raised in forward: {err}")
        raise


class _BackwardState:
    """One hooked Cell call's backward: the hooks, and the grad_output the output marker saw
    (read by the input marker, whose bprop runs later). Unhashable on purpose (see the module
    docstring): the tape holding it is walked eagerly."""

    __hash__ = None

    def __init__(self, cell, bwd, bpre):
        self.cell, self.bwd, self.bpre = cell, bwd, bpre
        self.grad_output = None

    def mark_inputs(self, args: tuple) -> tuple:
        pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not any(args[i]._node is not None for i in pos):
            return args
        outs = mark(tuple(args[i] for i in pos), self.input_bprop)
        new = list(args)
        for i, t in zip(pos, outs):
            new[i] = t
        return tuple(new)

    def mark_output(self, output):
        flat = _flatten(output)
        if not any(t._node is not None for t in flat):
            return output
        outs = iter(mark(tuple(flat), self.output_bprop))
        return _rebuild(output, outs)

    def output_bprop(self, douts: tuple) -> tuple:
        run = _caller()
        for e in self.bpre:
            ret = run(e.fn, self.cell, douts)
            if ret is not None:
                douts = _as_grads(ret, douts, "backward pre hook")
        self.grad_output = douts
        return douts

    def input_bprop(self, douts: tuple) -> tuple:
        run = _caller()
        grad_output = self.grad_output if self.grad_output is not None else ()
        for e in self.bwd:
            ret = run(e.fn, self.cell, douts, grad_output)
            if ret is not None:
                douts = _as_grads(ret, douts, "backward hook")
        return douts


def _as_grads(ret, like: tuple, what: str) -> tuple:
    ret = ret if isinstance(ret, (tuple, list)) else (ret,)
    if len(ret) != len(like):
        raise ValueError(f"the {what} must return None or {len(like)} gradient(s) (one per "
                         f"Tensor), got {len(ret)}")
    for r, d in zip(ret, like):
        if not isinstance(r, Tensor):
            raise TypeError(f"the {what} must return Tensors, got {type(r).__name__}")
        if tuple(r.shape) != tuple(d.shape):
            raise ValueError(f"the {what} returned a gradient of shape {r.shape} for a Tensor "
                             f"of shape {d.shape}")
    return tuple(ret)


def _flatten(out) -> list:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return []


def _rebuild(out, it):
    if isinstance(out, Tensor):
        return next(it)
    if isinstance(out, (tuple, list)):
        return type(out)(_rebuild(o, it) for o in out)
    return out


# -- the identity marker op ----------------------------------------------------------------------
def mark(ts: tuple, bprop) -> tuple:
    """New Tensors on the buffers of `ts`, recorded on the tape as one identity op whose
    gradient is bprop(douts) (a tuple of one gradient per tensor; a missing one is zeros)."""
    outs = tuple(_tensor(t._buf, t.shape, t.dtype, None) for t in ts)
    record(_MARK, (("fn", _Fn(bprop), object),), ts, outs if len(outs) > 1 else outs[0])
    refs = getattr(executor.current, "refs", None)
    if refs is not None:                        # a graph being built: control flow looks here
        for t in outs:
            refs[t._buf.id] = t._node
    return outs


class _Fn:
    __slots__ = ("fn",)
    __hash__ = None

    def __init__(self, fn):
        self.fn = fn


def _mark_bprop(ins, out, dout, fn):
    from .ops.array import zeros
    outs = out if isinstance(out, tuple) else (out,)
    douts = dout if isinstance(out, tuple) else (dout,)
    douts = tuple(d if d is not None else zeros(o.shape, o.dtype) for d, o in zip(douts, outs))
    return tuple(fn.fn(douts))


_MARK = OpDef("HookMark", infer=None, ref=None, bprop=_mark_bprop, arity=None)


# -- ops.HookBackward and Tensor.register_hook ---------------------------------------------------
# > 0 while compiled code (an @ms.jit function, a graph Cell) runs interpreted under an eager
# gradient (graph/compile.py): for ops.HookBackward that is a graph, as MindSpore compiles it
INTERPRETED = [0]


def in_graph() -> bool:
    from . import context
    return getattr(executor.current, "parser", None) is not None or INTERPRETED[0] > 0 or \
        context._state["mode"] == context.GRAPH_MODE


def hook_backward(hook_fn, inputs: tuple, name="HookBackward"):
    """ops.HookBackward's call: the inputs unchanged; in the backward, hook_fn(grads) with the
    tuple of their gradients, whose result (None: unchanged; a Tensor for one input, a tuple of
    one per input) replaces them."""
    if in_graph():
        warnings.warn(f"{name}: the hook is only called in PYNATIVE_MODE; in GRAPH_MODE the "
                      f"inputs pass through unchanged and the hook is not called (as in "
                      f"MindSpore)", UserWarning, stacklevel=3)
        return inputs[0] if len(inputs) == 1 else tuple(inputs)
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: the inputs must be Tensors, got {type(t).__name__}")
    if not TAPE.depth or not any(t._node is not None for t in inputs):
        return inputs[0] if len(inputs) == 1 else tuple(inputs)

    def bprop(douts):
        ret = hook_fn(douts)
        if ret is None:
            return douts
        if len(douts) == 1:
            if not isinstance(ret, Tensor):
                raise TypeError(f"The output type of function: "
                                f"{getattr(hook_fn, '__name__', hook_fn)} should be a tensor "
                                f"but got {type(ret).__name__}.")
            ret = (ret,)
        return _as_grads(ret, douts, "HookBackward function")
    outs = mark(tuple(inputs), bprop)
    return outs[0] if len(outs) == 1 else outs


class _TensorHooks:
    """The hooks registered on one tracked Tensor (read when its marker's bprop runs, so
    removing a handle before the backward takes its hook out)."""

    __hash__ = None

    def __init__(self):
        self.entries: dict = {}

    def bprop(self, douts):
        (g,) = douts
        run = _caller()
        for fn in list(self.entries.values()):
            ret = run(fn, g)
            if ret is not None:
                if not isinstance(ret, Tensor) or tuple(ret.shape) != tuple(g.shape):
                    raise TypeError(f"Tensor hook {getattr(fn, '__name__', fn)} must return "
                                    f"None or a Tensor of shape {g.shape}, got "
                                    f"{type(ret).__name__}")
                g = ret
        return (g,)


# Tensors not tracked when their hook was registered (an input a gradient is taken of later):
# id -> (weak reference, _TensorHooks); autodiff.attach_pending marks them once tracked
_pending: dict = {}


def register_tensor_hook(t: Tensor, hook):
    """Tensor.register_hook: hook(grad) on the gradient flowing into `t`."""
    check_hook_fn(hook)
    if getattr(executor.current, "parser", None) is not None:
        # inside a graph (MindSpore: "Register hook in the graph will return the Tensor
        # itself"): a tensor being differentiated sends its gradient through the hook, parsed
        if t._node is not None and TAPE.depth:
            state = _TensorHooks()
            state.entries[next(_ids)] = hook
            mark_tensor(t, state)
        return t
    if t._node is not None and TAPE.depth:
        state = _TensorHooks()
        (alias,) = mark_tensor(t, state)
        del alias
    else:
        key = id(t)
        got = _pending.get(key)
        if got is None or got[0]() is not t:
            got = _pending[key] = (weakref.ref(t, lambda _r, k=key: _pending.pop(k, None)),
                                   _TensorHooks())
        state = got[1]
    handle = HookHandle(lambda hid: state.entries.pop(hid, None))
    state.entries[handle.handle_id] = hook
    _bump()
    return handle


def mark_tensor(t: Tensor, state: _TensorHooks) -> tuple:
    """Rebind `t`'s tape identity to a marker whose input is its old identity: what consumes
    `t` from now on sends its gradient through the hooks."""
    prev = _tensor(t._buf, t.shape, t.dtype, t._node)
    record(_MARK, (("fn", _Fn(state.bprop), object),), (prev,), t)
    refs = getattr(executor.current, "refs", None)
    if refs is not None and hasattr(t._buf, "id"):   # a symbolic tensor: control flow looks here
        refs[t._buf.id] = t._node
    return (prev,)


def attach_pending(tensors) -> None:
    """Just-tracked inputs of a gradient (its Parameters among them) that carry hooks
    registered before: mark them. A gradient compiled to a graph is keyed on VERSION, which
    every registration and removal bumps."""
    guard()
    if not _pending:
        return
    for t in tensors:
        got = _pending.get(id(t)) if isinstance(t, Tensor) else None
        if got is not None and got[0]() is t and got[1].entries and t._node is not None:
            mark_tensor(t, got[1])


def _flat_tensors(obj, out: list) -> list:
    """The Tensors of nested tuples/lists/dicts, in the order compile.py makes graph inputs."""
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _flat_tensors(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _flat_tensors(o, out)
    return out


def _pending_of(t):
    got = _pending.get(id(t))
    return got[1] if got is not None and got[0]() is t and got[1].entries else None


def pending_key(args) -> tuple | None:
    """For a gradient compiled in GRAPH_MODE: (input position, its hook functions) for every
    input Tensor carrying hooks from Tensor.register_hook (a key of the compiled graph: adding
    or removing a hook compiles again), or None when none does."""
    if not _pending:
        return None
    key = tuple((k, tuple((id(f), getattr(f, "__code__", None)) for f in st.entries.values()))
                for k, t in enumerate(_flat_tensors(args, []))
                if (st := _pending_of(t)) is not None)
    return key or None


def with_pending(compute, args):
    """compute, called on the graph inputs standing for `args`, with the hooks pending on the
    real inputs registered on those graph inputs (the gradient's tape then marks them and the
    hooks are parsed into the backward)."""
    states = [_pending_of(t) for t in _flat_tensors(args, [])]

    def hooked(key, *sargs):
        for s, st in zip(_flat_tensors(sargs, []), states):
            if st is not None:
                _pending[id(s)] = (weakref.ref(s, lambda _r, k=id(s): _pending.pop(k, None)), st)
        return compute(*sargs)
    return hooked


class HookBackward:
    """MindSpore's `ops.HookBackward(hook_fn, cell_id="")`: calling it returns its inputs
    unchanged; in PYNATIVE_MODE's backward, hook_fn(grads) gets the tuple of their gradients
    and may return replacements (a Tensor for one input, a tuple for several). In GRAPH_MODE
    the hook is not called (MindSpore's behaviour), with a warning."""

    def __init__(self, hook_fn, cell_id=""):
        check_hook_fn(hook_fn)
        if not isinstance(cell_id, str):
            raise TypeError(f"HookBackward: cell_id must be a str, got {type(cell_id).__name__}")
        self.hook_fn, self.cell_id = hook_fn, cell_id

    def __call__(self, *inputs):
        if not inputs:
            raise ValueError("HookBackward: needs at least one input")
        return hook_backward(self.hook_fn, inputs)
