"""JAX's mutable array references: `jitviz.new_ref`, `jitviz.freeze`, `jitviz.Ref`.

    x_ref = jitviz.new_ref(jnp.zeros(3))

    @jitviz.jit
    def f():
        x_ref[1] += 1.      # read, add, write: in place

    f(); f()
    x_ref                   # Ref([0., 2., 0.], dtype=float32)

How it works: "discharge" at trace time, so that jaxprs stay pure and every backend, `grad`
and `vmap` work unchanged. A Ref is a mutable box. Outside any trace it owns a NumPy buffer
that reads copy from and writes copy into (its address never changes:
`unsafe_buffer_pointer()`). Inside a trace, a read gives the box's current *traced* value and a
write replaces it functionally (`value.at[idx].set(v)`), so what a jaxpr shows is ordinary
indexing and `scatter` equations:

- a Ref made inside the traced function (`new_ref` under `jit`/`grad`/`vmap`) is local state:
  it leaves no trace in the program's interface, and `grad` differentiates through it;
- a Ref from outside that a `jit`/`make_jaxpr` trace reads or writes (an argument, or one the
  function closes over) is an extra *input* of the jaxpr (an argument keeps its place; a
  closed-over one is appended after the arguments), and its final value, when the function
  wrote it, an extra *output* after the function's own. A jitted call feeds each such Ref's
  current value and writes the final value back into its buffer, in place; the cache key
  holds each Ref argument's type as `Ref{f32[3]}`;
- a write inside a `lax.cond`/`switch`/`while_loop`/`fori_loop`/`scan`/`map` body, a
  `checkpoint`ed function or a nested `jit` to a Ref of the enclosing function raises
  `NestedRefWrite` while that body is traced; the construct catches it and traces again with
  the Ref's value as an extra operand (a carry for loops) and its final value as an extra
  result, written back after it (one level at a time when constructs nest; a nested jit is
  inlined instead).

So `make_jaxpr`/`jit(f).trace()` and the explorer show a Ref's state as those inputs and
outputs (`closed.arg_names` names a closed-over one by the variable it was read from), reads
as indexing and writes as `scatter`s or the new value, where JAX prints `Ref{f32[3]}` types
and `get`/`swap`/`addupdate` equations (`b:f32[] <- a[1]`).

What is refused, with the fix in the message: returning a Ref from `jit`, passing one Ref twice
or passing a Ref the function also closes over, math on a Ref (`jnp.sin(x_ref)`: read it with
`x_ref[...]`), writes of another shape or dtype (no broadcasting, as in JAX), an integer index
that is out of bounds when known at trace time, refs to refs, `freeze` outside the scope that
made the Ref, a `while_loop` `cond_fun` that writes a Ref, and writes under `grad`/`vmap` to
a Ref the differentiated or mapped function closes over (JAX allows one of a value that is
not differentiated or batched; vmap a Ref *argument* instead: each instance writes its slice).
"""
from __future__ import annotations

import threading

import numpy as np

from .core.ir import ShapedArray
from .core.trace import Tracer, concrete_aval, current_trace, stage, to_array


# --- the Ref's type in jit's cache key --------------------------------------------------------

