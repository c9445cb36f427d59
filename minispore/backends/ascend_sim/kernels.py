"""Kernels of the simulated Ascend device: the device's precision rules, its cost per kernel, and
its buffers, around arithmetic computed by the CPU backend's kernels.

The numbers are real: each kernel computes with the CPU backend's kernel for the same op (the
simulator's ALU), under the device's rules: no float64 anywhere (a clear TypeError), Cube ops
(matmul) take fp16 (or bf16) operands and accumulate in fp32 as `asc_mmad` does, unless the
precision mode keeps fp32; Vector ops run in the tensor's dtype. What is the device's own: every
output lives in the simulated HBM pool (allocated before the kernel runs, so an out-of-memory
error leaves nothing half done), every kernel is a task on the simulated stream with the cost
model's duration, and matmul operands are re-laid into FRACTAL_NZ by real TransData kernels
(in PyNative around every matmul; in graph mode where the format pass puts them, graph.py).
"""
from __future__ import annotations

import numpy as np

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.errors import DTypeError
from ...core.primitive import ELEMENTWISE, REDUCE, Meta
from ...core.shape import size_of
from . import cost
from .formats import nd_to_nz, nz_shape, nz_to_nd
from .memory import DeviceArray

VIEW_OPS = ("reshape", "stop_gradient")          # no task: the output shares the input's bytes
_HEAVY_VECTOR = {"softmax": 6, "log_softmax": 6, "logsumexp": 6,
                 "sort": 16, "topk": 8, "cumsum": 1, "cumprod": 1}       # sort: a merge network, ~log2(n) passes

# ascend_config precision_mode -> dtype the Cube reads float32 operands as (None: keep fp32)
PRECISION_MODES = {
    "allow_fp32_to_fp16": dt.float16, "force_fp16": dt.float16,
    "cube_fp16in_fp32out": dt.float16, "allow_fp32_to_bf16": dt.bfloat16,
    "force_fp32": None, "must_keep_origin_dtype": None,
}
DEFAULT_PRECISION_MODE = "allow_fp32_to_fp16"


def _nbytes(m: Meta) -> int:
    return size_of(m.shape) * m.dtype.itemsize


def _outs(out_meta) -> tuple:
    return (out_meta,) if isinstance(out_meta, Meta) else tuple(out_meta)


def check_dtypes(name: str, in_metas, out_meta) -> None:
    for m in tuple(in_metas) + _outs(out_meta):
        if m.dtype is dt.float64:
            raise DTypeError(
                f"{name}: float64 is not supported on device_target='Ascend' (simulated): the "
                f"Cube and Vector units have no float64 path. Cast to float32 "
                f"(x.astype(ms.float32)) or run this on device_target='CPU'")


def op_cost(p, op, in_metas, out_meta, expr=None) -> tuple[float, str, int, float]:
    """(seconds, unit, HBM bytes, FLOPs) of one non-Cube kernel."""
    outs = _outs(out_meta)
    in_b = sum(_nbytes(m) for m in in_metas)
    out_b = sum(_nbytes(m) for m in outs)
    n_out = sum(size_of(m.shape) for m in outs)
    itemsize = outs[0].dtype.itemsize if outs else 4
    name = op if isinstance(op, str) else op.name
    if expr is not None or (not isinstance(op, str) and op.kind == ELEMENTWISE):
        if expr is None:
            expr = E.build(lambda *xs: op.scalar(*xs), op.arity) if _plain(op) else None
        ops = cost.expr_ops(expr) if expr is not None else 1
        return cost.vector(p, n_out, in_b, out_b, ops, itemsize), cost.VECTOR, in_b + out_b, \
            float(n_out * ops)
    if name == "cast" or name in _HEAVY_VECTOR or (not isinstance(op, str) and op.kind == REDUCE):
        n_in = sum(size_of(m.shape) for m in in_metas)
        ops = _HEAVY_VECTOR.get(name, 1)
        return cost.vector(p, n_in, in_b, out_b, ops, itemsize), cost.VECTOR, in_b + out_b, \
            float(n_in * ops)
    return cost.move(p, in_b, out_b), cost.MTE, in_b + out_b, 0.0


