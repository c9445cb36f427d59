"""Signature audit: minispore's public names against MindSpore 2.10's documented signatures.

Reads the reference (`mindspore-2.10-signatures.json`: every public name of MindSpore's
namespaces and every Tensor method, with `inspect.signature` or the documented overload lines),
imports minispore, and for every name both expose compares parameter names, their positional
order and their defaults. A Tensor method built with `core.overloads.overloaded` is compared
overload by overload (`_ms_overloads`).

Each finding is (kind, where, detail). The kinds, most dangerous first:
- `slot`: a positional slot binds a different parameter (`flatten(1)` meaning `order=1`); a call
  passing it positionally gets another meaning, silently.
- `default`: a parameter both sides have defaults differently (`Argmax(output_type=)`).
- `swallow`: minispore takes `**kwargs` where MindSpore does not, so a misspelt or unsupported
  keyword may be accepted and ignored.
- `return`: a Tensor method overload MindSpore documents as returning a tuple (`max(dim)` gives
  (values, indices)) returns something else when called with its required dims.
- `missing`: a MindSpore parameter minispore lacks (the call fails loudly, with a TypeError).
- `keyword`: the same slot under a synonym (`axis`/`dim`, `keep_dims`/`keepdims`, `x`/`input`):
  positional calls agree, a keyword call fails loudly.
`SILENT` (slot, default, swallow, return) are the kinds the test fails on.

Usage: python tools/signature_audit.py [--reference PATH] [--kinds slot,default,...]
(exit status 1 when a silent finding is printed). The reference path defaults to
$MINISPORE_MS_SIGNATURES or the copy kept in the repository,
tools/reference/mindspore-2.10-signatures.json (introspected from MindSpore 2.10.0's CPU wheel).
"""
from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import os
import re
import sys
from dataclasses import dataclass

DEFAULT_REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                                 "mindspore-2.10-signatures.json")
SILENT = ("slot", "default", "swallow", "return")
KINDS = SILENT + ("missing", "keyword")

# MindSpore namespace -> minispore module path ("Tensor" is the Tensor class's methods)
NAMESPACES = {
    "mindspore": "minispore",
    "mindspore.Tensor (methods)": "Tensor",
    "mindspore.ops": "minispore.ops",
    "mindspore.ops.functional": "minispore.ops.functional",
    "mindspore.ops.operations": "minispore.ops.operations",
    "mindspore.nn": "minispore.nn",
    "mindspore.nn.optim": "minispore.nn.optim",
    "mindspore.common.initializer": "minispore.common.initializer",
    "mindspore.dataset": "minispore.dataset",
    "mindspore.dataset.vision": "minispore.dataset.vision",
    "mindspore.dataset.transforms": "minispore.dataset.transforms",
    "mindspore.dataset.text": "minispore.dataset.text",
    "mindspore.train": "minispore.train",
    "mindspore.context": "minispore.context",
    "mindspore.communication": "minispore.communication",
    "mindspore.ops.composite": "minispore.ops.composite",
    "mindspore.mint": "minispore.mint",
    "mindspore.mint.nn": "minispore.mint.nn",
    "mindspore.mint.nn.functional": "minispore.mint.nn.functional",
    "mindspore.mint.optim": "minispore.mint.optim",
}

# parameter names that mean the same thing on both sides (a keyword call still fails)
_SYNONYMS = [{"axis", "dim", "axes", "dims"}, {"keep_dims", "keepdims", "keepdim"},
             {"x", "input", "input_x", "a", "self_tensor"}, {"y", "other", "input_y"},
             {"perm", "input_perm", "dims", "axes"}]


def _synonyms(a: str, b: str) -> bool:
    return a == b or any(a in s and b in s for s in _SYNONYMS)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str              # 'pos' (positional or keyword), 'posonly', 'kwonly', 'var', 'varkw'
    default: object        # the default's source text, or None when required

    @property
    def positional(self) -> bool:
        return self.kind in ("pos", "posonly")


@dataclass(frozen=True)
class Finding:
    kind: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind:8s} {self.where}: {self.detail}"


# ---------------------------------------------------------------- parsing -----------------------
_DOC = re.compile(r"^(?:\.\. method:: )?(?:[\w.]*\.)?\w+\s*(\(.*\))\s*(?:->.*)?$")


def parse_reference(text: str):
    """A reference signature string -> list of Param without self, or None if unreadable."""
    text = text.strip()
    if text.startswith("doc:"):
        text = text[4:].strip()
    if not text.startswith("("):
        m = _DOC.match(text)
        if not m:
            return None
        text = m.group(1)
    text = re.sub(r"\)\s*->.*$", ")", text)
    text = re.sub(r"<[^<>]*>", lambda m: repr(m.group(0)), text)    # an object's repr default
    try:
        fn = ast.parse(f"def f{text}: pass").body[0]
    except SyntaxError:
        return None
    a = fn.args
    out = []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + [ast.unparse(d) for d in a.defaults]
    for i, (p, d) in enumerate(zip(pos, defaults)):
        out.append(Param(p.arg, "posonly" if i < len(a.posonlyargs) else "pos", d))
    if a.vararg:
        out.append(Param(a.vararg.arg, "var", None))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append(Param(p.arg, "kwonly", ast.unparse(d) if d is not None else None))
    if a.kwarg:
        out.append(Param(a.kwarg.arg, "varkw", None))
    return _drop_self(out)