class RefAval(ShapedArray):
    """The type of a Ref argument (`Ref{float32[3]}`): equal only to another Ref's type, so
    a call with a Ref and a call with an Array of the same shape are different specializations."""

    __slots__ = ()

    def __init__(self, inner: ShapedArray):
        super().__init__(inner.shape, inner.dtype, inner.weak_type)
        self._hash = hash(("Ref", self._hash))

    def __eq__(self, other):
        return isinstance(other, RefAval) and ShapedArray.__eq__(self, other)

    def __hash__(self):
        return self._hash

    @property
    def inner(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def str_short(self) -> str:
        return f"Ref{{{ShapedArray.str_short(self)}}}"

    def __str__(self):
        return f"Ref{{{ShapedArray.__str__(self.inner)}}}"

    __repr__ = __str__


# --- the Ref -----------------------------------------------------------------------------------

class Ref:
    """A mutable array (`jax.Ref`): `x_ref[idx]` reads an Array, `x_ref[idx] = v` writes in
    place. Not an array itself: no math, no NumPy conversion; read it first (`x_ref[...]`)."""

    __slots__ = ("_aval", "_buffer", "_home", "_value", "_frozen", "__weakref__")
    __jitviz_ref__ = True

    def __init__(self, aval: ShapedArray, buffer=None, home=None, value=None):
        self._aval = aval
        self._buffer = buffer  # a concrete Ref's storage (None for a Ref local to a trace)
        self._home = home  # the trace a local Ref was made in
        self._value = value  # a local Ref's current (traced) value
        self._frozen = False  # a local Ref after `freeze`: no more reads or writes

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))
    size = property(lambda self: self._aval.size)
    weak_type = property(lambda self: self._aval.weak_type)

    def key_aval(self) -> RefAval:
        """Its type as jit's cache key and `jax.typeof` see it: `Ref{float32[3]}`."""
        return RefAval(self._aval)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, idx):
        _check_static_bounds(self.shape, idx)
        return self._location(writing=False).read(idx)

    def __setitem__(self, idx, value):
        _check_static_bounds(self.shape, idx)
        loc = self._location(writing=True)
        value = _cast_for_write(self._aval, idx, value)
        if _is_whole(idx):
            from . import lax
            new = lax.convert_element_type(value, self.dtype, weak_type=self.weak_type)
        else:
            new = loc.value.at[idx].set(value)
        loc.store(new)

    def unsafe_buffer_pointer(self) -> int:
        """The address of a concrete Ref's buffer: the same before and after the jitted calls
        that write it."""
        if self._buffer is None:
            raise ValueError("a Ref made inside a traced function has no buffer: "
                             "unsafe_buffer_pointer() is for Refs made outside jit")
        return self._buffer.ctypes.data

    def __repr__(self):
        trace = current_trace()
        if self._buffer is None or (trace is not None and _scope_of(trace) is not None):
            # inside jit a Ref's value is not known yet (as a tracer's is not)
            return f"Traced<{self.key_aval()}>with<DynamicJaxprTrace>"
        from .array import array_repr
        return array_repr(self._buffer, self.weak_type, "Ref(")

    __str__ = __repr__

    def __array__(self, dtype=None, copy=None):
        raise _not_an_array()

    def __bool__(self):
        raise _not_an_array()

    def __iter__(self):
        raise _not_an_array()

    __float__ = __int__ = __index__ = __complex__ = __bool__

    # -- where the current value lives ---------------------------------------------------------
    def _location(self, writing: bool):
        trace = current_trace()
        target = _redirect_of(self)
        if target is not None:  # threaded through a control-flow body: its carry
            return target._local_location(trace, writing, self)
        if self._home is not None:
            return self._local_location(trace, writing, self)
        if trace is None:
            return _BufferLocation(self)
        scope = _scope_of(trace)
        if scope is None:  # eager grad/vmap/control flow: the program runs once, now
            if writing:
                raise NestedRefWrite(trace, self)
            return _SnapshotLocation(self)
        return scope.open_closed_over(self)._local_location(trace, writing, self)

    def _local_location(self, trace, writing: bool, seen_as):
        home = self._home
        if not home.alive:
            raise ValueError(f"a Ref of type {self.key_aval()} made inside "
                             f"{home.fun_name!r} ({home.purpose}) was used after that function "
                             "returned: a Ref lives only in the traced function that made it. "
                             "Return its value (`x_ref[...]` or `jax.freeze(x_ref)`) instead.")
        if self._frozen:
            raise ValueError(f"a Ref of type {self.key_aval()} was used after jax.freeze: "
                             "freezing ends a Ref made in a traced function; use the Array "
                             "freeze returned")
        if writing and trace is not home:
            raise NestedRefWrite(trace, seen_as)
        return _LocalLocation(self)