def _plain(op) -> bool:
    """The template takes no attributes (so it can be built without them for costing)."""
    return not op.attrs


def launcher(dev, name, compute, dur, unit, nbytes, flops, out_meta, out_fmt="ND", arity=None):
    """The launchable kernel: inputs to device buffers (uploading host arrays once), outputs
    allocated in the pool first, the arithmetic, one task on the stream. One-output kernels of
    `arity` 1 or 2 get a fixed-argument version (the eager hot path)."""
    pool = dev.pool
    upload = dev.upload
    multi = not isinstance(out_meta, Meta)
    metas = _outs(out_meta)
    sizes = [nz_bytes(m) if out_fmt == "NZ" else _nbytes(m) for m in metas]
    DA = DeviceArray

    def run(*bufs):
        args = [b.data if b.__class__ is DA else upload(b).data for b in bufs]
        blocks = [pool.alloc(s, f"the output of {name}") for s in sizes]
        try:
            r = compute(*args)
        except BaseException:
            for a, s in blocks:
                pool.free(a, s)
            raise
        dev.task(name, dur, unit, nbytes, flops)
        if multi:
            return tuple(DA(x, a, s, pool, out_fmt) for x, (a, s) in zip(r, blocks))
        (a, s), = blocks
        return DA(r, a, s, pool, out_fmt)

    if not multi:                           # the hot path: one output, one or two inputs
        size = pool.block_size(sizes[0])
        take, free, task = pool.take, pool.free, dev.task
        what = f"the output of {name}"

        def run1(x):
            x = x.data if x.__class__ is DA else upload(x).data
            a = take(size, what)
            try:
                r = compute(x)
            except BaseException:
                free(a, size)
                raise
            task(name, dur, unit, nbytes, flops)
            return DA(r, a, size, pool, out_fmt)

        def run2(x, y):
            x = x.data if x.__class__ is DA else upload(x).data
            y = y.data if y.__class__ is DA else upload(y).data
            a = take(size, what)
            try:
                r = compute(x, y)
            except BaseException:
                free(a, size)
                raise
            task(name, dur, unit, nbytes, flops)
            return DA(r, a, size, pool, out_fmt)
        if arity == 1:
            return run1
        if arity == 2:
            return run2
    return run


def nz_bytes(m: Meta) -> int:
    return size_of(nz_shape(m.shape)) * m.dtype.itemsize


def view_kernel(dev, name, compute):
    """reshape-like ops: the host still issues the op, but no device task runs and no memory is
    allocated (the output shares the input's block)."""
    DA, pool, upload = DeviceArray, dev.pool, dev.upload

    def run(x):
        x = x if x.__class__ is DA else upload(x)
        if dev.mode != "sink":
            dev.host_t += dev._host_op
        return DA(compute(x.data), x.addr, 0, pool, "ND", x.base or x)
    return run


def transdata_task(dev, m: Meta, to_nz: bool, first: bool = False):
    """Account one TransData kernel of a value of type m (the caller re-lays the bytes)."""
    p = dev.profile
    nd, nz = _nbytes(m), nz_bytes(m)
    dev.task("TransData", cost.transdata(p, nd, nz), cost.VECTOR, nd + nz, 0.0, first=first)
    dev.counts["transdata"] += 1


_ROUNDING = {"Float16": (13, 65504.0), "BFloat16": (16, 3.3895313892515355e38)}


