"""mindspore.train metrics on fixed inputs against MindSpore 2.10's numbers (values from
MindSpore 2.10, computed by running the same updates there)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn, train

Y_PRED = np.array([[0.1, 0.7, 0.2], [0.8, 0.1, 0.1], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1],
                   [0.1, 0.2, 0.7], [0.3, 0.4, 0.3]], np.float32)
Y = np.array([1, 0, 2, 1, 2, 2], np.int32)
Y_PRED2 = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1]], np.float32)
Y2 = np.array([0, 0], np.int32)

# values from MindSpore 2.10: (per class after two updates, eval(average=True))
COUNTS = {
    "Precision": ([2 / 3, 1 / 3, 1.0], 0.6666666666666666),
    "Recall": ([2 / 3, 0.5, 2 / 3], 0.611111111111111),
    "F1": ([2 / 3, 0.4, 0.8], 0.6222222222222222),
    "Fbeta": ([2 / 3, 0.35714285714285715, 0.9090909090909091], 0.6443001443001443),
}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_count_metrics_match_mindspore(name):
    metric = train.Fbeta(0.5) if name == "Fbeta" else getattr(train, name)()
    metric.update(ms.Tensor(Y_PRED), ms.Tensor(Y))
    metric.update(Y_PRED2, np.eye(3)[Y2])                  # one-hot labels are argmax'd
    per_class, mean = COUNTS[name]
    np.testing.assert_allclose(metric.eval(), per_class, rtol=1e-15)
    assert metric.eval(average=True) == pytest.approx(mean, rel=1e-15)


def test_multilabel_precision_recall_match_mindspore():
    y_pred = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 0]])
    y = np.array([[1, 0, 0], [0, 1, 1], [0, 1, 0], [1, 0, 0]])
    # values from MindSpore 2.10 (its multilabel ratios are per sample, concatenated)
    expected = {"Precision": ([0.5, 1, 0.5, 0, 0, 0.5], 0.4166666666666667),
                "Recall": ([1, 1, 1, 0, 0, 0.5], 0.5833333333333334)}
    for name, (values, mean) in expected.items():
        m = getattr(train, name)("multilabel")
        m.update(y_pred, y)
        m.update(y_pred[:2], y[:2][:, [1, 0, 2]])
        np.testing.assert_allclose(m.eval(), values, rtol=1e-15)
        assert m.eval(average=True) == pytest.approx(mean, rel=1e-15)


def test_precision_with_no_predicted_positives_is_zero():
    m = train.Precision()
    m.update(np.array([[0.9, 0.1], [0.8, 0.2]]), np.array([1, 1]))
    np.testing.assert_array_equal(m.eval(), [0.0, 0.0])      # MindSpore 2.10: [0, 0], mean 0
    assert m.eval(average=True) == 0.0


@pytest.mark.parametrize("normalize,expected", [
    ("no_norm", [[2, 1, 0], [1, 1, 0], [0, 1, 2]]),
    ("target", [[2 / 3, 1 / 3, 0], [0.5, 0.5, 0], [0, 1 / 3, 2 / 3]]),
    ("prediction", [[2 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 0], [0, 1 / 3, 1]]),
    ("all", [[0.25, 0.125, 0], [0.125, 0.125, 0], [0, 0.125, 0.25]]),
])
def test_confusion_matrix_matches_mindspore(normalize, expected):
    m = train.ConfusionMatrix(3, normalize=normalize)
    m.update(Y_PRED, Y)
    m.update(Y_PRED2, Y2)
    np.testing.assert_allclose(m.eval(), expected, rtol=1e-15)


def test_confusion_matrix_threshold_and_empty_rows():
    m = train.ConfusionMatrix(2, threshold=0.4)
    m.update(np.array([0.3, 0.5, 0.9, 0.1], np.float32), np.array([0, 1, 0, 1]))
    np.testing.assert_array_equal(m.eval(), [[1, 1], [1, 1]])    # MindSpore 2.10
    m = train.ConfusionMatrix(3, normalize="target")
    m.update(np.array([0, 1, 1]), np.array([0, 1, 0]))
    np.testing.assert_array_equal(m.eval(), [[0.5, 0.5, 0], [0, 1, 0], [0, 0, 0]])
    with pytest.raises(TypeError, match="threshold"):
        train.ConfusionMatrix(2, threshold=1)


def test_loss_mse_and_indexes_match_mindspore():
    m = train.Loss()
    m.update(ms.Tensor(np.float32(0.5)))
    m.update(np.array([1.0, 2.0, 3.0]))
    assert m.eval() == 1.25                                   # MindSpore 2.10
    m = train.MSE()
    m.update(np.array([[0.1, 0.2], [0.5, 0.5], [1, 2]]), np.array([[0, 0.2], [1, 0.5], [1, 1]]))
    assert m.eval() == pytest.approx(0.42, rel=1e-14)         # MindSpore 2.10
    acc = train.Accuracy().set_indexes([1, 2])
    acc.update(np.array(3.0), Y_PRED, Y)
    assert acc.eval() == pytest.approx(2 / 3)                 # MindSpore 2.10


def test_metric_table_and_nn_names():
    assert train.names() == ['F1', 'acc', 'accuracy', 'auc', 'bleu_score', 'confusion_matrix',
                             'confusion_matrix_metric', 'cosine_similarity', 'dice',
                             'hausdorff_distance', 'loss', 'mae', 'mean_surface_distance', 'mse',
                             'occlusion_sensitivity', 'perplexity', 'precision', 'recall', 'roc',
                             'root_mean_square_distance', 'top_1_accuracy', 'top_5_accuracy',
                             'topk']                           # MindSpore 2.10's names()
    assert isinstance(train.get_metric_fn("F1"), train.F1)
    with pytest.raises(NotImplementedError, match="bleu_score"):
        train.get_metric_fn("bleu_score")
    with pytest.raises(KeyError, match="nope"):
        train.get_metric_fn("nope")
    from minispore.nn import metrics
    for name in ("Accuracy", "MAE", "Metric", "Top1CategoricalAccuracy", "Loss", "Precision"):
        assert getattr(metrics, name) is getattr(train, name)
    assert nn.Accuracy is train.Accuracy


def test_accuracy_over_a_segmentation_map_matches_mindspore():
    rng = np.random.default_rng(3)
    y_pred = rng.random((2, 3, 2, 2)).astype(np.float32)       # (N, C, H, W)
    y = rng.integers(0, 3, (2, 2, 2))
    acc = train.Accuracy()
    acc.update(y_pred, y)
    assert acc.eval() == 0.25                                  # MindSpore 2.10 on these inputs
    with pytest.raises(ValueError, match="class number"):
        acc.update(np.zeros((2, 4)), np.array([0, 1]))


def test_error_and_loss_metrics_accumulate_as_mindspore():
    """float32 inputs: the error is summed in float32 and accumulated in float64, as MindSpore
    (whose numpy 1.x turns `0 + float32` into float64); values from MindSpore 2.10, exact."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((7, 3)).astype(np.float32)
    b = rng.standard_normal((7, 3)).astype(np.float32)
    got = {}
    for cls in (train.MAE, train.MSE):
        m = cls()
        m.update(ms.Tensor(a), ms.Tensor(b))
        m.update(a[:2], b[:2])
        got[cls.__name__] = m.eval()
    loss = train.Loss()
    for row in a:
        loss.update(ms.Tensor(row))
    got["Loss"] = loss.eval()
    assert got == {"MAE": 2.956645859612359, "MSE": 4.5796051025390625,
                   "Loss": -0.2184733578136989}
    assert all(type(v) is np.float64 for v in got.values())   # MindSpore 2.10's type


