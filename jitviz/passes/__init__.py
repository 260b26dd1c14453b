"""The compiler pipeline: a named list of passes, each a pure `ClosedJaxpr -> ClosedJaxpr`
function (a closed jaxpr, because constant folding turns equations into constants).

    stages = run_pipeline(closed, fastmath=False)   # [Stage(pass name, ClosedJaxpr), ...]

Every snapshot is kept for the explorer (`Lowered.stages`). Each pass recurses into
control-flow bodies (most are a rule for `core.jaxpr_util.rewrite_jaxpr`) and returns its input
itself when it changes nothing, which the snapshot records (`Stage.changed`). After every pass
the result is type-checked, so a broken rewrite is reported as "pass 'cse' produced an
ill-typed jaxpr: ..." instead of a wrong answer later.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from ..core.ir import ClosedJaxpr
from ..core.typecheck import typecheck_jaxpr
from ..errors import JitvizError
from . import cse, dce, fold, fuse, inline, simplify


class PassError(JitvizError):
    """A compiler pass failed or produced an ill-typed jaxpr; names the pass."""


class Pass(NamedTuple):
    name: str
    run: Callable[..., ClosedJaxpr]  # (closed, *, fastmath) -> closed
    fastmath_only: bool = False


# the passes every backend runs; then each backend plans its own way (`Backend.pipeline`)
SHARED: list[Pass] = [
    Pass("inline", inline.inline_calls),  # nested jit calls join the caller
    Pass("fold", fold.fold_constants),  # known operands -> literals and constants
    Pass("simplify", simplify.simplify, fastmath_only=True),  # reassociating algebra
    Pass("cse", cse.cse),  # equal equations computed once
    Pass("dce", dce.dce),  # unused results and constants dropped
]
FUSE = Pass("fuse", fuse.fuse)  # elementwise/broadcast/reduction chains -> one kernel

PIPELINE: list[Pass] = SHARED + [FUSE]  # the CPU backend's (and the default) pipeline


class Stage(tuple):
    """One snapshot of a pipeline: unpacks as `name, jaxpr`, and says whether the stage
    `changed` its input (a pass that found nothing to do hands its input back unchanged)."""

    def __new__(cls, name: str, jaxpr: ClosedJaxpr, changed: bool = True):
        stage = super().__new__(cls, (name, jaxpr))
        stage.changed = changed
        return stage

    name = property(lambda self: self[0])
    jaxpr = property(lambda self: self[1])

    def __getnewargs__(self):  # copies and pickles rebuild it through __new__
        return (*self, self.changed)

    def __repr__(self):
        return f"Stage({self.name!r}, changed={self.changed})"


def run_pipeline(closed: ClosedJaxpr, *, fastmath: bool = False, check: bool = True,
                 pipeline=None) -> list[Stage]:
    """Run every pass of `pipeline` (default `PIPELINE`) in order; returns each pass's
    output, named."""
    stages = []
    for p in PIPELINE if pipeline is None else pipeline:
        if p.fastmath_only and not fastmath:
            continue
        try:
            out = p.run(closed, fastmath=fastmath)
        except Exception as e:
            raise PassError(f"compiler pass {p.name!r} failed: {type(e).__name__}: {e}") from e
        if check:
            try:
                typecheck_jaxpr(out, f"after pass {p.name!r}")
            except TypeError as e:
                raise PassError(f"compiler pass {p.name!r} produced an ill-typed jaxpr: "
                                f"{e}") from e
        stages.append(Stage(p.name, out, changed=out is not closed))
        closed = out
    return stages


def lower_stages(closed: ClosedJaxpr, *, fastmath: bool = False,
                 pipeline=None) -> list[Stage]:
    """The traced program and every pass's output after it: what `jit` keeps for each
    specialization (`Lowered.stages`) and the explorer shows."""
    return [Stage("traced", closed)] + \
        run_pipeline(closed, fastmath=fastmath, pipeline=pipeline)


def optimize(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    """The final stage of the pipeline."""
    stages = run_pipeline(closed, fastmath=fastmath)
    return stages[-1].jaxpr if stages else closed


__all__ = ["FUSE", "PIPELINE", "SHARED", "Pass", "PassError", "Stage", "lower_stages",
           "optimize", "run_pipeline"]
