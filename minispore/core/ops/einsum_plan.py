"""Parsing an einsum equation against its operands' shapes: the labels of each operand (the
'...' dims given labels of their own), the size of every label (checked across operands,
ellipsis dims broadcasting), and the output labels (explicit after '->', or numpy's implicit
rule: the ellipsis dims, then the labels that occur once, in alphabetical order; an explicit
output without '...' sums the '...' dims, as MindSpore's and PyTorch's einsum)."""
from __future__ import annotations

import string
from typing import NamedTuple

from ..errors import ShapeError

_LETTERS = string.ascii_letters
# labels standing for the dims under '...': characters no equation may use
_ELLIPSIS_LABELS = tuple(chr(0x2460 + i) for i in range(32))


class EinsumPlan(NamedTuple):
    inputs: tuple          # per operand: its labels, one per axis
    output: tuple          # the output's labels
    sizes: dict            # label -> size
    out_shape: tuple
    numpy_equation: str    # the same equation with explicit letters, for numpy's einsum


def _terms(who, equation):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->", 1)
        if "->" in rhs:
            raise ValueError(f"{who}: the equation {equation!r} has more than one '->'")
    else:
        lhs, rhs = eq, None
    return lhs.split(","), rhs


def _labels(who, term, rank, equation):
    """The labels of one operand term of rank `rank`."""
    for ch in term.replace("...", ""):
        if ch not in _LETTERS:
            raise ValueError(f"{who}: the equation {equation!r} uses {ch!r}; labels are "
                             f"letters a-z and A-Z, and '...'")
    if term.count("...") > 1:
        raise ValueError(f"{who}: the term {term!r} of {equation!r} has more than one '...'")
    if "..." in term:
        head, tail = term.split("...")
        n_ell = rank - len(head) - len(tail)
        if n_ell < 0:
            raise ShapeError(f"{who}: the term {term!r} names more axes than the operand's rank "
                             f"{rank}")
        ell = _ELLIPSIS_LABELS[len(_ELLIPSIS_LABELS) - n_ell:] if n_ell else ()
        return tuple(head) + tuple(ell) + tuple(tail), n_ell
    if len(term) != rank:
        raise ShapeError(f"{who}: the term {term!r} of {equation!r} names {len(term)} axes, its "
                         f"operand has rank {rank}")
    return tuple(term), 0


def einsum_plan(equation: str, shapes: tuple) -> EinsumPlan:
    who = "einsum"
    terms, rhs = _terms(who, equation)
    if len(terms) != len(shapes):
        raise ValueError(f"{who}: the equation {equation!r} has {len(terms)} operand terms, "
                         f"got {len(shapes)} operands")
    inputs, sizes, n_ell_max = [], {}, 0
    for term, shape in zip(terms, shapes):
        labels, n_ell = _labels(who, term, len(shape), equation)
        n_ell_max = max(n_ell_max, n_ell)
        for lab, n in zip(labels, shape):
            old = sizes.get(lab)
            if lab in _ELLIPSIS_LABELS:             # broadcasting dims
                if old is None or old == 1:
                    sizes[lab] = n
                elif n not in (1, old):
                    raise ShapeError(f"{who}: the '...' dims of the operands do not broadcast: "
                                     f"{old} and {n}")
            elif old is None:
                sizes[lab] = n
            elif old != n:
                raise ShapeError(f"{who}: label {lab!r} of {equation!r} has size {old} and "
                                 f"{n} in the operands' shapes {list(shapes)}")
        inputs.append(labels)
    ell = _ELLIPSIS_LABELS[len(_ELLIPSIS_LABELS) - n_ell_max:] if n_ell_max else ()
    if rhs is None:
        counts = {}
        for labels in inputs:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        once = sorted((lab for lab, c in counts.items()
                       if c == 1 and lab not in _ELLIPSIS_LABELS), key=_LETTERS.index)
        output = tuple(ell) + tuple(once)
    else:
        if "..." in rhs:
            head, tail = rhs.split("...", 1)
            output = tuple(head) + tuple(ell) + tuple(tail)
        else:                                    # the '...' dims are summed out
            output = tuple(rhs)
        for lab in output:
            if lab not in sizes:
                raise ValueError(f"{who}: the output label {lab!r} of {equation!r} is not in "
                                 f"any operand")
        if len(set(output)) != len(output):
            raise ValueError(f"{who}: the output of {equation!r} repeats a label")
    out_shape = tuple(sizes[lab] for lab in output)
    # numpy's spelling: the ellipsis labels mapped to letters the equation does not use
    free = [c for c in _LETTERS if c not in sizes]
    spell = {lab: free[i] for i, lab in enumerate(ell)}
    np_eq = ",".join("".join(spell.get(lab, lab) for lab in labels) for labels in inputs)
    np_eq += "->" + "".join(spell.get(lab, lab) for lab in output)
    return EinsumPlan(tuple(inputs), output, sizes, out_shape, np_eq)