def _not_an_array():
    return TypeError("a Ref is not an array: math, NumPy conversion and truth tests need its "
                     "value, so read it first: `x_ref[...]` (or `x_ref[idx]`)")


class _BufferLocation:
    """A concrete Ref outside any trace: reads copy the buffer, writes copy into it."""

    def __init__(self, ref):
        self.ref = ref

    @property
    def value(self):
        """The buffer as an Array, not copied: reads copy what they index (`read`)."""
        return to_array(self.ref._buffer, self.ref._aval)

    def read(self, idx):
        from .numpy import indexing
        out = indexing.getitem(self.value, idx)
        if isinstance(out, np.ndarray) and np.may_share_memory(out, self.ref._buffer):
            out = out.copy()  # a later write must not change what was read
        return out

    def store(self, new):
        self.ref._buffer[...] = np.asarray(new)


class _SnapshotLocation(_BufferLocation):
    """A concrete Ref read inside an eager transformation's trace: a constant of it."""

    @property
    def value(self):
        return to_array(self.ref._buffer.copy(), self.ref._aval)

    def store(self, new):  # (writes are refused before this is made)
        raise AssertionError("internal: a snapshot of a Ref is read-only")


class _LocalLocation:
    def __init__(self, ref):
        self.ref = ref

    @property
    def value(self):
        return self.ref._value

    def read(self, idx):
        from .numpy import indexing
        return indexing.getitem(self.ref._value, idx)

    def store(self, new):
        self.ref._value = new


def _is_whole(idx) -> bool:
    return idx is Ellipsis or (isinstance(idx, tuple) and (
        len(idx) == 0 or (len(idx) == 1 and idx[0] is Ellipsis)))


# --- creating and freezing ---------------------------------------------------------------------

def new_ref(init_val, *, memory_space=None, kind=None) -> Ref:
    """`jax.new_ref(value)`: a new mutable array holding a copy of `value` (an Array, a NumPy
    array or a scalar; its dtype and weak type are kept). Inside a traced function the Ref is
    local state of that function. `memory_space` and `kind` are accepted for JAX's signature
    (one memory space here)."""
    if isinstance(init_val, Ref):
        raise TypeError("new_ref of a Ref: refs to refs are not allowed (as in JAX). Pass its "
                        "value, `new_ref(x_ref[...])`, to make an independent copy.")
    trace = current_trace()
    if isinstance(init_val, Tracer):
        return Ref(init_val.aval, home=trace, value=init_val)
    value, aval = concrete_aval(init_val, "the value given to new_ref")
    if trace is not None:
        return Ref(aval, home=trace, value=stage(to_array(value, aval)))
    buffer = np.array(to_array(value, aval).view(np.ndarray), copy=True)
    return Ref(aval, buffer=buffer)


def freeze(ref: Ref):
    """`jax.freeze(x_ref)`: the Ref's final value as an ordinary immutable Array. Inside a
    trace, only a Ref made in that same function can be frozen (JAX's rule)."""
    if not isinstance(ref, Ref):
        raise TypeError(f"freeze expects a Ref (from jax.new_ref), got {type(ref).__name__}")
    trace = current_trace()
    if trace is not None and ref._home is not trace:
        raise ValueError("freeze of a Ref that was not made in the traced function being "
                         "traced: a Ref can only be frozen in the scope where it was created. "
                         "Read its value with `x_ref[...]` instead.")
    value = ref[...]
    if trace is not None:  # as in JAX, a frozen traced Ref is gone (an eager one stays usable)
        ref._frozen = True
    return value


# --- reading and writing rules -----------------------------------------------------------------

def _aval_of(value, what: str) -> ShapedArray:
    if isinstance(value, Tracer):
        return value.aval
    if isinstance(value, Ref):
        raise TypeError("cannot store a Ref into another Ref: read it first with `x_ref[...]`")
    return concrete_aval(value, what)[1]


