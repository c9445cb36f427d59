"""`python -m minispore demo --models lstm,transformer`: character-level language models trained
on text that ships with Python (the source of the standard library's `textwrap` module), on the
CPU in GRAPH_MODE and PyNative and on the simulated Ascend in GRAPH_MODE:

- lstm: nn.Embedding(vocab, 32) -> nn.LSTM(32, 128, batch_first=True) -> nn.Dense(128, vocab);
- transformer: a small GPT: token and position nn.Embedding (width 64, context 64), two
  nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, batch_first=True) under a causal mask,
  nn.LayerNorm and nn.Dense(64, vocab).

Each trains with nn.Adam on the same seeded windows of the text in every run, so the CPU's GRAPH
and PyNative loss curves can be compared step by step (printed at the end).
"""
from __future__ import annotations

import inspect
import textwrap
import time

import numpy as np

import minispore as ms
from minispore import nn
from minispore.bench.sequence_models import GPT
from minispore.bench.sequence_models import GPTLoss as NextCharLoss  # logits vs next chars

CONTEXT, BATCH, LR = 64, 16, 0.005
RUNS = (("CPU", "GRAPH"), ("CPU", "PYNATIVE"), ("Ascend", "GRAPH"))


def corpus() -> tuple[np.ndarray, list]:
    """The text as int32 character ids, and the vocabulary (its sorted distinct characters)."""
    text = inspect.getsource(textwrap)
    vocab = sorted(set(text))
    ids = {c: i for i, c in enumerate(vocab)}
    return np.array([ids[c] for c in text], np.int32), vocab


def windows(data: np.ndarray, steps: int, seed: int = 0) -> list:
    """`steps` seeded batches of (input window, next-character window)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        starts = rng.integers(0, len(data) - CONTEXT - 1, BATCH)
        x = np.stack([data[s:s + CONTEXT] for s in starts])
        y = np.stack([data[s + 1:s + CONTEXT + 1] for s in starts])
        out.append((x, y))
    return out


class CharLSTM(nn.Cell):
    def __init__(self, vocab: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, 128, batch_first=True)
        self.head = nn.Dense(128, vocab)
        self.vocab = vocab

    def construct(self, idx):
        out, _ = self.lstm(self.embed(idx))
        return self.head(out).reshape(-1, self.vocab)


def train_one(model: str, target: str, mode: str, batches: list, vocab: int) -> dict:
    ms.set_context(device_target=target, jit_level="O2",
                   mode=ms.PYNATIVE_MODE if mode == "PYNATIVE" else ms.GRAPH_MODE)
    ms.set_seed(1)
    net = CharLSTM(vocab) if model == "lstm" else GPT(vocab, width=64, heads=4, ffn=256,
                                                           layers=2, context=CONTEXT)
    step = nn.TrainOneStepCell(NextCharLoss(net), nn.Adam(net.trainable_params(),
                                                          learning_rate=LR))
    step.set_train()
    tensors = [(ms.Tensor(x), ms.Tensor(y)) for x, y in batches]
    dev = None
    if target == "Ascend":
        from .backends import ascend_sim
        dev = ascend_sim.device()
        dev.synchronize()
        sim0 = dev.now()
    losses = []
    t0 = time.perf_counter()
    losses.append(float(step(*tensors[0]).asnumpy()))
    first = time.perf_counter() - t0
    for x, y in tensors[1:]:
        losses.append(float(step(x, y).asnumpy()))
    wall = time.perf_counter() - t0
    row = {"model": model, "backend": target, "mode": mode, "losses": losses,
           "first_step_s": first, "steps_per_s": (len(tensors) - 1) / max(wall - first, 1e-9),
           "wall_s": wall}
    if dev is not None:
        dev.synchronize()
        row["sim_s"] = dev.now() - sim0
    return row


def run(models=("lstm", "transformer"), steps: int = 150) -> list[dict]:
    data, vocab = corpus()
    batches = windows(data, steps)
    rows = [train_one(m, target, mode, batches, len(vocab)) for m in models
            for target, mode in RUNS]
    _print(rows, len(data), len(vocab), steps)
    for m in models:
        g, p = (next(r for r in rows if r["model"] == m and r["backend"] == "CPU"
                     and r["mode"] == mode) for mode in ("GRAPH", "PYNATIVE"))
        dev = float(np.max(np.abs(np.array(g["losses"]) - np.array(p["losses"]))))
        print(f"{m}: GRAPH vs PYNATIVE loss curves on the CPU differ by at most {dev:.2e}")
    return rows


def _print(rows, chars: int, vocab: int, steps: int) -> None:
    from .digits_demo import device_cells, print_rows
    headers = ["model", "backend", "mode", "first loss", "final loss", "steps/s",
               "1st step s", "simulated device time"]
    table = []
    for r in rows:
        backend, sim = device_cells(r)
        table.append([r["model"], backend, r["mode"], f"{r['losses'][0]:.4f}",
                      f"{r['losses'][-1]:.4f}", f"{r['steps_per_s']:.1f}",
                      f"{r['first_step_s']:.1f}", sim])
    title = (f"minispore demo: character models on textwrap.py's source ({chars} characters, "
             f"vocabulary {vocab}), {steps} steps of batch {BATCH} x context {CONTEXT}")
    note = ("* simulated Ascend910B: its device time is MODEL time from the profile, not a "
            "hardware measurement; steps/s are wall time\n  after the first step (which "
            "includes compiling)")
    print_rows(headers, table, title, note)
