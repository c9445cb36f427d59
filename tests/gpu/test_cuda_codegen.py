"""The CUDA source generator (minispore/backends/gpu/cuda_codegen.py) without a GPU: every
elementwise template and every fused group of the golden graphs (the MLP training step at O1/O2,
the fusion chain, a CNN block's fused parts) compiles to PTX for sm_90 with the expected entry
names (nvcc, or NVRTC from the nvidia-cuda-nvrtc-cu12 wheel if importable; skipped otherwise),
and the same CUDA C compiled for the host through cuda_host_shim.h matches the numpy references
(REGISTRY[name].ref for primitives; PyNative and a numpy evaluation of the group's expression for
fused groups). One compiler call per batch of kernels keeps this fast."""
from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, ops
from minispore.backends.gpu import cuda_codegen
from minispore.core import dtype as dt
from minispore.core import scalar_expr
from minispore.core.errors import DTypeError
from minispore.core.graph import compile as graph_compile
from minispore.core.graph import ir
from minispore.core.primitive import ELEMENTWISE, REGISTRY

from cuda_host import HostModule, compile_ptx, eval_expr, ptx_compiler

DTYPES = ("float32", "float64", "float16", "int32", "int64", "bool", "uint32", "uint64")
# (input shapes per arity) rotated over ops and dtypes: same shape, broadcasting, 0-d
SHAPES = (((3, 5), (3, 5), (3, 5)), ((4, 1), (3,), (1, 3)), ((), (), ()),
          ((2, 3, 4), (1, 3, 1), (4,)))
TOL = {"float32": (2e-6, 1e-6), "float64": (1e-13, 1e-14), "float16": (1e-3, 1e-4)}


def _ew_ops():
    return [op for op in REGISTRY.values() if op.kind == ELEMENTWISE and op.scalar is not None]


def _ew_cases():
    """(op, attrs, in dtypes, in shapes, kernel): every template over every dtype it accepts."""
    cases = []
    for i, op in enumerate(_ew_ops()):
        variants = [{}] + ([{"approximate": "tanh"}] if op.name == "gelu" else [])
        for j, d in enumerate(DTYPES):
            ins = (("bool", d, d) if op.name == "where" else (d,) * op.arity)
            try:
                op.compute(tuple(dt.to_dtype(x) for x in ins))
            except DTypeError:
                continue
            shapes = SHAPES[(i + j) % len(SHAPES)][:op.arity]
            for attrs in variants:
                k = cuda_codegen.elementwise_kernel(op, ins, shapes, attrs)
                cases.append((op, attrs, ins, shapes, k))
    for name, d in (("maximum", "float32"), ("minimum", "float32"), ("floor_div", "int32"),
                    ("mod", "int32")):           # 0-d kernels for the edge-case test below
        op = REGISTRY[name]
        cases.append((op, {}, (d, d), ((), ()),
                      cuda_codegen.elementwise_kernel(op, (d, d), ((), ()))))
    return cases


CASES = _ew_cases()
R = np.random.default_rng(3)


