"""Training wrappers (MindSpore 2.x): WithLossCell (network + loss), WithEvalCell (loss, outputs
and labels for evaluation) and TrainOneStepCell (one step: loss, gradients of the optimizer's
parameters through GradOperation(get_by_list=True, sens_param=True), the update). They set
auto_prefix=False like MindSpore's, so wrapping a network does not rename its Parameters. In
GRAPH_MODE one call of TrainOneStepCell is one compiled graph: forward, backward and the
optimizer's assignments. The forward runs ONCE per step in both modes (value_and_grad), as
MindSpore's PyNative does for a network marked set_grad(): running it a second time for the
gradient would cost a second forward and, worse, update BatchNorm's running statistics twice and
draw a second Dropout mask that the reported loss never saw."""
from __future__ import annotations

from ...core import dtype as dt
from ...core.autodiff import GradOperation, value_and_grad
from ...core.ops import math as M
from ...core.ops.state import depend
from ..cell import Cell
from ..optim.optimizer import Optimizer


def _check_cell(who, name, value):
    if not isinstance(value, Cell):
        raise TypeError(f"{who}: {name} must be a Cell, got {type(value).__name__}")
    return value


class WithLossCell(Cell):
    """loss_fn(backbone(data), label)."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = _check_cell("WithLossCell", "backbone", backbone)
        self._loss_fn = _check_cell("WithLossCell", "loss_fn", loss_fn)

    def construct(self, data, label):
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self):
        return self._backbone


class WithEvalCell(Cell):
    """(loss, outputs, label) with outputs = network(data); add_cast_fp32 (a bool) casts the
    outputs to float32 and a floating label to float32 before the loss, as MindSpore's
    mixed_precision_cast: an integer or bool label is left as it is (class indices stay
    indices)."""

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        self._network = _check_cell("WithEvalCell", "network", network)
        self._loss_fn = _check_cell("WithEvalCell", "loss_fn", loss_fn)
        if not isinstance(add_cast_fp32, bool):
            raise TypeError(f"For 'WithEvalCell', the type of 'add_cast_fp32' should be 'bool', "
                            f"but got type '{type(add_cast_fp32).__name__}'.")
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            if label.dtype in dt.FLOATS:
                label = M.cast(label, dt.float32)
            outputs = M.cast(outputs, dt.float32)
        loss = self._loss_fn(outputs, label)
        return loss, outputs, label


def _scaled(grads, sens):
    return tuple(M.mul(g, sens) for g in grads)


class TrainOneStepCell(Cell):
    """network(*inputs) is the loss; returns it after the optimizer has updated the weights
    (with return_grad=True: (loss, grads)). `sens` scales the gradient (default 1.0; 0 is
    MindSpore's ValueError).

    As MindSpore's: the optimizer's Parameters are registered on this Cell under their own
    names (its `weights` ParameterTuple attribute), so `parameters_and_names()` yields them as
    'weight', 'bias', ... before 'optimizer.global_step', ...; the gradients pass through
    `grad_reducer` before the update: an nn.Identity outside data parallel
    (`reducer_flag` False), a DistributedGradReducer(weights, gradients_mean, device_num) when
    the auto-parallel context's parallel_mode is 'data_parallel' or 'hybrid_parallel'
    (`reducer_flag` True, with `mean` and `degree` set)."""

    def __init__(self, network, optimizer, sens=None, return_grad=False):
        super().__init__(auto_prefix=False)
        self.network = _check_cell("TrainOneStepCell", "network", network)
        # MindSpore takes any Cell with the `parameters` it updates (an nn.Optimizer, or a
        # user's optimizer Cell written with hyper_map and F.assign)
        if not isinstance(optimizer, Optimizer) and not (
                isinstance(optimizer, Cell) and isinstance(getattr(optimizer, "parameters", None),
                                                           (tuple, list))):
            raise TypeError(f"TrainOneStepCell: optimizer must be an nn.Optimizer (e.g. "
                            f"nn.SGD(net.trainable_params())) or a Cell with a `parameters` "
                            f"tuple, got {type(optimizer).__name__}")
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        for p in self.weights:        # MindSpore's ParameterTuple attribute registers them
            if p.name not in self._params:
                self._params[p.name] = p
        self.grad = GradOperation(get_by_list=True, sens_param=True)
        if isinstance(sens, bool) or not isinstance(sens, (int, float, type(None))):
            raise TypeError(f"TrainOneStepCell: sens must be a float or None, got {sens!r}")
        if sens == 0:
            raise ValueError("The input argument of 'sens' can not be 0.")
        self.sense_flag = sens is not None
        self.sens = 1.0 if sens is None else float(sens)
        self.return_grad = bool(return_grad)
        self._init_grad_reducer()

    def _init_grad_reducer(self):
        """MindSpore's `reducer_flag` / `grad_reducer` (and `mean`, `degree` in data
        parallel), read from the auto-parallel context."""
        from ...communication.management import GlobalComm
        from ...parallel._utils import _get_device_num, _get_gradients_mean, _get_parallel_mode
        from ..layers import Identity
        from .grad_reducer import DistributedGradReducer
        self.grad_reducer = Identity()
        self.parallel_mode = _get_parallel_mode()
        self.reducer_flag = self.parallel_mode in ("data_parallel", "hybrid_parallel")
        if self.reducer_flag:
            self.mean = _get_gradients_mean()
            self.degree = _get_device_num()
            self.grad_reducer = DistributedGradReducer(self.weights, self.mean, self.degree,
                                                       group=GlobalComm.WORLD_COMM_GROUP)

    def construct(self, *inputs):
        loss, grads = value_and_grad(self.network, None, self.weights)(*inputs)
        if self.sens != 1.0:
            # d(sum(loss * sens)) = sens * d(sum(loss)) for a constant sens
            grads = _scaled(grads, self.sens)
        grads = self.grad_reducer(grads)
        loss = depend(loss, self.optimizer(grads))
        if self.return_grad:
            return loss, grads
        return loss
