"""Compiling a Cell call, an @ms.jit function or a gradient to a graph, and running it.

`run(fn, args, kwargs, parse=...)` looks the call up in the compile cache (cache.py: keyed by the
function's code, the Cell instance, the input shapes/dtypes, the Python-value arguments and the
context options: a new shape recompiles, as in MindSpore and JAX; and by snapshots of the Python
values the graph read while it was built (guards.py): `self.` attributes, globals, closure
variables, defaults and the `training` flags of the Cells the graph called (`if self.training:`
is resolved at compile time, so `set_train(False)` after a call selects, or compiles, the graph
of the other phase, as MindSpore's train/predict phases do), builds the graph on a miss (the parser converts the source of user code; minispore's own
functions, such as the gradient wrappers, run through the builder), optimizes it, prepares the
backend program and runs it. Parameters are graph inputs bound by reference; Parameter
assignments land after the call.
"""
from __future__ import annotations

import itertools
import os
import weakref
from pathlib import Path

import numpy as np

from .. import context, mutable
from ..device import current, get_backend, on_program_made
from ..primitive import executor
from ..pynative import TAPE
from ..tensor import Parameter, Tensor, wrap
from . import cache, guards, ir
from .builder import GraphBuilder, sym
from .execute import Program  # noqa: F401  (importing it registers the default Program)
from .parser import Parser
from .semantics import as_output


def _draw_program(program) -> None:
    """save_graphs: the picture of the graph each program a backend makes runs (graph/dot.py)."""
    if context._state["save_graphs"]:
        from .dot import save_final
        save_final(program, context._state["save_graphs_path"])


on_program_made(_draw_program)


class Compiled:
    """One cached compilation: the graph, its program, and how to rebuild the result."""

    def __init__(self, graph, program, out_tree):
        self.graph, self.program, self.out_tree = graph, program, out_tree


_dump_ids = itertools.count()
stats = {"compiles": 0, "parses": 0}
# the latest top-level graph call's Compiled entry (held weakly: a dead Cell's graph, which holds
# its Parameters, must not stay alive through it) and the number of such calls (one inlined into
# an enclosing graph or interpreted under an eager gradient is none): which program ran
ran = {"last": None, "calls": 0}


def last_compiled():
    """The Compiled entry (graph and program) the latest top-level graph call ran, or None:
    which program ran (kernel by kernel, a backend's sink) is its `program`'s type."""
    last = ran["last"]
    return None if last is None else last()


def _flatten_args(args, objs: list | None = None):
    """(tensors in order, hashable signature with tensors replaced by their types). A numpy
    array counts as the Tensor _arrays_to_tensors makes of it. Objects compared by identity
    (Cells, unhashable objects) enter the signature as their id and are appended to `objs`,
    so the cache can forget their entries when they die."""
    tensors, sig = [], []
    objs = [] if objs is None else objs

    def visit(a):
        if isinstance(a, np.ndarray):
            a = Tensor(a)
        if isinstance(a, Parameter):     # bound by reference, as a Parameter the graph reads
            objs.append(a)
            return ("P", id(a), a.shape, a.dtype)
        if isinstance(a, Tensor):
            tensors.append(a)
            if isinstance(a, mutable.ScalarInput):      # keyed by its type, not its value
                return mutable.input_signature(a)
            return ("T", a.shape, a.dtype)
        if isinstance(a, (tuple, list)):
            return (type(a).__name__, tuple(visit(x) for x in a))
        if isinstance(a, dict):
            # insertion order, as _symbolic_args creates the inputs: keys are in the signature
            return ("dict", tuple((k, visit(v)) for k, v in a.items()))
        try:
            hash(a)
            by_identity = type(a).__hash__ is object.__hash__
        except TypeError:
            by_identity = True
        if by_identity:                  # never hold the object itself in a cache key
            objs.append(a)
            return ("O", type(a).__name__, id(a))
        if isinstance(a, (float, np.floating)):     # NaN finds NaN's graph; -0.0 is not 0.0
            return ("f", type(a).__name__, float(a).hex())
        return ("C", type(a).__name__, a)
    for a in args:
        sig.append(visit(a))
    return tensors, tuple(sig)


def _tree_map(leaf, obj):
    """obj with `leaf` applied to everything that is not a tuple, list or dict."""
    if isinstance(obj, tuple):          # (a mutable tuple or list stays marked)
        return mutable.remark(obj, tuple(_tree_map(leaf, o) for o in obj))
    if isinstance(obj, list):
        return mutable.remark(obj, [_tree_map(leaf, o) for o in obj])
    if isinstance(obj, dict):
        return {k: _tree_map(leaf, v) for k, v in obj.items()}
    return leaf(obj)


