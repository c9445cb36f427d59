"""The CPU the native JIT compiles for (backends/cpu/native_jit.target): the host's, or the one
MINISPORE_LLVM_CPU / MINISPORE_LLVM_FEATURES name, checked before any code is made for it: a name
LLVM does not know, a feature the host lacks or a target breaking x86-64's float calling
convention raises a ValueError naming the variable instead of crashing or computing garbage."""
import os
import subprocess
import sys
import textwrap

import pytest
from llvmlite import binding as llvm

import minispore
from minispore.backends.cpu import native_jit

X86 = llvm.get_process_triple().startswith("x86_64")
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(minispore.__file__)))

SCRIPT = textwrap.dedent("""
    import numpy as np, minispore as ms
    from minispore import ops
    from minispore.backends.cpu import native_jit
    from minispore.core.graph import compile as graph_compile

    def f(x, w):
        return ops.tanh(ops.matmul(x, w)) * 2 + 1

    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O2")
    r = np.random.default_rng(0)
    x, w = r.standard_normal((6, 5), np.float32), r.standard_normal((5, 4), np.float32)
    got = ms.jit(f)(ms.Tensor(x), ms.Tensor(w)).asnumpy()
    np.testing.assert_allclose(got, np.tanh(x @ w) * 2 + 1, rtol=1e-5, atol=1e-6)
    (entry,) = graph_compile.cache.entries()
    assert hasattr(entry.program, "lib"), "not a native program"
    print(native_jit.state()["tag"].split("|")[1])
""")


def _run(tmp_path, **env):
    script = tmp_path / "target_script.py"
    script.write_text(SCRIPT)
    path = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)
    full = dict(os.environ, MINISPORE_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=path)
    for k in ("MINISPORE_LLVM_CPU", "MINISPORE_LLVM_FEATURES"):
        full.pop(k, None)
    full.update(env)
    out = subprocess.run([sys.executable, str(script)], env=full, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()[-1]


@pytest.mark.skipif(not X86, reason="x86-64 CPU names")
def test_native_programs_compile_for_the_cpu_minispore_llvm_cpu_names(tmp_path):
    assert _run(tmp_path) == llvm.get_host_cpu_name()
    host = len(list((tmp_path / "cache" / "native").glob("*.o")))       # glue and kernels
    assert _run(tmp_path, MINISPORE_LLVM_CPU="x86-64") == "x86-64"      # SSE2: every host runs it
    # each target's object files under their own keys: the host's are not loaded for x86-64
    assert len(list((tmp_path / "cache" / "native").glob("*.o"))) == 2 * host


@pytest.fixture
def env(monkeypatch):
    for k in ("MINISPORE_LLVM_CPU", "MINISPORE_LLVM_FEATURES"):
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


def test_the_host_is_the_default_target(env):
    assert native_jit.target() == (llvm.get_host_cpu_name(),
                                   llvm.get_host_cpu_features().flatten())


def test_a_cpu_name_llvm_does_not_know_raises(env):
    env.setenv("MINISPORE_LLVM_CPU", "not-a-cpu")
    with pytest.raises(ValueError, match=r"MINISPORE_LLVM_CPU='not-a-cpu'.*not a recognized"):
        native_jit.target()


def test_a_feature_llvm_does_not_know_raises(env):
    env.setenv("MINISPORE_LLVM_FEATURES", "+not-a-feature")
    with pytest.raises(ValueError, match=r"MINISPORE_LLVM_FEATURES='\+not-a-feature'"):
        native_jit.target()


def test_a_feature_the_host_lacks_raises(env):
    lacking = sorted(k for k, on in llvm.get_host_cpu_features().items() if not on)
    if not lacking:
        pytest.skip("this host has every feature LLVM knows")
    env.setenv("MINISPORE_LLVM_FEATURES", f"+{lacking[0]}")
    with pytest.raises(ValueError, match=f"turns on \\+{lacking[0]}, which this host's CPU"):
        native_jit.target()


@pytest.mark.skipif(not X86, reason="x86-64's calling convention")
def test_turning_off_sse2_raises(env):
    env.setenv("MINISPORE_LLVM_CPU", "x86-64")
    env.setenv("MINISPORE_LLVM_FEATURES", "-sse,-sse2")
    with pytest.raises(ValueError, match="turns off -sse, -sse2"):
        native_jit.target()


@pytest.mark.skipif(not X86, reason="x86-64 features")
def test_features_apply_on_top_of_the_cpu(env):
    env.setenv("MINISPORE_LLVM_FEATURES", "-avx512f")
    assert native_jit.target() == (llvm.get_host_cpu_name(), "-avx512f")
    env.setenv("MINISPORE_LLVM_CPU", "haswell")
    env.delenv("MINISPORE_LLVM_FEATURES")
    assert native_jit.target() == ("haswell", "")
