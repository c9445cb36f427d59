"""Tiered execution: a graph runs kernel by kernel while its O2 program is built in the background.

The CPU's O2 program (the native sink: one native call of the graph's shared kernels) can take
seconds to build at model scale; the kernel-by-kernel program of the same optimized graph (the O1
program: the eager kernels, shape-generic numba loops cached on disk, BLAS, and native one-node
programs for the convolutions, reductions and norms) needs no whole-graph compile. Which is made
first depends on the caches: with every cache cold, or for convolution nets (whose eager kernels
are native programs of their static shapes too), the two take similar times.
`TieredProgram(graph, backend)` builds `backend.sink(graph)` on the ONE background worker of the
process and, when that build has not finished within HEAD_START_S, makes `backend.program(graph)`
on a helper thread beside it; a call runs the sink's program once its build finished, else the
O1 program (the first call waits for whichever of the two is made first).
PyNative's compiled backward (core/bprop_graph.py) queues its LLVM part on the same worker, and
every build holds `COMPILE_LOCK` while it runs (a compile elsewhere that takes it too never
overlaps one of these builds). llvmlite itself serialises every LLVM C-API call behind one lock,
so LLVM work on the worker and on other threads (numba loading or compiling the O1 kernels, the
eager native kernels) never runs at the same time; it interleaves call by call.

What this module owns:
- the worker: `submit(fn, name)` queues a build and returns its `Build` (`done()`, `wait()`,
  `result` or `error`); builds run one at a time in submission order; `wait_all(timeout)`
  blocks until every queued build finished. At process exit a build
  in flight is waited for (it may be writing the disk cache, and an LLVM call must not be cut
  off by interpreter shutdown); builds not yet started are cancelled. A forked child queues
  the builds its parent had not finished again, on a worker of its own.
- `TieredProgram`: `run(bufs)` and `run_steps(stacked)` return `(outputs, [(Parameter, new
  buffer)])` as both programs do, so Parameter assignments land the same way whichever tier
  ran. `active` is the tier of the latest call ("O1" or "O2"; None before the first),
  `sink_program` the O2 program once it is in use, `wait(timeout)` blocks until the build
  finished. A build that raises (NotImplementedError: the sink cannot lower a node; or any other
  exception) leaves the calls on the O1 program, and the next call issues, once and on the
  calling thread, the RuntimeWarning the synchronous path gives (`fallback_message`).
- `enabled()`: MINISPORE_TIERED, "1" (the default) or "0" (compile._program then builds the O2
  program before the first call, as without this module).

Numbers: the O1 and O2 programs of the CPU give the same bits on the MLP, LeNet and conv +
BatchNorm training steps (tests/graph/test_tiered.py), so a switch between calls changes no
result. PyNative's compiled backward equals the eager walk as bprop_graph.py says (bit for bit on
the MLP and LeNet steps; to rounding where an eager kernel is the numpy reference), whichever
step it starts at.
"""
from __future__ import annotations

import atexit
import os
import queue
import threading
import warnings
import weakref

COMPILE_LOCK = threading.RLock()   # held by every background build while it runs
# backends whose sink program takes long to build (the CPU's: LLVM). The simulated Ascend's sink
# is a task list made at once, whose clocks model an O2 launch from the first call; the GPU's
# captures its CUDA graphs on the calling thread's device at run time.
TIERED_BACKENDS = frozenset({"CPU"})
# how long a sink build runs alone before the O1 program is made beside it. A sink program found
# in the disk cache takes 0.05-0.3 s (LeNet, a 64-layer MLP, ResNet-18 steps), a cold one from
# half a second to many. The race is not free: on 2 cores the O1 build takes CPU from the sink
# build, and its numba kernels load numba (~55 MB). Measured there with every cache cold, the
# digits MLP and LeNet steps' sink builds take 0.6 and 1.0 s alone; racing from 0.5 s they took
# 0.8 and 1.6 s, the first step came no sooner (0.78 and 1.14 s) and the peak RSS rose from 139
# and 142 MB to 155 and 195 MB. So only a build still running after 2 s is raced.
HEAD_START_S = 2.0

_queue: queue.SimpleQueue = queue.SimpleQueue()
_state = {"thread": None, "running": None, "closing": False, "atexit": False}
_start_lock = threading.Lock()
_helpers: set = set()               # threads making O1 programs
_unfinished: weakref.WeakSet = weakref.WeakSet()     # builds queued or running


def enabled() -> bool:
    """MINISPORE_TIERED: "1" (the default) runs O2 graphs kernel by kernel until their native
    program is built in the background, "0" builds it before the first call; any other value is
    an error."""
    value = os.environ.get("MINISPORE_TIERED", "1")
    if value not in ("0", "1"):
        raise ValueError(f"MINISPORE_TIERED must be '1' (O2 graphs run kernel by kernel while "
                         f"their native program is built in the background, the default) or "
                         f"'0' (the native program is built before the first call), got "
                         f"{value!r}")
    return value == "1"


