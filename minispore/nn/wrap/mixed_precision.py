"""How a Cell runs in a lower (or higher) float precision: `Cell.to_float(dst_type)` and the
wrapper Cells mixed precision inserts (`_OutputTo16`, `_OutputTo32`, `AmpWithLossCell`,
`CastedPrimitive`).

MindSpore's `to_float(dtype)` flags the Cell and every sub-Cell; while a flagged Cell runs, the
float inputs of the ops it calls (its inputs and its Parameters) are cast to the flag's dtype,
and the Parameters themselves stay float32 (the gradient flows back through the cast). Here a
flagged Cell casts its float Tensor arguments and reads its own trainable float Parameters and
float Tensor attributes through a cast while its construct runs (the values computed from them
are then already in that dtype), in both modes: a forward pre hook casts and swaps, a forward
hook restores. Two differences from MindSpore, both in what stays float32: non-trainable
Parameters (BatchNorm's moving statistics, which the layer assigns in place) are not cast, and
a float32 Tensor a construct creates itself is not cast (an op then promotes float16 with it
to float32).

Float16 on the CPU computes in float32 and rounds each op's result to float16 (as numpy's
half kernels do); on the simulated Ascend a float16 matmul or convolution runs on the Cube at
its float16 rate (float32 operands pay the profile's fp32 slowdown), so an fp16 network's
simulated time is shorter.
"""
from __future__ import annotations

from ...core import dtype as dt
from ...core.ops import math as M
from ...core.tensor import Parameter, Tensor
from ..cell import Cell

__all__ = []

_FLOATS = (dt.float16, dt.float32, dt.float64, dt.bfloat16)


def cast_floats(value, dtype):
    """`value` with each float Tensor in it (through tuples and lists) cast to `dtype`
    (MindSpore's mixed_precision_cast): integer and bool Tensors and other values unchanged."""
    if isinstance(value, Tensor):
        if value.dtype in _FLOATS and value.dtype is not dtype:
            return M.cast(value, dtype)
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(cast_floats(v, dtype) for v in value)
    return value


def _pre_hook(cell, args):
    dtype = cell.__dict__.get("_mixed_precision")
    if dtype is None:
        return None
    swapped = {}
    for name, p in cell._params.items():
        if isinstance(p, Parameter) and p.requires_grad and p.dtype in _FLOATS \
                and p.dtype is not dtype and cell.__dict__.get(name) is p:
            swapped[name] = p
            cell.__dict__[name] = M.cast(p, dtype)
    for name, v in list(cell.__dict__.items()):     # float Tensor constants held by the Cell
        if type(v) is Tensor and v.dtype in _FLOATS and v.dtype is not dtype:
            swapped[name] = v
            cell.__dict__[name] = M.cast(v, dtype)
    cell.__dict__.setdefault("_mixed_precision_saved", []).append(swapped)
    return cast_floats(tuple(args), dtype)


def _post_hook(cell, args, output):
    stack = cell.__dict__.get("_mixed_precision_saved")
    if stack:
        for name, p in stack.pop().items():
            cell.__dict__[name] = p
    out_dtype = cell.__dict__.get("_mixed_precision_output")
    if out_dtype is not None:
        return cast_floats(output, out_dtype)
    return None


def set_precision(cell, dtype, output_dtype=None) -> None:
    """Run `cell` (this Cell only) in `dtype` (None: as written); `output_dtype` casts its
    float outputs afterwards (O1's white-list Cells return float32)."""
    d = cell.__dict__
    d["_mixed_precision"] = dtype
    if output_dtype is not None:
        d["_mixed_precision_output"] = output_dtype
    if d.get("_mixed_precision_hooks") is None:
        d["_mixed_precision_hooks"] = (
            cell.register_forward_pre_hook(_pre_hook),
            cell.register_forward_hook(_post_hook, always_call=True))
    for flag, want in (("fp16", dt.float16), ("fp32", dt.float32), ("bf16", dt.bfloat16)):
        d[flag] = dtype is want


def to_float(self, dst_type):
    """MindSpore's `Cell.to_float(dst_type)`: this Cell and every sub-Cell run with their float
    inputs and Parameters cast to `dst_type` (float16, float32 or bfloat16); returns the Cell.
    A later call overwrites the setting."""
    if dst_type not in (dt.float16, dt.float32, dt.bfloat16):
        raise ValueError(f"For 'to_float', the argument 'dst_type' must be mstype.float32, "
                         f"mstype.float16 or mstype.bfloat16, but got type: {type(dst_type)} "
                         f"and value: {dst_type}.")
    for _, c in self.cells_and_names():
        set_precision(c, dst_type)
    return self


Cell.to_float = to_float


class _OutputTo16(Cell):
    """The backbone's output cast to `dtype` (float16): a black-list Cell kept in float32
    inside a float16 network."""

    def __init__(self, backbone, dtype=dt.float16):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self.dtype = dtype

    def construct(self, *args, **kwargs):
        return M.cast(self._backbone(*args, **kwargs), self.dtype)


class _OutputTo32(Cell):
    """The backbone's float outputs cast to float32 (auto_mixed_precision O2/O3's wrapper)."""

    def __init__(self, backbone):
        super().__init__(auto_prefix=False)
        self._backbone = backbone

    def construct(self, *args, **kwargs):
        return cast_floats(self._backbone(*args, **kwargs), dt.float32)


class AmpWithLossCell(Cell):
    """build_train_network's loss Cell for a float16 network: the backbone's output and the
    label cast to float32 (float Tensors only) before the loss."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        label = cast_floats(label, dt.float32)
        return self._loss_fn(cast_floats(out, dt.float32), label)

    @property
    def backbone_network(self):
        return self._backbone


class CastedPrimitive:
    """A white-list Primitive under O1: its float inputs cast to `dtype`, its float outputs
    back to float32 (MindSpore's rewrite inserts the same cast pair around the call)."""

    def __init__(self, prim, dtype):
        self.prim, self.dtype = prim, dtype

    def __call__(self, *inputs):
        return cast_floats(self.prim(*cast_floats(inputs, self.dtype)), dt.float32)

    def __getattr__(self, name):
        return getattr(self.__dict__["prim"], name)

    def __repr__(self):
        return f"CastedPrimitive({self.prim!r}, {self.dtype})"
