"""API coverage: how much of MindSpore 2.10's public surface minispore has, per namespace.

Reads the conformance table (`tools/reference/mindspore-2.10-signatures.json`) and, for each
MindSpore namespace, counts the public names minispore has at the same dotted path ("present")
and, among them, those whose signatures agree ("compatible": `signature_audit.audit_entry` finds
nothing), differ ("partial": a keyword synonym, a missing or extra parameter, a shifted slot) or
cannot be compared ("unknown": a signature neither side exposes). A non-callable name (a dtype,
an enum value) that is present counts as compatible.

It also reads the usage ranking (`tools/reference/usage_ranking.tsv`: the names that block
MindSpore's tutorials and model zoos most, with the uses each affects) and reports which of them
now resolve, and with what signature status.

Usage: python tools/api_coverage.py [--root CHECKOUT] [--reference PATH] [--ranking PATH]
                                    [--json OUT] [--missing NAMESPACE]
`--root` measures another checkout of minispore (default: the one this file is in).
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import signature_audit as audit  # noqa: E402

RANKING = os.path.join(HERE, "reference", "usage_ranking.tsv")
_CALLABLE_KINDS = ("function", "class", "method")


def _module_for(ms_namespace: str) -> str:
    if ms_namespace == "mindspore.Tensor (methods)":
        return "Tensor"
    return "minispore" + ms_namespace[len("mindspore"):]


def _lookup(owner, name: str, is_tensor: bool):
    if owner is None:
        return None
    obj = inspect.getattr_static(owner, name, None) if is_tensor else getattr(owner, name, None)
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return obj


def _module(path: str):
    if path == "Tensor":
        from minispore import Tensor
        return Tensor
    try:
        return importlib.import_module(path)
    except ImportError:
        return None


def status(where: str, entry: dict, obj) -> str:
    """'missing', 'compatible', 'partial' or 'unknown' for one MindSpore name."""
    if obj is None:
        return "missing"
    if entry.get("kind") not in _CALLABLE_KINDS:
        return "compatible"
    if not callable(obj) or isinstance(obj, property):
        return "partial"        # MindSpore's name is callable, minispore's is not
    if not audit._signatures_of(obj) or not audit._reference_signatures(entry):
        return "unknown"
    return "partial" if audit.audit_entry(where, entry, obj) else "compatible"


def coverage(reference: str) -> dict:
    """{namespace: {name: status}} over every public name of the reference."""
    with open(reference) as f:
        namespaces = json.load(f)["namespaces"]
    out = {}
    for ns, entries in namespaces.items():
        path = _module_for(ns)
        owner = _module(path)
        is_tensor = path == "Tensor"
        prefix = "Tensor." if is_tensor else f"{ns}."
        out[ns] = {name: status(prefix + name, entry, _lookup(owner, name, is_tensor))
                   for name, entry in sorted(entries.items()) if not name.startswith("_")}
    return out


def _resolve_ranked(name: str):
    """A ranking name (`ms.X`, `ops.functional.cast`, `Tensor.view`, `dataset.Dataset.map`) ->
    the minispore object, or None."""
    import minispore
    parts = name.split(".")
    if parts[0] == "ms":
        parts = parts[1:]
    obj = minispore
    if parts[0] == "Tensor":
        obj, parts = minispore.Tensor, parts[1:]
    for p in parts:
        nxt = getattr(obj, p, None)
        if nxt is None and inspect.ismodule(obj):
            try:
                nxt = importlib.import_module(f"{obj.__name__}.{p}")
            except ImportError:
                nxt = None
        if nxt is None:
            return None
        obj = nxt
    return obj


def ranking(reference: str, path: str = RANKING) -> list:
    """[(list, rank, name, affected uses, status)] for the usage ranking."""
    with open(reference) as f:
        namespaces = json.load(f)["namespaces"]
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            kind, rank, name, affected = line.rstrip("\n").split("\t")
            obj = _resolve_ranked(name)
            head, _, last = name.rpartition(".")
            ns = "mindspore.Tensor (methods)" if head == "Tensor" else \
                "mindspore" if head == "ms" else f"mindspore.{head}"
            entry = namespaces.get(ns, {}).get(last)
            if obj is None:
                st = "missing"
            elif entry is None:
                st = "present"          # not in the signature table (e.g. a Dataset method)
            else:
                st = status(name, entry, obj)
            rows.append((kind, rank, name, int(affected), st))
    return rows


def table(cov: dict) -> str:
    lines = ["| namespace | MindSpore | present | compatible | partial | unknown | missing |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    tot = [0] * 6
    for ns, names in cov.items():
        counts = [len(names)] + [sum(s == k for s in names.values())
                                 for k in ("compatible", "partial", "unknown", "missing")]
        row = [counts[0], counts[0] - counts[4]] + counts[1:]
        tot = [a + b for a, b in zip(tot, row)]
        lines.append(f"| `{ns}` | " + " | ".join(map(str, row)) + " |")
    lines.append("| **total** | " + " | ".join(map(str, tot)) + " |")
    return "\n".join(lines)


def ranking_summary(rows) -> str:
    out = []
    for kind in ("top", "tutorial", "partial"):
        sel = [r for r in rows if r[0] == kind]
        if not sel:
            continue
        present = [r for r in sel if r[4] != "missing"]
        compat = [r for r in sel if r[4] in ("compatible", "present")]
        uses = sum(r[3] for r in sel)
        out.append(f"- {kind}: {len(present)} of {len(sel)} resolve ({len(compat)} compatible or "
                   f"outside the signature table); they carry "
                   f"{sum(r[3] for r in present)} of {uses} affected uses")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--reference", default=audit.DEFAULT_REFERENCE)
    ap.add_argument("--ranking", default=RANKING)
    ap.add_argument("--json", default=None, help="write {namespace: {name: status}} here")
    ap.add_argument("--missing", default=None, help="list the names a namespace lacks")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.root))
    cov = coverage(args.reference)
    print(table(cov))
    rows = ranking(args.reference, args.ranking)
    print("\nusage ranking:\n" + ranking_summary(rows))
    for r in rows:
        if r[4] == "missing":
            print(f"  missing: [{r[0]} {r[1]}] {r[2]} ({r[3]} uses)")
    if args.missing:
        print(f"\nmissing from {args.missing}:",
              " ".join(n for n, s in cov.get(args.missing, {}).items() if s == "missing"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"namespaces": cov, "ranking": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
