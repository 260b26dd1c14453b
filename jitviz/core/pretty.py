"""Printing jaxprs exactly as today's JAX does.

A small Wadler-Lindig document algebra (text, break, nest, group) and the jaxpr layout on
top of it. A group prints flat when it fits in the rest of the line (80 columns), so short
jaxprs come out on one line with `;` between equations, as in JAX.
"""
from __future__ import annotations

from typing import Sequence

from .ir import ClosedJaxpr, Jaxpr, Literal, Var, format_scalar
from .jaxpr_util import holds_jaxprs, open_jaxpr, sub_jaxprs

WIDTH = 80


# --- documents ---------------------------------------------------------------------------

class Doc:
    __slots__ = ()

    def __add__(self, other):
        return concat([self, other])


class Text(Doc):
    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s


class Break(Doc):
    __slots__ = ("s",)

    def __init__(self, s=" "):
        self.s = s


class Concat(Doc):
    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts


class Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n, child):
        self.n, self.child = n, child


class Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child


NIL = Concat(())
text, brk, nest, group = Text, Break, Nest, Group


def concat(docs: Sequence[Doc]) -> Doc:
    docs = [d for d in docs if d is not NIL]
    return docs[0] if len(docs) == 1 else Concat(tuple(docs))


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    out: list[Doc] = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return concat(out) if out else NIL


FLAT, BREAK = 0, 1


def _flat_width_fits(doc: Doc, room: int) -> bool:
    """Does `doc`, printed flat, fit in `room` columns? (Only the group itself counts.)"""
    stack = [doc]
    while stack and room >= 0:
        d = stack.pop()
        if isinstance(d, Text):
            room -= len(d.s)
        elif isinstance(d, Break):
            room -= len(d.s)
        elif isinstance(d, Concat):
            stack.extend(reversed(d.parts))
        elif isinstance(d, (Nest, Group)):
            stack.append(d.child)
    return room >= 0


def render(doc: Doc, width: int = WIDTH) -> str:
    lines: list[str] = []
    line: list[str] = []
    col = 0
    stack = [(0, BREAK, doc)]
    while stack:
        indent, mode, d = stack.pop()
        if isinstance(d, Text):
            line.append(d.s)
            col += len(d.s)
        elif isinstance(d, Break):
            if mode == BREAK:
                lines.append("".join(line))
                line, col = [" " * indent], indent
            else:
                line.append(d.s)
                col += len(d.s)
        elif isinstance(d, Concat):
            stack.extend((indent, mode, p) for p in reversed(d.parts))
        elif isinstance(d, Nest):
            stack.append((indent + d.n, mode, d.child))
        elif isinstance(d, Group):
            fits = _flat_width_fits(d.child, width - col)
            stack.append((indent, FLAT if fits else BREAK, d.child))
    lines.append("".join(line))
    return "\n".join(lines)


# --- jaxprs ------------------------------------------------------------------------------

class NameContext:
    """Assigns a, b, ..., z, ba, bb, ... to vars in the order they are printed.

    One context serves a whole printout (sub-jaxprs included). Names of hoisted shared
    jaxprs are skipped; unused top-level results print as `_`, as in JAX.
    """

    def __init__(self, reserved=(), dropped=()):
        self.names: dict[int, str] = {}
        self.reserved = set(reserved)
        self.counter = 0
        for v in dropped:
            self.names[v.id] = "_"
        self.shared: dict[int, str] = {}

    def name(self, v: Var) -> str:
        n = self.names.get(v.id)
        if n is None:
            while True:
                n = _alphabetic(self.counter)
                self.counter += 1
                if n not in self.reserved:
                    break
            self.names[v.id] = n
        return n

    def suggest(self, inner, outer):
        """Let a call's sub-jaxpr reuse the caller's names (JAX's jit printing rule)."""
        used = set()
        for iv, ov in zip(inner, outer):
            if isinstance(iv, Var) and isinstance(ov, Var) and iv.id not in self.names \
                    and ov.id not in used:
                used.add(ov.id)
                self.names[iv.id] = self.name(ov)


def _alphabetic(n: int) -> str:
    s = ""
    while not s or n:
        n, r = divmod(n, 26)
        s = chr(97 + r) + s
    return s


def format_literal(lit: Literal) -> str:
    return f"{format_scalar(lit.val, lit.aval.weak_type)}:{lit.aval.str_short()}"


def pp_atom(a, ctx: NameContext) -> str:
    if isinstance(a, Literal):
        return format_literal(a)
    return ctx.name(a)


def pp_vars(vs, ctx, *, separator="", typed=False) -> Doc:
    def one(v):
        if typed and not isinstance(v, Literal):
            return text(f"{ctx.name(v)}:{v.aval.str_short()}")
        return text(pp_atom(v, ctx))
    return nest(2, group(join(text(separator) + group(brk()), [one(v) for v in vs])))


