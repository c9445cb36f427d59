"""PyNative's backward pass as one compiled program: the tape, replayed as a cached graph.

MindSpore's PyNative mode runs the forward op by op and the backward as a graph built from the
recorded ops. Here: after the forward ran eagerly, `pynative.backward` hands the tape it is
about to walk (the nodes leading from the outputs to the differentiated inputs, inputs first) to
`run`. The tape's *signature* — each node's op, attributes, input and output shapes/dtypes, and
which node's output feeds which input — is the same step after step in a training loop. The
HOT-th time a signature is seen at jit_level O2 (the default; O0/O1 keep the
kernel-by-kernel walk), the backward is compiled: `_replay` rebuilds the tape on
symbolic stand-ins for its buffers and runs the same `pynative.backward` through the
GraphBuilder (the bprop declarations replayed, exactly as `ms.grad` inside a graph), the passes
optimize it and the backend's `bprop_program` lowers it (on the CPU: the native sink, one native
call). Later steps pass the tape's buffers and the sensitivities to it in one call, instead
of ~10-20 eager bprop ops with their Python dispatch each. With MINISPORE_TIERED=1 (the default;
graph/tiered.py) the graph is built on the calling thread and its lowering queued on the
background compile worker: the HOT step and the ones after it walk the tape eagerly until the
program is ready (a failed lowering warns at the next step, as a synchronous one does); with
MINISPORE_TIERED=0 the HOT step compiles it before it runs.

Not compiled (the eager walk runs, as before): a one-off gradient (a signature seen fewer than
HOT times: tests and interactive use never pay a compile), a gradient taken while an outer
gradient records (grad of grad needs the backward ops on the tape), a backend without a
`bprop_program` (the simulated Ascend keeps its op-by-op PyNative device model; the GPU backend
has none yet), a profiler session (it shows the eager ops), MINISPORE_BPROP_GRAPH=0, and a tape
whose replay cannot be built or lowered (remembered per signature). The compiled backward is the
same bprops through the CPU sink, whose lowerings reproduce the eager kernels' operation order:
its gradients equal the eager walk's bit for bit on the MLP and LeNet training steps (tests); where
an eager kernel is the numpy reference (batch_norm, layer_norm) they agree to rounding.
"""
from __future__ import annotations

import os
import warnings

from . import context
from .device import Backend, current, get_backend, hooks
from .primitive import executor

HOT = 3                 # a tape signature seen this many times is compiled
_MAX_ENTRIES = 64        # compiled backwards kept (each holds its arena); a loop uses one or two
_seen: dict = {}        # signature -> times seen (below HOT)
_compiled: dict = {}    # signature -> _Backward, or None when it cannot be compiled
stats = {"compiles": 0, "runs": 0}


def enabled() -> bool:
    return os.environ.get("MINISPORE_BPROP_GRAPH", "1") != "0"


def run(order: list, roots: list, sens: list, targets: list) -> list | None:
    """The gradients `pynative.backward` would return, from the compiled backward of this tape;
    None when the eager walk should run instead."""
    from .pynative import EAGER
    if executor.current is not EAGER or hooks.active is not None or not order or \
            context._state["jit_level"] != "O2" or not enabled():
        return None
    backend = current.backend or get_backend(context._state["device_target"])
    if type(backend).bprop_program is Backend.bprop_program:    # no compiled backward there
        return None
    sig, bufs = _signature(order, roots, sens, targets, backend)
    try:
        entry = _compiled.get(sig, False)
    except TypeError:                       # an attribute that cannot be hashed: stay eager
        return None
    if entry is False:
        seen = _seen.get(sig, 0) + 1
        if seen < HOT:
            if len(_seen) > 4 * _MAX_ENTRIES:
                _seen.clear()
            _seen[sig] = seen
            return None
        _seen.pop(sig, None)
        if len(_compiled) >= _MAX_ENTRIES:
            _compiled.clear()
        from .graph import tiered
        if tiered.enabled():
            entry = _compiled[sig] = _Backward.submit(sig, bufs, backend)
        else:
            entry = _compiled[sig] = _Backward.build(sig, bufs, backend)
    if entry.__class__ is _Pending:
        entry = entry.take(sig)
    if entry is None:
        return None
    stats["runs"] += 1
    return entry(bufs)


