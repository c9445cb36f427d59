"""Control flow and side effects for the parser: `if`/conditional expressions and `while` on
tensor conditions (If/While nodes with subgraphs), loops on Python conditions (unrolled at compile
time), `print` (a runtime Print node) and attribute assignment (a Parameter assignment becomes an
Assign node; other attributes are set once, at compile time, as in MindSpore).

Variables an `if` branch assigns become the If node's outputs; both branches must give them the
same shape and dtype (different Python numbers become a variable scalar chosen at run time).
Variables a `while` body assigns that exist before the loop are carried (control_while.py).
A Parameter assigned under a tensor `if` or in a tensor loop is an output of the If/While too,
assigned after the node. A branch that can leave early (`return`, `break`, `continue`) runs the
rest of the function, or of the tensor loop's iteration, itself (exit_if).
A variable assigned on one path only (one branch, or only in a tensor `while` body) has no value
after it: reading it raises a GraphSyntaxError naming it, where it was assigned and the fix.
"""
from __future__ import annotations

import ast

from .. import dtype as dt
from ..errors import MinisporeError
from ..mutable import scalar_kind, wrap_result
from ..tensor import Parameter, Tensor
from . import ir
from .builder import GraphBuilder, is_symbolic, sym
from .cf_grad import record_if
from .guards import MISSING, record_attribute
from .parser import BREAK, CONTINUE, LONG_UNROLL, _Flow, has_exit
from .semantics import first_store, truth_error, unbound_message
from .source import Frame
from .source import error as _error


def _assigned_names(stmts) -> set:
    names = set()
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


def _has(stmts, kinds) -> bool:
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, kinds):
                return True
    return False


def _builder(parser, node, frame) -> GraphBuilder:
    if not isinstance(parser.ex, GraphBuilder):
        raise _error(frame.src, node, "internal: tensor control flow outside a graph builder")
    return parser.ex


def _cond_value(b: GraphBuilder, cond: Tensor, node, frame) -> ir.Value:
    from ..ops.array import reshape
    from ..ops.math import cast
    if cond.size != 1:                      # no truth value: PyNative's error
        raise truth_error(cond, node, frame)
    if cond.shape != ():
        cond = reshape(cond, ())
    if cond.dtype is not dt.bool_:
        cond = cast(cond, dt.bool_)
    return b.value_of(cond)


def _as_value(b: GraphBuilder, v, like: Tensor | None):
    """A branch result as an IR value (Python numbers become constants of `like`'s dtype)."""
    if isinstance(v, Tensor):
        return b.value_of(v)
    if isinstance(v, (bool, int, float)) and like is not None:
        from ..tensor import to_numpy
        return b.const(to_numpy(v, like.dtype), like.dtype)
    return None


def _scalar_like(b, x, y):
    """A 0-d tensor standing for the dtype two different Python numbers share."""
    from ..tensor import to_numpy
    d = dt.promote(dt.scalar_dtype(x), dt.scalar_dtype(y))
    return sym(b.const(to_numpy(x, d), d))


def _merge_types(names, a_vals, b_vals, node, frame, what=("then-branch", "else-branch"),
                 locs=None):
    for k, (name, va, vb) in enumerate(zip(names, a_vals, b_vals)):
        if va.shape != vb.shape or va.dtype is not vb.dtype:
            where = ""
            if locs is not None:
                la, lb = locs[k]
                where = "".join(f"\n  {label} (line {lc.line}): {lc.text.strip()}"
                                for label, lc in ((what[0], la), (what[1], lb)) if lc)
            raise _error(frame.src, node,
                         f"'{name}' is {va.type_str()} in the {what[0]} but {vb.type_str()} in "
                         f"the {what[1]}; both must have the same shape and dtype{where}",
                         TypeError,
                         hint="make both branches produce the same shape and dtype (cast or "
                              "reshape), or use a Python condition")


def _run_branch(parser, b, stmts, frame, name):
    fr = frame.copy()
    with b.region(name) as g:
        flow = parser.exec_block(stmts, fr)
    return g, fr, flow


