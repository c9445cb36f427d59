"""Resuming training from ModelCheckpoint's file: N epochs uninterrupted give exactly the loss
curve of N/2 epochs + checkpoint, then a FRESH network and optimizer that load the checkpoint
into the train network (weights and optimizer state: moments, global_step, learning_rate) and
train the rest with initial_epoch. Both modes, Momentum and Adam."""
from __future__ import annotations

import os

import numpy as np
import pytest

import minispore as ms
import minispore.dataset as ds
from minispore import nn
from minispore.train import (CheckpointConfig, LossMonitor, Model, ModelCheckpoint,
                             load_checkpoint, load_param_into_net)

MODES = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}
EPOCHS = 4


def _data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 6)).astype(np.float32)
    y = (x[:, 0] - x[:, 2] > 0).astype(np.int32)
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8)


def _fresh(opt_name, seed):
    ms.set_seed(seed)
    net = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 2)])
    if opt_name == "momentum":
        opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    else:
        opt = nn.Adam(net.trainable_params(), learning_rate=0.01)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return net, Model(net, loss, opt)


@pytest.mark.parametrize("opt_name", ["momentum", "adam"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_resumed_loss_curve_is_identical(tmp_path, mode, opt_name):
    ms.set_context(mode=MODES[mode])
    _, whole = _fresh(opt_name, seed=0)
    full = LossMonitor(per_print_times=0)
    whole.train(EPOCHS, _data(), callbacks=full)

    _, first = _fresh(opt_name, seed=0)
    head = LossMonitor(per_print_times=0)
    ckpt = ModelCheckpoint(prefix="run", directory=str(tmp_path), config=CheckpointConfig(
        save_checkpoint_steps=1000, format="safetensors"))       # saved once, at the end
    first.train(EPOCHS // 2, _data(), callbacks=[head, ckpt])
    assert os.path.basename(ckpt.latest_ckpt_file_name) == "run-2_5.safetensors"

    net, second = _fresh(opt_name, seed=123)          # other initial weights: all must load
    params = load_checkpoint(ckpt.latest_ckpt_file_name, format="safetensors")
    not_loaded, _ = load_param_into_net(second.train_network, params)
    assert not_loaded == []
    tail = LossMonitor(per_print_times=0)
    second.train(EPOCHS, _data(), callbacks=tail, initial_epoch=EPOCHS // 2)
    assert head.losses + tail.losses == full.losses                # exact equality
    assert len(full.losses) == EPOCHS * 5
    assert int(second.train_network.optimizer.global_step.asnumpy()[0]) == EPOCHS * 5


@pytest.mark.parametrize("mode", sorted(MODES))
def test_backup_and_restore(tmp_path, mode):
    """BackupAndRestore (MindSpore's semantics): a backup of the train network after every
    epoch, loaded when the next training starts (the epoch count is the caller's), deleted at
    the end when delete_checkpoint. Resuming this way gives the uninterrupted curve too."""
    from minispore.train import BackupAndRestore
    ms.set_context(mode=MODES[mode])
    _, whole = _fresh("adam", seed=0)
    full = LossMonitor(per_print_times=0)
    whole.train(EPOCHS, _data(), callbacks=full)

    _, first = _fresh("adam", seed=0)
    head = LossMonitor(per_print_times=0)
    first.train(EPOCHS // 2, _data(), callbacks=[head, BackupAndRestore(
        str(tmp_path), delete_checkpoint=False)])
    assert os.listdir(tmp_path) == ["backup.ckpt"]
    _, second = _fresh("adam", seed=123)
    tail = LossMonitor(per_print_times=0)
    second.train(EPOCHS, _data(), callbacks=[tail, BackupAndRestore(str(tmp_path))],
                 initial_epoch=EPOCHS // 2)
    assert head.losses + tail.losses == full.losses
    assert os.listdir(tmp_path) == []
