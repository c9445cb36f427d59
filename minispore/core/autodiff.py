"""User-facing autodiff: `grad`, `value_and_grad`, `GradOperation`, with MindSpore's exact return
structures (notes/mindspore.md section 5). In PyNative mode they run the function once while the
tape records (pynative.TAPE), then chain the recorded bprops backwards."""
from __future__ import annotations

from . import context, hooks
from .mutable import SymScalar, differentiable_items
from .pynative import TAPE, Leaf, backward
from .tensor import Parameter, ParameterTuple, Tensor


def _ones_like(t: Tensor) -> Tensor:
    from .ops.array import ones_like
    return ones_like(t)


def _zeros_like(t: Tensor) -> Tensor:
    from .ops.array import zeros_like
    return zeros_like(t)


def _flatten_outputs(out) -> list:
    """The Tensors of an output, in order: tuples, lists and dict values are differentiated
    (MindSpore differentiates every Tensor of a nested output)."""
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten_outputs(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _flatten_outputs(o)]
    return []


def _detach(obj):
    if isinstance(obj, Tensor):
        obj._node = None
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _detach(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            _detach(o)


def run_with_grads(fn, args: tuple, kwargs: dict, positions: tuple, weights: tuple,
                   has_aux: bool, sens=None):
    """Run fn(*args) on the tape; return (output, input grads, weight grads).

    Grads for non-Tensor inputs are (); unreachable inputs and Parameters with
    requires_grad=False get zeros (MindSpore PyNative: such a Parameter is not differentiated)."""
    check_positions(positions, args)
    fn = _callable(fn)
    # per position: ("one",) an input, ("seq", n) a mutable sequence's n tensors, ("zero", v) a
    # variable scalar (not differentiated: its gradient is the Python zero v, as MindSpore's)
    watched, groups = [], []
    for p in positions:
        if isinstance(args[p], SymScalar):
            groups.append(("zero", args[p].kind(0)))
            continue
        items = differentiable_items(args[p])
        groups.append(("one",) if items is None else ("seq", len(items)))
        watched.extend([args[p]] if items is None else items)
    watched += list(weights)
    frozen = {id(w) for w in weights if isinstance(w, Parameter) and not w.requires_grad}
    marked = []
    for t in watched:
        if isinstance(t, Tensor) and t._node is None and id(t) not in frozen:
            t._node = Leaf()
            marked.append(t)
    targets = [t._node if isinstance(t, Tensor) and id(t) not in frozen else
               (_FROZEN if isinstance(t, Tensor) else None) for t in watched]
    hooks.attach_pending(marked)        # Tensor.register_hook on an input before the call
    try:
        TAPE.depth += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            TAPE.depth -= 1
        grads = _backward_from(out, watched, targets, has_aux, sens)
    finally:
        for t in marked:
            t._node = None
    if TAPE.depth == 0:
        _detach(out)
        _detach(grads)
    pos_grads, i = [], 0
    for kind, *data in groups:
        if kind == "one":
            pos_grads.append(grads[i])
            i += 1
        elif kind == "seq":                 # a mutable sequence's grads: one tuple
            pos_grads.append(tuple(grads[i:i + data[0]]))
            i += data[0]
        else:
            pos_grads.append(data[0])
    return out, pos_grads, grads[i:]


_FROZEN = object()      # the target of a Parameter that is not differentiated: its grad is zeros


def check_positions(positions, args) -> None:
    for p in positions:
        if not -len(args) <= p < len(args):
            raise ValueError(f"grad: grad_position {p} is out of range for {len(args)} "
                             f"positional input(s)")


def tensor_positions(positions, args) -> tuple:
    """The positions whose input is a Tensor: MindSpore leaves a Python scalar (or any other
    non-Tensor input) listed in grad_position out of the returned gradients."""
    check_positions(positions, args)
    return tuple(p for p in positions if isinstance(args[p], Tensor)
                 or differentiable_items(args[p]) is not None)


def _backward_from(out, watched, targets, has_aux, sens) -> list:
    if has_aux:
        if not isinstance(out, (tuple, list)) or len(out) < 2:
            raise ValueError("grad: has_aux=True needs fn to return a tuple (output, aux...)")
        diff_out = _flatten_outputs(out[0])
    else:
        diff_out = _flatten_outputs(out)
    if not diff_out:
        raise TypeError(f"grad: the function must return a Tensor (or a tuple of Tensors), "
                        f"got {type(out).__name__}")
    if sens is None:
        sens_list = [_ones_like(t) for t in diff_out]
    else:
        sens_list = _flatten_outputs(sens)
        if len(sens_list) != len(diff_out):
            raise ValueError(f"grad: sens has {len(sens_list)} tensor(s) for "
                             f"{len(diff_out)} output(s)")
    live = [t for t in targets if t is not None and t is not _FROZEN]
    got = dict(zip(map(id, live), backward(diff_out, sens_list, live)))
    grads = []
    for t, target in zip(watched, targets):
        if target is None:
            grads.append(())
            continue
        g = None if target is _FROZEN else got.get(id(target))
        grads.append(g if g is not None else _zeros_like(t))
    return grads


def _positions(grad_position) -> tuple[tuple, bool]:
    """(positions, single): an int or a 1-tuple gives one bare Tensor."""
    if grad_position is None:
        return (), False
    if isinstance(grad_position, int) and not isinstance(grad_position, bool):
        return (grad_position,), True
    if isinstance(grad_position, (tuple, list)) and all(
            isinstance(p, int) and not isinstance(p, bool) for p in grad_position):
        return tuple(grad_position), len(grad_position) == 1
    raise TypeError(f"grad: grad_position must be an int, a tuple of ints or None, got "
                    f"{grad_position!r}")


def _weights(weights) -> tuple[tuple, bool]:
    if weights is None:
        return (), False
    if isinstance(weights, Parameter):
        return (weights,), True
    if isinstance(weights, (list, tuple, ParameterTuple)):
        for w in weights:
            if not isinstance(w, Tensor):
                raise TypeError(f"grad: weights must be Parameters, got {type(w).__name__}")
        return tuple(weights), False
    raise TypeError(f"grad: weights must be a Parameter, a list or a ParameterTuple, got "
                    f"{type(weights).__name__}")


def _structure(pos_grads, w_grads, positions, weights, single_pos, single_w, return_ids,
               asked_positions):
    if return_ids:
        pos_grads = [(p, g) for p, g in zip(positions, pos_grads)]
        w_grads = [(w.name if isinstance(w, Parameter) else i, g)
                   for i, (w, g) in enumerate(zip(weights, w_grads))]
    pg = pos_grads[0] if single_pos else tuple(pos_grads)
    wg = w_grads[0] if single_w else tuple(w_grads)
    if asked_positions and weights:
        return pg, wg
    return pg if asked_positions else wg


def _grad_impl(fn, grad_position, weights, has_aux, return_ids, sens_param, with_value):
    positions, _ = _positions(grad_position)
    wts, single_w = _weights(weights)
    if not positions and not wts:
        raise ValueError("`grad_position` and `weight` can not be None at the same time.")

    def wrapper(*args, **kwargs):
        compiled = _in_graph_mode(compute, args, kwargs, f"grad_{getattr(fn, '__name__', 'fn')}")
        return compiled[0] if compiled is not None else compute(*args, **kwargs)

    def compute(*args, **kwargs):
        sens = None
        if sens_param:
            if "sens" in kwargs:
                sens = kwargs.pop("sens")
            else:
                if not args:
                    raise TypeError("grad: sens_param=True needs the sensitivity as the last "
                                    "argument")
                args, sens = args[:-1], args[-1]
        used = tensor_positions(positions, args)
        out, pg, wg = run_with_grads(fn, args, kwargs, used, wts, has_aux, sens)
        g = _structure(pg, wg, used, wts, len(used) == 1, single_w, return_ids,
                       bool(positions))
        if has_aux:
            aux = tuple(out[1:])
            return (tuple(out), g) if with_value else (g, aux)
        return (out, g) if with_value else g
    return wrapper


def _callable(fn):
    """Inside a graph being built, a user function is parsed, not run as Python."""
    from .graph.builder import GraphBuilder
    from .graph.parser import InlineCall, is_user_function
    from .primitive import executor
    if isinstance(executor.current, GraphBuilder) and is_user_function(fn):
        return InlineCall(executor.current.parser, fn)
    return fn


def _in_graph_mode(compute, args, kwargs, name):
    """In GRAPH_MODE, a gradient called from Python compiles forward and backward as one graph
    (MindSpore's behaviour); None when the call should run eagerly instead."""
    from .graph import compile as graph_compile
    from .graph.builder import GraphBuilder
    from .primitive import executor
    if context.mode() != context.GRAPH_MODE or isinstance(executor.current, GraphBuilder) \
            or TAPE.depth:
        return None
    key = hooks.pending_key(args)           # inputs with hooks from Tensor.register_hook
    if key is not None:
        return (graph_compile.run(hooks.with_pending(compute, args), (key,) + tuple(args),
                                  kwargs, parse=False, name=name),)
    return (graph_compile.run(compute, args, kwargs, parse=False, name=name),)


def grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False, sens_param=False):
    """A function computing the gradient of `fn` (MindSpore's `ms.grad`)."""
    return _grad_impl(fn, grad_position, weights, has_aux, return_ids, sens_param, False)


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False,
                   sens_param=False):
    """Like `grad`, returning `(value, grads)` (`((out, aux...), grads)` with has_aux)."""
    return _grad_impl(fn, grad_position, weights, has_aux, return_ids, sens_param, True)


