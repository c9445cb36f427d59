"""Graphviz DOT text for a graph (save_graphs writes it beside the IR text): one box per node
labelled with op, output type and source line; edges follow the values; subgraphs of If/While are
drawn as clusters; a fused node's box lists its members and the reduction it ends with, if any."""
from __future__ import annotations

from . import ir


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_dot(g: ir.Graph) -> str:
    lines = [f'digraph "{_esc(g.name)}" {{', "  node [shape=box, fontname=monospace, fontsize=10];"]
    producer: dict = {}
    counter = [0]

    def node_id():
        counter[0] += 1
        return f"n{counter[0]}"

    def emit(h: ir.Graph, indent: str):
        for v in h.inputs:
            nid = node_id()
            producer[v.id] = nid
            lines.append(f'{indent}{nid} [label="input {v}\\n{v.type_str()}", shape=ellipse];')
        for v, p in h.params:
            nid = node_id()
            producer[v.id] = nid
            lines.append(f'{indent}{nid} [label="param {_esc(p.name)}\\n{v.type_str()}", '
                         f'shape=ellipse, style=filled, fillcolor="#eef"];')
        for n in h.nodes:
            nid = node_id()
            label = n.name
            if n.op == ir.FUSED:
                label = "fused\n" + "\n".join(n.attr("members"))     # _esc makes \n DOT's
                if n.attr("reduce") is not None:
                    label += f"\n-> {n.attr('reduce')}"
            elif n.op == ir.CONST:
                label = "const"
            types = ", ".join(v.type_str() for v in n.outputs)
            loc = f"\\n{_esc(n.loc.short())}" if n.loc else ""
            style = ', style=filled, fillcolor="#ffe9c7"' if n.op == ir.FUSED else ""
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
