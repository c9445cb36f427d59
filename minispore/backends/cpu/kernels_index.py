"""Eager CPU kernels of gather, scatter_add, scatter_update, one_hot and check_class_labels: the
numba renderings of
loops/index.py's definitions (native_index.py renders the same definitions into the O2 sink's
LLVM IR, so PyNative, O0/O1 and O2 run one algorithm and report one IndexError).

Each kernel sees its tensors through the definition's collapsed views (index.gather_view,
index.scatter_view); numba specialises it per dtype. A half tensor moves as its 16-bit words;
scatter_add of a half tensor stays np.add.at (its float32 add, rounded after each update: numba
has no float16 arithmetic), and so do updates of a higher rank than the indexed region (the
reference's broadcast refuses them). An out-of-range index raises core/index_check's IndexError
(numba_source.checked). `register(backend)` is called by kernels.register_all after it registers
the reference kernels, so these replace them.
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core.index_check import IndexCheck
from ...core.primitive import REGISTRY
from ...core.shape import normalize_axis
from .loops import index
from .render import numba_source

HALF = (dt.float16, dt.bfloat16)


def _words(a: np.ndarray, half: bool) -> np.ndarray:
    return a.view(np.uint16) if half else a


def _gather(in_metas, attrs, out_meta):
    x_shape, ind_shape = tuple(in_metas[0].shape), tuple(in_metas[1].shape)
    axis = normalize_axis("gather", attrs["axis"], len(x_shape))
    x_view, ind_view, _ = index.gather_view(x_shape, axis, ind_shape)
    kernel = numba_source.checked(numba_source.module(index.gather).kernel,
                                  {"index": IndexCheck("gather", x_shape[axis], axis)})
    half, odt, shape = in_metas[0].dtype in HALF, out_meta.dtype.np, tuple(out_meta.shape)

    def run(x, ind):
        out = kernel(_words(np.ascontiguousarray(x).reshape(x_view), half),
                     np.ascontiguousarray(ind).reshape(ind_view))
        return out.view(odt).reshape(shape) if half else out.reshape(shape)
    return run


def _scatter_factory(op: str, accumulate: bool, ref_kernel):
    def factory(in_metas, attrs, out_meta):
        x_meta, ind_meta, upd_meta = in_metas
        x_shape = tuple(x_meta.shape)
        axis = normalize_axis(op, attrs["axis"], len(x_shape))
        half = x_meta.dtype in HALF
        region_rank = len(x_shape) - 1 + len(ind_meta.shape)
        if (accumulate and half) or len(upd_meta.shape) > region_rank:
            return ref_kernel(REGISTRY[op])(in_metas, attrs, out_meta)
        groups, x_view, ind_view, upd_view = index.scatter_view(
            x_shape, axis, tuple(ind_meta.shape), tuple(upd_meta.shape))
        mod = numba_source.module(index.scatter, accumulate=accumulate, groups=groups)
        kernel = numba_source.checked(mod.kernel, {"index": IndexCheck(op, x_shape[axis], axis)})
        xdt, convert = x_meta.dtype.np, upd_meta.dtype != x_meta.dtype

        def run(x, ind, upd):
            upd = np.ascontiguousarray(upd.astype(xdt) if convert else upd).reshape(upd_view)
            out = kernel(_words(np.ascontiguousarray(x).reshape(x_view), half),
                         np.ascontiguousarray(ind).reshape(ind_view), _words(upd, half))
            return out.view(xdt).reshape(x_shape) if half else out.reshape(x_shape)
        return run
    return factory


def _one_hot(in_metas, attrs, out_meta):
    shape = tuple(out_meta.shape)
    axis = normalize_axis("one_hot", attrs["axis"], len(shape))
    outer, depth, inner = index.one_hot_view(shape, axis)
    name = np.dtype(out_meta.dtype.np).name
    kernel = numba_source.module(index.one_hot, dtype=name).kernel
    scalar = np.float64 if name == "float32" else np.int64
    on, off = scalar(attrs["on_value"]), scalar(attrs["off_value"])

    def run(ind):
        out = kernel(np.ascontiguousarray(ind).reshape(outer, inner), depth, on, off)
        return out.reshape(shape)
    return run


def _check_labels(in_metas, attrs, out_meta):
    from ...core.ops.nn import label_check
    ignore = attrs["ignore_index"]
    site = label_check(attrs["classes"], ignore, attrs["caller"])
    kernel = numba_source.checked(
        numba_source.module(index.check_labels, ignore=ignore is not None).kernel,
        {"label": site})
    extra = () if ignore is None else (ignore,)
    classes, shape = attrs["classes"], tuple(out_meta.shape)

    def run(labels):
        return kernel(np.ascontiguousarray(labels).reshape(-1), classes, *extra).reshape(shape)
    return run


def register(backend, ref_kernel) -> None:
    backend.register("gather")(_gather)
    backend.register("scatter_add")(_scatter_factory("scatter_add", True, ref_kernel))
    backend.register("scatter_update")(_scatter_factory("scatter_update", False, ref_kernel))
    backend.register("one_hot")(_one_hot)
    backend.register("check_class_labels")(_check_labels)
