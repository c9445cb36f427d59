"""The random family of backends/cpu/loops/random.py and the protocol nodes it is written with:
uint64 words (u64, wrapping add/mul, xor, logical shifts, unsigned mod and conversions), scalar
arguments, outputs of a declared dtype and libm calls give the same bits rendered by numba and
by LLVM; the eager random kernels and the native lowerings are rendered from the same
definitions; over the op database's samples (and more seeds, shapes and dtypes) PyNative, O2
and the numpy reference agree bit for bit (normal: with the C library's log and cos)."""
import math

import numpy as np
import pytest

import minispore as ms
from minispore.backends.cpu import kernels_random
from minispore.backends.cpu.loops import random as family
from minispore.backends.cpu.loops.builder import definition, f64, i64, libm, u64
from minispore.backends.cpu.native_sink import NativeProgram
from minispore.backends.cpu.render import numba_source
from minispore.core import dtype as dt
from minispore.core.graph import compile as graph_compile
from minispore.core.ops import random as ref
from minispore.core.primitive import REGISTRY
from loops_harness import llvm_run, same_bits
from helpers import as_tuple, run_op
from opdb import CASES, rng_for

RANDOM_OPS = ("random_uniform", "random_normal", "random_randint", "dropout")


@definition
def word_ops(b, dtype: str):
    """Every uint64 node, the scalars and libm: per element, a wrapped product and sum, xor,
    shifts, an unsigned remainder back to int64, the unsigned conversion to float64, and libm's
    log/cos/sqrt of floats in `dtype` (a float32 scalar meeting a float32 load stays float32)."""
    x, f = b.input("x", 1), b.input("f", 1)
    mul, span = b.scalar("mul", "uint64"), b.scalar("span", "uint64")
    low, n = b.scalar("low", "int64"), b.scalar("n", "int64")
    half, gain = b.scalar("half", "float64"), b.scalar("gain", dtype)
    words = b.output("words", (n,), dtype="float64")
    ints = b.output("ints", (n,), dtype="int32")
    maths = b.output("maths", (n,), like=f)
    w = b.var("w", u64(0))
    with b.loop(n, "i") as i:
        b.set(w, u64(x[i]) * mul + u64(i) * u64(0xFFFFFFFFFFFFFFFF))
        b.set(w, w ^ (w >> u64(29)))
        b.store(words, i, f64(w >> u64(11)) * 2.0 ** -53 + half * f64(w))
        b.store(ints, i, i64(w % span) + low)
        v = f[i] * gain
        b.store(maths, i, libm("sqrt", v * v) + libm("log", libm("sqrt", v * v)) +
                libm("cos", v))