def round_to(a: np.ndarray, d) -> np.ndarray:
    """float32 `a` rounded (to nearest even) to the precision of dtype `d`, kept in float32: what
    the Cube reads. Integer arithmetic on the bits (numpy's float16 cast costs ~27 ns an
    element); elements outside d's finite range, NaN included, take numpy's exact cast."""
    drop, top = _ROUNDING[d.name]
    a = np.ascontiguousarray(a, np.float32)
    u = a.view(np.uint32)
    half = np.uint32((1 << (drop - 1)) - 1)
    r = ((u + (half + ((u >> np.uint32(drop)) & np.uint32(1)))) &
         np.uint32((0xFFFFFFFF >> drop) << drop)).view(np.float32)
    bad = ~(np.abs(a) <= top)
    if bad.any():
        with np.errstate(over="ignore"):            # overflow to inf is the point
            r[bad] = a[bad].astype(d.np).astype(np.float32)
    if d.name == "Float16":             # below float16's normal range its spacing is 2^-24
        tiny = np.abs(a) < 6.103515625e-05
        if tiny.any():
            r[tiny] = a[tiny].astype(np.float16).astype(np.float32)
    return r


def cube_compute(in_metas, attrs, out_meta, cube_dtype):
    """The Cube's arithmetic on ND operands: cast to the Cube's input dtype, multiply with fp32
    accumulation, cast the result to the output dtype."""
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    odt = out_meta.dtype.np
    float_in = all(m.dtype.is_float for m in in_metas)
    if not float_in:
        acc = odt

    def compute(a, b):
        if float_in:
            if cube_dtype is not None:
                a, b = round_to(a, cube_dtype), round_to(b, cube_dtype)
            else:
                a, b = a.astype(np.float32), b.astype(np.float32)
        else:
            a, b = a.astype(acc), b.astype(acc)
        r = np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
        return np.ascontiguousarray(r.astype(odt))
    return compute


def cube_cost(p, in_metas, attrs, out_meta, cube_dtype):
    a, b = in_metas
    *batch, m, n = out_meta.shape
    k = a.shape[-2] if attrs["transpose_a"] else a.shape[-1]
    fp32 = cube_dtype is None and all(x.dtype is dt.float32 for x in in_metas)
    itemsize = 4 if fp32 else 2
    return cost.cube(p, size_of(tuple(batch)), m, n, k, itemsize, out_meta.dtype.itemsize, fp32)


def eager_matmul(dev, in_metas, attrs, out_meta, cube_dtype):
    """PyNative matmul: TransData ND->NZ on both operands, the Cube on NZ, TransData NZ->ND on
    the result; each re-layout is real and its buffer lives in the pool while it is needed."""
    compute = cube_compute(in_metas, attrs, out_meta, cube_dtype)
    dur, nbytes, flops = cube_cost(dev.profile, in_metas, attrs, out_meta, cube_dtype)
    pool, upload, DA = dev.pool, dev.upload, DeviceArray
    ma, mb = in_metas
    out_size = _nbytes(out_meta)

    def run(a, b):
        a = a if a.__class__ is DA else upload(a)
        b = b if b.__class__ is DA else upload(b)
        out = pool.alloc(out_size, "the output of matmul")
        tmp = []
        try:
            for m in (ma, mb, out_meta):      # NZ workspaces for the operands and the result
                tmp.append(pool.alloc(nz_bytes(m), "a FRACTAL_NZ workspace of matmul"))
            a_nz, b_nz = nd_to_nz(a.data), nd_to_nz(b.data)
            transdata_task(dev, ma, True, first=True)
            transdata_task(dev, mb, True)
            r_nz = nd_to_nz(compute(nz_to_nd(a_nz, ma.shape), nz_to_nd(b_nz, mb.shape)))
            dev.task("MatMul", dur, cost.CUBE, nbytes, flops, first=False)
            r = nz_to_nd(r_nz, out_meta.shape)
            transdata_task(dev, out_meta, False)
        except BaseException:
            pool.free(*out)
            raise
        finally:
            for blk in tmp:
                pool.free(*blk)
        return DA(r, out[0], out[1], pool)
    return run


