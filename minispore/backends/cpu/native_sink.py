"""The native CPU sink (jit_level O2): the whole optimized graph as ONE native call.

Emitted with llvmlite.ir, compiled and cached by native_jit.py; numba is not involved. The
program is a glue function that calls one kernel per node, each kernel a function shared by
every node that computes the same thing and compiled once (native_split.py), so a cold compile
costs LLVM's optimisation of the graph's distinct computations and a warm start loads their
object files.

The program is `i32 graph(i8** bufs)`. `bufs` holds, in order, the graph inputs, the Parameters
read, the constants, the external buffers (graph outputs and assigned values, allocated per call
by the caller because they are handed out), and one arena. Every other intermediate lives in the
arena at an offset fixed by the memory plan (memplan.assign_offsets: liveness, first fit), so a
step allocates nothing but what it returns. reshape and stop_gradient alias their input.

Lowerings (the registry of native_registry.py, walked by native_graph.py; all loops over static
shapes): elementwise and fused nodes, reductions, softmax, the sparse cross-entropy, matmul
through the CBLAS routine numpy.matmul picks, conv/pool, batch/layer norm, the random ops and
dropout, data movement and indexing, tensor If/While (branches and loops; a While's outputs hold
its state), and Print (a call back into Python, `printer`, through a callback address in the
table) and host callbacks (ops.Custom pyfunc, `host_caller`, the same way, returning an error
code when the function raised); float16/bfloat16 values as their bits, converted as numpy does
(native_half.py).
`graph` returns 0, or the code of a failed run-time check (an index out of range), which `run`
raises as PyNative's error (self.errors). A graph with any other node (print to a file, a half
prod, ...) raises NativeUnsupported naming it, and the graph runs kernel by kernel (as O1) with a
RuntimeWarning (backends/cpu).
`run_steps` runs N steps over stacked inputs in one call (the data sink), carrying the assigned
Parameters.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np
from llvmlite import ir as L

from ...core.graph import ir
from ...core.graph.memplan import assign_offsets
from ...core.primitive import OpDef
from ...core.shape import size_of
from . import native_jit
from .native_emit import I1, I8, I32, I64, Emitter, NativeUnsupported, const
from .native_graph import check, is_host_call, lower_node, scratch_bytes
from .native_lower import ALIASES
from .native_split import KernelTable, glue_speed, kernel_speed

__all__ = ["NativeProgram", "NativeUnsupported"]


def _address(a: np.ndarray) -> int:
    """The address of a's first byte: through the buffer protocol (0.3 us; ndarray.ctypes.data
    takes 1.9 us, and a step passes ~20 buffers), or ctypes for a read-only or empty array."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.ctypes.data


def printer(n: ir.Node):
    """The ctypes callback a Print node's code calls with the addresses of its inputs: it prints
    what O0 prints (graph/execute.py's _fmt for each tensor, the node's sep and end)."""
    from ...core.graph.execute import _fmt
    metas = [(v.shape, v.dtype.np, size_of(v.shape)) for v in n.inputs]
    parts, sep, end = n.attr("parts"), n.attr("sep"), n.attr("end", "\n")

    def show(ptrs):
        vals = [np.frombuffer((ctypes.c_char * max(size * np.dtype(d).itemsize, 1))
                              .from_address(ptrs[k]), d, count=size).reshape(shape).copy()
                for k, (shape, d, size) in enumerate(metas)]
        print(sep.join(p[1] if p[0] == "s" else _fmt(vals[p[1]]) for p in parts), end=end)
    return ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p))(show)


class HostFailure:
    """The error site of a host-callback node: the exception its callback caught, raised by
    NativeProgram._check when the program returns the node's error code."""

    def __init__(self):
        self.caught: list = []

    def error(self, value):
        exc = self.caught.pop() if self.caught else RuntimeError("a host callback failed")
        self.caught.clear()
        return exc


