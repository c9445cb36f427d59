"""Shared helpers for minispore's benchmark scripts (this file owns them; scripts import it).

What lives here, and why:

- **Timing** (``measure``): ``time.perf_counter`` around a loop of N calls, N chosen so that one
  repeat lasts about ``target_s`` (0.1-0.3 s), several repeats; the first call and the
  calibration runs are warm-up and are not reported.  Samples are seconds per op.
- **Peer discovery** (``find_peer``): torch, jax and MindSpore are never dependencies of
  minispore; they are found in the current interpreter, through ``MINISPORE_PEER_<NAME>`` (a path
  to a python executable), or in ``/work/venvs/<name>`` / ``~/.venvs/<name>``.
- **Running a measurement in another interpreter** (``run_case``/``child_entry``): every
  implementation runs in a fresh process (no state shared between frameworks, a crash or a
  missing import becomes "skipped: <reason>").  The child imports this file (stdlib only at top
  level, so any peer interpreter can), executes the case's code and prints one JSON line back.
  The parent also measures the CPU that other processes used meanwhile ("foreign load"), since
  the machine may be shared.
- **Reporting**: number formatting, ratios, and ``print_table`` (``rich`` if importable, else a
  plain aligned text table).
"""
from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
JSON_MARKER = "@@MINISPORE_BENCH_JSON@@"
PEER_ROOTS = ("/work/venvs", os.path.expanduser("~/.venvs"))


# --------------------------------------------------------------------------- timing

def _time_once(run, n: int) -> float:
    t0 = time.perf_counter()
    run(n)
    return time.perf_counter() - t0


def measure(run, *, target_s: float = 0.15, repeats: int = 5, max_n: int | None = None) -> dict:
    """Time ``run(n)`` (which performs n ops, including any sync it needs at the end).

    Returns ``{"n", "samples" (seconds per op, one per repeat), "first_call_s"}``.
    """
    first = _time_once(run, 1)                       # compile / cache fill: warm-up, reported apart
    n, elapsed = 1, _time_once(run, 1)
    while elapsed < target_s / 10 and (max_n is None or n < max_n):
        n = n * 10 if elapsed < target_s / 1000 else n * 4
        if max_n is not None:
            n = min(n, max_n)
        elapsed = _time_once(run, n)                 # calibration doubles as warm-up
    n = max(1, int(n * target_s / max(elapsed, 1e-9)))
    if max_n is not None:
        n = min(n, max_n)
    samples = [_time_once(run, n) / n for _ in range(repeats)]
    return {"n": n, "samples": samples, "first_call_s": first}


def summarize(samples: list[float]) -> tuple[float, float, float]:
    """(median, min, max) of a list of samples."""
    return statistics.median(samples), min(samples), max(samples)


# --------------------------------------------------------------------------- peers

def find_peer(name: str, module: str) -> tuple[str | None, str]:
    """Find a python interpreter that can import ``module`` (a peer framework).

    Order: ``MINISPORE_PEER_<NAME>`` (an explicit choice wins), the current interpreter, then
    ``/work/venvs/<name>/bin/python`` and ``~/.venvs/<name>/bin/python``.
    Returns ``(python_path, how_found)``, or ``(None, reason)`` when there is none.  The child
    process still reports an import failure as a skip.
    """
    var = f"MINISPORE_PEER_{name.upper()}"
    explicit = os.environ.get(var)
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit, f"${var}"
        return None, f"${var}={explicit} is not an executable file"
    import importlib.util
    if importlib.util.find_spec(module) is not None:
        return sys.executable, "current interpreter"
    tried = [os.path.join(root, name, "bin", "python") for root in PEER_ROOTS]
    for path in tried:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path, path
    return None, (f"{module} not importable here, ${var} unset, no {' or '.join(tried)}"
                  f" (see benchmarks/README.md)")


# --------------------------------------------------------------------------- child side

def _emit(obj: dict) -> None:
    sys.stdout.write("\n" + JSON_MARKER + json.dumps(obj) + "\n")
    sys.stdout.flush()


def _one_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0] if msg else ''}".strip()


