"""Host callbacks: `jitviz.pure_callback`, `jitviz.experimental.io_callback` and
`jitviz.debug.callback` call a Python function with concrete NumPy values from jitted code, on
every call (a plain Python call inside a jitted function runs once, while tracing).

Three primitives, as in JAX: `pure_callback` (results of declared shapes and dtypes, no side
effects: an unused result may be removed), `io_callback` (results, and effects: never removed,
never merged) and `debug_callback` (no results, an effect). The function reaches generated code
through a *slot*: a name (`module.qualname#k`) written into the code's text, looked up at run
time in `_SLOTS`. A kernel cache keyed by text thus never gives one callback another's kernel
(a slot names one live callback), and a slot is free again once its callback is garbage, so a
re-run notebook cell reuses the text, hence the cached kernel, of the run it replaces.
"""
from __future__ import annotations

import functools
import weakref

import numpy as np

from .core.ir import ShapedArray
from .core.registry import primitive
from .tree import tree_flatten, tree_unflatten

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


# --- the called function and its slot ----------------------------------------------------------

_SLOTS: "weakref.WeakValueDictionary[str, HostCallback]" = weakref.WeakValueDictionary()
_INTERNED: "weakref.WeakValueDictionary[tuple, HostCallback]" = weakref.WeakValueDictionary()


class HostCallback:
    """A user function as an equation calls it: flat operands in (unflattened to the user's
    args and kwargs by `in_tree`), flat results out, checked against `result_avals`."""

    __slots__ = ("fn", "api", "in_tree", "out_tree", "result_avals", "static", "slot",
                 "__weakref__")

    def __init__(self, fn, api, in_tree, out_tree, result_avals, static=None):
        self.fn, self.api, self.in_tree = fn, api, in_tree
        self.out_tree, self.result_avals = out_tree, tuple(result_avals)
        self.static = dict(static or {})  # leaf index -> a value passed as it is (a string)
        self.slot = _free_slot(_name_of(fn))
        _SLOTS[self.slot] = self

    def __call__(self, *flat_args):
        traced = iter(_read_only(a) for a in flat_args)
        leaves = [self.static[i] if i in self.static else next(traced)
                  for i in range(len(self.static) + len(flat_args))]
        args, kwargs = tree_unflatten(self.in_tree, leaves)
        try:
            out = self.fn(*args, **kwargs)
        except ValueError as e:
            if "read-only" not in str(e):
                raise
            raise ValueError(
                f"{self.api}: the callback {_name_of(self.fn)} wrote into one of its operands "
                f"({e}): they are read-only, as JAX's arrays are. Fix: compute a new array "
                "(x = x + 1) or write into a copy (x = np.array(x))") from e
        if self.out_tree is None:  # debug.callback: the return value is ignored, as in JAX
            return []
        return self._checked(out)

    def _checked(self, out):
        """JAX's check: as many arrays as declared (a list for a declared tuple is fine: the
        results take the declared structure), each of its declared shape and dtype."""
        leaves, tree = tree_flatten(out)
        if len(leaves) != len(self.result_avals):
            raise TypeError(
                f"{self.api}: the callback {_name_of(self.fn)} returned {len(leaves)} "
                f"array(s) ({tree}, a {type(out).__name__}), but result_shape_dtypes declares "
                f"{len(self.result_avals)} ({self.out_tree}). Fix: return one array per "
                "ShapeDtypeStruct of result_shape_dtypes (a single array for one, a tuple "
                "for a tuple of them), or change it.")
        return [_checked_leaf(self, k, leaf, aval)
                for k, (leaf, aval) in enumerate(zip(leaves, self.result_avals))]

    @property
    def name(self) -> str:
        """`module.qualname` of the function (what errors and annotations call it)."""
        return _name_of(self.fn)

    def __repr__(self):
        return repr(self.fn)


def _read_only(value):
    """The callback's view of an operand: it may be the program's own buffer (the
    interpreter's, a driver's), and arrays are immutable, as JAX's are to its callbacks."""
    view = np.asarray(value).view()
    view.flags.writeable = False
    return view


