"""The graph IR: SSA values with static shape and dtype, nodes that are primitives, constants or
structured control flow holding subgraphs, a readable text printer and `verify()`.

    graph mlp(%0: f32[8,4], %1: f32[4,3]) {
      %2 = matmul(%0, %1)                      : f32[8,3]     # net.py:12
      return (%2)
    }

Subgraphs (If branches, While cond/body) are regions: their nodes may use any value defined
before them in an enclosing graph (lexical scoping, as MLIR regions), plus their own inputs.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import dtype as dt
from ..primitive import Meta, OpDef, attrs_dict
from ..shape import reduced_shape

_ids = itertools.count()

_SHORT = {"Float32": "f32", "Float64": "f64", "Float16": "f16", "BFloat16": "bf16",
          "Int32": "i32", "Int64": "i64", "Int16": "i16", "Int8": "i8", "UInt8": "u8",
          "Bool": "bool"}


class Value:
    """One SSA value: a unique id and its static type."""
    __slots__ = ("id", "shape", "dtype")

    def __init__(self, shape: tuple, dtype: dt.DType):
        self.id = next(_ids)
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def meta(self) -> Meta:
        return Meta(self.shape, self.dtype)

    def type_str(self) -> str:
        return f"{_SHORT.get(self.dtype.name, self.dtype.name)}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        return f"%{self.id}"


@dataclass(frozen=True)
class Loc:
    """Source location of a node: file, line, column and the source line."""
    file: str
    line: int
    col: int = 0
    text: str = ""

    def short(self) -> str:
        return f"{self.file.rsplit('/', 1)[-1]}:{self.line}"

    def caret(self) -> str:
        return f'  File "{self.file}", line {self.line}\n    {self.text.strip()}\n' + \
            "    " + " " * max(0, self.col - (len(self.text) - len(self.text.lstrip()))) + "^"


# node kinds that are not primitives
CONST, IF, WHILE, PRINT, ASSIGN, FUSED = "const", "If", "While", "Print", "Assign", "Fused"
REDUCTION_KINDS = ("sum", "mean", "max", "min")     # plain folds a fused group may end with


@dataclass(frozen=True)
class Reduction:
    """The trailing reduction of a FUSED node: the group's elementwise result, of shape `shape`
    (never materialised), is folded over the sorted non-negative `axes` by `kind` (one of
    REDUCTION_KINDS, with the semantics of the primitive of that name on a float input); the
    node's output has shape reduced_shape(shape, axes, keep_dims) and the elementwise dtype."""
    kind: str
    axes: tuple
    keep_dims: bool
    shape: tuple

    @property
    def out_shape(self) -> tuple:
        return reduced_shape(self.shape, self.axes, self.keep_dims)

    def __str__(self) -> str:
        keep = ", keep_dims" if self.keep_dims else ""
        return f"{self.kind}(axes={self.axes}{keep}) over [{','.join(map(str, self.shape))}]"


@dataclass(eq=False)
class Node:
    """`outputs = op(inputs; attrs)`. op is an OpDef, or CONST/IF/WHILE/PRINT/ASSIGN.

    CONST: attrs (('value', ndarray),). IF: inputs (cond,), a bool scalar; subgraphs (then, else)
    take no inputs (they read enclosing values) and each return len(outputs) values. WHILE: inputs are the initial loop-carried
    values; subgraphs (cond, body) each take the carried values as inputs; cond returns one bool
    scalar, body the next carried values. FUSED: elementwise nodes run as one loop: attrs
    (('expr', scalar expression over arg(i) = inputs[i]), ('members', op names)[, ('reduce',
    Reduction)]): without 'reduce' the output is expr over the inputs broadcast to its shape;
    with it, expr is evaluated over Reduction.shape and folded into the (reduced) output.
    PRINT: attrs (('parts', (('s', text) | ('t', input index), ...)), ('sep', str)). ASSIGN: inputs
    (new value,), attrs {'param': Parameter}: the Parameter takes the value after the call."""
    op: Any
    inputs: list
    attrs: tuple
    outputs: list
    loc: Loc | None = None
    subgraphs: tuple = ()

    @property
    def name(self) -> str:
        return self.op.name if isinstance(self.op, OpDef) else self.op

    def attr(self, key, default=None):
        if self.op == CONST:
            return self.attrs[0][1] if key == "value" else default
        for k, v, *_ in self.attrs:
            if k == key:
                return v
        return default


