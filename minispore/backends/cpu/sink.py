"""The numba sink (jit_level O2, for graphs the native sink cannot lower): the whole optimized
graph becomes ONE numba function.

The native sink (native_sink.py: LLVM IR, no numba) takes every graph whose nodes it has
lowerings for; this sink takes the rest (half precision, ...), at the price of numba's compile
time.

Every node is lowered to numba source inside a single `@njit(cache=True)` function: elementwise
and fused nodes become loops over their static output shape (inputs indexed with their broadcast
strides, transcendentals from vecmath), a fused group ending with a reduction becomes the
accumulating loop nest of fused_reduce.py (shared with the O1 kernel), matmul calls BLAS
through `np.dot(a, b, out)`, reductions and softmax become loops, reshape/transpose/broadcast
are numpy calls numba compiles, If/While are native branches and loops, and Parameter
assignments are returned with the outputs. The source is content-hashed into the kernel cache
directory (codegen.module_for), so a second process loads the compiled function from disk.

Data movement and indexing ops are lowered in sink_index.py, softmax/log_softmax/logsumexp in
sink_rows.py. A node kind the sink does not lower
yet raises SinkUnsupported naming it; the compiler then runs that graph at O1 and says so (see
graph/compile.py): nothing is silently dropped.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core.graph import ir
from ...core.index_check import translate
from ...core.primitive import OpDef, attrs_dict
from ...core.shape import normalize_axes, size_of
from . import sink_index as _sink_index
from . import sink_rows as _sink_rows
from .blas_threads import call_serial
from . import sink_nn as _sink_nn
from .codegen import HEADER_IMPORTS, module_for, render


class SinkUnsupported(NotImplementedError):
    pass


_SINK_DTYPES = (dt.float32, dt.float64, dt.int32, dt.int64, dt.bool_, dt.int8, dt.int16,
                dt.uint8)


def _np(d: dt.DType) -> str:
    return "np." + ("bool_" if d is dt.bool_ else d.np.name)


class _Emitter:
    def __init__(self, graph: ir.Graph):
        self.g = graph
        self.lines: list = []
        self.names: dict = {}
        self.consts: list = []           # arrays passed as arguments
        self.assigns: list = []          # (Parameter, var name)
        self.printers: list = []         # Python source of the objmode print helpers
        self.imports: list = []          # import lines of windows.py kernels the nodes call
        self.checks: list = []           # IndexCheck of each run-time index check (its site)
        self.tmp = 0

    def name(self, v: ir.Value) -> str:
        return self.names[v.id]

    def fresh(self, prefix="t") -> str:
        self.tmp += 1
        return f"{prefix}{self.tmp}"

    def bind(self, v: ir.Value, name: str):
        self.names[v.id] = name

    def out(self, v: ir.Value) -> str:
        n = f"v{v.id}"
        self.names[v.id] = n
        return n

    def line(self, indent: int, text: str):
        self.lines.append("    " * indent + text)

    def check_site(self, site) -> int:
        """The number generated code raises IndexError(index_check.MARKER, k, value) with
        when the check `site` (an IndexCheck) fails; SunkProgram raises site.error(value)."""
        self.checks.append(site)
        return len(self.checks) - 1

    def fill(self, name: str, shape: tuple, dtype: dt.DType, value: str, ind: int):
        """name = an array of `shape` filled with `value` (a loop: numba compiles np.full's
        generic implementation ~4x slower than a loop)."""
        n = size_of(shape)
        self.line(ind, f"{name}_flat = np.empty(({n},), {_np(dtype)})")
        self.line(ind, f"for q in range({n}):")
        self.line(ind + 1, f"{name}_flat[q] = {value}")
        self.line(ind, f"{name} = {name}_flat.reshape({shape!r})")

    # -- graphs ---------------------------------------------------------------------------------
    def graph_body(self, g: ir.Graph, ind: int):
        for n in g.nodes:
            self.node(n, ind)

    def node(self, n: ir.Node, ind: int):
        for v in n.outputs + n.inputs:
            if v.dtype not in _SINK_DTYPES:
                raise SinkUnsupported(f"dtype {v.dtype} ({n.name})")
        if n.op == ir.CONST:
            self.bind(n.outputs[0], f"c{len(self.consts)}")
            self.consts.append(np.array(n.attr("value"), order="C"))   # keeps 0-d arrays 0-d
        elif n.op == ir.FUSED and n.attr("reduce") is not None:
            self.fused_reduce(n, n.attr("reduce"), ind)
        elif n.op == ir.FUSED:
            self.loop(n, n.attr("expr"), ind)
        elif n.op == ir.IF:
            self.if_(n, ind)
        elif n.op == ir.WHILE:
            self.while_(n, ind)
        elif n.op == ir.ASSIGN:
            self.assigns.append((n.attr("param"), self.name(n.inputs[0])))
        elif n.op == ir.PRINT:
            self.print_(n, ind)
        elif isinstance(n.op, OpDef):
            lower = _LOWER.get(n.op.name)
            if lower is None:
                if n.op.kind == "elementwise" and n.op.scalar is not None:
                    return self.elementwise(n, ind)
                raise SinkUnsupported(f"op '{n.op.name}'")
            lower(self, n, attrs_dict(n.attrs), ind)
        else:
            raise SinkUnsupported(f"node kind '{n.name}'")

    def print_(self, n: ir.Node, ind: int):
        """A Print node: numba's objmode calls a generated Python printer (same text as O0)."""
        if n.attr("file") is not None:
            raise SinkUnsupported("print(file=...)")
        k = len(self.printers)
        args = [f"t{i}" for i in range(len(n.inputs))]
        pieces = ", ".join(repr(p[1]) if p[0] == "s" else f"_fmt(t{p[1]})"
                           for p in n.attr("parts"))
        self.printers.append(f"def _print_{k}({', '.join(args)}):\n"
                             f"    print({n.attr('sep')!r}.join([{pieces}]), "
                             f"end={n.attr('end', chr(10))!r})\n")
        self.line(ind, "with objmode():")
        self.line(ind + 1, f"_print_{k}({', '.join(self.name(v) for v in n.inputs)})")

    # -- elementwise loops ------------------------------------------------------------------------
    def elementwise(self, n: ir.Node, ind: int):
        from ...core import scalar_expr as E
        cdts, _ = n.op.compute(tuple(v.dtype for v in n.inputs))
        if any(c is not v.dtype for c, v in zip(cdts, n.inputs)):
            casts = [None if c is v.dtype else c for c, v in zip(cdts, n.inputs)]
        else:
            casts = None
        expr = E.build(lambda *xs: n.op.scalar(*xs, **attrs_dict(n.attrs)), len(n.inputs))
        self.loop(n, expr, ind, casts)

    def loop(self, n: ir.Node, expr, ind: int, casts=None):
        out = n.outputs[0]
        shape = out.shape
        final = self.out(out)
        o = final if shape else self.fresh("z")          # a 0-d result is built in a (1,) buffer
        self.line(ind, f"{o} = np.empty({shape if shape else (1,)!r}, {_np(out.dtype)})")
        # no broadcasting (every input has the output's shape, or is 0-d): one flat loop over
        # raveled views instead of a rank-r nest (shorter to compile, one long vector loop)
        flat = len(shape) >= 2 and all(v.shape in (shape, ()) for v in n.inputs)
        srcs = {}
        if flat:
            o_nd, o = o, self.fresh("zf")
            self.line(ind, f"{o} = {o_nd}.reshape(({size_of(shape)},))")
            for v in n.inputs:
                if v.shape and v.id not in srcs:
                    srcs[v.id] = self.fresh("rv")
                    self.line(ind, f"{srcs[v.id]} = {self.name(v)}.ravel()")
        idx_vars = ["i0"] if flat else [f"i{k}" for k in range(len(shape))]
        for k, d in enumerate([size_of(shape)] if flat else shape):
            self.line(ind + k, f"for {idx_vars[k]} in range({d}):")
        inner = ind + len(idx_vars)
        floats = [v.dtype for v in n.inputs if v.dtype.is_float] + [out.dtype]
        cdt = next((d for d in floats if d.is_float), out.dtype)
        for i, v in enumerate(n.inputs):
            if not v.shape:
                load = f"{self.name(v)}.item()"
            elif flat:
                load = f"{srcs[v.id]}[i0]"
            else:
                load = f"{self.name(v)}[{_index(v.shape, shape, idx_vars)}]"
            if casts is not None and casts[i] is not None:
                load = f"{_np(casts[i])}({load})"
                cdt = casts[i] if casts[i].is_float else cdt
            self.line(inner, f"x{i} = {load}")
        body = render(expr, [f"x{i}" for i in range(len(n.inputs))]).replace(
            "DT(", f"{_np(cdt)}(")
        self.line(inner, f"{o}[{', '.join(idx_vars) if shape else '0'}] = {body}")
        if not shape:
            self.line(ind, f"{final} = {o}.reshape(())")

    def fused_reduce(self, n: ir.Node, red: ir.Reduction, ind: int):
        """A fused group folded by its reduction: fused_reduce.loop_lines over the static loop
        shape, into a flat buffer reshaped to the output's shape."""
        from .fused_reduce import input_index, loop_lines
        out = n.outputs[0]
        r = len(red.shape)
        floats = [v.dtype for v in n.inputs if v.dtype.is_float]
        cdt = floats[0] if floats else out.dtype
        tmp = self.fresh("f")
        names = [f"{tmp}x{i}" for i in range(len(n.inputs))]

        def loads(idx):
            return [f"{x} = {self.name(v)}[{input_index(v.shape, r, idx)}]" if v.shape else
                    f"{x} = {self.name(v)}.item()" for x, v in zip(names, n.inputs)]
        body = render(n.attr("expr"), names).replace("DT(", f"{_np(cdt)}(")
        flat = f"{tmp}out"
        self.line(ind, f"{flat} = np.empty(({size_of(out.shape)},), {_np(out.dtype)})")
        for k, text in loop_lines(red.kind, [str(d) for d in red.shape], red.axes, loads, body,
                                  _np(out.dtype), flat, tmp):
            self.line(ind + k, text)
        self.line(ind, f"{self.out(out)} = {flat}.reshape({out.shape!r})")

    # -- control flow ---------------------------------------------------------------------------
    def if_(self, n: ir.Node, ind: int):
        c = self.name(n.inputs[0])
        outs = [self.out(v) for v in n.outputs]
        for k, sg in enumerate(n.subgraphs):
            self.line(ind, f"if {c}.item():" if k == 0 else "else:")
            self.graph_body(sg, ind + 1)
            for o, v in zip(outs, sg.outputs):
                self.line(ind + 1, f"{o} = {self.name(v)}")
            if not sg.nodes and not sg.outputs:
                self.line(ind + 1, "pass")

    def while_(self, n: ir.Node, ind: int):
        cond, body = n.subgraphs
        state = [self.fresh("s") for _ in n.inputs]
        for s, v in zip(state, n.inputs):
            self.line(ind, f"{s} = {self.name(v)}")
        self.line(ind, "while True:")
        for s, v in zip(state, cond.inputs):
            self.bind(v, s)
        self.graph_body(cond, ind + 1)
        self.line(ind + 1, f"if not {self.name(cond.outputs[0])}.item():")
        self.line(ind + 2, "break")
        for s, v in zip(state, body.inputs):
            self.bind(v, s)
        self.graph_body(body, ind + 1)
        news = [self.name(v) for v in body.outputs]
        if news:
            self.line(ind + 1, f"{', '.join(state)} = {', '.join(news)}")
        for s, v in zip(state, n.outputs):
            self.bind(v, s)


