"""Tracing Python functions into jaxprs (JAX's DynamicJaxprTrace, in small).

Every primitive application goes through `bind`. With no trace active it runs the
primitive's NumPy `impl` at once (eager mode, used by `jitviz.numpy` outside jit); inside a
trace it appends an equation and returns tracers. Traces nest (the bodies of cond, while,
scan and nested jit): a tracer of an enclosing trace used in an inner one is captured and
becomes an explicit operand of the control-flow equation, as in JAX.
"""
from __future__ import annotations

import contextlib
import sys
import threading
import weakref

import numpy as np

from .. import dtypes
from ..config import config as _config
from ..array import Array
from . import explain
from .ir import ClosedJaxpr, ConstOrigin, Eqn, Jaxpr, Literal, ShapedArray, Var
from .source import source_info_of_frame, user_and_entry_frames, user_frame


class _TraceState(threading.local):
    def __init__(self):
        self.stack: list[JaxprTrace] = []
        # inside `ensure_compile_time_eval()`: operations on concrete values run now
        self.compile_time_eval = 0


_state = _TraceState()


def current_trace():
    stack = _state.stack
    return stack[-1] if stack else None


class Tracer:
    """A value inside a trace: an abstract array standing for every array of its type."""

    __slots__ = ("_trace", "_var", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, trace: "JaxprTrace", var: Var):
        self._trace = trace
        self._var = var

    aval = property(lambda self: self._var.aval)
    shape = property(lambda self: self._var.aval.shape)
    dtype = property(lambda self: self._var.aval.dtype)
    ndim = property(lambda self: len(self._var.aval.shape))
    size = property(lambda self: self._var.aval.size)
    weak_type = property(lambda self: self._var.aval.weak_type)

    def __repr__(self):
        return f"Traced<{self.aval!r}>with<DynamicJaxprTrace>"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}. A traced value cannot be a "
                        "dict key or set element; use a static argument for keys.")

    def __bool__(self):
        raise explain.concretization_error(self, "bool")

    def __index__(self):
        raise explain.concretization_error(self, "__index__")

    def __int__(self):
        raise explain.concretization_error(self, "int")

    def __float__(self):
        raise explain.concretization_error(self, "float")

    def __complex__(self):
        raise explain.concretization_error(self, "complex")

    def __array__(self, dtype=None, copy=None):
        raise explain.concretization_error(self, "__array__")

    def tolist(self):
        raise explain.concretization_error(self, "tolist")

    @property
    def val(self):
        """JAX's vmap tracers carry their batch in `.val` (internals); a jitviz tracer stands
        for a type only, so reading it says why there is no value."""
        raise AttributeError(explain.no_traced_value(self))

    def item(self, *args):
        raise explain.concretization_error(self, "item")

    def block_until_ready(self):
        return self