def _exits(stmts) -> bool:
    """Whether these statements can leave their block early: a `return`, or a `break` or
    `continue` not inside a loop of their own."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Return, ast.Break, ast.Continue)):
            return True
        if isinstance(n, (ast.For, ast.While)):
            todo.extend(n.orelse)
            todo.extend(x for x in ast.walk(n) if isinstance(x, ast.Return))
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


def _param_outputs(b, cur0, curs):
    """The Parameters either branch assigned, and each branch's value of them."""
    keys = []
    for cur in curs:
        keys += [k for k, v in cur.items() if cur0.get(k) is not v and k not in keys]
    vals = [[cur.get(k) or cur0.get(k) or b._params[k] for k in keys] for cur in curs]
    return keys, vals


def _assign_outputs(b, keys, outs):
    for k, t in zip(keys, outs):
        b.assign(b.param_objs[k], t)


def tensor_if(parser, st: ast.If, cond: Tensor, rest: list, frame: Frame):
    """`if <tensor>:` -> an If node. Without return/break/continue in the branches, assigned
    variables (and assigned Parameters) are merged. When a branch can leave early, each branch
    continues with the rest of the function (the rest of this block, the remaining loop
    iterations, the code after the loops: parser.finish) up to its return, and the two return
    values become the If's outputs; inside the body of a while loop on a tensor condition, up
    to the end of the iteration, and the loop's carried values are the outputs
    (control_while.py)."""
    b = _builder(parser, st, frame)
    cv = _cond_value(b, cond, st.test, frame)
    branches = (st.body, st.orelse)
    if _exits(branches[0]) or _exits(branches[1]):
        runs = []
        for body, other, label in zip(branches, branches[::-1], ("else-branch", "then-branch")):
            def run(fr, body=body, other=other, label=label):
                for v in _assigned_names(other) - _assigned_names(body) - set(frame.local):
                    _mark_unbound(fr, v, label, st, other)
                return parser.exec_block(body + rest, fr)
            runs.append(run)
        return exit_if(parser, st, cv, runs, frame)

    names = sorted(_assigned_names(branches[0] + branches[1]))
    cur0 = dict(b._current)
    g1, f1, _ = _run_branch(parser, b, branches[0], frame, "then")
    cur1, b._current = b._current, dict(cur0)
    g2, f2, _ = _run_branch(parser, b, branches[1], frame, "else")
    cur2, b._current = b._current, cur0
    merged, vals1, vals2, locs, kinds = [], [], [], [], []
    for name in names:
        a, c = f1.local.get(name, _MISSING), f2.local.get(name, _MISSING)
        if a is _MISSING or c is _MISSING:      # defined on one path only: unusable after
            frame.local.pop(name, None)
            if a is not c:                      # (both: a comprehension's own variable)
                _mark_unbound(frame, name, "then-branch" if c is _MISSING else "else-branch",
                              st, branches[0] if c is _MISSING else branches[1])
            continue
        if not isinstance(a, Tensor) and not isinstance(c, Tensor):
            if a is c or (type(a) is type(c) and a == c):
                frame.local[name] = a
                continue
            if not _number(a) or not _number(c):
                raise _error(frame.src, st, f"'{name}' gets different Python values in the two "
                             f"branches of a tensor `if` ({a!r} and {c!r})", TypeError,
                             hint="make it a tensor, or branch on a Python condition")
            # different numbers: a scalar tensor chosen at run time (MindSpore's variable
            # scalar); reading it as a compile-time constant later is an error there
            like = _scalar_like(b, a, c)
        else:
            like = a if isinstance(a, Tensor) else c
        with _reopen(b, g1):
            va = _as_value(b, a, like)
        with _reopen(b, g2):
            vc = _as_value(b, c, like)
        if va is None or vc is None:
            raise _error(frame.src, st, f"'{name}' is a tensor in one branch and a "
                         f"{type(c if va is not None else a).__name__} in the other", TypeError)
        merged.append(name)
        kinds.append(scalar_kind(a, c))
        vals1.append(va)
        vals2.append(vc)
        locs.append((f1.locs.get(name), f2.locs.get(name)))
    _merge_types(merged, vals1, vals2, st, frame, locs=locs)
    keys, (pv1, pv2) = _param_outputs(b, cur0, (cur1, cur2))
    g1.outputs, g2.outputs = vals1 + pv1, vals2 + pv2
    b.loc = frame.src.loc(st)
    outs = b.emit(ir.IF, [cv], (), [v.meta for v in g1.outputs], (g1, g2))
    outs = record_if(b, outs, b.graph.nodes[-1])
    for name, t, kind in zip(merged, outs, kinds):
        # numbers on both paths: a variable scalar (a Python number when returned)
        frame.local[name] = t if kind is None else wrap_result(t, kind)
        frame.locs[name] = frame.src.loc(st)
    _assign_outputs(b, keys, outs[len(merged):])
    return parser.exec_block(rest, frame)