def _index(in_shape: tuple, out_shape: tuple, idx_vars: list) -> str:
    """The subscript reading an input broadcast against the output's loop indices."""
    if not in_shape:
        return "()"
    lead = len(out_shape) - len(in_shape)
    parts = ["0" if d == 1 and out_shape[lead + k] != 1 else idx_vars[lead + k]
             for k, d in enumerate(in_shape)]
    return ", ".join(parts)


# ---------------------------------------------------------------- per-op lowerings ---------------
def _matmul(e: _Emitter, n, a, ind):
    x, y = n.inputs
    out = n.outputs[0]
    if out.dtype not in (dt.float32, dt.float64) or x.dtype is not y.dtype:
        raise SinkUnsupported(f"matmul of {x.dtype} and {y.dtype}")
    o = e.out(out)
    e.line(ind, f"{o} = np.empty({out.shape!r}, {_np(out.dtype)})")
    batch = out.shape[:-2]
    bvars = [f"b{k}" for k in range(len(batch))]
    for k, d in enumerate(batch):
        e.line(ind + k, f"for {bvars[k]} in range({d}):")
    inner = ind + len(batch)

    def operand(v, t):
        sub = _index(v.shape[:-2], batch, bvars)
        ref = e.name(v) if not v.shape[:-2] else f"{e.name(v)}[{sub}]"
        return f"{ref}.T" if t else ref
    dst = o if not batch else f"{o}[{', '.join(bvars)}]"
    e.line(inner, f"np.dot({operand(x, a['transpose_a'])}, {operand(y, a['transpose_b'])}, "
                  f"{dst})")


