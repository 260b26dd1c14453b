"""Shared machinery of the transformations: tracing a Python function or a replayed jaxpr
into a new jaxpr, replaying equations with the user's source line kept, and small array
helpers the rules use (all of them bind primitives, so they work eagerly and in a trace).

Every transformation here is an interpreter over a jaxpr that *re-emits* equations through
`bind` (Autodidax's "jaxpr in, jaxpr out"): inside an enclosing trace (jit, make_jaxpr, another
transformation) the result is new equations of that trace; with no trace active it runs now.
"""
from __future__ import annotations

import threading

import numpy as np

from ..core.fused import fused_p
from ..core.ir import ClosedJaxpr, Jaxpr, ShapedArray, literal_value
from ..core.trace import JaxprTrace, Tracer, concrete_aval, current_trace, push_trace
from ..lax import primitives as P
from ..lax.control_flow import jit_p


class TransformError(TypeError):
    """A transformation cannot handle a program; names the primitive and the user's line."""


# Call primitives: an equation that runs a sub-jaxpr (its `jaxpr` param) on its operands.
# Each rule table gives them one rule made from the primitive it re-binds.
CALL_PRIMITIVES = (jit_p, fused_p)


def select(items, mask):
    """The items whose mask entry is true (e.g. the avals of the nonzero tangents)."""
    return [x for x, keep in zip(items, mask) if keep]


def take(it, n):
    """The next n values of an iterator (unpacking a flat argument list into groups)."""
    return [next(it) for _ in range(n)]


def take_where(it, mask):
    """The next value of an iterator where mask is true, None elsewhere."""
    return [next(it) if keep else None for keep in mask]


def aval_of(x) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    if type(x).__name__ == "_Abstract":  # vmap's stand-in for one example
        return x.aval
    return concrete_aval(x, "an operand")[1]


def is_float(aval) -> bool:
    return np.dtype(aval.dtype).kind in "fc"


def where(eqn) -> str:
    src = getattr(eqn, "source", None)
    if src is None:
        return ""
    return f" (from {src.file}:{src.line}: {src.code})"


# --- tracing ---------------------------------------------------------------------------------

class KnownTracer(Tracer):
    """A tracer that also knows its value: functions differentiated outside `jit` may use
    Python control flow on values (`if x > 0:`), as with JAX's eager `grad`."""

    __slots__ = ("_val",)

    def __bool__(self):
        return bool(self._val)

    def __int__(self):
        return int(self._val)

    def __float__(self):
        return float(self._val)

    def __index__(self):
        return int(np.asarray(self._val).__index__())

    def item(self, *args):
        return np.asarray(self._val).item(*args)

    def tolist(self):
        return np.asarray(self._val).tolist()


def known_value(x):
    """The value of `x` if it is known now (a concrete value or a KnownTracer), else None."""
    if isinstance(x, KnownTracer):
        return x._val
    if isinstance(x, Tracer):
        return None
    return x


class KnownTrace(JaxprTrace):
    """A trace that records a jaxpr and also computes every value (used when the function's
    inputs are concrete: eager `grad`, `vjp`, `jvp`)."""

    def new_known_arg(self, value, aval):
        t = self.new_arg(aval)
        k = KnownTracer(self, t._var)
        k._val = np.asarray(value, aval.dtype)
        return k

    def emit(self, prim, args, params):
        out = super().emit(prim, args, params)
        if prim.effectful:
            return out
        vals = [known_value(a) for a in args]
        if any(v is None for v in vals):
            return out
        with np.errstate(all="ignore"):
            res = prim.impl(*[np.asarray(v) for v in vals], **params)
        outs = out if prim.multiple_results else [out]
        ress = res if prim.multiple_results else [res]
        known = []
        for t, r in zip(outs, ress):
            k = KnownTracer(self, t._var)
            k._val = np.asarray(r).astype(t.aval.dtype, copy=False)
            known.append(k)
        return known if prim.multiple_results else known[0]