_KIND = {inspect.Parameter.POSITIONAL_ONLY: "posonly", inspect.Parameter.POSITIONAL_OR_KEYWORD:
         "pos", inspect.Parameter.KEYWORD_ONLY: "kwonly", inspect.Parameter.VAR_POSITIONAL: "var",
         inspect.Parameter.VAR_KEYWORD: "varkw"}


def from_signature(sig: inspect.Signature):
    out = [Param(p.name, _KIND[p.kind],
                 None if p.default is inspect.Parameter.empty else _source(p.default))
           for p in sig.parameters.values()]
    return _drop_self(out)


def _drop_self(params):
    return params[1:] if params and params[0].name in ("self", "cls") else params


def _source(v) -> str:
    """A default value as the reference writes it (dtypes as mindspore.<name>)."""
    r = repr(v)
    return r.replace("minispore.", "mindspore.")


def _value(text):
    """A default's comparable value: a literal, or its normalized text."""
    text = text.replace("mstype.", "mindspore.").replace("mindspore.dtype.", "mindspore.")
    text = {"mindspore.bool": "mindspore.bool_"}.get(text, text)
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return tuple(v) if isinstance(v, list) else v


def _same_default(a, b) -> bool:
    va, vb = _value(a), _value(b)
    if va == vb:
        return True
    # a default that is an object's repr (<function ...>, <object ...>) cannot be compared
    return any(isinstance(v, str) and v.startswith("<") for v in (va, vb))


# ---------------------------------------------------------------- comparison --------------------
def compare(where: str, ref, mine, strict: bool = False) -> list:
    """Findings of one minispore signature `mine` against one reference signature `ref`.
    `strict`: names must be equal, not synonyms (MindSpore picks among overloads by name, so
    `max(dim)` and `max(axis=)` differ in what they return)."""
    out = []
    rpos = [p for p in ref if p.positional]
    mpos = [p for p in mine if p.positional]
    mine_var = next((p for p in mine if p.kind == "var"), None)
    ref_var = next((p for p in ref if p.kind == "var"), None)
    mine_kw = {p.name: p for p in mine if p.kind not in ("var", "varkw")}
    if ref_var is not None and mine_var is None:
        out.append(Finding("missing", where, f"MindSpore takes *{ref_var.name} after its "
                                             f"{len(rpos)} named positionals, minispore no more"))
    for i, r in enumerate(rpos):
        if i < len(mpos):
            m = mpos[i]
            if m.name != r.name:
                kind = "keyword" if _synonyms(m.name, r.name) and not strict else "slot"
                out.append(Finding(kind, where, f"positional slot {i} is {r.name!r} in MindSpore, "
                                                f"{m.name!r} in minispore"))
            if r.default is not None and m.default is not None and \
                    not _same_default(r.default, m.default) and _synonyms(m.name, r.name):
                out.append(Finding("default", where, f"{r.name}: MindSpore {r.default}, "
                                                     f"minispore {m.default}"))
            elif r.default is not None and m.default is None:
                out.append(Finding("missing", where, f"{r.name} is optional in MindSpore "
                                                     f"(default {r.default}), required here"))
        elif mine_var is not None:
            out.append(Finding("slot", where, f"positional slot {i} is {r.name!r} in MindSpore, "
                                              f"part of *{mine_var.name} in minispore"))
        else:
            if r.name in mine_kw:
                out.append(Finding("keyword", where, f"{r.name!r} is positional slot {i} in "
                                                     f"MindSpore, keyword-only here"))
            elif not any(p.kind == "varkw" for p in mine):
                out.append(Finding("missing", where, f"no parameter {r.name!r} (MindSpore's "
                                                     f"positional slot {i})"))
    for r in ref:
        if r.kind != "kwonly":
            continue
        m = mine_kw.get(r.name)
        if m is None:
            if not any(p.kind == "varkw" for p in mine):
                out.append(Finding("missing", where, f"no keyword {r.name!r}"))
        elif r.default is not None and m.default is not None and \
                not _same_default(r.default, m.default):
            out.append(Finding("default", where, f"{r.name}: MindSpore {r.default}, "
                                                 f"minispore {m.default}"))
    ref_varkw = next((p for p in ref if p.kind == "varkw"), None)
    if ref_varkw is not None and not any(p.kind == "varkw" for p in mine):
        out.append(Finding("missing", where, f"MindSpore takes **{ref_varkw.name}, minispore "
                                             f"no other keywords"))
    if any(p.kind == "varkw" for p in mine) and ref_varkw is None:
        name = next(p.name for p in mine if p.kind == "varkw")
        out.append(Finding("swallow", where, f"**{name} takes keywords MindSpore's signature "
                                             f"does not have"))
    return out


