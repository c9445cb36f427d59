"""ms.check_modes and `python -m minispore check`: agreeing modes are reported as such; a graph
that differs from PyNative is reported with the first op whose output differs and its line."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

import minispore as ms
from minispore import nn, ops


def _x():
    return ms.Tensor(np.arange(4, dtype=np.float32))


def test_a_function_whose_modes_agree_is_reported_ok_with_what_was_compared():
    def f(x, y):
        z = x * y + 1.0
        return ops.exp(z).sum(), z

    r = ms.check_modes(f, _x(), ms.Tensor(np.ones(4, np.float32)))
    assert r.ok, str(r)
    assert "2 returned tensor(s)" in str(r) and "2 gradient(s)" in str(r)


def test_a_cell_is_checked_with_its_parameters_gradients():
    ms.set_seed(0)
    r = ms.check_modes(nn.Dense(4, 2), ms.Tensor(np.ones((3, 4), np.float32)))
    assert r.ok, str(r)
    assert "3 gradient(s)" in str(r)          # the input, the weight and the bias


calls = []


def _scale():
    calls.append(1)                  # a Python side effect: graph mode runs it at compile time
    return float(len(calls))


def test_a_difference_names_the_first_diverging_op_and_its_line():
    def f(x):
        y = x + 1.0
        z = y * _scale()
        return ops.exp(z)

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = ms.check_modes(f, _x())
    assert not r.ok
    kinds = {d.what for d in r.differences}
    assert {"output", "gradient"} <= kinds
    first = r.first_op
    assert first is not None and first.detail.startswith("mul (output 0)")
    assert "z = y * _scale()" in first.detail
    assert not np.array_equal(first.eager, first.graph)
    assert "first diverging op" in str(r)


def test_a_graph_that_does_not_compile_is_reported_as_an_error():
    def f(x):
        try:
            return x + 1
        except ValueError:
            return x

    r = ms.check_modes(f, _x())
    assert not r.ok and r.differences[0].what == "error"
    assert "try/except" in r.differences[0].detail


def test_the_check_command_lists_every_graph_syntax_problem_and_compares_prints(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import minispore as ms
        from minispore import nn
        ms.set_context(mode=ms.GRAPH_MODE)

        class Bad(nn.Cell):
            def construct(self, x):
                global G
                try:
                    y = x + 1
                except Exception:
                    y = x
                return y

        @ms.jit
        def h(x):
            with open("f") as f:
                pass
            return x

        x = ms.Tensor(np.ones((2,), np.float32))
        print((x * 3).asnumpy())
        print("mode", ms.get_context("mode"))
    """))
    p = subprocess.run([sys.executable, "-m", "minispore", "check", str(script)],
                       capture_output=True, text=True, timeout=600)
    out = p.stdout
    assert p.returncode == 1, out + p.stderr
    assert "3 problem(s)" in out
    assert "line 9 (Bad.construct): graph mode does not support global" in out
    assert "try/except" in out and "(h): graph mode does not support with" in out
    # the forced mode shows in the printed line: the runs differ there and nowhere before
    assert "printed output differs first at line 2" in out
    assert "PyNative: mode 1" in out and "GRAPH:    mode 0" in out


def test_printed_numbers_agree_within_the_tolerance():
    from minispore.check_script import first_difference, lines_agree
    assert lines_agree("loss 0.1234567", "loss 0.1234568", 1e-5)
    assert not lines_agree("loss 0.12", "loss 0.13", 1e-5)
    assert not lines_agree("loss 0.12", "acc 0.12", 1e-5)
    assert first_difference("a\nb 1.0\nc", "a\nb 2.0\nc", 1e-5) == (2, "b 1.0", "b 2.0")