def custom_rule_depth(trace) -> int:
    """How many enclosing differentiations will differentiate the values of `trace` as they
    are traced (not through a jaxpr staged by `jit`, a control-flow body or a replay): a
    `custom_jvp`/`custom_vjp` called there runs its rule, nested that many times, instead of
    being traced itself (JAX calls only the rule under jvp/grad)."""
    return 0 if trace is None else getattr(trace, "custom_rule_depth", 0)


def trace_flat(flat_fun, args, *, name="fun", known=True, differentiates=None,
               purpose="transformation"):
    """Trace `flat_fun(*tracers) -> list of outputs` on the types of `args`.

    Returns (jaxpr, hoisted): a closed jaxpr whose leading invars stand for `hoisted` (values
    it closed over: tracers of enclosing traces, arrays). With `known`, and every argument
    known, the function runs with KnownTracers (so Python control flow on values works).
    `differentiates`: True when the caller differentiates the trace (grad, vjp, jvp), False
    when it only replays it through the enclosing differentiations (vmap); None when the
    trace is staged (see `custom_rule_depth`).
    """
    parent = current_trace()
    vals = [known_value(a) for a in args]
    use_known = known and all(v is not None for v in vals) and \
        (parent is None or isinstance(parent, KnownTrace))
    cls = KnownTrace if use_known else JaxprTrace
    trace = cls(parent, fun_name=name, fun_location="", purpose=purpose)
    if differentiates is not None:
        trace.custom_rule_depth = custom_rule_depth(parent) + int(differentiates)
    with push_trace(trace):
        if use_known:
            tracers = [trace.new_known_arg(v, aval_of(a)) for v, a in zip(vals, args)]
        else:
            tracers = [trace.new_arg(aval_of(a)) for a in args]
        outs = flat_fun(*tracers)
        jaxpr, hoisted = trace.finish_hoisted(list(outs))
    return jaxpr, hoisted


def trace_avals(flat_fun, avals, *, name="body"):
    """Trace `flat_fun` on fresh tracers of `avals` into a closed jaxpr with no captures
    (bodies of control flow built by the rules). Captured values become an error."""
    trace = JaxprTrace(current_trace(), fun_name=name, fun_location="", purpose=name)
    with push_trace(trace):
        tracers = [trace.new_arg(av) for av in avals]
        outs = flat_fun(*tracers)
        jaxpr, hoisted = trace.finish_hoisted(list(outs))
    if hoisted:
        raise AssertionError(f"internal: a transformed {name} captured {len(hoisted)} values")
    return jaxpr


def closed(jaxpr: Jaxpr) -> ClosedJaxpr:
    return ClosedJaxpr(jaxpr, ())


# --- replaying ------------------------------------------------------------------------------

def read_literal(atom):
    """A literal as a typed scalar (so lax's strict dtypes see what the jaxpr said)."""
    from ..array import as_array
    return as_array(literal_value(atom), atom.aval.weak_type)


class keep_source:
    """`with keep_source(eqn):` equations emitted inside carry `eqn`'s user line (so the
    gradient of `y = jnp.exp(x)` points at that line, not at the call of grad)."""

    # each thread's open blocks, innermost last: an equation a nested block gave its line
    # (an inlined equation of a checkpointed function) keeps that line, not the call's
    _threads = threading.local()

    def __init__(self, eqn):
        self.eqn = eqn
        self.trace = current_trace()
        self.nested = set()  # ids of the equations nested blocks placed

    def __enter__(self):
        self.start = len(self.trace.eqns) if self.trace is not None else 0
        self.open_blocks = keep_source._threads.__dict__.setdefault("open", [])
        self.open_blocks.append(self)
        return self

    def __exit__(self, *exc):
        self.open_blocks.remove(self)
        if self.trace is None:
            return False
        emitted = self.trace.eqns[self.start:]
        if self.eqn.source is not None:
            for e in emitted:
                if id(e) not in self.nested:
                    e.source = self.eqn.source
        outer = self.open_blocks[-1] if self.open_blocks else None
        if outer is not None and outer.trace is self.trace:
            outer.nested.update(id(e) for e in emitted)
        return False


