"""A `while` on a tensor condition as a While node, with `break`, `continue` and `return` in its
body and Parameters assigned in it.

The While carries the variables its body assigns that exist before the loop, the Parameters it
assigns (assigned their final values after the node), and, when the body can leave the loop, a
`broken` flag (a `break` was reached) and a `returned` flag with the returned values; the loop's
condition is `<test> and not broken and not returned`. A `break`/`continue`/`return` under a
tensor `if` in the body ends the iteration on that path: each branch of the If runs the rest of
the body up to the loop's mark on the parser's continuation stack (control.tensor_if), and the
flags are If outputs like the other carried values. After the loop, a `return` in the body is
`if returned: return <values>`, the other path running the rest of the function.
"""
from __future__ import annotations

import ast
import builtins

import numpy as np

from .. import dtype as dt
from ..mutable import _COMPUTE, scalar_kind, wrap_result
from ..primitive import apply
from ..tensor import Tensor
from . import ir
from .builder import is_symbolic, sym
from .cf_grad import record_while
from .control import (_as_value, _assigned_names, _builder, _cond_value, _flatten, _merge_types,
                      _unflatten, returned_if)
from .parser import BREAK, CONTINUE, has_return
from .semantics import first_store, unbound_message
from .source import error as _error

def _flag_names(st):
    """The hidden locals of one loop (unique to it: loops nest): its broken and returned flags,
    its range index, the prefix of its returned values."""
    tag = f"\0{id(st)}"
    return tag + "broken", tag + "returned", tag + "index", tag + "return"


class LoopMark:
    """The continuation-stack entry ("loop", mark) of a tensor while's body: the values an
    iteration hands to the next one (carried locals, flags and return slots, in order)."""

    def __init__(self, st, names, ret_tree):
        self.brk, self.ret, _, self.slot = _flag_names(st)
        self.names = names
        self.ret_tree = ret_tree        # the returned value's structure (None: not met yet)
        self.found = None               # (structure, leaves) of a return met before that


