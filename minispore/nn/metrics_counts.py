"""Count-based classification metrics (MindSpore's Precision, Recall, Fbeta, F1 and
ConfusionMatrix), host side, numpy.

The numbers follow MindSpore 2.10 exactly: per-class values as float64 arrays; a class with no
predicted (Precision) or actual (Recall) positives divides by `sys.float_info.min` and gives 0;
`eval(average=True)` is the unweighted mean over classes; in 'multilabel' mode the averaged value
is the mean of the per-update, per-sample ratios (MindSpore's running `_true_positives_average`),
not the ratio of the summed counts. Labels may be class indices or one-hot rows.
"""
from __future__ import annotations

import sys

import numpy as np

from .metrics import Metric, _check_eval_inputs, _is_one_hot, rearrange_inputs

_EVAL_TYPES = ("classification", "multilabel")


def _check_bool(who, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"For '{who}', the argument '{name}' must be a bool, got "
                        f"{type(value).__name__}")


class _PrecisionRecallBase(Metric):
    """Shared update of Precision and Recall: per-class true positives and the per-class
    denominator `_denominator(y_pred_one_hot, y_one_hot)`."""

    def __init__(self, eval_type="classification"):
        if eval_type not in _EVAL_TYPES:
            raise TypeError(f"For '{type(self).__name__}', the argument 'eval_type' must be in "
                            f"{set(_EVAL_TYPES)}, but got {eval_type!r}")
        self._type = eval_type
        self.eps = sys.float_info.min
        super().__init__()

    def clear(self):
        self._class_num = 0
        if self._type == "multilabel":
            self._true_positives = np.empty(0)
            self._denominators = np.empty(0)
            self._ratio_sum = 0
            self._ratio_count = 0
        else:
            self._true_positives = 0
            self._denominators = 0

    @rearrange_inputs
    def update(self, *inputs):
        who = type(self).__name__
        if len(inputs) != 2:
            raise ValueError(f"For '{who}.update', it needs 2 inputs (predicted value, true "
                             f"value), but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self._type == "classification" and y_pred.ndim == y.ndim and _is_one_hot(y):
            y = y.argmax(axis=1)
        _check_eval_inputs(who, self._type, y_pred, y)
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"For '{who}.update', class number not match: earlier inputs had "
                             f"{self._class_num} classes, this y_pred has {y_pred.shape[1]}")
        class_num = self._class_num
        if self._type == "classification":
            if y.max() + 1 > class_num:
                raise ValueError(f"For '{who}.update', y holds class {int(y.max())} but y_pred "
                                 f"has only {class_num} classes")
            y = np.eye(class_num)[y.reshape(-1)]
            y_pred = np.eye(class_num)[y_pred.argmax(axis=1).reshape(-1)]
        else:
            y_pred = y_pred.swapaxes(1, 0).reshape(class_num, -1)
            y = y.swapaxes(1, 0).reshape(class_num, -1)
        denominators = self._denominator(y_pred, y)
        true_positives = (y * y_pred).sum(axis=0)
        if self._type == "multilabel":
            self._ratio_sum += np.sum(true_positives / (denominators + self.eps))
            self._ratio_count += len(denominators)
            self._true_positives = np.concatenate((self._true_positives, true_positives))
            self._denominators = np.concatenate((self._denominators, denominators))
        else:
            self._true_positives += true_positives
            self._denominators += denominators

    def eval(self, average=False):
        who = type(self).__name__
        if self._class_num == 0:
            raise RuntimeError(f"The '{who}' can not be calculated, because the number of "
                               f"samples is 0; call update() before eval()")
        _check_bool(who, "average", average)
        result = self._true_positives / (self._denominators + self.eps)
        if average:
            if self._type == "multilabel":
                result = self._ratio_sum / (self._ratio_count + self.eps)
            return result.mean()
        return result


class Precision(_PrecisionRecallBase):
    """Per-class precision TP / (TP + FP) (eval(average=True): the mean over classes).
    update(y_pred, y): y_pred (N, C) scores (argmax is the prediction) and y (N,) indices or
    (N, C) one-hot; eval_type='multilabel': y_pred and y (N, C) in {0, 1}."""

    def _denominator(self, y_pred, y):
        return y_pred.sum(axis=0)


class Recall(_PrecisionRecallBase):
    """Per-class recall TP / (TP + FN) (eval(average=True): the mean over classes). Inputs as
    Precision's."""

    def _denominator(self, y_pred, y):
        return y.sum(axis=0)


