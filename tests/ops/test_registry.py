"""The op database and the registry agree: every declared op (primitive or composite) has an
OpCase, every backend has a kernel for every primitive, and every declaration is complete."""
from __future__ import annotations

import pytest

from minispore.core import dtype as dt
from minispore.core.device import get_backend
from minispore.core.primitive import ELEMENTWISE, REGISTRY, OpDef, primitives

from helpers import backend_params
from opdb import CASES, OPDB


def test_opdb_covers_the_registry_exactly():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "an op has two OpCases"
    missing = set(REGISTRY) - set(names)
    extra = set(names) - set(REGISTRY)
    assert not missing, f"ops without an OpCase in tests/opdb.py: {sorted(missing)}"
    assert not extra, f"OpCases for undeclared ops: {sorted(extra)}"


@pytest.mark.parametrize("backend", backend_params(), indirect=True)
def test_backend_has_a_kernel_for_every_primitive(backend):
    b = get_backend(backend)
    lacking = [op.name for op in primitives() if not b.has_kernel(op)]
    assert not lacking, f"backend {backend} has no kernel for {lacking}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_declaration_is_complete(name):
    op: OpDef = REGISTRY[name]
    assert callable(op.infer) and callable(op.ref)
    if op.differentiable and op.composite is None:
        assert callable(op.bprop), f"{name}: differentiable without a bprop"
    if op.composite is not None:
        assert callable(op.composite) and op.scalar is None, \
            f"{name}: a composite is its impl, with no scalar template of its own"
    elif op.kind == ELEMENTWISE:
        assert op.scalar is not None and op.compute is not None, \
            f"{name}: elementwise primitives need a scalar template and a dtype rule"
    if op.kind == ELEMENTWISE:
        assert op.compute is not None and op.arity in (1, 2, 3)


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
