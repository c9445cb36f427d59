"""The tutorial-style scripts in examples/: each runs in its own Python process in GRAPH and
PYNATIVE mode, exits 0 (its own asserts pass) and prints its key lines; the sequence and
autoencoder examples' final losses agree between the two modes, and the resnet's on the
simulated Ascend with the CPU's. The runs go two at a time, longest first, started once for the
module (in one pytest-xdist worker: tests/conftest.py's XDIST_GROUPS). The repository root leads
PYTHONPATH, so the scripts import this checkout's minispore, not a copy installed in
site-packages."""
from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXPECTED = {
    "01_quick_start.py": ["Shape of image [N, C, H, W]: (64, 1, 8, 8) Float32", "Epoch 3 train loss",
                          "Test: Accuracy:", "quick start OK"],
    "02_tensor.py": ["x_data: [1 0 1 0] Int64", "concat: (4, 2) stack: (2, 2, 2)",
                     "cell result: 49.5 expected: 49.5", "tensor OK"],
    "03_dataset.py": ["batch: (32, 1, 8, 8) Float32 (32,) Int32", "batches per epoch: [4, 4]",
                      "dataset OK"],
    "04_network.py": ["(4): Dense<input_channels=32, output_channels=10, has_bias=True>",
                      "Layer: dense_relu_sequential.0.weight  Size: (32, 64)",
                      "trainable parameters: 3466", "network OK"],
    "05_autograd.py": ["d2/dx2 x^3 at 2: [12.]", "autograd OK"],
    "06_train.py": ["Epoch 3: loss", "epoch: 3 step:", "per step time:", "train OK"],
    "07_save_and_load.py": ["param_not_load: [] ckpt_not_load: ['epoch']", "mismatch refused:",
                            "save and load OK"],
    "08_mint.py": ["transpose(x, 0, 1): (3, 2)", "max(x, dim=1): [2.0, 5.0] [2, 2]",
                   "epoch 3: loss", "test accuracy:", "mint OK"],
    "09_graph_features.py": ["halved: [0.5, 0.5, 0.5, 0.5] steps: 4", "calls that halved: 1",
                             "mutable: [[1.0, 2.0, 3.0], [1.0, 3.0, 5.0]]",
                             "custom: 36.0 [3.0, 12.0, 27.0]",
                             "forward hook doubled the output: True",
                             "PyNative and GRAPH_MODE agree", "graph features OK"],
    "10_char_lstm_lm.py": ["final loss:", "char lstm OK"],
    "11_text_classifier.py": ["test accuracy:", "final loss:", "text classifier OK"],
    "12_small_gpt.py": ["training step (", "final loss:", "small gpt OK"],
    "13_conv_autoencoder.py": ["final loss:", "conv autoencoder OK"],
    "14_cifar_resnet.py": ["checkpoint: resnet-2_43.ckpt", "test accuracy:", "final loss:",
                           "exported: resnet.onnx", "cifar resnet OK"],
}
# the training examples print their final loss; GRAPH_MODE's and PyNative's agree this closely
# (PyNative runs the step op by op, GRAPH_MODE as one graph: fusion may reorder the roundings)
FINAL_LOSS_RTOL = {"10_char_lstm_lm.py": 1e-4, "11_text_classifier.py": 1e-4,
                   "12_small_gpt.py": 1e-4, "13_conv_autoencoder.py": 1e-4,
                   "14_cifar_resnet.py": 1e-4}
MODES = ("graph", "pynative")


def _env(**extra) -> dict:
    path = os.pathsep.join(p for p in (str(EXAMPLES.parent), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **extra)


ASCEND = "14_cifar_resnet.py"          # also trained on the simulated Ascend, in GRAPH_MODE
# the training examples, the longest runs, start first (longest first), so that the runs going
# two at a time end together rather than one long run starting last
LONGEST_FIRST = ("14_cifar_resnet.py", "12_small_gpt.py", "10_char_lstm_lm.py",
                 "11_text_classifier.py", "13_conv_autoencoder.py")


def _run(script: str, mode: str, device: str = "CPU") -> subprocess.CompletedProcess:
    env = _env(PYTHONWARNINGS="ignore")
    extra = [] if device == "CPU" else ["--device", device]
    return subprocess.run([sys.executable, str(EXAMPLES / script), "--mode", mode, *extra],
                          capture_output=True, text=True, env=env,
                          timeout=300 if device == "CPU" else 600,
                          cwd=EXAMPLES.parent)


@pytest.fixture(scope="module")
def results():
    """{(script, mode): its run} for every example in both modes, and (ASCEND, "Ascend"): the
    resnet's GRAPH_MODE run on the simulated Ascend; all of them two at a time, longest first."""
    jobs = [(s, m, "CPU") for s in EXPECTED for m in MODES] + [(ASCEND, "graph", "Ascend")]
    jobs.sort(key=lambda j: LONGEST_FIRST.index(j[0]) if j[0] in LONGEST_FIRST else
              len(LONGEST_FIRST))
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {(s, m if d == "CPU" else d): pool.submit(_run, s, m, d) for s, m, d in jobs}
        return {k: f.result() for k, f in futures.items()}


# examples that need a launcher, tested by the file named here instead of run here
TESTED_ELSEWHERE = {"15_data_parallel.py": "distributed/test_dist_example.py"}


def test_every_example_is_listed():
    assert sorted(p.name for p in EXAMPLES.glob("[0-9]*.py")) == sorted(
        [*EXPECTED, *TESTED_ELSEWHERE])
    here = Path(__file__).parent
    for script, test in TESTED_ELSEWHERE.items():
        assert script in (here / test).read_text(), (script, test)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_example_runs(results, script, mode):
    r = results[(script, mode)]
    assert r.returncode == 0, f"{script} --mode {mode} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    for line in EXPECTED[script]:
        assert line in r.stdout, f"{script} --mode {mode}: {line!r} not printed:\n{r.stdout}"
    assert f"({mode})" in r.stdout


@pytest.mark.parametrize("script", sorted(FINAL_LOSS_RTOL))
def test_graph_and_pynative_final_losses_agree(results, script):
    losses = []
    for mode in MODES:
        out = results[(script, mode)].stdout
        assert "final loss: " in out, f"{script} --mode {mode} printed no final loss:\n{out}"
        losses.append(float(out.split("final loss: ")[1].split()[0]))
    graph, pynative = losses
    assert abs(graph - pynative) <= FINAL_LOSS_RTOL[script] * abs(pynative), (script, losses)


def test_the_cifar_resnet_trains_on_the_simulated_ascend_as_on_the_cpu(results):
    r = results[(ASCEND, "Ascend")]
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "cifar resnet OK (graph) on Ascend" in r.stdout
    ascend = float(r.stdout.split("final loss: ")[1].split()[0])
    cpu = float(results[(ASCEND, "graph")].stdout.split("final loss: ")[1].split()[0])
    assert abs(ascend - cpu) <= 1e-4 * abs(cpu), (ascend, cpu)


def test_mode_from_environment():
    env = _env(EXAMPLE_MODE="pynative", PYTHONWARNINGS="ignore")
    r = subprocess.run([sys.executable, str(EXAMPLES / "02_tensor.py")], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0 and "tensor OK (pynative)" in r.stdout, r.stderr