def _checked_leaf(cb, k, leaf, aval):
    value = np.asarray(leaf)
    where = f"result {k}" if len(cb.result_avals) > 1 else "its result"
    if value.shape != aval.shape or not _dtype_fits(value.dtype, aval.dtype):
        raise TypeError(
            f"{cb.api}: the callback {_name_of(cb.fn)} returned {_type_text(value)} for "
            f"{where}, but result_shape_dtypes declares {aval.str_short()}. Fix: return an "
            f"array of shape {aval.shape} and dtype {aval.dtype.name} (e.g. "
            f"np.asarray(result, np.{aval.dtype.name})), or declare "
            f"ShapeDtypeStruct({value.shape}, np.{value.dtype.name}).")
    return np.array(value, dtype=aval.dtype, order="C")  # a copy: 0-d stays 0-d


def _dtype_fits(got, declared) -> bool:
    """JAX's rule: the exact dtype, or (without x64) the 64-bit type the declared 32-bit one
    stands for (NumPy and Python scalars compute in float64/int64)."""
    if got == declared:
        return True
    from .config import config
    if config.read("enable_x64"):
        return False
    wide = {np.float32: np.float64, np.int32: np.int64, np.uint32: np.uint64,
            np.complex64: np.complex128}
    return wide.get(declared.type) == got.type


def _type_text(value) -> str:
    if value.dtype.kind not in "biufc":
        return f"a {value.dtype} array (not a number)"
    return ShapedArray(value.shape, value.dtype, False).str_short()


def _name_of(fn) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    return f"{getattr(fn, '__module__', None) or '?'}.{name}"


def _free_slot(name: str) -> str:
    """`name#k`, the lowest k no live callback holds (a kernel's text names its slot)."""
    k = 0
    while f"{name}#{k}" in _SLOTS:
        k += 1
    return f"{name}#{k}"


def host_callback(fn, api, in_tree, out_tree, result_avals, static=None) -> HostCallback:
    """The one live HostCallback for this function, structure, result types and static
    arguments (every trace of a jitted function that calls `fn` the same way shares its slot,
    hence its kernels; ids are safe keys: the entry lives only as long as the callback, which
    holds `fn` and the static values)."""
    static = dict(static or {})
    key = (id(fn), api, in_tree, out_tree, tuple(result_avals),
           tuple((i, id(v)) for i, v in sorted(static.items())))
    cb = _INTERNED.get(key)
    if cb is None or cb.fn is not fn:
        cb = HostCallback(fn, api, in_tree, out_tree, result_avals, static)
        _INTERNED[key] = cb
    return cb


def _split_static(flat):
    """debug.callback's operands, as JAX splits them: arrays and numbers are traced, other
    leaves (strings, objects) reach the callback as they are."""
    from .lax import aval_of
    traced, static = [], {}
    for i, leaf in enumerate(flat):
        try:
            aval_of(leaf)
        except TypeError:
            static[i] = leaf
        else:
            traced.append(leaf)
    return traced, static


def call_slot(slot: str, dtypes: tuple, args: tuple, batch_rank: int = 0):
    """What generated code calls: the callback in `slot` on `args` (cast back to their dtypes:
    a Numba region boxes a float32 scalar as a Python float); rank-0 results as scalars."""
    cb = _SLOTS.get(slot)
    if cb is None:
        raise RuntimeError(f"the host callback {slot} was garbage collected while code calling "
                           "it still ran; keep the jitted function (and its callback) alive")
    outs = run_callback(cb, [np.asarray(a, dtype=np.dtype(d)) for a, d in zip(args, dtypes)],
                        batch_rank)
    return tuple(o if o.ndim else o[()] for o in outs)


def run_callback(cb: HostCallback, args, batch_rank: int = 0) -> list:
    """Every backend's call: `cb` on the operands; with `batch_rank` leading batch axes
    (debug.callback under vmap) once per example, in order."""
    if batch_rank:
        for index in np.ndindex(*np.shape(args[0])[:batch_rank]):
            cb(*[np.asarray(a)[index] for a in args])
        return []
    return cb(*args)


# --- the primitives ----------------------------------------------------------------------------

def _results_rule(*avals, result_avals, **params):
    return list(result_avals)


def _impl(*args, callback, **params):
    return run_callback(callback, args, params.get("batch_rank", 0))


def _pp_callback(params):
    """JAX's order: the callback first, then the other params by name."""
    return [("callback", params["callback"])] + [
        (k, _jax_text(params[k])) for k in sorted(params) if k != "callback"]


def _jax_text(value):
    if isinstance(value, tuple) and all(isinstance(a, ShapedArray) for a in value):
        return "(" + "".join(f"ShapedArray({a}), " for a in value).rstrip(" ") + ")"
    return value