class JaxprTrace:
    """Builds one jaxpr: the root trace of a function, or the body of a control-flow op."""

    def __init__(self, parent: "JaxprTrace | None", *, fun_name: str, fun_location: str,
                 purpose: str, report=None, origins=None):
        self.parent = parent
        self.level = 0 if parent is None else parent.level + 1
        self.fun_name = fun_name
        self.fun_location = fun_location
        self.purpose = purpose  # "jit", "make_jaxpr", "cond branch", ...
        self.report = report if report is not None else (parent.report if parent else None)
        self.origins = origins if origins is not None else (parent.origins if parent else {})
        self.root = self if parent is None else parent.root
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.captured: dict[int, tuple[Tracer, Var]] = {}
        self.consts: dict[int, tuple[object, Var]] = {}
        self._const_refs: dict[int, object] = {}  # id -> the user's object (kept alive)
        self.producer: dict[int, Eqn] = {}
        self.arg_names: dict[int, str] = {}
        self.alive = True
        self._last_entry = None  # (root's) the frame the last equation's call entered by

    # -- building --------------------------------------------------------------------------
    def new_arg(self, aval: ShapedArray, name: str | None = None) -> Tracer:
        var = Var(aval)
        self.invars.append(var)
        if name is not None:
            self.arg_names[var.id] = name
        return Tracer(self, var)

    def is_enclosed_by(self, other: "JaxprTrace") -> bool:
        t = self.parent
        while t is not None:
            if t is other:
                return True
            t = t.parent
        return False

    def to_atom(self, x):
        if isinstance(x, Tracer):
            owner = x._trace
            if owner is self:
                return x._var
            if owner.alive and self.is_enclosed_by(owner):
                # a staged scalar constant is a literal everywhere; anything else is captured
                return x._var if isinstance(x._var, Literal) else self._capture(x)
            raise explain.leaked_tracer_error(x)
        return self._const_atom(x)

    def _capture(self, tracer: Tracer) -> Var:
        hit = self.captured.get(id(tracer))
        if hit is None:
            hit = self.captured[id(tracer)] = (tracer, Var(tracer.aval))
        return hit[1]

    def _const_atom(self, x):
        value, aval = concrete_aval(x, "a constant")
        value = as_typed(value, aval)
        origin = self._origin_of(x)
        # scalars become literals, except a 0-d jitviz Array made before this trace and
        # closed over: that is a constvar, as in JAX
        if aval.shape == () and not (isinstance(x, Array) and not x.in_trace):
            return Literal(_literal_val(x, value), aval, origin)
        hit = self.consts.get(id(x))
        if hit is None:
            # bake in a snapshot: later in-place changes must not leak into compiled code
            snapshot = np.array(value, copy=True)
            hit = self.consts[id(x)] = (snapshot, Var(aval, origin))
            self._const_refs[id(x)] = x  # keep `x` alive so its id stays unique
        return hit[1]

    def _origin_of(self, x) -> ConstOrigin:
        src = source_info_of_frame(user_frame(sys._getframe(2)))
        for obj in _provenance(x):  # x, then the user's value it was converted from
            for kind, name, fp in self.origins.get(id(obj), ()):
                # small ints and floats are shared objects: trust the name if the line uses it
                if isinstance(obj, np.ndarray) or (src is not None and
                                                   _mentions(src.code, name)):
                    return ConstOrigin(kind, name, fp, src)
        return ConstOrigin("literal" if np.ndim(x) == 0 else "computed", None, None, src)

    def emit(self, prim, args, params):
        atoms = [self.to_atom(a) for a in args]
        try:
            out = prim.abstract_eval(*[a.aval for a in atoms], **params)
        except (TypeError, ValueError) as e:
            raise explain.annotate_rule_error(e, prim, args)
        out_avals = out if prim.multiple_results else [out]
        user, entry = user_and_entry_frames(sys._getframe(2))
        src = source_info_of_frame(user)
        outvars = [Var(av) for av in out_avals]
        eqn = Eqn(prim, atoms, outvars, params, src)
        self.eqns.append(eqn)
        for v in outvars:
            self.producer[v.id] = eqn
        if self.report is not None and src is not None:
            key = (src.file, src.line, src.code)
            self.report.eqns_per_line[key] += 1
            # the frame the user's line called into jitviz with: a new one is a new call.
            # Holding the last one keeps its memory from being reused by the next call's
            root = self.root
            if entry is not root._last_entry:
                root._last_entry = entry
                self.report.calls_per_line[key] += 1
        tracers = [Tracer(self, v) for v in outvars]
        return tracers if prim.multiple_results else tracers[0]

    def _used_consts(self, outvars):
        """(key, (value, var)) of the constants the jaxpr uses: a constant staged by
        `jnp.array` and then dropped leaves no constvar (JAX drops unused constants too)."""
        used = {a.id for e in self.eqns for a in e.invars if isinstance(a, Var)}
        used |= {v.id for v in outvars if isinstance(v, Var)}
        return [(k, cv) for k, cv in self.consts.items() if cv[1].id in used]

    def finish_closed(self, outs) -> ClosedJaxpr:
        """The root jaxpr: concrete arrays become constvars; captured tracers too."""
        self._last_entry = None  # (a frame keeps its locals alive)
        outvars = [self.to_atom(o) for o in outs]
        consts = self._used_consts(outvars)
        constvars = [v for _, (_, v) in consts] + [v for _, v in self.captured.values()]
        values = [c for _, (c, _) in consts] + [t for t, _ in self.captured.values()]
        self.alive = False
        return ClosedJaxpr(Jaxpr(constvars, self.invars, outvars, self.eqns), values)

    def finish_hoisted(self, outs):
        """A body jaxpr with no constvars: what it captured comes first among its invars.

        Returns (jaxpr, hoisted) where `hoisted` are the outer values (tracers of enclosing
        traces, concrete arrays) to pass as the leading operands.
        """
        outvars = [self.to_atom(o) for o in outs]
        consts = self._used_consts(outvars)
        hoisted_vars = [v for _, v in self.captured.values()] + [v for _, (_, v) in consts]
        # the user's objects, not snapshots: the enclosing trace snapshots them once, and
        # cond branches that close over the same array share one operand
        hoisted = [t for t, _ in self.captured.values()] + \
            [self._const_refs[k] for k, _ in consts]
        self.alive = False
        return Jaxpr((), hoisted_vars + self.invars, outvars, self.eqns), hoisted


