"""`ms.check_modes(fn, *args)`: run a function or Cell in PyNative and in GRAPH_MODE and report
where the two differ: the returned tensors, the printed text, the gradients, and on a difference
the first op whose output differs, with its source line and both values.

How the op is found: the PyNative run records every primitive's output with the user's source
line (the first frame outside minispore) by swapping in a recording eager executor; the graph is
compiled afresh at jit_level O0 (kernel by kernel, the same kernels as PyNative) with a recording
session on the backends' kernel hook (device.py, Note [Profiling hook]), so every graph node's
output is seen with the line the parser gave it. Records are matched by (file, line, op name,
occurrence) and compared in the graph's execution order. The outputs are also compared at the
context's own jit_level (O2 fuses, so a difference only there is the sink's rounding, reported
as such). Checking clears the compile cache (so the traced graph is compiled with the recorder
on); later calls compile again.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from . import context
from .primitive import OpDef, executor
from .tensor import Tensor

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class OpRecord:
    """One primitive's output in one run."""
    op: str
    file: str
    line: int
    text: str
    values: list


@dataclass
class Difference:
    what: str                 # 'output', 'print', 'gradient', 'op', 'error'
    detail: str
    eager: object = None
    graph: object = None

    def __str__(self) -> str:
        s = f"{self.what}: {self.detail}"
        if self.eager is not None or self.graph is not None:
            s += f"\n    PyNative: {_short(self.eager)}\n    GRAPH:    {_short(self.graph)}"
        return s


@dataclass
class ModeReport:
    """What `check_modes` found. `ok` is True when the two modes agree everywhere."""
    differences: list = field(default_factory=list)
    first_op: Difference | None = None
    checked: list = field(default_factory=list)       # what was compared, in words

    @property
    def ok(self) -> bool:
        return not self.differences

    def __str__(self) -> str:
        if self.ok:
            return "PyNative and GRAPH_MODE agree (" + ", ".join(self.checked) + ")"
        lines = [f"PyNative and GRAPH_MODE differ ({len(self.differences)} difference(s)):"]
        lines += ["  " + str(d).replace("\n", "\n  ") for d in self.differences]
        if self.first_op is not None:
            lines.append("  first diverging op: " + str(self.first_op).replace("\n", "\n  "))
        return "\n".join(lines)


def _short(v) -> str:
    if isinstance(v, np.ndarray):
        body = np.array2string(v.ravel()[:8], precision=8, separator=", ")
        return f"{v.dtype}{list(v.shape)} {body}{' ...' if v.size > 8 else ''}"
    return repr(v)


def _user_frame():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    if f is None:
        return "", 0, ""
    import linecache
    return f.f_code.co_filename, f.f_lineno, linecache.getline(f.f_code.co_filename,
                                                               f.f_lineno).strip()


def _host(x):
    if isinstance(x, Tensor):
        return x.asnumpy()
    return np.asarray(x)


class _RecordingEager:
    """The eager executor, recording each primitive's output (an instance wraps the real one)."""

    def __init__(self, inner, records):
        self._inner, self._records, self._depth = inner, records, 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def _note(self, op, out):
        if self._depth == 0:
            outs = out if isinstance(out, tuple) else (out,)
            file, line, text = _user_frame()
            self._records.append(OpRecord(op.name, file, line, text,
                                          [_host(o) for o in outs]))

    def apply(self, op, inputs, attrs):
        self._depth += 1
        try:
            out = self._inner.apply(op, inputs, attrs)
        finally:
            self._depth -= 1
        self._note(op, out)
        return out

    def binary(self, op, a, b):
        self._depth += 1
        try:
            out = self._inner.binary(op, a, b)
        finally:
            self._depth -= 1
        self._note(op, out)
        return out


