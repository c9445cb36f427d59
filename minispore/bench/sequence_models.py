"""The sequence-model training steps that `python -m minispore bench --workloads lstm,transformer`
and benchmarks/layers_training.py time: a 2-layer LSTM classifier and a small GPT-style
character model. The file names only `minispore`, so the benchmark runs the very same text on
MindSpore with that one word changed.

- lstm: nn.LSTM(256, 256, num_layers=2, batch_first=True) over a float32 (32, 64, 256)
  sequence, nn.Dense(256, 10) on the last step's output, sparse softmax cross-entropy;
- transformer: token and position nn.Embedding (vocabulary 64, width 128, context 64), two
  nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True) under a causal mask,
  nn.LayerNorm and nn.Dense(128, 64); the cross-entropy over every position.
Both train with nn.Momentum(lr 0.05, momentum 0.9) in nn.TrainOneStepCell, batch 32.
"""
import numpy as np

import minispore as ms
from minispore import nn

BATCH, LR, MOMENTUM = 32, 0.05, 0.9
LSTM_IN, LSTM_HIDDEN, LSTM_LAYERS, SEQ, CLASSES = 256, 256, 2, 64, 10
VOCAB, WIDTH, HEADS, FFN, CONTEXT, LAYERS = 64, 128, 4, 512, 64, 2


class LSTMNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(LSTM_IN, LSTM_HIDDEN, num_layers=LSTM_LAYERS, batch_first=True)
        self.fc = nn.Dense(LSTM_HIDDEN, CLASSES)

    def construct(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


class GPT(nn.Cell):
    """Token and position embeddings, `layers` causal TransformerEncoderLayers, LayerNorm and a
    Dense head; logits (batch * context, vocab). The bench sizes by default."""

    def __init__(self, vocab=VOCAB, width=WIDTH, heads=HEADS, ffn=FFN, layers=LAYERS,
                 context=CONTEXT):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(context, width)
        self.blocks = nn.CellList([nn.TransformerEncoderLayer(width, heads, ffn, dropout=0.0,
                                                              batch_first=True)
                                   for _ in range(layers)])
        self.norm = nn.LayerNorm((width,))
        self.head = nn.Dense(width, vocab)
        self.mask = ms.Tensor(np.triu(np.ones((context, context), bool), 1))
        self.positions = ms.Tensor(np.arange(context, dtype=np.int32))
        self.vocab = vocab

    def construct(self, idx):
        h = self.tok(idx) + self.pos(self.positions)
        for block in self.blocks:
            h = block(h, src_mask=self.mask)
        return self.head(self.norm(h)).reshape(-1, self.vocab)


class GPTLoss(nn.Cell):
    """The GPT's logits for every position against the next characters."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def construct(self, idx, target):
        return self.loss(self.net(idx), target.reshape(-1))


def build(model, lr=LR, momentum=MOMENTUM):
    """A seeded TrainOneStepCell of `model` ('lstm' or 'transformer'), in training mode."""
    ms.set_seed(1)
    if model == "lstm":
        net = LSTMNet()
        with_loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                          reduction="mean"))
    else:
        net = GPT()
        with_loss = GPTLoss(net)
    opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=momentum)
    train = nn.TrainOneStepCell(with_loss, opt)
    train.set_train()
    return train


def inputs(model, batches=4, seed=0):
    """`batches` seeded (input, label) numpy pairs of `model`'s shapes."""
    rng = np.random.default_rng(seed)
    if model == "lstm":
        xs = rng.standard_normal((batches, BATCH, SEQ, LSTM_IN)).astype(np.float32)
        ys = rng.integers(0, CLASSES, (batches, BATCH)).astype(np.int32)
        return list(zip(xs, ys))
    tokens = rng.integers(0, VOCAB, (batches, BATCH, CONTEXT + 1)).astype(np.int32)
    return [(t[:, :-1], t[:, 1:]) for t in tokens]
