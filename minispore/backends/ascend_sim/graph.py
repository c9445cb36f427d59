"""Graph mode on the simulated Ascend: the format-assignment pass and the device program.

Format assignment (a backend pass, after the generic passes): Cube ops (float matmul) read and
write FRACTAL_NZ; an elementwise node (or fused group) whose same-shape operand is already NZ
runs on the NZ bytes too (its other operands are same-shape values, converted, or scalars), so a
chain Cube -> elementwise -> Cube keeps its data in NZ. Every other consumer reads ND. A TransData
node is inserted once per (value, format) where a producer and a consumer disagree, so PyNative's
three TransData per matmul shrink to the conversions the graph really needs. Values read by
If/While subgraphs and graph outputs are produced in ND (a matmul producing one re-lays its
result itself).

`AscendProgram` runs the format-assigned graph with the device's kernels: kernel by kernel, each
launched by the host (jit_level O0/O1, MindSpore's KBK), or sunk (O2): one host launch and a
model-execute head per run, then only the device's per-task dispatch. Buffers are freed after
their last use (the memory plan), so the pool reuses them within a run.
"""
from __future__ import annotations

from pathlib import Path

from ...core import context
from ...core import dtype as dt
from ...core.errors import DTypeError
from ...core.graph import ir
from ...core.graph.ir import free_values
from ...core.graph.execute import Program
from ...core.primitive import ELEMENTWISE, Meta, OpDef, attrs_dict
from ...core.shape import size_of
from . import kernels
from .formats import nz_shape
from .runtime import KBK, SINK

TRANSDATA = "TransData"


def _is_cube(n: ir.Node) -> bool:
    return (isinstance(n.op, OpDef) and n.op.name == "matmul"
            and all(v.dtype.is_float for v in n.inputs + n.outputs))


def _nz_capable(n: ir.Node) -> bool:
    """Elementwise work that can run on FRACTAL_NZ bytes: every operand has the output's shape
    or is a scalar."""
    ew = (isinstance(n.op, OpDef) and n.op.kind == ELEMENTWISE and n.op.scalar is not None) or \
        (n.op == ir.FUSED and n.attr("reduce") is None)
    if not ew or len(n.outputs) != 1 or len(n.outputs[0].shape) < 2:
        return False
    out = n.outputs[0].shape
    return all(v.shape == out or size_of(v.shape) == 1 for v in n.inputs)


def assign_formats(g: ir.Graph, nz: set) -> ir.Graph:
    """g with TransData nodes where formats disagree; `nz` collects the ids of NZ values."""
    must_nd = {v.id for v in g.outputs}
    for n in g.nodes:
        for sg in n.subgraphs:
            must_nd.update(v.id for v in free_values(sg))
    nodes: list = []
    converted: dict = {}

    def as_fmt(v: ir.Value, want: str, loc) -> ir.Value:
        if ("NZ" if v.id in nz else "ND") == want:
            return v
        key = (v.id, want)
        if key not in converted:
            nv = ir.Value(v.shape, v.dtype)
            nodes.append(ir.Node(TRANSDATA, [v], (("dst", want),), [nv], loc))
            if want == "NZ":
                nz.add(nv.id)
            converted[key] = nv
        return converted[key]

    for n in g.nodes:
        subs = tuple(assign_formats(sg, nz) for sg in n.subgraphs)
        out = n.outputs[0] if len(n.outputs) == 1 else None
        if _is_cube(n):
            ins = [as_fmt(v, "NZ", n.loc) for v in n.inputs]
            if out.id not in must_nd:
                nz.add(out.id)
        elif _nz_capable(n) and out.id not in must_nd and any(
                v.id in nz and v.shape == out.shape for v in n.inputs):
            ins = [as_fmt(v, "NZ" if v.shape == out.shape else "ND", n.loc) for v in n.inputs]
            nz.add(out.id)
        else:
            ins = [as_fmt(v, "ND", n.loc) for v in n.inputs]
        nodes.append(ir.Node(n.op, ins, n.attrs, n.outputs, n.loc, subs))
    return ir.Graph(g.name, g.inputs, g.params, nodes, g.outputs)


def check_float64(g: ir.Graph) -> None:
    """The device has no float64: name the first graph input or node (with its source line)
    that holds one, before anything runs."""
    for i, v in enumerate(g.inputs):
        if v.dtype is dt.float64:
            raise DTypeError(f"graph '{g.name}': input {i} is a float64 tensor of shape "
                             f"{v.shape}; float64 is not supported on device_target='Ascend' "
                             f"(simulated). Cast it to float32 or run on device_target='CPU'")
    for v, p in g.params:
        if v.dtype is dt.float64:
            raise DTypeError(f"graph '{g.name}': Parameter {p.name!r} is float64; float64 is not "
                             f"supported on device_target='Ascend' (simulated). Cast it to "
                             f"float32 or run on device_target='CPU'")
    for n in g.all_nodes():
        for v in n.outputs:
            if v.dtype is dt.float64:
                where = f" ({n.loc.short()}: {n.loc.text.strip()})" if n.loc else ""
                raise DTypeError(f"{n.name}{where}: float64 is not supported on "
                                 f"device_target='Ascend' (simulated): the Cube and Vector units "
                                 f"have no float64 path. Cast to float32 or run on "
                                 f"device_target='CPU'")


class AscendProgram(Program):
    def __init__(self, graph: ir.Graph, backend, sink: bool):
        check_float64(graph)
        self.sink = sink
        self.device = backend.device
        self.nz: set = set()
        if backend.format_pass:
            graph = assign_formats(graph, self.nz)
            if context._state["save_graphs"]:
                base = Path(context._state["save_graphs_path"])
                base.mkdir(parents=True, exist_ok=True)
                (base / f"{graph.name}_ascend_formats.ir").write_text(graph.text() + "\n")
        super().__init__(graph, backend)
        self.transdata_nodes = sum(1 for n in graph.all_nodes() if n.op == TRANSDATA)

    def node_kernel(self, n: ir.Node):
        b, dev, nz = self.backend, self.device, self.nz
        if n.op == TRANSDATA:
            return kernels.transdata_kernel(dev, n.inputs[0].meta, n.attr("dst") == "NZ")
        out = n.outputs[0] if n.outputs else None
        if isinstance(n.op, OpDef) and n.op.name == "matmul" and all(v.id in nz
                                                                      for v in n.inputs):
            metas = tuple(v.meta for v in n.inputs)
            kernels.check_dtypes("matmul", metas, out.meta)
            return kernels.graph_matmul(dev, metas, attrs_dict(n.attrs), out.meta, b.cube_dtype,
                                        out.id in nz)
        if out is not None and out.id in nz:
            phys_in = tuple(Meta(nz_shape(v.shape), v.dtype) if v.id in nz else v.meta
                            for v in n.inputs)
            phys_out = Meta(nz_shape(out.shape), out.dtype)
            if n.op == ir.FUSED:
                return kernels.fused(b, n.attr("expr"), tuple(v.meta for v in n.inputs),
                                     out.meta, phys_in, phys_out, "NZ")
            return kernels.elementwise_nz(b, n.op, attrs_dict(n.attrs), phys_in, phys_out)
        return super().node_kernel(n)

    def run(self, args: list):
        dev = self.device
        prev = dev.set_mode(SINK if self.sink else KBK)
        if self.sink and dev.loop_sink:         # a device-side loop: the step's batch is dequeued
            dev.dequeue()
        elif self.sink:
            dev.graph_launch(self.graph.name)
        try:
            return super().run(args)
        finally:
            dev.set_mode(prev)
