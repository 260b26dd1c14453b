"""`jitviz.diff(a, b)`: what changed between two programs, equation by equation.

    jitviz.diff(f.specializations[0], f.specializations[1])  # two signatures of one function
    jitviz.diff(*f.lower(x).stages[:2])                      # two stages of one lowering
    jitviz.diff(old_f, new_f, args=(x,))                     # a cell before and after an edit
    jitviz.diff_with_previous(f)                             # the last recompile, as a diff

Equations of the two programs are matched level by level (sub-jaxprs recursively), in four
rounds, each only inside the gaps the earlier rounds left:

1. the same `Eqn` object (passes keep the equations they do not rewrite);
2. the same role: primitive + the user's source line (function and code text, not the line
   number, so an edit above it or a re-run cell still matches), aligned in order with
   difflib's SequenceMatcher (after trimming the common prefix and suffix);
3. the same primitive, aligned in order, accepted only when no operand contradicts the
   variables matched so far (an edited line: `x * 2` -> `x * 3`);
4. dataflow, in any order: the same primitive on operands already matched to each other
   (catches reordered equations).

A matched pair is `unchanged` or `changed` (with the fields that differ: result and operand
types, literal operands, rewired operands, params, bodies); the rest are `added` / `removed`.
"""
from __future__ import annotations

from ..cache_keys import nearest
from ..core.ir import ClosedJaxpr, Jaxpr
from .printing import signature_of
from .matching import as_closed, compare
from .result import Change, EqnDiff, JaxprDiff, ProgramDiff

__all__ = ["diff", "diff_with_previous", "compare", "ProgramDiff", "JaxprDiff", "EqnDiff",
           "Change"]


# --- entry points ------------------------------------------------------------------------------

def diff(a, b, *, args=(), kwargs=None, stage: str | None = None, static_argnums=(),
         static_argnames=()) -> ProgramDiff:
    """Compare two programs: specializations (`f.specializations[i]`), stages (`(name,
    ClosedJaxpr)` from `f.lower(x).stages`), `ClosedJaxpr`s, `Lowered`s, or two functions
    traced with `args`/`kwargs` (a jitted function without args: its latest
    specialization). `stage` picks a stage by name ("traced" by default; "optimized" is the
    last) for the inputs that have stages."""
    kwargs = kwargs or {}
    how = dict(args=args, kwargs=kwargs, stage=stage, static_argnums=static_argnums,
               static_argnames=static_argnames)
    a_label, a_closed = _as_program(a, "a", **how)
    b_label, b_closed = _as_program(b, "b", **how)
    if a_label == b_label:
        a_label, b_label = f"{a_label} (a)", f"{b_label} (b)"
    return compare(a_closed, b_closed, a_label, b_label)


def diff_with_previous(f, which=-1, *, stage: str | None = None) -> ProgramDiff | None:
    """What a recompile changed: the diff from the specialization that `which` was
    recompiled from (the nearest earlier one by argument types and static values, as the
    recompile reason names it) to `which`.

    f: a jitted function (or its cache, as `jitviz.subscribe` listeners get it); which: an
    index into `f.specializations`, a signature, or a `recompile`/`trace`/`compile` event.
    None when there is no earlier specialization still in the cache.
    """
    specs = _specializations_of(f)
    target = _pick_specialization(specs, which)
    if target is None:
        return None
    earlier = [s for s in specs if s.created < target.created]
    if not earlier:
        return None
    return diff(nearest(earlier, target.key), target, stage=stage)


# --- normalizing what can be compared ----------------------------------------------------------

def _as_program(x, default_label, *, args, kwargs, stage, static_argnums, static_argnames):
    """(label, ClosedJaxpr) of anything `diff` accepts."""
    from ..jit import JitFunction, Lowered
    if isinstance(x, (ClosedJaxpr, Jaxpr)):
        return default_label, as_closed(x)
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], (ClosedJaxpr, Jaxpr)):
        return str(x[0]), as_closed(x[1])
    if isinstance(x, Lowered):
        return f"lowered ({_stage_name(x.stages, stage)})", _pick_stage(x.stages, stage)
    if hasattr(x, "stages") and hasattr(x, "signature"):  # a specialization
        return _spec_label(x, stage), _pick_stage(x.stages, stage)
    if isinstance(x, JitFunction):
        return _jitted_program(x, args, kwargs, stage)
    if callable(x):
        return _traced_program(x, args, kwargs, stage, static_argnums, static_argnames)
    raise TypeError(f"jitviz.diff cannot compare a {type(x).__name__}: pass specializations "
                    "(f.specializations[i]), stages ((name, ClosedJaxpr)), ClosedJaxprs, or "
                    "functions with args=(...)")


def _stage_name(stages, stage) -> str:
    if stage in (None, "traced"):
        return stages[0][0]
    if stage == "optimized":
        return stages[-1][0]
    return stage


def _pick_stage(stages, stage) -> ClosedJaxpr:
    name = _stage_name(stages, stage)
    for stage_name, closed in stages:
        if stage_name == name:
            return closed
    raise KeyError(f"no stage {stage!r}; stages are {[n for n, _ in stages]}")


def _spec_label(spec, stage) -> str:
    where = "" if stage in (None, "traced") else f" [{_stage_name(spec.stages, stage)}]"
    return f"{spec.signature}{where}"


def _function_label(fun, signature: str) -> str:
    import os
    from ..core.source import function_location, function_name, notebook_cell_of
    file, _, line = function_location(fun).rpartition(":")
    cell = notebook_cell_of(file)
    where = f"cell {cell}, line {line}" if cell else f"{os.path.basename(file)}:{line}"
    return f"{function_name(fun)}({signature}) at {where}"


def _jitted_program(f, args, kwargs, stage):
    if not args and not kwargs:
        specs = f.specializations
        if not specs:
            raise ValueError(f"{f.__name__} has no compiled specialization yet: call it, or "
                             "pass args=(...) to trace it")
        return _function_label(f, specs[-1].signature), _pick_stage(specs[-1].stages, stage)
    lowered = f.lower(*args, **kwargs)
    label = _function_label(f, signature_of(lowered.jaxpr))
    return label, _pick_stage(lowered.stages, stage)


def _traced_program(fun, args, kwargs, stage, static_argnums, static_argnames):
    from ..staging import make_jaxpr
    closed = make_jaxpr(fun, static_argnums=static_argnums,
                        static_argnames=static_argnames)(*args, **kwargs)
    if stage in (None, "traced"):
        stages = [("traced", closed)]
    else:
        from ..passes import lower_stages
        stages = lower_stages(closed)
    return _function_label(fun, signature_of(closed)), _pick_stage(stages, stage)


def _specializations_of(f) -> list:
    if hasattr(f, "specializations"):
        return list(f.specializations)
    entries = getattr(f, "entries", None)  # a FunctionCache
    if entries is None:
        raise TypeError(f"expected a jitted function, got {type(f).__name__}")
    return sorted(list(entries.values()), key=lambda e: e.created)


def _pick_specialization(specs, which):
    if not specs:
        return None
    if isinstance(which, int):
        return specs[which] if -len(specs) <= which < len(specs) else None
    signature = which if isinstance(which, str) else getattr(which, "signature", None)
    found = [s for s in specs if s.signature == signature]
    return found[-1] if found else None
