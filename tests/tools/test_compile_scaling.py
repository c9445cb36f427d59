"""benchmarks/compile_scaling.py smoke test: the minispore rows (GRAPH O2, tiered, PyNative) on the
depth-2 MLP, peers left out; the JSON has the first-call times (cold and warm cache), the steady
step, the node counts, the kernel counts and the O2 first call's breakdown by phase. Timings are not checked (tests assert
behaviour, not speed)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "compile_scaling.py"


def load_script():
    spec = importlib.util.spec_from_file_location("compile_scaling", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mlp2_minispore_rows_fill_the_json(tmp_path, capsys):
    out = tmp_path / "compile.json"
    mod = load_script()
    assert mod.main(["--quick", "--models", "mlp2", "--rows", "O2,tiered,pynative",
                     "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["models"] == ["mlp2"]
    res = data["results"]["mlp2"]
    assert set(res) == {"O2", "tiered", "pynative"}
    for phase in ("cold", "warm"):
        row = res["O2"][phase]
        assert len(row["steps_s"]) == 3 and row["steady_s"] > 0
        assert row["program"] == "NativeProgram"
        assert row["nodes"] > 0 and row["nodes_parsed"] > 0
        assert set(row["breakdown"]) == set(mod.PHASES)
    cold, warm = res["O2"]["cold"]["breakdown"], res["O2"]["warm"]["breakdown"]
    assert cold["llvm"] > 0 and cold["lower"] > 0                  # lowered and compiled
    # found by signature and loaded (a kernel with run-time checks is lowered again: its checks
    # name their own node's line)
    assert warm["llvm"] == 0 and warm["lower"] < cold["lower"]
    c = res["O2"]["cold"]
    assert c["kernel_calls"] >= c["kernels"] > 0 and c["modules_compiled"] == c["kernels"] + 1
    assert res["O2"]["warm"]["modules_compiled"] == 0
    tiers = res["tiered"]["cold"]["tier_by_step"]
    assert res["tiered"]["cold"]["program"] == "TieredProgram" and set(tiers) <= {"O1", "O2"}
    pyn = res["pynative"]["cold"]
    assert len(pyn["steps_s"]) == 3 and pyn["steady_s"] > 0 and "nodes" not in pyn
    text = capsys.readouterr().out
    assert "compile time vs node count" in text and "mlp2" in text
