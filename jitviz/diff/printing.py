"""How the diff prints types, params, signatures and equations (the views and the matching
share it, so a row's text and the fields it marks as changed agree)."""
from __future__ import annotations

from ..core.ir import ClosedJaxpr, Literal
from ..core.jaxpr_util import holds_jaxprs
from ..core.pretty import format_literal, format_param, printed_names

MAX_PARAM_TEXT = 120


def type_text(aval) -> str:
    return aval.str_short() + ("~" if aval.weak_type else "")


def signature_of(closed: ClosedJaxpr) -> str:
    names = list(closed.arg_names or [])
    return ", ".join(f"{names[i] if i < len(names) and names[i] else f'arg{i}'}:"
                     f"{type_text(v.aval)}" for i, v in enumerate(closed.jaxpr.invars))


def param_texts(eqn) -> dict[str, str]:
    """The params as the jaxpr printer writes them, sub-jaxprs left out."""
    return {str(k): format_param(v) for k, v in eqn.primitive.printed_params(eqn.params)
            if not holds_jaxprs(v)}


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
