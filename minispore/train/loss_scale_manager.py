"""Loss-scale managers (MindSpore's `mindspore.train.loss_scale_manager`): the loss-scale value
and its host-side update rule, as MindSpore computes them, and `get_update_cell`: the Cell
(nn.FixedLossScaleUpdateCell / nn.DynamicLossScaleUpdateCell) that updates the scale inside a
training step (nn.TrainOneStepWithLossScaleCell, which amp.build_train_network and Model build
from a manager)."""
from __future__ import annotations

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


class LossScaleManager:
    """The interface: get_loss_scale, update_loss_scale(overflow), get_update_cell."""

    def get_loss_scale(self):
        """The current loss scale."""

    def update_loss_scale(self, overflow):
        """Update the loss scale after a step that did (or did not) overflow."""

    def get_update_cell(self):
        """The Cell that updates the loss scale inside a training step."""


class FixedLossScaleManager(LossScaleManager):
    """A fixed loss scale; `drop_overflow_update` skips the optimizer on an overflowing step."""

    def __init__(self, loss_scale=128.0, drop_overflow_update=True):
        if loss_scale < 1:
            raise ValueError(f"The argument 'loss_scale' must be >= 1, but got {loss_scale}")
        self._loss_scale = loss_scale
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self):
        return self._loss_scale

    def get_drop_overflow_update(self):
        return self._drop_overflow_update

    def update_loss_scale(self, overflow):
        """A fixed loss scale does not change."""

    def get_update_cell(self):
        """None when drop_overflow_update is False (the scale is then only the gradients'
        sens); otherwise nn.FixedLossScaleUpdateCell(loss_scale)."""
        if not self._drop_overflow_update:
            return None
        from ..nn import FixedLossScaleUpdateCell
        return FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """MindSpore's dynamic rule: divide by `scale_factor` on an overflow (not below 1),
    multiply by it after `scale_window` steps without one; more than 1000 overflowing steps in
    a row raise RuntimeError."""

    def __init__(self, init_loss_scale=2 ** 24, scale_factor=2, scale_window=2000):
        if init_loss_scale < 1.0:
            raise ValueError(f"The argument 'init_loss_scale' must be > 1, but got "
                             f"{init_loss_scale}")
        if not isinstance(scale_window, int) or isinstance(scale_window, bool) \
                or scale_window <= 0:
            raise ValueError(f"For 'DynamicLossScaleManager', the 'scale_window' must be int "
                             f"and must > 0, but got {scale_window!r}")
        if scale_factor <= 0:
            raise ValueError(f"The argument 'scale_factor' must be > 0, but got {scale_factor}")
        self.loss_scale = init_loss_scale
        self.scale_window = scale_window
        self.scale_factor = scale_factor
        self.increase_ratio = scale_factor
        self.decrease_ratio = 1 / scale_factor
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step_max = 1000
        self.bad_step = 0

    def get_loss_scale(self):
        return self.loss_scale

    def update_loss_scale(self, overflow):
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.bad_step_max:
            raise RuntimeError(f"Dynamic loss scale: {self.bad_step} overflowing steps in a row "
                               f"exceed the maximum of {self.bad_step_max}")
        self.cur_iter += 1

    def get_drop_overflow_update(self):
        return True

    def get_update_cell(self):
        """nn.DynamicLossScaleUpdateCell(loss_scale, scale_factor, scale_window)."""
        from ..nn import DynamicLossScaleUpdateCell
        return DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)
