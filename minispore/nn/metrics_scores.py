"""Score metrics (MindSpore 2.10's, host side, numpy): Dice, Perplexity, CosineSimilarity, the
ROC curve and `auc` (the area under a curve by the trapezoidal rule).

MindSpore runs these on numpy 1.x, where `0 + float32 scalar` is a float64; the running sums
here are float64 explicitly so the numbers agree under numpy 2.
"""
from __future__ import annotations

import math

import numpy as np

from .metrics import Metric, rearrange_inputs


def _two_inputs(who, inputs):
    if len(inputs) != 2:
        raise ValueError(f"For '{who}.update', it needs 2 inputs (predicted value, true value), "
                         f"but got {len(inputs)}.")


class Dice(Metric):
    """The mean over updates' samples of 2 <y_pred, y> / (|y_pred|^2 + |y|^2 + smooth): each
    update adds one coefficient for the whole batch and counts its first dimension (MindSpore's
    rule, so the mean is per sample only with one update per sample)."""

    def __init__(self, smooth=1e-5):
        if isinstance(smooth, bool) or not isinstance(smooth, float) or not smooth > 0:
            raise TypeError(f"For 'Dice', 'smooth' must be a positive float, got {smooth!r}")
        self.smooth = smooth
        super().__init__()

    def clear(self):
        self._dice_coeff_sum = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        _two_inputs("Dice", inputs)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.shape != y.shape:
            raise ValueError(f"For 'Dice.update', y_pred and y should have same shape, but got "
                             f"{y_pred.shape} and {y.shape}.")
        self._samples_num += y.shape[0]
        intersection = np.dot(y_pred.flatten(), y.flatten())
        union = np.dot(y_pred.flatten(), y_pred.flatten()) + np.dot(y.flatten(), y.flatten())
        self._dice_coeff_sum += 2 * float(intersection) / float(union + self.smooth)

    def eval(self):
        if self._samples_num == 0:
            raise RuntimeError("The 'Dice coefficient' can not be calculated, because the "
                               "number of samples is 0; call update() before eval()")
        return self._dice_coeff_sum / float(self._samples_num)


class Perplexity(Metric):
    """exp(mean negative log-probability of the labels). update(probabilities (..., C),
    labels (...)): the probabilities (not logits) are read at the labels, clipped below at 1e-10;
    labels equal to `ignore_label` are left out."""

    def __init__(self, ignore_label=None):
        if ignore_label is not None and (isinstance(ignore_label, bool) or
                                         not isinstance(ignore_label, int)):
            raise TypeError(f"For 'Perplexity', 'ignore_label' must be an int or None, got "
                            f"{type(ignore_label).__name__}")
        self.ignore_label = ignore_label
        super().__init__()

    def clear(self):
        self._sum_metric = 0.0
        self._num_inst = 0

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'Perplexity.update', it needs 2 inputs (predicted value, "
                             f"label), but got {len(inputs)}.")
        pred = self._convert_data(inputs[0])
        label = self._convert_data(inputs[1])
        if label.size != pred.size / pred.shape[-1]:
            raise RuntimeError(f"For 'Perplexity.update', the labels must have the predictions' "
                               f"shape without the last axis, but got predicted value shape "
                               f"{pred.shape}, label shape {label.shape}.")
        label = label.reshape((label.size,))
        index = np.expand_dims(label.astype(int), axis=1)
        pred = np.squeeze(pred.reshape(-1, pred.shape[-1])[np.arange(index.shape[0])[:, None],
                                                             index])
        num = 0
        if self.ignore_label is not None:
            ignore = (label == self.ignore_label).astype(pred.dtype)
            num -= np.float64(np.sum(ignore))
            pred = pred * (1 - ignore) + ignore
        loss = -np.float64(np.sum(np.log(np.maximum(1e-10, pred))))
        num += pred.size
        self._sum_metric += loss
        self._num_inst += num

    def eval(self):
        if self._num_inst == 0:
            raise RuntimeError("The 'Perplexity' can not be calculated, because the number of "
                               "samples is 0; call update() before eval()")
        return math.exp(self._sum_metric / self._num_inst)


