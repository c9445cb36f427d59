"""Losses (nn Cells and the functional ops) against hand-written numpy: reductions, class
weights, ignore_index, label smoothing, probability targets, pos_weight; gradients against
numpy's analytic gradient; graph vs PyNative; the simulated Ascend vs CPU; argument errors."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops

F32 = np.float32
R = np.random.default_rng(2)
LOGITS = R.standard_normal((5, 4)).astype(F32)
LABELS = np.array([0, 3, 1, -100, 2], np.int32)
SAFE = np.array([0, 3, 1, 1, 2], np.int32)
W = np.array([1.0, 2.0, 0.5, 1.5], F32)
PROBS = R.dirichlet(np.ones(4), 5).astype(F32)


def _logsm(x, axis=-1):
    x = x.astype(np.float64)
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def _reduce(v, reduction):
    return {"mean": v.mean(), "sum": v.sum(), "none": v}[reduction]


def _both_modes(cell, *args):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = cell(*args).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = cell(*args).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(graph, eager, rtol=1e-6, atol=1e-7)
    return eager


def _ce_ref(x, y, weight=None, ignore=-100, reduction="mean", ls=0.0):
    lp = _logsm(x, 1)
    c = x.shape[1]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    mask = y != ignore
    ys = np.where(mask, y, 0)
    wy = w[ys] * mask
    nll = -lp[np.arange(len(y)), ys] * wy
    smooth = -(lp * w).sum(1) * mask
    if reduction == "mean":
        nll, smooth = nll.sum() / wy.sum(), smooth.sum() / wy.sum()
    elif reduction == "sum":
        nll, smooth = nll.sum(), smooth.sum()
    return (1 - ls) * nll + ls / c * smooth


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy_class_indices(reduction, weighted, ls):
    w = Tensor(W) if weighted else None
    cell = nn.CrossEntropyLoss(weight=w, reduction=reduction, label_smoothing=ls)
    got = _both_modes(cell, Tensor(LOGITS), Tensor(LABELS))
    ref = _ce_ref(LOGITS, LABELS, W if weighted else None, reduction=reduction, ls=ls)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    f = ops.cross_entropy(Tensor(LOGITS), Tensor(LABELS), w, reduction=reduction,
                          label_smoothing=ls)
    np.testing.assert_allclose(f.asnumpy(), got, rtol=1e-6)


@pytest.mark.parametrize("ls", [0.0, 0.1])
def test_cross_entropy_probabilities_and_spatial(ls):
    t = PROBS * (1 - ls) + ls / 4
    ref = -(_logsm(LOGITS, 1) * W * t).sum(1).mean()
    got = _both_modes(nn.CrossEntropyLoss(Tensor(W), label_smoothing=ls), Tensor(LOGITS),
                      Tensor(PROBS))
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    x = R.standard_normal((2, 3, 2, 2)).astype(F32)        # (N, C, H, W): classes on axis 1
    y = R.integers(0, 3, (2, 2, 2)).astype(np.int32)
    lp = _logsm(x, 1)
    ref = -np.take_along_axis(lp, y[:, None], 1).mean()
    np.testing.assert_allclose(_both_modes(nn.CrossEntropyLoss(), Tensor(x), Tensor(y)), ref,
                               rtol=1e-5)


def test_cross_entropy_gradient():
    g = ms.grad(lambda x: ops.cross_entropy(x, Tensor(SAFE)))(Tensor(LOGITS)).asnumpy()
    sm = np.exp(_logsm(LOGITS, 1))
    ref = (sm - np.eye(4)[SAFE]) / 5
    np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    lp = _logsm(LOGITS, 1).astype(F32)
    got = _both_modes(nn.NLLLoss(Tensor(W), reduction=reduction), Tensor(lp), Tensor(LABELS))
    np.testing.assert_allclose(got, _ce_ref(LOGITS, LABELS, W, reduction=reduction),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sparse,reduction", [(False, "none"), (True, "mean"), (True, "sum")])
def test_softmax_cross_entropy_with_logits(sparse, reduction):
    labels = Tensor(SAFE) if sparse else Tensor(np.eye(4, dtype=F32)[SAFE])
    cell = nn.SoftmaxCrossEntropyWithLogits(sparse=sparse, reduction=reduction)
    ref = -_logsm(LOGITS)[np.arange(5), SAFE]
    np.testing.assert_allclose(_both_modes(cell, Tensor(LOGITS), labels),
                               _reduce(ref, reduction), rtol=1e-5, atol=1e-6)
    assert nn.SoftmaxCrossEntropyWithLogits().reduction == "none"      # MindSpore's default


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weights", [False, True])
def test_bce_with_logits(reduction, weights):
    x = np.array([[-30.0, -1.0, 0.0], [0.5, 2.0, 40.0]], F32)     # extremes stay finite
    t = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 1.0]], F32)
    w = np.array([1.0, 2.0, 0.5], F32)
    pw = np.array([3.0, 1.0, 0.25], F32)
    xd = x.astype(np.float64)
    log_sig, log_1msig = -np.logaddexp(0, -xd), -np.logaddexp(0, xd)
    p = pw if weights else 1.0
    ref = -(p * t * log_sig + (1 - t) * log_1msig) * (w if weights else 1.0)
    cell = nn.BCEWithLogitsLoss(reduction, Tensor(w) if weights else None,
                                Tensor(pw) if weights else None)
    got = _both_modes(cell, Tensor(x), Tensor(t))
    np.testing.assert_allclose(got, _reduce(ref, reduction), rtol=1e-5, atol=1e-6)
    f = ops.binary_cross_entropy_with_logits(Tensor(x), Tensor(t), cell.weight, cell.pos_weight,
                                             reduction)
    np.testing.assert_allclose(f.asnumpy(), got, rtol=1e-6)


@pytest.mark.parametrize("cls,fn", [(nn.MSELoss, np.square), (nn.L1Loss, np.abs)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_l1(cls, fn, reduction):
    y = R.standard_normal((1, 4)).astype(F32)                 # broadcasts against (5, 4)
    got = _both_modes(cls(reduction), Tensor(LOGITS), Tensor(y))
    np.testing.assert_allclose(got, _reduce(fn(LOGITS.astype(np.float64) - y), reduction),
                               rtol=1e-5, atol=1e-6)


def test_losses_on_ascend_match_cpu():
    cells = [(nn.CrossEntropyLoss(Tensor(W), label_smoothing=0.1), Tensor(LABELS)),
             (nn.BCEWithLogitsLoss(), Tensor((LOGITS > 0).astype(F32))),
             (nn.MSELoss(), Tensor(PROBS))]
    cpu = [c(Tensor(LOGITS), y).asnumpy() for c, y in cells]
    ms.set_context(device_target="Ascend")
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        for (c, y), ref in zip(cells, cpu):
            np.testing.assert_allclose(c(Tensor(LOGITS), y).asnumpy(), ref, rtol=1e-2,
                                       atol=1e-2)


@pytest.mark.parametrize("call,err,words", [
    (lambda: nn.MSELoss("avg"), ValueError, ["reduction", "'avg'", "'mean'"]),
    (lambda: nn.CrossEntropyLoss(label_smoothing=1.5), ValueError, ["label_smoothing", "1.5"]),
    (lambda: nn.CrossEntropyLoss(weight=[1.0, 2.0]), TypeError, ["weight", "list", "Tensor"]),
    (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=1), TypeError, ["sparse", "1"]),
    (lambda: ops.cross_entropy(Tensor(LOGITS), Tensor(LABELS[:3])), ValueError,
     ["(5, 4)", "(3,)", "(5,)"]),
    (lambda: ops.cross_entropy(Tensor(LOGITS), Tensor(PROBS[:, :3])), ValueError,
     ["(5, 3)", "integer target"]),
    (lambda: ops.nll_loss(Tensor(LOGITS), Tensor(PROBS[:, 0])), TypeError, ["astype"]),
    (lambda: ops.binary_cross_entropy_with_logits(Tensor(LOGITS), Tensor(LOGITS[:2])),
     ValueError, ["(2, 4)", "(5, 4)"]),
])
def test_loss_errors(call, err, words):
    with pytest.raises(err) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


_SPARSE_CE = nn.SoftmaxCrossEntropyWithLogits(sparse=True)
_LABEL_LOSSES = {
    "cross_entropy": lambda x, y: ops.cross_entropy(x, y),
    "nll_loss": lambda x, y: ops.nll_loss(ops.log_softmax(x, 1), y),
    "sparse_softmax_cross_entropy": lambda x, y: _SPARSE_CE(x, y),
}
# (device, mode, jit level): PyNative, each jit level (O2 on the CPU: the native sink) and the
# simulated Ascend (GPU cells run where a GPU is: tests/gpu)
_LABEL_RUNS = [("CPU", "pynative", None), ("CPU", "graph", "O0"), ("CPU", "graph", "O1"),
               ("CPU", "graph", "O2"), ("Ascend", "pynative", None), ("Ascend", "graph", "O0")]


def _run_loss(name, run, x, y):
    device, mode, level = run
    ms.set_context(device_target=device)
    fn = _LABEL_LOSSES[name]
    if mode == "pynative":
        ms.set_context(mode=ms.PYNATIVE_MODE)
        return fn(Tensor(x), Tensor(y))
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    try:
        return ms.jit(fn)(Tensor(x), Tensor(y))
    finally:                               # the CPU's O2 graph ran as the native program
        if device == "CPU" and level == "O2":
            from minispore.backends.cpu.native_sink import NativeProgram
            from minispore.core.graph import compile as graph_compile
            assert type(graph_compile.last_compiled().program) is NativeProgram


def _run_id(run):
    device, mode, level = run
    return "-".join([device, mode] + ([level] if level else []))


@pytest.mark.parametrize("run", _LABEL_RUNS, ids=_run_id)
@pytest.mark.parametrize("label", [4, -1, 9])
@pytest.mark.parametrize("name", list(_LABEL_LOSSES))
def test_a_class_label_out_of_range_raises_index_error(name, label, run):
    """A label outside [0, C) is an IndexError naming the loss, the label and the valid range
    (never a loss of 0 for that sample), in PyNative and at run time of a compiled graph, on
    every jit level and the simulated Ascend."""
    y = SAFE.copy()
    y[2] = label
    ignore = "" if name == "sparse_softmax_cross_entropy" else \
        r" \(or ignore_index=-100, which is skipped\)"
    with pytest.raises(IndexError, match=rf"^{name}: class label {label} is out of range for 4 "
                                         rf"classes; valid class labels are 0 to 3{ignore}"):
        _run_loss(name, run, LOGITS, y)


@pytest.mark.parametrize("run", _LABEL_RUNS, ids=_run_id)
@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
def test_ignore_index_labels_are_skipped_at_every_level(name, run):
    """A label equal to ignore_index (the default -100) is skipped, not checked, everywhere."""
    got = _run_loss(name, run, LOGITS, LABELS).asnumpy()
    rtol = 1e-2 if run[0] == "Ascend" else 1e-5
    np.testing.assert_allclose(got, _ce_ref(LOGITS, LABELS), rtol=rtol, atol=1e-6)


def test_an_ignore_index_outside_the_classes_is_skipped():
    y = SAFE.copy()
    y[1] = 7
    got = ops.cross_entropy(Tensor(LOGITS), Tensor(y), ignore_index=7).asnumpy()
    np.testing.assert_allclose(got, _ce_ref(LOGITS, y, ignore=7), rtol=1e-5, atol=1e-6)