def _mentions(code: str, name: str) -> bool:
    import re
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", code or "") is not None


class push_trace:
    """`with push_trace(trace):` makes `trace` the current one for this thread."""

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        _state.stack.append(self.trace)
        return self.trace

    def __exit__(self, *exc):
        popped = _state.stack.pop()
        assert popped is self.trace
        self.trace.alive = False
        return False


def is_device_array(x) -> bool:
    """An array living on a GPU (a CUDA backend output, a Numba device array, anything with
    `__cuda_array_interface__`, or a simulator array)."""
    t = type(x)
    if t in _DEVICE_ARRAY_TYPES:
        return True
    if getattr(t, "__jitviz_device_array__", False) or (
            t.__name__ in _NUMBA_DEVICE_ARRAYS and t.__module__.startswith("numba")):
        _DEVICE_ARRAY_TYPES.add(t)
        return True
    # asked of the value, not its type: a PyTorch CPU tensor's property raises AttributeError
    return hasattr(x, "__cuda_array_interface__")


#: types whose every value is a device array. Numba's `__cuda_array_interface__` is a property
#: that builds a dict (3 us on a GPU machine's host), so those are recognised by type: a
#: jitted CUDA call asks three times per argument.
_DEVICE_ARRAY_TYPES: set = set()
_NUMBA_DEVICE_ARRAYS = ("DeviceNDArray", "MappedNDArray", "ManagedNDArray", "FakeCUDAArray")


def host_array(x, dtype) -> np.ndarray:
    """`x` as a NumPy array on the host (copying a device array back)."""
    if is_device_array(x) and hasattr(x, "copy_to_host"):
        x = x.copy_to_host()
    return np.asarray(x, dtype)


def device_aval(x, what: str) -> ShapedArray:
    """The abstract value of a device array, without copying it."""
    dt = dtypes.check_supported(np.dtype(x.dtype), what)
    return ShapedArray(tuple(x.shape), dt, bool(getattr(x, "weak_type", False)))


def concrete_aval(x, what: str):
    """(numpy value, aval) of a concrete leaf; a clear TypeError for anything else."""
    t = type(x)
    if (t is Array or t is np.ndarray) and x.dtype in dtypes.NATIVE_SUPPORTED:
        # the common case, first: every eager jnp operation reads its operands' avals
        return x, ShapedArray(x.shape, dtypes.canonicalize(x.dtype),
                              x.weak_type if t is Array else False)
    if is_device_array(x):
        x = host_array(x, None)
    if isinstance(x, np.ma.MaskedArray):
        raise explain.masked_array_error(what)
    if isinstance(x, np.ndarray):
        dt = dtypes.check_supported(x.dtype, what)
        if dt != x.dtype:  # big-endian: compute in native byte order
            x = x.astype(dt)
        # without x64 a 64-bit array is typed 32-bit, as in JAX; the value is converted
        # where it is used (`as_typed`), not here: avals are read on every jit call
        return x, ShapedArray(x.shape, dtypes.canonicalize(dt), getattr(x, "weak_type", False))
    if isinstance(x, np.generic):
        dt = dtypes.canonicalize(dtypes.check_supported(x.dtype, what))
        return x.astype(dt), ShapedArray((), dt, False)
    if isinstance(x, (bool, int, float, complex)):
        try:
            dt, weak = dtypes.python_scalar_dtype(x)
        except OverflowError:
            raise explain.int_overflow_error(x, dtypes.default_int(), what) from None
        with np.errstate(over="ignore"):  # 1e100 is inf in float32, as in JAX
            return np.array(x, dt)[()], ShapedArray((), dt, weak)
    raise explain.bad_value_error(x, what)