class CosineSimilarity(Metric):
    """The (N, N) similarity matrix of the last update's rows: 'cosine' (rows normalised) or
    'dot'; zero_diagonal zeroes the diagonal; reduction 'none', 'sum' or 'mean' over the last
    axis. update takes ONE input (N, D)."""

    def __init__(self, similarity='cosine', reduction='none', zero_diagonal=True):
        if similarity not in ('dot', 'cosine'):
            raise ValueError(f"For 'CosineSimilarity', 'similarity' must be 'dot' or 'cosine', "
                             f"got {similarity!r}")
        if reduction not in ('none', 'sum', 'mean'):
            raise ValueError(f"For 'CosineSimilarity', 'reduction' must be 'none', 'sum' or "
                             f"'mean', got {reduction!r}")
        if not isinstance(zero_diagonal, bool):
            raise TypeError(f"For 'CosineSimilarity', 'zero_diagonal' must be a bool, got "
                            f"{type(zero_diagonal).__name__}")
        self.similarity, self.reduction, self.zero_diagonal = similarity, reduction, zero_diagonal
        super().__init__()

    def clear(self):
        self.sqr_mtx_res = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, inputs):
        data = self._convert_data(inputs)
        if self.similarity == 'cosine':
            data = data / np.expand_dims(np.linalg.norm(data, ord=2, axis=1), 1)
        self.sqr_mtx_res = np.dot(data, data.transpose(1, 0))
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        if self.zero_diagonal:
            np.fill_diagonal(self.sqr_mtx_res, 0)
        if self.reduction == 'mean':
            self.sqr_mtx_res = np.mean(self.sqr_mtx_res, axis=-1)
        if self.reduction == 'sum':
            self.sqr_mtx_res = np.sum(self.sqr_mtx_res, axis=-1)
        return self.sqr_mtx_res


def _binary_clf_curve(preds, target, pos_label=1):
    """(false positives, true positives, thresholds) at each distinct score, descending."""
    if preds.ndim > target.ndim:
        preds = preds[:, 0]
    order = np.argsort(-preds)
    preds, target = preds[order], target[order]
    distinct = np.where(preds[1:] - preds[:-1])[0]
    threshold_idxs = np.pad(distinct, (0, 1), constant_values=target.shape[0] - 1)
    target = np.array(target == pos_label).astype(np.int64)
    tps = np.cumsum(target * 1., axis=0)[threshold_idxs]
    fps = 1 + threshold_idxs - tps
    return fps, tps, preds[threshold_idxs]


def _curve_inputs(y_pred, y, class_num, pos_label):
    if not (y_pred.ndim == y.ndim or y_pred.ndim == y.ndim + 1):
        raise ValueError(f"For 'ROC', y_pred must have y's dimensions or one more, but got "
                         f"y_pred ndim {y_pred.ndim} and y ndim {y.ndim}.")
    if y_pred.ndim == y.ndim:
        if class_num is not None and class_num != 1:
            raise ValueError(f"For 'ROC', when y_pred and y have the same shape, 'class_num' "
                             f"must be 1, but got {class_num}.")
        return y_pred.flatten(), y.flatten(), 1, 1 if pos_label is None else pos_label
    if pos_label is not None:
        raise ValueError(f"For 'ROC', when y_pred has one more dimension than y, 'pos_label' "
                         f"must be None, but got {pos_label}.")
    if class_num != y_pred.shape[1]:
        raise ValueError(f"For 'ROC', 'class_num' must equal the number of classes of y_pred, "
                         f"but got 'class_num' {class_num} and {y_pred.shape[1]} classes.")
    y_pred = y_pred.transpose(0, 1).reshape(class_num, -1).transpose(0, 1)
    return y_pred, y.flatten(), class_num, pos_label


