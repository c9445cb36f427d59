"""MindSpore's `ops.Custom`: a user function as an op. func_type="pyfunc" (MindSpore's default)
is supported: a Python function on numpy arrays, in PyNative and graph mode, with an optional
`bprop(*inputs, out, dout)` for its gradient (core/custom_op.py)."""
from __future__ import annotations

from ..core.custom_op import pyfunc_op
from ..core.primitive import Primitive
from ..core.tensor import Tensor

_OTHER_TYPES = ("aot", "julia", "akg", "hybrid", "tbe", "tvm_compute", "ir_builder")


class Custom(Primitive):
    """`ops.Custom(func, out_shape, out_dtype, func_type="pyfunc", bprop=None)`: `func` takes
    and returns numpy arrays; `out_shape`/`out_dtype` give the outputs' shapes/dtypes (values,
    or callables of the inputs' shapes/dtypes; tuples of them for several outputs)."""

    def __init__(self, func, out_shape=None, out_dtype=None, func_type="pyfunc", bprop=None,
                 reg_info=None):
        if func_type != "pyfunc":
            raise NotImplementedError(
                f"ops.Custom(func_type={func_type!r}) is not supported by minispore; only "
                f"func_type='pyfunc' (a Python function on numpy arrays) is" +
                ("" if func_type in _OTHER_TYPES else
                 f" (MindSpore's func_types: 'pyfunc', {', '.join(map(repr, _OTHER_TYPES))})"))
        if not callable(func):
            raise TypeError(f"For 'Custom' with func_type='pyfunc', 'func' must be a Python "
                            f"function, but got {type(func).__name__}")
        if out_shape is None or out_dtype is None:
            raise TypeError("For 'Custom' with func_type='pyfunc', 'out_shape' and 'out_dtype' "
                            "must be given (values, or functions of the inputs' shapes/dtypes)")
        if reg_info is not None:
            raise NotImplementedError("For 'Custom' with func_type='pyfunc', 'reg_info' is not "
                                      "supported by minispore (a pyfunc runs on the host for "
                                      "every dtype); leave it None")
        if bprop is not None and not callable(bprop):
            raise TypeError(f"For 'Custom', 'bprop' must be a function, but got "
                            f"{type(bprop).__name__}")
        self.func, self.out_shape, self.out_dtype = func, out_shape, out_dtype
        self.func_type, self.bprop, self.reg_info = func_type, bprop, reg_info
        name = getattr(func, "__name__", type(func).__name__)
        self.op = pyfunc_op(func, out_shape, out_dtype, bprop, name)
        self.attrs = ()
        self.name = "Custom"

    def __call__(self, *inputs):
        for i, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                raise TypeError(f"For 'Custom' ({self.op.name}), input {i} must be a Tensor, "
                                f"but got {type(x).__name__}")
        return super().__call__(*inputs)
