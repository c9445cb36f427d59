"""Graph pictures (core/graph/dot.py): fused groups drawn as clusters of their members with
shape and dtype, the final graph of every compiled program written under
save_graphs_path/pictures as DOT and, where Graphviz's `dot` is installed, rendered to SVG and
PNG; without `dot` the DOT file is all and a warning says so."""
from __future__ import annotations

import inspect
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import minispore as ms
from minispore import nn, ops
from minispore.core.graph import compile as graph_compile
from minispore.core.graph import dot

HAS_DOT = dot.dot_binary() is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed here "
                                                   "(apt-get install graphviz); DOT-only "
                                                   "behaviour is tested without it")


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(16, 8)

    def construct(self, x):
        h = self.fc(x)
        y = ops.tanh(h * 1.5 + 0.3) * ops.sigmoid(h) - h * h / 3
        return (y * y).mean(axis=1)


def line_of(needle: str) -> int:
    lines, start = inspect.getsourcelines(Net.construct)
    return start + next(i for i, t in enumerate(lines) if needle in t)


@pytest.fixture(autouse=True)
def fresh(tmp_path):
    graph_compile.clear_cache()
    yield
    graph_compile.clear_cache()


def compile_net(tmp_path, target="CPU", level="O1"):
    ms.set_context(mode=ms.GRAPH_MODE, device_target=target, jit_level=level, save_graphs=True,
                   save_graphs_path=str(tmp_path))
    Net()(ms.Tensor(np.ones((4, 16), np.float32)))
    return sorted((tmp_path / "pictures").iterdir())


def test_fused_group_is_a_cluster_of_members_with_types_and_line(tmp_path):
    files = compile_net(tmp_path)
    (dot_file,) = [p for p in files if p.suffix == ".dot"]
    assert dot_file.name.startswith("Net_") and dot_file.name.endswith("_final.dot")
    text = dot_file.read_text()
    assert text.count("subgraph cluster_") == 1
    cluster = text[text.index("subgraph cluster_"):]
    assert "fused: one loop over f32[4,8]" in cluster
    assert f"test_graph_pictures.py:{line_of('(y * y).mean')}" in cluster
    for member in ("tanh\\nf32[4,8]", "sigmoid\\nf32[4,8]", "div\\nf32[4,8]",
                   "-> mean(axes=(1,)) over [4,8]\\nf32[4]"):
        assert member in cluster, member
    assert "const 1.5" in text and "param fc.weight" in text
    # op, type and source line: a library Cell (nn.Dense) runs as Python while the graph is
    # built, so its nodes carry the user's line that called it
    assert f"matmul\\nf32[4,8]\\ntest_graph_pictures.py:{line_of('self.fc(x)')}" in text
    # the per-pass DOT files are still written beside the IR text: the parsed graph, one per
    # pass, and fusion (this graph runs at O2)
    from minispore.core.graph.passes import PIPELINE
    n_dot = sorted(p.suffix for p in tmp_path.iterdir() if p.is_file()).count(".dot")
    assert n_dot == 1 + len(PIPELINE) + 1


@needs_dot
def test_final_graph_is_rendered_to_svg_and_png(tmp_path):
    files = compile_net(tmp_path)
    suffixes = sorted(p.suffix for p in files)
    assert suffixes == [".dot", ".png", ".svg"]
    svg = next(p for p in files if p.suffix == ".svg")
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert "fused: one loop" in svg.read_text()
    png = next(p for p in files if p.suffix == ".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_dot
def test_ascend_picture_is_the_graph_after_format_assignment(tmp_path):
    files = compile_net(tmp_path, "Ascend", "O2")
    text = next(p for p in files if p.suffix == ".dot").read_text()
    assert "TransData" in text and "subgraph cluster_" in text
    assert any(p.suffix == ".svg" for p in files)


def test_without_dot_only_the_dot_file_is_written_and_a_warning_says_so(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(dot, "dot_binary", lambda: None)
    monkeypatch.setattr(dot, "_warned", [])
    with pytest.warns(RuntimeWarning, match="Graphviz's `dot` is not installed"):
        files = compile_net(tmp_path)
    assert [p.suffix for p in files] == [".dot"]


def test_no_pictures_without_save_graphs(tmp_path):
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O1", save_graphs_path=str(tmp_path))
    Net()(ms.Tensor(np.ones((4, 16), np.float32)))
    assert not (tmp_path / "pictures").exists()
