"""mindspore.amp: mixed precision (auto_mixed_precision, custom_mixed_precision, the white and
black lists, build_train_network) and loss scaling (StaticLossScaler, DynamicLossScaler,
all_finite, the loss-scale managers), with MindSpore 2.10's rules.

What each amp_level does to a network (auto_mixed_precision):
- "O0": nothing.
- "O1": the white-list Cells (convolutions, Dense) run in float16 with their outputs cast back
  to float32; the recurrent cells (RNNCell, GRUCell, LSTMCell) run their MatMuls and
  activations in float16 and their gate arithmetic in float32 (nn/wrap/amp_rnn_cells.py);
  white-list Primitive instances held by a Cell (ops.MatMul(), ops.ReLU(), ...) are wrapped with
  the same cast pair, and nn.ReLU / nn.PReLU (one such call in MindSpore) run in float16;
  everything else stays float32. (MindSpore rewrites the network's source
  to insert these casts; functional calls such as ops.matmul in a user's construct are not
  white-list Primitives there either.)
- "O2": the whole network to_float(float16) except the black-list Cells (BatchNorm1d/2d/3d,
  LayerNorm), which run in float32 with their outputs cast to float16 (_OutputTo16); the
  network's outputs are cast to float32 (_OutputTo32).
- "O3": the whole network in float16, outputs cast to float32.
The Parameters stay float32 at every level (they are cast where they are used), so the
optimizer updates float32 weights. Float16 on the CPU computes in float32 and rounds each op's
result to float16; on the simulated Ascend float16 matmuls and convolutions use the Cube's
float16 rate (see minispore/nn/wrap/mixed_precision.py).
"""
from __future__ import annotations

import numpy as np

from .core import dtype as _dt
from .core.ops import math as _M
from .core.tensor import Parameter, Tensor
from .train.loss_scale_manager import (DynamicLossScaleManager, FixedLossScaleManager,
                                       LossScaleManager)

__all__ = ["DynamicLossScaleManager", "LossScaleManager", "FixedLossScaleManager",
           "build_train_network", "DynamicLossScaler", "StaticLossScaler", "LossScaler",
           "auto_mixed_precision", "all_finite", "custom_mixed_precision",
           "get_white_list", "get_black_list"]


def _white_list():
    from . import nn, ops
    return [nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Conv1dTranspose, nn.Conv2dTranspose,
            nn.Conv3dTranspose, nn.Dense, nn.LSTMCell, nn.RNNCell, nn.GRUCell,
            ops.Conv2D, ops.Conv3D, ops.Conv2DTranspose, ops.Conv3DTranspose,
            ops.Conv2DBackpropInput, ops.MatMul, ops.BatchMatMul, ops.PReLU, ops.ReLU]


def _black_list():
    from . import nn
    return [nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm]


def get_white_list():
    """A copy of the O1 white list: MindSpore 2.10's Cells and Primitive classes (ops.Ger,
    which minispore does not have, is the one entry missing)."""
    return _white_list()


def get_black_list():
    """A copy of the O2 black list: nn.BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm."""
    return _black_list()


# -- mixed precision ------------------------------------------------------------------------
def _check_dtype(dtype):
    if dtype not in (_dt.float16, _dt.bfloat16):
        raise ValueError(f"The dtype should be one of (mstype.float16, mstype.bfloat16), but got "
                         f"{dtype}.")


def _is_cell(obj):
    from .nn import Cell
    return isinstance(obj, Cell)