class GradOperation:
    """MindSpore's `ops.GradOperation(get_all=False, get_by_list=False, sens_param=False)`:
    `GradOperation(...)(fn[, weights])(*inputs[, sens])`."""

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param

    def __call__(self, fn, weights=None):
        if self.get_by_list and weights is None:
            raise TypeError("GradOperation(get_by_list=True) needs the weights: "
                            "GradOperation(get_by_list=True)(net, ParameterTuple(...))")
        if self.get_by_list:
            wts, single_w = _weights(weights)
        else:
            wts, single_w = (), False
        # the flags as values, not the GradOperation: the compile cache keys the graph on what
        # `compute` captures, so a GradOperation made anew each step finds the same graph
        get_all, get_by_list, sens_param = self.get_all, self.get_by_list, self.sens_param

        def grad_fn(*args):
            compiled = _in_graph_mode(compute, args, {}, "grad_operation")
            return compiled[0] if compiled is not None else compute(*args)

        def compute(*args):
            sens = None
            if sens_param:
                if not args:
                    raise TypeError("GradOperation(sens_param=True): pass the sensitivity as the "
                                    "last input")
                args, sens = args[:-1], args[-1]
            positions = tuple(range(len(args))) if get_all else ((0,) if args else ())
            if not get_by_list and not positions:
                raise ValueError("GradOperation: the function has no input to differentiate")
            if get_all:
                positions = tensor_positions(positions, args)
            out, pg, wg = run_with_grads(fn, args, {}, positions if (get_all or not
                                                                     get_by_list) else (),
                                         wts, False, sens)
            wg = wg[0] if single_w else tuple(wg)
            if get_all and get_by_list:
                return tuple(pg), wg
            if get_by_list:
                return wg
            if get_all:
                return tuple(pg)
            return pg[0]
        return grad_fn