def host_caller(n: ir.Node, backend, site: HostFailure):
    """The ctypes callback of a host-callback node (ops.Custom pyfunc: an OpDef with
    `host_kernel`): called with the addresses of its inputs then its outputs, it runs the op's
    host kernel on copies of the inputs (views, for a collective) and writes the results into
    the outputs. Returns 0, or
    1 after keeping the exception in `site` (the program then returns the node's error code)."""
    from ...core.primitive import Meta, attrs_dict
    ins = [(v.shape, v.dtype.np, size_of(v.shape)) for v in n.inputs]
    outs = [(v.shape, v.dtype.np, size_of(v.shape)) for v in n.outputs]
    out_meta = tuple(Meta(v.shape, v.dtype) for v in n.outputs)
    if backend is None:
        from ...core.device import get_backend
        backend = get_backend("CPU")
    kernel = backend.kernel(n.op, tuple(Meta(v.shape, v.dtype) for v in n.inputs),
                            attrs_dict(n.attrs), out_meta if len(out_meta) > 1 else out_meta[0])

    def view(address, shape, d, size):
        raw = (ctypes.c_char * max(size * np.dtype(d).itemsize, 1)).from_address(address)
        return np.frombuffer(raw, d, count=size).reshape(shape)

    # a collective reads its inputs during the call and keeps none of them (core/ops/
    # collective.py copies what it sends later): it reads the arena in place; anything else
    # (a pyfunc may keep its arguments) gets copies
    borrow = getattr(n.op, "collective", False)

    def call(ptrs):
        try:
            if borrow:
                res = kernel(*[view(ptrs[k], *m) for k, m in enumerate(ins)])
            else:
                res = kernel(*[view(ptrs[k], *m).copy() for k, m in enumerate(ins)])
            for j, (r, m) in enumerate(zip(res if len(outs) > 1 else (res,), outs)):
                view(ptrs[len(ins) + j], *m)[...] = r
            return 0
        except BaseException as exc:        # noqa: BLE001 - raised again by the program's run
            site.caught.append(exc)
            return 1
    return ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))(call)