class Cancelled(Exception):
    """The process exited before the build started."""


class Build:
    """One queued build: `fn()` run on the worker; `result` or `error` once `done()`."""

    def __init__(self, fn, name: str, on_done=None):
        self.fn, self.name, self._on_done = fn, name, on_done
        self.result, self.error = None, None
        self._done = threading.Event()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the build finished (or `timeout` seconds passed): whether it finished."""
        return self._done.wait(timeout)

    def _run(self) -> None:
        try:
            with COMPILE_LOCK:
                self.result = self.fn()
        except Exception as e:      # noqa: BLE001 - every failure is reported to the caller
            self.error = e
        finally:
            self.fn = None          # the closure holds the graph: drop it
            self._finish()

    def _cancel(self) -> None:
        self.error, self.fn = Cancelled(f"build of '{self.name}' cancelled at exit"), None
        self._finish()

    def _finish(self) -> None:
        _unfinished.discard(self)
        self._done.set()
        if self._on_done is not None:
            self._on_done()


def submit(fn, name: str, on_done=None) -> Build:
    """Queue `fn()` (a program build) on the background worker; the Build that reports it
    (`on_done()` is called on the worker once it finished)."""
    build = Build(fn, name, on_done)
    with _start_lock:
        if _state["closing"]:
            build._cancel()
            return build
        _unfinished.add(build)
        _queue_locked(build)
    return build


def wait_all(timeout: float | None = None) -> bool:
    """Block until every build queued so far and every O1 program being made beside one has
    finished or been abandoned (or `timeout` seconds passed in all): whether they all did.
    Benchmarks call it to time the steady state: an O1 program still compiling its kernels
    holds the GIL while the O2 program runs (it is abandoned only between two kernels)."""
    import time
    end = None if timeout is None else time.monotonic() + timeout

    def left():
        return None if end is None else max(0.0, end - time.monotonic())
    for build in list(_unfinished):
        if not build.wait(left()):
            return False
    with _start_lock:
        helpers = list(_helpers)
    for t in helpers:
        t.join(left())
        if t.is_alive():
            return False
    return True


def _queue_locked(build: Build) -> None:
    """Put `build` on the worker's queue, starting the worker first if none runs (_start_lock
    held)."""
    if _state["thread"] is None:
        t = threading.Thread(target=_work, name="minispore-tiered-compile", daemon=True)
        _state["thread"] = t
        if not _state["atexit"]:
            # registered after the compilers' modules were imported: runs before their handlers
            atexit.register(_at_exit)
            _state["atexit"] = True
        t.start()
    _queue.put(build)


def _work() -> None:
    while True:
        build = _queue.get()
        with _start_lock:
            if _state["closing"]:
                build._cancel()
                continue
            _state["running"] = build
        try:
            build._run()
        finally:
            _state["running"] = None


def _start_helper(fn, name: str) -> None:
    """Run `fn()` on a thread of its own (an O1 program being made; waited for at exit)."""
    def run():
        try:
            fn()
        finally:
            with _start_lock:
                _helpers.discard(t)
    t = threading.Thread(target=run, name=f"minispore-tiered {name}", daemon=True)
    with _start_lock:
        _helpers.add(t)
    t.start()


def _at_exit() -> None:
    """Cancel the builds not started and wait for the one in flight (and for the O1 programs
    being made: their kernels may be writing the disk cache too)."""
    with _start_lock:
        _state["closing"] = True
        running = _state["running"]
        helpers = list(_helpers)
    for t in helpers:
        t.join()
    while True:
        try:
            _queue.get_nowait()._cancel()
        except queue.Empty:
            break
    if running is not None:
        running.wait()


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's threads: its locks start released, a new worker
    is started when needed, and the builds the parent had not finished are queued again there
    (each still holds its function), so the child's programs get their sink programs too."""
    global _queue
    COMPILE_LOCK._at_fork_reinit()
    _start_lock._at_fork_reinit()
    _queue = queue.SimpleQueue()
    _state.update(thread=None, running=None, closing=False)
    _helpers.clear()
    for build in list(_unfinished):
        if build.fn is not None:
            _queue_locked(build)


os.register_at_fork(after_in_child=_after_fork_in_child)


def fallback_message(graph, backend, e: Exception) -> str:
    """The RuntimeWarning's text when the O2 program of `graph` could not be built."""
    if isinstance(e, NotImplementedError):
        why = f"the {backend.name} sink cannot lower {e}"
    else:
        why = f"building its {backend.name} sink program failed ({type(e).__name__}: {e})"
    return (f"jit_level O2: graph '{graph.name}' runs kernel by kernel (as O1) because {why}; "
            f"set jit_level='O1' to run it so without this warning")


