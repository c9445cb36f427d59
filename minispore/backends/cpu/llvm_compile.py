"""LLVM's work on one module (optimisation, then machine code), in this process or in helper
processes that share a batch of modules.

`compile_module` is the one definition of how a native module becomes object code: LLVM's
pipeline at `speed` (3: O3 with loop and SLP vectorisation; 0-2 for code that only moves
addresses) and machine code from a target machine of the same level. native_jit.py calls it for
one module; `compile_batch` spreads a batch over this process and up to `workers` helper
processes. llvmlite serialises every call into LLVM behind one process-wide lock, so threads
cannot compile two modules at once; a helper process can. A helper runs this file alone (it
imports nothing but llvmlite: ~0.2 s to start) with the same target, reads its modules from a
file and writes their object code to another, so the objects are the bytes this process would
have made. A batch smaller than what a helper's start-up costs compiles here.
"""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile

# IR lines a helper's start-up is worth (O3 takes ~0.2-0.3 ms per line of a kernel module)
_STARTUP_LINES = 800
# what a line costs at each level, relative to O3 (ResNet-50's 43k-line glue: 0.19 s at O0)
_LINE_COST = {0: 0.02, 1: 0.5}


def compile_module(llvm, machine, ir_text: str, speed: int) -> bytes:
    """Object code of one module of LLVM IR text, for target machine `machine` (of opt level
    `speed`)."""
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=speed)
    pto.loop_vectorization = pto.slp_vectorization = speed >= 2
    pb = llvm.create_pass_builder(machine, pto)
    pb.getModulePassManager().run(mod, pb)
    return machine.emit_object(mod)


def _frames(items: list) -> bytes:
    return b"".join(struct.pack("<q", len(x)) + x for x in items)


def _unframe(blob: bytes) -> list:
    out, at = [], 0
    while at < len(blob):
        (n,) = struct.unpack_from("<q", blob, at)
        out.append(blob[at + 8:at + 8 + n])
        at += 8 + n
    return out


def _helper_main(argv) -> None:
    """A helper process: argv = cpu, features, jobs file, results file. Jobs are frames of
    (speed digit + IR text); results the object code of each, in order."""
    import llvmlite.binding as llvm
    cpu, feats, jobs, results = argv
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machines: dict = {}
    objs = []
    with open(jobs, "rb") as f:
        for job in _unframe(f.read()):
            speed, text = int(job[:1]), job[1:].decode()
            if speed not in machines:
                machines[speed] = llvm.Target.from_default_triple().create_target_machine(
                    cpu=cpu, features=feats, opt=speed, jit=True)
            objs.append(compile_module(llvm, machines[speed], text, speed))
    with open(results, "wb") as f:
        f.write(_frames(objs))


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def default_workers() -> int:
    """MINISPORE_LLVM_WORKERS (a non-negative integer; 0: no helper), else one helper per spare
    core, at most 3."""
    env = os.environ.get("MINISPORE_LLVM_WORKERS", "")
    if env == "":
        return max(0, min(cores() - 1, 3))
    if not env.isdigit():
        raise ValueError(f"MINISPORE_LLVM_WORKERS must be a non-negative integer (helper "
                         f"processes for LLVM compiles; 0: none), got {env!r}")
    return int(env)


def _plan(costs: list, helpers: int) -> list:
    """Bins (bin 0: this process) of job indices, longest first into the least loaded bin; a
    helper's bin starts loaded by its start-up."""
    loads = [0.0] + [float(_STARTUP_LINES)] * helpers
    bins: list = [[] for _ in loads]
    for j in sorted(range(len(costs)), key=lambda j: -costs[j]):
        k = min(range(len(loads)), key=loads.__getitem__)
        bins[k].append(j)
        loads[k] += costs[j]
    return bins


def compile_batch(jobs: list, compile_here, target: tuple, workers: int | None = None) -> list:
    """Object code of each (ir_text, speed) job, in order: `compile_here(text, speed)` for this
    process's share, helper processes (at most `workers`; default: one per spare core, up to 3,
    MINISPORE_LLVM_WORKERS overrides, 0 = none) for the rest when the batch is worth their
    start-up. A helper that fails leaves its share to this process."""
    if workers is None:
        workers = default_workers()
    costs = [text.count("\n") * _LINE_COST.get(speed, 1.0) for text, speed in jobs]
    helpers = max(0, min(workers, int(sum(costs) // (2 * _STARTUP_LINES))))
    bins = _plan(costs, helpers) if helpers else [list(range(len(jobs)))]
    bins = [b for k, b in enumerate(bins) if k == 0 or b]
    out: list = [None] * len(jobs)
    procs = []
    with tempfile.TemporaryDirectory(prefix="minispore-llvm-") as tmp:
        for k, share in enumerate(bins[1:], 1):
            src, dst = os.path.join(tmp, f"jobs{k}"), os.path.join(tmp, f"objs{k}")
            with open(src, "wb") as f:
                f.write(_frames([b"%d" % jobs[j][1] + jobs[j][0].encode() for j in share]))
            cmd = [sys.executable, __file__, *target, src, dst]
            try:
                procs.append((share, dst, subprocess.Popen(
                    cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
            except OSError:
                bins[0].extend(share)
        for j in bins[0]:
            out[j] = compile_here(*jobs[j])
        for share, dst, proc in procs:
            _, err = proc.communicate()
            objs = []
            if proc.returncode == 0:
                with open(dst, "rb") as f:
                    objs = _unframe(f.read())
            if len(objs) != len(share):
                objs = [compile_here(*jobs[j]) for j in share]
            for j, obj in zip(share, objs):
                out[j] = obj
    return out


if __name__ == "__main__":
    _helper_main(sys.argv[1:])