def child_entry() -> None:
    """Entry point of the measuring process: read the case from stdin, print one JSON line.

    The case's ``code`` must define ``make(shape) -> run`` or ``-> {"run": run, "max_n": int}``,
    where ``run(n)`` performs n ops; it may define ``VERSIONS`` (a dict) and ``NOTE`` (a str),
    and ``EXTRA`` (a JSON-able dict that ``make``/``run`` may fill, e.g. with a first-call time
    or a correctness check; sent back as ``"extra"`` after every shape has run).
    An exception while executing ``code`` (typically an ImportError) becomes a skip.
    """
    spec = json.load(sys.stdin)
    for p in reversed(spec.get("sys_path", [])):
        sys.path.insert(0, p)
    ns: dict = {"__name__": "__bench_case__"}
    try:
        exec(compile(spec["code"], "<bench case>", "exec"), ns)
    except BaseException as exc:  # noqa: BLE001 - any failure to set up means "skipped"
        _emit({"status": "skipped", "reason": _one_line(exc),
               "traceback": traceback.format_exc()})
        return
    out = {"status": "ok", "python": sys.version.split()[0], "executable": sys.executable,
           "versions": ns.get("VERSIONS", {}), "note": ns.get("NOTE", ""), "shapes": {}}
    for shape in spec["shapes"]:
        key = str(tuple(shape))
        try:
            made = ns["make"](tuple(shape))
            run, max_n = (made["run"], made.get("max_n")) if isinstance(made, dict) else (made, None)
            out["shapes"][key] = measure(run, target_s=spec["target_s"],
                                         repeats=spec["repeats"], max_n=max_n)
        except BaseException as exc:  # noqa: BLE001
            out["shapes"][key] = {"error": _one_line(exc), "traceback": traceback.format_exc()}
    out["extra"] = ns.get("EXTRA", {})
    _emit(out)


# --------------------------------------------------------------------------- parent side

def _busy_jiffies() -> int | None:
    """CPU time (in clock ticks) used by the whole machine so far, or None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)   # idle + iowait
    return sum(fields[:8]) - idle


def machine_load(interval_s: float = 0.5) -> float | None:
    """Share of all CPUs busy over ``interval_s`` (this process sleeps meanwhile), or None."""
    b0 = _busy_jiffies()
    time.sleep(interval_s)
    b1 = _busy_jiffies()
    if b0 is None or b1 is None:
        return None
    return (b1 - b0) / os.sysconf("SC_CLK_TCK") / (interval_s * (os.cpu_count() or 1))


def wait_for_quiet(max_wait_s: float, threshold: float = 0.25) -> float | None:
    """Wait (at most ``max_wait_s``) until other processes use < ``threshold`` of the CPUs.

    Returns the last load seen (None off Linux).  The machine may be shared: a benchmark started
    while tests run measures the tests.
    """
    deadline = time.monotonic() + max_wait_s
    load = machine_load()
    while load is not None and load >= threshold and time.monotonic() < deadline:
        load = machine_load()
    return load


def run_case(python: str, code: str, *, shapes, target_s: float, repeats: int,
             sys_path=(), env: dict | None = None, timeout: float = 300) -> dict:
    """Run one case in a fresh ``python`` process (cwd: a scratch dir) and return its JSON.

    Adds ``wall_s`` and ``foreign_load`` (share of all CPUs used by other processes while the
    child ran, or None when unknown).  Never raises for a child failure: returns a skip.
    """
    spec = {"code": code, "shapes": [list(s) for s in shapes], "target_s": target_s,
            "repeats": repeats, "sys_path": list(sys_path)}
    boot = (f"import sys; sys.path.insert(0, {BENCH_DIR!r}); "
            "import _harness; _harness.child_entry()")
    child_env = dict(os.environ, **(env or {}))
    # Python's bytecode cache as in an installed package: pip compiled the peers' .pyc files at
    # install time (PYTHONDONTWRITEBYTECODE does not stop reading them), while this checkout's
    # modules would be compiled from source in every process (~0.07 s inside minispore's first
    # graph call, which imports the native sink lazily)
    child_env.pop("PYTHONDONTWRITEBYTECODE", None)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0, t0 = _busy_jiffies(), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="minispore-bench-") as scratch:
        try:
            proc = subprocess.run([python, "-c", boot], input=json.dumps(spec), cwd=scratch,
                                  env=child_env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "skipped", "reason": f"timed out after {timeout:.0f} s"}
        except OSError as exc:
            return {"status": "skipped", "reason": _one_line(exc)}
    wall, busy1 = time.perf_counter() - t0, _busy_jiffies()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(JSON_MARKER)]
    if not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "skipped", "reason": f"child exited {proc.returncode}: {tail}"}
    result = json.loads(lines[-1][len(JSON_MARKER):])
    result["wall_s"] = wall
    result["foreign_load"] = None
    if busy0 is not None and busy1 is not None and wall > 0:
        hz = os.sysconf("SC_CLK_TCK")
        child_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
        foreign = (busy1 - busy0) / hz - child_cpu
        result["foreign_load"] = max(0.0, foreign / (wall * (os.cpu_count() or 1)))
    return result


def machine_info() -> dict:
    """A few facts to store next to the numbers."""
    info = {"python": sys.version.split()[0], "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


# --------------------------------------------------------------------------- reporting

def fmt_num(x: float | None) -> str:
    """About 3 significant digits, never in exponent form (0.361, 8.58, 46.2, 3925)."""
    if x is None:
        return "-"
    ax = abs(x)
    if ax >= 100:
        return f"{x:.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_cell(median: float, lo: float, hi: float) -> str:
    """'median (min–max)'."""
    return f"{fmt_num(median)} ({fmt_num(lo)}\u2013{fmt_num(hi)})"


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is zero."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def print_table(headers: list[str], rows: list[list[str]], title: str = "") -> None:
    """Print a table: with ``rich`` when it is importable, else as aligned plain text."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        Console = None
    if Console is not None:
        table = Table(title=title or None)
        for i, h in enumerate(headers):
            table.add_column(h, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*row)
        Console(width=max(120, shutil.get_terminal_size().columns)).print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    if title:
        print(title)
    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