def _cast_white_list(network, white_list, dtype):
    """O1 on `network` in place: white-list Cells (and, under them, everything) in `dtype` with
    float32 outputs; white-list Primitive attributes wrapped with the cast pair."""
    from .core.primitive import Primitive
    from .nn.wrap.amp_rnn_cells import make_o1
    from .nn.wrap.mixed_precision import CastedPrimitive, set_precision
    cells = tuple(c for c in white_list if _is_cell_class(c))
    prims = tuple(c for c in white_list if isinstance(c, type) and issubclass(c, Primitive))
    cells += tuple(cell for prim, cell in _primitive_cells().items() if prim in prims)
    done = set()
    for _, c in list(network.cells_and_names()):
        if id(c) in done or _precision_set_by_user(c):
            continue
        if isinstance(c, cells):
            if make_o1(c, dtype):           # the recurrent cells: MindSpore's mixed casts
                done.add(id(c))
                continue
            for _, sub in c.cells_and_names():
                done.add(id(sub))
                set_precision(sub, dtype)
            set_precision(c, dtype, output_dtype=_dt.float32)
            continue
        for name, v in list(vars(c).items()):
            if prims and isinstance(v, prims):
                object.__setattr__(c, name, CastedPrimitive(v, dtype))
    return network


def _primitive_cells():
    """White-list Primitive class -> the nn Cells whose MindSpore construct is that one
    Primitive's call (O1 casts the call, so the Cell computes in float16)."""
    from . import nn, ops
    return {ops.ReLU: nn.ReLU, ops.PReLU: nn.PReLU}


def _is_cell_class(c):
    from .nn import Cell
    return isinstance(c, type) and issubclass(c, Cell)


def _precision_set_by_user(cell) -> bool:
    return any(cell.__dict__.get(f) for f in ("fp16", "fp32", "bf16"))


def _auto_black_list(network, black_list, dtype):
    """The network to_float(dtype), each black-list sub-Cell to_float(float32) inside an
    _OutputTo16 (MindSpore's _auto_black_list)."""
    from .nn.wrap.mixed_precision import _OutputTo16
    network.to_float(dtype)
    for name, sub in list(network._cells.items()):
        if sub is None or sub is network:
            continue
        if isinstance(sub, tuple(black_list)):
            wrapped = _OutputTo16(sub.to_float(_dt.float32), dtype)
            network._cells[name] = wrapped
            object.__setattr__(network, name, wrapped)
        else:
            _auto_black_list(sub, black_list, dtype)
    return network


def auto_mixed_precision(network, amp_level="O0", dtype=_dt.float16):
    """The network with automatic mixed precision at `amp_level` ("O0", "O1", "O2", "O3"; see
    the module docstring). O2/O3 change the network in place and return it inside an
    _OutputTo32; O1 changes it in place and returns it."""
    from .nn.wrap.mixed_precision import _OutputTo32
    if not _is_cell(network):
        if amp_level == "auto":
            raise NotImplementedError("auto_mixed_precision: amp_level='auto' (per-op promotion "
                                      "lists) is not implemented by minispore; use 'O1', 'O2' "
                                      "or 'O3'")
        raise TypeError(f"For amp_level '{amp_level}', the network type should be Cell.")
    _check_dtype(dtype)
    if amp_level == "O0":
        return network
    previous = network.__dict__.get("_amp_level")
    if previous in ("O1", "O2", "O3", "auto"):
        from . import log
        log.warning(f"The network's auto mixed-precision level is adjusted from {previous} to "
                    f"{amp_level}, and repeated calls to mixed-precision interfaces can cause "
                    f"performance degradation.")
    if amp_level == "O1":
        network = _cast_white_list(network, _white_list(), dtype)
    elif amp_level == "O2":
        network = _OutputTo32(_auto_black_list(network, _black_list(), dtype))
    elif amp_level == "O3":
        network = _OutputTo32(network.to_float(dtype))
    elif amp_level == "auto":
        raise NotImplementedError("auto_mixed_precision: amp_level='auto' (per-op promotion "
                                  "lists) is not implemented by minispore; use 'O1', 'O2' or "
                                  "'O3'")
    else:
        raise ValueError(f"The amp level {amp_level} is not supported")
    network.__dict__["_amp_level"] = amp_level
    return network


