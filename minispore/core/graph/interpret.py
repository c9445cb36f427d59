"""A tiny reference interpreter for the graph IR: `interpret(g, args, params)` evaluates a graph
node by node with each primitive's numpy reference `ref`. It is the reference semantics of a graph
(what every pass must preserve, bit for bit) and is meant for tests, not speed.

- CONST: its value. Params: `params[name]` when given (keyed by the Parameter's name), else the
  Parameter's current `asnumpy()`.
- If: the cond (a bool scalar) picks a subgraph, evaluated with the enclosing values visible.
- While: cond and body each take the carried values as their inputs; the loop runs while cond
  returns true, and the node's outputs are the final carried values.
- Print: prints as the O0 executor does: attrs parts (("s", text) | ("t", input index)) joined
  by sep, tensors formatted as `Tensor(shape=..., dtype=..., value=...)`.
- Assign: no effect on the Parameter (the builder already routes later reads of the Parameter to
  the assigned value); its outputs, if any, are its input value.
- Fused nodes (made by fusion, which runs after the passes here) are not interpreted.
Every result is checked against the shape and dtype recorded on its Value.
"""
from __future__ import annotations

from collections import ChainMap

import numpy as np

from ..primitive import OpDef, attrs_dict
from . import ir


class InterpretError(AssertionError):
    pass


def interpret(g: ir.Graph, args: list, params: dict | None = None) -> list:
    if len(args) != len(g.inputs):
        raise InterpretError(f"{g.name}: takes {len(g.inputs)} inputs, got {len(args)}")
    env: ChainMap = ChainMap()
    for v, a in zip(g.inputs, args):
        env[v.id] = _check(np.asarray(a), v, f"{g.name} input")
    for v, p in g.params:
        a = params[p.name] if params is not None and p.name in params else p.asnumpy()
        env[v.id] = _check(np.asarray(a), v, f"param {p.name!r}")
    return [np.array(a, copy=True) for a in _run(g, env)]


def _check(a: np.ndarray, v: ir.Value, what: str) -> np.ndarray:
    if a.shape != v.shape or a.dtype != v.dtype.np:
        raise InterpretError(f"{what}: got {a.dtype}{list(a.shape)} but {v} is {v.type_str()}")
    return a


def _run(g: ir.Graph, env: ChainMap) -> list:
    for n in g.nodes:
        ins = [env[v.id] for v in n.inputs]
        if isinstance(n.op, OpDef):
            with np.errstate(all="ignore"):
                r = n.op.ref(*ins, **attrs_dict(n.attrs))
            outs = list(r) if isinstance(r, (tuple, list)) else [r]
        elif n.op == ir.CONST:
            outs = [n.attr("value")]
        elif n.op == ir.IF:
            sg = n.subgraphs[0] if _truth(ins[0], n) else n.subgraphs[1]
            outs = _run(sg, env.new_child())
        elif n.op == ir.WHILE:
            outs = _loop(n, ins, env)
        elif n.op == ir.PRINT:
            _print(n, ins)
            outs = []
        elif n.op == ir.ASSIGN:
            outs = ins[:len(n.outputs)]
        else:
            raise InterpretError(f"{g.name}: unknown node kind {n.op!r}")
        if len(outs) != len(n.outputs):
            raise InterpretError(f"{g.name}: {n.name} gave {len(outs)} results for "
                                 f"{len(n.outputs)} outputs")
        for v, a in zip(n.outputs, outs):
            env[v.id] = _check(np.asarray(a), v, f"{g.name}: {n.name}")
    return [env[v.id] for v in g.outputs]


def _truth(a: np.ndarray, n: ir.Node) -> bool:
    a = np.asarray(a)
    if a.size != 1:
        raise InterpretError(f"{n.name}: cond must be a scalar, got shape {a.shape}")
    return bool(a.reshape(()))


def _call(sg: ir.Graph, args: list, env: ChainMap) -> list:
    inner = env.new_child()
    for v, a in zip(sg.inputs, args):
        inner[v.id] = a
    return _run(sg, inner)


def _loop(n: ir.Node, carried: list, env: ChainMap) -> list:
    cond, body = n.subgraphs
    while _truth(_call(cond, carried, env)[0], n):
        carried = _call(body, carried, env)
    return carried


def _print(n: ir.Node, ins: list) -> None:
    from ..tensor import format_printed as _fmt
    sep = n.attr("sep", " ")
    print(sep.join(p[1] if p[0] == "s" else _fmt(ins[p[1]]) for p in n.attr("parts", ())),
          end=n.attr("end", "\n"), file=n.attr("file"))
