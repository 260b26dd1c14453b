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

import collections
import difflib
import html
import re
from dataclasses import dataclass, field

import numpy as np

from .core.ir import ClosedJaxpr, Jaxpr, Literal
from .core.jaxpr_util import holds_jaxprs, sub_jaxprs
from .core.pretty import format_literal, format_param, printed_names

__all__ = ["diff", "diff_with_previous", "ProgramDiff", "JaxprDiff", "EqnDiff", "Change"]

STATUSES = ("unchanged", "changed", "added", "removed")
#: Gaps larger than this (product of lengths) are aligned greedily, not by SequenceMatcher.
MAX_SEQUENCE_MATCHER_CELLS = 4_000_000
MAX_PARAM_TEXT = 120


# --- the result --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Change:
    """One differing field of a matched equation: `out[0]`, `arg[1]`, `param:axes`,
    `body:branch 0`, `arity`."""
    field: str
    before: str
    after: str

    @property
    def label(self) -> str:
        """The field in words: `result 0`, `operand 1`, `param axes`, `branch 0`."""
        kind, _, rest = self.field.partition("[")
        if rest:
            return f"{'result' if kind == 'out' else 'operand'} {rest.rstrip(']')}"
        return self.field.replace("param:", "param ").replace("body:", "")

    def __str__(self):
        if not self.before:
            return f"{self.label}: {self.after}"
        return f"{self.label} {self.before} \u2192 {self.after}"


@dataclass
class EqnDiff:
    status: str  # one of STATUSES
    a: object  # the Eqn in program a (None when added)
    b: object  # the Eqn in program b (None when removed)
    changes: list = field(default_factory=list)  # Change: what differs, for "changed"
    subs: list = field(default_factory=list)  # (title, JaxprDiff) of sub-jaxprs
    note: str = ""  # a fact that explains an added/removed equation

    @property
    def eqn(self):
        return self.b if self.b is not None else self.a

    @property
    def primitive(self) -> str:
        return self.eqn.primitive.name

    @property
    def source(self):
        return self.eqn.source

    @property
    def fields(self) -> list[str]:
        return [c.field for c in self.changes]


@dataclass
class JaxprDiff:
    """The rows of one jaxpr level, in display order: b's order, each removed row after the
    row of the a equation matched before it."""
    rows: list

    def walk(self):
        """Every row, sub-jaxpr rows after their equation's row."""
        for row in self.rows:
            yield row
            for _, sub in row.subs:
                yield from sub.walk()

    def is_empty(self) -> bool:
        return all(r.status == "unchanged" for r in self.walk())


class ProgramDiff:
    """The difference between two programs (see the module docstring).

    `not diff` when they are the same; `.changed`, `.added`, `.removed`, `.unchanged` list
    `EqnDiff` rows of every level; `.inputs`, `.outputs`, `.consts` list `Change`s of the
    signature. Views: `.text()`, `_repr_html_()` (static HTML, the graphs coloured when
    Graphviz is installed), `.to_dict()`, `.node_status(side)` for graph front ends.
    """

    def __init__(self, a_label, a: ClosedJaxpr, b_label, b: ClosedJaxpr, root: JaxprDiff,
                 inputs, outputs, consts):
        self.a_label, self.a = a_label, a
        self.b_label, self.b = b_label, b
        self.root = root
        self.inputs, self.outputs, self.consts = inputs, outputs, consts

    # -- lists and counts --
    def rows_with(self, status: str) -> list[EqnDiff]:
        return [r for r in self.root.walk() if r.status == status]

    changed = property(lambda self: self.rows_with("changed"))
    added = property(lambda self: self.rows_with("added"))
    removed = property(lambda self: self.rows_with("removed"))
    unchanged = property(lambda self: self.rows_with("unchanged"))

    def summary(self) -> dict:
        counts = collections.Counter(r.status for r in self.root.walk())
        return {s: counts.get(s, 0) for s in STATUSES}

    def __bool__(self):
        return bool(self.inputs or self.outputs or self.consts) or not self.root.is_empty()

    def status_of(self, eqn) -> str | None:
        """The status of an equation of either program (None if it is in neither)."""
        for row in self.root.walk():
            if row.a is eqn or row.b is eqn:
                return row.status
        return None

    def node_status(self, side: str) -> dict[str, str]:
        """Graph node id (as `jitviz.explorer.graph.build_graph` numbers equations) ->
        status, for the equations of program `side` ("a" or "b") that are not unchanged."""
        from .explorer.graph import titled_sub_jaxprs
        closed = self.a if side == "a" else self.b
        eqn_of = (lambda r: r.a) if side == "a" else (lambda r: r.b)
        status = {id(eqn_of(r)): r.status for r in self.root.walk() if eqn_of(r) is not None}
        out = {}

        def visit(jaxpr, prefix):
            for i, eqn in enumerate(jaxpr.eqns):
                node_id = f"{prefix}e{i}"
                if status.get(id(eqn), "unchanged") != "unchanged":
                    out[node_id] = status[id(eqn)]
                for k, (_, _, sub) in enumerate(titled_sub_jaxprs(eqn)):
                    visit(sub, f"{node_id}.j{k}.")
        visit(closed.jaxpr, "")
        return out

    # -- views --
    def text(self, context: int = 1) -> str:
        """A unified-diff-like text: `-` removed, `+` added, `~` changed (then `→` the
        new version and what changed), `@@ line @@` source headers, unchanged runs beyond
        `context` rows of a difference collapsed."""
        return _diff_text(self, context)

    def html(self, graphs: bool = True, context: int = 1) -> str:
        """Static HTML (no script): the two programs side by side, then their graphs with
        nodes coloured by status (when Graphviz's `dot` is installed)."""
        return _diff_html(self, graphs=graphs, context=context)

    def _repr_html_(self) -> str:
        return self.html()

    def to_dict(self) -> dict:
        """The diff as JSON-ready data (what `jitviz.export` writes next to the HTML)."""
        return _diff_dict(self)

    def __repr__(self):
        s = self.summary()
        return (f"<ProgramDiff {self.a_label} -> {self.b_label}: {s['changed']} changed, "
                f"{s['added']} added, {s['removed']} removed, {s['unchanged']} unchanged>")

    def __str__(self):
        return self.text()


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