# --- array helpers (all bind primitives) -----------------------------------------------------

def scalar(value, dtype, weak=False):
    """A typed scalar: a literal inside a trace."""
    from ..array import as_array
    return as_array(np.asarray(value, dtype), weak)


def full(shape, value, dtype):
    s = scalar(value, dtype)
    if tuple(shape) == ():
        return s
    return P.broadcast_in_dim_p.bind(s, shape=tuple(shape), broadcast_dimensions=())


def zeros(aval):
    return full(aval.shape, 0, aval.dtype)


def zeros_like(x):
    return zeros(aval_of(x))


def convert(x, dtype):
    av = aval_of(x)
    if av.dtype == np.dtype(dtype):
        return x
    return P.convert_element_type_p.bind(x, new_dtype=np.dtype(dtype), weak_type=False)


def broadcast_to(x, shape):
    """`x` (shape () or the same rank with 1s) broadcast to `shape`."""
    av = aval_of(x)
    if av.shape == tuple(shape):
        return x
    if av.ndim == 0:
        return P.broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=())
    return P.broadcast_in_dim_p.bind(x, shape=tuple(shape),
                                     broadcast_dimensions=tuple(range(av.ndim)))


def unbroadcast(ct, aval):
    """Sum `ct` down to `aval`'s shape (the transpose of elementwise broadcasting)."""
    if ct is None:
        return None
    cav = aval_of(ct)
    if cav.shape == aval.shape:
        return convert(ct, aval.dtype) if cav.dtype != aval.dtype else ct
    if aval.ndim == 0:
        out = P.reduce_sum_p.bind(ct, axes=tuple(range(cav.ndim)))
    else:
        axes = tuple(i for i, (a, b) in enumerate(zip(aval.shape, cav.shape)) if a != b)
        out = P.reduce_sum_p.bind(ct, axes=axes)
        out = P.reshape_p.bind(out, new_sizes=tuple(aval.shape), dimensions=None)
    return convert(out, aval.dtype)


def add_any(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return P.add_p.bind(a, b)


def mul(a, b):
    return P.mul_p.bind(a, b)


def neg(a):
    return P.neg_p.bind(a)


def with_weak_type_of(x, primal):
    """`x` (a cotangent) weakly typed when `primal` is: JAX's cotangent has its primal's
    type (`grad(f)(0.5)` is weak)."""
    pa, av = aval_of(primal), aval_of(x)
    if av.weak_type or not pa.weak_type or av.dtype != pa.dtype:
        return x
    if isinstance(x, Tracer):
        return P.convert_element_type_p.bind(x, new_dtype=av.dtype, weak_type=True)
    from ..array import as_array
    return as_array(np.asarray(x, av.dtype), True)


def strong(x):
    """`x` strongly typed (cotangents entering a transformed jaxpr are strong)."""
    av = aval_of(x)
    if not av.weak_type:
        return x
    if isinstance(x, Tracer):
        return P.convert_element_type_p.bind(x, new_dtype=av.dtype, weak_type=False)
    from ..array import as_array
    return as_array(np.asarray(x, av.dtype), False)


def instantiate(t, aval):
    return zeros(aval) if t is None else t


def iota(dtype, shape, dimension):
    return P.iota_p.bind(dtype=np.dtype(dtype), shape=tuple(shape), dimension=dimension)


def moveaxis(x, src, dst):
    av = aval_of(x)
    if src == dst:
        return x
    perm = [i for i in range(av.ndim) if i != src]
    perm.insert(dst, src)
    return P.transpose_p.bind(x, permutation=tuple(perm))