@dataclass(eq=False)
class Graph:
    name: str
    inputs: list = field(default_factory=list)          # Values: positional arguments
    params: list = field(default_factory=list)          # (Value, Parameter): bound by reference
    nodes: list = field(default_factory=list)
    outputs: list = field(default_factory=list)

    # -- printing -----------------------------------------------------------------------------
    def text(self, indent: str = "") -> str:
        args = ", ".join(f"{v}: {v.type_str()}" for v in self.inputs)
        lines = [f"{indent}graph {self.name}({args}) {{"]
        for v, p in self.params:
            lines.append(f"{indent}  {v} = param {p.name!r}".ljust(48) + f": {v.type_str()}")
        for n in self.nodes:
            lines.extend(_node_text(n, indent + "  "))
        lines.append(f"{indent}  return ({', '.join(map(repr, self.outputs))})")
        lines.append(f"{indent}}}")
        return "\n".join(lines)

    __str__ = text

    def all_nodes(self):
        """Every node, subgraphs included (pre-order)."""
        for n in self.nodes:
            yield n
            for g in n.subgraphs:
                yield from g.all_nodes()


def _node_text(n: Node, indent: str) -> list:
    outs = ", ".join(map(repr, n.outputs))
    if n.op == FUSED:
        members = "+".join(n.attr("members"))
        red = n.attr("reduce")
        desc = f"fused[{members}]({', '.join(map(repr, n.inputs))}" + \
            (f"; reduce={red})" if red is not None else ")")
    elif n.op == CONST:
        v = n.attr("value")
        desc = f"const {np.array2string(v, threshold=6, separator=',')}".replace("\n", "") \
            if v.size <= 6 else f"const <{v.size} elements>"
    else:
        a = ", ".join(f"{k}={v!r}" for k, v, *_ in n.attrs if k != "param") if n.op != PRINT \
            else ""
        if n.op == ASSIGN:
            a = f"param={n.attr('param').name!r}"
        args = ", ".join(map(repr, n.inputs))
        desc = f"{n.name}({args}{'; ' + a if a else ''})"
    types = ", ".join(v.type_str() for v in n.outputs)
    head = f"{indent}{outs + ' = ' if outs else ''}{desc}".ljust(48) + (f": {types}" if types
                                                                        else "")
    if n.loc:
        head += f"   # {n.loc.short()}"
    lines = [head]
    for label, g in zip(("then", "else") if n.op == IF else ("cond", "body"), n.subgraphs):
        lines.append(f"{indent}  {label}:")
        lines.append(g.text(indent + "    "))
    return lines


def free_values(g: Graph) -> list:
    """Values a (sub)graph reads that it does not define, in first-use order."""
    defined = {v.id for v in g.inputs}
    out, seen = [], set()

    def use(v):
        if v.id not in defined and v.id not in seen:
            seen.add(v.id)
            out.append(v)
    for n in g.nodes:
        for v in n.inputs:
            use(v)
        for sg in n.subgraphs:
            for v in free_values(sg):
                use(v)
        defined.update(v.id for v in n.outputs)
    for v in g.outputs:
        use(v)
    return out


class VerifyError(AssertionError):
    pass


def _types(vals) -> list:
    return [(v.shape, v.dtype) for v in vals]