def as_typed(value, aval: ShapedArray):
    """A concrete value as a plain NumPy value of its aval's dtype (a 64-bit NumPy array is
    converted to the 32-bit type it was given without x64)."""
    if isinstance(value, np.ndarray):
        value = value.view(np.ndarray) if type(value) is not np.ndarray else value
        return value if value.dtype == aval.dtype else value.astype(aval.dtype)
    return value


def eager_apply(prim, args, params):
    """Run a primitive on concrete values now (no trace active)."""
    values, avals = [], []
    for a in args:
        if isinstance(a, Tracer):
            raise explain.leaked_tracer_error(a)
        v, av = concrete_aval(a, f"an operand of {prim.name}")
        # impls compute with NumPy: a plain array, since an Array's operators are JAX's
        values.append(as_typed(v, av))
        avals.append(av)
    try:
        out_avals = prim.abstract_eval(*avals, **params)
    except (TypeError, ValueError) as e:
        raise explain.annotate_rule_error(e, prim, args)
    out = prim.impl(*values, **params)
    if _config.debug_nans or _config.debug_infs:
        from ..debug_nans import check_eager
        check_eager(prim, values, out)
    if prim.multiple_results:
        return [to_array(o, av) for o, av in zip(out, out_avals)]
    return to_array(out, out_avals)


def to_array(value, aval: ShapedArray) -> Array:
    """A NumPy result as a jitviz Array of exactly the abstract type."""
    arr = np.asarray(value)
    if arr.dtype != aval.dtype:
        arr = arr.astype(aval.dtype)
    if arr.shape != aval.shape:
        arr = np.broadcast_to(arr, aval.shape).copy()
    out = arr.view(Array)
    out.weak_type = aval.weak_type
    return out


def bind(prim, args, params):
    stack = _state.stack
    if not stack or (_state.compile_time_eval
                     and not any(isinstance(a, Tracer) for a in args)):
        return eager_apply(prim, args, params)
    return stack[-1].emit(prim, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """`jax.ensure_compile_time_eval()`: inside the block, operations whose operands are all
    concrete run at once, even inside `jit` (their results are concrete: usable in Python
    `if`s and as shapes); operations on traced values are traced as usual."""
    _state.compile_time_eval += 1
    try:
        yield
    finally:
        _state.compile_time_eval -= 1


def trace_body(fun, in_avals, *, name: str, purpose: str, arg_names=None, location=""):
    """Trace `fun` on fresh tracers of `in_avals` in a child of the current trace.

    Returns (trace, raw outputs). Used for the bodies of control flow. `name`, `location`
    and `arg_names` describe the user's function (for error messages: "while tracing the
    function body at f.py:3 for scan ... depends on the value of the argument c").
    """
    parent = current_trace()
    trace = JaxprTrace(parent, fun_name=name, fun_location=location, purpose=purpose)
    with push_trace(trace):
        args = [trace.new_arg(av, n) for av, n in
                zip(in_avals, arg_names or [None] * len(in_avals))]
        outs = fun(*args)
    return trace, outs


def is_tracer_of(x, trace) -> bool:
    """Is `x` a tracer made by `trace` or one of its child traces?"""
    if not isinstance(x, Tracer):
        return False
    t = x._trace
    while t is not None:
        if t is trace:
            return True
        t = t.parent
    return False


def _literal_val(x, value):
    """The value a literal prints: a Python scalar keeps its own value (JAX prints `0.1`,
    `1e+100`, not the float32 it becomes), as does `jnp.array(0.1)` made inside the trace."""
    if type(x) in (bool, int, float, complex):
        return x
    py = getattr(x, "py_value", None)
    if py is not None:
        return py
    return value[()] if isinstance(value, np.ndarray) else value


def stage(x):
    """Lift a concrete value into the current trace, as JAX's `stage`: inside a trace,
    `jnp.array(constant)` is a tracer too (a literal for a scalar, a constvar for an array),
    so code that computes with it is traced, and using the result as a shape is an error,
    as in JAX. Outside a trace, or for a tracer, `x` itself."""
    trace = current_trace()
    if trace is None or isinstance(x, Tracer) or _state.compile_time_eval:
        return x
    return Tracer(trace, trace.to_atom(x))


def _provenance(x, depth=4):
    """`x` and the values it was converted from (jitviz Arrays remember `derived_from`)."""
    while x is not None and depth:
        yield x
        x = getattr(x, "derived_from", None)
        depth -= 1