def _symbolic_args(b: GraphBuilder, args):
    """The arguments with every tensor replaced by a new graph input of its type (in the order
    _flatten_args lists the tensors). A Parameter stays itself: the graph binds it by
    reference, as one it reads from a Cell, so ops.assign and batch_norm's moving statistics
    update the Parameter the caller passed, as in MindSpore."""
    return _tree_map(lambda a: mutable.symbolic_input(b, a) if isinstance(a, mutable.ScalarInput)
                     else a if isinstance(a, Parameter)
                     else b.input(a.shape, a.dtype) if isinstance(a, Tensor) else a, args)


def _flatten_out(obj, b: GraphBuilder, values: list):
    if isinstance(obj, mutable.SymScalar):          # a variable scalar: a Python number
        values.append(b.value_of(mutable.output_value(obj)))
        return ("S", len(values) - 1, obj.kind, obj.exact)
    if isinstance(obj, Tensor):
        values.append(b.value_of(obj))
        return ("T", len(values) - 1)
    if isinstance(obj, (tuple, list)):
        items = tuple(_flatten_out(o, b, values) for o in obj)
        if isinstance(obj, tuple) and hasattr(type(obj), "_fields"):   # a namedtuple: its type
            return ("namedtuple", items, type(obj))
        return ("list" if isinstance(obj, list) else "tuple", items)
    if isinstance(obj, dict):
        return ("dict", tuple((k, _flatten_out(v, b, values)) for k, v in obj.items()))
    return ("C", obj)


def _rebuild(tree, outs, inputs=()):
    kind = tree[0]
    if kind == "T":
        return outs[tree[1]]
    if kind == "S":                     # a variable scalar (an unchanged input: its own value)
        return mutable.python_value(outs[tree[1]], tree[2], tree[3], inputs)
    if kind == "C":
        return tree[1]
    if kind == "dict":
        return {k: _rebuild(t, outs, inputs) for k, t in tree[1]}
    items = [_rebuild(t, outs, inputs) for t in tree[1]]
    if kind == "namedtuple":
        return tree[2](*items)
    return tuple(items) if kind == "tuple" else list(items)


def _arrays_to_tensors(obj):
    """numpy arrays given to a graph are inputs like tensors (never baked in as constants)."""
    return _tree_map(lambda a: Tensor(a) if isinstance(a, np.ndarray) else a, obj)


def _params_match(g) -> bool:
    for v, p in g.params:
        if p.shape != v.shape or p.dtype is not v.dtype:
            return False
    return True


def _options() -> tuple:
    s = context._state
    return (s["device_target"], s["jit_level"], tuple(sorted(s["ascend_config"].items())),
            s["max_device_memory"], os.environ.get("MINISPORE_NATIVE_SINK", "1"),
            s["jit_syntax_level"])


def build(fn, args, kwargs, parse: bool, name: str):
    """Parse/trace `fn(*args, **kwargs)` into an optimized graph: (graph, output tree, the Cells
    it called)."""
    return _build(fn, args, kwargs, parse, name)[:3]


def _build(fn, args, kwargs, parse: bool, name: str):
    """build(), and the guards.Recorder of the Python values the graph read."""
    from . import passes
    b = GraphBuilder(name)
    b.parser = Parser(b)
    b.parser.called_cells = {}                      # Parser.call_cell records the Cells
    saved_depth = TAPE.depth
    TAPE.depth = 0                                  # a graph is differentiated inside itself
    roots, covered, codes = guards.root_locations(fn)
    recorder = guards.Recorder(covered, codes)      # the Python values the parser reads
    recorder.touch_root(roots, fn)
    saved_recorder, guards.Recorder.active = guards.Recorder.active, recorder
    try:
        with b:
            sargs = _symbolic_args(b, list(args))
            skw = _symbolic_args(b, kwargs)
            stats["parses"] += 1
            result = b.parser.call_function(fn, sargs, skw) if parse else fn(*sargs, **skw)
            from .fallback import materialize
            result = as_output(materialize(result))   # Python values as MindSpore returns them
            values: list = []
            tree = _flatten_out(result, b, values)
            b.root.outputs = values
    finally:
        TAPE.depth = saved_depth
        guards.Recorder.active = saved_recorder
    g = b.root
    # device rules (e.g. no float64 on the simulated Ascend) hold for the program as written,
    # before the passes may fold an offending op away: the same error as PyNative
    (current.backend or get_backend(context._state["device_target"])).validate_graph(g)
    dump = _dumper(f"{name}_{next(_dump_ids)}") if context._state["save_graphs"] else None
    if dump:
        dump("parsed", g)
    pipeline = passes.PIPELINE
    if context._state["jit_level"] in ("O1", "O2"):
        from .passes.fuse import fuse
        pipeline = pipeline[:-1] + (fuse, pipeline[-1])    # schedule stays last
    g = passes.run_pipeline(g, pipeline, verify_each=bool(os.environ.get("MINISPORE_VERIFY")),
                            dump=dump)
    ir.verify(g)
    return g, tree, list(b.parser.called_cells.values()), recorder


