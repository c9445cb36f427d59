"""The three examples of MindSpore's mode documentation (the demo), with the expected numbers
from that documentation."""
import numpy as np
import pytest

import minispore as ms
from minispore import demo


@pytest.fixture(autouse=True)
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")


DX = np.array([[4.51, 2.7, 3.6], [4.51, 2.7, 3.6]], np.float32)
DY = np.array([[2.6, 2.6, 2.6], [1.9, 1.9, 1.9], [1.3, 1.3, 1.3]], np.float32)


def test_example_1_mul():
    np.testing.assert_allclose(demo.example_1().asnumpy(), [4.0, 10.0, 18.0])


def test_example_2_gradients():
    r = demo.example_2()
    dx, dy = r["GradOperation(get_all=True)"]
    np.testing.assert_allclose(dx.asnumpy(), DX, rtol=1e-6)
    np.testing.assert_allclose(dy.asnumpy(), DY, rtol=1e-6)
    (dz,) = r["GradOperation(get_by_list=True)"]
    np.testing.assert_allclose(dz.asnumpy(), [21.536], rtol=1e-6)
    gx, gy = r["ms.grad(grad_position=(0, 1))"]
    np.testing.assert_allclose(gx.asnumpy(), DX, rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), DY, rtol=1e-6)
    x, y = demo.example_inputs()
    np.testing.assert_allclose(r["ms.value_and_grad(weights=...) value"].asnumpy(),
                               x.asnumpy() @ y.asnumpy(), rtol=1e-6)
    (wz,) = r["ms.value_and_grad(weights=...) grads"]
    np.testing.assert_allclose(wz.asnumpy(), [21.536], rtol=1e-6)


def test_example_3_for_loop():
    r = demo.example_3()
    # x3 = x w^3 + w + 2 at x=1, w=2: 12; d/dx = w^3 = 8; d/dw = 3 x w^2 + 1 = 13
    np.testing.assert_allclose(r["out"].asnumpy(), [12.0])
    np.testing.assert_allclose(r["d/dx"].asnumpy(), [8.0])
    np.testing.assert_allclose(r["d/dw"].asnumpy(), [13.0])


def test_demo_cli_prints_all_three(capsys):
    from minispore.cli import main
    assert main(["demo", "--examples"]) == 0
    out = capsys.readouterr().out
    for marker in ("1. MyNet", "21.536", "d/dw: [13.]"):
        assert marker in out


def test_info_cli_lists_backends_and_the_simulated_profile(capsys):
    from minispore.cli import main
    assert main(["info", "--profile", "Ascend310P"]) == 0
    out = capsys.readouterr().out
    assert "Ascend  usable (simulated NPU: model time, not hardware)" in out
    assert "simulated device profile Ascend310P" in out
    assert "hbm_bw" in out and "B/s" in out and "[E]" in out
