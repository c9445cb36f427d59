"""set_context / get_context / set_device: defaults, validation, no silent device fallback."""
import pytest

import minispore as ms
from minispore.core import context


@pytest.fixture(autouse=True)
def restore():
    saved = dict(context._state)
    yield
    context._state.clear()
    context._state.update(saved)


def test_constants_and_default_mode():
    assert ms.GRAPH_MODE == 0 and ms.PYNATIVE_MODE == 1
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", "import minispore as ms; "
                          "print(ms.get_context('mode'), ms.get_context('device_target'))"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "CPU"]


def test_set_and_get():
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O1", save_graphs=True,
                   save_graphs_path="/tmp/g", device_id=0)
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    assert ms.get_context("jit_level") == "O1"
    assert ms.get_context("save_graphs") is True
    assert ms.get_context("save_graphs_path") == "/tmp/g"


@pytest.mark.parametrize("kw, match", [
    ({"mode": 2}, "GRAPH_MODE"),
    ({"jit_level": "O3"}, "'O0', 'O1', 'O2'"),
    ({"device_target": "TPU"}, "'CPU', 'GPU', 'Ascend'"),
    ({"device_id": -1}, "device_id"),
    ({"bogus": 1}, "unknown keyword.*bogus.*valid: mode"),
])
def test_bad_values_list_choices(kw, match):
    with pytest.raises(ValueError, match=match):
        ms.set_context(**kw)


def test_bad_value_applies_nothing():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(ValueError):
        ms.set_context(mode=ms.GRAPH_MODE, jit_level="nope")
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


@pytest.mark.parametrize("target", ["GPU", "Ascend"])
def test_unusable_device_raises_runtime_error_with_reason(target):
    from minispore.core.device import availability
    ok, why = availability()[target]
    if ok:
        pytest.skip(f"{target} is usable here")
    with pytest.raises(RuntimeError, match=f"device_target='{target}' cannot be used"):
        ms.set_device(target)
    assert ms.get_context("device_target") == "CPU"


def test_get_context_unknown_key():
    with pytest.raises(ValueError, match="unknown key"):
        ms.get_context("nope")


@pytest.mark.parametrize("size", ["1e400GB", "infGB", "nanGB", "1e3GB", "0GB", "-1GB", "2 GB",
                                  "2", "GB", ".5GB", "0.0001KB", 2, 2.5])
def test_malformed_max_device_memory_raises_value_error(size):
    with pytest.raises(ValueError, match="max_device_memory=.* is not valid"):
        ms.set_context(max_device_memory=size)
    assert ms.get_context("max_device_memory") is None


def test_max_device_memory_sizes_are_exact():
    from minispore.core.context import max_device_memory_bytes
    for size, n in [("2GB", 2 * 2**30), ("3.5GB", 7 * 2**29), ("1536.5KB", 1573376),
                    ("12345678901234567890GB", 12345678901234567890 * 2**30)]:
        ms.set_context(max_device_memory=size)
        assert max_device_memory_bytes() == n and ms.get_context("max_device_memory") == size