class _NodeRecorder:
    """A kernel-hook session (device.py) that leaves kernels alone and records graph nodes'
    outputs as the O0 program runs them."""

    def __init__(self, records):
        self._records = records

    def wrap(self, kind, backend, made, args, kwargs):
        return made

    def wrap_node(self, program, node, made):
        if not isinstance(node.op, OpDef):
            return made
        loc = node.loc
        records, backend, name = self._records, program.backend, node.op.name

        def recorded(*bufs):
            out = made(*bufs)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            records.append(OpRecord(name, loc.file if loc else "", loc.line if loc else 0,
                                    loc.text.strip() if loc else "",
                                    [np.asarray(backend.to_host(o)) for o in outs]))
            return out
        return recorded


def _leaves(out) -> list:
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _leaves(o)]
    if isinstance(out, dict):
        return [x for k in sorted(out, key=str) for x in _leaves(out[k])]
    if isinstance(out, Tensor):
        return [out.asnumpy()]
    if isinstance(out, (int, float, bool, np.ndarray, np.generic)):
        return [np.asarray(out)]
    return []


def _equal(a, b, rtol, atol) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if rtol == 0 and atol == 0:
        return a.tobytes() == b.tobytes()
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol,
                            equal_nan=True))


@contextlib.contextmanager
def _mode(mode, jit_level=None):
    saved = {k: context._state[k] for k in ("mode", "jit_level")}
    try:
        context.set_context(mode=mode)
        if jit_level is not None:
            context.set_context(jit_level=jit_level)
        yield
    finally:
        context.set_context(mode=saved["mode"], jit_level=saved["jit_level"])


def _call(fn, args, kwargs):
    """Run fn once in the current mode: a Cell as it is, a function through ms.jit in graph
    mode. -> (outputs, printed text)."""
    from .cells import is_cell
    from .jit import jit
    graph = context._state["mode"] == context.GRAPH_MODE
    target = fn if is_cell(fn) or not graph else jit(fn)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = target(*args, **kwargs)
    return out, buf.getvalue()


def _grad_targets(fn, args):
    from .cells import is_cell
    positions = tuple(i for i, a in enumerate(args)
                      if isinstance(a, Tensor) and a.dtype.is_float)
    weights = fn.trainable_params() if is_cell(fn) and fn.trainable_params() else None
    return positions, weights


def _grads(fn, args, kwargs, positions, weights):
    """The gradients in the current mode (in GRAPH_MODE ms.grad compiles forward and backward
    as one graph)."""
    from .autodiff import grad
    target = fn if not kwargs else (lambda *a: fn(*a, **kwargs))
    return grad(target, grad_position=positions or None, weights=weights)(*args)


def _first_diverging(eager: list, graph: list):
    """The first graph node whose output differs bit for bit from PyNative's same op (matched
    by file, line, op and occurrence), as a Difference, or None."""
    seen: dict = {}
    by_key: dict = {}
    for r in eager:
        k = (r.file, r.line, r.op)
        by_key.setdefault(k, []).append(r)
    for g in graph:
        k = (g.file, g.line, g.op)
        n = seen.get(k, 0)
        seen[k] = n + 1
        cands = by_key.get(k, [])
        if n >= len(cands):
            continue                      # a node PyNative did not run here (CSE, a pass)
        e = cands[n]
        for i, (a, b) in enumerate(zip(e.values, g.values)):
            if not _equal(a, b, 0.0, 0.0):
                where = f"{os.path.basename(g.file)}:{g.line}" if g.file else "?"
                return Difference("op", f"{g.op} (output {i}) at {where}: {g.text}", a, b)
    return None


