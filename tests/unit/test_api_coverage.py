"""tools/api_coverage.py: the per-namespace counts it reports add up, and a name's status follows
its signature (a name with MindSpore's signature is compatible, a missing one is missing)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "tools" / "api_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_counts_cover_every_reference_name_once():
    tool = _tool()
    cov = tool.coverage(tool.audit.DEFAULT_REFERENCE)
    import json
    with open(tool.audit.DEFAULT_REFERENCE) as f:
        ref = json.load(f)["namespaces"]
    for ns, names in cov.items():
        assert set(names) == {n for n in ref[ns] if not n.startswith("_")}
        assert set(names.values()) <= {"compatible", "partial", "unknown", "missing"}
    table = tool.table(cov)
    assert table.splitlines()[-1].startswith("| **total** | ")


def test_a_status_follows_the_signature():
    tool = _tool()
    cov = tool.coverage(tool.audit.DEFAULT_REFERENCE)
    assert cov["mindspore.ops.operations"]["Shape"] == "compatible"
    assert cov["mindspore.ops.functional"]["cast"] == "compatible"
    assert cov["mindspore.dataset.text"]["BertTokenizer"] == "missing"    # no text tokenizers

    def f(a, b):                                        # MindSpore: (input, other)
        return a
    entry = {"kind": "function", "signature": "(input, other, *, alpha=1)"}
    assert tool.status("ops.add", entry, f) == "partial"
    assert tool.status("ops.add", entry, None) == "missing"


def test_the_usage_ranking_resolves_names_through_module_paths():
    tool = _tool()
    rows = tool.ranking(tool.audit.DEFAULT_REFERENCE)
    by_name = {r[2]: r for r in rows}
    assert by_name["ops.Shape"][4] == "compatible"
    assert by_name["ms.ParallelMode"][4] != "missing"
    assert {r[0] for r in rows} == {"top", "tutorial", "partial"}