def test_score_metrics_match_mindspore():
    """Dice, Perplexity, CosineSimilarity, ROC and auc on fixed inputs; values from MindSpore
    2.10 (Perplexity exact; Dice to float32 dot-product rounding)."""
    rng = np.random.default_rng(7)
    a = rng.random((3, 5)).astype(np.float32)
    b = (rng.random((3, 5)) > 0.5).astype(np.float32)
    d = train.Dice()
    d.update(ms.Tensor(a), ms.Tensor(b))
    d.update(a[:1], b[:1])
    assert d.eval() == pytest.approx(0.37615640928479654, rel=1e-6)
    p = rng.random((6, 4)).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    lab = np.array([0, 3, 1, 1, 2, 0])
    m = train.Perplexity()
    m.update(p, lab)
    m.update(ms.Tensor(p[:3]), ms.Tensor(lab[:3]))
    assert m.eval() == 11.658804913456443
    m = train.Perplexity(ignore_label=1)
    m.update(p, lab)
    assert m.eval() == 9.995387984110396
    c = train.CosineSimilarity()
    c.update(a)
    np.testing.assert_allclose(c.eval(), [[0.0, 0.7153801321983337, 0.7700867652893066],
                                          [0.7153801321983337, 0.0, 0.849838137626648],
                                          [0.7700867652893066, 0.849838137626648, 0.0]],
                               rtol=1e-6)
    c = train.CosineSimilarity(similarity="dot", reduction="mean")
    c.update(a)
    np.testing.assert_allclose(c.eval(), [0.7987902164459229, 0.8580324053764343,
                                          0.6516508460044861], rtol=1e-6)
    roc = train.ROC(pos_label=1)
    roc.update(np.array([0.1, 0.4, 0.35, 0.8, 0.4], np.float32), np.array([0, 0, 1, 1, 1]))
    fpr, tpr, thresholds = roc.eval()
    np.testing.assert_array_equal(fpr, [0.0, 0.0, 0.5, 0.5, 1.0])
    np.testing.assert_allclose(tpr, [0.0, 1 / 3, 2 / 3, 1.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(thresholds, [1.8, 0.8, 0.4, 0.35, 0.1], rtol=1e-7)
    assert train.auc(fpr, tpr) == 0.75
    roc = train.ROC(class_num=3)
    roc.update(p[:, :3], np.array([0, 2, 1, 1, 2, 0]))
    fprs, tprs, _ = roc.eval()
    assert [f.tolist() for f in fprs] == [[0.0, 0.0, 0.5, 1.0], [0.0, 0.0, 0.5, 1.0],
                                          [0.0, 0.5, 0.5, 1.0]]
    assert [t.tolist() for t in tprs] == [[0.0, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0],
                                          [0.0, 0.0, 1.0, 1.0]]
    assert train.auc(np.array([0.5, 0.0, 1.0]), np.array([0.6, 0.0, 1.0]), reorder=True) == \
        pytest.approx(0.55, rel=1e-15)
    with pytest.raises(ValueError, match="increasing or decreasing"):
        train.auc(np.array([0.5, 0.0, 1.0]), np.array([0.6, 0.0, 1.0]))