def _signatures_of(obj):
    """minispore signatures of `obj` (several for an overloaded method), or None."""
    sigs = getattr(obj, "_ms_overloads", None)
    if sigs is not None:
        return [from_signature(s) for s in sigs]
    target = obj
    if inspect.isclass(obj):
        target = obj.__init__
        if target is object.__init__:
            return [[]]
    try:
        return [from_signature(inspect.signature(target))]
    except (TypeError, ValueError):
        return None


def _reference_signatures(entry):
    """The readable reference signatures; a bare (*args, **kwargs) (a decorator's wrapper, as
    MindSpore's optimizers show) says nothing and is left out."""
    texts = [entry.get("signature") or ""] + list(entry.get("overloads") or ())
    sigs = [parse_reference(t) for t in texts if t]
    return [s for s in sigs if s is not None and
            not (s and all(p.kind in ("var", "varkw") for p in s))]


def audit_entry(where: str, entry, obj) -> list:
    """Findings for one name: each MindSpore signature against the minispore signature (or, for
    overloads, the minispore overload it is closest to)."""
    mine = _signatures_of(obj)
    refs = _reference_signatures(entry)
    if not mine or not refs:
        return []
    out = []
    for i, ref in enumerate(refs):
        tag = where if len(refs) == 1 else f"{where} [MindSpore overload {i}]"
        best = min((compare(tag, ref, m, strict=len(refs) > 1) for m in mine),
                   key=lambda fs: (sum(f.kind in SILENT for f in fs), len(fs)))
        out.extend(best)
    if len(refs) > 1:       # an overload MindSpore has and minispore matches exactly suffices
        silent = [f for f in out if f.kind in SILENT]
        out = silent + [f for f in out if f.kind not in SILENT]
    return out


_RETURNS_TUPLE = re.compile(r"->\s*tuple", re.I)
_DIM_NAMES = {"dim", "axis"}


def return_findings(entries) -> list:
    """Call each Tensor method overload documented `-> tuple(...)` whose required parameters
    are all dims, on a (2, 3) float32 tensor with dim 0, and check that a tuple comes back."""
    import numpy as np
    from minispore import Tensor
    out = []
    for name, entry in sorted(entries.items()):
        method = getattr(Tensor, name, None)
        if method is None or name.startswith("_"):
            continue
        for text in [entry.get("signature") or ""] + list(entry.get("overloads") or ()):
            params = parse_reference(text) if _RETURNS_TUPLE.search(text) else None
            required = [p for p in params or () if p.positional and p.default is None]
            if not required or any(p.name not in _DIM_NAMES for p in required):
                continue
            x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
            try:
                r = method(x, *[0] * len(required))
            except Exception as e:      # noqa: BLE001 (reported, not raised)
                out.append(Finding("return", f"Tensor.{name}", f"{text.strip()}: the call with "
                                   f"dim 0 raised {type(e).__name__}: {e}"))
                continue
            if not isinstance(r, tuple):
                out.append(Finding("return", f"Tensor.{name}", f"{text.strip()}: returns "
                                   f"{type(r).__name__}, MindSpore a tuple"))
    return out


def _resolve(module_path: str):
    if module_path == "Tensor":
        from minispore import Tensor
        return Tensor
    try:
        return importlib.import_module(module_path)
    except ImportError:
        return None


def audit(reference_path: str = None, only=None) -> list:
    """Every finding over the namespaces minispore implements (`only`: these MindSpore
    namespaces, e.g. ["mindspore.mint"])."""
    path = reference_path or os.environ.get("MINISPORE_MS_SIGNATURES") or DEFAULT_REFERENCE
    with open(path) as f:
        namespaces = json.load(f)["namespaces"]
    out = []
    for ms_name, mine_name in NAMESPACES.items():
        if only is not None and ms_name not in only:
            continue
        owner = _resolve(mine_name)
        if owner is None or ms_name not in namespaces:
            continue
        prefix = "Tensor." if mine_name == "Tensor" else f"{ms_name}."
        for name, entry in sorted(namespaces[ms_name].items()):
            if name.startswith("_") or entry.get("kind") not in ("function", "class", "method"):
                continue
            obj = inspect.getattr_static(owner, name, None) if mine_name == "Tensor" \
                else getattr(owner, name, None)
            if isinstance(obj, (staticmethod, classmethod)):
                obj = obj.__func__
            if obj is None or not callable(obj) or isinstance(obj, property):
                continue
            out.extend(audit_entry(prefix + name, entry, obj))
    if "mindspore.Tensor (methods)" in namespaces and \
            (only is None or "mindspore.Tensor (methods)" in only):
        out.extend(return_findings(namespaces["mindspore.Tensor (methods)"]))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", default=None)
    ap.add_argument("--kinds", default=",".join(KINDS))
    args = ap.parse_args(argv)
    kinds = args.kinds.split(",")
    findings = [f for f in audit(args.reference) if f.kind in kinds]
    for f in findings:
        print(f)
    counts = {k: sum(f.kind == k for f in findings) for k in kinds}
    print("summary:", ", ".join(f"{k} {n}" for k, n in counts.items()))
    return 1 if any(f.kind in SILENT for f in findings) else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