def _list_check(custom_list, list_name):
    from .core.primitive import Primitive
    if not isinstance(custom_list, list):
        raise TypeError(f"The type of {list_name} should be list, but got {type(custom_list)}")
    for elem in custom_list:
        if not isinstance(elem, type):
            raise TypeError(f"The element in {list_name} should be a class, but got {elem}")
        if list_name == "white_list" and not _is_cell_class(elem) and \
                not issubclass(elem, Primitive):
            raise TypeError(f"The subclass of element in {list_name} should be one of 'Cell' and "
                            f"'Primitive', but got {elem}")
        if list_name == "black_list" and not _is_cell_class(elem):
            raise TypeError(f"The subclass of element in {list_name} should be one of 'Cell', "
                            f"but got {elem}")
    if list_name == "black_list":
        from . import log
        for elem in _black_list():
            if elem not in custom_list:
                log.warning(f"{elem} is removed from internal black list.")


def custom_mixed_precision(network, *, white_list=None, black_list=None, dtype=_dt.float16):
    """Mixed precision from a custom list: `white_list` (Cells and Primitive classes cast as
    O1 casts its list) or `black_list` (Cells kept in float32, the rest as O2); exactly one."""
    from .nn.wrap.mixed_precision import _OutputTo32
    if not _is_cell(network):
        raise TypeError("The network type should be Cell.")
    if white_list is None and black_list is None:
        raise ValueError("For custom_mixed_precision, one of white_list and black_list must be "
                         "provided.")
    if white_list is not None and black_list is not None:
        raise ValueError("For custom_mixed_precision, the white_list or black_list cannot be "
                         "provided at the same time, please provide one or the other.")
    _check_dtype(dtype)
    if white_list is not None:
        _list_check(white_list, "white_list")
        return _cast_white_list(network, white_list, dtype)
    _list_check(black_list, "black_list")
    return _OutputTo32(_auto_black_list(network, black_list, dtype))


# -- build_train_network --------------------------------------------------------------------
def _config_level(level):
    fp16, fp32 = _dt.float16, _dt.float32
    return {"O0": {"keep_batchnorm_fp32": False, "cast_model_type": fp32,
                   "loss_scale_manager": None},
            "O1": {"keep_batchnorm_fp32": False, "cast_model_type": fp32,
                   "loss_scale_manager": None},
            "O2": {"keep_batchnorm_fp32": True, "cast_model_type": fp16,
                   "loss_scale_manager": DynamicLossScaleManager()},
            "O3": {"keep_batchnorm_fp32": False, "cast_model_type": fp16,
                   "loss_scale_manager": None}}[level]


def _check_kwargs(kwargs):
    for arg in kwargs:
        if arg not in ("cast_model_type", "keep_batchnorm_fp32", "loss_scale_manager"):
            raise ValueError(f"Unsupported arg '{arg}'")
    if "cast_model_type" in kwargs and kwargs["cast_model_type"] not in (_dt.float16,
                                                                       _dt.float32):
        raise TypeError(f"For 'cast_model_type', the type of 'cast_model_type' should be in "
                        f"'['Float16', 'Float32']', but got {kwargs['cast_model_type']}.")
    if "keep_batchnorm_fp32" in kwargs and not isinstance(kwargs["keep_batchnorm_fp32"], bool):
        raise TypeError(f"The argument 'keep_batchnorm_fp32' must be bool, but got "
                        f"{type(kwargs['keep_batchnorm_fp32']).__name__}.")
    lsm = kwargs.get("loss_scale_manager")
    if lsm and not isinstance(lsm, LossScaleManager):
        raise TypeError(f"The argument 'loss_scale_manager' must be a LossScaleManager, but got "
                        f"{type(lsm).__name__}.")


def _check_level(level, boost_level):
    if not isinstance(level, str):
        raise TypeError(f"The argument `level` must be a string in ['O0', 'O1', 'O2', 'O3', "
                        f"'auto'],but got type {type(level)}.")
    if level == "auto":
        raise NotImplementedError("build_train_network: level='auto' is not implemented by "
                                  "minispore; use 'O0', 'O1', 'O2' or 'O3'")
    if level not in ("O0", "O1", "O2", "O3"):
        raise ValueError(f"The argument 'level' must be in ['O0', 'O1', 'O2', 'O3', 'auto'], but "
                         f"got '{level}'.")
    _check_boost_level("build_train_network", boost_level)


