"""Graphviz pictures of graphs: the DOT text that save_graphs writes beside the IR text of every
pass, and the rendering of the final graph (the one the backend runs) to SVG and PNG.

`to_dot(g)`: one box per node labelled with op, output type (dtype[shape]) and source line;
edges follow the values; subgraphs of If/While are clusters. A fused group is a cluster too: its
members (the scalar expression the group runs as one loop, with each member's shape and dtype)
inside a box labelled with the group's source line (the line of its last member: the members'
own lines are not kept by fusion) and the reduction it ends with, if any.

`save_final(program)`: with save_graphs on, every program a backend makes (device.py calls it;
the simulated Ascend's program holds the graph after format assignment, TransData included) is
written as `<save_graphs_path>/pictures/<graph>_<n>_final.dot`, and rendered to `.svg` and
`.png` when Graphviz's `dot` is installed; without it the DOT file is all, and a warning says
so once.
"""
from __future__ import annotations

import itertools
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np

from .. import dtype as dt
from . import ir

_COMPARE = ("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not", "isnan")


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _type(shape: tuple, dtype) -> str:
    short = ir._SHORT.get(dtype.name, dtype.name) if dtype is not None else "?"
    return f"{short}[{','.join(map(str, shape))}]"


def _const_label(n: ir.Node) -> str:
    a = np.asarray(n.attr("value"))
    return f"const {a.reshape(-1)[0]:g}" if a.size == 1 and a.dtype.kind in "fiub" else "const"


def to_dot(g: ir.Graph) -> str:
    lines = [f'digraph "{_esc(g.name)}" {{', "  node [shape=box, fontname=monospace, fontsize=10];",
             "  compound=true;"]
    producer: dict = {}
    counter = itertools.count(1)

    def node_id():
        return f"n{next(counter)}"

    def emit(h: ir.Graph, indent: str):
        for v in h.inputs:
            nid = node_id()
            producer[v.id] = nid
            lines.append(f'{indent}{nid} [label="input {v}\\n{v.type_str()}", shape=ellipse];')
        for v, p in h.params:
            nid = node_id()
            producer[v.id] = nid
            lines.append(f'{indent}{nid} [label="param {_esc(p.name)}\\n{v.type_str()}", '
                         f'shape=ellipse, style=filled, fillcolor="#eeeeff"];')
        for n in h.nodes:
            if n.op == ir.FUSED and n.attr("expr") is not None:
                nid = _fused_cluster(n, node_id, producer, lines, indent)
                for v in n.outputs:
                    producer[v.id] = nid
                continue
            nid = node_id()
            label = _const_label(n) if n.op == ir.CONST else n.name
            types = ", ".join(v.type_str() for v in n.outputs)
            loc = f"\\n{_esc(n.loc.short())}" if n.loc else ""
            style = ', style=filled, fillcolor="#e6f0ff"' if n.name == "TransData" else ""
            lines.append(f'{indent}{nid} [label="{_esc(label)}\\n{types}{loc}"{style}];')
            for v in n.inputs:
                if v.id in producer:
                    lines.append(f"{indent}{producer[v.id]} -> {nid};")
            for k, sg in enumerate(n.subgraphs):
                lines.append(f'{indent}subgraph cluster_{nid}_{k} {{ label="{n.name} '
                             f'{("then", "else", "cond", "body")[k + (2 if n.op == ir.WHILE else 0)]}";')
                emit(sg, indent + "  ")
                lines.append(f"{indent}}}")
            for v in n.outputs:
                producer[v.id] = nid
        out = node_id()
        lines.append(f'{indent}{out} [label="return", shape=ellipse];')
        for v in h.outputs:
            if v.id in producer:
                lines.append(f"{indent}{producer[v.id]} -> {out};")
    emit(g, "  ")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _fused_cluster(n: ir.Node, node_id, producer: dict, lines: list, indent: str) -> str:
    """Draw a FUSED node as a cluster of its expression's members; returns the id of the node
    that produces the group's result."""
    red = n.attr("reduce")
    out = n.outputs[0]
    loop_shape = red.shape if red is not None else out.shape
    cid = node_id()
    loc = f"\\n{_esc(n.loc.short())}" if n.loc else ""
    members = "+".join(n.attr("members") or ())
    lines.append(f'{indent}subgraph cluster_{cid} {{')
    lines.append(f'{indent}  label="fused: one loop over {_type(loop_shape, out.dtype)}\\n'
                 f'{_esc(members)}{loc}"; style="rounded,filled"; fillcolor="#fff4e0"; '
                 f'color="#e0a040"; fontname=monospace; fontsize=10;')
    memo: dict = {}
    outside = {v for v in producer.values()}
    cross: list = []              # edges from outside: stated after the cluster, or Graphviz
                                  # would draw their sources inside it

    def visit(e) -> tuple:
        """(graph node id or None for a constant, shape, dtype, constant text)."""
        if id(e) in memo:
            return memo[id(e)]
        if e.op == "arg":
            v = n.inputs[e.args[0]]
            r = (producer.get(v.id), v.shape, v.dtype, None)
        elif e.op == "const":
            r = (None, (), None, repr(e.args[0]))
        else:
            kids = [visit(a) for a in e.args]
            shape = tuple(np.broadcast_shapes(*[k[1] for k in kids])) if kids else ()
            if e.op in _COMPARE:
                dtype = dt.bool_
            else:
                typed = [k[2] for k in kids if k[2] is not None and k[2] is not dt.bool_]
                dtype = typed[0] if typed else out.dtype
            consts = [k[3] for k in kids if k[3] is not None]
            eid = node_id()
            label = e.op + (" " + ", ".join(consts) if consts else "")
            lines.append(f'{indent}  {eid} [label="{_esc(label)}\\n{_type(shape, dtype)}", '
                         f'style="rounded,filled", fillcolor="#ffe9c7"];')
            for k in kids:
                if k[0] is not None:
                    (cross if k[0] in outside else lines).append(f"{indent}  {k[0]} -> {eid};")
            r = (eid, shape, dtype, None)
        memo[id(e)] = r
        return r
    expr = n.attr("expr")
    last = visit(expr)[0]
    if red is not None or expr.op in ("arg", "const"):     # a node of the cluster's own ends it
        rid = node_id()
        label = f"-> {red}" if red is not None else "copy"
        lines.append(f'{indent}  {rid} [label="{_esc(label)}\\n{out.type_str()}", '
                     f'style="rounded,filled", fillcolor="#ffd59e"];')
        if last is not None:
            (cross if last in outside else lines).append(f"{indent}  {last} -> {rid};")
        last = rid
    lines.append(f"{indent}}}")
    lines.extend(cross)
    return last