class NativeProgram:
    """The O2 program of a graph lowered natively: one call of machine code per run. The arena
    belongs to the program, so concurrent calls (from several Python threads: ctypes releases
    the GIL) are serialised by a lock."""

    def __init__(self, graph: ir.Graph, backend=None):
        check(graph)
        g = graph
        produced = {v.id for n in g.nodes if n.op != ir.CONST for v in n.outputs}
        self.graph = g
        self.in_vals = list(g.inputs)
        self.param_vals = [(v, p) for v, p in g.params]
        self.consts = []
        slots: dict = {}
        k = 0
        for v in self.in_vals:
            slots[v.id] = k
            k += 1
        for v, _ in self.param_vals:
            slots[v.id] = k
            k += 1
        for n in g.all_nodes():
            if n.op == ir.CONST:
                slots[n.outputs[0].id] = k
                self.consts.append(np.array(n.attr("value"), dtype=n.outputs[0].dtype.np,
                                           order="C"))      # 0-d stays 0-d
                k += 1
        self.assigns = [(n.attr("param"), n.inputs[0]) for n in g.nodes if n.op == ir.ASSIGN]
        external = []                                 # node results handed to the caller
        for v in list(g.outputs) + [v for _, v in self.assigns]:
            if v.id in produced and v.id not in slots:
                slots[v.id] = k
                external.append(v)
                k += 1
        self.external = external
        self.n_fixed = len(self.in_vals) + len(self.param_vals)
        # reshape/stop_gradient alias their input unless the result is handed out; a While's
        # cond and body read their carried values from the While's outputs (its state)
        alias: dict = {}
        for n in g.all_nodes():
            if n.op == ir.WHILE:
                for sg in n.subgraphs:
                    for v, state in zip(sg.inputs, n.outputs):
                        alias[v.id] = state
            elif isinstance(n.op, OpDef) and n.op.name in ALIASES and \
                    n.outputs[0].id not in slots:
                src = n.inputs[0]
                alias[n.outputs[0].id] = alias.get(src.id, src)
        offsets, self.arena_bytes = assign_offsets(
            g, fixed=set(slots), alias=alias,
            scratch={n: scratch_bytes(n) for n in g.all_nodes()
                     if scratch_bytes(n) is not None})
        self.offsets, self.alias_of = offsets, {k: r.id for k, r in alias.items()}
        self._printers = []                 # (slot, ctypes callback) of each Print node
        host_sites = {}                     # and of each host-callback node (ops.Custom)
        for n in g.all_nodes():
            if n.op == ir.PRINT:
                slots[("print", n)] = k
                self._printers.append((k, printer(n)))
                k += 1
            elif is_host_call(n):
                slots[("host", n)] = k
                host_sites[n] = HostFailure()
                self._printers.append((k, host_caller(n, backend, host_sites[n])))
                k += 1
        slots["arena"] = k
        self.n_slots = k + 1
        self.slots = slots
        module = L.Module(name=f"minispore_{g.name}")
        module.triple = native_jit.triple()
        fn = L.Function(module, L.FunctionType(I32, [I8.as_pointer().as_pointer()]), "graph")
        fn.args[0].add_attribute("noalias")
        e = Emitter(g, module, fn, slots, offsets, alias)
        e.error_offset = self.error_offset = -(-self.arena_bytes // 8) * 8
        e.host_sites = host_sites
        e.kernels = self.kernels = KernelTable(module.triple, lower_node)
        for n in g.nodes:
            try:
                lower_node(e, n)
            except NativeUnsupported as exc:      # the fallback's warning names the node
                if str(exc).startswith("node '"):
                    raise
                raise NativeUnsupported(f"node '{n.name}': {exc}") from None
        e.finish()
        self.errors = e.errors            # error code k + 1 -> its IndexCheck
        self._carry = self._emit_steps(module, fn)
        glue = str(module)
        kernels = [k.text for k in self.kernels.kernels.values()]
        self.ir_text = "\n".join([glue] + kernels)
        self.lib = native_jit.NativeLibrary(modules=[(glue, glue_speed(g))]
                                            + [(k, kernel_speed(k)) for k in kernels])
        self._fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(self.lib.address("graph"))
        self._steps_fn = None if self._carry is None else ctypes.CFUNCTYPE(
            ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)(self.lib.address("steps"))
        self._table = (ctypes.c_void_p * self.n_slots)()
        self._arena = np.empty(max(self.error_offset + 8, 64) + 64, np.uint8)
        base = self._arena.ctypes.data
        self._table[k] = self._arena_base = base + (-base) % 64            # 64-byte aligned
        for j, c in enumerate(self.consts):
            self._table[self.n_fixed + j] = c.ctypes.data
        for j, cb in self._printers:
            self._table[j] = ctypes.cast(cb, ctypes.c_void_p).value
        self._out_meta = [(v.shape, v.dtype.np) for v in external]
        self._call_lock = threading.Lock()
        self._table_address = ctypes.addressof(self._table)
        self._out_slots = [slots[v.id] for v in g.outputs]
        self._assign_slots = [slots[v.id] for _, v in self.assigns]
        self.kernel_launches = 1
        self.assign_params = [p for p, _ in self.assigns]

    def _emit_steps(self, module: L.Module, graph_fn: L.Function):
        """`void steps(i8** t, i64 n)`: n runs of graph over stacked inputs in one call (the
        data sink). t is graph's table with each input pointing at its first batch, followed by
        a second set of external buffers: run i writes its externals into set i % 2 and reads
        each assigned Parameter from the set run i - 1 wrote (the caller's buffer at i = 0), so
        no run overwrites what it reads. None when a Parameter is assigned a value that is not a
        node result (then run_steps loops over run)."""
        ext_index = {v.id: j for j, v in enumerate(self.external)}
        carry = {}
        for k, (v, p) in enumerate(self.param_vals):
            news = [w for q, w in self.assigns if q is p]
            if news:
                if news[-1].id not in ext_index:
                    return None
                carry[len(self.in_vals) + k] = ext_index[news[-1].id]
        n_slots, n_ext = self.n_slots, len(self.external)
        ext0 = self.n_fixed + len(self.consts)
        PP = I8.as_pointer()
        fn = L.Function(module, L.FunctionType(I32, [PP.as_pointer(), I64]), "steps")
        t, n = fn.args
        e = Emitter(self.graph, module, fn, {}, {}, {})
        b = e.b
        tab = e.alloca(L.ArrayType(PP, n_slots))
        tab0 = b.gep(tab, [const(0), const(0)])

        def src(k):
            return b.load(b.gep(t, [const(k)]))

        def put(k, val):
            b.store(val, b.gep(tab, [const(0), const(k, I32)]))
        for k in range(n_slots):
            put(k, src(k))
        with e.loop(n) as i:
            odd = b.trunc(b.and_(i, const(1)), I1)
            for k, v in enumerate(self.in_vals):
                step = size_of(v.shape) * v.dtype.itemsize
                put(k, b.gep(src(k), [b.mul(i, const(step))]))
            for j in range(n_ext):
                a, c = src(ext0 + j), src(n_slots + j)
                put(ext0 + j, b.select(odd, c, a))
            first = b.icmp_signed("==", i, const(0))
            for k, j in carry.items():        # read what run i - 1 wrote (set (i - 1) % 2)
                prev = b.select(odd, src(ext0 + j), src(n_slots + j))
                put(k, b.select(first, src(k), prev))
            rc = b.call(graph_fn, [tab0])
            fail, ok = b.append_basic_block("fail"), b.append_basic_block("ok")
            b.cbranch(b.icmp_signed("!=", rc, const(0, I32)), fail, ok)
            b.position_at_end(fail)
            b.ret(rc)                              # a failed run stops the steps
            b.position_at_end(ok)
        e.finish()
        return carry

    def run_steps(self, stacked: list):
        """Runs over stacked inputs (each input's batches along a new leading axis) in ONE call
        of `steps`, carrying the assigned Parameters; the last run's outputs and assignments."""
        n = stacked[0].shape[0]
        stacked = [np.ascontiguousarray(a) for a in stacked]
        if self._steps_fn is None or n == 0:
            return self._loop_steps(stacked)
        params = [p._buf for _, p in self.param_vals]
        sets = [[np.empty(s, d) for s, d in self._out_meta] for _ in range(2)]
        t = (ctypes.c_void_p * (self.n_slots + len(self.external)))()
        for k, a in enumerate(stacked):
            t[k] = _address(a)
        for k, a in enumerate(params):
            t[len(stacked) + k] = _address(a)
        for j, c in enumerate(self.consts):
            t[self.n_fixed + j] = _address(c)
        ext0 = self.n_fixed + len(self.consts)
        for j in range(len(self.external)):
            t[ext0 + j] = _address(sets[0][j])
            t[self.n_slots + j] = _address(sets[1][j])
        for j, _ in self._printers:
            t[j] = self._table[j]
        t[self.n_slots - 1] = self._table[self.n_slots - 1]       # the arena
        with self._call_lock:
            self._check(self._steps_fn(ctypes.addressof(t), n))
        outs = sets[(n - 1) % 2]
        last = [a[n - 1] for a in stacked]
        res = [self._value_of(v, last, params, outs) for v in self.graph.outputs]
        news = [(p, self._value_of(v, last, params, outs)) for p, v in self.assigns]
        return res, news

    def _loop_steps(self, stacked: list):
        """run_steps without `steps`: one run per batch, the assigned values carried in Python."""
        override: dict = {}
        res, news = [], []
        for i in range(stacked[0].shape[0]):
            res, news = self.run([a[i] for a in stacked], override)
            override.update((id(p), a) for p, a in news)
        return res, news

    def _check(self, rc: int):
        """Raise what a failed run's error code stands for (an index out of range: its
        IndexCheck's error for the value the check stored at the arena's error word)."""
        if rc:
            value = ctypes.c_int64.from_address(self._arena_base + self.error_offset).value
            raise self.errors[rc - 1].error(value)

    def _value_of(self, v: ir.Value, args, params, outs):
        return (list(args) + list(params) + self.consts + list(outs))[self.slots[v.id]]

    def run(self, args: list, override: dict | None = None):
        bufs = list(args)
        bufs += [p._buf for _, p in self.param_vals] if not override else \
            [override.get(id(p), p._buf) for _, p in self.param_vals]
        n_in = len(bufs)
        bufs = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in bufs]
        bufs += self.consts
        bufs += [np.empty(s, d) for s, d in self._out_meta]
        ins = [_address(a) for a in bufs[:n_in]]
        k0 = n_in + len(self.consts)
        outs = [_address(a) for a in bufs[k0:]]
        t = self._table
        with self._call_lock:                # the table is shared: fill it under the lock too
            t[:n_in] = ins
            t[k0:len(bufs)] = outs
            self._check(self._fn(self._table_address))
        return [bufs[k] for k in self._out_slots], \
            [(p, bufs[k]) for p, k in zip(self.assign_params, self._assign_slots)]
