"""Row-wise lowerings of the native sink: softmax/log_softmax along an axis, the sparse
cross-entropy pair and logsumexp over axes. Each is a definition of loops/rows.py rendered by
render/llvm.py, the definitions kernels_row.py renders as the eager numba kernels, so PyNative
and O2 run the same algorithm (float64 row accumulations, the same operations in the same order)
and agree bit for bit. Registered in native_registry; softmax and the cross-entropy pair with
half_as_float32 (a half node is lowered as its float32 twin, as the eager kernels compute it).
"""
from __future__ import annotations

from llvmlite import ir as L

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.primitive import attrs_dict
from ...core.shape import normalize_axes, size_of
from .loops import rows
from .native_emit import F64, FLOAT, Emitter, NativeUnsupported, const
from .native_lower import INTS, elementwise
from .native_registry import register
from .render.llvm import emit, scratch_bytes

def _floats(n, *values):
    for v in values:
        if v.dtype not in FLOAT:
            raise NativeUnsupported(f"{n.op.name} of {v.dtype}")


def _view(shape, axis: int):
    """(outer, d, inner) of `shape` around `axis`."""
    axis %= len(shape)
    return size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:])


def _softmax(log: bool):
    def lower(e: Emitter, n, a: dict):
        x, out = n.inputs[0], n.outputs[0]
        _floats(n, x, out)
        if not x.shape:                                  # one element: 1 (softmax) or 0 (log)
            one = e.convert(L.Constant(F64, 0.0 if log else 1.0), dt.float64, out.dtype)
            e.store(one, out, const(0))
            return
        view = _view(x.shape, a["axis"])
        emit(e, rows.softmax, {"log": log}, {"x": (x, view), "out": (out, view)}, n)
    return lower


def _softmax_scratch(n) -> int:
    x = n.inputs[0]
    if not x.shape:
        return 0
    view = _view(x.shape, attrs_dict(n.attrs)["axis"])
    return scratch_bytes(rows.softmax, {"log": False}, {"x": view})


_SCE = {"sparse_softmax_cross_entropy": rows.sparse_softmax_cross_entropy,
        "sparse_softmax_cross_entropy_grad": rows.sparse_softmax_cross_entropy_grad}


def _sce_shapes(n) -> dict:
    x = n.inputs[0]
    R, C = size_of(x.shape[:-1]), x.shape[-1]
    shapes = {"x": (R, C), "labels": (R,)}
    if len(n.inputs) > 2:
        shapes["dout"] = (R,)
    return shapes


def _sce(e: Emitter, n, a: dict):
    """The sparse softmax cross-entropy (logits, labels) and its gradient (logits, labels,
    dout) over the logits viewed as (rows, classes)."""
    x, lab = n.inputs[:2]
    out = n.outputs[0]
    _floats(n, x, out, *n.inputs[2:])
    if lab.dtype not in INTS:
        raise NativeUnsupported(f"{n.op.name} of {lab.dtype} labels")
    shapes = _sce_shapes(n)
    buffers = {name: (v, shapes[name]) for name, v in zip(("x", "labels", "dout"), n.inputs)}
    buffers["out"] = (out, out.shape)
    emit(e, _SCE[n.op.name], {}, buffers, n)


def _sce_scratch(n) -> int:
    return scratch_bytes(_SCE[n.op.name], {}, _sce_shapes(n))


def _logsumexp_params(n) -> dict:
    x = n.inputs[0]
    axes = normalize_axes("logsumexp", attrs_dict(n.attrs)["axis"], len(x.shape))
    return {"rank": len(x.shape), "axes": tuple(sorted(axes))}


def _logsumexp(e: Emitter, n, a: dict):
    x, out = n.inputs[0], n.outputs[0]
    # an integer input: the definition reads it as float64 (exactly, as the eager kernel's
    # float64 copy of it) and the float64 result is rounded once to the float output
    if (x.dtype not in FLOAT and x.dtype not in INTS) or out.dtype not in FLOAT:
        raise NativeUnsupported(f"logsumexp of {x.dtype}")
    if not x.shape:
        return elementwise(e, n, E.arg(0))
    emit(e, rows.logsumexp, _logsumexp_params(n),
         {"x": (x, x.shape), "out": (out, (size_of(out.shape),))}, n,
         read_as={"x": dt.float64} if x.dtype in INTS else None)


def _logsumexp_scratch(n) -> int:
    x = n.inputs[0]
    if not x.shape:
        return 0
    return scratch_bytes(rows.logsumexp, _logsumexp_params(n), {"x": x.shape})


# kernels_row's softmax and cross-entropy kernels compute a half tensor in float32 (cpu_np)
register("softmax", _softmax(False), _softmax_scratch, half_as_float32=True)
register("log_softmax", _softmax(True), _softmax_scratch, half_as_float32=True)
register("logsumexp", _logsumexp, _logsumexp_scratch, half_as_float32=True)
register(("sparse_softmax_cross_entropy", "sparse_softmax_cross_entropy_grad"), _sce,
         _sce_scratch, half_as_float32=True)
