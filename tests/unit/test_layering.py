"""The layering rule of the package: `minispore/core/` is the ground floor and imports nothing
above it (`minispore.nn`, `minispore.common`, the public `minispore.ops`, `minispore.backends`,
`dataset`, `train`, `profiler`, `bench`), not even lazily inside a function. Upper layers reach
core through registration (core/cells.py, core/context.py's option validators, core/tensor.py's
initializer factory, core/device.py's backend modules, default Program and program
observers). Strings naming such a module count as imports. The last tests keep the modules of
`minispore/backends/` from growing import cycles between them."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "minispore"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path):
    """(line, imported module name) for every import in the file, at any depth (module level,
    inside functions and classes), relative imports resolved against the file's package."""
    tree = ast.parse(path.read_text(), filename=str(path))
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None:
                # `from . import x` / `from .. import x`: each name may be a submodule
                for alias in node.names:
                    yield node.lineno, f"{target}.{alias.name}"
            else:
                yield node.lineno, target


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_core_imports_nothing_above_core():
    offenders = []
    for path in sorted((PKG / "core").rglob("*.py")):
        for line, name in _imports(path):
            if _inside(name, "minispore") and not _inside(name, "minispore.core"):
                offenders.append(f"{path.relative_to(PKG.parent)}:{line}: imports {name}")
    assert not offenders, ("minispore/core must not import the packages above it; register "
                           "with core instead:\n  " + "\n  ".join(offenders))


_MODULE_NAME = re.compile(r"minispore(\.\w+)+")


def test_core_names_no_module_above_core():
    """A string that is a module name above core (what importlib would import) is an import
    too: the backends register their module names with core.device instead."""
    offenders = []
    for path in sorted((PKG / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    _MODULE_NAME.fullmatch(node.value) and \
                    not _inside(node.value, "minispore.core"):
                offenders.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: "
                                 f"names {node.value!r}")
    assert not offenders, "\n  ".join(["core names modules above it:"] + offenders)


# Modules low inside core and what they must not reach up to: the device registry and the side
# effect ops are below the graph layer (it registers its Program and picture writer with
# device.py, and each executor implements assign/print for state.py), and the memory planner
# reads the IR, not control-flow autodiff.
BELOW = {
    "core/device.py": ("minispore.core.graph",),
    "core/ops/state.py": ("minispore.core.graph",),
    "core/graph/memplan.py": ("minispore.core.graph.cf_grad", "minispore.core.graph.builder"),
}


@pytest.mark.parametrize("path", sorted(BELOW))
def test_low_core_modules_do_not_import_the_layers_above_them(path):
    offenders = [f"minispore/{path}:{line}: imports {name}"
                 for line, name in _imports(PKG / path)
                 if any(_inside(name, up) for up in BELOW[path])]
    assert not offenders, "\n  ".join(["imports from above:"] + offenders)


def _backend_import_graph():
    graph = {}
    paths = sorted((PKG / "backends").rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    for path in paths:
        mod = _module_name(path)
        deps = set()
        for _line, name in _imports(path):
            # `from pkg.mod import f` names a module or an attribute: keep the longest
            # prefix that is a module of backends/
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != mod and not _inside(mod, name):
                deps.add(name)
        graph[mod] = deps
    return graph


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# The import cycles between modules of backends/ that exist today (each closed by an import
# inside a function). The test fails on any new cycle, and on a listed one that is gone (so
# the list shrinks as they are untangled).
KNOWN_BACKEND_CYCLES = [
]


def test_backends_have_no_new_import_cycle():
    found = sorted(_cycles(_backend_import_graph()))
    known = sorted(KNOWN_BACKEND_CYCLES)
    new = [c for c in found if c not in known]
    gone = [c for c in known if c not in found]
    assert not new, "new import cycles between modules of minispore/backends:\n  " + \
        "\n  ".join(" <-> ".join(c) for c in new)
    assert not gone, ("these import cycles of minispore/backends are gone; remove them from "
                      "KNOWN_BACKEND_CYCLES:\n  " + "\n  ".join(" <-> ".join(c) for c in gone))


def test_cycle_finder_sees_a_cycle_closed_inside_a_function():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_registrations_reach_core_and_their_absence_is_named(monkeypatch):
    """What the upper layers register is what core uses; without it core says what to import."""
    import minispore as ms
    from minispore.core import cells, context, device
    from minispore.core import tensor as core_tensor

    assert cells.is_cell(ms.nn.Dense(2, 2)) and cells.is_cell_class(ms.nn.Dense)
    assert not cells.is_cell(object()) and not cells.is_cell_class(int)
    assert list(device.BACKEND_MODULES) == ["CPU", "GPU", "Ascend"]

    monkeypatch.setattr(core_tensor, "_initializer_factory", None)
    with pytest.raises(RuntimeError, match="init='ones'.*minispore.common.initializer"):
        ms.Tensor(shape=(2,), dtype=ms.float32, init="ones")
    monkeypatch.setattr(context, "_validators", {})
    with pytest.raises(RuntimeError, match="ascend_config.*minispore.backends"):
        ms.set_context(ascend_config={"precision_mode": "force_fp32"})
    monkeypatch.setattr(device, "_default_program", [])
    with pytest.raises(RuntimeError, match="no graph Program is registered"):
        device.get_backend("CPU").program(None)
