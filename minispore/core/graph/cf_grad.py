"""Reverse mode through structured control flow: If and While nodes on the tape.

When a gradient is being taken while a graph is built, an If/While node is recorded on the tape
as one op whose inputs are the values its subgraphs read from outside (their free values) and,
for While, its initial carried values. Its bprop builds new IR through the builder:

- If: a new If on the same condition whose branches replay the forward branch with the tape on
  and return the branch's vector-Jacobian product for every free value;
- While: the static-shape IR has no stack of dynamic size, so the carried states are kept as
  checkpoints in buffers of a fixed number C of slots (`checkpoint_slots`: C = 2..64, by the
  state's size). Count the trips N; run the loop again, keeping state k at slot k // s for every
  s-th k, s = ceil(N / C); then walk the segments backwards: recompute a segment's states from
  its checkpoint into a second C-slot buffer, and for k = end-1 .. start apply the body's VJP at
  state k read from it. That is 3N body evaluations and N VJPs while N <= C^2 (a state past a
  segment's C kept slots is recomputed from the last kept one: O(N^2 / C) beyond); memory 2C + 1
  states. Every state is recomputed by the same body, so the gradients are the numbers the
  earlier version gave, which recomputed every state from the initial one (O(N^2)).
"""
from __future__ import annotations

from .. import dtype as dt
from ..primitive import Meta, OpDef, apply, attrs_dict
from ..shape import size_of
from ..pynative import TAPE, Leaf, backward, record
from ..tensor import Tensor
from . import ir
from .ir import free_values
from .builder import sym


def _float(v) -> bool:
    """Whether a gradient flows through this value (floats and integers, not bool)."""
    return v.dtype.has_grad


def _tracked(b, vals) -> bool:
    return any(b.refs.get(v.id) is not None for v in vals)


def _sym_ref(b, v):
    t = sym(v)
    t._node = b.refs.get(v.id)
    return t


# ---------------------------------------------------------------- replay ------------------------
def replay(b, g: ir.Graph, env: dict) -> list:
    """Emit g's nodes again through the builder, reading env[value.id] (tensors) for the values
    it maps; everything else is used as is. Returns the tensors of g.outputs."""
    def get(v):
        t = env.get(v.id)
        return t if t is not None else _sym_ref(b, v)
    for n in g.nodes:
        if isinstance(n.op, OpDef):
            group = b.composites.get(n.outputs[0].id) if n.outputs else None
            if group is not None:               # a composite with a declared bprop: its own
                replay_composite(b, group, get, env)        # tape node, as in the forward
                continue
            res = b.apply(n.op, tuple(get(v) for v in n.inputs), n.attrs)
            res = res if isinstance(res, tuple) else (res,)
            for v, t in zip(n.outputs, res):
                env[v.id] = t
        elif n.op == ir.IF:
            outs = emit_if(b, get(n.inputs[0]), n.subgraphs, env)
            for v, t in zip(n.outputs, outs):
                env[v.id] = t
        elif n.op == ir.WHILE:
            outs = emit_while(b, [get(v) for v in n.inputs], n.subgraphs, env)
            for v, t in zip(n.outputs, outs):
                env[v.id] = t
        elif n.op == ir.CONST:
            env[n.outputs[0].id] = sym(n.outputs[0])
        # PRINT is not repeated; ASSIGN cannot occur inside a region (builder.assign refuses)
    return [get(v) for v in g.outputs]


def replay_composite(b, group, get, env: dict) -> None:
    """Apply a composite with a declared bprop again (at the node computing one of its outputs;
    the parts replayed before it are left dead), so that its bprop, not its parts', gives the
    branch's gradient, as in PyNative."""
    op, attrs, ins, outs = group
    if all(v.id in env for v in outs):
        return
    res = apply(op, *(get(v) for v in ins), **attrs_dict(attrs))
    for v, t in zip(outs, res if isinstance(res, tuple) else (res,)):
        env[v.id] = t


def emit_if(b, cond: Tensor, branches, env: dict) -> list:
    """Replay an If (its branches read env) as a new If node, recorded on the tape."""
    new = []
    for name, sg in zip(("then", "else"), branches):
        with b.region(name) as g:
            outs = replay(b, sg, dict(env))
            g.outputs = [b.value_of(t) for t in outs]
        new.append(g)
    metas = [v.meta for v in new[0].outputs]
    vals = b.emit(ir.IF, [b.value_of(cond)], (), metas, new)
    return record_if(b, vals, b.graph.nodes[-1])


def emit_while(b, init: list, subgraphs, env: dict) -> list:
    """Replay a While with new initial values as a new While node, recorded on the tape."""
    cond_g, body_g = subgraphs
    new = []
    for name, sg in (("cond", cond_g), ("body", body_g)):
        with b.region(name) as g:
            g.inputs = [ir.Value(v.shape, v.dtype) for v in sg.inputs]
            e = dict(env)
            e.update({old.id: sym(nv) for old, nv in zip(sg.inputs, g.inputs)})
            outs = replay(b, sg, e)
            g.outputs = [b.value_of(t) for t in outs]
        new.append(g)
    vals = b.emit(ir.WHILE, [b.value_of(t) for t in init], (), [v.meta for v in new[1].inputs],
                  new)
    return record_while(b, vals, b.graph.nodes[-1], init)