def pp_param_value(v, ctx) -> Doc:
    if isinstance(v, tuple) and holds_jaxprs(v):
        return group(concat([nest(2, concat([text("("), brk(""),
                                             join(brk(), [pp_jaxpr_doc(j, ctx) for j in v])])),
                             brk(""), text(")")]))
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return pp_jaxpr_doc(v, ctx)
    return text(format_param(v))


def format_param(v) -> str:
    import numpy as np
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if isinstance(v, tuple):
        inner = ", ".join(format_param(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(format_param(x) for x in v) + "]"
    return str(v)


def pp_params(pairs, ctx) -> Doc:
    if not pairs:
        return NIL
    items = [text(f"{k}=") + pp_param_value(v, ctx) for k, v in pairs]
    return group(concat([nest(2, concat([text("["), brk(""), join(brk(), items)])),
                         brk(""), text("]")]))


def pp_eqn(eqn, ctx) -> Doc:
    prim = eqn.primitive
    lhs = pp_vars(eqn.outvars, ctx, typed=True)
    call_param = getattr(prim, "call_param", None)
    if call_param and call_param in eqn.params:
        sub = open_jaxpr(eqn.params[call_param])
        if id(sub) not in ctx.shared:
            ctx.suggest(sub.invars, eqn.invars)
            ctx.suggest(sub.outvars, eqn.outvars)
    rhs = [text(prim.name), pp_params(prim.printed_params(eqn.params), ctx),
           text(" ") + pp_vars(eqn.invars, ctx)]
    if eqn.outvars:
        return concat([lhs, text(" = "), *rhs])
    return concat(rhs)


def pp_jaxpr_doc(jaxpr, ctx: NameContext) -> Doc:
    jaxpr = open_jaxpr(jaxpr)
    shared = ctx.shared.get(id(jaxpr))
    if shared is not None:
        return text(shared)
    return _skeleton(jaxpr, ctx)


def _skeleton(jaxpr, ctx) -> Doc:
    constvars = pp_vars(jaxpr.constvars, ctx, typed=True)
    invars = pp_vars(jaxpr.invars, ctx, typed=True)
    eqns = join(brk("; "), [pp_eqn(e, ctx) for e in jaxpr.eqns])
    close = ")" if len(jaxpr.outvars) != 1 else ",)"
    outvars = concat([text("("), pp_vars(jaxpr.outvars, ctx, separator=","), text(close)])
    body = concat([text("{ "), text("lambda "), constvars, text("; "), invars, text(". "),
                   text("let"), nest(2, brk() + eqns), brk(), text("in "), outvars])
    return group(nest(2, body) + text(" }"))


HOIST_EQNS = 10


def _shared_jaxprs(top: Jaxpr):
    """Sub-jaxprs printed once as `let name = {...} in`: used twice, or longer than 10 eqns."""
    counts, names, order, todo = {}, {}, [], [top]
    while todo:
        j = todo.pop(0)
        for eqn in j.eqns:
            name = eqn.params.get("name")
            for sub in sub_jaxprs(eqn):
                if id(sub) not in counts:
                    counts[id(sub)] = 0
                    order.append(sub)
                    todo.append(sub)
                    names[id(sub)] = str(name).strip("<>") if name else "jaxpr"
                counts[id(sub)] += 1 + (len(sub.eqns) > HOIST_EQNS and counts[id(sub)] == 0)
    out, taken = [], {}
    for sub in order:
        if counts[id(sub)] > 1:
            base = names[id(sub)]
            n = taken.get(base, 0)
            taken[base] = n + 1
            out.append((base if n == 0 else f"{base}{n}", sub))
    return out


def _dropped_vars(top: Jaxpr):
    used = {a.id for e in top.eqns for a in e.invars if isinstance(a, Var)}
    used |= {v.id for v in top.outvars if isinstance(v, Var)}
    return [v for e in top.eqns for v in e.outvars if v.id not in used]


def _toplevel(jaxpr):
    """(document, naming context) of a whole printout: names are handed out while the
    document is built, in the order the printer meets the variables."""
    jaxpr = open_jaxpr(jaxpr)
    shared = _shared_jaxprs(jaxpr)
    ctx = NameContext(reserved=[n for n, _ in shared], dropped=_dropped_vars(jaxpr))
    docs = []
    for name, sub in shared:
        docs.append(concat([text("let "), text(name), text(" = "), _skeleton(sub, ctx),
                            text(" in"), brk()]))
        ctx.shared[id(sub)] = name
    docs.append(_skeleton(jaxpr, ctx))
    return concat(docs), ctx


def pp_toplevel(jaxpr) -> Doc:
    return _toplevel(jaxpr)[0]


def printed_names(jaxpr) -> dict[int, str]:
    """var id -> the name `print(jaxpr)` gives it (a, b, ..., `_` for unused results)."""
    return dict(_toplevel(jaxpr)[1].names)


def pp_jaxpr(jaxpr, width: int = WIDTH) -> str:
    return render(pp_toplevel(jaxpr), width)


def pp_eqn_str(eqn, width: int = WIDTH) -> str:
    return render(pp_eqn(eqn, NameContext()), width)