# -- the final graph ---------------------------------------------------------------------------
_final_ids = itertools.count()
_warned = []


def dot_binary() -> str | None:
    """The path of Graphviz's `dot`, or None when it is not installed."""
    return shutil.which("dot")


def render(dot_path: Path, formats=("svg", "png"), timeout: float = 60.0) -> list[Path]:
    """Render a DOT file beside itself with Graphviz; [] when `dot` is not installed.
    RuntimeError if dot fails on the file."""
    exe = dot_binary()
    if exe is None:
        return []
    out = []
    for fmt in formats:
        target = dot_path.with_suffix("." + fmt)
        r = subprocess.run([exe, f"-T{fmt}", str(dot_path), "-o", str(target)],
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"dot -T{fmt} {dot_path} failed: {r.stderr.strip()}")
        out.append(target)
    return out


def save_final(program, base: str) -> list[Path]:
    """Write the DOT of the graph `program` runs under `base`/pictures and render it (module
    docstring); returns the files written."""
    g = getattr(program, "graph", None)
    if g is None:                       # a program that keeps no graph: nothing to draw
        return []
    folder = Path(base) / "pictures"
    folder.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in g.name)
    path = folder / f"{safe}_{next(_final_ids)}_final.dot"
    path.write_text(to_dot(g))
    if dot_binary() is None:
        if not _warned:
            _warned.append(True)
            warnings.warn("save_graphs: Graphviz's `dot` is not installed, so the final graphs "
                          f"are written as DOT only ({folder}); install graphviz (e.g. apt-get "
                          "install graphviz) to get SVG and PNG pictures", RuntimeWarning,
                          stacklevel=2)
        return [path]
    try:
        return [path] + render(path)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        warnings.warn(f"save_graphs: could not render {path}: {e}", RuntimeWarning,
                      stacklevel=2)
        return [path]
