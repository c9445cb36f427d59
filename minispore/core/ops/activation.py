"""Activation composites (leaky_relu, prelu, relu6, hardswish, hardsigmoid, elu, silu,
mish, softsign, hardtanh, logsigmoid, tanhshrink, softmin, ...): one declaration each, which
nn, ops and mint all call."""
from __future__ import annotations

__all__: list = []