def _signature(order, roots, sens, targets, backend) -> tuple:
    """(hashable signature of the tape, the buffers the compiled backward reads, in order).

    Per node: (op, attrs, input descriptors, output metas). An input is either the output of an
    earlier node in `order` holding the same buffer — (node index, output index) — or a
    value of its own, passed as a buffer — (shape, dtype, link, target), where link is the
    producing node's (index, output) when that node is on the tape (its gradient still flows
    there) and target the position in `targets` of the input's tape identity. Every node output
    is passed as a buffer too (bprops may read it). Targets that are node outputs are named by
    (node index, output index) in the targets' own descriptors."""
    idx = {node: k for k, node in enumerate(order)}
    tpos: dict = {}
    for k, t in enumerate(targets):
        tpos.setdefault(t, k)                   # a target listed twice: its first position
    bufs: list = []
    parts = []
    for node in order:
        ins = []
        for buf, shape, dtype, ref in node.inputs:
            link = None
            if ref.__class__ is tuple:
                k = idx.get(ref[0])
                if k is not None:
                    if ref[0].outputs[ref[1]][0] is buf:
                        ins.append((k, ref[1]))
                        continue
                    link = (k, ref[1])
            bufs.append(buf)
            ins.append((shape, dtype, link, None if ref is None else tpos.get(ref)))
        outs = []
        for buf, shape, dtype in node.outputs:
            bufs.append(buf)
            outs.append((shape, dtype))
        parts.append((node.op, node.attrs, tuple(ins), tuple(outs)))
    root_desc = []
    for r in roots:
        ref = r._node
        if ref.__class__ is tuple and ref[0] in idx:
            root_desc.append((idx[ref[0]], ref[1]))
        else:
            root_desc.append(None if ref is None else tpos.get(ref))
    sens_desc = []
    for s in sens:
        bufs.append(s._buf)
        sens_desc.append((s.shape, s.dtype))
    target_desc = tuple((idx[t[0]], t[1]) if t.__class__ is tuple and t[0] in idx else tpos[t]
                        for t in targets)
    sig = (tuple(parts), tuple(root_desc), tuple(sens_desc), target_desc, backend.name)
    return sig, bufs


def _replay(sig):
    """fn(*tensors) that rebuilds the tape of `sig` on the given (symbolic) tensors and runs
    pynative.backward over it; returns the gradients (None where there is none)."""
    from .pynative import Leaf, TapeNode, _tensor, backward
    parts, root_desc, sens_desc, target_desc = sig[:4]

    def replay(*ts):
        it = iter(ts)
        leaves = [Leaf() for _ in target_desc]
        nodes = []

        def ref_of(link, tgt):
            if link is not None:
                return (nodes[link[0]], link[1])
            return None if tgt is None else leaves[tgt]
        for op, attrs, ins, outs in parts:
            recs = []
            for d in ins:
                if len(d) == 2:                 # an earlier node's output, same buffer
                    k, i = d
                    buf, shape, dtype = nodes[k].outputs[i]
                    recs.append((buf, shape, dtype, (nodes[k], i)))
                else:
                    shape, dtype, link, tgt = d
                    recs.append((next(it)._buf, shape, dtype, ref_of(link, tgt)))
            nodes.append(TapeNode((op, attrs, tuple(recs),
                                   tuple((next(it)._buf, shape, dtype) for shape, dtype in outs))))
        roots = []
        for d in root_desc:
            if d.__class__ is tuple:
                k, i = d
                buf, shape, dtype = nodes[k].outputs[i]
                roots.append(_tensor(buf, shape, dtype, (nodes[k], i)))
            else:
                roots.append(_tensor(None, (), None, None if d is None else leaves[d]))
        sens = [next(it) for _ in sens_desc]
        targets = [(nodes[d[0]], d[1]) if d.__class__ is tuple else leaves[d]
                   for d in target_desc]
        return tuple(backward(roots, sens, targets))
    return replay


