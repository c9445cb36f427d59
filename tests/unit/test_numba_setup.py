"""numba is loaded only when a numba kernel is needed, and configured whenever it loads.

A graph-mode training step whose native program is in the disk cache runs without importing
numba at all (it costs a process ~55 MB); when numba does load, before minispore or after it, its
dispatcher carries minispore's verified disk cache and its parallel loops the workqueue layer
(unless NUMBA_THREADING_LAYER says otherwise). Each case runs in a fresh interpreter: whether a
module is loaded is a property of the whole process."""
import os
import subprocess
import sys
import textwrap

import pytest

TRAIN = textwrap.dedent("""
    import sys
    import numpy as np
    import minispore as ms
    from minispore import nn
    from minispore.core.graph import tiered
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", jit_level="O2")
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 3)])
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(),
                                                                      0.1, 0.9))
    x = ms.Tensor(np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))
    y = ms.Tensor(np.array([0, 1, 2, 1], np.int32))
    losses = [float(step(x, y).asnumpy()) for _ in range(3)]
    assert tiered.wait_all(60)
    losses += [float(step(x, y).asnumpy()) for _ in range(2)]
    assert losses[-1] < losses[0], losses
    print("numba" in sys.modules)
""")

CONFIGURED = textwrap.dedent("""
    import sys
    {first}
    {second}
    import numba
    from numba.core.dispatcher import Dispatcher
    print(numba.config.THREADING_LAYER,
          getattr(Dispatcher.enable_caching, "minispore_verified", False))
""")
MINISPORE = ("import minispore as ms; ms.set_context(device_target='CPU')\n"
             "import minispore.backends.cpu")


def _python(code: str, **env) -> str:
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_cached_graph_training_step_never_imports_numba(tmp_path):
    cache = str(tmp_path)
    _python(TRAIN, MINISPORE_CACHE_DIR=cache)             # builds and stores the program
    assert _python(TRAIN, MINISPORE_CACHE_DIR=cache) == ["False"]


@pytest.mark.parametrize("numba_first", [False, True], ids=["numba-later", "numba-first"])
def test_numba_is_configured_whenever_it_loads(tmp_path, numba_first):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    code = CONFIGURED.format(first="import numba" if numba_first else MINISPORE,
                             second=MINISPORE if numba_first else "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["workqueue", "True"]


def test_the_threading_layer_the_user_names_is_kept():
    code = CONFIGURED.format(first=MINISPORE, second="")
    assert _python(code, NUMBA_THREADING_LAYER="omp") == ["omp", "True"]