def breaks_loop(stmts) -> bool:
    """Whether a `break` in these statements leaves the loop they are the body of."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Break):
            return True
        if isinstance(n, (ast.For, ast.While)):
            todo.extend(n.orelse)           # a nested loop's own body breaks that loop
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


def _const(b, value, dtype=dt.bool_):
    return sym(b.const(np.asarray(value, dtype.np), dtype))


def end_iteration(b, fr, flow, mark: LoopMark, node, frame) -> None:
    """Record in `fr` how an iteration ended (`flow`, as it reached the loop's mark)."""
    if flow is None or flow is CONTINUE or flow.kind == "iter_end":
        return
    if flow is BREAK:
        fr.local[mark.brk] = _const(b, True)
        return
    leaves, tree = _flatten(flow.value)
    for v in leaves:
        if not isinstance(v, Tensor):
            raise _error(frame.src, node, f"a `return` inside a while loop on a tensor condition "
                         f"must return tensors (got a {type(v).__name__})", TypeError,
                         hint="return tensors, e.g. ms.Tensor(value)")
    if mark.ret_tree is None:
        mark.found = (tree, leaves)
        return
    if tree != mark.ret_tree:
        raise _error(frame.src, node, f"the returns inside this loop return different "
                     f"structures ({tree} vs {mark.ret_tree})", TypeError,
                     hint="return the same number of tensors from every `return`")
    fr.local[mark.ret] = _const(b, True)
    for i, v in enumerate(leaves):
        fr.local[f"{mark.slot}{i}"] = v


def _enter(b, fr, names, params, values, kinds) -> None:
    """Bind a region's inputs: carried names in the frame (variable scalars for numbers),
    Parameters' current values."""
    for n, v in zip(names, values):
        fr.local[n] = sym(v) if n not in kinds else wrap_result(sym(v), kinds[n])
    for k, v in zip(params, values[len(names):]):
        b._current[k] = v


def _same_value(a, b) -> bool:
    """Whether a Python value the loop body left is the one from before the loop."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, Tensor):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False


class _Retry(Exception):
    pass


class NeedTensorLoop(Exception):
    """Raised while unrolling `while True:` when a tensor `if` in its body leaves the loop: the
    loop is built again as a While (control.run_while)."""

    def __init__(self, loop):
        super().__init__("internal: a tensor exit from an unrolled `while True:`")
        self.loop = loop


def tensor_while(parser, st, frame, rng=None):
    """`st`: a while loop (its test a tensor, or `while True:` left by a tensor `if`), or a for
    loop over range(start, stop, step) with a tensor bound: rng = (start, stop, step), its
    index a hidden carried counter (the loop variable takes it at the top of each iteration)."""
    b = _builder(parser, st, frame)
    if st.orelse:
        raise _error(frame.src, st, "`else` on a loop that runs on the device (a tensor "
                     "condition or range bound) is not supported", hint="put that code after the "
                                                                         "loop")
    state = {"params": [], "ret": None}
    for _ in range(16):                 # each retry adds what the body was found to carry
        try:
            return _build(parser, b, st, frame, state, rng)
        except _Retry:
            continue
    raise _error(frame.src, st, "internal: the loop's carried values did not settle")


def _loop_test(parser, b, st, fc, rng, frame):
    """The loop's condition in the cond region (a 0-d bool tensor)."""
    if rng is not None:
        i, stop, step = fc.local[_flag_names(st)[2]], rng[1], rng[2]
        return i < stop if step > 0 else i > stop
    from .fallback import condition
    c = condition(parser.eval(st.test, fc))
    if c is True or (isinstance(st.test, ast.Constant) and c):
        return _const(b, True)
    if not isinstance(c, Tensor):
        raise _error(frame.src, st.test, "the loop condition must stay a tensor once it is "
                     "one", TypeError)
    return c


def _build(parser, b, st, frame, state, rng):
    from ..ops.math import LOGICAL_AND, LOGICAL_NOT, LOGICAL_OR
    BRK, RET, IDX, slot = _flag_names(st)
    params, ret = state["params"], state["ret"]
    assigned = _assigned_names(st.body)
    target = _assigned_names([st.target]) if rng is not None else set()
    assigned |= target                  # the loop variable: carried only if a tensor before
    names = [n for n in sorted(assigned) if n in frame.local and
             (n not in target or isinstance(frame.local[n], Tensor))]
    body_only = sorted(assigned - set(names))
    carried, init, kinds = [], [], {}
    for n in names:
        v = frame.local[n]
        kind = scalar_kind(v)
        if kind is not None:            # a number the loop changes: a variable scalar
            kinds[n] = kind
            v = v if isinstance(v, Tensor) else _const(b, v, _COMPUTE[kind])
        if isinstance(v, Tensor):
            carried.append(n)
            init.append(v)
    if rng is not None:
        carried.append(IDX)
        start = rng[0]
        init.append(start.astype(dt.int64) if isinstance(start, Tensor) else
                    _const(b, start, dt.int64))
    flags = ([BRK] if breaks_loop(st.body) else []) + ([RET] if has_return(st.body) else [])
    for f in flags:
        carried.append(f)
        init.append(_const(b, False))
    if ret is not None:
        for i, like in enumerate(ret[1]):
            carried.append(f"{slot}{i}")
            init.append(_const(b, np.zeros(like.shape), like.dtype))
    for k in params:                    # a Parameter not assigned yet: its own tape identity
        p = b.param_objs[k]
        init.append(p if k not in b._current else sym(b._current[k]))
    init_vals = [b.value_of(t) for t in init]
    cur0 = dict(b._current)
    try:
        with b.region("cond") as gc:
            gc.inputs = [ir.Value(v.shape, v.dtype) for v in init_vals]
            fc = frame.copy()
            _enter(b, fc, carried, params, gc.inputs, kinds)
            c = _loop_test(parser, b, st, fc, rng, frame)
            cv = sym(_cond_value(b, c, getattr(st, "test", st), frame))
            if flags:
                stop = fc.local[flags[0]]
                if len(flags) == 2:
                    stop = apply(LOGICAL_OR, stop, fc.local[flags[1]])
                cv = apply(LOGICAL_AND, cv, apply(LOGICAL_NOT, stop))
            gc.outputs = [b.value_of(cv)]
        b._current = dict(cur0)
        with b.region("body") as gb:
            gb.inputs = [ir.Value(v.shape, v.dtype) for v in init_vals]
            fb = frame.copy()
            _enter(b, fb, carried, params, gb.inputs, kinds)
            entry = dict(b._current)
            mark = LoopMark(st, list(carried), None if ret is None else ret[0])
            if rng is not None:
                parser.assign(st.target, fb.local[IDX], fb)
            parser.conts.append(("loop", mark))
            try:
                flow = parser.exec_block(st.body, fb)
            finally:
                parser.conts.pop()
            end_iteration(b, fb, flow, mark, st, frame)
            for n in names:
                if n not in carried and not _same_value(fb.local.get(n), frame.local[n]):
                    raise _error(frame.src, st, f"'{n}' (a {type(frame.local[n]).__name__}) is "
                                 f"changed by a loop that runs on the device", TypeError,
                                 hint="carry tensors or numbers through the loop")
            if rng is not None:
                fb.local[IDX] = fb.local[IDX] + rng[2]
            new = [k for k, v in b._current.items() if entry.get(k) is not v and k not in params]
            if new or (mark.found is not None and ret is None):
                state["params"] = params + new
                if mark.found is not None and ret is None:
                    state["ret"] = mark.found
                raise _Retry
            outs = []
            for n, v0 in zip(carried, init_vals):
                val = _as_value(b, fb.local[n], sym(v0))
                if val is None:
                    raise _error(frame.src, st, f"'{n}' stops being a tensor in the loop body",
                                 TypeError)
                outs.append(val)
            outs += [b._current[k] for k in params]
            gb.outputs = outs
    finally:
        b._current = cur0
    shown = [n.lstrip("\0") for n in carried] + \
        [f"Parameter '{b.param_objs[k].name}'" for k in params]
    _merge_types(shown, init_vals, outs, st, frame, ("loop input", "loop body result"))
    b.loc = frame.src.loc(st)
    res = b.emit(ir.WHILE, init_vals, (), [v.meta for v in init_vals], (gc, gb))
    outs_t = record_while(b, res, b.graph.nodes[-1], init)
    for n, t in zip(carried, outs_t):
        frame.local[n] = t if n not in kinds else wrap_result(t, kinds[n])
    for k, t in zip(params, outs_t[len(carried):]):
        b.assign(b.param_objs[k], t)
    for n in body_only:                     # the body's own names: unusable after the loop
        frame.unbound[n] = (unbound_message(n, frame, "in the body of the tensor `while`", st,
                                            first_store(st.body, n),
                                            "when the loop runs zero times"),
                            f"define '{n}' before the loop")
    frame.local.pop(BRK, None)
    frame.local.pop(IDX, None)
    if RET not in flags:
        return None
    flag = frame.local.pop(RET)
    vals = [frame.local.pop(f"{slot}{i}") for i in range(len(ret[1]))] if ret else []
    value = _unflatten(ret[0], vals) if ret else None
    return returned_if(parser, st, flag, value, frame)


class TensorRange(tuple):
    """(start, stop, step) of a range() with a tensor bound."""


def iterable(parser, node, frame):
    """What a for loop iterates over; for range(...) with a tensor argument, its
    (start, stop, step), the step a Python int."""
    if not (isinstance(node, ast.Call) and not node.keywords and 1 <= len(node.args) <= 3
            and not any(isinstance(a, ast.Starred) for a in node.args)):
        return parser.eval(node, frame)
    func = parser.eval(node.func, frame)
    args = [parser.eval(a, frame) for a in node.args]
    if func is not builtins.range or not any(is_symbolic(a) for a in args):
        saved, parser.site = parser.site, (node, frame)
        try:
            return parser.call(func, args, {}, node, frame)
        finally:
            parser.site = saved
    start, stop, step = ([0] + args + [1])[-3:] if len(args) == 1 else (args + [1])[:3]
    if is_symbolic(step) or not isinstance(step, int) or step == 0:
        raise _error(frame.src, node, "range() with a tensor bound needs a nonzero Python "
                     "int step", ValueError)
    for a in (start, stop):
        if is_symbolic(a) and (a.shape != () or not a.dtype.is_int):
            raise _error(frame.src, node, f"range() bounds must be 0-d integer tensors "
                         f"(got {a.dtype} of shape {a.shape})", TypeError)
    return TensorRange((start, stop, step))
