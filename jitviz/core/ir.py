"""The IR: small immutable classes, as in JAX's core (and Autodidax).

`Var` and `Literal` are atoms; an `Eqn` applies a primitive to atoms and binds new vars;
a `Jaxpr` is a straight-line program of equations; a `ClosedJaxpr` pairs it with the
values of its constvars and with what happened while tracing (`report`).
"""
from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np

from .. import dtypes


class ShapedArray:
    """The abstract value of an array: shape, dtype and whether the dtype is weak."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    def same_type(self, other) -> bool:
        """Equal shape and dtype, ignoring weak_type (JAX's `typematch`)."""
        return self.shape == other.shape and self.dtype == other.dtype

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strong(self) -> "ShapedArray":
        return self.update(weak_type=False) if self.weak_type else self

    def str_short(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __str__(self):
        """JAX's type text (`jax.typeof(x)` prints it): `float32[3,3]`, `~float32[]` when
        weak; jaxprs print `str_short()` (`f32[3,3]`)."""
        weak = "~" if self.weak_type else ""
        return f"{weak}{self.dtype.name}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}]{weak})"


class SourceInfo(NamedTuple):
    """Where the user's code made an equation: never a jitviz-internal frame."""
    file: str
    line: int
    function: str
    code: str
    # where on the line the call starts (0-based, Python's co_positions), for JAX's
    # `file:line:column (function)` summaries; not part of equality: one line is one place
    column: int | None = None
    qualname: str | None = None  # the function's `__qualname__` (JAX's summaries print it)

    def short(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"

    def __eq__(self, other):
        return isinstance(other, SourceInfo) and self[:4] == other[:4]

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self[:4])


class ConstOrigin(NamedTuple):
    """Where a constant baked into a jaxpr came from."""
    kind: str  # "literal" | "global" | "closure" | "computed" | "nondeterministic"
    name: str | None = None
    fingerprint: str | None = None
    source: SourceInfo | None = None

    def describe(self) -> str:
        if self.kind in ("global", "closure"):
            return f"{self.kind} {self.name!r} = {self.fingerprint}"
        if self.kind == "nondeterministic":
            return f"value of {self.name} read while tracing"
        return self.kind


_var_ids = itertools.count()


class Var:
    """A variable, compared by identity; printed names are assigned when printing."""

    __slots__ = ("aval", "id", "origin")

    def __init__(self, aval: ShapedArray, origin: ConstOrigin | None = None):
        self.aval = aval
        self.id = next(_var_ids)
        self.origin = origin

    def __repr__(self):
        return f"Var(id={self.id}):{self.aval.str_short()}"


class Literal:
    """A scalar constant inlined into an equation (`2:i32[]`)."""

    __slots__ = ("val", "aval", "origin")

    def __init__(self, val, aval: ShapedArray, origin: ConstOrigin | None = None):
        self.val = val
        self.aval = aval
        self.origin = origin

    def __repr__(self):
        return f"{format_scalar(self.val, self.aval.weak_type)}:{self.aval.str_short()}"


PYTHON_SCALARS = (bool, int, float, complex)


def format_scalar(val, weak: bool = False) -> str:
    """A scalar as JAX prints a literal: a Python scalar as Python writes it (`2`, `0.1`,
    `1e+100`: a weakly typed Python float keeps its double value), any other value as the
    Python scalar of its item (`0.10000000149011612` for an f32 0.1). `weak` is unused."""
    if isinstance(val, PYTHON_SCALARS):
        return str(val)
    return str(np.asarray(val).item())


def literal_value(lit: "Literal") -> np.ndarray:
    """The literal as a 0-d NumPy array of exactly its dtype (a Python float too large
    for float32 becomes inf, as in JAX)."""
    with np.errstate(all="ignore"):
        return np.asarray(lit.val, dtype=lit.aval.dtype)


def literal_key(lit: "Literal") -> tuple:
    """A hashable key under which literals are equal exactly when they are the same value of
    the same type (so -0.0 and 0.0 stay apart, NaN payloads too)."""
    return ("lit", lit.aval.dtype.str, lit.aval.weak_type, literal_value(lit).tobytes())


class Eqn:
    """`outvars = primitive[params] invars`, with the user's source line."""

    __slots__ = ("primitive", "invars", "outvars", "params", "source")

    def __init__(self, primitive, invars, outvars, params, source: SourceInfo | None):
        self.primitive = primitive
        self.invars = tuple(invars)
        self.outvars = tuple(outvars)
        self.params = dict(params)
        self.source = source

    def replace(self, **kw) -> "Eqn":
        fields = {s: getattr(self, s) for s in self.__slots__}
        fields.update(kw)
        return Eqn(**fields)

    def __repr__(self):
        from .pretty import pp_eqn_str
        return pp_eqn_str(self)


class Jaxpr:
    """A program: `constvars` and `invars` in, `eqns` in order, `outvars` out (a
    `ClosedJaxpr` pairs it with the constants' values)."""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "__weakref__")

    def __init__(self, constvars, invars, outvars, eqns):
        self.constvars = tuple(constvars)
        self.invars = tuple(invars)
        self.outvars = tuple(outvars)
        self.eqns = tuple(eqns)

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def replace(self, **kw) -> "Jaxpr":
        fields = {s: getattr(self, s) for s in self.__slots__ if s != "__weakref__"}
        fields.update(kw)
        return Jaxpr(**fields)

    def __str__(self):
        from .pretty import pp_jaxpr
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with its constants, and (when it came from tracing user code) the report.

    Never changed after construction (a pass's input is also the explorer's snapshot of the
    stage before it): make a new one with `replace`."""

    # `refs`: how a jitted call feeds and writes back the Refs the function used (see
    # jitviz/state.py: RefBindings), None when it used none
    __slots__ = ("jaxpr", "consts", "report", "in_tree", "out_tree", "arg_names", "refs",
                 "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts, report=None, in_tree=None, out_tree=None,
                 arg_names=None, refs=None):
        init = super().__setattr__
        init("jaxpr", jaxpr)
        init("consts", list(consts))
        init("report", report)
        init("in_tree", in_tree)
        init("out_tree", out_tree)
        init("arg_names", arg_names)
        init("refs", refs)

    def __setattr__(self, name, value):
        raise AttributeError(f"a ClosedJaxpr is immutable: use .replace({name}=...)")

    def __reduce__(self):  # copies and pickles are built through __init__ too
        return ClosedJaxpr, (self.jaxpr, self.consts, self.report, self.in_tree, self.out_tree,
                             self.arg_names, self.refs)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def replace(self, **kw) -> "ClosedJaxpr":
        fields = {s: getattr(self, s) for s in self.__slots__ if s != "__weakref__"}
        fields.update(kw)
        return ClosedJaxpr(**fields)

    def replace_jaxpr(self, jaxpr: Jaxpr) -> "ClosedJaxpr":
        return self.replace(jaxpr=jaxpr)

    def __str__(self):
        from .pretty import pp_jaxpr
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):  # IPython shows the jaxpr, not an object address
        p.text(str(self))

