"""A small ResNet trained the way MindSpore's ResNet/CIFAR-10 tutorial trains one: CIFAR-10
binary files read by `Cifar10Dataset`, augmented (random crop with padding, horizontal flip),
normalised, trained by `Model` with `amp_level="O2"` (float16 compute, a loss scale)
and a `ModelCheckpoint` callback, stopped halfway, resumed from the last checkpoint into a fresh
network and optimizer, evaluated, and exported as ONNX.

No download: the example writes CIFAR-10-format files itself (the binary batches'
record layout: one label byte, then 1024 red, 1024 green and 1024 blue bytes; 10000 records a
file), from the 8x8 digits that ship inside scikit-learn, upscaled to 32x32 and tinted per class.

Replace `minispore` with `mindspore` to run it on MindSpore.

    python examples/14_cifar_resnet.py --mode graph|pynative [--device CPU|Ascend]
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.dataset import transforms, vision
from minispore.train import (CheckpointConfig, FixedLossScaleManager, LossMonitor, Model,
                             ModelCheckpoint, load_checkpoint, load_param_into_net)


def _arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


MODE = _arg("--mode", os.environ.get("EXAMPLE_MODE", "graph"))
DEVICE = _arg("--device", "CPU")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE,
               device_target=DEVICE)
ms.set_seed(1)
ds.config.set_seed(1)
EPOCHS, BATCH = 4, 32
work = tempfile.mkdtemp(prefix="cifar-resnet-")


# ---------------------------------------------------------------- CIFAR-10-format files
RECORDS = 10000          # records per CIFAR-10 batch file (MindSpore refuses shorter files)
TRAIN, TEST = 1400, 397  # the digits: the first 1400 train, the other 397 test


def write_cifar10(directory):
    digits = load_digits()
    images = np.kron(digits.images / 16.0, np.ones((4, 4)))           # (N, 32, 32) in [0, 1]
    tint = np.random.default_rng(0).uniform(0.4, 1.0, size=(10, 3))   # one colour per class
    rgb = images[:, None] * tint[digits.target][:, :, None, None]      # (N, 3, 32, 32)
    records = np.concatenate([digits.target[:, None].astype(np.uint8),
                              (rgb * 255).round().astype(np.uint8).reshape(len(rgb), -1)], 1)
    folder = os.path.join(directory, "cifar-10-batches-bin")
    os.makedirs(folder)
    # each file is filled up to RECORDS by repeating its digits; the samplers below read the
    # first TRAIN / TEST records only
    for name, part in (("data_batch_1.bin", records[:TRAIN]), ("test_batch.bin", records[TRAIN:])):
        np.resize(part, (RECORDS, part.shape[1])).tofile(os.path.join(folder, name))
    return folder


def create_dataset(folder, usage, training):
    sampler = ds.SubsetRandomSampler(list(range(TRAIN))) if training else \
        ds.SequentialSampler(num_samples=TEST)
    data = ds.Cifar10Dataset(folder, usage=usage, sampler=sampler)
    ops = [vision.RandomCrop((32, 32), (4, 4, 4, 4)), vision.RandomHorizontalFlip()] \
        if training else []
    ops += [vision.Rescale(1.0 / 255.0, 0.0),
            vision.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]),
            vision.HWC2CHW()]
    data = data.map(operations=ops, input_columns="image", num_parallel_workers=2)
    data = data.map(operations=transforms.TypeCast(ms.int32), input_columns="label")
    return data.batch(BATCH, drop_remainder=training)


# ---------------------------------------------------------------- the network
class ResidualBlock(nn.Cell):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        self.down = None
        if stride != 1 or in_channels != out_channels:
            self.down = nn.SequentialCell(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride),
                nn.BatchNorm2d(out_channels))

    def construct(self, x):
        identity = x if self.down is None else self.down(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet(nn.Cell):
    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.SequentialCell(nn.Conv2d(3, 16, 3, stride=2), nn.BatchNorm2d(16),
                                      nn.ReLU())                       # 32x32 -> 16x16
        self.layer1 = ResidualBlock(16, 16, 1)
        self.layer2 = ResidualBlock(16, 32, 2)                        # -> 8x8
        self.pool = nn.AvgPool2d(8)                                   # 8x8 -> 1x1
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(32, num_classes)

    def construct(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(self.flatten(self.pool(x)))


def build_model():
    net = ResNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.02, momentum=0.9)
    # O2 scales the loss; a fixed scale with every step applied, the loss-scale manager that
    # MindSpore's CPU takes (it has no overflow check for a dynamic one)
    manager = FixedLossScaleManager(16.0, drop_overflow_update=False)
    return net, opt, Model(net, loss, opt, metrics={"accuracy"}, amp_level="O2",
                           loss_scale_manager=manager)


class LossHistory(ms.train.Callback):
    """The loss of every step, to compare the resumed run's curve."""

    def __init__(self):
        self.losses = []

    def on_train_step_end(self, run_context):
        outputs = run_context.original_args().net_outputs
        loss = outputs[0] if isinstance(outputs, (tuple, list)) else outputs
        self.losses.append(float(loss.asnumpy()))


try:
    folder = write_cifar10(work)
    train_data = create_dataset(folder, "train", True)
    steps = train_data.get_dataset_size()

    # the first half, saving a checkpoint at the end of every epoch
    net, opt, model = build_model()
    config = CheckpointConfig(save_checkpoint_steps=steps, keep_checkpoint_max=2)
    checkpoints = ModelCheckpoint(prefix="resnet", directory=work, config=config)
    first = LossHistory()
    model.train(EPOCHS // 2, train_data, callbacks=[checkpoints, first, LossMonitor(steps)])
    saved = checkpoints.latest_ckpt_file_name
    print(f"checkpoint: {os.path.basename(saved)}")

    # resume: a fresh network and optimizer, the checkpoint's parameters (optimizer state
    # included), and the epochs left
    net, opt, model = build_model()
    load_param_into_net(net, load_checkpoint(saved))
    load_param_into_net(opt, load_checkpoint(saved))
    second = LossHistory()            # a dataset feeds one Model (MindSpore checks): a new one
    model.train(EPOCHS, create_dataset(folder, "train", True),
                callbacks=[second, LossMonitor(steps)], initial_epoch=EPOCHS // 2)
    accuracy = model.eval(create_dataset(folder, "test", False))["accuracy"]
    print(f"first loss: {first.losses[0]:.6g}")
    print(f"final loss: {np.mean(second.losses[-steps:]):.6g}")
    print(f"test accuracy: {accuracy:.4f}")

    onnx_file = os.path.join(work, "resnet")
    net.set_train(False)
    ms.export(net, ms.Tensor(np.zeros((1, 3, 32, 32), np.float32)), file_name=onnx_file,
              file_format="ONNX")
    print(f"exported: {os.path.basename(onnx_file)}.onnx "
          f"({os.path.getsize(onnx_file + '.onnx')} bytes)")
    # 10 classes (chance 10%): minispore reaches ~0.99 on CPU and the simulated Ascend alike
    # (MindSpore 2.10's CPU, with its own random initial weights and crops, ~0.5)
    assert accuracy > 0.3 and np.mean(second.losses[-steps:]) < first.losses[0], \
        (accuracy, first.losses[0])
    print(f"cifar resnet OK ({MODE}) on {DEVICE}")
finally:
    shutil.rmtree(work, ignore_errors=True)
