"""Metrics (MindSpore's Metric API, host side, numpy): the Metric base with clear/update/eval and
`set_indexes` (which outputs of the eval network a metric takes), Accuracy ('classification'
and 'multilabel'), MAE, MSE, Loss, the top-k categorical accuracies, and MindSpore's metric
table (`names()`, `get_metric_fn(name)`). Precision, Recall, Fbeta, F1 and ConfusionMatrix are
in metrics_counts.py, Dice, Perplexity, CosineSimilarity, ROC and auc in metrics_scores.py, all
re-exported here. Inputs may be Tensors, numpy arrays or lists; MAE
and MSE divide the summed error by the number of samples (first dimension), Loss averages the
per-update mean, as MindSpore does."""
from __future__ import annotations

import functools

import numpy as np

from ..core.tensor import Tensor


def _to_numpy(x, who):
    if isinstance(x, Tensor):
        return x.asnumpy()
    if isinstance(x, (np.ndarray, list, tuple, int, float)):
        return np.asarray(x)
    raise TypeError(f"{who}: inputs must be Tensors, numpy arrays or lists, got "
                    f"{type(x).__name__}")


def rearrange_inputs(func):
    """Decorates a Metric's update: when `set_indexes([i, j, ...])` was called, update receives
    inputs[i], inputs[j], ... instead of all inputs (MindSpore's `rearrange_inputs`)."""

    @functools.wraps(func)
    def wrapper(self, *inputs):
        indexes = self.indexes
        inputs = inputs if not indexes else [inputs[i] for i in indexes]
        return func(self, *inputs)
    return wrapper


class Metric:
    """Base class: clear() resets, update(*inputs) accumulates, eval() returns the value."""

    def __init__(self):
        self._indexes = None
        self.clear()

    @property
    def indexes(self):
        """The input positions update() takes (set by set_indexes), or None for all."""
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes):
        """Make update() take only the inputs at `indexes` (a list of int), in that order;
        returns self."""
        if not isinstance(indexes, list) or not all(isinstance(i, int) for i in indexes):
            raise ValueError(f"For 'set_indexes', the argument 'indexes' must be a list of int, "
                             f"got {indexes!r}")
        self._indexes = indexes
        return self

    def clear(self):
        raise NotImplementedError

    def update(self, *inputs):
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError

    def _convert_data(self, data):
        return _to_numpy(data, type(self).__name__)

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()


def _check_eval_inputs(who, eval_type, y_pred, y):
    """MindSpore's EvaluationBase checks (_check_shape, then _check_value), with its messages:
    'classification' wants y of y_pred's shape without axis 1; 'multilabel' the same shapes
    and every element of both 0 or 1 (scores are not rounded: MindSpore raises on them)."""
    if eval_type == "classification":
        if y_pred.ndim != y.ndim + 1:
            raise ValueError(f"In classification case, the dimension of y_pred (predicted value) "
                             f"should equal to the dimension of y (true value) add 1, but got "
                             f"y_pred dimension: {y_pred.ndim} and y dimension: {y.ndim}.")
        if y.shape != (y_pred.shape[0],) + y_pred.shape[2:]:
            raise ValueError(f"In classification case, y_pred (predicted value) shape and y (true "
                             f"value) shape can not match, y shape should be equal to y_pred "
                             f"shape that the value at index 1 is deleted. Such as y_pred shape "
                             f"(1, 2, 3), then y shape should be (1, 3). But got y_pred shape "
                             f"{y_pred.shape} and y shape {y.shape}")
        return
    if y_pred.ndim != y.ndim:
        raise ValueError(f"In {eval_type} case, the dimension of y_pred (predicted value) should "
                         f"equal to the dimension of y (true value), but got y_pred dimension: "
                         f"{y_pred.ndim} and y dimension: {y.ndim}.")
    if y_pred.shape != y.shape:
        raise ValueError(f"In {eval_type} case, the shape of y_pred (predicted value) should "
                         f"equal to the shape of y (true value), but got y_pred shape: "
                         f"{y_pred.shape} and y shape: {y.shape}.")
    if not (np.equal(y_pred ** 2, y_pred).all() and np.equal(y ** 2, y).all()):
        raise ValueError("In multilabel case, all elements in y_pred (predicted value) and y "
                         "(true value) should be 0 or 1.Please check whether your inputs y_pred "
                         "and y are correct.")


