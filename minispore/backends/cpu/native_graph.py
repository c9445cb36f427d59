"""The native sink's graph walk: `check` rejects a graph with a node no lowering takes before
anything is emitted (NativeUnsupported names it), `scratch_bytes` is the arena a node needs
while it runs, and `lower_node` emits a node: CONST/ASSIGN (nothing to do), tensor If/While
(branches and loops in place), Print (a call back into Python), FUSED nodes (native_lower's
elementwise loops or native_reduce's fused reductions) and every other op through the lowering
registry (native_registry.py), which the family modules imported here fill. A half node of an
op in HALF_AS_FLOAT32 is lowered as its float32 twin (_half_as_float32), as its eager kernel
computes it.
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core.graph import ir
from ...core.graph.memplan import aligned
from ...core.primitive import OpDef, attrs_dict
from ...core.shape import size_of
from . import (native_index, native_lower, native_matmul, native_norms, native_pool,
               native_sorting,
               native_random, native_reduce, native_rows, native_windows)
from .native_emit import I8, I32, Emitter, NativeUnsupported, const, storage
from .native_half import HALF
from .native_registry import HALF_AS_FLOAT32, LOWER, SCRATCH

# the modules whose @lowering registrations fill LOWER and SCRATCH
FAMILIES = (native_lower, native_reduce, native_matmul, native_rows, native_windows, native_pool,
            native_norms, native_random, native_index, native_sorting)


def check(g: ir.Graph, nested: bool = False):
    """NativeUnsupported naming the first node (or dtype) without a lowering."""
    for n in g.nodes:
        for v in n.inputs + n.outputs:
            try:
                storage(v.dtype)
            except NativeUnsupported as e:
                raise NativeUnsupported(f"node '{n.name}': {e}") from None
        if n.op == ir.CONST or (n.op == ir.ASSIGN and not nested):
            continue
        if n.op in (ir.IF, ir.WHILE):
            for sg in n.subgraphs:
                check(sg, nested=True)
            continue
        if n.op == ir.FUSED:
            continue
        if is_host_call(n):
            continue
        if n.op == ir.PRINT:
            if n.attr("file") is not None:
                raise NativeUnsupported(f"node '{n.name}': print(file=...) (the native program "
                                        f"prints to stdout only)")
            continue
        if isinstance(n.op, OpDef) and (n.op.name in LOWER or (
                n.op.kind == "elementwise" and n.op.scalar is not None)):
            continue
        raise NativeUnsupported(f"node '{n.name}'" + (" inside control flow" if nested else "")
                                + " has no native lowering")


def scratch_bytes(n: ir.Node) -> int | None:
    """Bytes of arena a node needs while it runs (None: no scratch): a While's copies of its
    next state, a fused reduction's float64 accumulators, or what SCRATCH[op name](node) says
    (reductions' accumulators, the window ops' column matrices, ...)."""
    if n.op == ir.WHILE:
        return sum(_padded(v) for v in n.outputs)
    if _is_half_as_float32(n):
        twin, _, _ = _float32_twin(n)
        inner = scratch_bytes(twin) or 0
        return sum(_f32_bytes(v) for v in n.inputs + n.outputs if v.dtype in HALF) + inner
    if isinstance(n.op, OpDef) and n.op.name in SCRATCH:
        return SCRATCH[n.op.name](n)
    if n.op == ir.FUSED and n.attr("reduce") is not None:
        return native_reduce.fused_scratch(n)
    return None


def _padded(v: ir.Value) -> int:
    return aligned(max(size_of(v.shape) * v.dtype.itemsize, 1))


def _graph_body(e: Emitter, g: ir.Graph):
    for m in g.nodes:
        lower_node(e, m)


def _truth_of(e: Emitter, v: ir.Value):
    x = e.load(v, const(0))
    if v.dtype in HALF:
        x = e.convert(x, v.dtype, dt.float32)
    return e.b.icmp_unsigned("!=", x, const(0, I8)) if v.dtype is dt.bool_ else e.truth(x)


def _if(e: Emitter, n: ir.Node):
    """Both branches in place; each copies its results into the If's outputs."""
    then, other = n.subgraphs
    with e.b.if_else(_truth_of(e, n.inputs[0])) as (on_then, on_else):
        for sg, arm in ((then, on_then), (other, on_else)):
            with arm:
                _graph_body(e, sg)
                for src, dst in zip(sg.outputs, n.outputs):
                    e.copy(src, dst)


def _while(e: Emitter, n: ir.Node):
    """The While's outputs hold the carried state (cond and body read them, see NativeProgram's
    aliases): initial values copied in; each iteration runs cond, then body, copies body's
    results to scratch and from there into the state (a result may be another slot's state)."""
    cond, body = n.subgraphs
    b = e.b
    for src, dst in zip(n.inputs, n.outputs):
        e.copy(src, dst)
    temps, off = [], 0
    for v in n.outputs:
        temps.append((v, off))
        off += _padded(v)
    base = e.scratch(n, I8) if n.outputs else None
    head, loop_body, done = (b.append_basic_block(s) for s in ("while", "wbody", "wdone"))
    b.branch(head)
    b.position_at_end(head)
    _graph_body(e, cond)
    b.cbranch(_truth_of(e, cond.outputs[0]), loop_body, done)
    b.position_at_end(loop_body)
    _graph_body(e, body)
    tmp_ptrs = [b.bitcast(b.gep(base, [const(o)]), storage(v.dtype).as_pointer())
                for v, o in temps]
    for src, (v, _), p in zip(body.outputs, temps, tmp_ptrs):
        e.copy(src, v, dst_ptr=p)
    for (v, _), p in zip(temps, tmp_ptrs):
        e.copy(v, v, src_ptr=p)
    b.branch(head)
    b.position_at_end(done)


