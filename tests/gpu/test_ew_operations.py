"""The GPU backend's generated CUDA C without a GPU, part two: the bodies of its eager
elementwise kernels (cupy.ElementwiseKernel, from cuda_codegen.ew_operation) and the compiler
CuPy really uses.

- Every elementwise primitive over every dtype its OpCase runs (float16 and bfloat16 included),
  wrapped as CuPy binds it (cuda_host.ew_harness), compiles to PTX for sm_90 with nvcc and with
  NVRTC from the nvidia-cuda-nvrtc-cu12 wheel (NVRTC has no system headers: no cuda_fp16.h, no
  INFINITY), each skipped with the reason when absent.
- The same source run on the host through cuda_host_shim.h matches the op's numpy reference on
  the op database's own sample values.
- The raw (fused-group) kernels of every template, half types included, compile under NVRTC too.
A check of the generator, never a backend."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from minispore.backends.gpu import cuda_codegen, cuda_source
from minispore.core import dtype as dt
from minispore.core import scalar_expr
from minispore.core.primitive import ELEMENTWISE, REGISTRY, primitives
from minispore.core.shape import broadcast_shapes

from cuda_host import HostModule, compile_ptx, cupy_nvrtc_setup, ew_harness, ptx_compilers
from helpers import assert_close, forward_tol
from opdb import OPDB, rng_for


def _storage(a: np.ndarray) -> np.ndarray:
    """What the GPU backend keeps: 16-bit floats as their bits."""
    half = a.dtype == np.float16 or a.dtype.name == "bfloat16"
    return a.view(np.uint16) if half else a


def _cases():
    """(label, EwOperation, flat inputs, reference output) per elementwise op x OpCase dtype x
    attribute set: every sample of the OpCase broadcast, flattened and concatenated."""
    out = []
    for name, op in sorted(REGISTRY.items()):
        if op.kind != ELEMENTWISE or op.scalar is None:
            continue
        case = OPDB[name]
        for d in case.dtypes:
            groups: dict = {}
            for s in case.samples(rng_for("ew_operations", name, str(d)), d):
                key = tuple(sorted(s.attrs.items()))
                shape = broadcast_shapes(name, *(np.shape(a) for a in s.args))
                if not int(np.prod(shape)):
                    continue
                flat = [np.broadcast_to(np.asarray(a), shape).reshape(-1) for a in s.args]
                full = dict(op.attrs, **s.attrs)
                want = np.asarray(op.ref(*[np.asarray(a) for a in s.args], **full)).reshape(-1)
                groups.setdefault(key, []).append((flat, want))
            for key, parts in groups.items():
                xs = [np.concatenate([p[0][j] for p in parts]) for j in range(op.arity)]
                want = np.concatenate([p[1] for p in parts])
                ew = cuda_codegen.ew_operation(op, [x.dtype for x in xs], dict(key))
                out.append((f"{name}{dict(key) or ''} {d}", ew, xs, want))
    return out


CASES = _cases()


def test_every_template_and_opdb_dtype_has_an_operation():
    names = {label.split("{")[0].split(" ")[0] for label, *_ in CASES}
    assert names == {op.name for op in primitives() if op.kind == ELEMENTWISE}
    labels = [label for label, *_ in CASES]
    assert any("BFloat16" in s for s in labels) and any("Float16" in s for s in labels)
    ew = cuda_codegen.ew_operation(REGISTRY["add"], (dt.float16, dt.float16))
    assert ew.in_params == "uint16 a0, uint16 a1" and ew.out_params == "uint16 y"
    assert "ms_h2f(a0)" in ew.operation and ew.operation.endswith(";")
    again = cuda_codegen.ew_operation(REGISTRY["add"], (dt.float16, dt.float16))
    assert again == ew   # deterministic


def _compilers():
    return [pytest.param(c, id=c[0]) for c in ptx_compilers()] or [
        pytest.param(None, marks=pytest.mark.skip(
            reason="neither nvcc nor the nvidia-cuda-nvrtc-cu12 wheel is available"))]


@pytest.mark.nvcc
@pytest.mark.parametrize("compiler", _compilers())
def test_every_elementwise_operation_compiles_to_ptx(compiler, tmp_path):
    kernels = [ew_harness(ew, xs[0].size) for _, ew, xs, _ in CASES]
    ptx = compile_ptx(kernels, tmp_path, compiler)
    missing = [k.name for k in kernels if f".entry {k.name}(" not in ptx]
    assert not missing, missing


@pytest.mark.nvcc
def test_every_elementwise_operation_compiles_under_cupys_headers(tmp_path):
    """As cupy.ElementwiseKernel compiles them: CuPy's headers (carray.cuh, complex.cuh...)
    before the preamble, its NVRTC options (-ftz=true, C++17, its include dirs): no macro or
    name of the preamble clashes with CuPy's. Every template over every dtype, CuPy's parse of
    the parameter lists too."""
    setup = cupy_nvrtc_setup()
    nvrtc = [c for c in ptx_compilers() if c[0] == "nvrtc"]
    if setup is None or not nvrtc:
        pytest.skip("needs cupy (it imports without a GPU) and the nvidia-cuda-nvrtc wheel")
    import cupy
    ops = {}
    names = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
             "float32", "float64")
    for name, op in sorted(REGISTRY.items()):
        if op.kind != ELEMENTWISE or op.scalar is None:
            continue
        for d in names:
            try:
                ew = cuda_codegen.ew_operation(
                    op, ("bool", d, d) if name == "where" else (d,) * op.arity)
            except Exception:             # the op refuses this dtype (its DTypeError)
                continue
            k = cupy.ElementwiseKernel(ew.in_params, ew.out_params, ew.operation, ew.name,
                                       preamble=cuda_source.PREAMBLE)
            assert k.nin == op.arity and k.nout == 1
            ops[ew.name] = ew
    kernels = [ew_harness(ew, 8) for ew in ops.values()]
    ptx = compile_ptx(kernels, tmp_path, nvrtc[0], *setup)
    missing = [k.name for k in kernels if f".entry {k.name}(" not in ptx]
    assert not missing, missing


@pytest.mark.nvcc
@pytest.mark.parametrize("compiler", _compilers())
def test_raw_kernels_with_half_types_compile(compiler, tmp_path):
    """The raw kernels (what fused groups become), every template, 16-bit floats included."""
    kernels = []
    for name, op in sorted(REGISTRY.items()):
        if op.kind != ELEMENTWISE or op.composite is not None:
            continue
        for d in ("float32", "float16", "bfloat16", "int32", "bool"):
            ins = ("bool", d, d) if name == "where" else (d,) * op.arity
            try:
                kernels.append(cuda_codegen.elementwise_kernel(op, ins, [(3, 4)] * op.arity))
            except Exception:            # the op refuses this dtype (its DTypeError)
                continue
    red = type("R", (), {"kind": "sum", "axes": (1,), "shape": (3, 4), "keep_dims": False})
    for d in ("float16", "bfloat16"):
        kernels.append(cuda_codegen.fused_kernel(scalar_expr.arg(0) * 2.0, (d,), ((3, 4),), d, (3,),
                                                 red))
    ptx = compile_ptx(kernels, tmp_path, compiler)
    missing = [k.name for k in kernels if f".entry {k.name}(" not in ptx]
    assert not missing, missing


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    return HostModule([ew_harness(ew, xs[0].size) for _, ew, xs, _ in CASES],
                      tmp_path_factory.mktemp("host_ew_ops"))


def test_every_elementwise_operation_matches_its_reference_on_the_host(host):
    bad = []
    for label, ew, xs, want in CASES:
        k = ew_harness(ew, xs[0].size)
        out = np.empty(want.shape, want.dtype)
        host.run(k, [_storage(np.ascontiguousarray(x)) for x in xs], _storage(out), block=1)
        d = dt.to_dtype(want.dtype)
        rtol, atol = forward_tol(d, False, OPDB[label.split("{")[0].split(" ")[0]].tol)
        try:
            assert_close(out, want, rtol, atol, label)
        except AssertionError as e:
            bad.append(str(e).splitlines()[0])
    assert not bad, "\n".join(bad)


def test_half_conversions_round_to_nearest_even(tmp_path):
    """float32 -> float16 / bfloat16 stores numpy's / ml_dtypes' bits (ties to even, NaN stays
    NaN, overflow to inf), and loading them back is exact."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    import ml_dtypes
    x = np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 65519.0, 65520.0, -0.0, np.nan, np.inf,
                  1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 3.0e38, 1e-8, -2.5e-6], np.float32)
    n = x.size
    down = {t: cuda_codegen.fused_kernel(scalar_expr.arg(0), ("float32",), ((n,),), t, (n,))
            for t in ("float16", "bfloat16")}
    up = {t: cuda_codegen.fused_kernel(scalar_expr.arg(0), (t,), ((n,),), "float32", (n,))
          for t in ("float16", "bfloat16")}
    mod = HostModule(list(down.values()) + list(up.values()), tmp_path)
    for t, np_t in (("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16)):
        with np.errstate(over="ignore"):
            want = x.astype(np_t)
        got = np.empty(n, np_t)
        mod.run(down[t], [x], _storage(got))
        np.testing.assert_array_equal(_storage(got)[~np.isnan(x)], _storage(want)[~np.isnan(x)])
        assert np.isnan(got.astype(np.float32)[np.isnan(x)]).all()
        back = np.empty(n, np.float32)
        mod.run(up[t], [_storage(want)], back)
        np.testing.assert_array_equal(back, want.astype(np.float32))