def check_modes(fn, *args, grad: bool = True, rtol: float = 0.0, atol: float = 0.0,
                **kwargs) -> ModeReport:
    """Run `fn(*args, **kwargs)` (a function or a Cell) in PyNative and in GRAPH_MODE; compare
    every returned tensor, the printed text and (grad=True) the gradients with respect to the
    floating-point tensor arguments and a Cell's trainable parameters. rtol/atol: the tolerance
    of the comparison at the context's jit_level (0: bit-identical; kernel-by-kernel graphs are
    always compared exactly). Returns a ModeReport (`print(report)`, `report.ok`)."""
    report = ModeReport()
    level = context._state["jit_level"]
    with _mode(context.PYNATIVE_MODE):
        e_out, e_text = _call(fn, args, kwargs)
    results = {}
    for lvl in dict.fromkeys(("O0", level)):
        with _mode(context.GRAPH_MODE, lvl):
            try:
                results[lvl] = _call(fn, args, kwargs)
            except Exception as e:      # noqa: BLE001  (reported: the graph does not compile/run)
                report.differences.append(Difference("error", f"GRAPH_MODE at jit_level {lvl} "
                                                     f"raised {type(e).__name__}: {e}"))
                return report
    e_leaves = _leaves(e_out)
    for lvl, (g_out, g_text) in results.items():
        tol = (0.0, 0.0) if lvl == "O0" else (rtol, atol)
        g_leaves = _leaves(g_out)
        if len(g_leaves) != len(e_leaves):
            report.differences.append(Difference(
                "output", f"jit_level {lvl}: {len(e_leaves)} returned tensors in PyNative, "
                          f"{len(g_leaves)} in GRAPH_MODE"))
        for i, (a, b) in enumerate(zip(e_leaves, g_leaves)):
            if not _equal(a, b, *tol):
                report.differences.append(Difference("output", f"returned value {i} at "
                                                     f"jit_level {lvl}", a, b))
        if g_text != e_text:
            report.differences.append(Difference("print", f"printed text at jit_level {lvl}",
                                                 e_text, g_text))
    report.checked.append(f"{len(e_leaves)} returned tensor(s)")
    if e_text:
        report.checked.append("printed text")
    if grad:
        _check_grads(fn, args, kwargs, level, rtol, atol, report)
    if any(d.what in ("output", "gradient") for d in report.differences):
        report.first_op = _trace(fn, args, kwargs)
        if report.first_op is None:
            report.first_op = Difference("op", f"every op agrees at jit_level O0: the "
                                         f"difference is the {level} program's (fusion, "
                                         f"rounding order)")
    return report


def _check_grads(fn, args, kwargs, level, rtol, atol, report):
    positions, weights = _grad_targets(fn, args)
    if not positions and not weights:
        return
    try:
        with _mode(context.PYNATIVE_MODE):
            e = _leaves(_grads(fn, args, kwargs, positions, weights))
    except Exception as exc:            # noqa: BLE001  (not differentiable: said, not failed)
        report.checked.append(f"gradients not compared ({type(exc).__name__}: {exc})")
        return
    for lvl in dict.fromkeys(("O0", level)):
        tol = (0.0, 0.0) if lvl == "O0" else (rtol, atol)
        try:
            with _mode(context.GRAPH_MODE, lvl):
                g = _leaves(_grads(fn, args, kwargs, positions, weights))
        except Exception as exc:        # noqa: BLE001
            report.differences.append(Difference("error", f"the GRAPH_MODE gradient at "
                                                 f"jit_level {lvl} raised "
                                                 f"{type(exc).__name__}: {exc}"))
            return
        for i, (a, b) in enumerate(zip(e, g)):
            if not _equal(a, b, *tol):
                report.differences.append(Difference("gradient", f"gradient {i} at jit_level "
                                                     f"{lvl}", a, b))
    report.checked.append(f"{len(e)} gradient(s)")


def _trace(fn, args, kwargs):
    """The first op whose output differs between PyNative and a fresh O0 graph, or None."""
    from . import device
    from .graph import cache
    eager, graph = [], []
    saved = executor.current
    executor.current = _RecordingEager(saved, eager)
    try:
        with _mode(context.PYNATIVE_MODE), contextlib.redirect_stdout(io.StringIO()):
            fn(*args, **kwargs)
    finally:
        executor.current = saved
    cache.clear()
    prev = device.hooks.active
    device.hooks.active = _NodeRecorder(graph)
    try:
        with _mode(context.GRAPH_MODE, "O0"):
            _call(fn, args, kwargs)
    finally:
        device.hooks.active = prev
        cache.clear()                   # the recording program must not be reused
    return _first_diverging(eager, graph)