def run(fn, args, kwargs=None, *, parse=True, key_obj=None, name=None):
    """Compile (once per signature) and run `fn(*args, **kwargs)` as a graph."""
    kwargs = kwargs or {}
    if isinstance(executor.current, GraphBuilder):      # already inside a graph: inline
        p = executor.current.parser
        return p.call_function(fn, args, kwargs) if parse else fn(*args, **kwargs)
    if TAPE.depth:
        # an eager gradient is being taken through this call: interpret the source eagerly so
        # the tape sees every op (MindSpore differentiates through jit graphs the same way)
        from ..pynative import EAGER
        from .. import hooks
        hooks.INTERPRETED[0] += 1               # graph code run eagerly (ops.HookBackward)
        try:
            return as_output(Parser(EAGER).call_function(fn, args, kwargs) if parse
                             else fn(*args, **kwargs))
        finally:
            hooks.INTERPRETED[0] -= 1
    entry, tensors = _entry(fn, args, kwargs, parse, key_obj, name)
    ran["last"] = weakref.ref(entry)
    ran["calls"] += 1
    return _finish(entry, *entry.program.run([t._buf for t in tensors]), tensors)


def run_steps(fn, prefix, batches, *, key_obj=None, name=None):
    """`fn(*prefix, *batch)` compiled once and run for every batch in order (ms.data_sink),
    returning the last result. A program with `run_steps` (the CPU sink) runs all of them in ONE
    call over the stacked batches, carrying the assigned Parameters from step to step; otherwise
    (or when the batches' signatures differ) each step is one call."""
    calls = [tuple(prefix) + tuple(b) for b in batches]
    entry, tensors = _entry(fn, calls[0], {}, True, key_obj, name)
    multi = getattr(entry.program, "run_steps", None)
    if multi is not None and len(calls) > 1 and tensors:
        flat = [_flatten_args(list(mutable.graph_args(c, {})[0]) + [{}], []) for c in calls]
        if all(f[1] == flat[0][1] for f in flat[1:]):
            ran["last"] = weakref.ref(entry)
            ran["calls"] += 1
            stacked = [np.stack([t._buf for t in col]) for col in zip(*[f[0] for f in flat])]
            return _finish(entry, *multi(stacked), flat[-1][0])
    out = None
    for c in calls:
        out = run(fn, c, key_obj=key_obj, name=name)
    return out


def _entry(fn, args, kwargs, parse, key_obj, name):
    """The compiled entry for this call's signature and the Python values it read (compiling it
    the first time: cache.py) and the call's tensors in graph-input order."""
    objs: list = []
    args, kwargs = mutable.graph_args(args, kwargs)     # ms.mutable scalars: graph inputs
    tensors, sig = _flatten_args(list(args) + [kwargs], objs)
    site = (cache.fn_id(fn, objs), id(key_obj) if key_obj is not None else None)
    base = site + (sig, _options())
    locs = cache.guards_of(base)
    key = base + (locs.snapshots(fn),) if locs else base
    entry = cache.get(key)
    if entry is not None and not _params_match(entry.graph):
        entry = None                      # a Parameter changed shape or dtype: recompile
    if entry is None:
        args, kwargs = _arrays_to_tensors(args), _arrays_to_tensors(kwargs)
        name = name or getattr(fn, "__qualname__", "graph")
        try:
            g, tree, called, recorder = _build(fn, args, kwargs, parse, name)
        except Exception as e:
            if getattr(e, "_ms_located", False):
                # the message names the user's line; the parser's own frames are noise
                raise e.with_traceback(None) from None
            raise
        backend = current.backend or get_backend(context._state["device_target"])
        entry = Compiled(g, _program(g, backend), tree)
        stats["compiles"] += 1
        recorder.side_effects(fn, name)
        # the union with the locations guarded so far, old ones first: a key's snapshots always
        # read the same locations in the same order, so no two keys of one site can collide
        cells = _phase_cells(called + ([key_obj] if key_obj is not None else []))
        phase = [guards.AttrLoc(c, "training") for c in cells]
        locs = guards.merge(cache.guards_of(base) or (), phase + recorder.locations()
                            + guards.builtin_cell_locations(cells))
        if locs:
            cache.set_guards(base, locs)
            # as they are after the build; the objects they name go with the key (cache.put)
            snaps = tuple(loc.snap(fn, objs) for loc in locs)
            key = base + (snaps,)
        # one call site per user function: ms.grad's wrappers all share their own code
        cache.note_compile(site + (recorder.codes,), key, name, locs)
        cache.put(key, entry, objs + ([key_obj] if key_obj is not None else []))
    return entry, tensors