def _cast_for_write(ref_aval: ShapedArray, idx, value):
    """JAX's rule: a weakly typed float into a float Ref, and any integer into an integer
    Ref, take the Ref's dtype; any other dtype mismatch, and any shape mismatch (writes do
    not broadcast), is an error."""
    from . import lax
    aval = _aval_of(value, "the value written to a Ref")
    rk, vk = ref_aval.dtype.kind, aval.dtype.kind
    if aval.dtype != ref_aval.dtype and ((aval.weak_type and rk == vk == "f") or
                                         (rk in "iu" and vk in "iu")):
        value = lax.convert_element_type(value, ref_aval.dtype)
        aval = aval.update(dtype=ref_aval.dtype)
    if aval.dtype != ref_aval.dtype:
        raise ValueError(f"a Ref of dtype {ref_aval.dtype.name} cannot be written with a "
                         f"{aval.dtype.name} value: cast it first, e.g. "
                         f"`x_ref[idx] = value.astype(jnp.{ref_aval.dtype.name})`")
    expected = _indexed_shape(ref_aval.shape, idx)
    if aval.shape != expected:
        raise ValueError(f"x_ref[{_index_text(idx)}] has shape {expected} (the Ref's is "
                         f"{ref_aval.shape}), but the value written has shape {aval.shape}: a "
                         "Ref write does not broadcast. Broadcast it yourself, e.g. "
                         f"`jnp.broadcast_to(value, {expected})`")
    return value


def _index_entries(idx):
    return idx if isinstance(idx, tuple) else (idx,)


def _indexed_shape(shape, idx) -> tuple:
    """The shape `x[idx]` has, computed on a dummy (traced and concrete integer indices stand
    in as zeros, which are in bounds: the bounds were checked before)."""
    if _is_whole(idx):
        return tuple(shape)

    def dummy(e):
        if isinstance(e, (slice, type(None), type(Ellipsis))):
            return e
        aval = _aval_of(e, "a Ref index")
        if aval.dtype == np.bool_:
            return e if not isinstance(e, Tracer) else np.ones(aval.shape, bool)
        return np.zeros(aval.shape, np.intp)

    return np.empty(shape, np.bool_)[tuple(dummy(e) for e in _index_entries(idx))].shape


def _index_text(idx) -> str:
    def one(e):
        if e is Ellipsis:
            return "..."
        if isinstance(e, slice):
            parts = ["" if p is None else str(p) for p in (e.start, e.stop, e.step)]
            return ":".join(parts[:2] if e.step is None else parts)
        return "<index>" if isinstance(e, (Tracer, np.ndarray)) else repr(e)
    return ", ".join(one(e) for e in _index_entries(idx))


def _check_static_bounds(shape, idx):
    """A Python integer index at or beyond its axis's size is an error at trace time, as in
    JAX (an Array's index clamps; a Ref's does not)."""
    entries = _index_entries(idx)
    n_ell = sum(1 for e in entries if e is Ellipsis)
    consumed = sum(0 if e is None or e is Ellipsis else
                   (np.ndim(e) if getattr(e, "dtype", None) == np.bool_ else 1)
                   for e in entries)
    axis = 0
    for e in entries:
        if e is Ellipsis:
            axis += max(len(shape) - consumed, 0) if n_ell else 0
            continue
        if e is None:
            continue
        if isinstance(e, (int, np.integer)) and not isinstance(e, bool):
            if axis < len(shape) and int(e) >= shape[axis]:
                raise ValueError(f"Out of bound indexer: idx={int(e)}, dim={shape[axis]}.")
        axis += np.ndim(e) if getattr(e, "dtype", None) == np.bool_ else 1


# --- Refs from outside a jit/make_jaxpr trace: extra inputs and outputs -------------------------