def splits(n: ir.Node) -> bool:
    """Whether node n runs as a kernel of its own in a program's glue (native_split.py says
    what does not)."""
    if n.op == ir.FUSED:
        return True
    return isinstance(n.op, OpDef) and not is_host_call(n)


def is_host_call(n: ir.Node) -> bool:
    """A node whose op runs a Python function on the host (ops.Custom pyfunc)."""
    return isinstance(n.op, OpDef) and getattr(n.op, "host_kernel", None) is not None


def _host_call(e: Emitter, n: ir.Node):
    """A host-callback node: the program calls native_sink.host_caller's callback (its address
    in the buffer table, as Print's) with the addresses of the inputs then the outputs; a
    nonzero result returns the node's error code (the program raises what the function raised)."""
    site = getattr(e, "host_sites", {}).get(n)
    if site is None:
        raise NativeUnsupported(f"'{n.op.name}' (a host callback) outside a NativeProgram")
    b = e.b
    fn = b.bitcast(e.slot_value(("host", n)),
                   L.FunctionType(I32, [I8.as_pointer().as_pointer()]).as_pointer())
    vals = list(n.inputs) + list(n.outputs)
    ptrs = e.alloca(L.ArrayType(I8.as_pointer(), max(len(vals), 1)))
    for k, v in enumerate(vals):
        b.store(b.bitcast(e.ptr(v), I8.as_pointer()), b.gep(ptrs, [const(0, I32), const(k, I32)]))
    rc = b.call(fn, [b.bitcast(ptrs, I8.as_pointer().as_pointer())])
    e.fail_index(b.icmp_signed("!=", rc, const(0, I32)), site, const(0))


def _print(e: Emitter, n: ir.Node):
    """A Print node: the program calls back into Python (native_sink.printer, whose address is in
    the buffer table, so the IR and its disk cache stay the same in every process) with the
    addresses of the printed values; the callback prints the same text as O0."""
    b = e.b
    fn = b.bitcast(e.slot_value(("print", n)),
                   L.FunctionType(L.VoidType(), [I8.as_pointer().as_pointer()]).as_pointer())
    ptrs = e.alloca(L.ArrayType(I8.as_pointer(), max(len(n.inputs), 1)))
    for k, v in enumerate(n.inputs):
        b.store(b.bitcast(e.ptr(v), I8.as_pointer()), b.gep(ptrs, [const(0, I32), const(k, I32)]))
    b.call(fn, [b.bitcast(ptrs, I8.as_pointer().as_pointer())])


def lower_node(e: Emitter, n: ir.Node):
    """Emit node n at the builder's position: a call of its kernel in a program's glue
    (native_split.py), else its code in place."""
    if n.op in (ir.CONST, ir.ASSIGN):
        return
    if isinstance(n.op, OpDef) and n.op.name in native_lower.ALIASES and \
            n.outputs[0].id in e.alias:
        return                                    # shares its input's storage
    if isinstance(n.op, OpDef) and all(size_of(v.shape) == 0 for v in n.inputs + n.outputs):
        return                                    # reads and writes no element
    if e.kernels is not None and splits(n):
        return e.kernels.emit_call(e, n)
    if n.op == ir.IF:
        return _if(e, n)
    if n.op == ir.WHILE:
        return _while(e, n)
    if n.op == ir.PRINT:
        return _print(e, n)
    if is_host_call(n):
        return _host_call(e, n)
    if n.op == ir.FUSED:
        red = n.attr("reduce")
        if red is not None:
            return native_reduce.fused_reduce(e, n, red)
        return native_lower.elementwise(e, n, n.attr("expr"))
    if _is_half_as_float32(n):
        return _half_as_float32(e, n)
    lower = LOWER.get(n.op.name)
    if lower is None:
        return native_lower.op_elementwise(e, n, attrs_dict(n.attrs))
    lower(e, n, attrs_dict(n.attrs))


def _is_half_as_float32(n: ir.Node) -> bool:
    return isinstance(n.op, OpDef) and n.op.name in HALF_AS_FLOAT32 and \
        any(v.dtype in HALF for v in n.inputs + n.outputs)


def _f32_bytes(v: ir.Value) -> int:
    return aligned(max(size_of(v.shape) * 4, 1))


def _float32_twin(n: ir.Node):
    """(the node with a float32 value in place of each half input and output, its new inputs,
    its new outputs); each position gets its own value, so an input read twice is two
    copies, as the eager kernel's two astype calls make."""
    ins = [ir.Value(v.shape, dt.float32) if v.dtype in HALF else v for v in n.inputs]
    outs = [ir.Value(v.shape, dt.float32) if v.dtype in HALF else v for v in n.outputs]
    return ir.Node(n.op, ins, n.attrs, outs, n.loc), ins, outs


def _half_as_float32(e: Emitter, n: ir.Node):
    """A half node as its eager kernel computes it: each half input converted to float32 (in
    the node's scratch), the float32 twin lowered (its own scratch after those copies), each
    half output rounded once from its float32 result."""
    twin, ins, outs = _float32_twin(n)
    off = e.offsets[n]
    for v, t in zip(n.inputs + n.outputs, ins + outs):
        if t is not v:
            e.offsets[t.id] = off
            off += _f32_bytes(t)
    e.offsets[twin] = off
    for v, t in zip(n.inputs, ins):
        if t is not v:
            with e.loop(size_of(v.shape)) as i:
                e.store(e.convert(e.load(v, i), v.dtype, dt.float32), t, i)
    lower_node(e, twin)
    for v, t in zip(n.outputs, outs):
        if t is not v:
            with e.loop(size_of(v.shape)) as i:
                e.store(e.convert(e.load(t, i), dt.float32, v.dtype), v, i)