def compare(a: ClosedJaxpr, b: ClosedJaxpr, a_label="a", b_label="b") -> ProgramDiff:
    """The diff of two closed jaxprs."""
    a, b = _closed(a), _closed(b)
    matching = _Matching(_top_function(a), _top_function(b))
    matching.map_vars(a.jaxpr.constvars, b.jaxpr.constvars)
    matching.map_vars(a.jaxpr.invars, b.jaxpr.invars)
    root = matching.diff_level(a.jaxpr, b.jaxpr)
    return ProgramDiff(a_label, a, b_label, b, root, _input_changes(a, b),
                       _output_changes(a, b), _const_changes(a, b))


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
    from .jit import _distance
    previous = min(reversed(earlier), key=lambda s: _distance(s.key, target.key))
    return diff(previous, target, stage=stage)


# --- normalizing what can be compared ----------------------------------------------------------

def _closed(x) -> ClosedJaxpr:
    return ClosedJaxpr(x, []) if isinstance(x, Jaxpr) else x


def _as_program(x, default_label, *, args, kwargs, stage, static_argnums, static_argnames):
    """(label, ClosedJaxpr) of anything `diff` accepts."""
    from .jit import JitFunction, Lowered
    if isinstance(x, (ClosedJaxpr, Jaxpr)):
        return default_label, _closed(x)
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], (ClosedJaxpr, Jaxpr)):
        return str(x[0]), _closed(x[1])
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
    from .core.source import function_location, function_name, notebook_cell_of
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
    label = _function_label(f, _signature_of(lowered.jaxpr))
    return label, _pick_stage(lowered.stages, stage)


def _traced_program(fun, args, kwargs, stage, static_argnums, static_argnames):
    from .api import make_jaxpr
    closed = make_jaxpr(fun, static_argnums=static_argnums,
                        static_argnames=static_argnames)(*args, **kwargs)
    if stage in (None, "traced"):
        stages = [("traced", closed)]
    else:
        from .passes import lower_stages
        stages = lower_stages(closed)
    return _function_label(fun, _signature_of(closed)), _pick_stage(stages, stage)


def _signature_of(closed: ClosedJaxpr) -> str:
    names = list(closed.arg_names or [])
    return ", ".join(f"{names[i] if i < len(names) and names[i] else f'arg{i}'}:"
                     f"{_type_text(v.aval)}" for i, v in enumerate(closed.jaxpr.invars))


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


def _top_function(closed) -> str | None:
    report = getattr(closed, "report", None)
    return getattr(report, "function", None)


# --- matching ---------------------------------------------------------------------------------