class _Box:
    """A Ref from outside that a jit/make_jaxpr trace reads or writes, opened as one of its
    inputs. The function sees `proxy`, a Ref local to the trace whose value starts as that
    input (so an argument and a closed-over Ref are told apart, as JAX does)."""

    def __init__(self, ref, proxy, source):
        self.ref = ref
        self.proxy = proxy
        self.initial = proxy._value
        self.source = source  # ("argument", leaf index, path) or ("closed", None, name)

    @property
    def written(self) -> bool:
        return self.proxy._value is not self.initial


class RefScope:
    """The Refs from outside that one root trace (`jit`, `make_jaxpr`) uses: `trace.ref_scope`."""

    def __init__(self, trace):
        self.trace = trace
        self.boxes: dict[int, _Box] = {}  # id(ref) -> its box, in the order opened

    def _describe(self) -> str:
        where = f" at {self.trace.fun_location}" if self.trace.fun_location else ""
        return f"{self.trace.fun_name}{where} for {self.trace.purpose}"

    def open_argument(self, ref: Ref, index: int, path: str) -> Ref:
        seen = self.boxes.get(id(ref))
        if seen is not None:
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but when tracing {self._describe()} the mutable array reference "
                f"of type {ref.key_aval()} appeared at both {seen.source[2]} and {path}: pass "
                "it once")
        proxy = Ref(ref.aval, home=self.trace, value=self.trace.new_arg(ref.aval, path))
        self.boxes[id(ref)] = _Box(ref, proxy, ("argument", index, path))
        return proxy

    def open_closed_over(self, ref: Ref) -> Ref:
        box = self.boxes.get(id(ref))
        if box is None:
            name = self._binding_name(ref)
            proxy = Ref(ref.aval, home=self.trace, value=self.trace.new_arg(ref.aval, name))
            box = self.boxes[id(ref)] = _Box(ref, proxy, ("closed", None, name))
        elif box.source[0] == "argument":
            raise ValueError(
                f"when tracing {self._describe()}, a mutable array reference of type "
                f"{ref.key_aval()} was both closed over and passed as the argument "
                f"{box.source[2]}: use one or the other")
        return box.proxy

    def _binding_name(self, ref) -> str:
        """The global or closure variable the function reads the Ref from (`x_ref`), as
        the trace's report found it; else "closed-over Ref"."""
        captured = getattr(self.trace.report, "captured", None) or {}
        return next((b.name for b in captured.values() if b.value_id == id(ref)),
                    "closed-over Ref")

    def closed_over_names(self) -> list:
        """Names of the inputs the closed-over Refs became, in order (after the arguments)."""
        return [b.source[2] for b in self.boxes.values() if b.source[0] == "closed"]

    def close(self, out_leaves):
        """(final values to append to the outputs, the RefBindings a call needs)."""
        for leaf in out_leaves:
            if isinstance(leaf, Ref):
                raise ValueError(
                    f"function {self._describe()} returned a mutable array reference of type "
                    f"{leaf.key_aval()}, but mutable array references cannot be returned: "
                    "return its value (`x_ref[...]`) instead")
        boxes = list(self.boxes.values())
        if not boxes:
            return [], None
        written = [b for b in boxes if b.written]
        bindings = RefBindings(
            closed_refs=tuple(b.ref for b in boxes if b.source[0] == "closed"),
            arg_positions=tuple(b.source[1] for b in boxes if b.source[0] == "argument"),
            written=tuple(b.ref if b.source[0] == "closed" else b.source[1] for b in written),
            n_outputs=len(out_leaves))
        return [b.proxy._value for b in written], bindings


