"""`python -m minispore check script.py [args]`: run a script in PyNative and in GRAPH_MODE and
report where the two differ, and list every graph-syntax problem of the script at once.

1. Graph syntax, statically: every `construct` of a class and every function decorated with
   `jit` is walked for the statements and expressions the graph parser rejects (the parser's
   own table, core/graph/parser.py), so all of them are reported together, each with its line,
   instead of one per run.
2. Two runs, each in a fresh interpreter with the mode forced (the script's own
   `set_context(mode=...)` calls keep their other options; the mode is the checked one). Their
   printed output is compared line by line; numbers in a line are compared with a relative
   tolerance (`--rtol`, default 1e-5: the graph may fuse, so the last bits can differ) and the
   first differing line is shown from both runs. A run that fails shows its error.
Exit status: 0 when the runs agree and no syntax problem was found, 1 otherwise.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

_BOOT = r"""
import runpy, sys
import minispore as ms
from minispore.core import context as _c
mode = {"PYNATIVE": ms.PYNATIVE_MODE, "GRAPH": ms.GRAPH_MODE}[sys.argv[1]]
_set = _c.set_context
def _forced(*a, **kw):
    kw.pop("mode", None)
    return _set(*a, **kw) if kw or a else None
_set(mode=mode)
_c.set_context = _forced
ms.set_context = _forced
ms.context.set_context = _forced
script = sys.argv[2]
sys.argv = sys.argv[2:]
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(script)))
runpy.run_path(script, run_name="__main__")
"""

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _is_jit(dec) -> bool:
    node = dec.func if isinstance(dec, ast.Call) else dec
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name == "jit"


def graph_functions(tree):
    """The functions graph mode parses: Cell `construct`s and `@jit` functions."""
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            for f in cls.body:
                if isinstance(f, ast.FunctionDef) and f.name == "construct":
                    yield f"{cls.name}.construct", f
    for f in ast.walk(tree):
        if isinstance(f, ast.FunctionDef) and any(_is_jit(d) for d in f.decorator_list):
            yield f.name, f


def syntax_problems(path: str) -> list:
    """[(line, function, what)] for every construct the graph parser rejects."""
    from .core.graph.parser import _UNSUPPORTED
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    out = []
    seen = set()
    for name, fn in graph_functions(tree):
        for node in ast.walk(fn):
            if node is fn:
                continue
            what = _UNSUPPORTED.get(type(node))
            if what is not None and (node.lineno, what) not in seen:
                seen.add((node.lineno, what))
                out.append((node.lineno, name, what))
    return sorted(out)


def run_in_mode(path: str, mode: str, args: list, timeout: float):
    """(returncode, stdout, stderr) of the script run with the mode forced."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-c", _BOOT, mode, path, *args], capture_output=True,
                       text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def lines_agree(a: str, b: str, rtol: float) -> bool:
    if a == b:
        return True
    na, nb = _NUMBER.findall(a), _NUMBER.findall(b)
    if len(na) != len(nb) or _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(na, nb):
        fx, fy = float(x), float(y)
        if fx != fy and not abs(fx - fy) <= rtol * max(abs(fx), abs(fy)):
            if not (fx != fx and fy != fy):          # nan == nan here
                return False
    return True


def first_difference(a: str, b: str, rtol: float):
    """(line number, PyNative line, GRAPH line) of the first disagreement, or None."""
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<no more output>"
        y = lb[i] if i < len(lb) else "<no more output>"
        if not lines_agree(x, y, rtol):
            return i + 1, x, y
    return None


def check(path: str, args: list = (), rtol: float = 1e-5, timeout: float = 600,
          out=sys.stdout) -> int:
    bad = False
    problems = syntax_problems(path)
    if problems:
        bad = True
        print(f"graph syntax: {len(problems)} problem(s) in {path}:", file=out)
        for line, fn, what in problems:
            print(f"  line {line} ({fn}): graph mode does not support {what}", file=out)
    runs = {m: run_in_mode(path, m, list(args), timeout) for m in ("PYNATIVE", "GRAPH")}
    for m, (rc, _, err) in runs.items():
        if rc != 0:
            bad = True
            tail = "\n    ".join(err.strip().splitlines()[-6:])
            print(f"{m} run failed (exit status {rc}):\n    {tail}", file=out)
    (_, a, _), (_, b, _) = runs["PYNATIVE"], runs["GRAPH"]
    diff = first_difference(a, b, rtol)
    if diff is not None:
        bad = True
        n, x, y = diff
        print(f"printed output differs first at line {n}:\n  PyNative: {x}\n  GRAPH:    {y}",
              file=out)
    if not bad:
        print(f"PyNative and GRAPH_MODE agree: {len(a.splitlines())} printed line(s) "
              f"compared (rtol {rtol}), no graph-syntax problem", file=out)
    return 1 if bad else 0