class _Matching:
    """The variable correspondence a -> b, grown as equations are matched (var ids are unique
    across levels, so one map serves every sub-jaxpr)."""

    def __init__(self, a_function, b_function):
        self.var_map: dict[int, object] = {}  # a var id -> b var
        self.images: set[int] = set()  # ids of b vars that some a var maps to
        self.functions = (a_function, b_function)

    def map_vars(self, a_vars, b_vars):
        if len(a_vars) != len(b_vars):
            return
        for av, bv in zip(a_vars, b_vars):
            if not isinstance(av, Literal) and not isinstance(bv, Literal):
                self.var_map[av.id] = bv
                self.images.add(bv.id)

    def role(self, eqn, side: int):
        """Primitive + the user's line, by function and code text (robust to moved lines
        and re-run cells); the traced function itself is one role whatever its name."""
        src = eqn.source
        if src is None:
            return (eqn.primitive.name, None, None)
        function = "<top>" if src.function == self.functions[side] else src.function
        return (eqn.primitive.name, function, src.code.strip())

    def compatible(self, ea, eb) -> bool:
        """No operand of `eb` contradicts the variables matched so far."""
        for x, y in zip(ea.invars, eb.invars):
            if isinstance(x, Literal) or isinstance(y, Literal):
                continue
            mapped = self.var_map.get(x.id)
            if mapped is not None and mapped is not y and y.id in self.images:
                return False
        return True

    def diff_level(self, a: Jaxpr, b: Jaxpr) -> JaxprDiff:
        pairs = _Aligner(a.eqns, b.eqns, self).run()
        rows_b = {j: self._pair_row(a.eqns[i], b.eqns[j]) for i, j in pairs.items()}
        for j, eqn in enumerate(b.eqns):
            rows_b.setdefault(j, _one_sided("added", eqn))
        removed = {i: _one_sided("removed", eqn) for i, eqn in enumerate(a.eqns)
                   if i not in pairs}
        _explain(a, b, removed, rows_b, pairs)
        return JaxprDiff(_display_order(rows_b, removed, pairs))

    def _pair_row(self, ea, eb) -> EqnDiff:
        changes = _operand_changes(ea, eb, self) + _result_changes(ea, eb) + \
            _param_changes(ea, eb)
        subs = []
        for title, sub_a, sub_b in _paired_subs(ea, eb):
            if sub_a is None or sub_b is None:
                changes.append(Change(f"body:{title}", "none" if sub_a is None else "a body",
                                      "none" if sub_b is None else "a body"))
                continue
            self.map_vars(sub_a.constvars, sub_b.constvars)
            self.map_vars(sub_a.invars, sub_b.invars)
            sub = self.diff_level(sub_a, sub_b)
            subs.append((title, sub))
            if not sub.is_empty():
                n = sum(r.status != "unchanged" for r in sub.walk())
                changes.append(Change(f"body:{title}", "", f"{n} equation(s) differ"))
        return EqnDiff("changed" if changes else "unchanged", ea, eb, changes, subs)


def _one_sided(status, eqn) -> EqnDiff:
    """An added or removed equation; its bodies are added or removed with it."""
    from .explorer.graph import titled_sub_jaxprs
    subs = [(title, JaxprDiff([_one_sided(status, e) for e in sub.eqns]))
            for title, _, sub in titled_sub_jaxprs(eqn)]
    return EqnDiff(status, eqn if status == "removed" else None,
                   eqn if status == "added" else None, [], subs)


class _Aligner:
    """Pairs equation indices of one level (a index -> b index); see the module docstring."""

    def __init__(self, a_eqns, b_eqns, matching: _Matching):
        self.a, self.b = list(a_eqns), list(b_eqns)
        self.m = matching
        self.pairs: dict[int, int] = {}

    def run(self) -> dict[int, int]:
        self._align(id, id)
        self._align(lambda e: self.m.role(e, 0), lambda e: self.m.role(e, 1))
        self._align(lambda e: e.primitive.name, lambda e: e.primitive.name,
                    accept=self.m.compatible)
        self._dataflow()
        return self.pairs

    def _pair(self, i, j):
        self.pairs[i] = j
        self.m.map_vars(self.a[i].outvars, self.b[j].outvars)

    def _gaps(self):
        """The unmatched stretches between matched pairs (which are in order until the
        dataflow round)."""
        bounds = sorted(self.pairs.items())
        prev_i = prev_j = -1
        for i, j in bounds + [(len(self.a), len(self.b))]:
            if i - prev_i > 1 and j - prev_j > 1:
                yield prev_i + 1, i, prev_j + 1, j
            prev_i, prev_j = i, j

    def _align(self, key_a, key_b, accept=None):
        for i0, i1, j0, j1 in list(self._gaps()):
            keys_a = [key_a(e) for e in self.a[i0:i1]]
            keys_b = [key_b(e) for e in self.b[j0:j1]]
            for i, j in _sequence_pairs(keys_a, keys_b):
                if accept is None or accept(self.a[i0 + i], self.b[j0 + j]):
                    self._pair(i0 + i, j0 + j)

    def _dataflow(self):
        """Pair, in any order, equations of one primitive whose operands are matched to each
        other; repeat while that matches more variables."""
        progress = True
        while progress:
            progress = False
            taken = set(self.pairs.values())
            waiting = collections.defaultdict(list)
            for i, eqn in enumerate(self.a):
                sig = self._signature(eqn, a_side=True)
                if i not in self.pairs and sig is not None:
                    waiting[sig].append(i)
            for j, eqn in enumerate(self.b):
                sig = self._signature(eqn, a_side=False)
                if j in taken or sig is None or not waiting.get(sig):
                    continue
                self._pair(waiting[sig].pop(0), j)
                progress = True

    def _signature(self, eqn, a_side: bool):
        """(primitive, operands as b vars / literal text), or None when an operand is not
        matched yet (or the equation has no variable operand to anchor it)."""
        ops = []
        for x in eqn.invars:
            if isinstance(x, Literal):
                ops.append(("literal", format_literal(x)))
                continue
            target = self.m.var_map.get(x.id) if a_side else (x if x.id in self.m.images
                                                                else None)
            if target is None:
                return None
            ops.append(("var", target.id))
        if not any(kind == "var" for kind, _ in ops):
            return None
        return (eqn.primitive.name, tuple(ops))