def graph_matmul(dev, in_metas, attrs, out_meta, cube_dtype, out_nz: bool):
    """Graph-mode matmul: operands arrive in FRACTAL_NZ (the format pass inserted TransData
    nodes where needed); the result stays NZ unless a consumer the pass could not serve in NZ
    needs it in ND (then the kernel re-lays it itself, one more TransData task)."""
    compute = cube_compute(in_metas, attrs, out_meta, cube_dtype)
    dur, nbytes, flops = cube_cost(dev.profile, in_metas, attrs, out_meta, cube_dtype)
    ma, mb = in_metas
    shape = out_meta.shape

    if out_nz:
        def nz(a, b):
            return nd_to_nz(compute(nz_to_nd(a, ma.shape), nz_to_nd(b, mb.shape)))
        return launcher(dev, "MatMul", nz, dur, cost.CUBE, nbytes, flops, out_meta, "NZ",
                        arity=2)
    run = launcher(dev, "MatMul", lambda a, b: nd_to_nz(compute(
        nz_to_nd(a, ma.shape), nz_to_nd(b, mb.shape))), dur, cost.CUBE, nbytes, flops, out_meta,
        arity=2)

    def nd(a, b):                      # result re-laid to ND by the kernel: one more TransData
        r = run(a, b)
        r.data = nz_to_nd(r.data, shape)
        transdata_task(dev, out_meta, False)
        return r
    return nd


CONV_CUBE_OPS = ("conv2d", "conv2d_backprop_input", "conv2d_backprop_filter")


