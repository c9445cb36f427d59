"""The O0 executor: runs an optimized graph node by node with the backend's eager kernels (so
results are bit-identical to PyNative), with If/While as host control flow. Values live in a
slot list indexed by a per-graph numbering made once at compile time; the memory plan
(memplan.py) drops each intermediate right after its last use."""
from __future__ import annotations

import threading

import numpy as np

from ..device import hooks, register_default_program
from ..index_check import CHECKED_OPS, located
from ..primitive import Meta, OpDef, attrs_dict
from ..tensor import format_printed as _fmt  # noqa: F401  (the backends' printers use it)
from . import ir


class BuildAbandoned(Exception):
    """A Program stopped being made because its caller no longer needs it (see BUILD_STOP)."""


# BUILD_STOP.check, set on a thread that makes a Program nobody may need by the time it is
# done (tiered.py's O1 program racing the native sink): called between nodes, a true result
# abandons the build (BuildAbandoned) instead of compiling the remaining kernels
BUILD_STOP = threading.local()


class Program:
    def __init__(self, graph: ir.Graph, backend):
        self.graph = graph
        self.backend = backend
        self.slots: dict[int, int] = {}
        self._number(graph)
        self.n_slots = len(self.slots)
        from .memplan import plan
        self.memory = plan(graph)
        self.steps = self._compile(graph)
        self.in_slots = [self.slots[v.id] for v in graph.inputs]
        self.param_slots = [(self.slots[v.id], p) for v, p in graph.params]
        self.out_slots = [self.slots[v.id] for v in graph.outputs]
        self.kernel_launches = sum(1 for n in graph.all_nodes()
                                   if isinstance(n.op, OpDef) or n.op == ir.FUSED)

    def _number(self, g: ir.Graph):
        for v in list(g.inputs) + [v for v, _ in g.params]:
            self.slots.setdefault(v.id, len(self.slots))
        for n in g.nodes:
            for sg in n.subgraphs:
                self._number(sg)
            for v in n.outputs:
                self.slots.setdefault(v.id, len(self.slots))

    def _compile(self, g: ir.Graph) -> list:
        from .memplan import plan
        free_after = plan(g).free_after if g is not self.graph else self.memory.free_after
        steps = []
        stop = getattr(BUILD_STOP, "check", None)
        for i, n in enumerate(g.nodes):
            if stop is not None and stop():
                raise BuildAbandoned(f"program of {self.graph.name!r}")
            ins = [self.slots[v.id] for v in n.inputs]
            outs = [self.slots[v.id] for v in n.outputs]
            if n.op == ir.CONST:
                steps.append(("c", self.backend.to_device(n.attr("value")), outs))
            elif n.op == ir.IF:
                then, other = (self._sub(sg) for sg in n.subgraphs)
                steps.append(("if", ins[0], then, other, outs))
            elif n.op == ir.WHILE:
                cond, body = (self._sub(sg) for sg in n.subgraphs)
                steps.append(("while", ins, cond, body, outs))
            elif n.op == ir.PRINT:
                steps.append(("print", ins, n.attr("parts"), n.attr("sep"),
                              n.attr("end", "\n"), n.attr("file")))
            elif n.op == ir.ASSIGN:
                steps.append(("assign", ins[0], n.attr("param")))
            else:
                multi = len(n.outputs) > 1 or (isinstance(n.op, OpDef) and not isinstance(
                    n.op.infer(*n.inputs, **attrs_dict(n.attrs)), Meta))
                # a running Profiler wraps the node's kernel (device.py, Note [Profiling hook])
                k = self.node_kernel(n) if hooks.active is None else hooks.node_kernel(self, n)
                if isinstance(n.op, OpDef) and n.op.name in CHECKED_OPS:
                    k = located(k, n.loc)          # an index out of range names the user's line
                steps.append(("k", k, ins, outs, multi))
            if i in free_after:
                steps.append(("free", [self.slots[v.id] for v in free_after[i]]))
        return steps

    def node_kernel(self, n: ir.Node):
        """The launchable kernel of a primitive or fused node (a backend's Program subclass
        lowers its own node kinds here, e.g. the simulated Ascend's TransData)."""
        if isinstance(n.op, OpDef):
            metas = tuple(Meta(v.shape, v.dtype) for v in n.inputs)
            kw = attrs_dict(n.attrs)
            return self.backend.kernel(n.op, metas, kw, n.op.infer(*metas, **kw))
        if n.op == ir.FUSED:
            return self._fused(n)
        raise NotImplementedError(f"O0 executor: node kind {n.name}")

    def _fused(self, n: ir.Node):
        """The kernel of a FUSED node. A backend without fused reductions (no
        `fuses_reductions`) runs a reduction-ending group as its fused elementwise kernel, then
        the reduction primitive's kernel."""
        metas = tuple(Meta(v.shape, v.dtype) for v in n.inputs)
        expr, out, red = n.attr("expr"), n.outputs[0].meta, n.attr("reduce")
        if red is None:
            return self.backend.fused_kernel(expr, metas, out)
        if getattr(self.backend, "fuses_reductions", False):
            return self.backend.fused_kernel(expr, metas, out, reduce=red)
        from ..primitive import REGISTRY
        value = Meta(red.shape, out.dtype)
        ew = self.backend.fused_kernel(expr, metas, value)
        rk = self.backend.kernel(REGISTRY[red.kind], (value,),
                                 {"axis": red.axes, "keep_dims": red.keep_dims}, out)
        return lambda *bufs: rk(ew(*bufs))

    def _sub(self, g: ir.Graph):
        return ([self.slots[v.id] for v in g.inputs], self._compile(g),
                [self.slots[v.id] for v in g.outputs])

    def run(self, args: list) -> tuple[list, list]:
        """Run with input buffers `args`; returns (output buffers, [(Parameter, new buffer)])."""
        env, assigns = self._env(args), []
        self._run(self.steps, env, assigns)
        return [env[s] for s in self.out_slots], assigns

    def _env(self, args: list) -> list:
        """The slot table of one run: the input buffers and the Parameters' current buffers."""
        env = [None] * self.n_slots
        for s, a in zip(self.in_slots, args):
            env[s] = a
        for s, p in self.param_slots:
            env[s] = p._buf
        return env

    def _run(self, steps, env, assigns):
        for st in steps:
            kind = st[0]
            if kind == "k":
                _, kernel, ins, outs, multi = st
                r = kernel(*[env[i] for i in ins])
                if multi:
                    for o, b in zip(outs, r):
                        env[o] = b
                else:
                    env[outs[0]] = r
            elif kind == "c":
                env[st[2][0]] = st[1]
            elif kind == "if":
                _, c, then, other, outs = st
                _, sub, res = then if bool(np.asarray(env[c])) else other
                self._run(sub, env, assigns)
                vals = [env[r] for r in res]
                for o, v in zip(outs, vals):
                    env[o] = v
            elif kind == "while":
                _, ins, (c_in, c_steps, c_out), (b_in, b_steps, b_out), outs = st
                carried = [env[i] for i in ins]
                while True:
                    for s, v in zip(c_in, carried):
                        env[s] = v
                    self._run(c_steps, env, assigns)
                    if not bool(np.asarray(env[c_out[0]])):
                        break
                    for s, v in zip(b_in, carried):
                        env[s] = v
                    self._run(b_steps, env, assigns)
                    carried = [env[r] for r in b_out]
                for o, v in zip(outs, carried):
                    env[o] = v
            elif kind == "print":
                _, ins, parts, sep, end, file = st
                print(sep.join(p[1] if p[0] == "s" else _fmt(env[ins[p[1]]]) for p in parts),
                      end=end, file=file)
            elif kind == "assign":
                assigns.append((st[2], env[st[1]]))
            elif kind == "free":
                for s in st[1]:
                    env[s] = None


register_default_program(Program)
