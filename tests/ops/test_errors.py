"""Error inputs (notes/testing.md 6.6): exception type and message (messages are part of the
interface: they name the op and the offending shapes/dtypes), and no state left corrupted after an
error (every check in PyNative and, in GRAPH_MODE, compiled: see helpers.in_mode). Tensor
indexing is in test_indexing.py."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import minispore as ms
from minispore.core import dtype as dt
from minispore.core.errors import DTypeError, MinisporeError, ShapeError
from minispore.core.graph import compile as graph_compile
from minispore.core.primitive import REGISTRY, apply
from minispore.core.pynative import TAPE

from helpers import assert_close, canary, graph_runs, in_mode


def T(*shape, dtype=np.float32):
    return ms.Tensor(np.ones(shape, dtype))


def I(v, dtype=np.int64):
    return ms.Tensor(np.array(v, dtype))


@dataclass(frozen=True)
class ErrorCase:
    id: str
    fn: Callable
    exc: type
    regex: str
    recover: Callable | None = None      # the same op on valid inputs, run right after
    backends: tuple = ()                 # only these device targets (a backend's own limit)
    # fn's tensor arguments (built fresh per call): graph inputs in GRAPH_MODE, where a tensor
    # made inside fn is a constant the compiler may fold without running the kernel
    args: Callable = tuple


def _p(name):
    return REGISTRY[name]


_SPARSE_CE = ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True)      # a Cell is made outside a graph


ERRORS = [
    # matmul: shapes and dtypes
    ErrorCase("matmul-contracted", lambda: ms.ops.matmul(T(2, 3), T(4, 5)), ShapeError,
              r"^matmul: 'a' of shape \(2, 3\) and 'b' of shape \(4, 5\) cannot be multiplied: "
              r"the contracted dims are 3 and 4", lambda: ms.ops.matmul(T(2, 3), T(3, 5))),
    ErrorCase("matmul-operator", lambda: T(2, 3) @ T(4, 5), ShapeError,
              r"^matmul: 'a' of shape \(2, 3\) and 'b' of shape \(4, 5\)",
              lambda: T(2, 3) @ T(3, 2)),
    ErrorCase("matmul-transposed", lambda: apply(_p("matmul"), T(2, 3), T(4, 5),
                                                 transpose_a=True), ShapeError,
              r"'a' of shape \(2, 3\) \(transposed\) and 'b' of shape \(4, 5\).*2 and 4"),
    ErrorCase("matmul-vector-primitive", lambda: apply(_p("matmul"), T(3), T(3, 4)), ShapeError,
              r"^matmul: 'a' must have at least 2 dims, got shape \(3,\)"),
    ErrorCase("matmul-batch", lambda: ms.ops.matmul(T(2, 2, 3), T(3, 3, 4)), ShapeError,
              r"^matmul: .*\(2, 2, 3\).*\(3, 3, 4\).*cannot be broadcast"),
    ErrorCase("matmul-bool", lambda: ms.ops.matmul(T(2, 2, dtype=bool), T(2, 2, dtype=bool)),
              DTypeError, r"^matmul: 'a' has dtype Bool; use a number dtype",
              lambda: ms.ops.matmul(T(2, 2), T(2, 2))),
    # broadcasting
    ErrorCase("add-broadcast", lambda: ms.ops.add(T(2, 3), T(4)), ShapeError,
              r"^add: shapes \(2, 3\), \(4,\) cannot be broadcast together \(dim -1: 3 vs 4\)",
              lambda: ms.ops.add(T(2, 3), T(3))),
    ErrorCase("add-operator", lambda: T(2, 3) + T(2, 4), ShapeError,
              r"^add: shapes \(2, 3\), \(2, 4\) cannot be broadcast", lambda: T(2, 3) + T(2, 3)),
    ErrorCase("mul-rank3", lambda: ms.ops.mul(T(2, 3, 4), T(3, 1, 4)), ShapeError,
              r"^mul: shapes \(2, 3, 4\), \(3, 1, 4\) cannot be broadcast.*dim -3: 2 vs 3"),
    ErrorCase("where-broadcast", lambda: ms.ops.where(T(2, dtype=bool), T(3), T(3)), ShapeError,
              r"^where: shapes \(2,\), \(3,\), \(3,\) cannot be broadcast"),
    ErrorCase("broadcast_to", lambda: ms.ops.broadcast_to(T(2, 3), (3, 3)), ShapeError,
              r"^broadcast_to: .*\(2, 3\).*\(3, 3\)"),
    # axes
    ErrorCase("sum-axis", lambda: ms.ops.sum(T(2, 3), 3), ShapeError,
              r"^sum: axis 3 out of range for a tensor of rank 2; use an axis in \[-2, 1\]",
              lambda: ms.ops.sum(T(2, 3), 1)),
    ErrorCase("sum-negative-axis", lambda: ms.ops.sum(T(2, 3), (0, -3)), ShapeError,
              r"^sum: axis -3 out of range for a tensor of rank 2"),
    ErrorCase("sum-repeated-axis", lambda: ms.ops.sum(T(2, 3), (0, -2)), ShapeError,
              r"^sum: repeated axis in \(0, -2\)"),
    ErrorCase("softmax-axis", lambda: ms.ops.softmax(T(2, 3), 2), ShapeError,
              r"^softmax: axis 2 out of range for a tensor of rank 2"),
    ErrorCase("argmax-empty", lambda: ms.ops.argmax(T(0)), ShapeError,
              r"^argmax: the input of shape \(0,\) is empty"),
    ErrorCase("max-empty", lambda: ms.ops.amax(T(0, 2), 0), ShapeError,
              r"^max: cannot reduce over a zero-size axis of shape \(0, 2\)"),
    # shapes of data movement
    ErrorCase("reshape-count", lambda: ms.ops.reshape(T(2, 3), (4,)), ShapeError,
              r"^reshape: cannot reshape a tensor of shape \(2, 3\) \(6 elements\) into \(4,\) "
              r"\(4 elements\)", lambda: ms.ops.reshape(T(2, 3), (3, 2))),
    ErrorCase("reshape-two-minus-one", lambda: ms.ops.reshape(T(2, 3), (-1, -1)), ShapeError,
              r"^reshape: target shape \(-1, -1\) may contain at most one -1"),
    ErrorCase("reshape-unresolvable", lambda: T(2, 3).reshape(4, -1), ShapeError,
              r"^reshape: cannot reshape a tensor of shape \(2, 3\) \(6 elements\) into "
              r"\(4, -1\)"),
    ErrorCase("transpose-perm", lambda: ms.ops.transpose(T(2, 3), (0, 0)), ShapeError,
              r"^transpose: perm \(0, 0\) is not a permutation of the 2 axes of shape \(2, 3\)"),
    ErrorCase("concat-shapes", lambda: ms.ops.concat([T(2, 3), T(2, 4)], 0), ShapeError,
              r"^concat: tensor 1 has shape \(2, 4\), incompatible with \(2, 3\) along axis 0"),
    ErrorCase("split-sizes", lambda: ms.ops.split(T(5), [2, 2]), ShapeError,
              r"^split: sizes \(2, 2\) do not add up to 5, the length of axis 0 of shape \(5,\)"),
    ErrorCase("squeeze", lambda: ms.ops.squeeze(T(2, 3), 0), ShapeError,
              r"^squeeze: axis 0 of shape \(2, 3\) has size 2, not 1"),
    ErrorCase("scatter_add-updates", lambda: ms.ops.scatter_add(T(4, 3), I([0, 1]), T(3, 3)),
              ShapeError, r"^scatter_add: updates of shape \(3, 3\) do not fit the indexed region "
                          r"\(2, 3\) of a tensor of shape \(4, 3\)"),
    ErrorCase("strided_slice-step0", lambda: apply(_p("strided_slice"), T(3), begin=(0,),
                                                   end=(3,), strides=(0,)),
              ValueError, r"^strided_slice: slice step cannot be zero"),
    ErrorCase("tile-negative", lambda: ms.ops.tile(T(2), (-1,)), ValueError,
              r"^tile: repetitions \(-1,\) must be >= 0"),
    # dtypes
    ErrorCase("floor-int32", lambda: ms.ops.floor(T(2, dtype=np.int32)), DTypeError,
              r"^floor: dtype Int32 \(from inputs Int32\) is not supported; supported: Float16, "
              r"BFloat16, Float32, Float64\. Cast the input with \.astype\(\), e\.g\. "
              r"x\.astype\(ms\.float32\)", lambda: ms.ops.floor(T(2))),
    ErrorCase("bitwise-float", lambda: ms.ops.bitwise_and(T(2), T(2)), DTypeError,
              r"^bitwise_and: dtype Float32 .* not supported; supported: Bool, UInt8.*"
              r"e\.g\. x\.astype\(ms\.int32\)"),
    ErrorCase("left_shift-float", lambda: ms.ops.left_shift(T(2), T(2)), DTypeError,
              r"^left_shift: dtype Float32"),
    ErrorCase("sce-labels-shape", lambda: _SPARSE_CE(T(4, 5), I([0, 1, 2])), ShapeError,
        r"^sparse_softmax_cross_entropy: labels of shape \(3,\) must have the logits' shape "
        r"without the class axis, \(4,\) \(logits \(4, 5\)\)",
        lambda: _SPARSE_CE(T(3, 5), I([0, 1, 2]))),
    ErrorCase("sce-float-labels", lambda: _SPARSE_CE(T(4, 5), T(4)), DTypeError,
        r"^sparse_softmax_cross_entropy: labels must hold int32 or int64 class indices, "
        r"got Float32"),
    ErrorCase("softmax-int", lambda: ms.ops.softmax(T(3, dtype=np.int32)), DTypeError,
              r"^softmax: dtype Int32 is not supported; use a float dtype"),
    ErrorCase("mean-bool", lambda: ms.ops.mean(T(2, dtype=bool)), DTypeError,
              r"^mean: dtype Bool is not supported"),
    ErrorCase("gather-float-indices", lambda: ms.ops.gather(T(3, 2), ms.Tensor(
        np.array([0.0, 1.0], np.float32)), 0), DTypeError,
        r"^gather: indices must be an integer tensor, got Float32; cast with \.astype\(ms\.int32\)",
        lambda: ms.ops.gather(T(3, 2), I([0, 1]), 0)),
    ErrorCase("one_hot-float-indices", lambda: ms.ops.one_hot(T(3), 3), DTypeError,
              r"^one_hot: indices must be an integer tensor, got Float32"),
    ErrorCase("cast-unknown", lambda: ms.ops.cast(T(2), "complex64"), DTypeError,
              r"unknown dtype name 'complex64'"),
    # arguments
    ErrorCase("unexpected-attribute", lambda: apply(_p("sum"), T(2), axes=0), TypeError,
              r"^sum: unexpected attribute 'axes'; valid: axis, keep_dims"),
    ErrorCase("arity", lambda: apply(_p("add"), T(2)), TypeError,
              r"^add: takes 2 tensor input\(s\), got 1"),
    ErrorCase("gather-out-of-range", lambda x, i: ms.ops.gather(x, i, 0), IndexError,
              r"^gather: index 3 is out of range for axis 0 of size 3; valid indices are -3 to 2",
              args=lambda: (T(3, 2), I([3]))),
    # conv2d / pooling / norms / random ops (core/ops/conv.py, norm.py, random.py)
    ErrorCase("conv2d-channels", lambda: ms.ops.conv2d(T(1, 3, 4, 4), T(2, 2, 3, 3)), ShapeError,
              r"^conv2d: 'weight' of shape \(2, 2, 3, 3\) with group=1 expects 2 input channels "
              r".*'input' of shape \(1, 3, 4, 4\) has 3 channels; make weight",
              lambda: ms.ops.conv2d(T(1, 3, 4, 4), T(2, 3, 3, 3))),
    ErrorCase("conv2d-rank", lambda: ms.ops.conv2d(T(3, 4, 4), T(2, 3, 3, 3)), ShapeError,
              r"^conv2d: 'input' must be 4-D \(N, C, H, W\), got shape \(3, 4, 4\); reshape"),
    ErrorCase("conv2d-window", lambda: ms.ops.conv2d(T(1, 3, 2, 2), T(2, 3, 3, 3)), ShapeError,
              r"^conv2d: the window \(3, 3\) .* is larger than the padded input \(2, 2\) of "
              r"'input' of shape \(1, 3, 2, 2\); use a smaller kernel, pad_mode='same'"),
    ErrorCase("conv2d-int", lambda: ms.ops.conv2d(T(1, 3, 4, 4, dtype=np.int32),
                                                  T(2, 3, 3, 3, dtype=np.int32)), DTypeError,
              r"^conv2d: 'input' has dtype Int32; use a float dtype"),
    ErrorCase("conv2d-padding-mode", lambda: ms.ops.conv2d(T(1, 3, 4, 4), T(2, 3, 3, 3),
                                                           pad_mode="same", padding=1),
              ValueError, r"^conv2d: padding \(1, 1, 1, 1\) needs pad_mode='pad'"),
    ErrorCase("max_pool2d-window", lambda: ms.ops.max_pool2d(T(1, 1, 2, 2), 3), ShapeError,
              r"^max_pool2d: the window \(3, 3\) .*larger than the padded input \(2, 2\)",
              lambda: ms.ops.max_pool2d(T(1, 1, 2, 2), 2)),
    ErrorCase("avg_pool2d-padding", lambda: ms.ops.avg_pool2d(T(1, 1, 4, 4), 2, 1, padding=2),
              ValueError, r"^avg_pool2d: padding \(2, 2, 2, 2\) must be smaller than the kernel "
              r"size \(2, 2\)"),
    ErrorCase("batch_norm-stats", lambda: ms.ops.batch_norm(T(2, 3), T(4), T(4), T(3), T(3)),
              ShapeError, r"^batch_norm: 'running_mean' has shape \(4,\) but 'input_x' of shape "
              r"\(2, 3\) has 3 channels \(axis 1\); it must have shape \(3,\)"),
    ErrorCase("layer_norm-shape", lambda: ms.ops.layer_norm(T(2, 3), (4,)), ShapeError,
              r"^layer_norm: normalized_shape \(4,\) must equal the trailing dims of 'input' of "
              r"shape \(2, 3\)"),
    ErrorCase("layer_norm-gamma", lambda: apply(_p("layer_norm"), T(2, 3), T(2), T(3)),
              ShapeError, r"^layer_norm: 'gamma' has shape \(2,\); .* it must have shape "
              r"\(3,\)"),
    ErrorCase("dropout-p", lambda: ms.ops.dropout(T(2), p=1.0), ValueError,
              r"^dropout: p must be a float in \[0, 1\), got 1.0"),
    ErrorCase("randint-range", lambda: ms.ops.randint(5, 5, (2,)), ValueError,
              r"^randint: needs integers low < high, got low=5, high=5"),
    ErrorCase("random-key", lambda: apply(_p("random_uniform"), I([1, 2, 3]), shape=(2,)),
              ShapeError, r"^random_uniform: 'key' must be an int64 tensor of shape \(2,\)"),
    ErrorCase("set_seed-negative", lambda: ms.set_seed(-1), ValueError,
              r"^set_seed: seed must be non-negative, got -1"),
]


def _raises_in_mode(case):
    """case.fn() raising case.exc: eagerly, or in GRAPH_MODE from compiling or running the
    jitted case.fn (a graph must have been parsed: the error is not the eager path's)."""
    before = graph_compile.stats["parses"], graph_compile.ran["calls"]
    with pytest.raises(case.exc) as info:
        in_mode(case.fn, *case.args())
    if ms.get_context("mode") == ms.GRAPH_MODE:      # parsed now, or a cached graph ran
        after = graph_compile.stats["parses"], graph_compile.ran["calls"]
        assert after != before, f"{case.id}: no graph was compiled or run"
    return info


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c.id)
def test_error(backend, mode, case):
    if case.backends and backend not in case.backends:
        pytest.skip(f"{case.id}: a limit of the {'/'.join(case.backends)} kernels only")
    info = _raises_in_mode(case)
    msg = str(info.value)
    assert re.search(case.regex, msg), f"message {msg!r} does not match {case.regex!r}"
    if case.exc in (ShapeError, DTypeError):
        assert isinstance(info.value, MinisporeError)
    # the same error again (nothing cached from the failed call), then valid work
    info = _raises_in_mode(case)
    assert re.search(case.regex, str(info.value)), str(info.value)
    if case.recover is not None:
        in_mode(case.recover)
    canary()
    assert TAPE.depth == 0