class _Backward:
    """One compiled backward: the program and which of the signature's buffers it reads."""

    def __init__(self, program, keep, tree, out_dtypes):
        self.program, self.keep, self.tree, self.out_dtypes = program, keep, tree, out_dtypes

    @classmethod
    def build(cls, sig, bufs, backend):
        """Compile the backward of `sig` (None when the replay cannot be built or lowered: the
        eager walk then runs, and raises whatever a genuine error is)."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g, keep, tree = _graph(sig, bufs)
                program = backend.bprop_program(g)
        except Exception as e:      # noqa: BLE001 - anything: the eager walk takes over
            _warn_not_compiled(e)
            return None
        return cls.made(program, keep, tree, g)

    @classmethod
    def made(cls, program, keep, tree, g):
        """The compiled backward of a lowered program, None where the backend gave none."""
        if program is None:
            return None
        stats["compiles"] += 1
        return cls(program, keep, tree, [v.dtype for v in g.outputs])

    @classmethod
    def submit(cls, sig, bufs, backend):
        """The backward of `sig` built as `build` does, its graph here (the replay uses the
        executor, the context and the tape: this thread's) and its program lowered on the
        background worker (graph/tiered.py): a _Pending, or None as `build` returns."""
        from .graph import tiered
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g, keep, tree = _graph(sig, bufs)
        except Exception as e:      # noqa: BLE001 - anything: the eager walk takes over
            _warn_not_compiled(e)
            return None
        return _Pending(tiered.submit(lambda: backend.bprop_program(g), g.name), keep, tree, g)

    def __call__(self, bufs: list) -> list:
        from .graph.compile import _rebuild
        from .tensor import wrap
        outs, _ = self.program.run([bufs[j] for j in self.keep])
        return list(_rebuild(self.tree, [wrap(o, d) for o, d in zip(outs, self.out_dtypes)]))


def _graph(sig, bufs):
    """(the optimized graph of the backward of `sig`, which buffers it reads, the gradients'
    output tree)."""
    from .graph import compile as graph_compile
    from .graph import ir
    from .pynative import _tensor
    metas = _buffer_metas(sig)
    args = [_tensor(b, s, d, None) for b, (s, d) in zip(bufs, metas)]
    g, tree, _ = graph_compile.build(_replay(sig), args, {}, False, "pynative_bprop")
    used = {v.id for n in g.all_nodes() for v in n.inputs} | {v.id for v in g.outputs}
    keep = [j for j, v in enumerate(g.inputs) if v.id in used]
    g.inputs = [g.inputs[j] for j in keep]
    ir.verify(g)
    return g, keep, tree


class _Pending:
    """A backward whose program is being lowered on the background worker: the eager walk
    runs until it is ready."""

    def __init__(self, build, keep, tree, g):
        self.build, self.keep, self.tree, self.g = build, keep, tree, g

    def take(self, sig):
        """The _Backward (or None) once the build finished, recorded for `sig`; until then
        None. A failed build warns here, on the calling thread, as `build`'s failure does."""
        from .graph import tiered
        if not self.build.done():
            return None
        b = self.build
        entry = None
        if b.error is None:
            entry = _Backward.made(b.result, self.keep, self.tree, self.g)
        elif not isinstance(b.error, tiered.Cancelled):
            _warn_not_compiled(b.error)
        if _compiled.get(sig) is self:
            _compiled[sig] = entry
        return entry

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the build finished (tests): whether it did."""
        return self.build.wait(timeout)


_WARNED: set = set()


def _warn_not_compiled(e: Exception) -> None:
    """Say once per distinct reason that a backward could not be compiled: the eager walk gives
    the same gradients, so nothing is wrong with the numbers, but a silent fallback would hide a
    fault of the replay (and a step that stays slow)."""
    reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if reason in _WARNED:
        return
    _WARNED.add(reason)
    warnings.warn(f"PyNative: the repeated backward could not be compiled ({reason}); the "
                  f"tape's eager walk computes the gradients instead (the same numbers, slower). "
                  f"MINISPORE_BPROP_GRAPH=0 turns the compiled backward off", RuntimeWarning,
                  stacklevel=4)


def _buffer_metas(sig) -> list:
    """(shape, dtype) of each buffer `_signature` collects, in its order."""
    parts, _, sens_desc = sig[:3]
    metas = []
    for _, _, ins, outs in parts:
        metas += [(d[0], d[1]) for d in ins if len(d) == 4]
        metas += list(outs)
    return metas + list(sens_desc)


def clear() -> None:
    _seen.clear()
    _compiled.clear()