def _check_structure(g: Graph, n: Node) -> None:
    """The shape rules of the non-primitive node kinds."""
    where = f"{g.name}: {n.name} node ({n.loc.short() if n.loc else 'no location'})"
    if n.op == CONST:
        v, a = n.outputs[0], n.attr("value")
        if a.shape != v.shape or a.dtype != v.dtype.np:
            raise VerifyError(f"{where}: constant {a.dtype}{a.shape} for value {v.type_str()}")
    elif n.op == IF:
        c = n.inputs[0]
        if len(n.inputs) != 1 or c.shape != () or c.dtype is not dt.bool_:
            raise VerifyError(f"{where}: the condition must be one bool scalar")
        for sg in n.subgraphs:
            if _types(sg.outputs) != _types(n.outputs):
                raise VerifyError(f"{where}: branch {sg.name} returns {_types(sg.outputs)}, the "
                                  f"node outputs {_types(n.outputs)}")
    elif n.op == WHILE:
        cond, body = n.subgraphs
        carried = _types(n.inputs)
        if _types(cond.inputs) != carried or _types(body.inputs) != carried \
                or _types(body.outputs) != carried or _types(n.outputs) != carried:
            raise VerifyError(f"{where}: cond/body inputs, body outputs and node outputs must all "
                              f"have the carried types {carried}")
        if _types(cond.outputs) != [((), dt.bool_)]:
            raise VerifyError(f"{where}: the condition subgraph must return one bool scalar")
    elif n.op in (PRINT, ASSIGN) and n.outputs:
        raise VerifyError(f"{where}: has outputs")
    elif n.op == FUSED:
        _check_fused(n, where)


def _check_fused(n: Node, where: str) -> None:
    """One output; every input broadcasts to the loop shape; a reduction is well formed."""
    if len(n.outputs) != 1 or n.attr("expr") is None:
        raise VerifyError(f"{where}: needs one output and an 'expr' attribute")
    out, red = n.outputs[0], n.attr("reduce")
    loop = out.shape
    if red is not None:
        loop = red.shape
        if red.kind not in REDUCTION_KINDS or not out.dtype.is_float:
            raise VerifyError(f"{where}: reduction {red.kind!r} of {out.dtype} is not fusable")
        if list(red.axes) != sorted(set(red.axes)) or any(not 0 <= a < len(loop)
                                                          for a in red.axes):
            raise VerifyError(f"{where}: reduction axes {red.axes} for rank {len(loop)}")
        if red.out_shape != out.shape:
            raise VerifyError(f"{where}: reduction {red} gives {red.out_shape}, the output is "
                              f"{out.type_str()}")
    for v in n.inputs:
        lead = len(loop) - len(v.shape)
        if lead < 0 or any(d not in (1, loop[lead + k]) for k, d in enumerate(v.shape)):
            raise VerifyError(f"{where}: input {v}: {v.type_str()} does not broadcast to "
                              f"[{','.join(map(str, loop))}]")


def verify(g: Graph, _scope: set | None = None) -> None:
    """Every value is defined once before use, and every primitive's recorded output types equal
    what its `infer` computes now (JAX's check_jaxpr / tinygrad's spec)."""
    defined = set() if _scope is None else set(_scope)
    for v in list(g.inputs) + [v for v, _ in g.params]:
        if v.id in defined:
            raise VerifyError(f"{g.name}: value {v} defined twice")
        defined.add(v.id)
    for n in g.nodes:
        for v in n.inputs:
            if v.id not in defined:
                raise VerifyError(f"{g.name}: {n.name} uses {v} before it is defined")
        _check_structure(g, n)
        if isinstance(n.op, OpDef):
            meta = n.op.infer(*n.inputs, **attrs_dict(n.attrs))
            metas = (meta,) if isinstance(meta, Meta) else tuple(meta)
            got = tuple(Meta(v.shape, v.dtype) for v in n.outputs)
            if metas != got:
                raise VerifyError(f"{g.name}: {n.name} outputs {got} but infer gives {metas}")
        for sg in n.subgraphs:
            verify(sg, defined)
        for v in n.outputs:
            if v.id in defined:
                raise VerifyError(f"{g.name}: value {v} defined twice")
            defined.add(v.id)
    for v in g.outputs:
        if v.id not in defined:
            raise VerifyError(f"{g.name}: output {v} is not defined")