def _check_boost_level(who, boost_level):
    """MindSpore's check of `boost_level` (Model's and build_train_network's); only 'O0' runs
    here: mindspore.boost is not implemented."""
    if boost_level not in ("O0", "O1", "O2"):
        raise ValueError(f"The argument 'boost_level' must be in ['O0', 'O1', 'O2'], but got "
                         f"'{boost_level}'.")
    if boost_level != "O0":
        raise NotImplementedError(f"{who}: boost_level={boost_level!r} (mindspore.boost) is "
                                  f"not implemented by minispore; use boost_level='O0'")


def _do_keep_batchnorm_fp32(network):
    from .nn.wrap.mixed_precision import _OutputTo16
    for name, sub in list(network._cells.items()):
        if sub is None or sub is network:
            continue
        if isinstance(sub, tuple(_black_list())):
            wrapped = _OutputTo16(sub.to_float(_dt.float32))
            network._cells[name] = wrapped
            object.__setattr__(network, name, wrapped)
        else:
            _do_keep_batchnorm_fp32(sub)


def _auto_mixed_precision_process(network, config, level):
    if config["cast_model_type"] is _dt.float16:
        network.to_float(_dt.float16)
        if config["keep_batchnorm_fp32"]:
            _do_keep_batchnorm_fp32(network)
    elif not config["keep_batchnorm_fp32"] and level == "O2":
        network.to_float(_dt.float16)
    elif config["cast_model_type"] is _dt.float32 and level in ("O2", "O3"):
        pass
    else:
        network = auto_mixed_precision(network, level)
    return network


def _add_loss_network(network, loss_fn, cast_model_type):
    from . import nn
    from .nn.wrap.mixed_precision import AmpWithLossCell
    if not isinstance(loss_fn, nn.Cell):
        raise TypeError(f"The argument 'loss_fn' must be a Cell, but got "
                        f"{type(loss_fn).__name__}.")
    if cast_model_type in (_dt.float16, _dt.bfloat16) or \
            network.__dict__.get("_amp_level") in ("O2", "O3", "auto"):
        return AmpWithLossCell(network, loss_fn)
    return nn.WithLossCell(network, loss_fn)


def build_train_network(network, optimizer, loss_fn=None, level="O0", boost_level="O0",
                        **kwargs):
    """The mixed-precision training Cell, as MindSpore 2.10 builds it: the network cast per
    `level` (cast_model_type / keep_batchnorm_fp32 in kwargs override the level's defaults),
    the loss added (its inputs cast to float32 for a float16 network), then
    TrainOneStepWithLossScaleCell when the loss-scale manager has an update Cell (O2's default
    DynamicLossScaleManager(), or one passed as loss_scale_manager=), else TrainOneStepCell
    with the manager's scale as sens. MindSpore refuses an update Cell on its CPU (no overflow
    status kernel there); minispore's overflow check runs on every device, so it builds it."""
    from . import nn
    if not isinstance(optimizer, nn.Optimizer):
        raise TypeError(f"The argument 'optimizer' must be an nn.Optimizer, but got "
                        f"{type(optimizer).__name__}.")
    _check_level(level, boost_level)
    _check_kwargs(kwargs)
    config = dict(_config_level(level), **kwargs)
    network = _auto_mixed_precision_process(network, config, level)
    if loss_fn:
        network = _add_loss_network(network, loss_fn, config["cast_model_type"])
    loss_scale = None
    manager = config["loss_scale_manager"]
    if manager is not None:
        loss_scale = manager.get_loss_scale()
        update_cell = manager.get_update_cell()
        if update_cell is not None:
            return nn.TrainOneStepWithLossScaleCell(network, optimizer,
                                                    scale_sense=update_cell).set_train()
    return nn.TrainOneStepCell(network, optimizer, loss_scale).set_train()