def _reduction(kind):
    def lower(e: _Emitter, n, a, ind):
        x, out = n.inputs[0], n.outputs[0]
        if not x.shape:                            # reducing a scalar: the value itself
            from ...core import scalar_expr as E
            return e.loop(n, E.arg(0), ind)
        axes = normalize_axes(kind, a["axis"], len(x.shape)) if x.shape else ()
        keep_shape = tuple(1 if k in axes else d for k, d in enumerate(x.shape))
        acc_dt = dt.float64 if out.dtype.is_float else out.dtype
        acc = e.fresh("acc")
        init = {"sum": "0", "mean": "0", "prod": "1", "max": "-np.inf", "min": "np.inf"}[kind]
        if kind in ("max", "min") and not out.dtype.is_float:
            info = np.iinfo(out.dtype.np) if out.dtype is not dt.bool_ else None
            init = ("False" if kind == "max" else "True") if info is None else \
                str(info.min if kind == "max" else info.max)
            acc_dt = out.dtype
        scalar = size_of(keep_shape) == 1          # everything reduced: a register accumulator
        if scalar:
            e.line(ind, f"{acc} = {_np(acc_dt)}({init})")
        else:
            e.fill(acc, keep_shape, acc_dt, init, ind)
        idx = [f"r{k}" for k in range(len(x.shape))]
        for k, d in enumerate(x.shape):
            e.line(ind + k, f"for {idx[k]} in range({d}):")
        inner = ind + len(x.shape)
        dst = acc if scalar else \
            f"{acc}[{', '.join('0' if k in axes else idx[k] for k in range(len(x.shape)))}]"
        src = f"{e.name(x)}[{', '.join(idx)}]"
        if kind in ("sum", "mean"):
            e.line(inner, f"{dst} += {src}")
        elif kind == "prod":
            e.line(inner, f"{dst} *= {src}")
        else:
            cmp = ">" if kind == "max" else "<"
            e.line(inner, f"xv = {src}")
            e.line(inner, f"if xv {cmp} {dst} or xv != xv:")
            e.line(inner + 1, f"{dst} = xv")
        scale = f" / {size_of(x.shape) // max(size_of(keep_shape), 1)}" if kind == "mean" else ""
        flat = e.fresh("red")                   # the result, flat, in the output dtype
        e.line(ind, f"{flat} = np.empty(({size_of(keep_shape)},), {_np(out.dtype)})")
        if scalar:
            e.line(ind, f"{flat}[0] = {acc}{scale}")
        else:
            e.line(ind, f"{acc}_flat = {acc}.reshape(({size_of(keep_shape)},))")
            e.line(ind, f"for q in range({size_of(keep_shape)}):")
            e.line(ind + 1, f"{flat}[q] = {acc}_flat[q]{scale}")
        e.line(ind, f"{e.out(out)} = {flat}.reshape({out.shape!r})")
    return lower