def _scalar_or(t, x, y):
    """If output `t` of an If joins numbers (Python or variable scalars) `x` and `y`, it as a
    variable scalar; else `t`."""
    kind = scalar_kind(x, y)
    return t if kind is None else wrap_result(t, kind)


def _number(v) -> bool:
    return isinstance(v, (bool, int, float))


def returned_if(parser, st, flag: Tensor, value, frame: Frame):
    """`if flag: return value`, the other path running the rest of the function."""
    b = _builder(parser, st, frame)
    cv = _cond_value(b, flag, st, frame)
    runs = [lambda fr: _Flow("return", value), lambda fr: None]
    return exit_if(parser, st, cv, runs, frame)


def exit_if(parser, st, cv, runs, frame: Frame):
    """An If whose two paths (runs[i](frame) -> how the block ended) continue to the function's
    return, or to the end of the iteration of the innermost tensor while (its carried values
    are then the outputs, and the flow is "iter_end")."""
    from .control_while import end_iteration
    from .control_while import NeedTensorLoop
    b = _builder(parser, st, frame)
    mark = parser.loop_mark()
    loop = parser.innermost_loop()
    if mark is None and loop is not None and loop[0] == "while" and \
            isinstance(loop[1].test, ast.Constant) and loop[1].test.value:
        raise NeedTensorLoop(loop[1])       # `while True:` left on a tensor condition
    if mark is None and loop is not None and loop[0] == "for" and len(loop[2]) > LONG_UNROLL \
            and id(loop[1]) in parser.long_ranges:
        raise NeedTensorLoop(loop[1])       # a long range() loop left on a tensor condition
    cur0 = dict(b._current)
    gs, results, curs, frames = [], [], [], []
    for name, run in zip(("then", "else"), runs):
        fr = frame.copy()
        b._current = dict(cur0)
        with b.region(name) as g:
            flow = run(fr)
            if flow is None or flow.kind not in ("return", "iter_end"):
                flow = parser.finish(fr, flow)
            if mark is not None:
                end_iteration(b, fr, flow, mark, st, frame)
        curs.append(b._current)
        gs.append(g)
        frames.append(fr)
        results.append(flow.value if flow is not None and flow.kind == "return" else None)
    b._current = cur0
    if mark is not None:
        flat_a = [frames[0].local[n] for n in mark.names]
        flat_b = [frames[1].local[n] for n in mark.names]
        tree_a = None
    else:
        flat_a, tree_a = _flatten(results[0])
        flat_b, tree_b = _flatten(results[1])
        if tree_a != tree_b:
            raise _error(frame.src, st, "the two branches of this tensor `if` return different "
                         f"structures ({tree_a} vs {tree_b})", TypeError,
                         hint="return the same number of tensors from every branch")
    # leaf by leaf: equal Python values stay Python values; a tensor on either side makes
    # both tensors of its dtype; different Python numbers become scalars of their own dtype
    keep, like = [], []
    for x, y in zip(flat_a, flat_b):
        t = x if isinstance(x, Tensor) else y if isinstance(y, Tensor) else None
        same = t is None and type(x) is type(y) and x == y
        if t is None and not same and not isinstance(x, (bool, int, float)):
            raise _error(frame.src, st, f"the two paths of this tensor `if` return different "
                         f"Python values ({x!r} and {y!r})", TypeError,
                         hint="return tensors, or branch on a Python condition")
        keep.append(same)
        like.append(t if t is not None else None if same else _scalar_like(b, x, y))
    keys, pvals = _param_outputs(b, cur0, curs)
    vals = []
    for g, flat, pv in zip(gs, (flat_a, flat_b), pvals):
        with _reopen(b, g):
            vals.append([_as_value(b, v, lk) for v, lk, k in zip(flat, like, keep) if not k])
        g.outputs = vals[-1] + pv
    labels = [f"return value {i}" for i, k in enumerate(keep) if not k] if mark is None else \
        [n.lstrip("\0") for n, k in zip(mark.names, keep) if not k]
    _merge_types(labels, vals[0], vals[1], st, frame)
    b.loc = frame.src.loc(st)
    outs = record_if(b, b.emit(ir.IF, [cv], (), [v.meta for v in gs[0].outputs], gs),
                     b.graph.nodes[-1])
    _assign_outputs(b, keys, outs[len(vals[0]):])
    outs = iter(outs)
    leaves = [x if k else _scalar_or(next(outs), x, y)
              for x, y, k in zip(flat_a, flat_b, keep)]
    if mark is not None:
        for n, v in zip(mark.names, leaves):
            frame.local[n] = v
        return _Flow("iter_end")
    return _Flow("return", _unflatten(tree_a, leaves))


