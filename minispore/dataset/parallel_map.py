"""Ordered parallel application of a Python callable to a stream of work items: the workers
behind `Dataset.map`, `Dataset.batch(per_batch_map=...)`, `filter` and the parallel reading of
a random-access `GeneratorDataset`.

`ordered_map(fn, items, ...)` is a generator yielding `fn(item)` for every item, strictly in the
order of `items`. With one worker it calls `fn` in the caller's thread; with more it uses
dedicated worker threads, or worker processes (forked, MindSpore's default start method, so
`fn` need not be picklable; items go in chunks and results come back pickled, through two
pipes per worker) when `use_processes`; `inline_start_s` lets the caller's thread
compute the first items of a pure `fn` (a map of built-in transforms) so that a small input
never starts processes. Chunk k goes to worker k % n, and every worker has its own copy of
the operation's state (a fork's copy; for threads, what `make_fn(worker)` gives it), so which
worker computes a row never depends on timing. At most max(`prefetch`, workers) items are in
flight on threads, `prefetch` (even: rounded down, at least 2) per worker process, so a slow
consumer never makes the pipeline hold more.

Workers start on the first `next()`. Inside an iterator (`WorkerSession`, which the dataset
iterators make active while they pull a row) the workers of an operation live across its
epochs (a worker's random state goes on from one epoch to the next) and are shut down when
the iterator finishes its last epoch, is stopped or is garbage-collected; outside one they
live for one pass. A worker that raises makes the reader raise MindSpore's RuntimeError with
the operation's name and the worker's traceback text; a worker process that dies fails the
pipeline instead of hanging it. A worker process ignores Ctrl-C (the reader handles it and
stops the workers) and ends by itself when its reader's process is gone.
"""
from __future__ import annotations

import itertools
import os
import queue
import threading
import time
import traceback
from typing import Callable, Iterable, Iterator

_FAILED = "__minispore_dataset_worker_failed__"
_STOP = "__minispore_dataset_worker_stop__"
_current = threading.local()             # the WorkerSession of the iterator pulling a row


def error_text(who: str, op_name: str, exc: BaseException) -> str:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return (f"Exception thrown from user defined Python function in dataset.\n"
            f"{who} operation: [{op_name}] failed. Error description:\n"
            f"{type(exc).__name__}: {tb}")


def op_name(fn) -> str:
    """The name an error message gives an operation: its class or function name."""
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "PyFunc" if name == "<lambda>" else name


def _call_guarded(fn, item, who, name):
    try:
        return fn(item)
    except Exception as e:                                     # re-raised by the consumer
        return (_FAILED, error_text(who, name, e))


def _is_failure(result) -> bool:
    return isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], str) and \
        result[0] == _FAILED


def _unwrap(result):
    if _is_failure(result):
        raise RuntimeError(result[1])
    return result


def _serve(fn, inbox, outbox, who, name, get=None):
    """A worker's loop: chunks (lists of items) from inbox, their lists of results to outbox,
    in order, until _STOP."""
    get = get or inbox.get
    while True:
        chunk = get()
        if isinstance(chunk, str) and chunk == _STOP:
            return
        outbox.put([_call_guarded(fn, item, who, name) for item in chunk])


def _serve_in_child(make_fn, worker, inbox, outbox, who, name, parent: int):
    import os
    import signal
    import sys
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the reader's to handle
    cv2 = sys.modules.get("cv2")
    if cv2 is not None:             # the workers share the cores: one OpenCV thread each
        cv2.setNumThreads(1)        # (its results do not depend on the thread count)

    def get():                      # a worker whose reader died (killed) ends too
        while True:
            try:
                return inbox.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != parent:
                    return _STOP
    _serve(make_fn(worker), inbox, outbox, who, name, get)


_PIPE_BYTES = 1 << 20               # Linux's default limit for a pipe's buffer


