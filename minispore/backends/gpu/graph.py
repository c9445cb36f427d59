"""jit_level O2 on the GPU: the step captured once as CUDA graphs and replayed.

The program is the O1 program (fused groups as generated RawKernels, matmul on cuBLAS eagerly
and on the generator's GEMM kernel inside a capture, where CuPy refuses cuBLAS calls; buffers
freed after their last use) split at host control flow: every maximal run of kernel steps is a
*segment*, captured as one CUDA graph the first time it runs and replayed with one launch after
that; tensor-conditioned If/While and print nodes stay on the host between segments (their
branches and loop bodies run kernel by kernel), since the host must read the condition. So a
graph without control flow is one segment, one graph launch per call.

Per segment the analysis says which slots it reads from outside (graph inputs, Parameters,
values of earlier segments or host steps), which of the slots it writes are needed afterwards
(read later, graph outputs, Parameter assignments), and which it frees. A replay copies every
read value into the segment's static input buffer (a device-to-device copy, or host-to-device
for a host array), launches the graph, and copies each needed output out of the graph's buffer
into a fresh one: buffers are immutable, and the next replay overwrites the graph's buffers.
A Parameter that a segment both reads and assigns (a training step's weights) stays resident
in the graph's static input buffer: the captured graph ends by copying the new value into that
buffer, the Parameter takes the buffer itself, and the next replay finds it already there, so
neither copy runs on the host (for the MLP step: 6 of 8 copies in and 6 of 7 copies out). The
buffer is then updated in place by each replay, as MindSpore updates Parameters in graph mode.
This needs the old value unread after the segment and the new one needed only by the
assignment; otherwise the Parameter is copied in and out like any value.
If capturing a segment fails, a RuntimeWarning names the reason and that segment runs kernel by
kernel from then on. A segment of a single kernel is never captured: its replay would wrap the same
one launch in copies in and out (an `add` at O2 took 46 us replayed against 17 us eager on an
H200), so it runs kernel by kernel too.

The CUDA side (runtime.capture) runs in the `gpu`-marked tests on a GPU (an H200 so far); the
segmentation, copy-in/copy-out and replay logic are also tested on the CPU with a recording
runtime (tests/gpu/test_graph_capture.py).
"""
from __future__ import annotations

import warnings

from ...core.graph.execute import Program

KERNEL_STEPS = ("k", "c", "free", "assign")


class Segment:
    """A run of kernel steps captured as one CUDA graph."""

    def __init__(self, steps: list):
        self.steps = steps
        self.reads: list = []            # slots read from outside, in first-use order
        self.escapes: list = []          # written slots needed afterwards (copied out)
        self.const_escapes: list = []    # constant slots needed afterwards (shared as they are)
        self.freed: list = []            # slots whose last use is in the segment
        self.assigns: list = []          # (slot, Parameter) in program order
        self.resident: list = []         # (input slot, assigned slot, Parameter): see above
        self.kernels = sum(1 for s in steps if s[0] == "k")
        self.graph = None
        self.static: dict = {}
        self.outs: dict = {}
        self.failed: str | None = None


def _sub_reads(sub) -> set:
    ins, steps, res = sub
    out = set(res)
    for s in steps:
        out |= _reads_of(s)
    return out


def _reads_of(st) -> set:
    kind = st[0]
    if kind == "k":
        return set(st[2])
    if kind == "assign":
        return {st[1]}
    if kind == "print":
        return set(st[1])
    if kind == "if":
        return {st[1]} | _sub_reads(st[2]) | _sub_reads(st[3])
    if kind == "while":
        return set(st[1]) | _sub_reads(st[2]) | _sub_reads(st[3])
    return set()