# ---------------------------------------------------------------- recording ---------------------
def record_if(b, out_vals: list, node: ir.Node) -> list:
    outs = [sym(v) for v in out_vals]
    free = [v for v in _unique(free_values(node.subgraphs[0]) + free_values(node.subgraphs[1]))
            if _float(v)]
    if TAPE.depth and _tracked(b, free) and any(_float(v) for v in out_vals):
        op = _cf_op("If", _if_bprop)
        record(op, (("node", node, ir.Node),), tuple(_sym_ref(b, v) for v in free),
               tuple(outs))
        for v, t in zip(out_vals, outs):
            b.refs[v.id] = t._node
    return outs


def record_while(b, out_vals: list, node: ir.Node, init: list) -> list:
    outs = [sym(v) for v in out_vals]
    init_vals = [b.value_of(t) for t in init]
    free = [v for v in _unique(free_values(node.subgraphs[0]) + free_values(node.subgraphs[1]))
            if _float(v)]
    if TAPE.depth and (_tracked(b, free) or _tracked(b, init_vals)):
        op = _cf_op("While", _while_bprop)
        ins = tuple(_sym_ref(b, v) for v in init_vals) + tuple(_sym_ref(b, v) for v in free)
        record(op, (("node", node, ir.Node), ("n_init", len(init_vals), int)), ins, tuple(outs))
        for v, t in zip(out_vals, outs):
            b.refs[v.id] = t._node
    return outs


def _unique(vals):
    seen, out = set(), []
    for v in vals:
        if v.id not in seen:
            seen.add(v.id)
            out.append(v)
    return out


_CF_OPS: dict = {}


def _cf_op(name, bprop) -> OpDef:
    op = _CF_OPS.get(name)
    if op is None:
        op = _CF_OPS[name] = OpDef(name, infer=None, ref=None, bprop=bprop, arity=None)
    return op


def _zeros(meta):
    from ..ops.array import zeros
    return zeros(meta.shape, meta.dtype)


def _vjp(b, g: ir.Graph, env_free: dict, wrt: list, douts: list) -> list:
    """Replay g with fresh tape leaves on `wrt` (tensors keyed by value id in env_free) and
    return d(outputs . douts)/d(wrt), zeros where unreachable."""
    env = dict(env_free)
    leaves = []
    for v in wrt:
        t = sym(env[v.id]._buf) if v.id in env else sym(v)
        t._node = Leaf()
        env[v.id] = t
        leaves.append(t)
    TAPE.depth += 1
    try:
        outs = replay(b, g, env)
    finally:
        TAPE.depth -= 1
    pairs = [(o, d) for o, d in zip(outs, douts) if o.dtype.has_grad and d is not None]
    grads = backward([o for o, _ in pairs], [d for _, d in pairs],
                     [t._node for t in leaves]) if pairs else [None] * len(leaves)
    return [g_ if g_ is not None else _zeros(Meta(t.shape, t.dtype))
            for g_, t in zip(grads, leaves)]


def _as_list(x, n):
    if n == 1 and not isinstance(x, tuple):
        return [x]
    return list(x)


def _if_bprop(ins, out, dout, node):
    from .builder import GraphBuilder
    from ..primitive import executor
    b = executor.current
    assert isinstance(b, GraphBuilder), "If bprop runs while a graph is being built"
    free = [t._buf for t in ins]
    douts = _as_list(dout, len(node.outputs))
    douts = [d if d is not None else _zeros(v.meta) for d, v in zip(douts, node.outputs)]
    branches = []
    for name, sg in zip(("then", "else"), node.subgraphs):
        with b.region(f"{name}_grad") as g:
            grads = _vjp(b, sg, {}, free, douts)
            g.outputs = [b.value_of(t) for t in grads]
        branches.append(g)
    vals = b.emit(ir.IF, [node.inputs[0]], (), [v.meta for v in free], branches)
    return record_if(b, vals, b.graph.nodes[-1])