def _pipe(ctx):
    """A one-way pipe (reader, writer, capacity in bytes), its buffer enlarged where the
    system allows (Linux) so that a chunk of rows goes through in one write."""
    reader, writer = ctx.Pipe(duplex=False)
    capacity = 1 << 16
    try:
        import fcntl
        fcntl.fcntl(writer.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        capacity = fcntl.fcntl(writer.fileno(), fcntl.F_GETPIPE_SZ)
    except (ImportError, AttributeError, OSError):
        pass
    return reader, writer, capacity


class _PipeBox:
    """A worker process's outbox: a one-way pipe the worker writes its pickled results to in
    its own thread (no feeder thread, so one hop less per chunk than a multiprocessing
    Queue); only the parent reads it, in order, so a full pipe only waits for the reader."""

    def __init__(self, ctx):
        self.reader, self.writer, _ = _pipe(ctx)

    def put(self, obj) -> None:
        self.writer.send(obj)

    def get(self, timeout: float):
        if not self.reader.poll(timeout):
            raise queue.Empty
        return self.reader.recv()

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


class _PipeInbox:
    """A worker process's inbox, written by the reader's own thread: a chunk whose pickle
    takes at most a quarter of the pipe's buffer goes straight through the pipe (with at
    most two chunks in flight per worker the write never waits, so the reader cannot block
    on a worker that blocks on it, and no feeder thread takes the reader's GIL); a larger one
    goes through a multiprocessing Queue, an empty message in the pipe marking its turn."""

    def __init__(self, ctx):
        self.reader, self.writer, capacity = _pipe(ctx)
        self.small = capacity // 4
        self.large = ctx.Queue()

    def put(self, obj) -> None:
        from multiprocessing.reduction import ForkingPickler
        data = ForkingPickler.dumps(obj)
        if len(data) <= self.small:
            self.writer.send_bytes(data)
        else:
            self.large.put(bytes(data))
            self.writer.send_bytes(b"")

    def get(self, timeout: float = None):
        if not self.reader.poll(timeout):
            raise queue.Empty
        data = self.reader.recv_bytes()
        if not data:
            data = self.large.get()
        import pickle
        return pickle.loads(data)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()
        self.large.cancel_join_thread()
        self.large.close()


class _Workers:
    """n dedicated workers (threads or forked processes), each with its own in/out queue;
    chunk k of items goes to worker k % n, so results come back in order by reading the
    workers in turn."""

    def __init__(self, make_fn, n, use_processes, who, name):
        self.n, self.who, self.name, self.processes = n, who, name, use_processes
        self.sent = self.received = 0
        self.busy = False                  # a pass is reading it (a shared pool serves one)
        self.closed = False
        if use_processes:
            import multiprocessing
            ctx = multiprocessing.get_context("fork")
            self.queues = [(_PipeInbox(ctx), _PipeBox(ctx)) for _ in range(n)]
            self.procs = [ctx.Process(target=_serve_in_child, daemon=True,
                                      args=(make_fn, w, i, o, who, name, os.getpid()),
                                      name=f"dataset-{who}-{w}")
                          for w, (i, o) in enumerate(self.queues)]
        else:
            self.queues = [(queue.SimpleQueue(), queue.SimpleQueue()) for _ in range(n)]
            self.procs = [threading.Thread(target=_serve, daemon=True,
                                           args=(make_fn(w), i, o, who, name),
                                           name=f"dataset-{who}-{w}")
                          for w, (i, o) in enumerate(self.queues)]
        for p in self.procs:
            p.start()

    @property
    def in_flight(self) -> int:
        return self.sent - self.received

    def submit(self, item) -> None:
        self.queues[self.sent % self.n][0].put(item)
        self.sent += 1

    def result(self):
        w = self.received % self.n
        outbox = self.queues[w][1]
        if not self.processes:
            out = outbox.get()
        else:
            while True:
                try:
                    out = outbox.get(timeout=0.2)
                    break
                except queue.Empty:
                    if not self.procs[w].is_alive():
                        raise RuntimeError(
                            f"{self.who} operation: [{self.name}] failed: a worker process "
                            f"died (exit code {self.procs[w].exitcode}); one killed by the "
                            f"system is often out of memory: lower num_parallel_workers or "
                            f"dataset.config.set_prefetch_size") from None
        self.received += 1
        return out

    def drain(self) -> None:
        """Wait for and drop the results in flight (a pass stopped early), so the next pass
        starts clean."""
        while self.in_flight:
            self.result()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.processes:
            for p in self.procs:
                if p.is_alive():
                    p.terminate()
            for p in self.procs:
                p.join(timeout=5)
            for i, o in self.queues:
                i.close()
                o.close()
        else:
            for i, _ in self.queues:
                i.put(_STOP)
        self.procs = []


class WorkerSession:
    """The worker pools of one iterator, kept across its epochs, closed with it."""

    def __init__(self):
        self.pools: dict = {}
        self.closed = False

    def pool(self, key, start: Callable[[], _Workers]) -> _Workers | None:
        """The pool of `key` (started on first use), or None while another pass reads it."""
        if key not in self.pools:
            self.pools[key] = start()
        pool = self.pools[key]
        return None if pool.busy else pool

    def close(self) -> None:
        self.closed = True
        pools, self.pools = self.pools, {}
        for p in pools.values():
            p.close()

    def __enter__(self):
        self._outer = getattr(_current, "session", None)
        _current.session = self
        return self

    def __exit__(self, *exc):
        _current.session = self._outer


def resolve_workers(who: str, num_parallel_workers, python_multiprocessing,
                    max_rowsize) -> int:
    """Check the worker arguments of an operation; the worker count (None: the configured
    default, `config.get_num_parallel_workers()`)."""
    from ..core.arg_checks import check_bool
    from . import config
    if num_parallel_workers is None:
        num_parallel_workers = config.get_num_parallel_workers()
    if not isinstance(num_parallel_workers, int) or isinstance(num_parallel_workers, bool) \
            or num_parallel_workers < 1:
        raise ValueError(f"{who}: num_parallel_workers must be an int >= 1, got "
                         f"{num_parallel_workers!r}")
    check_bool(who, "python_multiprocessing", python_multiprocessing)
    sizes = max_rowsize if isinstance(max_rowsize, list) and len(max_rowsize) == 2 \
        else [max_rowsize]
    if max_rowsize is not None and not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= -1 for v in sizes):
        raise ValueError(f"{who}: max_rowsize must be None, an int >= -1 or a list of two "
                         f"such ints (MB of shared memory per row), got {max_rowsize!r}")
    return num_parallel_workers


