"""Ordered parallel application of a Python callable to a stream of work items: the workers
behind `Dataset.map`, `Dataset.batch(per_batch_map=...)` and the parallel reading of a
random-access `GeneratorDataset`.

`ordered_map(fn, items, ...)` is a generator yielding `fn(item)` for every item, strictly in the
order of `items`. With one worker it calls `fn` in the caller's thread; with more it uses a
thread pool, or worker processes (forked, so `fn` need not be picklable; items and results
travel pickled) when `use_processes`. At most `prefetch` items are in flight, so a slow
consumer never makes the pipeline hold more than that many results. The pool starts on the
first `next()` and is shut down (processes terminated and joined) when the stream ends, when
the generator is closed, or when it is garbage-collected. An exception raised by `fn` is
re-raised in the consumer as MindSpore does: a RuntimeError whose message carries the
operation's name and the worker's traceback text.
"""
from __future__ import annotations

import collections
import traceback
from typing import Callable, Iterable, Iterator

_FAILED = "__minispore_dataset_worker_failed__"
_worker_fn: dict = {}                    # the callable of this worker process (set at fork)


def error_text(who: str, op_name: str, exc: BaseException) -> str:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return _format(who, op_name, type(exc).__name__, tb)


def _format(who: str, op_name: str, exc_type: str, tb: str) -> str:
    return (f"Exception thrown from user defined Python function in dataset.\n"
            f"{who} operation: [{op_name}] failed. Error description:\n{exc_type}: {tb}")


def op_name(fn) -> str:
    """The name an error message gives an operation: its class or function name."""
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "PyFunc" if name == "<lambda>" else name


def _call_guarded(fn, item, who, name):
    try:
        return fn(item)
    except Exception as e:                                     # re-raised by the consumer
        return (_FAILED, error_text(who, name, e))


def _set_worker_fn(fn, who, name):
    _worker_fn["fn"], _worker_fn["who"], _worker_fn["name"] = fn, who, name


def _run_in_worker(item):
    return _call_guarded(_worker_fn["fn"], item, _worker_fn["who"], _worker_fn["name"])


def _unwrap(result):
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], str) and \
            result[0] == _FAILED:
        raise RuntimeError(result[1])
    return result


class _ThreadWorkers:
    """A thread pool; closing cancels what has not started (a running call finishes)."""

    def __init__(self, fn, n, who, name):
        from concurrent.futures import ThreadPoolExecutor
        self.fn, self.who, self.name = fn, who, name
        self.pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix=f"dataset-{who}")

    def submit(self, item):
        return self.pool.submit(_call_guarded, self.fn, item, self.who, self.name)

    def result(self, handle):
        return handle.result()

    def close(self):
        self.pool.shutdown(wait=False, cancel_futures=True)


class _ProcessWorkers:
    """Forked worker processes (MindSpore's default start method), so `fn` is inherited, not
    pickled. A worker that dies (killed, out of memory) fails the stream instead of hanging
    it; closing terminates and joins every worker."""

    def __init__(self, fn, n, who, name):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        self.who, self.name = who, name
        self.pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork"),
                                        initializer=_set_worker_fn, initargs=(fn, who, name))

    def submit(self, item):
        return self.pool.submit(_run_in_worker, item)

    def result(self, handle):
        from concurrent.futures.process import BrokenProcessPool
        try:
            return handle.result()
        except BrokenProcessPool as e:
            raise RuntimeError(f"{self.who} operation: [{self.name}] failed: a worker process "
                               f"died ({e}); a worker killed by the system is often out of "
                               f"memory: lower num_parallel_workers or "
                               f"set_prefetch_size") from None

    def close(self):
        procs = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)


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
                prefetch: int, who: str = "map", name: str | None = None) -> Iterator:
    """fn(item) for each item, in order, computed by `num_workers` threads or processes with
    at most max(prefetch, num_workers) items in flight."""
    name = name or op_name(fn)
    if num_workers <= 1:
        for item in items:
            yield _unwrap(_call_guarded(fn, item, who, name))
        return
    workers = None
    pending: collections.deque = collections.deque()
    limit = max(prefetch, num_workers)
    try:
        source = iter(items)
        exhausted = False
        while True:
            while not exhausted and len(pending) < limit:
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    break
                if workers is None:              # start lazily: only once there is work
                    workers = (_ProcessWorkers if use_processes else _ThreadWorkers)(
                        fn, num_workers, who, name)
                pending.append(workers.submit(item))
            if not pending:
                return
            yield _unwrap(workers.result(pending.popleft()))
    finally:
        if workers is not None:
            workers.close()


__all__ = ["ordered_map", "op_name", "resolve_workers", "error_text"]