class CudaGraphProgram(Program):
    MIN_KERNELS = 2                       # kernels a segment needs to be worth capturing

    def __init__(self, graph, backend):
        super().__init__(graph, backend)
        self.rt = backend.rt
        self.plan = self._split(self.steps)
        self.segments = [p for p in self.plan if isinstance(p, Segment)]

    def _split(self, steps) -> list:
        items: list = []
        run: list = []
        for st in steps:
            # a host callback (ops.Custom pyfunc) stays on the host between segments
            if st[0] in KERNEL_STEPS and not (st[0] == "k" and getattr(st[1], "host", False)):
                run.append(st)
                continue
            if run:
                items.append(Segment(run))
                run = []
            items.append(st)
        if run:
            items.append(Segment(run))
        later = set(self.out_slots)
        param_slot = {id(p): s for s, p in self.param_slots}
        for item in reversed(items):
            if isinstance(item, Segment):
                self._analyse(item, later)
                self._residents(item, later, param_slot)
                later |= set(item.reads)
            else:
                later |= _reads_of(item)
        return items

    @staticmethod
    def _analyse(seg: Segment, later: set) -> None:
        written, consts, reads = set(), set(), []
        for st in seg.steps:
            kind = st[0]
            if kind == "k":
                reads += [i for i in st[2] if i not in written and i not in reads]
                written.update(st[3])
            elif kind == "c":
                written.update(st[2])
                consts.update(st[2])
            elif kind == "assign":
                seg.assigns.append((st[1], st[2]))
            elif kind == "free":
                seg.freed += list(st[1])
        needed = later | {s for s, _ in seg.assigns}
        order = [o for st in seg.steps if st[0] in ("k", "c") for o in
                 (st[3] if st[0] == "k" else st[2])]
        seg.reads = reads
        seg.escapes = [w for w in order if w in needed and w not in consts]
        seg.const_escapes = [w for w in order if w in needed and w in consts]

    @staticmethod
    def _residents(seg: Segment, later: set, param_slot: dict) -> None:
        """The Parameters kept in the segment's static buffers (module docstring)."""
        for w, p in seg.assigns:
            r = param_slot.get(id(p))
            if r is None or r not in seg.reads or r in later or w in later or \
                    any(r == r2 or w == w2 for r2, w2, _ in seg.resident):
                continue
            seg.resident.append((r, w, p))
        kept = {w for _, w, _ in seg.resident}
        seg.escapes = [w for w in seg.escapes if w not in kept]

    # -- running ----------------------------------------------------------------------------
    def run(self, args: list):
        env, assigns = self._env(args), []
        for item in self.plan:
            if isinstance(item, Segment):
                self._run_segment(item, env, assigns)
            else:
                self._run([item], env, assigns)
        return [env[s] for s in self.out_slots], assigns

    def _run_segment(self, seg: Segment, env: list, assigns: list) -> None:
        if seg.graph is None and seg.failed is None and seg.kernels >= self.MIN_KERNELS:
            self._capture(seg, env)
        if seg.graph is None:                 # nothing to capture, or the capture failed
            self._run(seg.steps, env, assigns)
            return
        rt = self.rt
        for r in seg.reads:
            if env[r] is not seg.static[r]:           # a resident Parameter is there already
                rt.copy_into(seg.static[r], env[r])
        seg.graph.launch()
        rt.counters["graph_launches"] += 1
        for s in seg.freed:
            env[s] = None
        for w in seg.escapes:
            env[w] = rt.copy_out(seg.outs[w])
        for w in seg.const_escapes:
            env[w] = seg.outs[w]
        for r, w, _ in seg.resident:                 # the graph copied the new value there
            env[w] = seg.static[r]
        for slot, p in seg.assigns:
            assigns.append((p, env[slot]))

    def _capture(self, seg: Segment, env: list) -> None:
        rt = self.rt
        keep = seg.escapes + seg.const_escapes
        kept = set(keep) | {w for _, w, _ in seg.resident}
        # a value needed after the segment (an assigned Parameter's new value, say a Momentum
        # accumulator) may have its last use inside it: in the capture it must outlive the
        # segment, or its buffer is back in the graph's pool and a later kernel of the same
        # capture overwrites it
        steps = [("free", [s for s in st[1] if s not in kept]) if st[0] == "free" else st
                 for st in seg.steps]

        def prepare():
            return {r: rt.fresh(env[r]) for r in seg.reads}

        def body(static):
            local = list(env)
            for r, b in static.items():
                local[r] = b
            self._run(steps, local, [])
            for r, w, _ in seg.resident:              # last in the graph: nothing reads r after
                rt.copy_into(static[r], local[w])
            return {w: local[w] for w in keep}
        try:
            seg.graph, (seg.static, seg.outs) = rt.capture(prepare, body)
        except Exception as e:                  # noqa: BLE001  (reported, then kernel by kernel)
            seg.failed = f"{type(e).__name__}: {e}"
            warnings.warn(f"jit_level O2 on GPU: graph '{self.graph.name}': capturing a segment "
                          f"of {seg.kernels} kernels as a CUDA graph failed ({seg.failed}); it "
                          f"runs kernel by kernel", RuntimeWarning, stacklevel=2)

    def stats(self) -> dict:
        """Segments, captured graphs, host control-flow steps and kernels per segment."""
        return {"segments": len(self.segments),
                "captured": sum(1 for s in self.segments if s.graph is not None),
                "failed": [s.failed for s in self.segments if s.failed],
                "host_steps": sum(1 for p in self.plan if not isinstance(p, Segment)),
                "kernels": [s.kernels for s in self.segments]}