def _tile(e: _Emitter, n, a, ind):
    x, out = n.inputs[0], n.outputs[0]
    o = e.out(out)
    e.line(ind, f"{o} = np.empty({out.shape!r}, {_np(out.dtype)})")
    idx = [f"i{k}" for k in range(len(out.shape))]
    for k, d in enumerate(out.shape):
        e.line(ind + k, f"for {idx[k]} in range({d}):")
    lead = len(out.shape) - len(x.shape)
    src = [f"{idx[lead + k]} % {d}" for k, d in enumerate(x.shape)]
    e.line(ind + len(out.shape), f"{o}[{', '.join(idx) or '()'}] = "
                                 f"{e.name(x)}[{', '.join(src) or '()'}]")


def _simple(template):
    def lower(e: _Emitter, n, a, ind):
        out = n.outputs[0]
        args = {f"in{k}": e.name(v) for k, v in enumerate(n.inputs)}
        code = template.format(out_shape=repr(out.shape), out_dtype=_np(out.dtype), **args,
                               **{k: repr(tuple(v) if isinstance(v, list) else v)
                                  for k, v in a.items() if k != "dtype"})
        e.line(ind, f"{e.out(out)} = {code}")
    return lower


def _copy_loop(e: _Emitter, n, a, ind):
    """broadcast_to and cast: an elementwise copy (the store converts the dtype)."""
    from ...core import scalar_expr as E
    if n.op.name == "cast" and n.outputs[0].dtype is dt.bool_ and n.inputs[0].dtype.is_float:
        e.loop(n, E.arg(0).ne(0), ind)
    else:
        e.loop(n, E.arg(0), ind)


