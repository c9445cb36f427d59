"""benchmarks/compile_scaling.py smoke test: the minispore rows (GRAPH O2, PyNative) on the depth-2
MLP, peers left out; the JSON has the first-call times (cold and warm cache), the steady step,
the node counts and the O2 first call's breakdown by phase. Timings are not checked (tests assert
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
    assert mod.main(["--quick", "--models", "mlp2", "--rows", "O2,pynative",
                     "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["models"] == ["mlp2"]
    res = data["results"]["mlp2"]
    assert set(res) == {"O2", "pynative"}
    for phase in ("cold", "warm"):
        row = res["O2"][phase]
        assert len(row["steps_s"]) == 3 and row["steady_s"] > 0
        assert row["program"] == "NativeProgram"
        assert row["nodes"] > 0 and row["nodes_parsed"] > 0
        assert set(row["breakdown"]) == set(mod.PHASES)
    cold, warm = res["O2"]["cold"]["breakdown"], res["O2"]["warm"]["breakdown"]
    assert cold["llvm_opt"] > 0 and cold["llvm_codegen"] > 0      # compiled
    assert warm["llvm_opt"] == 0 and warm["llvm_codegen"] == 0     # loaded from the disk cache
    pyn = res["pynative"]["cold"]
    assert len(pyn["steps_s"]) == 3 and pyn["steady_s"] > 0 and "nodes" not in pyn
    text = capsys.readouterr().out
    assert "compile time vs node count" in text and "mlp2" in text