# -- loss scalers ---------------------------------------------------------------------------
def _scale_map(inputs, factor_fn):
    if isinstance(inputs, Tensor):
        return _M.mul(inputs, _M.cast(factor_fn(), inputs.dtype))
    return type(inputs)(_M.mul(g, _M.cast(factor_fn(), g.dtype)) for g in inputs)


def all_finite(inputs):
    """A bool scalar Tensor: whether every Tensor in `inputs` (a tuple or list) is finite."""
    from .nn.wrap.loss_scale import overflow_status
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    return _M.logical_not(overflow_status(tuple(inputs)))


def _check_scale_value(scale_value):
    if isinstance(scale_value, bool) or not isinstance(scale_value, (int, float)):
        raise TypeError(f"The type of 'scale_value' should be one of '['float', 'int']', but "
                        f"got type '{type(scale_value).__name__}'.")
    if scale_value < 1.0:
        raise ValueError(f"The argument 'scale_value' must be > 1, but got {scale_value}")


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"The '{name}' must be int, but got '{type(value).__name__}'")
    if value <= 0:
        raise ValueError(f"The '{name}' must be int and must > 0, but got '{value}' with type "
                         f"'int'.")
    return value


class LossScaler:
    """The loss-scaler interface: scale(inputs), unscale(inputs), adjust(grads_finite)."""

    def scale(self, inputs):
        raise NotImplementedError

    def unscale(self, inputs):
        raise NotImplementedError

    def adjust(self, grads_finite):
        raise NotImplementedError


class StaticLossScaler(LossScaler):
    """A constant scale: scale multiplies by it, unscale by its reciprocal (in each input's
    dtype), adjust returns False."""

    def __init__(self, scale_value):
        _check_scale_value(scale_value)
        self.scale_value = Parameter(Tensor(scale_value, dtype=_dt.float32), name="scale_value")

    def scale(self, inputs):
        return _scale_map(inputs, lambda: self.scale_value)

    def unscale(self, inputs):
        return _scale_map(inputs, lambda: _M.reciprocal(self.scale_value))

    def adjust(self, grads_finite):
        return False


class DynamicLossScaler(LossScaler):
    """MindSpore's DynamicLossScaler: after `scale_window` finite steps in a row the scale is
    multiplied by `scale_factor` (unless that overflows float32); a non-finite step divides it
    by `scale_factor` (not below 1) and resets the counter."""

    def __init__(self, scale_value, scale_factor, scale_window):
        _check_scale_value(scale_value)
        self.scale_value = Parameter(Tensor(scale_value, dtype=_dt.float32), name="scale_value")
        self.scale_window = _check_positive_int(scale_window, "scale_window")
        self.scale_factor = _check_positive_int(scale_factor, "scale_factor")
        self.counter = Parameter(Tensor(0, dtype=_dt.int32), name="counter")

    def scale(self, inputs):
        return _scale_map(inputs, lambda: self.scale_value)

    def unscale(self, inputs):
        return _scale_map(inputs, lambda: _M.reciprocal(self.scale_value))

    def adjust(self, grads_finite):
        from .core.ops.state import assign
        grads_finite = grads_finite if isinstance(grads_finite, Tensor) else \
            Tensor(bool(grads_finite))
        one = Tensor(np.ones((), np.float32))
        mul_factor = _M.mul(self.scale_value, float(self.scale_factor))
        big = float(np.finfo(np.float32).max)
        grown = _M.where(_M.less_equal(_M.abs(mul_factor), big), mul_factor, self.scale_value)
        value = _M.where(grads_finite,
                         _M.where(_M.equal(self.counter, self.scale_window - 1), grown,
                                  self.scale_value),
                         _M.maximum(one, _M.true_divide(self.scale_value,
                                                        float(self.scale_factor))))
        assign(self.scale_value, value)
        counter = _M.mul(_M.floor_mod(_M.add(self.counter, 1), self.scale_window),
                         _M.cast(grads_finite, _dt.int32))
        assign(self.counter, counter)
        return True
