"""Graph passes, each a pure function Graph -> Graph that leaves its input unchanged:
simplify (algebraic rules exact in floating point), fold (constant folding with each op's numpy
reference), cse (common subexpression elimination), dce (dead code elimination), schedule (asynchronous
collectives placed to overlap compute; last, after fusion where it runs). `run_pipeline`
runs them in order, optionally verifying the IR and dumping it after each pass (save_graphs)."""
from __future__ import annotations

import os
from typing import Callable

from .. import ir
from ._util import NONDETERMINISTIC
from .cse import cse
from .dce import dce
from .fold import fold
from .schedule import schedule
from .simplify import simplify

__all__ = ["simplify", "fold", "cse", "dce", "schedule", "PIPELINE", "run_pipeline", "NONDETERMINISTIC"]

PIPELINE = (simplify, fold, cse, dce, schedule)


def run_pipeline(g: ir.Graph, passes=PIPELINE, verify_each: bool = False,
                 dump: Callable[[str, ir.Graph], None] | None = None) -> ir.Graph:
    """Run `passes` in order. verify_each (or MINISPORE_VERIFY=1 in the environment) runs
    `ir.verify` after every pass; `dump(pass_name, graph)` sees the graph after every pass."""
    verify_each = verify_each or os.environ.get("MINISPORE_VERIFY") == "1"
    for p in passes:
        g = p(g)
        name = getattr(p, "__name__", type(p).__name__)
        if verify_each:
            try:
                ir.verify(g)
            except ir.VerifyError as e:
                raise ir.VerifyError(f"after pass {name}: {e}") from None
        if dump is not None:
            dump(name, g)
    return g