class Accuracy(Metric):
    """Fraction of correct predictions. update(y_pred, y): y_pred (N, C, ...) scores (argmax
    over axis 1); y (N, ...) class indices or one-hot over axis 1. eval_type='multilabel':
    y_pred and y (N, C, ...) both of 0s and 1s (scores raise MindSpore's ValueError: threshold
    them first, e.g. `(y_pred > 0.5)`), a sample counts when every label matches. eval()
    returns a numpy.float64, as MindSpore's."""

    def __init__(self, eval_type="classification"):
        if eval_type not in ("classification", "multilabel"):
            raise ValueError(f"For 'Accuracy', the argument 'eval_type' must be in "
                            f"{{'classification', 'multilabel'}}, but got {eval_type!r}")
        self.eval_type = eval_type
        super().__init__()

    def clear(self):
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'Accuracy.update', it needs 2 inputs (predicted value, true "
                             f"value), but got {len(inputs)}")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self.eval_type == "classification" and y_pred.ndim == y.ndim and _is_one_hot(y):
            y = y.argmax(axis=1)
        _check_eval_inputs("Accuracy", self.eval_type, y_pred, y)
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"For 'Accuracy.update', class number not match: earlier inputs "
                             f"had {self._class_num} classes, this y_pred has {y_pred.shape[1]}")
        if self.eval_type == "classification":
            correct = np.equal(y_pred.argmax(axis=1), y).reshape(-1)
        else:
            last = y_pred.ndim - 1
            y_pred = y_pred.swapaxes(1, last).reshape(-1, self._class_num)
            y = y.swapaxes(1, last).reshape(-1, self._class_num)
            correct = np.equal(y_pred, y).all(axis=1)
        self._correct_num += int(correct.sum())
        self._total_num += int(correct.shape[0])

    def eval(self):
        if self._total_num == 0:
            raise RuntimeError("The 'Accuracy' can not be calculated, because the number of "
                               "samples is 0; call update() before eval()")
        return np.float64(self._correct_num) / self._total_num


class MAE(Metric):
    """Mean absolute error: sum |y - y_pred| / number of samples. The error is computed and
    summed in the inputs' dtype and accumulated in float64 (MindSpore's numbers)."""

    def clear(self):
        self._abs_error_sum = 0.0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"MAE.update needs 2 inputs (y_pred, y), got {len(inputs)}")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y.size != y_pred.size:
            raise ValueError(f"MAE: y_pred {y_pred.shape} and y {y.shape} must have the same "
                             f"number of elements")
        self._abs_error_sum += np.float64(np.abs(y.reshape(y_pred.shape) - y_pred).sum())
        self._samples_num += int(y.shape[0]) if y.ndim else 1

    def eval(self):
        if self._samples_num == 0:
            raise RuntimeError("MAE can not be calculated, because the number of samples is 0; "
                               "call update() first")
        return np.float64(self._abs_error_sum / self._samples_num)     # MindSpore's type


class MSE(Metric):
    """Mean squared error: sum (y - y_pred)^2 / number of samples (first dimension); summed in
    the inputs' dtype, accumulated in float64, as MindSpore."""

    def clear(self):
        self._squared_error_sum = 0.0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'MSE.update', it needs 2 inputs (predicted value, true value), "
                             f"but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y.size != y_pred.size:
            raise ValueError(f"MSE: y_pred {y_pred.shape} and y {y.shape} must have the same "
                             f"number of elements")
        squared = np.power(y.reshape(y_pred.shape) - y_pred, 2)
        self._squared_error_sum += np.float64(squared.sum())
        self._samples_num += int(y.shape[0]) if y.ndim else 1

    def eval(self):
        if self._samples_num == 0:
            raise RuntimeError("The 'MSE' can not be calculated, because the number of samples is "
                               "0; call update() before eval()")
        return np.float64(self._squared_error_sum / self._samples_num)  # MindSpore's type


class Loss(Metric):
    """The average of the loss values given to update(): each update adds the mean of its loss
    (a scalar or a 1-d array), eval() divides by the number of updates (MindSpore's rule)."""

    def clear(self):
        self._sum_loss = 0
        self._total_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 1:
            raise ValueError(f"For 'Loss.update', it needs 1 input (loss), but got {len(inputs)}")
        loss = self._convert_data(inputs[0])
        if loss.ndim == 0:
            loss = loss.reshape(1)
        if loss.ndim != 1:
            raise ValueError(f"For 'Loss.update', the dimension of your input (loss) must be 1, "
                             f"but got {loss.ndim}.")
        self._sum_loss += np.float64(loss.mean(-1))      # MindSpore's float64 running sum
        self._total_num += 1

    def eval(self):
        if self._total_num == 0:
            raise RuntimeError("The 'Loss' can not be calculated, because the number of samples "
                               "is 0; call update() before eval()")
        return np.float64(self._sum_loss / self._total_num)     # MindSpore's type