def _sequence_pairs(keys_a: list, keys_b: list) -> list[tuple[int, int]]:
    """In-order pairs of equal keys: the common prefix and suffix, then SequenceMatcher's
    matching blocks in between (a greedy walk when the gap is huge)."""
    n, m = len(keys_a), len(keys_b)
    start = 0
    while start < min(n, m) and keys_a[start] == keys_b[start]:
        start += 1
    end = 0
    while end < min(n, m) - start and keys_a[n - 1 - end] == keys_b[m - 1 - end]:
        end += 1
    pairs = [(k, k) for k in range(start)]
    mid_a, mid_b = keys_a[start:n - end], keys_b[start:m - end]
    if mid_a and mid_b:
        pairs += [(start + i, start + j) for i, j in _middle_pairs(mid_a, mid_b)]
    pairs += [(n - end + k, m - end + k) for k in range(end)]
    return pairs


def _middle_pairs(keys_a, keys_b):
    if len(keys_a) * len(keys_b) > MAX_SEQUENCE_MATCHER_CELLS:
        return _greedy_pairs(keys_a, keys_b)
    matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    return [(blk.a + k, blk.b + k) for blk in matcher.get_matching_blocks()
            for k in range(blk.size)]


def _greedy_pairs(keys_a, keys_b):
    """Each a key paired with the next unused equal b key after the last pair."""
    where = collections.defaultdict(collections.deque)
    for j, key in enumerate(keys_b):
        where[key].append(j)
    pairs, last = [], -1
    for i, key in enumerate(keys_a):
        queue = where.get(key)
        while queue and queue[0] <= last:
            queue.popleft()
        if queue:
            last = queue.popleft()
            pairs.append((i, last))
    return pairs


def _display_order(rows_b: dict, removed: dict, pairs: dict) -> list:
    """b's rows in b's order; each removed row right after the row of the nearest earlier
    a equation that was matched."""
    keyed = [((j, 0, 0), row) for j, row in rows_b.items()]
    last_matched = -1  # b index of the last matched a equation before i
    for i in range(max(list(removed) + list(pairs) + [-1]) + 1):
        if i in removed:
            keyed.append(((last_matched, 1, i), removed[i]))
        elif i in pairs:
            last_matched = pairs[i]
    return [row for _, row in sorted(keyed, key=lambda kr: kr[0])]


# --- comparing a matched pair ---------------------------------------------------------------

def _type_text(aval) -> str:
    return aval.str_short() + ("~" if aval.weak_type else "")


def _operand_changes(ea, eb, m: _Matching) -> list[Change]:
    if len(ea.invars) != len(eb.invars):
        return [Change("arity", f"{len(ea.invars)} operands", f"{len(eb.invars)} operands")]
    out = []
    for k, (x, y) in enumerate(zip(ea.invars, eb.invars)):
        before, after = _operand_text(x), _operand_text(y)
        if isinstance(x, Literal) or isinstance(y, Literal):
            if before != after:
                out.append(Change(f"arg[{k}]", before, after))
            continue
        mapped = m.var_map.get(x.id)
        rewired = mapped is not None and mapped is not y and y.id in m.images
        if rewired or x.aval != y.aval:
            out.append(Change(f"arg[{k}]", before + (" (rewired)" if rewired else ""), after))
    return out


def _operand_text(atom) -> str:
    if isinstance(atom, Literal):
        return format_literal(atom) + ("~" if atom.aval.weak_type else "")
    return _type_text(atom.aval)


def _result_changes(ea, eb) -> list[Change]:
    if len(ea.outvars) != len(eb.outvars):
        return [Change("outputs", f"{len(ea.outvars)} results", f"{len(eb.outvars)} results")]
    return [Change(f"out[{k}]", _type_text(x.aval), _type_text(y.aval))
            for k, (x, y) in enumerate(zip(ea.outvars, eb.outvars)) if x.aval != y.aval]


def param_texts(eqn) -> dict[str, str]:
    """The params as the jaxpr printer writes them, sub-jaxprs left out."""
    return {str(k): format_param(v) for k, v in eqn.primitive.printed_params(eqn.params)
            if not holds_jaxprs(v)}


def _param_changes(ea, eb) -> list[Change]:
    pa, pb = param_texts(ea), param_texts(eb)
    return [Change(f"param:{k}", pa.get(k, "(none)"), pb.get(k, "(none)"))
            for k in dict.fromkeys(list(pa) + list(pb)) if pa.get(k) != pb.get(k)]


def _paired_subs(ea, eb):
    """(title, a's sub-jaxpr or None, b's or None) by title (`branch 0`, `body_jaxpr`)."""
    from .explorer.graph import titled_sub_jaxprs
    subs_a = {title: sub for title, _, sub in titled_sub_jaxprs(ea)}
    subs_b = {title: sub for title, _, sub in titled_sub_jaxprs(eb)}
    return [(t, subs_a.get(t), subs_b.get(t)) for t in dict.fromkeys(list(subs_a) + list(subs_b))]