def conv_cube(backend, op, in_metas, attrs, out_meta):
    """conv2d and its two adjoints are Cube ops: im2col matmuls with operands rounded to the
    Cube's input dtype (fp16 by default) and fp32 accumulation (the CPU im2col kernel in
    float32); the cost is cost.cube over the im2col dims, one batch entry per group."""
    dev = backend.device
    x = in_metas[0] if op.name != "conv2d_backprop_input" else Meta(tuple(attrs["input_shape"]),
                                                                     out_meta.dtype)
    w = in_metas[1] if op.name != "conv2d_backprop_filter" else Meta(tuple(attrs["filter_shape"]),
                                                                      out_meta.dtype)
    dy = out_meta if op.name == "conv2d" else in_metas[0 if op.name != "conv2d_backprop_filter"
                                                        else 1]
    g = attrs["group"]
    rows = dy.shape[0] * dy.shape[2] * dy.shape[3]                # N * Ho * Wo
    kdim = (x.shape[1] // g) * w.shape[2] * w.shape[3]            # C_in / group * kh * kw
    cout = w.shape[0] // g
    m, n, k = {"conv2d": (rows, cout, kdim), "conv2d_backprop_input": (rows, kdim, cout),
               "conv2d_backprop_filter": (cout, kdim, rows)}[op.name]
    cube_dtype = backend.cube_dtype
    fp32 = cube_dtype is None and all(t.dtype is dt.float32 for t in in_metas)
    dur, nbytes, flops = cost.cube(dev.profile, g, m, n, k, 4 if fp32 else 2,
                                   out_meta.dtype.itemsize, fp32)
    f32 = tuple(Meta(t.shape, dt.float32) for t in in_metas)
    cpu = backend.cpu.kernel(op, f32, attrs, Meta(out_meta.shape, dt.float32))
    odt = out_meta.dtype.np

    def compute(a, b):
        if cube_dtype is not None:
            a, b = round_to(a, cube_dtype), round_to(b, cube_dtype)
        return np.ascontiguousarray(cpu(a.astype(np.float32), b.astype(np.float32)), odt)
    return launcher(dev, op.name, compute, dur, cost.CUBE, nbytes, flops, out_meta, arity=2)


def build(backend, op, in_metas: tuple, attrs: dict, out_meta):
    """The eager (and kernel-by-kernel) kernel of one primitive on the device."""
    dev = backend.device
    check_dtypes(op.name, in_metas, out_meta)
    if getattr(op, "collective", False):    # HCCL on the communication stream (collectives.py)
        return op.host_kernel(backend, in_metas, attrs, out_meta)
    if op.name == "matmul":
        return eager_matmul(dev, in_metas, attrs, out_meta, backend.cube_dtype)
    if op.name in CONV_CUBE_OPS:
        return conv_cube(backend, op, in_metas, attrs, out_meta)
    compute = backend.cpu.kernel(op, in_metas, attrs, out_meta)
    if op.name in VIEW_OPS:
        return view_kernel(dev, op.name, compute)
    expr = None
    if op.kind == ELEMENTWISE and op.scalar is not None:
        expr = E.build(lambda *xs: op.scalar(*xs, **attrs), op.arity)
    dur, unit, nbytes, flops = op_cost(dev.profile, op, in_metas, out_meta, expr)
    return launcher(dev, op.name, compute, dur, unit, nbytes, flops, out_meta, arity=len(in_metas))


def fused(backend, expr, in_metas: tuple, out_meta: Meta, phys_in=None, phys_out=None,
          out_fmt="ND", reduce=None):
    """A fused elementwise group: one Vector kernel that reads its inputs and writes its output
    once (UB fusion), folding the values when the group ends in a reduction (`reduce`, an
    ir.Reduction: the loop runs over reduce.shape). phys_*: the buffers' physical types when it
    runs on FRACTAL_NZ data."""
    dev = backend.device
    check_dtypes("fused", in_metas, out_meta)
    pin, pout = phys_in or in_metas, phys_out or out_meta
    if reduce is not None:
        compute = backend.cpu.fused_kernel(expr, pin, pout, reduce)
        n = size_of(reduce.shape)
        ops = cost.expr_ops(expr) + 1                       # + the fold
        in_b, out_b = sum(_nbytes(m) for m in pin), _nbytes(pout)
        dur = cost.vector(dev.profile, n, in_b, out_b, ops, pout.dtype.itemsize)
        return launcher(dev, "Fused", compute, dur, cost.VECTOR, in_b + out_b, float(n * ops),
                        pout, arity=len(pin))
    compute = backend.cpu.fused_kernel(expr, pin, pout)
    dur, unit, nbytes, flops = op_cost(dev.profile, "fused", pin, pout, expr)
    return launcher(dev, "Fused", compute, dur, unit, nbytes, flops, pout, out_fmt,
                    arity=len(in_metas))


def elementwise_nz(backend, op, attrs, phys_in: tuple, phys_out: Meta):
    """An elementwise primitive on FRACTAL_NZ buffers: the same template over the padded
    fractal layout (every same-shape operand is NZ, the others are scalars)."""
    dev = backend.device
    check_dtypes(op.name, phys_in, phys_out)
    compute = backend.cpu.kernel(op, phys_in, attrs, phys_out)
    expr = E.build(lambda *xs: op.scalar(*xs, **attrs), op.arity) if op.scalar else None
    dur, unit, nbytes, flops = op_cost(dev.profile, op, phys_in, phys_out, expr)
    return launcher(dev, op.name, compute, dur, unit, nbytes, flops, phys_out, "NZ",
                    arity=len(phys_in))


def transdata_kernel(dev, m: Meta, to_nz: bool):
    """A TransData node of the graph: re-lays a value between ND and FRACTAL_NZ."""
    p = dev.profile
    nd, nz = _nbytes(m), nz_bytes(m)
    dur = cost.transdata(p, nd, nz)
    shape = m.shape
    compute = nd_to_nz if to_nz else (lambda a: nz_to_nd(a, shape))
    run = launcher(dev, "TransData", compute, dur, cost.VECTOR, nd + nz, 0.0, m,
                   "NZ" if to_nz else "ND", arity=1)

    def counted(x):
        dev.counts["transdata"] += 1
        return run(x)
    return counted
