"""Matching the equations of two programs (see the `jitviz.diff` package docstring for the
rounds), comparing each matched pair, and the notes that explain added and removed ones."""
from __future__ import annotations

import collections
import difflib

import numpy as np

from ..core.ir import ClosedJaxpr, Jaxpr, Literal
from ..core.jaxpr_util import sub_jaxprs
from ..core.pretty import format_literal
from .printing import param_texts, signature_of, type_text
from .result import Change, EqnDiff, JaxprDiff, ProgramDiff

#: Gaps larger than this (product of lengths) are aligned greedily, not by SequenceMatcher.
MAX_SEQUENCE_MATCHER_CELLS = 4_000_000


def compare(a: ClosedJaxpr, b: ClosedJaxpr, a_label="a", b_label="b") -> ProgramDiff:
    """The diff of two closed jaxprs."""
    a, b = as_closed(a), as_closed(b)
    matching = _Matching(_top_function(a), _top_function(b))
    matching.map_vars(a.jaxpr.constvars, b.jaxpr.constvars)
    matching.map_vars(a.jaxpr.invars, b.jaxpr.invars)
    root = matching.diff_level(a.jaxpr, b.jaxpr)
    return ProgramDiff(a_label, a, b_label, b, root, _input_changes(a, b),
                       _output_changes(a, b), _const_changes(a, b))


def as_closed(x) -> ClosedJaxpr:
    return ClosedJaxpr(x, []) if isinstance(x, Jaxpr) else x


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
    from ..explorer.graph import titled_sub_jaxprs
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
    return type_text(atom.aval)


def _result_changes(ea, eb) -> list[Change]:
    if len(ea.outvars) != len(eb.outvars):
        return [Change("outputs", f"{len(ea.outvars)} results", f"{len(eb.outvars)} results")]
    return [Change(f"out[{k}]", type_text(x.aval), type_text(y.aval))
            for k, (x, y) in enumerate(zip(ea.outvars, eb.outvars)) if x.aval != y.aval]


def _param_changes(ea, eb) -> list[Change]:
    pa, pb = param_texts(ea), param_texts(eb)
    return [Change(f"param:{k}", pa.get(k, "(none)"), pb.get(k, "(none)"))
            for k in dict.fromkeys(list(pa) + list(pb)) if pa.get(k) != pb.get(k)]


def _paired_subs(ea, eb):
    """(title, a's sub-jaxpr or None, b's or None) by title (`branch 0`, `body_jaxpr`)."""
    from ..explorer.graph import titled_sub_jaxprs
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
        return [Change("inputs", signature_of(a), signature_of(b))]
    return [Change(f"input {_arg_name(b, i)}", type_text(x.aval), type_text(y.aval))
            for i, (x, y) in enumerate(zip(ins_a, ins_b)) if x.aval != y.aval]


def _output_changes(a: ClosedJaxpr, b: ClosedJaxpr) -> list[Change]:
    outs_a, outs_b = a.jaxpr.outvars, b.jaxpr.outvars
    types_a = ", ".join(type_text(v.aval) for v in outs_a)
    types_b = ", ".join(type_text(v.aval) for v in outs_b)
    if len(outs_a) != len(outs_b):
        return [Change("outputs", types_a, types_b)]
    return [Change(f"output {i}", type_text(x.aval), type_text(y.aval))
            for i, (x, y) in enumerate(zip(outs_a, outs_b)) if x.aval != y.aval]


def _const_changes(a: ClosedJaxpr, b: ClosedJaxpr) -> list[Change]:
    from ..explorer.graph import value_summary
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
            tuple(type_text(x.aval) for x in eqn.invars),
            tuple(type_text(v.aval) for v in eqn.outvars))


def _fused_keys(eqn) -> collections.Counter:
    return collections.Counter(_content_key(e) for sub in sub_jaxprs(eqn) for e in sub.eqns)


def _same_computation(eqn) -> tuple:
    ops = tuple(format_literal(x) if isinstance(x, Literal) else x.id for x in eqn.invars)
    return (eqn.primitive.name, tuple(sorted(param_texts(eqn).items())), ops)