# --- signature-level changes ------------------------------------------------------------------

def _arg_name(closed, i) -> str:
    names = list(getattr(closed, "arg_names", None) or [])
    return str(names[i]) if i < len(names) and names[i] else f"arg{i}"


def _input_changes(a: ClosedJaxpr, b: ClosedJaxpr) -> list[Change]:
    ins_a, ins_b = a.jaxpr.invars, b.jaxpr.invars
    if len(ins_a) != len(ins_b):
        return [Change("inputs", _signature_of(a), _signature_of(b))]
    return [Change(f"input {_arg_name(b, i)}", _type_text(x.aval), _type_text(y.aval))
            for i, (x, y) in enumerate(zip(ins_a, ins_b)) if x.aval != y.aval]


def _output_changes(a: ClosedJaxpr, b: ClosedJaxpr) -> list[Change]:
    outs_a, outs_b = a.jaxpr.outvars, b.jaxpr.outvars
    types_a = ", ".join(_type_text(v.aval) for v in outs_a)
    types_b = ", ".join(_type_text(v.aval) for v in outs_b)
    if len(outs_a) != len(outs_b):
        return [Change("outputs", types_a, types_b)]
    return [Change(f"output {i}", _type_text(x.aval), _type_text(y.aval))
            for i, (x, y) in enumerate(zip(outs_a, outs_b)) if x.aval != y.aval]


def _const_changes(a: ClosedJaxpr, b: ClosedJaxpr) -> list[Change]:
    from .explorer.graph import value_summary
    if len(a.consts) != len(b.consts):
        return [Change("constants", f"{len(a.consts)} constant(s)",
                       f"{len(b.consts)} constant(s)")]
    out = []
    for i, (x, y, var) in enumerate(zip(a.consts, b.consts, b.jaxpr.constvars)):
        if not _same_value(x, y):
            name = var.origin.name if var.origin is not None and var.origin.name else f"const{i}"
            out.append(Change(f"constant {name}", value_summary(x), value_summary(y)))
    return out


def _same_value(x, y) -> bool:
    if x is y:
        return True
    try:
        x, y = np.asarray(x), np.asarray(y)
        return x.shape == y.shape and x.dtype == y.dtype and \
            bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    except (TypeError, ValueError):
        return False


# --- facts that explain added and removed equations -----------------------------------------

def _explain(a: Jaxpr, b: Jaxpr, removed: dict, rows_b: dict, pairs: dict):
    """Notes for removed equations (fused into an added kernel, result unused, a duplicate,
    only constant operands) and for added fused equations (what they fuse)."""
    used = {x.id for e in a.eqns for x in e.invars if not isinstance(x, Literal)}
    used |= {v.id for v in a.outvars if not isinstance(v, Literal)}
    consts = {v.id for v in a.constvars}
    fused_bodies = [(row.b.params.get("name"), _fused_keys(row.b)) for row in rows_b.values()
                    if row.status == "added" and row.primitive == "fused"]
    first_of = {}  # what an equation computes -> the first equation computing it
    for i, eqn in enumerate(a.eqns):
        first_of.setdefault(_same_computation(eqn), i)
    for i, row in removed.items():
        duplicate = first_of[_same_computation(row.a)] < i
        row.note = _removal_note(row.a, used, consts, fused_bodies, duplicate)
    for row in rows_b.values():
        if row.status == "added" and row.primitive == "fused":
            inner = [r.primitive for _, sub in row.subs for r in sub.rows]
            row.note = f"fuses {len(inner)} equation(s): {', '.join(inner)}"


def _removal_note(eqn, used, consts, fused_bodies, duplicate: bool) -> str:
    key = _content_key(eqn)
    for name, keys in fused_bodies:
        if keys[key] > 0:
            keys[key] -= 1
            return f"fused into {name}"
    if eqn.outvars and not any(v.id in used for v in eqn.outvars) and \
            not eqn.primitive.effectful:
        return "its result was unused"
    if duplicate:
        return "a duplicate of an earlier equation (same operation, same operands)"
    if all(isinstance(x, Literal) or x.id in consts for x in eqn.invars):
        return "all its operands are constants"
    return ""


def _content_key(eqn) -> tuple:
    src = eqn.source
    return (eqn.primitive.name, src.code.strip() if src else None,
            tuple(_type_text(x.aval) for x in eqn.invars),
            tuple(_type_text(v.aval) for v in eqn.outvars))


def _fused_keys(eqn) -> collections.Counter:
    return collections.Counter(_content_key(e) for sub in sub_jaxprs(eqn) for e in sub.eqns)


def _same_computation(eqn) -> tuple:
    ops = tuple(format_literal(x) if isinstance(x, Literal) else x.id for x in eqn.invars)
    return (eqn.primitive.name, tuple(sorted(param_texts(eqn).items())), ops)


# --- naming, shared by the views ------------------------------------------------------------