# --------------------------------------------------------------------------- the shared runner
# (graph_vs_eager.py, eager_dispatch.py and train_digits.py run their cases through these)

# Graph modes (minispore's and MindSpore's) read the Python source of construct/jitted functions,
# which an exec'd string does not have: a case's model code is written to a .py file in the
# child's scratch cwd by `load_source(name, src)` and imported, as a user's model file would be.
SOURCE_LOADER = """
import importlib.util, os, sys
def load_source(name, src):
    path = os.path.abspath(name + ".py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
"""

LOAD_LIMIT = 0.25   # foreign CPU share above which a run is repeated once, then flagged '!'
PEER_MODULES = {"torch": "torch", "jax": "jax", "mindspore": "mindspore"}
CHILD_ENV = {"JAX_PLATFORMS": "cpu", "GLOG_v": "3", "TF_CPP_MIN_LOG_LEVEL": "2"}


def locate(peer: str | None) -> tuple[str | None, str, list[str]]:
    """(python, how found / skip reason, extra sys.path) for a case's peer (None: this
    interpreter; "minispore": this interpreter + the repository root)."""
    if peer is None:
        return sys.executable, "current interpreter", []
    if peer == "minispore":           # the package under test, from this checkout
        return sys.executable, "current interpreter + repo root", [REPO_ROOT]
    python, how = find_peer(peer, PEER_MODULES[peer])
    return python, how, []


def resolve(res: dict, peer: str | None) -> tuple[str, list[str]] | None:
    """(python, extra sys.path) for a row's peer, noting in the row how it was found; None, with
    the row marked skipped and why, when the peer is missing."""
    python, how, sys_path = locate(peer)
    res["python"], res["found"] = python, how
    if python is None:
        res["skipped"] = how
        return None
    return python, sys_path


def fresh_cache_dir(tmp_root: str) -> str:
    """An empty minispore kernel cache directory (MINISPORE_CACHE_DIR) under tmp_root."""
    return tempfile.mkdtemp(prefix="cache-", dir=tmp_root)


class Runner:
    """Runs cases with the quiet-wait / retry-once-under-load policy: before each process, wait
    (a few seconds with --quick, 20 s otherwise) for the machine to be quiet; a run during which
    other processes used more than LOAD_LIMIT of the CPUs is repeated once (the second run is
    kept, flagged if still loaded). `args` has quick, target_s and repeats."""

    def __init__(self, args, timeout: float | None = None):
        self.args = args
        self.quiet_wait_s = 3 if args.quick else 20
        self.timeout = timeout or (90 if args.quick else 300)
        self.retried = 0
        self.loads: list[float] = []

    def run(self, key, python, code, shapes, sys_path, *, env_for_attempt=None, target_s=None,
            repeats=None, timeout=None):
        """One process (plus one retry when another process loaded the machine)."""
        for attempt in range(2):
            env = dict(CHILD_ENV, **(env_for_attempt(attempt) if env_for_attempt else {}))
            wait_for_quiet(self.quiet_wait_s)
            out = run_case(python, code, shapes=shapes, target_s=target_s or self.args.target_s,
                           repeats=repeats or self.args.repeats, sys_path=sys_path, env=env,
                           timeout=timeout or self.timeout)
            if (out["status"] != "ok" or attempt == 1
                    or (out.get("foreign_load") or 0) <= LOAD_LIMIT):
                break
            self.retried += 1
            print(f"    {key}: foreign load {out['foreign_load']:.0%}, repeating once",
                  file=sys.stderr, flush=True)
        if out.get("foreign_load") is not None:
            self.loads.append(out["foreign_load"])
        return out