def _finish(entry, outs, assigns, inputs=()):
    """Land the Parameter assignments and wrap the outputs in the call's structure (`inputs`:
    the call's graph inputs)."""
    for p, buf in assigns:
        p._buf = buf
    return _rebuild(entry.out_tree, [wrap(o, v.dtype) for o, v in zip(outs,
                                                                          entry.graph.outputs)],
                    inputs)


def _phase_cells(roots) -> list:
    """The Cells (and sub-Cells) among `roots`, whose `training` flags a graph may have read."""
    out: dict = {}
    for r in roots:
        if hasattr(r, "cells_and_names"):
            for _, c in r.cells_and_names():
                out.setdefault(id(c), c)
    return list(out.values())


def _program(g, backend):
    """O2 sinks the whole graph into one program when the backend can lower every node (its
    `sink`); a sink that cannot raises NotImplementedError naming the node, and the graph then
    runs kernel by kernel (the O1 program: the eager kernels' algorithms and numbers) with a
    RuntimeWarning saying which graph, why, and how to ask for that without the warning.

    Tiered (MINISPORE_TIERED=1, the default; tiered.py): on a backend whose sink takes long to
    build (the CPU's native sink), the graph runs kernel by kernel at once while its sink
    program is built in the background, and on the sink's program from the first call after
    that. Not tiered: MINISPORE_TIERED=0, save_graphs (its native IR is written at compile
    time), a running profiler (it records the program the graph was compiled to) and
    MINISPORE_NATIVE_SINK other than 1 (no native program to wait for, or a bad value, which
    the synchronous path reports)."""
    if context._state["jit_level"] == "O2" and hasattr(backend, "sink"):
        if _tiers(backend):
            from .tiered import TieredProgram
            return TieredProgram(g, backend)
        try:
            prog = backend.sink(g)
            text = getattr(prog, "ir_text", None)       # the native sink's LLVM IR
            if text is not None and context._state["save_graphs"]:
                base, safe = _save_path(g.name)
                (base / f"{safe}_native.ll").write_text(text)
            return prog
        except NotImplementedError as e:
            import warnings
            from .tiered import fallback_message
            warnings.warn(fallback_message(g, backend, e), RuntimeWarning,
                          stacklevel=cache.user_stacklevel())
    return backend.program(g)


def _tiers(backend) -> bool:
    """Whether an O2 graph on `backend` runs tiered (see _program)."""
    from . import tiered
    from ..device import hooks
    return tiered.enabled() and backend.name in tiered.TIERED_BACKENDS and \
        not context._state["save_graphs"] and hooks.active is None and \
        os.environ.get("MINISPORE_NATIVE_SINK", "1") == "1"


def _save_path(name) -> tuple:
    """(save_graphs_path, created if needed; `name` made safe for a file name)."""
    base = Path(context._state["save_graphs_path"])
    base.mkdir(parents=True, exist_ok=True)
    return base, "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def _dumper(name):
    base, safe = _save_path(name)

    stages = itertools.count()

    def dump(stage, g):
        from .dot import to_dot
        stem = f"{safe}_{next(stages):02d}_{stage}"
        (base / f"{stem}.ir").write_text(g.text() + "\n")
        (base / f"{stem}.dot").write_text(to_dot(g))
    return dump


def clear_cache() -> None:
    cache.clear()


__all__ = ["run", "build", "clear_cache", "last_compiled", "stats", "sym"]