def test_shape_error_is_value_and_runtime_error():
    """MindSpore raises ValueError or RuntimeError for shape mistakes; both catch ours."""
    for exc in (ValueError, RuntimeError):
        with pytest.raises(exc):
            ms.ops.add(T(2), T(3))
    with pytest.raises(TypeError):
        ms.ops.floor(T(2, dtype=np.int32))


# ---------------------------------------------------------------- attribute caches --------------
@pytest.fixture
def fresh_attr_caches():
    """These tests check that spellings of equal attribute values (1, 1.0, True) never share a
    memo entry; they start and end with empty memos so the order of other tests cannot matter."""
    def clear():
        for op in REGISTRY.values():
            cache = getattr(op, "attr_cache", None)
            if cache is not None:
                cache.clear()
    clear()
    yield
    clear()


def _sum(x, axis):
    return ms.ops.sum(x, axis)


def _one_hot(idx, on, off):
    return ms.ops.one_hot(idx, 5, on, off)


def test_valid_call_after_a_float_axis_error(backend, mode, fresh_attr_caches):
    """sum(x, axis=1.0) is a TypeError; it must neither succeed nor poison sum(x, axis=1)."""
    x = ms.Tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    try:
        in_mode(_sum, x, 1.0)
    except TypeError:
        pass
    assert_close(in_mode(_sum, x, 1).asnumpy(), np.array([3.0, 12.0], np.float32), 0, 0,
                 "sum(x, 1) after sum(x, 1.0)")
    with pytest.raises(TypeError, match=r"^sum: axis must be an int, got float 1.0"):
        in_mode(_sum, x, 1.0)