class Fbeta(Metric):
    """Per-class F-beta score (1 + beta^2) TP / (beta^2 (TP + FN) + TP + FP) over all updates;
    eval(average=True) is the mean over classes. update(y_pred, y) as Precision's
    ('classification' only)."""

    def __init__(self, beta):
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta > 0:
            raise ValueError(f"For 'Fbeta', the argument 'beta' must be a number greater than 0, "
                             f"but got {beta!r}.")
        self.eps = sys.float_info.min
        self.beta = beta
        super().__init__()

    def clear(self):
        self._true_positives = 0
        self._actual_positives = 0
        self._positives = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        who = type(self).__name__
        if len(inputs) != 2:
            raise ValueError(f"For '{who}.update', it needs 2 inputs (predicted value, true "
                             f"value), but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim and _is_one_hot(y):
            y = y.argmax(axis=1)
        if y_pred.ndim != 2 or y.shape != (y_pred.shape[0],):
            raise ValueError(f"For '{who}.update', y_pred must be (N, C) and y (N,) or (N, C) "
                             f"one-hot, got {y_pred.shape} and {y.shape}")
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"For '{who}.update', class number not match: earlier inputs had "
                             f"{self._class_num} classes, this y_pred has {y_pred.shape[1]}")
        class_num = self._class_num
        if y.max() + 1 > class_num:
            raise ValueError(f"For '{who}.update', y holds class {int(y.max())} but y_pred has "
                             f"only {class_num} classes")
        y = np.eye(class_num)[y.reshape(-1)]
        y_pred = np.eye(class_num)[y_pred.argmax(axis=1).reshape(-1)]
        self._true_positives += (y * y_pred).sum(axis=0)
        self._positives += y_pred.sum(axis=0)
        self._actual_positives += y.sum(axis=0)

    def eval(self, average=False):
        who = type(self).__name__
        _check_bool(who, "average", average)
        if self._class_num == 0:
            raise RuntimeError(f"The '{who}' can not be calculated, because the number of "
                               f"samples is 0; call update() before eval()")
        fbeta = (1.0 + self.beta ** 2) * self._true_positives / \
            (self.beta ** 2 * self._actual_positives + self._positives + self.eps)
        return fbeta.mean() if average else fbeta


class F1(Fbeta):
    """Fbeta with beta = 1."""

    def __init__(self):
        super().__init__(1.0)


class ConfusionMatrix(Metric):
    """The (num_classes, num_classes) confusion matrix, rows = true class, columns = predicted.
    update(y_pred, y): y_pred with one more dimension than y is argmax'd over axis 1; a float
    y_pred of y's shape is thresholded (>= threshold). normalize: 'no_norm' (counts), 'target'
    (rows sum to 1), 'prediction' (columns sum to 1), 'all'; an empty row/column gives 0."""

    def __init__(self, num_classes, normalize="no_norm", threshold=0.5):
        if isinstance(num_classes, bool) or not isinstance(num_classes, int):
            raise TypeError(f"For 'ConfusionMatrix', the argument 'num_classes' must be an int, "
                            f"got {type(num_classes).__name__}")
        if normalize not in ("target", "prediction", "all", "no_norm"):
            raise ValueError(f"For 'ConfusionMatrix', the argument 'normalize' must be one of "
                             f"'target', 'prediction', 'all', 'no_norm', but got {normalize!r}.")
        if not isinstance(threshold, float):
            raise TypeError(f"For 'ConfusionMatrix', the argument 'threshold' must be a float, "
                            f"got {type(threshold).__name__}")
        self.num_classes = num_classes
        self.normalize = normalize
        self.threshold = threshold
        super().__init__()

    def clear(self):
        self.confusion_matrix = np.zeros((self.num_classes, self.num_classes))
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'ConfusionMatrix.update', it needs 2 inputs (predicted value, "
                             f"true value), but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if not (y_pred.ndim == y.ndim or y_pred.ndim == y.ndim + 1):
            raise ValueError(f"For 'ConfusionMatrix.update', y_pred must have y's dimensions or "
                             f"one more, got y_pred ndim {y_pred.ndim} and y ndim {y.ndim}.")
        if y_pred.ndim == y.ndim + 1:
            y_pred = np.argmax(y_pred, axis=1)
        if y_pred.ndim == y.ndim and y_pred.dtype in (np.float16, np.float32, np.float64):
            y_pred = (y_pred >= self.threshold).astype(int)
        trans = (y.reshape(-1) * self.num_classes + y_pred.reshape(-1)).astype(int)
        counts = np.bincount(trans, minlength=self.num_classes ** 2)
        if counts.size != self.num_classes ** 2:
            raise ValueError(f"For 'ConfusionMatrix.update', a class index is >= num_classes = "
                             f"{self.num_classes}")
        self.confusion_matrix += counts.reshape(self.num_classes, self.num_classes)
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        matrix = self.confusion_matrix.astype(float)
        if self.normalize == "no_norm":
            return matrix
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.normalize == "target":
                matrix = matrix / matrix.sum(axis=1, keepdims=True)
            elif self.normalize == "prediction":
                matrix = matrix / matrix.sum(axis=0, keepdims=True)
            else:
                matrix = matrix / matrix.sum()
        matrix[np.isnan(matrix)] = 0
        return matrix


__all__ = ["Precision", "Recall", "Fbeta", "F1", "ConfusionMatrix"]