def tensor_ifexp(parser, n: ast.IfExp, cond: Tensor, frame: Frame):
    b = _builder(parser, n, frame)
    cv = _cond_value(b, cond, n.test, frame)
    vals, gs = [], []
    cur0 = dict(b._current)
    for name, expr in (("then", n.body), ("else", n.orelse)):
        with b.region(name) as g:
            v = parser.eval(expr, frame.copy())
            vals.append(v)
        gs.append(g)
        if b._current != cur0:
            raise _error(frame.src, n, "assigning a Parameter inside a conditional expression "
                         "on a tensor is not supported", hint="use an `if` statement")
    like = _first_tensor(vals)
    kind = scalar_kind(*vals)               # numbers on both sides: a variable scalar
    if like is None and all(_number(v) for v in vals):
        like = _scalar_like(b, vals[0], vals[1])
    out_vals = []
    for g, v in zip(gs, vals):
        with _reopen(b, g):
            out_vals.append(_as_value(b, v, like))
        if out_vals[-1] is None:
            raise _error(frame.src, n, "a conditional expression on a tensor must give tensors "
                         "or numbers in both branches", TypeError)
        g.outputs = [out_vals[-1]]
    _merge_types(["the value"], [out_vals[0]], [out_vals[1]], n, frame)
    b.loc = frame.src.loc(n)
    outs = b.emit(ir.IF, [cv], (), [out_vals[0].meta], gs)
    out = record_if(b, outs, b.graph.nodes[-1])[0]
    return out if kind is None else wrap_result(out, kind)


def select(parser, node, cond: Tensor, a, c, frame: Frame):
    """`a if cond else c` for values already computed (Python's and/or on a tensor)."""
    b = _builder(parser, node, frame)
    cv = _cond_value(b, cond, node, frame)
    like = a if isinstance(a, Tensor) else c
    gs, vals = [], []
    for name, v in (("then", a), ("else", c)):
        with b.region(name) as g:
            val = _as_value(b, v, like)
            if val is None:
                raise _error(frame.src, node, "`and`/`or` on a tensor must give tensors or "
                             "numbers", TypeError)
            g.outputs = [val]
        gs.append(g)
        vals.append(val)
    _merge_types(["the value of and/or"], [vals[0]], [vals[1]], node, frame,
                 ("left operand", "right operand"))
    b.loc = frame.src.loc(node)
    outs = b.emit(ir.IF, [cv], (), [vals[0].meta], gs)
    return record_if(b, outs, b.graph.nodes[-1])[0]


def run_while(parser, st: ast.While, frame: Frame):
    """A while loop: unrolled while its condition is a Python value; from the first tensor
    condition on, the rest of the loop is a While node. `while True:` unrolls too, until a
    tensor `if` leaves it: then it is built again, as a While whose condition is True."""
    if not (isinstance(st.test, ast.Constant) and st.test.value):
        return _unroll_while(parser, st, frame)
    return unroll_or_loop(parser, st, frame, lambda: _unroll_while(parser, st, frame))


def unroll_or_loop(parser, st, frame, unroll, rng=None):
    """unroll(); if a tensor `if` leaves the loop `st` where it cannot stay unrolled
    (NeedTensorLoop), the loop is built again from the state before it, as a While."""
    from .control_while import NeedTensorLoop, tensor_while
    b = parser.ex
    if not isinstance(b, GraphBuilder):
        return unroll()
    saved = (dict(frame.local), dict(frame.locs), dict(frame.unbound),
             {id(n) for n in b.graph.nodes}, dict(b._current))
    def restore():
        for d, old in zip((frame.local, frame.locs, frame.unbound), saved):
            d.clear()
            d.update(old)
        b.graph.nodes[:] = [n for n in b.graph.nodes if id(n) in saved[3] or n.op == ir.CONST]
        b._current = dict(saved[4])
    try:
        return unroll()
    except NeedTensorLoop as e:
        if e.loop is not st:
            raise
    restore()
    if rng is None:
        return tensor_while(parser, st, frame, rng)
    try:
        return tensor_while(parser, st, frame, rng)
    except (MinisporeError, TypeError, ValueError):
        # the body needs its index as a Python value (a constant, a list index): unrolled
        restore()
        parser.long_ranges.discard(id(st))
        return unroll()