def names_of(closed: ClosedJaxpr) -> dict[int, str]:
    """var id -> the name `print(closed)` gives it."""
    return printed_names(closed.jaxpr)


def eqn_parts(eqn, names: dict) -> list[tuple[str | None, str]]:
    """An equation as (field, text) pieces: `out[k]`, `primitive`, `param:name`, `arg[k]`
    (None for punctuation), so the views can highlight the fields a `Change` names."""
    parts: list[tuple[str | None, str]] = []
    for k, v in enumerate(eqn.outvars):
        parts += [(None, " ")] if k else []
        parts.append((f"out[{k}]", f"{_var_name(v, names)}:{v.aval.str_short()}"))
    if eqn.outvars:
        parts.append((None, " = "))
    parts.append(("primitive", eqn.primitive.name))
    params = eqn.primitive.printed_params(eqn.params)
    if params:
        parts.append((None, "["))
        for k, (key, value) in enumerate(params):
            text = "{\u2026}" if holds_jaxprs(value) else _short(format_param(value))
            parts += [(None, " ")] if k else []
            parts.append((f"param:{key}" if not holds_jaxprs(value) else "primitive",
                          f"{key}={text}"))
        parts.append((None, "]"))
    for k, atom in enumerate(eqn.invars):
        text = format_literal(atom) if isinstance(atom, Literal) else _var_name(atom, names)
        parts += [(None, " "), (f"arg[{k}]", text)]
    return parts


def eqn_text(eqn, names: dict) -> str:
    return "".join(text for _, text in eqn_parts(eqn, names))


def _var_name(v, names) -> str:
    return names.get(v.id) or f"v{v.id}"


def _short(text: str) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_PARAM_TEXT else text[:MAX_PARAM_TEXT - 1] + "\u2026"


def escape(text) -> str:
    return html.escape(str(text), quote=True)


# --- views: text -----------------------------------------------------------------------------

MARKS = {"unchanged": " ", "changed": "~", "added": "+", "removed": "-"}


def _diff_text(d: ProgramDiff, context: int) -> str:
    lines = [f"--- a: {d.a_label}", f"+++ b: {d.b_label}"]
    lines += [f"~ {c}" for c in d.inputs + d.outputs + d.consts]
    counts = d.summary()
    if not d:
        lines.append(f"no differences ({counts['unchanged']} equations)")
        return "\n".join(lines)
    lines.append(", ".join(f"{counts[s]} {s}" for s in ("changed", "added", "removed",
                                                         "unchanged")))
    _text_level(d.root, (names_of(d.a), names_of(d.b)), context, "", lines)
    return "\n".join(lines)


def _text_level(level: JaxprDiff, names, context, indent, lines):
    last_source = None
    for kind, item in _visible(level.rows, context):
        if kind == "skip":
            lines.append(f"{indent}  ... {_n_unchanged(len(item))} ...")
            last_source = None
            continue
        row = item
        if row.source is not None and _source_key(row.source) != last_source:
            last_source = _source_key(row.source)
            lines.append(f"{indent}@@ {source_text(row.source)} @@")
        lines += [indent + line for line in _row_text(row, names)]
        for title, sub in row.subs if row.status != "unchanged" else ():
            lines.append(f"{indent}    {title}:")
            _text_level(sub, names, context, indent + "    ", lines)


def _row_text(row: EqnDiff, names) -> list[str]:
    note = f"   # {row.note}" if row.note else ""
    if row.status == "changed":
        what = "; ".join(str(c) for c in row.changes)
        return [f"~ {eqn_text(row.a, names[0])}",
                f"  \u2192 {eqn_text(row.b, names[1])}   [{what}]"]
    if row.status == "added":
        return [f"+ {eqn_text(row.b, names[1])}{note}"]
    if row.status == "removed":
        return [f"- {eqn_text(row.a, names[0])}{note}"]
    return [f"  {eqn_text(row.b, names[1])}"]


def _visible(rows, context):
    """("row", row) for rows within `context` of a difference, ("skip", [rows]) for the
    runs of unchanged rows between them."""
    differ = [i for i, r in enumerate(rows) if r.status != "unchanged"]
    keep = {k for i in differ for k in range(i - context, i + context + 1)}
    out, skipped = [], []
    for i, row in enumerate(rows):
        if i in keep:
            if skipped:
                out.append(("skip", skipped))
                skipped = []
            out.append(("row", row))
        else:
            skipped.append(row)
    if skipped:
        out.append(("skip", skipped))
    return out


def _n_unchanged(n: int) -> str:
    return f"{n} unchanged equation{'s' if n != 1 else ''}"


def _source_key(src):
    return (src.file, src.line)


def source_text(src) -> str:
    """`line 4 (f): y = x * 2`, with the notebook cell when there is one."""
    from .diagnostics import describe_line
    return f"{describe_line(src.file, src.line)} ({src.function}): {src.code.strip()}"


# --- views: HTML -------------------------------------------------------------------------------