def _transpose(e: _Emitter, n, a, ind):
    x, out = n.inputs[0], n.outputs[0]
    perm = tuple(a["perm"])
    o = e.out(out)
    e.line(ind, f"{o} = np.empty({out.shape!r}, {_np(out.dtype)})")
    idx = [f"i{k}" for k in range(len(out.shape))]
    for k, d in enumerate(out.shape):
        e.line(ind + k, f"for {idx[k]} in range({d}):")
    src = [""] * len(perm)
    for k, p in enumerate(perm):               # out axis k is input axis perm[k]
        src[p] = idx[k]
    e.line(ind + len(out.shape), f"{o}[{', '.join(idx) or '()'}] = "
                                 f"{e.name(x)}[{', '.join(src) or '()'}]")


def _fill(e: _Emitter, n, a, ind):
    out = n.outputs[0]
    v = a["value"]
    lit = repr(bool(v)) if out.dtype is dt.bool_ else f"{_np(out.dtype)}({v!r})"
    e.fill(e.out(out), out.shape, out.dtype, lit, ind)


_LOWER = {
    "matmul": _matmul,
    "sum": _reduction("sum"), "mean": _reduction("mean"), "prod": _reduction("prod"),
    "max": _reduction("max"), "min": _reduction("min"),
    "tile": _tile,
    "reshape": _simple("{in0}.reshape({out_shape})"),
    "transpose": _transpose,
    "broadcast_to": _copy_loop,
    "fill": _fill,
    "fill_like": _fill,
    "cast": _copy_loop,
    "stop_gradient": _simple("{in0}"),
}
_LOWER.update(_sink_index.LOWER)
_LOWER.update(_sink_rows.LOWER)        # softmax, log_softmax, logsumexp
_LOWER.update(_sink_nn.LOWER)          # conv, pooling, norms, random ops