def _data(op, j, d, shape):
    if d == "bool":
        return R.random(shape) < 0.5
    if d.startswith("uint"):               # the top values wrap and order unsigned
        if op in ("left_shift", "right_shift", "pow") and j == 1:
            return R.integers(0, 6 if op == "pow" else 40, shape).astype(d)
        top = int(np.iinfo(d).max)
        return R.choice(np.array([0, 1, 7, 40, top, top - 1, top // 2 + 1], d), shape)
    if d.startswith("int"):
        if op in ("left_shift", "right_shift") and j == 1:
            return R.integers(0, 40, shape).astype(d)
        if op == "pow" and j == 1:
            return R.integers(0, 6, shape).astype(d)
        return R.integers(-20, 20, shape).astype(d)
    x = (R.standard_normal(shape) * 3).astype(d)
    if x.ndim and x.size > 4 and op not in ("pow",):
        x.flat[:4] = np.array([np.nan, np.inf, -0.0, 0.0] if j == 0 else
                              [1.0, np.nan, -np.inf, 2.5], dtype=d)
    return x


# ----------------------------------------------------------------------- golden fused groups
from golden_models import MLP, TrainStep, chain  # noqa: E402  (tests/ is on sys.path)


def cnn_block(x, w, b):
    y = ops.relu(ops.conv2d(x, w) + b.reshape(1, -1, 1, 1))
    return ops.max_pool2d(y, 2, 2)


CONSTS: dict = {}         # id(Value) -> array of the golden graphs' CONST nodes


def _fused_nodes(run, level):
    graph_compile.clear_cache()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level=level)
    try:
        keep = run()        # a Cell's compiled graph is forgotten when the Cell goes
        every = [n for e in graph_compile.cache.entries() for n in e.graph.all_nodes()]
        nodes = [n for n in every if n.op == ir.FUSED]
        CONSTS.update((id(n.outputs[0]), n.attr("value")) for n in every if n.op == ir.CONST)
        del keep
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
        graph_compile.clear_cache()
    return nodes


def _golden():
    """(label, FUSED node) of every golden graph."""
    x = Tensor(np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32))
    y = Tensor(np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]])
    xc = Tensor(np.linspace(-4, 4, 1000, dtype=np.float32))
    r = np.random.default_rng(2)
    img = Tensor(r.standard_normal((2, 3, 8, 8)).astype(np.float32))
    w = Tensor((r.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32))
    b = Tensor(r.standard_normal(4).astype(np.float32))
    def mlp_step():
        step = TrainStep(MLP())
        return step, step(x, y)
    runs = {"mlp": mlp_step, "chain": lambda: ms.jit(chain)(xc),
            "cnn": lambda: ms.jit(cnn_block)(img, w, b)}
    out = []
    for label, run in runs.items():
        for level in ("O1", "O2"):
            nodes = _fused_nodes(run, level)
            assert nodes, f"{label} at {level} has no fused group"
            out += [(f"{label}-{level}", n) for n in nodes]
    return out


@pytest.fixture(scope="module")
def golden():
    return [(label, n, cuda_codegen.node_kernel(n), cuda_codegen.node_kernel(n, block=16))
            for label, n in _golden()]