class RefBindings:
    """How a jitted call with Refs runs: which argument leaves are Refs, which Refs it closed
    over (inputs after the arguments), which Refs its extra outputs are written back to."""

    def __init__(self, closed_refs, arg_positions, written, n_outputs):
        self.closed_refs = closed_refs
        self.arg_positions = arg_positions
        self.written = written  # per extra output: a closed-over Ref or an argument position
        self.n_outputs = n_outputs

    def inputs(self, leaves) -> list:
        """The executable's inputs: each Ref's buffer in its place, closed-over ones last."""
        args = list(leaves)
        refs = [args[i] for i in self.arg_positions]
        if len({id(r) for r in refs + list(self.closed_refs)}) != len(refs) + \
                len(self.closed_refs):
            raise ValueError("a Ref was passed twice, or passed as an argument to a function "
                             "that also closes over it: each Ref may reach a jitted function "
                             "only once")
        for i in self.arg_positions:
            if not isinstance(args[i], Ref) or args[i]._buffer is None:
                raise TypeError(f"argument {i} of this specialization must be a Ref made "
                                "outside jit")
            args[i] = args[i]._buffer
        return args + [r._buffer for r in self.closed_refs]

    def write_back(self, leaves, outs) -> list:
        """Copy the final values into the Refs' buffers (in place: addresses stay); the
        function's own outputs, none sharing memory with a buffer."""
        from .core.trace import host_array
        buffers = [leaves[i]._buffer for i in self.arg_positions] + \
            [r._buffer for r in self.closed_refs]
        # an output that is an input's buffer (a value read and returned, or one Ref's value
        # written into another) is copied before the buffers are written
        outs = [o.copy() if isinstance(o, np.ndarray) and
                any(np.may_share_memory(o, b) for b in buffers) else o for o in outs]
        own = outs[:self.n_outputs]
        for target, final in zip(self.written, outs[self.n_outputs:]):
            ref = leaves[target] if isinstance(target, int) else target
            ref._buffer[...] = host_array(final, ref.dtype)
        return own


def function_out_avals(closed) -> list:
    """The types of what the traced function returned: without the Refs' final values that
    follow them in the jaxpr's outputs."""
    avals = closed.out_avals
    return avals if closed.refs is None else avals[:closed.refs.n_outputs]


def _scope_of(trace):
    """The nearest enclosing root trace that takes outside Refs as inputs."""
    t = trace
    while t is not None:
        scope = getattr(t, "ref_scope", None)
        if scope is not None:
            return scope
        t = t.parent
    return None


def open_arguments(trace, leaves, avals, paths) -> list:
    """The values a jit/make_jaxpr trace gives the function: a tracer per array leaf, and each
    Ref argument itself (opened as an input of the trace)."""
    trace.ref_scope = scope = RefScope(trace)
    out = []
    for i, (leaf, aval, path) in enumerate(zip(leaves, avals, paths)):
        if isinstance(aval, RefAval):
            out.append(scope.open_argument(leaf, i, path))
        else:
            out.append(trace.new_arg(aval, path))
    return out


# the purposes a trace made by grad/jvp/vjp ("transformation") or vmap ("vmap") has
_TRANSFORMATION_PURPOSES = ("transformation", "vmap")


class NestedRefWrite(NotImplementedError):
    """A write to a Ref of an enclosing trace from a nested one. `lax.cond`/`switch`/
    `while_loop`/`fori_loop`/`scan`/`map`, `checkpoint` and a nested `jit` catch it and trace
    again with the Ref threaded through (`thread_ref_writes`); anywhere else the user sees
    the message."""

    def __init__(self, trace, ref):
        self.ref = ref
        if trace.purpose in _TRANSFORMATION_PURPOSES:
            message = (
                f"writing a Ref of type {ref.key_aval()} that {trace.fun_name!r} closes over, "
                "inside a transformation (grad, vmap, ...), is not supported: pass the Ref as "
                "an argument of the transformed function (vmap maps it along its axis), or "
                "write it outside the transformation.")
        else:
            message = (
                f"writing a Ref of type {ref.key_aval()} inside {trace.purpose} "
                f"{trace.fun_name!r}, nested in the function the Ref belongs to, is not "
                "supported there (the bodies of lax.cond, switch, while_loop, fori_loop, scan "
                "and map, checkpointed functions and nested jit calls can write it). Read the "
                "Ref before it, pass its value in, return the new value and write it after.")
        super().__init__(message)