def _words_reference(x, mul, span, low, half):
    with np.errstate(over="ignore"):
        w = x.view(np.uint64) * np.uint64(mul) + np.arange(x.size, dtype=np.uint64) * \
            np.uint64(0xFFFFFFFFFFFFFFFF)
        w = w ^ (w >> np.uint64(29))
    words = (w >> np.uint64(11)).astype(np.float64) * 2.0 ** -53 + half * w.astype(np.float64)
    ints = ((w % np.uint64(span)).astype(np.int64) + low).astype(np.int32)
    return words, ints


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_uint64_words_scalars_and_libm_rendered_by_numba_and_by_llvm_give_thesame_bits(
        np_dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(-2 ** 63, 2 ** 63 - 1, 257, dtype=np.int64)
    f = np.concatenate([rng.standard_normal(255) * 4, [np.inf, np.nan]]).astype(np_dtype)
    mul, span, low, half, gain = 0x9E3779B97F4A7C15, 1000003, -77, 0.25, 1.5
    name = np.dtype(np_dtype).name
    kernel = numba_source.module(word_ops, dtype=name).kernel
    with np.errstate(invalid="ignore"):
        eager = kernel(x, f, np.uint64(mul), np.uint64(span), np.int64(low), np.int64(x.size),
                       half, np_dtype(gain))
    native = llvm_run(word_ops, {"dtype": name}, {"x": x, "f": f},
                      {"words": ((x.size,), np.float64), "ints": ((x.size,), np.int32),
                       "maths": ((x.size,), np_dtype)},
                      {"mul": mul, "span": span, "low": low, "n": x.size, "half": half,
                       "gain": gain})
    words, ints = _words_reference(x, mul, span, low, half)
    assert same_bits(eager[0], words) and same_bits(eager[1], ints)
    assert eager[2].dtype == np_dtype and np.isfinite(eager[2]).sum() > 200
    for a, b in zip(eager, native):
        assert same_bits(a, b)


def test_a_uint64_meeting_another_dtype_is_refused():
    """numba computes uint64 + int64 in float64: a definition must convert with u64()."""
    @definition
    def mixed(b):
        x = b.input("x", 1)
        out = b.output("out", x.dims, dtype="float64")
        with b.loop(x.dims[0], "i") as i:
            b.store(out, i, f64(u64(x[i]) + 1))
    x = np.arange(3, dtype=np.int64)
    with pytest.raises(TypeError, match="convert the other operand with u64"):
        llvm_run(mixed, {}, {"x": x}, {"out": ((3,), np.float64)}, {})


def test_eager_random_kernels_and_native_lowerings_render_the_same_definitions():
    defs = (family.uniform, family.normal, family.randint, family.dropout)
    before = {d.name: (d.renders["llvm"], d.renders["numba"]) for d in defs}
    key = np.array([5, 9], np.int64)
    x = np.linspace(-2, 2, 24).reshape(4, 6).astype(np.float32)
    calls = (("random_uniform", (key,), {"shape": (2, 5), "dtype": dt.float32, "seed": 1}),
             ("random_normal", (key,), {"shape": (7,), "dtype": dt.float64, "seed": 2}),
             ("random_randint", (key,), {"shape": (3, 3), "dtype": dt.int32, "seed": 3,
                                         "low": -5, "high": 50}),
             ("dropout", (x, key), {"keep_prob": 0.75, "seed": 4}))
    for d, (name, args, attrs) in zip(defs, calls):
        ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O0")
        eager = [t.asnumpy() for t in as_tuple(run_op(name, args, attrs))]
        ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
        native = [t.asnumpy() for t in as_tuple(run_op(name, args, attrs))]
        assert isinstance(graph_compile.last_compiled().program, NativeProgram), name
        assert d.renders["llvm"] > before[d.name][0], name
        for a, b in zip(eager, native):
            assert same_bits(a, b), name
    # the eager kernels are the numba renderings of the same definitions (built once per
    # process, on first use; the LLVM renderer builds none)
    built = {key[0] for key in numba_source._modules}
    assert all(d.name in built and d.renders["numba"] >= 1 for d in defs)
    mod = numba_source.module(family.dropout, dtype="float32")
    assert mod.DEFINITION == family.dropout.name and "def kernel(x, key, seed" in mod.SOURCE
    assert set(kernels_random.OPS) == set(RANDOM_OPS)


def _normal_libm_reference(key, shape, dtype, seed):
    """random_normal's reference formula with the C library's log and cos (Python's math)."""
    bits = ref.random_bits(key, seed, int(np.prod(shape, dtype=np.int64)))
    u1 = ((bits >> np.uint64(11)).astype(np.float64) + 1.0) * 2.0 ** -53
    u2 = (ref._mix(bits) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    z = [math.sqrt(-2.0 * math.log(a)) * math.cos(2.0 * math.pi * c) for a, c in zip(u1, u2)]
    return np.array(z, np.float64).astype(dtype.np).reshape(shape)


def _reference(name, args, attrs):
    if name == "random_normal":
        return (_normal_libm_reference(*args, **attrs),)
    return as_tuple(REGISTRY[name].ref(*args, **attrs))


def _extra_samples(name):
    """More keys, op seeds (one past 2**63), shapes (empty, 0-d, large) and dtypes (the halves)
    than the op database's."""
    key = np.array([123456789, 2 ** 33 + 7], np.int64)
    if name == "dropout":
        x = np.random.default_rng(1).standard_normal((33, 31))
        return [((x.astype(d), key), {"keep_prob": kp, "seed": 2 ** 63 + 5})
                for d in (np.float32, np.float64, np.float16) for kp in (1e-9, 0.5, 1.0)] + \
            [((np.zeros((0, 3), np.float32), key), {"keep_prob": 0.5, "seed": 1})]
    dtypes = (dt.int32, dt.int64, dt.int8) if name == "random_randint" else \
        (dt.float32, dt.float64, dt.float16, dt.bfloat16)
    out = []
    for d in dtypes:
        for shape, seed in (((1031,), 2 ** 63 + 5), ((0,), 0), ((), 12345), ((4, 0, 2), 7)):
            a = {"shape": shape, "dtype": d, "seed": seed}
            if name == "random_randint":
                a.update(low=-100, high=27 if d is dt.int8 else 2 ** 31 - 1)
            out.append(((key,), a))
    return out


def _db_samples(name):
    return [(s.args, s.attrs) for case in CASES if case.name == name for d in case.dtypes
            for s in case.samples(rng_for("forward", case.name, d), d)]


@pytest.mark.parametrize("name", RANDOM_OPS)
def test_random_family_pynative_o2_and_the_reference_give_thesame_bits(name):
    samples = _db_samples(name) + _extra_samples(name)
    assert len(samples) >= 16
    for args, attrs in samples:
        ms.set_context(mode=ms.PYNATIVE_MODE, jit_level="O0")
        eager = [t.asnumpy() for t in as_tuple(run_op(name, args, attrs))]
        ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
        native = [t.asnumpy() for t in as_tuple(run_op(name, args, attrs))]
        assert isinstance(graph_compile.last_compiled().program, NativeProgram), (name, attrs)
        expect = _reference(name, args, attrs)
        label = f"{name} {attrs} {np.shape(args[0])}"
        assert len(eager) == len(native) == len(expect), label
        for a, b, c in zip(eager, native, expect):
            assert same_bits(a, b) and same_bits(a, np.asarray(c)), label
