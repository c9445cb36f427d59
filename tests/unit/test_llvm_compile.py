"""LLVM's work shared with helper processes (backends/cpu/llvm_compile.py): a helper makes the
object code this process makes, byte for byte; a helper that fails leaves its share to this
process; a small batch starts no helper."""
import subprocess

import pytest

from minispore.backends.cpu import llvm_compile, native_jit


def _module(k: int, lines: int) -> str:
    body = "\n".join(f"  %v{i + 1} = add i64 %v{i}, {i + k}" for i in range(lines))
    return (f'define i64 @"f{k}"(i64 %v0) {{\n{body}\n  ret i64 %v{lines}\n}}\n')


def _jobs(n=4, lines=600):
    return [(_module(k, lines), 3) for k in range(n)]


def test_helpers_make_the_same_object_code_as_this_process(monkeypatch):
    started = []
    real = subprocess.Popen
    monkeypatch.setattr(llvm_compile.subprocess, "Popen",
                        lambda *a, **k: started.append(a) or real(*a, **k))
    jobs = _jobs()
    mine = [native_jit._compile(t, s) for t, s in jobs]
    shared = llvm_compile.compile_batch(jobs, native_jit._compile, native_jit.target(), workers=2)
    assert started                                 # the batch was worth a helper
    assert shared == mine


def test_a_failing_helper_leaves_its_share_to_this_process(monkeypatch):
    monkeypatch.setattr(llvm_compile, "__file__", "/nonexistent/llvm_compile.py")
    jobs = _jobs()
    out = llvm_compile.compile_batch(jobs, native_jit._compile, native_jit.target(), workers=1)
    assert out == [native_jit._compile(t, s) for t, s in jobs]


def test_a_small_batch_compiles_here(monkeypatch):
    def no_helper(*a, **k):
        raise AssertionError("a helper was started for a small batch")
    monkeypatch.setattr(llvm_compile.subprocess, "Popen", no_helper)
    jobs = _jobs(n=2, lines=20)
    assert llvm_compile.compile_batch(jobs, native_jit._compile, native_jit.target(),
                                      workers=3) == [native_jit._compile(t, s) for t, s in jobs]


@pytest.mark.parametrize("costs,helpers", [([5, 4, 3, 3, 2, 1], 1), ([1000] * 5, 2)])
def test_the_plan_puts_every_job_in_one_bin(costs, helpers):
    bins = llvm_compile._plan(costs, helpers)
    assert sorted(j for b in bins for j in b) == list(range(len(costs)))
    assert len(bins) == helpers + 1


@pytest.mark.parametrize("value,want", [("", None), ("0", 0), ("2", 2), ("-1", ValueError),
                                        ("two", ValueError)])
def test_the_helper_count_comes_from_minispore_llvm_workers(monkeypatch, value, want):
    monkeypatch.setenv("MINISPORE_LLVM_WORKERS", value)
    if want is ValueError:
        with pytest.raises(ValueError, match="MINISPORE_LLVM_WORKERS must be a non-negative"):
            llvm_compile.default_workers()
    elif want is None:
        assert llvm_compile.default_workers() == max(0, min(llvm_compile.cores() - 1, 3))
    else:
        assert llvm_compile.default_workers() == want