FONT = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px"
COLUMNS = "display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);column-gap:8px"
ROW_STYLE = {
    "unchanged": ("", ""),
    "changed": ("background:#fef3c7", "background:#fef3c7"),
    "added": ("background:#f8fafc", "background:#dcfce7"),
    "removed": ("background:#fee2e2", "background:#f8fafc"),
}
MARK_STYLE = "background:#fbbf24;border-radius:2px;padding:0 1px"
CELL = "padding:1px 6px;white-space:pre-wrap;overflow-wrap:anywhere;border-radius:3px"
GRAPH_COLORS = {  # status -> (fill, border): the table's colours
    "added": ("#bbf7d0", "#16a34a"), "removed": ("#fecaca", "#dc2626"),
    "changed": ("#fde68a", "#d97706"),
}


def _diff_html(d: ProgramDiff, graphs: bool, context: int) -> str:
    names = (names_of(d.a), names_of(d.b))
    counts = d.summary()
    head = [
        f"<div style='{FONT};color:#334155;margin-bottom:6px'>",
        f"<div><b style='color:#b91c1c'>a</b> {escape(d.a_label)}</div>",
        f"<div><b style='color:#15803d'>b</b> {escape(d.b_label)}</div>",
        "<div style='margin-top:4px'>" + _count_chips(counts) + "</div>"]
    head += [f"<div>~ {_change_html(c)}</div>" for c in d.inputs + d.outputs + d.consts]
    head.append("</div>")
    if not d:
        body = f"<div style='{FONT}'><i>no differences</i></div>"
    else:
        titles = (f"<div style='{CELL};font-weight:bold'>a: {escape(d.a_label)}</div>"
                  f"<div style='{CELL};font-weight:bold'>b: {escape(d.b_label)}</div>")
        body = (f"<div style='{COLUMNS};{FONT}'>{titles}</div>"
                + _html_level(d.root, names, context))
    graph_html = _graphs_html(d) if graphs and d else ""
    return (f"<div class='jitviz-diff' style='{FONT};line-height:1.45'>"
            + "".join(head) + body + graph_html + "</div>")


def _count_chips(counts) -> str:
    colours = {"changed": "#fde68a", "added": "#bbf7d0", "removed": "#fecaca",
               "unchanged": "#e2e8f0"}
    return " ".join(f"<span style='background:{colours[s]};border-radius:8px;padding:0 7px'>"
                    f"{counts[s]} {s}</span>" for s in ("changed", "added", "removed",
                                                        "unchanged"))


def _change_html(c: Change) -> str:
    if not c.before:
        return f"<b>{escape(c.label)}</b>: {escape(c.after)}"
    return (f"<b>{escape(c.label)}</b> {escape(c.before)} \u2192 "
            f"<b>{escape(c.after)}</b>")


def _html_level(level: JaxprDiff, names, context) -> str:
    out, last_source = [], None
    for kind, item in _visible(level.rows, context):
        if kind == "skip":
            out.append(_collapsed_html(item, names))
            last_source = None
            continue
        row = item
        if row.source is not None and _source_key(row.source) != last_source:
            last_source = _source_key(row.source)
            out.append(_source_html(row.source))
        out.append(_row_html(row, names))
        for title, sub in row.subs if row.status != "unchanged" else ():
            out.append(f"<div style='margin-left:18px;border-left:2px solid #cbd5e1;"
                       f"padding-left:6px'><div style='color:#64748b'>{escape(title)}:</div>"
                       + _html_level(sub, names, context) + "</div>")
    return "".join(out)


def _collapsed_html(rows, names) -> str:
    inner = "".join(_row_html(r, names) for r in rows)
    return (f"<details style='margin:2px 0'><summary style='color:#64748b;cursor:pointer'>"
            f"\u2026 {_n_unchanged(len(rows))} \u2026</summary>{inner}</details>")


def _source_html(src) -> str:
    return (f"<div style='color:#64748b;background:#f1f5f9;padding:1px 6px;margin-top:4px'>"
            f"{escape(source_text(src))}</div>")


def _row_html(row: EqnDiff, names) -> str:
    left_style, right_style = ROW_STYLE[row.status]
    marked = {_part_of(f) for f in row.fields}
    left = _eqn_html(row.a, names[0], marked, "\u2212 " if row.status == "removed" else "")
    right = _eqn_html(row.b, names[1], marked, "+ " if row.status == "added" else "")
    if row.changes:
        right += ("<div style='font-size:11.5px;color:#92400e'>"
                  + "; ".join(_change_html(c) for c in row.changes) + "</div>")
    note = f"<div style='font-size:11.5px;color:#64748b'><i>{escape(row.note)}</i></div>" \
        if row.note else ""
    if row.status == "removed":
        left += note
    else:
        right += note
    return (f"<div class='jv-{row.status}' style='{COLUMNS};margin:1px 0'>"
            f"<div style='{CELL};{left_style}'>{left}</div>"
            f"<div style='{CELL};{right_style}'>{right}</div></div>")


def _part_of(field_name: str) -> str:
    if field_name.startswith(("body:", "arity", "outputs")):
        return "primitive"
    return field_name