# ----------------------------------------------------------------------------------- tests
def test_generator_imports_no_cupy_and_names_are_content_hashed():
    import subprocess       # a fresh process: this one may have probed the GPU (imports cupy)
    code = ("import sys; import minispore.backends.gpu.cuda_codegen, "
            "minispore.backends.gpu.cuda_source, minispore.backends.gpu.cuda_softmax; "
            "print('cupy' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr
    op = REGISTRY["add"]
    a = cuda_codegen.elementwise_kernel(op, ("float32", "float32"), ((3, 4), (4,)))
    b = cuda_codegen.elementwise_kernel(op, ("float32", "float32"), ((3, 4), (4,)))
    c = cuda_codegen.elementwise_kernel(op, ("float32", "float32"), ((3, 4), (3, 1)))
    assert a == b and a.name != c.name and a.name.startswith("ms_add_")
    assert 'extern "C" __global__ void ' + a.name in a.source()


def _ptx_or_skip():
    if ptx_compiler() is None:
        pytest.skip("neither nvcc nor the nvidia-cuda-nvrtc-cu12 wheel is available")


@pytest.mark.nvcc
def test_every_elementwise_template_compiles_to_ptx(tmp_path):
    _ptx_or_skip()
    kernels = [c[-1] for c in CASES]
    ptx = compile_ptx(kernels, tmp_path)
    assert ".target sm_90" in ptx
    missing = [k.name for k in kernels if f".entry {k.name}(" not in ptx]
    assert not missing, missing
    assert {c[0].name for c in CASES} == {op.name for op in _ew_ops()}


@pytest.mark.nvcc
def test_every_golden_fused_group_compiles_to_ptx(golden, tmp_path):
    _ptx_or_skip()
    kernels = [k for *_, k, k16 in golden] + [k16 for *_, k16 in golden]
    ptx = compile_ptx(kernels, tmp_path)
    missing = [k.name for k in kernels if f".entry {k.name}(" not in ptx]
    assert not missing, missing


@pytest.fixture(scope="module")
def host_ew(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    return HostModule([c[-1] for c in CASES], tmp_path_factory.mktemp("host_ew"))


def test_every_elementwise_template_matches_its_reference_on_the_host(host_ew):
    bad = []
    for op, attrs, ins, shapes, k in CASES:
        xs = [_data(op.name, j, d, s) for j, (d, s) in enumerate(zip(ins, shapes))]
        want = np.asarray(op.ref(*xs, **dict(op.attrs, **attrs)))
        got = host_ew.run(k, xs, np.empty(want.shape, want.dtype), grid=3, block=1)
        if want.dtype.kind == "f":
            rtol, atol = TOL[want.dtype.name]
            ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.array_equal(got, want)
        if not ok:
            bad.append(f"{op.name}{attrs} {ins} {shapes}: got {got.ravel()[:6]} "
                       f"want {want.ravel()[:6]}")
    assert not bad, "\n".join(bad)


def test_nan_propagation_and_integer_semantics_follow_numpy(host_ew):
    def run(name, *xs):
        op = REGISTRY[name]
        k = next(c[-1] for c in CASES if c[0] is op and c[2][-1] == xs[-1].dtype.name
                 and all(s == () for s in c[3]))
        want = op.ref(*xs)
        return host_ew.run(k, xs, np.empty(want.shape, want.dtype)), want
    nan, one = np.float32(np.nan), np.float32(1)
    for name in ("maximum", "minimum"):
        for a, b in ((nan, one), (one, nan)):
            got, want = run(name, np.array(a), np.array(b))
            assert np.isnan(got) and np.isnan(want)
    for a, b in ((-7, 2), (7, -2), (-7, 0), (np.iinfo(np.int32).min, -1)):
        for name in ("floor_div", "mod"):
            got, want = run(name, np.array(a, np.int32), np.array(b, np.int32))
            assert got == want, (name, a, b, got, want)


def _group_inputs(n):
    r = np.random.default_rng(5)
    return [CONSTS[id(v)] if id(v) in CONSTS else
            (r.standard_normal(v.shape) * 2).astype(v.dtype.np) for v in n.inputs]


def _group_ref(n, xs):
    red, out = n.attr("reduce"), n.outputs[0]
    shape = red.shape if red is not None else out.shape
    v = np.broadcast_to(eval_expr(n.attr("expr"), xs, out.dtype.np), shape).astype(out.dtype.np)
    if red is None:
        return v
    f = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[red.kind]
    acc = np.float64 if red.kind in ("sum", "mean") else v.dtype
    return np.asarray(f(v.astype(acc), axis=red.axes, keepdims=red.keep_dims)).astype(v.dtype)


def test_golden_fused_groups_match_numpy_on_the_host(golden, tmp_path):
    mod = HostModule([k for *_, k, _ in golden] + [k16 for *_, k16 in golden], tmp_path)
    kinds = set()
    for label, n, k, k16 in golden:
        xs = _group_inputs(n)
        want = _group_ref(n, xs)
        red = n.attr("reduce")
        kinds.add(red.kind if red is not None else "elementwise")
        for kern, block in ((k, 1 if red is None else k.block), (k16, 1 if red is None else 16)):
            got = mod.run(kern, xs, np.empty(want.shape, want.dtype), block=block)
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6,
                                       err_msg=f"{label}: {n.attr('members')}")
    assert {"elementwise", "sum"} <= kinds


def test_the_fused_chain_kernel_matches_pynative(golden, tmp_path):
    (n,) = {id(n): n for label, n, *_ in golden if label == "chain-O1"}.values()
    x = np.linspace(-4, 4, 1000, dtype=np.float32)
    eager = chain(Tensor(x)).asnumpy()
    k = cuda_codegen.node_kernel(n)
    xs = [CONSTS.get(id(v), x) for v in n.inputs]        # the scale constants are inputs too
    assert sum(a is x for a in xs) == 1
    got = HostModule([k], tmp_path).run(k, xs, np.empty_like(eager))
    np.testing.assert_allclose(got, eager, rtol=2e-6, atol=1e-6)


def _misaligned(a, by=1):
    """A C-contiguous copy of `a` whose data starts `by` elements past a 64-byte boundary."""
    base = np.empty(a.size + 16, a.dtype)
    skip = (-base.ctypes.data % 64) // a.itemsize + by
    v = base[skip:skip + a.size].reshape(a.shape)
    v[...] = a
    return v


def test_vector_and_scalar_paths_of_an_elementwise_kernel_agree(tmp_path):
    """Elementwise kernels step through VEC elements per thread with vector loads when every
    full-shape pointer is aligned, element by element otherwise, and finish a tail of fewer
    than VEC elements element by element: all three give the same bits."""
    x0, x1 = scalar_expr.arg(0), scalar_expr.arg(1)
    n = 4 * 250 + 3
    e = scalar_expr.tanh(x0 * 1.5 + 0.3) * scalar_expr.sigmoid(x1) - x0 * x0 / 3
    k = cuda_codegen.fused_kernel(e, ("float32", "float16"), ((n,), (1,)), "float32", (n,))
    kb = cuda_codegen.fused_kernel(e, ("float32", "float16"), ((7, n), (7, 1)), "float32", (7, n))
    assert "ms_vec<float>" in k.body and "ms_vec<unsigned short>" not in k.body  # (1,) is scalar
    mod = HostModule([k, kb], tmp_path)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    h = np.array([0.75], np.float16).view(np.uint16)
    want = np.tanh(a * np.float32(1.5) + np.float32(0.3)) * (1 / (1 + np.exp(-0.75))) - a * a / 3
    outs = {}
    for label, ai, out in (("aligned", a, np.empty(n, np.float32)),
                           ("input misaligned", _misaligned(a), np.empty(n, np.float32)),
                           ("output misaligned", a, _misaligned(np.empty(n, np.float32), 2))):
        for grid in (1, 3, k.grid):
            outs[label, grid] = mod.run(k, [ai, h], out, grid=grid, block=4).copy()
    first = outs["aligned", 1]
    np.testing.assert_allclose(first, want, rtol=2e-6, atol=1e-6)
    for key, got in outs.items():
        np.testing.assert_array_equal(got.view(np.uint32), first.view(np.uint32), err_msg=key)
    # a broadcast input (read at decoded offsets) beside a vector-loaded one
    a2 = rng.standard_normal((7, n)).astype(np.float32)
    h2 = rng.standard_normal((7, 1)).astype(np.float16)
    got = mod.run(kb, [a2, h2.view(np.uint16)], np.empty((7, n), np.float32), grid=5, block=8)
    got_scalar = mod.run(kb, [_misaligned(a2), h2.view(np.uint16)], np.empty((7, n), np.float32),
                         grid=5, block=8)
    np.testing.assert_array_equal(got, got_scalar)
    hf = h2.astype(np.float32)
    np.testing.assert_allclose(got, np.tanh(a2 * 1.5 + 0.3) / (1 + np.exp(-hf)) - a2 * a2 / 3,
                               rtol=2e-6, atol=1e-6)


def test_elementwise_index_width_follows_the_size():
    """32-bit indices (cheaper division for broadcast offsets) unless an index could pass 2^31."""
    x = scalar_expr.arg(0)
    small = cuda_codegen.fused_kernel(x * 2.0, ("float32",), ((1 << 20,),), "float32", (1 << 20,))
    large = cuda_codegen.fused_kernel(x * 2.0, ("float32",), ((1 << 31,),), "float32", (1 << 31,))
    assert "for (int v = start" in small.body and "long long i" not in small.body
    assert "for (long long v = start" in large.body and "2147483648LL" in large.body


# ------------------------------------------------------- the GEMM of captured graphs (no cuBLAS)
GEMMS = [("float32", 1, 5, 7, 3), ("float64", 3, 17, 33, 18), ("float32", 2, 40, 1, 20),
         ("float32", 1, 16, 16, 16), ("float32", 4, 128, 64, 10), ("float64", 1, 1, 2, 1)]


@pytest.mark.nvcc
def test_gemm_kernels_compile_to_ptx(tmp_path):
    _ptx_or_skip()
    kernels = [cuda_codegen.gemm_kernel(*g) for g in GEMMS]
    ptx = compile_ptx(kernels, tmp_path)
    missing = [k.name for k in kernels if f".entry {k.name}(" not in ptx]
    assert not missing, missing


def test_gemm_kernel_matches_numpy_on_the_host(tmp_path):
    """Tiles that do not divide the shapes, several batches, any grid (grid-stride over tiles):
    the block's threads really run in lockstep through the shim's __syncthreads barrier."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    kernels = [cuda_codegen.gemm_kernel(*g) for g in GEMMS]
    mod = HostModule(kernels, tmp_path)
    r = np.random.default_rng(7)
    for (d, b, m, k, n), kern in zip(GEMMS, kernels):
        assert kern.block == cuda_codegen.GEMM_TILE ** 2 and kern.in_ctypes == (kern.out_ctype,) * 2
        a, bb = r.standard_normal((b, m, k)).astype(d), r.standard_normal((b, k, n)).astype(d)
        want = a.astype(np.float64) @ bb.astype(np.float64)
        for grid in (None, 1, 3):
            got = mod.run(kern, [a, bb], np.full((b, m, n), np.nan, d), grid=grid)
            tol = 1e-5 if d == "float32" else 1e-13
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{d} {b, m, k, n}")
    with pytest.raises(NotImplementedError):
        cuda_codegen.gemm_kernel("int32", 1, 2, 2, 2)