class SunkProgram:
    """The O2 program: one call of the generated numba function per graph run."""

    def __init__(self, graph: ir.Graph, backend):
        e = _Emitter(graph)
        args = [f"a{k}" for k in range(len(graph.inputs))]
        params = [f"p{k}" for k in range(len(graph.params))]
        for v, nm in zip(graph.inputs, args):
            e.bind(v, nm)
        for (v, _), nm in zip(graph.params, params):
            e.bind(v, nm)
        e.graph_body(graph, 1)
        outs = [e.name(v) for v in graph.outputs]
        assign_names = [nm for _, nm in e.assigns]
        e.line(1, f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''}), "
                  f"({', '.join(assign_names)}{',' if len(assign_names) == 1 else ''})")
        consts = [f"c{k}" for k in range(len(e.consts))]
        header = ("# generated by minispore.backends.cpu.sink: one graph, one function\n"
                  + HEADER_IMPORTS + _sink_nn.HEADER + "".join(dict.fromkeys(e.imports))
                  + "from numba import objmode\n"
                  "from minispore.core.graph.execute import _fmt\n\n" + "\n".join(e.printers)
                  + "\n"
                  f'@njit(cache=True, error_model="numpy"{"" if e.printers else ", nogil=True"})\n'
                  f"def graph_fn({', '.join(args + params + consts)}):\n")
        self.source = header + "\n".join(e.lines) + "\n"
        self.module = module_for("sink", self.source)
        self.fn = self.module.graph_fn
        self.graph = graph
        self.consts = e.consts
        self.assign_params = [p for p, _ in e.assigns]
        self.checks = e.checks
        self.kernel_launches = 1
        self._steps_fn = None

    serial_blas = False     # CPUBackend.sink: small convs only -> BLAS on the calling thread

    def _call(self, fn, *args):
        try:
            return call_serial(fn, *args) if self.serial_blas else fn(*args)
        except IndexError as exc:        # a failed index check: its site's message
            new = translate(exc, self.checks)
            if new is exc:
                raise
            raise new from None

    def run(self, args: list):
        outs, news = self._call(self.fn, *args, *[p._buf for _, p in self.graph.params],
                                *self.consts)
        return list(outs), list(zip(self.assign_params, news))

    def run_steps(self, stacked: list):
        """Steps over stacked inputs (each input's batches along a new leading axis) in ONE
        call: a generated numba loop calls graph_fn once per step and carries the assigned
        Parameters' new values into the next step (ms.data_sink on the CPU: a sunk multi-step
        program). Returns the last step's outputs and the final assignments."""
        if self._steps_fn is None:
            self._steps_fn = module_for("steps", self._steps_source()).steps_fn
        outs, news = self._call(self._steps_fn, *stacked, *[p._buf for _, p in self.graph.params],
                                *self.consts)
        return list(outs), list(zip(self.assign_params, news))

    def _steps_source(self) -> str:
        n_in, params = len(self.graph.inputs), [p for _, p in self.graph.params]
        ins = [f"s{k}" for k in range(n_in)]
        ps = [f"p{k}" for k in range(len(params))]
        cs = [f"c{k}" for k in range(len(self.consts))]
        slot = {id(p): k for k, p in enumerate(params)}
        carry = [f"{ps[slot[id(p)]]} = news[{j}]" for j, p in enumerate(self.assign_params)
                 if id(p) in slot]

        def step(i):
            call = f"outs, news = graph_fn({', '.join([f'{a}[{i}]' for a in ins] + ps + cs)})"
            return [call] + carry
        body = ["    " + ln for ln in step(0)]
        body += [f"    for i in range(1, {ins[0]}.shape[0]):"] + ["        " + ln for ln in
                                                                  step("i")]
        return ("# generated by minispore.backends.cpu.sink: n steps of one sunk graph, one call\n"
                "from numba import njit\n"
                f"from {self.module.__name__} import graph_fn\n\n"
                '@njit(cache=True, error_model="numpy")\n'
                f"def steps_fn({', '.join(ins + ps + cs)}):\n" + "\n".join(body)
                + "\n    return outs, news\n")