def test_bool_axis_is_rejected_after_int_axis(backend, mode, fresh_attr_caches):
    x = ms.Tensor(np.ones((2, 3), np.float32))
    in_mode(_sum, x, 1)
    with pytest.raises(TypeError, match=r"^sum: axis must be an int, got bool True"):
        in_mode(_sum, x, True)


def test_one_hot_dtype_follows_on_value_type(backend, mode, fresh_attr_caches):
    """one_hot's output dtype comes from on/off values: ints give Int64, floats Float32."""
    idx = ms.Tensor(np.array([0, 2]))
    a = in_mode(_one_hot, idx, 1, 0)
    b = in_mode(_one_hot, idx, 1.0, 0.0)
    assert a.dtype is dt.int64
    assert b.dtype is dt.float32, f"one_hot with float on/off values gave {b.dtype}"


@pytest.mark.parametrize("where", ["forward", "backward", "arguments"])
def test_error_inside_grad_leaves_the_tape_clean(backend, mode, where):
    """An error while a gradient is taken (in the function, in the backward pass, or in grad's
    own argument checks) restores the tape and the inputs' autodiff marks."""
    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    if where == "forward":
        with pytest.raises(ShapeError, match=r"^add: shapes \(2,\), \(3,\)"), graph_runs(where):
            ms.grad(lambda t: ms.ops.add(ms.ops.mul(t, t), T(3)))(x)
    elif where == "backward":                      # a sensitivity of the wrong shape
        with pytest.raises(ShapeError, match=r"^mul: shapes \(3,\), \(2,\)"), graph_runs(where):
            ms.grad(lambda t: ms.ops.mul(t, t), sens_param=True)(
                x, ms.Tensor(np.ones(3, np.float32)))
    else:
        with pytest.raises(ValueError, match="grad_position 3 is out of range"):
            ms.grad(lambda t: ms.ops.mul(t, t), grad_position=3)(x)
    assert TAPE.depth == 0
    assert x._node is None
    with graph_runs("grad after an error"):
        g = ms.grad(lambda t: ms.ops.sum(ms.ops.mul(t, t)))(x)
    assert_close(g.asnumpy(), np.array([2.0, 4.0], np.float32), 0, 0, "grad after an error")
