"""Loss-scale training cells (MindSpore's `mindspore.nn.wrap.loss_scale`):
DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell and TrainOneStepWithLossScaleCell.

One step of TrainOneStepWithLossScaleCell is MindSpore's: the loss, the gradients of the
optimizer's parameters with the backward seeded by `ones_like(loss) * scale` (so a float16
backward runs on scaled values), the gradients multiplied by `reciprocal(scale)`, the overflow
flag (any non-finite gradient: MindSpore's infnan check, `1 - all(isfinite(g))` summed over the
gradients and compared with 1), the update Cell (which adjusts the scale Parameter), and the
optimizer only when there was no overflow. It returns (loss, overflow, scale), the scale read
after the update. In GRAPH_MODE the whole step is one compiled graph: the skipped update is an
If node whose then-branch holds the optimizer's assignments (the Parameters it assigns are the
If's outputs), so an overflowing step leaves the weights and the optimizer's state untouched,
as MindSpore's `if not overflow: self.optimizer(grads)` does.

MindSpore 2.10 reads the overflow from device status registers (NPUGetFloatStatusV2 on Ascend,
FloatStatus on GPU) and has no CPU kernel for them, so its TrainOneStepWithLossScaleCell does not
run on its CPU; minispore computes the infnan check with ordinary ops, so it runs on every
device_target, with the numbers MindSpore gives on Ascend in infnan mode.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core.autodiff import value_and_grad
from ...core.ops import math as M
from ...core.ops import reduce as R
from ...core.ops.array import reshape
from ...core.ops.state import assign, depend
from ...core.primitive import executor
from ...core.tensor import Parameter, Tensor
from ..cell import Cell
from .cell_wrapper import TrainOneStepCell

__all__ = ["DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell",
           "TrainOneStepWithLossScaleCell"]


def _check_number(who, name, value, integer=False):
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        want = "an int" if integer else "a float or an int"
        raise TypeError(f"For '{who}', the '{name}' must be {want}, but got "
                        f"{type(value).__name__} ({value!r})")
    return value


class DynamicLossScaleUpdateCell(Cell):
    """MindSpore's dynamic update rule, run inside the training step: on an overflow the scale
    becomes max(scale / scale_factor, 1) and the overflow's step is remembered; after
    `scale_window` steps since the last overflow (or the last increase) without one, the scale
    is multiplied by `scale_factor`. Called with (scale Parameter, overflow); assigns the new
    scale to that Parameter and returns `overflow`."""

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__()
        _check_number("DynamicLossScaleUpdateCell", "loss_scale_value", loss_scale_value)
        _check_number("DynamicLossScaleUpdateCell", "scale_factor", scale_factor)
        _check_number("DynamicLossScaleUpdateCell", "scale_window", scale_window, integer=True)
        self.scale_window = Tensor(scale_window, dtype=dt.int32)
        self.scale_factor = Tensor(scale_factor, dtype=dt.float32)
        self.loss_scale_value = loss_scale_value
        self.cur_iter = Parameter(Tensor(1, dtype=dt.int32), name="current_iterator_step")
        self.last_overflow_iter = Parameter(Tensor(0, dtype=dt.int32),
                                            name="last_overflow_iterator_step")
        self.minimum_loss_scale = Tensor(1.0, dtype=dt.float32)

    def get_loss_scale(self):
        """The initial loss scale (`loss_scale_value`, as given)."""
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        # MindSpore 2.10's formula, op for op (nn/wrap/loss_scale.py)
        on_overflow = M.where(overflow,
                              M.maximum(M.mul(loss_scale, M.reciprocal(self.scale_factor)),
                                        self.minimum_loss_scale), loss_scale)
        should_inc = M.less_equal(self.scale_window, M.sub(self.cur_iter,
                                                           self.last_overflow_iter))
        last_iter_cond = M.logical_or(overflow, should_inc)
        last_overflow_iter = M.where(last_iter_cond, self.cur_iter, self.last_overflow_iter)
        last_iter = assign(self.last_overflow_iter, last_overflow_iter)
        update_scale_cond = M.logical_and(should_inc, M.logical_not(overflow))
        scaled = M.where(update_scale_cond, M.mul(on_overflow, self.scale_factor), on_overflow)
        assign(loss_scale, scaled)
        inc_cur_iter = depend(M.add(self.cur_iter, 1), last_iter)
        assign(self.cur_iter, inc_cur_iter)
        return overflow

    def extend_repr(self):
        return f"loss_scale_value={self.loss_scale_value}"


class FixedLossScaleUpdateCell(Cell):
    """A fixed loss scale: the scale never changes; an overflowing step is still skipped by
    TrainOneStepWithLossScaleCell. Returns `overflow`."""

    def __init__(self, loss_scale_value):
        super().__init__()
        _check_number("FixedLossScaleUpdateCell", "loss_scale_value", loss_scale_value)
        self.loss_scale_value = loss_scale_value

    def get_loss_scale(self):
        """The loss scale (`loss_scale_value`, as given)."""
        return self.loss_scale_value

    def construct(self, _, overflow):
        return overflow

    def extend_repr(self):
        return f"loss_scale_value={self.loss_scale_value}"


def overflow_status(grads) -> Tensor:
    """A bool scalar: whether any gradient holds an inf or a NaN (MindSpore's infnan check:
    per gradient `1 - all(isfinite(g))`, summed, compared with 1). A value is finite where
    |g| <= the dtype's largest finite value (inf and NaN compare False)."""
    total = None
    for g in grads:
        if g.size == 0:
            continue
        big = float(np.finfo(dt.dtype_to_nptype(g.dtype)).max)
        finite = M.less_equal(M.abs(g), big)
        flag = M.sub(1.0, R.amin(M.cast(finite, dt.float32)))
        total = flag if total is None else M.add(total, flag)
    if total is None:
        total = Tensor(0.0, dt.float32)
    return M.less_equal(Tensor(1.0, dt.float32), reshape(total, ()))