def _unroll_while(parser, st: ast.While, frame: Frame):
    track = has_exit(st.body)
    for _ in range(parser.MAX_UNROLL):
        parser._at(frame, st)
        from .fallback import condition
        cond = condition(parser.eval(st.test, frame))
        if is_symbolic(cond):
            from .control_while import tensor_while
            return tensor_while(parser, st, frame)
        if not parser.truth(cond, st, frame):
            return parser.exec_block(st.orelse, frame)
        flow = parser.continued(track, ("while", st), lambda: parser.exec_block(st.body, frame))
        if flow is BREAK:
            return None
        if flow is not None and flow is not CONTINUE:
            return flow
    raise _error(frame.src, st, f"while loop unrolled more than {parser.MAX_UNROLL} times at "
                 f"compile time", hint="make the condition a tensor so the loop runs on the "
                                       "device")


def emit_print(parser, args, kwargs, node, frame):
    """print(...) in parsed code: prints now when running eagerly; in a graph, a Print node that
    prints at every run with the tensors' runtime values."""
    end, file = kwargs.get("end", "\n"), kwargs.get("file")
    if not isinstance(parser.ex, GraphBuilder):
        print(*args, sep=kwargs.get("sep", " "), end=end, file=file)
        return None
    sep = kwargs.get("sep", "\n")      # MindSpore's graph-mode print: one argument a line
    parser.ex.loc = frame.src.loc(node)
    parser.ex.print_node(args, sep, end, file)
    return None


def assign_attribute(parser, obj, attr, value, node, frame):
    cur = getattr(obj, attr, None)
    if isinstance(cur, Parameter) and isinstance(parser.ex, GraphBuilder):
        parser.ex.assign(cur, value)
        return
    if isinstance(cur, Parameter):
        from ..tensor import to_numpy
        cur.set_data(value if isinstance(value, Tensor) else to_numpy(value, cur.dtype))
        return
    if isinstance(value, Tensor) and is_symbolic(value):
        raise _error(frame.src, node, f"cannot store a tensor computed in graph mode in "
                     f"attribute '{attr}'", hint="make it a Parameter and assign to it, or "
                                                  "return the tensor")
    record_attribute(obj, attr, cur if hasattr(obj, attr) else MISSING, frame, node)
    setattr(obj, attr, value)


def _mark_unbound(frame, name, label, st, stmts):
    """Reading `name` in `frame` from now on is an error naming the branch that assigns it."""
    frame.unbound[name] = (unbound_message(name, frame, f"in the {label} of the tensor `if`", st,
                                           first_store(stmts, name),
                                           "when the other branch runs"),
                           f"define '{name}' before the `if` (e.g. {name} = ops.zeros_like(x)), "
                           f"or assign it in both branches")


class _Missing:
    pass


_MISSING = _Missing()


class _reopen:
    """Temporarily make a finished region the current graph again (to add constants/casts)."""

    def __init__(self, b, g):
        self.b, self.g = b, g

    def __enter__(self):
        self.b.stack.append(self.g)

    def __exit__(self, *exc):
        self.b.stack.pop()


def _first_tensor(vals):
    for v in vals:
        if isinstance(v, Tensor):
            return v
    return None


def _flatten(obj):
    """(list of leaves, structure) for tuples/lists of values."""
    if isinstance(obj, (tuple, list)):
        leaves, trees = [], []
        for o in obj:
            lv, t = _flatten(o)
            leaves.extend(lv)
            trees.append(t)
        return leaves, (type(obj).__name__, tuple(trees))
    return [obj], "leaf"


def _unflatten(tree, leaves):
    it = iter(leaves)

    def build(t):
        if t == "leaf":
            return next(it)
        kind, subs = t
        items = [build(s) for s in subs]
        return tuple(items) if kind == "tuple" else list(items)
    return build(tree)
