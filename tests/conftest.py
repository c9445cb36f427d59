"""Test configuration: the backend and mode parameters, the per-test context, the hypothesis
profile, the MINISPORE_TEST_BACKENDS filter (notes/testing.md 6.1-6.2) and the fuzzer's options
(--fuzz-long, --fuzz-seconds: tests/fuzz).

- `backend` (indirect): CPU, GPU, Ascend, filtered by MINISPORE_TEST_BACKENDS=CPU,Ascend. A backend
  that cannot run here is still a parameter; its cells SKIP with the reason from
  `minispore.core.device.availability()`. GPU cells also carry the `gpu` marker.
- `mode`: 'pynative' or 'graph'; a test with a `mode` parameter runs in that context mode (in
  GRAPH_MODE, helpers.run_op/in_mode and ms.grad compile their functions to graphs). The op
  matrix adds 'graph-O1' and 'graph-O2' on the CPU: GRAPH_MODE at that jit_level.
- jit_level is O0 (bit-identical to PyNative) unless a test sets it;
- every other test runs in PYNATIVE_MODE on CPU unless a `backend` parameter says otherwise; the
  previous context is restored afterwards.
- `-n auto` (pytest-xdist, setup.cfg's addopts) starts one worker per usable core, at most 8.
"""
from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings

import minispore as ms
from minispore.core import context as _context

sys.path.insert(0, os.path.dirname(__file__))           # helpers.py, opdb.py

# O2 graphs build their native program before the first call (graph/tiered.py): many tests
# assert which program ran right after it; tests/graph/test_tiered.py turns tiering on itself
os.environ["MINISPORE_TIERED"] = "0"
# every native kernel found by its signature is lowered again and compared with its own text
# (backends/cpu/native_split.py): a signature that misses what changes the code fails a test
os.environ.setdefault("MINISPORE_KERNEL_KEY_CHECK", "1")

from helpers import backend_params, mode_params  # noqa: E402

settings.register_profile("minispore", max_examples=100, deadline=None,
                          derandomize=bool(os.environ.get("CI")))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "minispore"))


def pytest_addoption(parser):
    group = parser.getgroup("minispore fuzzer (tests/fuzz)")
    group.addoption("--fuzz-long", action="store_true", default=False,
                    help="run the differential fuzzer on fresh random programs for "
                         "--fuzz-seconds instead of its short derandomized profile")
    group.addoption("--fuzz-seconds", type=float, default=300.0,
                    help="how long --fuzz-long runs (seconds, default 300)")


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (setup.cfg's addopts): one pytest-xdist worker per core this process may run on
    (its CPU affinity, not the host's count a container reports), at most 8 (each worker holds
    its own compiled kernels); PYTEST_XDIST_AUTO_NUM_WORKERS overrides, as in pytest-xdist."""
    env = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if env.isdigit():
        return int(env)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


# test files whose tests stay in one pytest-xdist worker (--dist loadgroup), by group name:
# the tutorial examples share one module fixture that runs every example (run once, not once per
# worker); the MPI jobs each start several ranks, and two jobs at once on a small machine
# oversubscribe its cores past their timeouts
XDIST_GROUPS = {"test_tutorial_examples.py": "tutorial_examples", "distributed": "mpi"}


@pytest.hookimpl(tryfirst=True)        # before pytest-xdist's hook reads the marks
def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        first = os.path.relpath(str(item.path), here).split(os.sep)[0]
        if first in XDIST_GROUPS:
            item.add_marker(pytest.mark.xdist_group(XDIST_GROUPS[first]))


def _explicit_params(metafunc) -> set:
    names = set()
    for m in metafunc.definition.iter_markers("parametrize"):
        a = m.args[0]
        names.update(x.strip() for x in (a.split(",") if isinstance(a, str) else a))
    return names


def pytest_generate_tests(metafunc):
    explicit = _explicit_params(metafunc)
    if "backend" in metafunc.fixturenames and "backend" not in explicit:
        metafunc.parametrize("backend", backend_params(), indirect=True)
    if "mode" in metafunc.fixturenames and "mode" not in explicit:
        metafunc.parametrize("mode", mode_params())


@pytest.fixture(autouse=True)
def _context_per_test(request):
    """PyNative on CPU for every test, or GRAPH_MODE for a test whose `mode` parameter is
    'graph'; the previous context is restored afterwards."""
    saved = dict(_context._state)
    callspec = getattr(request.node, "callspec", None)
    mode = callspec.params.get("mode") if callspec is not None else None
    graph = isinstance(mode, str) and mode.startswith("graph")
    # O0: graph results are bit-identical to PyNative there; the op matrix's graph-O1 and
    # graph-O2 columns (helpers.LEVEL_MODES) name their level, other tests of O1/O2 set it
    level = mode.split("-")[1] if graph and "-" in mode else "O0"
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE, device_target="CPU",
                   jit_level=level)
    yield
    reconfigure = any(_context._state[k] != saved[k]
                      for k in ("ascend_config", "max_device_memory"))
    _context._state.clear()
    _context._state.update(saved)
    if reconfigure:                    # the simulated Ascend follows its context keys back
        _context._reconfigure_ascend()


@pytest.fixture
def backend(request):
    """The device target of this cell, set in the context for the test's duration."""
    target = getattr(request, "param", "CPU")
    ms.set_context(device_target=target)
    return target