def _graph_if(cond: Tensor, then_fn) -> None:
    """In a graph being built: run `then_fn` (which only assigns Parameters) under an If node
    on `cond`; the Parameters it assigns are the If's outputs, assigned after it (the else
    branch keeps their values). The same node the parser makes for `if cond: ...`."""
    from ...core.graph import control, ir
    from ...core.graph.cf_grad import record_if
    b = executor.current
    cond = M.cast(reshape(cond, ()), dt.bool_)
    cv = b.value_of(cond)
    cur0 = dict(b._current)
    with b.region("then") as g1:
        then_fn()
    cur1, b._current = b._current, dict(cur0)
    with b.region("else") as g2:
        pass
    cur2, b._current = b._current, cur0
    keys, (pv1, pv2) = control._param_outputs(b, cur0, (cur1, cur2))
    g1.outputs, g2.outputs = pv1, pv2
    outs = b.emit(ir.IF, [cv], (), [v.meta for v in pv1], (g1, g2))
    outs = record_if(b, outs, b.graph.nodes[-1])
    control._assign_outputs(b, keys, outs)


def _in_graph() -> bool:
    from ...core.graph.builder import GraphBuilder
    return isinstance(executor.current, GraphBuilder)


class TrainOneStepWithLossScaleCell(TrainOneStepCell):
    """One training step with loss scaling; returns (loss, overflow, scale) (see the module
    docstring). `scale_sense` is an update Cell (DynamicLossScaleUpdateCell,
    FixedLossScaleUpdateCell, or any Cell with get_loss_scale() called as cell(scale, overflow))
    or a Tensor of shape () or (1,) (a scale the host sets with set_sense_scale)."""

    def __init__(self, network, optimizer, scale_sense):
        super().__init__(network, optimizer, sens=None)
        self._mindspore_helpers()
        self.loss_scaling_manager = None
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager = scale_sense
            self.scale_sense = Parameter(Tensor(scale_sense.get_loss_scale(), dtype=dt.float32),
                                         name="scale_sense")
        elif isinstance(scale_sense, Tensor):
            if tuple(scale_sense.shape) not in ((1,), ()):
                raise ValueError(f"For 'TrainOneStepWithLossScaleCell', the shape of "
                                 f"'scale_sense' must be (1,) or (), but got "
                                 f"{tuple(scale_sense.shape)}.")
            self.scale_sense = Parameter(scale_sense, name="scale_sense")
        else:
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', the 'scale_sense' must be Cell "
                            f"or Tensor, but got 'scale_sense' type: {type(scale_sense)}.")

    def _mindspore_helpers(self):
        """The attributes MindSpore's cell has, which a subclass's own construct (MindSpore's
        documented pattern: start_overflow_check, self.grad with the filled sens,
        self.hyper_map, self.grad_reducer, get_overflow_status, process_loss_scale) uses."""
        from ... import ops
        from ..layers import Identity
        self.hyper_map = ops.HyperMap()
        self.base = Tensor(1, dt.float32)
        self.base0 = Tensor(0, dt.int32)
        self.reduce_sum = ops.ReduceSum(keep_dims=False)
        self.less_equal = ops.LessEqual()
        self.equal = ops.Equal()
        self.logic_not = ops.LogicalNot()
        self.is_distributed = False
        self.gpu_target = False
        if getattr(self, "grad_reducer", None) is None:
            self.grad_reducer = Identity()
            self.reducer_flag = False

    def set_sense_scale(self, sens):
        """Set the scale of a Tensor `scale_sense` (same shape and dtype)."""
        if self.scale_sense is not None and isinstance(sens, Tensor):
            self.scale_sense.set_data(sens)
        else:
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', the type of 'sens' must be "
                            f"Tensor, but got {type(sens)}")

    def _scaled_loss(self, *inputs):
        loss = self.network(*inputs)
        # the backward's seed is ones_like(loss) * scale, in the loss's dtype (MindSpore's)
        return M.mul(loss, M.cast(self.scale_sense, loss.dtype)), loss

    def construct(self, *inputs):
        (_, loss), grads = value_and_grad(self._scaled_loss, None, self.weights,
                                          has_aux=True)(*inputs)
        scaling_sens = self.scale_sense
        grads = tuple(M.mul(g, M.cast(M.reciprocal(scaling_sens), g.dtype)) for g in grads)
        grads = self.grad_reducer(grads)
        cond = self.get_overflow_status(None, grads)
        overflow = self.process_loss_scale(cond)
        if _in_graph():
            _graph_if(M.logical_not(overflow), lambda: self.optimizer(grads))
        elif not bool(overflow.asnumpy()):
            loss = depend(loss, self.optimizer(grads))
        # the scale after the update Cell assigned it (a copy: the Parameter changes later)
        scale = M.mul(scaling_sens, 1.0) if not _in_graph() else scaling_sens
        return loss, cond, scale

    def start_overflow_check(self, pre_cond, compute_input):
        """MindSpore's hook for clearing the device's overflow status; the infnan check needs
        no status, so this returns (None, compute_input)."""
        return None, compute_input

    def get_overflow_status(self, status, compute_output):
        """Whether `compute_output` (the gradients) holds an inf or a NaN: a bool scalar."""
        return overflow_status(tuple(compute_output))

    def process_loss_scale(self, overflow):
        """Run the update Cell on (scale, overflow); returns the overflow it returns."""
        if self.loss_scaling_manager is not None:
            return self.loss_scaling_manager(self.scale_sense, overflow)
        return overflow