def _is_one_hot(y) -> bool:
    """MindSpore's one-hot test: every entry 0 or 1 and each row summing to 1."""
    if y.ndim > 1 and np.equal(y ** 2, y).all():
        return bool(np.equal(np.ones((y.shape[0],) + y.shape[2:]), y.sum(axis=1)).all())
    return False


class TopKCategoricalAccuracy(Metric):
    """The fraction of samples whose label is among the k highest scores. update(y_pred, y):
    y_pred (N, C); y (N,) indices or (N, C) one-hot. Ties rank the earlier class first
    (MindSpore's `argsort(-y_pred)`)."""

    def __init__(self, k):
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"For 'TopKCategoricalAccuracy', the type of the argument 'k' "
                            f"should be int, but got 'k' type: {type(k)}.")
        if k < 1:
            raise ValueError(f"For 'TopKCategoricalAccuracy', the argument 'k' must be at "
                             f"least 1, but got 'k' value: {k}.")
        self.k = k
        super().__init__()

    def clear(self):
        self._correct_num = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'TopKCategoricalAccuracy.update', it needs 2 inputs "
                             f"(predicted value, true value), but got 'inputs' size: "
                             f"{len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim and _is_one_hot(y):
            y = y.argmax(axis=1)
        if y_pred.ndim != 2 or y_pred.shape[1] < self.k:
            raise ValueError(f"For '{type(self).__name__}.update', the predicted value must "
                             f"have shape (N, C) with C >= k = {self.k}, but got shape "
                             f"{y_pred.shape}")
        indices = np.argsort(-y_pred, axis=1)[:, :self.k]
        repeated = y.reshape(-1, 1).repeat(self.k, axis=1)
        self._correct_num += int(np.equal(indices, repeated).sum())
        self._samples_num += int(repeated.shape[0])

    def eval(self):
        if self._samples_num == 0:
            raise RuntimeError("The 'TopKCategoricalAccuracy' can not be calculated, because "
                               "the number of samples is 0; call update() before eval()")
        return np.float64(self._correct_num) / self._samples_num     # MindSpore's type


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """TopKCategoricalAccuracy with k=1."""

    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """TopKCategoricalAccuracy with k=5."""

    def __init__(self):
        super().__init__(5)


from .metrics_counts import F1, ConfusionMatrix, Fbeta, Precision, Recall  # noqa: E402
from .metrics_scores import ROC, CosineSimilarity, Dice, Perplexity, auc  # noqa: E402

_FACTORY = {
    "accuracy": Accuracy, "acc": Accuracy, "precision": Precision, "recall": Recall, "F1": F1,
    "topk": TopKCategoricalAccuracy, "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy, "mae": MAE, "mse": MSE, "loss": Loss,
    "confusion_matrix": ConfusionMatrix, "dice": Dice, "roc": ROC, "auc": auc,
    "cosine_similarity": CosineSimilarity, "perplexity": Perplexity,
}
# names in MindSpore's table whose metrics minispore does not implement
_NOT_IMPLEMENTED = ("bleu_score", "occlusion_sensitivity", "hausdorff_distance",
                    "mean_surface_distance", "root_mean_square_distance",
                    "confusion_matrix_metric")


def names():
    """The names of MindSpore's metric table (get_metric_fn raises NotImplementedError for
    those minispore does not implement)."""
    return sorted(list(_FACTORY) + list(_NOT_IMPLEMENTED))


def get_metric_fn(name, *args, **kwargs):
    """A new metric from its name in MindSpore's table ('accuracy', 'loss', 'F1', ...)."""
    if name in _NOT_IMPLEMENTED:
        raise NotImplementedError(f"For 'get_metric_fn', the metric {name!r} is not implemented "
                                  f"by minispore; use one of {sorted(_FACTORY)}")
    if name not in _FACTORY:
        raise KeyError(f"For 'get_metric_fn', unsupported metric {name!r}; use one of "
                       f"{sorted(_FACTORY)}")
    return _FACTORY[name](*args, **kwargs)


__all__ = ["Metric", "rearrange_inputs", "Accuracy", "MAE", "MSE", "Loss",
           "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
           "Precision", "Recall", "Fbeta", "F1", "ConfusionMatrix", "Dice", "Perplexity",
           "CosineSimilarity", "ROC", "auc", "names", "get_metric_fn"]
