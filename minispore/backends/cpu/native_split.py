"""The native program's kernels: one LLVM function per distinct node computation, compiled once.

A NativeProgram (native_sink.py) is a small *glue* function, `graph`, that computes each node's
buffer addresses and calls the node's kernel, plus one kernel function per distinct node
computation. A kernel is `i32 k_<hash>(i8** args)`: args holds one address per input and output
position of the node, then its scratch (the arena at the node's scratch offset) and the error
word. It is the node's usual lowering (native_graph.lower_node) emitted into a module of its
own over a *twin* of the node (fresh values of the same shapes and dtypes, one per position), so
its IR text depends only on the computation: op, attributes, shapes, dtypes and the 0-d
constants the lowering folds into the code. ResNet-50's ~2,000 nodes are ~150 such texts.

Each distinct text is optimised by LLVM on its own (O3, a few ms to a few hundred ms: LLVM's
time grows faster than linearly with a function's size, so many small modules cost far less
than one big one), cached on disk by its text (native_jit.py), and shared by every node, every
graph and every process that needs it: a new model links the kernels it has seen before. The
glue is compiled at a low optimisation level (it only computes addresses and calls).

Not split (lowered in the glue, as one function): CONST/ASSIGN (nothing to emit), reshape-like
aliases (nothing, or a copy), tensor If/While (their bodies' nodes are split in turn), Print and
host callbacks (they call back into Python through the glue's table).

A kernel's run-time index checks return its own error codes 1..k; the glue adds the node's base
so that the program's `errors` list (one IndexCheck per code, native_sink.NativeProgram._check)
holds every node's checks in order. The kernel of a node whose text was seen already is not
compiled again, but the node is still lowered (its checks name its own source line).
"""
from __future__ import annotations

import hashlib

from llvmlite import ir as L

from ...core.graph import ir
from ...core.primitive import OpDef
from .native_emit import I8, I32, Emitter, const
from .native_lower import ALIASES

PP = I8.as_pointer().as_pointer()
KERNEL_TYPE = L.FunctionType(I32, [PP])


def splits(n: ir.Node) -> bool:
    """Whether node n runs as a kernel of its own (see the module docstring for what does not)."""
    from .native_graph import is_host_call
    if n.op == ir.FUSED:
        return True
    return isinstance(n.op, OpDef) and n.op.name not in ALIASES and not is_host_call(n)


class Kernel:
    """One distinct kernel: its function name, its module's IR text and its error sites' count."""
    __slots__ = ("name", "text", "n_errors")

    def __init__(self, name: str, text: str, n_errors: int):
        self.name, self.text, self.n_errors = name, text, n_errors


def _twin(n: ir.Node) -> ir.Node:
    """n over fresh values, so that the kernel names nothing of the graph; a value read at two
    positions stays one value (a lowering may see it: x @ x.T is a syrk)."""
    fresh: dict = {}

    def twin(v):
        if v.id not in fresh:
            fresh[v.id] = ir.Value(v.shape, v.dtype)
        return fresh[v.id]
    return ir.Node(n.op, [twin(v) for v in n.inputs], n.attrs, [twin(v) for v in n.outputs],
                   n.loc, n.subgraphs)


def lower_kernel(n: ir.Node, scalars: dict, triple: str):
    """(Kernel, its error sites): node n lowered alone into a module of its own. `scalars` maps
    the ids of n's 0-d constant inputs to their values (folded into the code, as in one
    function)."""
    from .native_graph import lower_node
    twin = _twin(n)
    module = L.Module(name="kernel")
    module.triple = triple
    fn = L.Function(module, KERNEL_TYPE, "kernel")
    fn.args[0].add_attribute("noalias")
    vals = twin.inputs + twin.outputs
    slots: dict = {}
    for k, v in enumerate(vals):
        slots.setdefault(v.id, k)
    slots["arena"], slots["error"] = len(vals), len(vals) + 1
    folded = {t.id: scalars[v.id] for v, t in zip(n.inputs, twin.inputs) if v.id in scalars}
    e = Emitter(None, module, fn, slots, {twin: 0}, {}, scalars=folded)
    lower_node(e, twin)
    e.finish()
    text = str(module)
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    name = f"k_{digest}"
    text = text.replace('@"kernel"(', f'@"{name}"(', 1)
    return Kernel(name, text, len(e.errors)), e.errors


class KernelTable:
    """The distinct kernels of one program, in first-use order, and the glue's calls to them."""

    def __init__(self, triple: str):
        self.triple = triple
        self.kernels: dict = {}            # name -> Kernel
        self.calls = 0

    def emit_call(self, e: Emitter, n: ir.Node):
        """In the glue emitter e: fill an argument array with n's addresses and call n's kernel;
        a nonzero result returns the node's error code from the glue."""
        kernel, sites = lower_kernel(n, {v.id: e.scalars[v.id] for v in n.inputs
                                         if v.id in e.scalars}, self.triple)
        kernel = self.kernels.setdefault(kernel.name, kernel)
        self.calls += 1
        m, b = e.m, e.b
        fn = m.globals.get(kernel.name) or L.Function(m, KERNEL_TYPE, kernel.name)
        vals = list(n.inputs) + list(n.outputs)
        args = e.alloca(L.ArrayType(I8.as_pointer(), len(vals) + 2))
        ptrs = [b.bitcast(e.ptr(v), I8.as_pointer()) for v in vals]
        ptrs.append(e.scratch(n, I8) if n in e.offsets else L.Constant(I8.as_pointer(), None))
        ptrs.append(e.error_word_i8())
        for k, p in enumerate(ptrs):
            b.store(p, b.gep(args, [const(0, I32), const(k, I32)]))
        rc = b.call(fn, [b.bitcast(args, PP)])
        if kernel.n_errors:
            e.forward_errors(rc, sites)
