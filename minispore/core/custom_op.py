"""A Python function on numpy arrays run as an op (MindSpore's `ops.Custom(func_type="pyfunc")`).

`pyfunc_op(func, out_shape, out_dtype, bprop, name)` makes an OpDef (one per Custom object, kept
out of the registry: no backend declares a kernel for it) whose kernel is a host callback: every
backend's `Backend.kernel` hands an op with `host_kernel` set to it, and the callback copies the
input buffers to host numpy arrays, calls `func`, checks each result against the declared
shape and dtype, and moves it to the device. So PyNative runs it as any primitive, and in graph
mode it is an ordinary node of the graph, whose kernel calls back into Python at every run
(the CPU's native O2 program calls it through a callback address, as it does for Print; the GPU's
captured CUDA graphs leave it on the host between segments). It is never constant-folded nor
merged with an identical call (passes' NONDETERMINISTIC).

`out_shape` / `out_dtype` are values or callables of the inputs' shapes (lists) / dtypes,
evaluated at infer time. A tuple of shapes / dtypes declares several outputs.

Gradient: the user's `bprop(*inputs, out, dout)` (minispore ops, or another Custom) is the op's
bprop in both modes (while a graph is built it is parsed, like construct); without one, the
gradient raises naming the Custom op.
"""
from __future__ import annotations

import numpy as np

from . import dtype as dt
from .errors import DTypeError, MinisporeError, ShapeError
from .primitive import Meta, OpDef, executor
from .tensor import Tensor


class CustomBpropError(MinisporeError, RuntimeError):
    """A gradient through a Custom op that declares no bprop (MindSpore raises RuntimeError)."""


def _is_shape(s) -> bool:
    return isinstance(s, (tuple, list)) and all(isinstance(d, int) and not isinstance(d, bool)
                                                for d in s)


def _declared(name, out_shape, out_dtype, metas):
    shapes = out_shape(*[list(m.shape) for m in metas]) if callable(out_shape) else out_shape
    dtypes = out_dtype(*[m.dtype for m in metas]) if callable(out_dtype) else out_dtype
    multi = isinstance(dtypes, (tuple, list))
    dts = tuple(dtypes) if multi else (dtypes,)
    if _is_shape(shapes):
        shs = (tuple(shapes),)
    elif isinstance(shapes, (tuple, list)) and all(_is_shape(s) for s in shapes):
        shs = tuple(tuple(s) for s in shapes)
    else:
        raise TypeError(f"For 'Custom' ({name}), out_shape must give a shape (a list of ints) "
                        f"or a tuple of shapes, but got {shapes!r}")
    for d in dts:
        if not isinstance(d, dt.DType):
            raise TypeError(f"For 'Custom' ({name}), out_dtype must give a mindspore dtype or "
                            f"a tuple of them, but got {dtypes!r}")
    if len(shs) != len(dts) or (len(shs) > 1) != multi:
        raise ValueError(f"For 'Custom' ({name}), out_shape gives {len(shs)} output(s) and "
                         f"out_dtype {len(dts)}; they must agree")
    metas_out = tuple(Meta(s, d) for s, d in zip(shs, dts))
    return metas_out if multi else metas_out[0]


def _run(name, func, metas_out, arrays):
    res = func(*arrays)
    multi = isinstance(metas_out, tuple) and not isinstance(metas_out, Meta)
    outs = metas_out if multi else (metas_out,)
    got = tuple(res) if multi and isinstance(res, (tuple, list)) else (res,)
    if len(got) != len(outs):
        raise ValueError(f"For 'Custom' ({name}), the function returned {len(got)} value(s), "
                         f"but out_shape/out_dtype declare {len(outs)}")
    arrs = []
    for k, (r, m) in enumerate(zip(got, outs)):
        a = np.asarray(r)
        if a.dtype != m.dtype.np:
            raise DTypeError(f"For 'Custom' ({name}), output {k} has dtype {a.dtype}, but "
                             f"out_dtype declares {m.dtype}")
        if tuple(a.shape) != tuple(m.shape):
            raise ShapeError(f"For 'Custom' ({name}), output {k} has shape {a.shape}, but "
                             f"out_shape declares {m.shape}")
        arrs.append(np.ascontiguousarray(a))
    return tuple(arrs) if multi else arrs[0]


def _call_user(fn, args: tuple):
    """fn(*args); a user function is parsed while a graph is built (as construct is)."""
    from .graph.parser import is_user_function
    parser = getattr(executor.current, "parser", None)
    if parser is not None and is_user_function(fn):
        return parser.call_function(fn, args, {})
    return fn(*args)


def pyfunc_op(func, out_shape, out_dtype, bprop, name: str) -> OpDef:
    """The OpDef of one pyfunc Custom op (see the module docstring)."""

    def infer(*ins):
        return _declared(name, out_shape, out_dtype, [Meta(tuple(t.shape), t.dtype) for t in ins])

    def ref(*arrays):
        metas = [Meta(tuple(a.shape), dt.to_dtype(a.dtype)) for a in arrays]
        return _run(name, func, _declared(name, out_shape, out_dtype, metas),
                    [np.array(a) for a in arrays])

    def host_kernel(backend, in_metas, attrs, out_meta):
        def kernel(*bufs):
            arrays = [np.array(backend.to_host(b)) for b in bufs]    # copies: func may mutate
            res = _run(name, func, out_meta, arrays)
            if isinstance(res, tuple):
                return tuple(backend.to_device(r) for r in res)
            return backend.to_device(res)
        kernel.host = True                  # a CUDA-graph capture leaves it on the host
        return kernel

    def grad(inputs, out, dout):
        if bprop is None:
            raise CustomBpropError(f"Custom op '{name}' (func_type='pyfunc') has no bprop: pass "
                                   f"bprop=fn(*inputs, out, dout) to ops.Custom to take its "
                                   f"gradient")
        if isinstance(out, tuple):              # an unused output's sensitivity: zeros
            from .ops.array import zeros
            dout = tuple(zeros(o.shape, o.dtype) if d is None else d for o, d in zip(out, dout))
        grads = _call_user(bprop, tuple(inputs) + (out, dout))
        if isinstance(grads, Tensor):
            grads = (grads,)
        if not isinstance(grads, (tuple, list)) or len(grads) != len(inputs):
            got = f"{len(grads)} value(s)" if isinstance(grads, (tuple, list)) else \
                type(grads).__name__
            raise CustomBpropError(f"Custom op '{name}': bprop must return a tuple of one "
                                   f"gradient per input ({len(inputs)}), got {got}")
        for i, (g, x) in enumerate(zip(grads, inputs)):
            if not isinstance(g, Tensor):
                raise TypeError(f"Custom op '{name}': the gradient of input {i} must be a "
                                f"Tensor, got {type(g).__name__}")
            if tuple(g.shape) != tuple(x.shape):
                raise ShapeError(f"Custom op '{name}': the gradient of input {i} has shape "
                                 f"{g.shape}, the input has shape {x.shape}")
        return tuple(grads)

    op = OpDef(f"Custom[{name}]", infer=infer, ref=ref, bprop=grad, arity=None)
    op.host_kernel = host_kernel
    from .graph.passes import NONDETERMINISTIC
    NONDETERMINISTIC.add(op.name)           # called at every run: never folded nor merged
    return op