pure_callback_p = primitive("pure_callback", abstract_eval=_results_rule, impl=_impl,
                            multiple_results=True, pp_params=_pp_callback, kind="other")
io_callback_p = primitive("io_callback", abstract_eval=_results_rule, impl=_impl,
                          multiple_results=True, pp_params=_pp_callback, kind="other",
                          effectful=True)
debug_callback_p = primitive("debug_callback", abstract_eval=lambda *a, **p: [], impl=_impl,
                             multiple_results=True, pp_params=_pp_callback, kind="other",
                             effectful=True)
CALLBACK_PRIMITIVES = (pure_callback_p, io_callback_p, debug_callback_p)


# --- the API -------------------------------------------------------------------------------------

def _result_types(api, result_shape_dtypes):
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for k, leaf in enumerate(leaves):
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(
                f"{api}: result_shape_dtypes must be a pytree of jitviz.ShapeDtypeStruct (or "
                f"arrays), got {leaf!r} at leaf {k}. Fix: e.g. "
                "jitviz.ShapeDtypeStruct(x.shape, x.dtype) for a result shaped like x.")
        avals.append(ShapedArray(tuple(shape), np.dtype(dtype),
                                 bool(getattr(leaf, "weak_type", False))))
    return tree, avals


def _checked_callable(api, fn):
    if not callable(fn):
        raise TypeError(f"{api}: the callback must be callable, got {type(fn).__name__} "
                        f"({fn!r}); pass the function first, then result_shape_dtypes")


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """`jax.pure_callback`: call `callback(*args, **kwargs)` on the host with NumPy arrays and
    return its results, which must match `result_shape_dtypes` (a pytree of
    `ShapeDtypeStruct`). The callback must be pure: jitviz may drop a call whose results are
    unused. `vmap_method` says how `vmap` calls it: 'sequential' (once per example),
    'expand_dims' (once, unbatched arguments with a leading axis of size 1), 'broadcast_all'
    (once, every argument with the batch axis); None: vmap raises. `sharding` is accepted
    and ignored (jitviz runs on one device)."""
    api = "pure_callback"
    _checked_callable(api, callback)
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"{api}: vmap_method must be one of {list(VMAP_METHODS)}, got "
                         f"{vmap_method!r}")
    out_tree, avals = _result_types(api, result_shape_dtypes)
    flat, in_tree = tree_flatten((args, kwargs))
    cb = host_callback(callback, api, in_tree, out_tree, avals)
    outs = pure_callback_p.bind(*flat, callback=cb, result_avals=tuple(avals), sharding=None,
                                vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """`jax.experimental.io_callback`: a callback with side effects (reading a file, logging):
    called on every call even if its results are unused, never merged with another. Calls run
    in program order on every backend here (jitviz runs one device), so `ordered=True` only
    adds JAX's restrictions: no `vmap`."""
    api = "io_callback"
    _checked_callable(api, callback)
    out_tree, avals = _result_types(api, result_shape_dtypes)
    flat, in_tree = tree_flatten((args, kwargs))
    cb = host_callback(callback, api, in_tree, out_tree, avals)
    outs = io_callback_p.bind(*flat, callback=cb, ordered=bool(ordered),
                              result_avals=tuple(avals), sharding=None)
    return tree_unflatten(out_tree, outs)


def debug_callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """`jax.debug.callback`: call `callback(*args, **kwargs)` with NumPy values on every call
    (under `vmap` once per example, as `jitviz.debug.print`); its return value is ignored.
    Without a callback, a decorator (`@jitviz.debug.callback(ordered=True)`, as JAX). Calls
    run in program order here whether or not `ordered` (it is printed as JAX's effect)."""
    if callback is None:
        if args or kwargs:
            raise TypeError("debug_callback received unexpected arguments in the two-call "
                            f"form: {args=} {kwargs=}. Fix: debug.callback(ordered=True)"
                            "(fn, *args)")
        return functools.partial(debug_callback, ordered=ordered, partitioned=partitioned)
    api = "debug.callback"
    _checked_callable(api, callback)
    flat, in_tree = tree_flatten((args, kwargs))
    traced, static = _split_static(flat)
    cb = host_callback(callback, api, in_tree, None, (), static)
    debug_callback_p.bind(*traced, callback=cb, effect="OrderedDebug" if ordered else "Debug",
                          partitioned=bool(partitioned))
    return None


from . import _callback_rules  # noqa: E402,F401 (registers transformation rules and lowerings)
