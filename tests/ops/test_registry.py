"""The op database and the registry agree: every declared primitive has an OpCase, every backend
that claims an op has a kernel for it, and every declaration is complete."""
from __future__ import annotations

import pytest

from minispore.core import dtype as dt
from minispore.core.device import get_backend
from minispore.core.primitive import ELEMENTWISE, REGISTRY, OpDef

from helpers import backend_params
from opdb import CASES, OPDB


def test_opdb_covers_the_registry_exactly():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "an op has two OpCases"
    missing = set(REGISTRY) - set(names)
    extra = set(names) - set(REGISTRY)
    assert not missing, f"primitives without an OpCase in tests/opdb.py: {sorted(missing)}"
    assert not extra, f"OpCases for undeclared primitives: {sorted(extra)}"


@pytest.mark.parametrize("backend", backend_params(), indirect=True)
def test_backend_has_a_kernel_for_every_op(backend):
    b = get_backend(backend)
    lacking = [n for n, op in REGISTRY.items() if not b.has_kernel(op)]
    assert not lacking, f"backend {backend} has no kernel for {lacking}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_declaration_is_complete(name):
    op: OpDef = REGISTRY[name]
    assert callable(op.infer) and callable(op.ref)
    if op.differentiable:
        assert callable(op.bprop), f"{name}: differentiable without a bprop"
    if op.kind == ELEMENTWISE:
        assert op.scalar is not None and op.compute is not None, \
            f"{name}: elementwise ops need a scalar template and a dtype rule"
        assert op.arity in (1, 2, 3)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_opcase_is_well_formed(case):
    assert case.dtypes, f"{case.name}: no dtypes"
    assert all(d in dt.ALL for d in case.dtypes)
    assert all(d.is_float for d in case.grad_dtypes)
    if case.op.differentiable and not case.grad:
        assert case.grad_skip, f"{case.name}: gradient check skipped without a reason"
    for (test, _), reason in case.xfail.items():
        assert test in ("forward", "grad", "grad_lowp", "grad2") and reason


def test_opdb_by_name():
    assert OPDB["matmul"].name == "matmul" and OPDB["sum"].accum
