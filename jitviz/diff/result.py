"""What `jitviz.diff` returns: `ProgramDiff`, its rows (`EqnDiff`, one level: `JaxprDiff`) and
the `Change`s of a matched equation."""
from __future__ import annotations

import collections
from dataclasses import dataclass, field

from ..core.ir import ClosedJaxpr
from .views import diff_dict, diff_html, diff_text

STATUSES = ("unchanged", "changed", "added", "removed")


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
        eqn_of = (lambda r: r.a) if side == "a" else (lambda r: r.b)
        ids = _node_ids(self.a if side == "a" else self.b)
        return {ids[id(eqn_of(r))]: r.status for r in self.root.walk()
                if eqn_of(r) is not None and r.status != "unchanged" and id(eqn_of(r)) in ids}

    def node_pairs(self) -> list[tuple[str, str]]:
        """(a's graph node id, b's) of every matched equation, changed or not."""
        ids_a, ids_b = _node_ids(self.a), _node_ids(self.b)
        return [(ids_a[id(r.a)], ids_b[id(r.b)]) for r in self.root.walk()
                if r.a is not None and r.b is not None and id(r.a) in ids_a
                and id(r.b) in ids_b]

    # -- views --
    def text(self, context: int = 1) -> str:
        """A unified-diff-like text: `-` removed, `+` added, `~` changed (then `→` the
        new version and what changed), `@@ line @@` source headers, unchanged runs beyond
        `context` rows of a difference collapsed."""
        return diff_text(self, context)

    def html(self, graphs: bool = True, context: int = 1) -> str:
        """Static HTML (no script): the two programs side by side, then their graphs with
        nodes coloured by status (when Graphviz's `dot` is installed)."""
        return diff_html(self, graphs=graphs, context=context)

    def _repr_html_(self) -> str:
        return self.html()

    def to_dict(self) -> dict:
        """The diff as JSON-ready data (what `jitviz.export` writes next to the HTML)."""
        return diff_dict(self)

    def __repr__(self):
        s = self.summary()
        return (f"<ProgramDiff {self.a_label} -> {self.b_label}: {s['changed']} changed, "
                f"{s['added']} added, {s['removed']} removed, {s['unchanged']} unchanged>")

    def __str__(self):
        return self.text()



def _node_ids(closed: ClosedJaxpr) -> dict[int, str]:
    """id(equation) -> its node id in the explorer's graph model (`e3`, `e3.j0.e1`)."""
    from ..explorer.graph import titled_sub_jaxprs
    out = {}

    def visit(jaxpr, prefix):
        for i, eqn in enumerate(jaxpr.eqns):
            node_id = f"{prefix}e{i}"
            out[id(eqn)] = node_id
            for k, (_, _, sub) in enumerate(titled_sub_jaxprs(eqn)):
                visit(sub, f"{node_id}.j{k}.")
    visit(closed.jaxpr, "")
    return out