# --- Refs written inside control-flow bodies: threaded through as operands and results ---------

class _Redirects(threading.local):
    def __init__(self):
        self.stack: list[dict] = []


_redirects = _Redirects()


def _redirect_of(ref):
    """The Ref local to a control-flow body that stands for `ref` there, if any."""
    for table in reversed(_redirects.stack):
        hit = table.get(id(ref))
        if hit is not None:
            return hit
    return None


def thread_ref_writes(plain, threaded):
    """`plain()`, a control-flow construct; when a body it traces writes a Ref of an enclosing
    trace, `threaded(refs)` instead: the construct traced again with those Refs' values as
    extra operands (carries) and their final values as extra results, written back after it
    (so a write nested in several constructs reaches its Ref one level at a time)."""
    refs = []
    while True:
        try:
            return threaded(list(refs)) if refs else plain()
        except NestedRefWrite as e:
            if any(r is e.ref for r in refs):
                raise
            refs.append(e.ref)


def redirected(refs, values, fun, *args):
    """Call `fun(*args)` inside a body trace with each Ref of `refs` standing for a local Ref
    holding `values` (the body's operands); returns (its result, the final values)."""
    trace = current_trace()
    local = [Ref(r.aval, home=trace, value=v) for r, v in zip(refs, values)]
    _redirects.stack.append({id(r): loc for r, loc in zip(refs, local)})
    try:
        out = fun(*args)
    finally:
        _redirects.stack.pop()
    return out, [loc._value for loc in local]


def redirected_reading(refs, values, fun, *args):
    """`redirected` for a function that may only read the Refs (a while_loop's cond_fun):
    its result; a write is an error, since its value would have nowhere to go."""
    out, finals = redirected(refs, values, fun, *args)
    if any(f is not v for f, v in zip(finals, values)):
        raise NotImplementedError(
            f"{getattr(fun, '__name__', 'cond_fun')} (a while_loop's cond_fun) writes a Ref, "
            "which is not supported: write it in body_fun instead")
    return out


def read_refs(refs) -> list:
    return [r[...] for r in refs]


def write_refs(refs, values) -> None:
    for r, v in zip(refs, values):
        r[...] = v


# --- vmap of a function taking Refs ------------------------------------------------------------

def vmap_ref_arguments(vmap, fun, leaves, in_tree, axes, out_axes, axis_name, axis_size):
    """`vmap(fun)` called with Ref leaves: each Ref's value is mapped as an array along its
    in_axes, every instance gets a Ref local to it holding its slice, and the final values,
    stacked back along the same axes, are written into the Refs (each instance writes its
    own slice, as in JAX)."""
    from .tree import tree_unflatten
    positions = [i for i, x in enumerate(leaves) if isinstance(x, Ref)]

    def discharged(*flat):
        flat = list(flat)
        local = {i: new_ref(flat[i]) for i in positions}
        for i, ref in local.items():
            flat[i] = ref
        out = fun(*tree_unflatten(in_tree, flat))
        return out, [local[i][...] for i in positions]

    discharged.__name__ = discharged.__qualname__ = getattr(fun, "__name__", "fun")
    values = [x[...] if isinstance(x, Ref) else x for x in leaves]
    ref_axes = [axes[i] for i in positions]
    try:
        out, finals = vmap(discharged, in_axes=tuple(axes), out_axes=(out_axes, ref_axes),
                           axis_name=axis_name, axis_size=axis_size)(*values)
    except ValueError as e:
        if None not in ref_axes or "out_axes is None" not in str(e):
            raise
        raise ValueError(
            f"{e}: a Ref argument that is not mapped (in_axes None) was written a value that "
            "differs per instance. Map the Ref along an axis (in_axes=0) so that each instance "
            "writes its own slice, or write only values that do not depend on the mapped "
            "arguments") from None
    for i, final in zip(positions, finals):
        leaves[i][...] = final
    return out