class TieredProgram:
    """The O1 program of `graph` until the backend's sink program is built (see module).

    The O1 program is made on a helper thread while the worker builds the sink's, from
    HEAD_START_S seconds after the build started (unless the build has finished by then): the
    first call runs whichever is ready first. A sink program whose machine code is in the disk
    cache is then ready without any O1 work competing with it; a long build is raced by the O1
    program (both need the GIL and llvmlite's one lock for every LLVM call, so a race costs the
    winner up to the loser's work)."""

    def __init__(self, graph, backend):
        self.graph, self.backend = graph, backend
        self.o1_program = self.sink_program = None
        self.active: str | None = None
        self._failure: str | None = None        # the warning the next call issues
        self._o1_error: Exception | None = None
        self._cond = threading.Condition()
        self._build = submit(lambda: backend.sink(graph), graph.name, self._notify)
        build = self._build
        _start_helper(lambda: self._make_o1(build), f"{graph.name} O1")

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _make_o1(self, build) -> None:
        if build.wait(HEAD_START_S) and build.error is None:
            return                            # the sink's program serves every call
        from .execute import BUILD_STOP, BuildAbandoned
        # once the sink's program is built, the O1 one would never run: stop compiling its
        # kernels (they compete with the calls for the GIL and the cores)
        BUILD_STOP.check = lambda: build.done() and build.error is None
        try:
            prog = self.backend.program(self.graph)
        except BuildAbandoned:
            return
        except Exception as e:      # noqa: BLE001 - raised on the calling thread if needed
            prog, self._o1_error = None, e
        finally:
            BUILD_STOP.check = None
        with self._cond:
            self.o1_program = prog
            self._cond.notify_all()

    def _current(self):
        """The program this call runs: the sink's once its build finished, else the O1
        program, waiting for the first of the two to be made."""
        with self._cond:
            while True:
                prog = self._pick()
                if prog is not None:
                    return prog
                self._cond.wait()

    def _pick(self):
        if self.sink_program is not None:
            return self.sink_program
        build = self._build
        if build is not None and build.done():
            self._build = None
            if build.error is None:
                self.sink_program = build.result
                return self.sink_program
            if not isinstance(build.error, Cancelled):
                self._failure = fallback_message(self.graph, self.backend, build.error)
        if self.o1_program is not None:
            return self.o1_program
        if self._o1_error is not None and self._build is None:
            raise self._o1_error              # neither program could be made
        return None

    def _warn(self) -> None:
        if self._failure is not None:
            msg, self._failure = self._failure, None
            from .cache import user_stacklevel
            warnings.warn(msg, RuntimeWarning, stacklevel=user_stacklevel())

    def run(self, bufs: list):
        prog = self._current()
        self._warn()
        self.active = "O2" if prog is self.sink_program else "O1"
        return prog.run(bufs)

    def run_steps(self, stacked: list):
        """The steps over stacked inputs: in one call of the sink's `run_steps` when it is in
        use and has one; otherwise one `run` per step, each step's assignments landed before
        the next (as separate calls land them); the last step's outputs and assignments."""
        prog = self._current()
        self._warn()
        self.active = "O2" if prog is self.sink_program else "O1"
        multi = getattr(prog, "run_steps", None)
        if multi is not None:
            return multi(stacked)
        outs, assigns = [], []
        for i in range(stacked[0].shape[0]):
            outs, assigns = prog.run([a[i] for a in stacked])
            for p, buf in assigns:
                p._buf = buf
        return outs, assigns

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the O2 build finished (or `timeout` seconds passed): whether it did. The
        next call then runs the sink's program (or, after a failed build, warns)."""
        build = self._build
        return True if build is None else build.wait(timeout)

    @property
    def ready(self) -> bool:
        """Whether the build finished (successfully or not)."""
        return self._build is None or self._build.done()

    @property
    def kernel_launches(self) -> int:
        """Kernels one call launches, on the tier the next call runs."""
        return self._current().kernel_launches

    @property
    def ir_text(self):
        """The sink's LLVM IR (waiting for the build), or None where it has none."""
        self.wait()
        return getattr(self._current(), "ir_text", None)

    def __getattr__(self, name: str):
        """Anything else a program offers (stats, lib, arena_bytes, ...): the O2 program's,
        waiting for its build; the O1 program's when the build failed."""
        if name.startswith("__") or name in ("o1_program", "sink_program", "_build",
                                             "graph", "backend"):
            raise AttributeError(name)
        self.wait()
        return getattr(self._current(), name)
