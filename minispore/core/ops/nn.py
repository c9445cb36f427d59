"""Neural-network primitives: softmax and log_softmax along an axis, and the sparse softmax
cross-entropy (MindSpore's SparseSoftmaxCrossEntropyWithLogits) with its gradient as a primitive
of its own.

Why one primitive for the loss: composed from log_softmax, one_hot, cast, mul, sum and neg it
costs seven eager ops forward and about eight backward on every training step, the largest part
of a small classifier's PyNative step; as one op it is one row loop forward and one backward.
Per sample: loss = logsumexp(x) - x[label], and 0 for a label outside [0, C) (what the composite
-sum(log_softmax(x) * one_hot(label)) gives); its gradient is (softmax(x) * valid - one_hot) *
dout, where valid = sum(one_hot) (1 for a label in range, else 0).

The functional losses never hand the primitive such a label: `check_class_labels` (a primitive,
so the check runs inside compiled graphs too, in every backend and both CPU sinks) raises
IndexError (core/index_check.py) for a class label outside [0, C) that is not the loss's
ignore_index, before the loss reads it (sparse_softmax_cross_entropy here, cross_entropy and
nll_loss in ops/losses.py)."""
from __future__ import annotations

import numpy as np

from .. import dtype as dt
from ..errors import DTypeError, ShapeError
from ..index_check import IndexCheck
from ..primitive import Meta, apply, defop
from ..shape import normalize_axis
from .declare import ref_array_dtype


def _infer(name):
    def infer(x, axis):
        if not x.dtype.is_float:
            raise DTypeError(f"{name}: dtype {x.dtype} is not supported; use a float dtype "
                             f"(x.astype(ms.float32))")
        normalize_axis(name, axis, len(x.shape))
        return Meta(tuple(x.shape), x.dtype)
    return infer


def _softmax_ref(x, axis):
    a = x.astype(ref_array_dtype(dt.to_dtype(x.dtype)))
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype)


def _log_softmax_ref(x, axis):
    a = x.astype(ref_array_dtype(dt.to_dtype(x.dtype)))
    s = a - np.max(a, axis=axis, keepdims=True)
    return (s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))).astype(x.dtype)


def _softmax_bprop(i, o, g, axis):
    from .math import mul, sub
    from .reduce import sum as _sum
    return (mul(o, sub(g, _sum(mul(g, o), axis, True))),)


def _log_softmax_bprop(i, o, g, axis):
    from .math import exp, mul, sub
    from .reduce import sum as _sum
    return (sub(g, mul(exp(o), _sum(g, axis, True))),)


# softmax and log_softmax stay primitive for speed: one pass per row instead of five kernels
# (max, sub, exp, sum, div/log) with four intermediate arrays
SOFTMAX = defop("softmax", infer=_infer("softmax"), ref=_softmax_ref, bprop=_softmax_bprop,
                attrs={"axis": -1}, arity=1)
LOG_SOFTMAX = defop("log_softmax", infer=_infer("log_softmax"), ref=_log_softmax_ref,
                    bprop=_log_softmax_bprop, attrs={"axis": -1}, arity=1)


def softmax(input, axis=-1, *, dtype=None):
    from .math import cast
    if dtype is not None:
        input = cast(input, dtype)
    return apply(SOFTMAX, input, axis=axis)


def log_softmax(logits, axis=-1):
    return apply(LOG_SOFTMAX, logits, axis=axis)


# ---------------------------------------------------------------- sparse softmax cross-entropy
_SCE = "sparse_softmax_cross_entropy"


def _sce_check(name, logits, labels):
    if not logits.dtype.is_float:
        raise DTypeError(f"{name}: logits must be a float tensor, got {logits.dtype}; use "
                         f"logits.astype(ms.float32)")
    if labels.dtype not in (dt.int32, dt.int64):          # MindSpore 2.10: Int32/Int64 only
        raise DTypeError(f"{name}: labels must hold int32 or int64 class indices, got "
                         f"{labels.dtype}; "
                         f"cast them with labels.astype(ms.int32) (or use sparse=False for "
                         f"probability labels)")
    if not logits.shape or logits.shape[-1] == 0:
        raise ShapeError(f"{name}: logits of shape {tuple(logits.shape)} have no class axis; "
                         f"pass logits of shape (..., C) with C >= 1")
    if tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise ShapeError(f"{name}: labels of shape {tuple(labels.shape)} must have the logits' "
                         f"shape without the class axis, {tuple(logits.shape[:-1])} (logits "
                         f"{tuple(logits.shape)})")


def _sce_infer(logits, labels):
    _sce_check(_SCE, logits, labels)
    return Meta(tuple(logits.shape[:-1]), logits.dtype)