def _while_bprop(ins, out, dout, node, n_init):
    """See the module docstring: count trips, then walk k = N-1 .. 0 recomputing state k."""
    from ..primitive import executor
    b = executor.current
    cond_g, body_g = node.subgraphs
    init = list(ins[:n_init])
    free = [t._buf for t in ins[n_init:]]
    carried_meta = [v.meta for v in node.inputs]
    douts = _as_list(dout, len(node.outputs))
    adj = [d if d is not None else _zeros(m) for d, m in zip(douts, carried_meta)]

    def loop(init_tensors, cond_fn, body_fn):
        """Emit a While over init_tensors with Python-built cond/body regions."""
        metas = [Meta(t.shape, t.dtype) for t in init_tensors]
        regions = []
        for name, fn in (("cond", cond_fn), ("body", body_fn)):
            with b.region(name) as g:
                g.inputs = [ir.Value(m.shape, m.dtype) for m in metas]
                res = fn([sym(v) for v in g.inputs])
                g.outputs = [b.value_of(t) for t in res]
            regions.append(g)
        return [sym(v) for v in b.emit(ir.WHILE, [b.value_of(t) for t in init_tensors], (),
                                       metas, regions)]

    def cond_of(state):
        env = {v.id: t for v, t in zip(cond_g.inputs, state)}
        return replay(b, cond_g, env)[0]

    def body_of(state):
        env = {v.id: t for v, t in zip(body_g.inputs, state)}
        return replay(b, body_g, env)

    # 1. trip count
    counted = loop([const_i(0)] + init, lambda s: [cond_of(s[1:])],
                   lambda s: [s[0] + 1] + body_of(s[1:]))
    n_trips = counted[0]
    n_free = len(free)
    adj_free0 = [_zeros(v.meta) for v in free]

    from ..ops.array import zeros
    from ..ops.index_ops import SCATTER_UPDATE, gather
    from ..ops.math import FLOOR_DIV, MAXIMUM, MINIMUM, MOD, where

    def binary(op):
        return lambda x, y: apply(op, x, y)
    maximum, minimum, floor_div, mod = (binary(op) for op in (MAXIMUM, MINIMUM, FLOOR_DIV, MOD))
    n = n_init

    def keep_and_step(slot_of):
        """A loop body over (k, state, buffers): state k into slot slot_of(k) of the buffers,
        then one trip of the forward body."""
        def body(t):
            k, state, bufs = t[0], t[1:1 + n], t[1 + n:]
            slot = slot_of(k)
            bufs = [apply(SCATTER_UPDATE, buf, slot, st, axis=0) for buf, st in zip(bufs, state)]
            return [k + 1] + body_of(state) + bufs
        return body

    # 2. checkpoints: state k at slot k // s when k % s == 0, s = ceil(N / C) (slot C: a
    #    scratch slot the other iterations write, so the update needs no branch)
    C = checkpoint_slots(carried_meta)
    stride = maximum(floor_div(n_trips + (C - 1), const_i(C)), const_i(1))
    ck_body = keep_and_step(lambda k: where(mod(k, stride) == 0, floor_div(k, stride),
                                            const_i(C)))
    empty = [zeros((C + 1,) + tuple(m.shape), m.dtype) for m in carried_meta]
    ckpts = loop([const_i(0)] + init + empty, lambda t: [t[0] < n_trips], ck_body)[1 + n:]

    # 3. segments g = G-1 .. 0: the segment's first C states from its checkpoint into a buffer,
    #    then k = end-1 .. start, each state read from the buffer (or, past its C slots,
    #    recomputed from the last of them), and the body's VJP there
    def seg_body(t):
        g, adj_c, adj_f = t[0], t[1:1 + n], t[1 + n:]
        start = g * stride
        seg_len = minimum(n_trips - start, stride)
        first = [gather(cb, g, 0) for cb in ckpts]
        kept = minimum(seg_len, const_i(C))
        seg = loop([const_i(0)] + first + [zeros((C,) + tuple(m.shape), m.dtype)
                                           for m in carried_meta],
                   lambda u: [u[0] < kept], keep_and_step(lambda i: i))[1 + n:]

        def step_back(v):
            i, a_c, a_f = v[0], v[1:1 + n], v[1 + n:]
            base = minimum(i, const_i(C - 1))
            state_i = loop([base] + [gather(sb, base, 0) for sb in seg],
                           lambda w: [w[0] < i],
                           lambda w: [w[0] + 1] + body_of(w[1:]))[1:]
            env = {val.id: x for val, x in zip(body_g.inputs, state_i)}
            g_all = _vjp(b, body_g, env, list(body_g.inputs) + free, a_c)
            return ([i - 1] + g_all[:n_init]
                    + [a + g_ for a, g_ in zip(a_f, g_all[n_init:])])
        r = loop([seg_len - 1] + adj_c + adj_f, lambda v: [v[0] >= 0], step_back)
        return [g - 1] + r[1:]
    n_seg = floor_div(n_trips + stride - 1, stride)
    res = loop([n_seg - 1] + adj + adj_free0, lambda t: [t[0] >= 0], seg_body)
    grads_init = res[1:1 + n_init]
    grads_free = res[1 + n_init:1 + n_init + n_free]
    return tuple(grads_init) + tuple(grads_free)


CHECKPOINT_BYTES = 1 << 18     # carried-state bytes a buffer's C slots may hold in all
MAX_CHECKPOINTS = 64


def checkpoint_slots(metas) -> int:
    """C, the checkpoints a While's gradient keeps: as many as fit CHECKPOINT_BYTES of carried
    state, from 2 to MAX_CHECKPOINTS. Each iteration's checkpoint update copies its buffer (IR
    values are immutable), so the budget bounds that copy as well as the memory."""
    nbytes = sum(size_of(m.shape) * m.dtype.itemsize for m in metas)
    return max(2, min(MAX_CHECKPOINTS, CHECKPOINT_BYTES // max(1, nbytes)))


def const_i(v):
    from ..ops.array import full
    return full((), v, dtype=dt.int64)