def _eqn_html(eqn, names, marked, prefix) -> str:
    if eqn is None:
        return ""
    pieces = [escape(prefix)]
    for part, text in eqn_parts(eqn, names):
        if part is not None and part in marked:
            pieces.append(f"<mark style='{MARK_STYLE}'>{escape(text)}</mark>")
        else:
            pieces.append(escape(text))
    return "".join(pieces)


# --- views: graphs -----------------------------------------------------------------------------

def _graphs_html(d: ProgramDiff) -> str:
    svgs = [status_svg(d, side) for side in ("a", "b")]
    if not any(svgs):
        return (f"<div style='color:#64748b;margin-top:8px'><i>graphs: Graphviz's dot is not "
                "installed (or the programs are too large to lay out)</i></div>")
    legend = " ".join(
        f"<span style='background:{fill};border:1px solid {line};padding:0 6px'>{status}</span>"
        for status, (fill, line) in GRAPH_COLORS.items())
    cells = "".join(
        f"<div style='min-width:0'><div style='font-weight:bold'>{side}: "
        f"{escape(label)}</div><div style='overflow-x:auto;"
        f"border:1px solid #e2e8f0'>{svg or '<i>not drawn</i>'}</div></div>"
        for side, label, svg in (("a", d.a_label, svgs[0]), ("b", d.b_label, svgs[1])))
    return (f"<div style='margin-top:12px'><div style='margin-bottom:4px'>graphs {legend}</div>"
            f"<div style='{COLUMNS}'>{cells}</div></div>")


def status_dot(d: ProgramDiff, side: str) -> str | None:
    """DOT of program `side`'s graph (the explorer's), nodes coloured by their status; a
    collapsed cluster with differences inside is coloured as changed. None when too large."""
    from .explorer import dot, graph as graph_model
    closed = d.a if side == "a" else d.b
    graph = graph_model.build_graph(closed)
    the_view = dot.view(graph, graph.get("collapsed", []))
    if len(the_view.nodes) > dot.MAX_VISIBLE_NODES:
        return None
    colours = _visible_statuses(graph, set(the_view.nodes), d.node_status(side))
    source = dot.to_dot(graph, the_view=the_view).rstrip()
    # a later node statement updates the attributes of a node already declared (in any
    # subgraph), so dot.py's drawing is kept and only the colours change
    overrides = "".join(
        f'\t"{node_id}" [fillcolor="{GRAPH_COLORS[s][0]}" color="{GRAPH_COLORS[s][1]}" '
        f'penwidth=2]\n' for node_id, s in colours.items())
    return source[:-1] + overrides + "}\n"


def _visible_statuses(graph, visible: set, statuses: dict) -> dict[str, str]:
    by_id = {n["id"]: n for n in graph["nodes"]}
    out = {}
    for node_id, status in statuses.items():
        if node_id in visible:
            out[node_id] = status
            continue
        parent = by_id.get(node_id, {}).get("cluster")
        while parent is not None and parent not in visible:
            parent = by_id.get(parent, {}).get("cluster")
        if parent is not None:
            out.setdefault(parent, "changed")
    return out


def status_svg(d: ProgramDiff, side: str) -> str:
    """Inline SVG of `status_dot` ("" without Graphviz): ids prefixed by the side (two graphs
    share a page), namespace URLs dropped (HTML needs none, and an offline page should
    name no URL)."""
    from .explorer.dot import render_svg
    try:
        source = status_dot(d, side)
    except Exception:  # noqa: BLE001 - the graph is an extra: the table stands alone
        return ""
    svg = render_svg(source) if source else ""
    if not svg:
        return ""
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'\bid="', f'id="{side}-', svg)
    return svg.replace("<svg ", "<svg style='max-width:100%;height:auto' ", 1)


# --- views: JSON -------------------------------------------------------------------------------

def _diff_dict(d: ProgramDiff) -> dict:
    names = (names_of(d.a), names_of(d.b))
    return {
        "a": d.a_label, "b": d.b_label, "empty": not d, "summary": d.summary(),
        "inputs": [_change_dict(c) for c in d.inputs],
        "outputs": [_change_dict(c) for c in d.outputs],
        "constants": [_change_dict(c) for c in d.consts],
        "rows": [_row_dict(r, names) for r in d.root.rows],
        "text": d.text(),
    }


def _change_dict(c: Change) -> dict:
    return {"field": c.field, "before": c.before, "after": c.after}


def _row_dict(row: EqnDiff, names) -> dict:
    src = row.source
    return {
        "status": row.status, "primitive": row.primitive,
        "a": eqn_text(row.a, names[0]) if row.a is not None else None,
        "b": eqn_text(row.b, names[1]) if row.b is not None else None,
        "source": None if src is None else {"file": src.file, "line": src.line,
                                            "function": src.function, "code": src.code},
        "changes": [_change_dict(c) for c in row.changes], "note": row.note,
        "subs": [{"title": title, "rows": [_row_dict(r, names) for r in sub.rows]}
                 for title, sub in row.subs],
    }