def _sce_parts(logits, labels):
    """(x in the reference dtype, softmax, one_hot, valid) of the reference implementations."""
    a = logits.astype(ref_array_dtype(dt.to_dtype(logits.dtype)))
    e = np.exp(a - np.max(a, axis=-1, keepdims=True))
    sm = e / np.sum(e, axis=-1, keepdims=True)
    onehot = (np.arange(a.shape[-1]) == labels[..., None]).astype(a.dtype)
    return a, sm, onehot, onehot.sum(-1)


def _sce_ref(logits, labels):
    a, sm, onehot, valid = _sce_parts(logits, labels)
    m = np.max(a, axis=-1)
    lse = np.log(np.sum(np.exp(a - m[..., None]), axis=-1)) + m
    loss = np.where(valid > 0, lse - np.sum(a * onehot, axis=-1), 0)
    return loss.astype(logits.dtype)


def _sce_bprop(i, o, g):
    return apply(SPARSE_SOFTMAX_CE_GRAD, i[0], i[1], g), None


def _sce_grad_infer(logits, labels, dout):
    name = _SCE + "_grad"
    _sce_check(name, logits, labels)
    if tuple(dout.shape) != tuple(labels.shape) or dout.dtype is not logits.dtype:
        raise ShapeError(f"{name}: dout must be {logits.dtype} of shape {tuple(labels.shape)}, "
                         f"got {dout.dtype} of shape {tuple(dout.shape)}")
    return Meta(tuple(logits.shape), logits.dtype)


def _sce_grad_ref(logits, labels, dout):
    _, sm, onehot, valid = _sce_parts(logits, labels)
    d = dout.astype(sm.dtype)[..., None]
    return ((sm * valid[..., None] - onehot) * d).astype(logits.dtype)


def _sce_grad_bprop(i, o, h):
    """Second order: G = (s v - onehot) d with s = softmax(x): dd = sum(h (s v - onehot)), and
    dx = the softmax VJP of u = h d v: s (u - sum(u s))."""
    from .array import one_hot, reshape
    from .math import cast, mul, sub
    from .reduce import sum as _sum
    x, labels, d = i
    s = softmax(x, -1)
    onehot = cast(one_hot(labels, x.shape[-1], 1.0, 0.0, -1), x.dtype)
    v = _sum(onehot, -1, True)
    dd = _sum(mul(h, sub(mul(s, v), onehot)), -1)
    u = mul(mul(h, reshape(d, tuple(d.shape) + (1,))), v)
    dx = mul(s, sub(u, _sum(mul(u, s), -1, True)))
    return dx, None, dd


SPARSE_SOFTMAX_CE = defop(_SCE, infer=_sce_infer, ref=_sce_ref, bprop=_sce_bprop, arity=2)
SPARSE_SOFTMAX_CE_GRAD = defop(_SCE + "_grad", infer=_sce_grad_infer, ref=_sce_grad_ref,
                               bprop=_sce_grad_bprop, arity=3)


def _labels_infer(labels, classes, ignore_index, caller):
    if labels.dtype.np.kind not in "iu":
        raise DTypeError(f"{caller}: class labels must be an integer tensor, got {labels.dtype}; "
                         f"cast them with .astype(ms.int32)")
    return Meta(tuple(labels.shape), labels.dtype)


def label_check(classes, ignore_index, caller) -> IndexCheck:
    """The IndexCheck of check_class_labels' attributes (every backend's kernel runs it)."""
    return IndexCheck(caller, classes, negative=False, what="class label", ignore=ignore_index)


def _labels_ref(labels, classes, ignore_index, caller):
    label_check(classes, ignore_index, caller).check(labels)
    return labels


CHECK_CLASS_LABELS = defop("check_class_labels", infer=_labels_infer, ref=_labels_ref,
                           attrs={"classes": 1, "ignore_index": None, "caller": "loss"}, arity=1,
                           differentiable=False)


def check_class_labels(labels, classes: int, op: str, ignore_index=None):
    """labels, after an IndexError (naming `op`, the label and the valid range) when one is
    outside [0, classes) and not ignore_index; run time in a compiled graph."""
    return apply(CHECK_CLASS_LABELS, labels, classes=int(classes), caller=op,
                 ignore_index=None if ignore_index is None else int(ignore_index))


def sparse_softmax_cross_entropy(logits, labels, op=_SCE):
    """Per-sample -log_softmax(logits)[label] over the last axis; a label outside [0, C) raises
    IndexError naming `op`."""
    _sce_check(_SCE, logits, labels)          # its dtype and shape errors come first
    return apply(SPARSE_SOFTMAX_CE, logits, check_class_labels(labels, logits.shape[-1], op))
