"""Save and load: train a few steps, save_checkpoint (with append_dict), then load_checkpoint
and load_param_into_net into a freshly initialised network, checking that every weight and the
predictions are equal; load_checkpoint(net=...) and filter_prefix; a mismatched network is
refused with an error listing the mismatch.

Replace `minispore` with `mindspore` to run it on MindSpore. minispore-specific: checkpoints
are safetensors files (MindSpore's default is its protobuf .ckpt format, so checkpoints do not
move between the two). Not shown because minispore lacks them: MindIR export/load (ms.export,
ms.load, nn.GraphCell).

    python examples/07_save_and_load.py --mode graph|pynative      (or EXAMPLE_MODE=pynative)
"""
import os
import sys
import tempfile

import numpy as np

import minispore as ms
from minispore import nn

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else \
    os.environ.get("EXAMPLE_MODE", "graph")
ms.set_context(mode=ms.GRAPH_MODE if MODE == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(3)


def network(hidden=16):
    return nn.SequentialCell(nn.Dense(8, hidden), nn.ReLU(), nn.Dense(hidden, 3))


rng = np.random.default_rng(0)
x = ms.Tensor(rng.standard_normal((32, 8)), ms.float32)
y = ms.Tensor(rng.integers(0, 3, 32), ms.int32)
model = network()
train_net = nn.TrainOneStepCell(nn.WithLossCell(model, nn.CrossEntropyLoss()),
                                nn.Adam(model.trainable_params(), 0.01))
losses = [float(train_net(x, y).asnumpy()) for _ in range(20)]
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
assert losses[-1] < losses[0]
expected = model(x).asnumpy()

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "model.ckpt")
    ms.save_checkpoint(model, path, append_dict={"epoch": 20})

    param_dict = ms.load_checkpoint(path)
    print("checkpoint entries:", sorted(param_dict))
    assert param_dict["epoch"].asnumpy().item() == 20
    new_model = network()                                    # different random weights
    assert not np.allclose(new_model(x).asnumpy(), expected)
    param_not_load, ckpt_not_load = ms.load_param_into_net(new_model, param_dict)
    print("param_not_load:", param_not_load, "ckpt_not_load:", ckpt_not_load)
    assert param_not_load == [] and ckpt_not_load == ["epoch"]
    for (name, p), q in zip(model.parameters_and_names(), new_model.get_parameters()):
        assert np.array_equal(p.asnumpy(), q.asnumpy()), name
    assert np.array_equal(new_model(x).asnumpy(), expected)

    other = network()
    ms.load_checkpoint(path, net=other, filter_prefix=["2.", "epoch"])   # skip the last layer
    assert np.array_equal(other[0].weight.asnumpy(), model[0].weight.asnumpy())
    assert not np.array_equal(other[2].weight.asnumpy(), model[2].weight.asnumpy())

    try:
        ms.load_param_into_net(network(hidden=4), param_dict)
    except ValueError as e:
        print("mismatch refused:", str(e).splitlines()[0])
    else:
        raise AssertionError("a checkpoint of another shape was loaded")
print(f"save and load OK ({MODE})")