class ROC(Metric):
    """The ROC curve of the LAST update: eval() returns (fpr, tpr, thresholds), arrays for a
    binary problem (y_pred of y's shape, `pos_label` default 1) or lists of arrays, one per
    class, for (N, C) scores with `class_num` = C. The first threshold is the top score + 1."""

    def __init__(self, class_num=None, pos_label=None):
        for name, v in (("class_num", class_num), ("pos_label", pos_label)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise TypeError(f"For 'ROC', '{name}' must be an int or None, got "
                                f"{type(v).__name__}")
        self.class_num, self.pos_label = class_num, pos_label
        super().__init__()

    def clear(self):
        self.y_pred = 0
        self.y = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'ROC.update', it needs 2 inputs (predicted value, true "
                             f"value), but got {len(inputs)}")
        y_pred, y, self.class_num, self.pos_label = _curve_inputs(
            self._convert_data(inputs[0]), self._convert_data(inputs[1]), self.class_num,
            self.pos_label)
        self.y_pred, self.y = y_pred, y
        self._is_update = True

    def _roc_eval(self, y_pred, y, class_num, pos_label):
        if class_num == 1:
            fps, tps, thresholds = _binary_clf_curve(y_pred, y, pos_label=pos_label)
            tps = np.squeeze(np.hstack([np.zeros(1, dtype=tps.dtype), tps]))
            fps = np.squeeze(np.hstack([np.zeros(1, dtype=fps.dtype), fps]))
            thresholds = np.hstack([thresholds[0][None] + 1, thresholds])
            if fps[-1] <= 0:
                raise ValueError("For 'ROC.eval', there is no negative samples in true value, "
                                 "false positive value is meaningless.")
            if tps[-1] <= 0:
                raise ValueError("For 'ROC.eval', there is no positive samples in true value, "
                                 "true positive value is meaningless.")
            return fps / fps[-1], tps / tps[-1], thresholds
        fpr, tpr, thresholds = [], [], []
        for c in range(class_num):
            p, t, n, lab = _curve_inputs(y_pred[:, c], y, 1, c)
            res = self._roc_eval(p, t, n, lab)
            fpr.append(res[0])
            tpr.append(res[1])
            thresholds.append(res[2])
        return fpr, tpr, thresholds

    def eval(self):
        if self._is_update is False:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        return self._roc_eval(np.squeeze(self.y_pred), np.squeeze(self.y), self.class_num,
                              self.pos_label)


def auc(x, y, reorder=False):
    """The area under the curve (x, y) by the trapezoidal rule; x must be monotonic unless
    reorder=True (then sorted by x, ties by y)."""
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        raise TypeError(f"For 'auc', the argument 'x' and 'y' must all be np.ndarray, but got "
                        f"{type(x)}, {type(y)}")
    for a in (x, y):
        if a.ndim == 0:
            raise TypeError(f"Singleton array {a} cannot be considered as a valid collection.")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"{[x.shape[0], y.shape[0]]}.")
    flat = []
    for a in (x, y):
        if a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1):
            flat.append(np.ravel(a))
        else:
            raise ValueError(f"For 'auc', the input must be a 1-dimensional array, or a "
                             f"2-dimensional array with the second dimension of 1, but got shape "
                             f"{a.shape}.")
    x, y = flat
    if x.shape[0] < 2:
        raise ValueError(f"For 'auc', the shape of the argument 'x' in axis 0 must be greater "
                         f"than 2, but got {x.shape[0]}.")
    direction = 1
    if reorder:
        order = np.lexsort((y, x))
        x, y = x[order], y[order]
    else:
        dx = np.diff(x)
        if np.any(dx < 0):
            if np.all(dx <= 0):
                direction = -1
            else:
                raise ValueError(f"For 'auc', if the argument is False, the argument 'x' array "
                                 f"must be increasing or decreasing, but got 'x': {x}")
    return direction * np.trapezoid(y, x)


__all__ = ["Dice", "Perplexity", "CosineSimilarity", "ROC", "auc"]