def ordered_map(fn: Callable, items: Iterable, num_workers: int, use_processes: bool,
                prefetch: int, who: str = "map", name: str | None = None, key=None,
                make_fn: Callable[[int], Callable] | None = None,
                inline_start_s: float | None = None) -> Iterator:
    """fn(item) for each item, in order, computed by `num_workers` threads or processes with
    at most max(prefetch, num_workers) items in flight on threads, prefetch per process.
    `make_fn(worker)` gives a worker its own callable (default: fn); `key` names the pool in
    the active WorkerSession. With
    `inline_start_s`, the caller's thread computes the first items itself until they took
    that long, and the workers start only if items remain (for a pure `fn` only: which
    thread or process computes an item must not change its result)."""
    name = name or op_name(fn)
    if num_workers <= 1:
        for item in items:
            yield _unwrap(_call_guarded(fn, item, who, name))
        return
    make_fn = make_fn or (lambda worker: fn)
    session = getattr(_current, "session", None)
    shared = session is not None and not session.closed and key is not None
    if inline_start_s is not None and not (shared and key in session.pools):
        items = iter(items)
        spent = 0.0
        for item in items:
            start = time.perf_counter()
            result = _call_guarded(fn, item, who, name)
            spent += time.perf_counter() - start
            yield _unwrap(result)
            if spent >= inline_start_s:
                break
        else:
            return
    workers = None
    limit = max(prefetch, num_workers)
    # processes get items in chunks (one pickled message each way per chunk, not per item);
    # threads one at a time. Chunks are cut at fixed counts, so the workers' shares of the
    # rows never depend on timing.
    # processes: two chunks of prefetch / 2 items per worker (one computing while the reader
    # takes the other's results; as MindSpore, whose every worker has a queue of prefetch
    # rows, a worker process holds up to `prefetch` items); threads: one item a chunk
    chunk = max(1, min(32, prefetch // 2)) if use_processes else 1
    max_chunks = 2 * num_workers if use_processes else limit
    failed = False
    try:
        source = iter(items)
        exhausted = False
        while True:
            while not exhausted and (workers is None or workers.in_flight < max_chunks):
                part = list(itertools.islice(source, chunk))
                if len(part) < chunk:
                    exhausted = True
                if not part:
                    break
                if workers is None:              # start lazily: only once there is work
                    def start():
                        return _Workers(make_fn, num_workers, use_processes, who, name)
                    workers = session.pool(key, start) if shared else None
                    if workers is None:          # no session, or its pool is busy
                        shared, workers = False, start()
                    workers.busy = True
                workers.submit(part)
            if workers is None or not workers.in_flight:
                return
            for result in workers.result():
                failed = _is_failure(result)
                yield _unwrap(result)
    except GeneratorExit:                        # the reader stopped this pass early
        raise
    except BaseException:
        failed = True
        raise
    finally:
        if workers is not None:
            workers.busy = False
            if workers.closed:
                pass                             # its iterator ended first
            elif shared and not failed:
                workers.drain()                  # kept for the iterator's next epoch
            else:
                if shared:
                    session.pools.pop(key, None)
                workers.close()


__all__ = ["ordered_map", "op_name", "resolve_workers", "error_text", "WorkerSession"]
