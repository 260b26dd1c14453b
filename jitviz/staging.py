"""Staging a Python function out to a jaxpr: `trace_to_jaxpr` (what `jit` traces with),
`make_jaxpr`, `eval_shape`, and the argument handling they share: static arguments, pytrees,
naming every leaf (`x`, `d['a']`, `args[1]`) for error messages and recompile reasons."""
from __future__ import annotations

import contextlib
import inspect
import operator
from typing import NamedTuple

import numpy as np

from .core.ir import ClosedJaxpr, ShapedArray
from .core.report import TraceMonitor, TraceReport, referenced_bindings
from .core.source import function_location, function_name
from .core.trace import JaxprTrace, Tracer, concrete_aval, current_trace, device_aval, \
    is_device_array, is_tracer_of, push_trace
from .state import Ref, function_out_avals, open_arguments
from .tree import tree_flatten, tree_map, tree_unflatten


class ArgSpec(NamedTuple):
    """How a function's arguments split into static values and traced leaves."""
    static_argnums: tuple
    static_argnames: tuple
    param_names: tuple  # positional parameter names (for messages)
    varargs: str | None


def arg_spec(fun, static_argnums=(), static_argnames=()) -> ArgSpec:
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    static_argnums = tuple(operator.index(i) for i in static_argnums)
    static_argnames = tuple(static_argnames)
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return ArgSpec(static_argnums, static_argnames, (), None)
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    varargs = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    # as in JAX, static_argnums and static_argnames imply each other where possible
    nums = set(static_argnums)
    names = set(static_argnames)
    n = len(positional)
    for i in static_argnums:
        j = i if i >= 0 else i + n
        if 0 <= j < n:
            names.add(positional[j])
    for name in static_argnames:
        if name in positional:
            nums.add(positional.index(name))
        elif name not in sig.parameters and not any(p.kind == p.VAR_KEYWORD for p in params):
            raise ValueError(f"static_argnames {name!r} is not a parameter of "
                             f"{function_name(fun)}{sig}")
    return ArgSpec(tuple(sorted(nums)), tuple(sorted(names)), tuple(positional), varargs)


def _arg_name(spec: ArgSpec, i: int) -> str:
    if i < len(spec.param_names):
        return spec.param_names[i]
    return f"{spec.varargs or 'args'}[{i - len(spec.param_names)}]"


class SplitArgs(NamedTuple):
    dyn_leaves: list  # the traced leaves
    leaf_paths: list  # a readable name per leaf
    treedef: object  # structure of (dynamic positional args, dynamic kwargs)
    statics: tuple  # ((where, value), ...): the static values, part of jit's cache key
    static_hints: dict  # leaf path -> (argnum or None, parameter name) for "make it static"


def split_args(spec: ArgSpec, args, kwargs) -> SplitArgs:
    nargs = len(args)
    static_pos = {i if i >= 0 else i + nargs for i in spec.static_argnums}
    for i in spec.static_argnums:
        if not -nargs <= i < nargs and spec.varargs is None and i >= len(spec.param_names):
            raise ValueError(f"static_argnums {i} is out of range: the function was called "
                             f"with {nargs} positional arguments")
    dyn_args, statics, hints, paths = [], [], {}, []
    dyn_positions = []
    for i, a in enumerate(args):
        if i in static_pos:
            statics.append((_arg_name(spec, i), a))
        else:
            dyn_args.append(a)
            dyn_positions.append(i)
    dyn_kwargs = {}
    for k in sorted(kwargs):
        if k in spec.static_argnames:
            statics.append((k, kwargs[k]))
        else:
            dyn_kwargs[k] = kwargs[k]
    leaves, treedef = tree_flatten((tuple(dyn_args), dyn_kwargs), is_leaf=_is_leaf)
    for i, a in zip(dyn_positions, dyn_args):
        name = _arg_name(spec, i)
        sub = tree_flatten(a, is_leaf=_is_leaf)[1]
        paths.extend(sub.leaf_paths(name))
        hints[name] = (i if i < len(spec.param_names) else None,
                       spec.param_names[i] if i < len(spec.param_names) else None)
    for k, v in dyn_kwargs.items():
        sub = tree_flatten(v, is_leaf=_is_leaf)[1]
        paths.extend(sub.leaf_paths(k))
        pos = spec.param_names.index(k) if k in spec.param_names else None
        hints[k] = (pos, k)
    return SplitArgs(leaves, paths, treedef, tuple(statics), hints)


def _is_leaf(x):
    return isinstance(x, Tracer)


def leaf_avals(split: SplitArgs):
    """The abstract value of each traced leaf; a TypeError naming a bad argument."""
    out = []
    for path, leaf in zip(split.leaf_paths, split.dyn_leaves):
        if isinstance(leaf, Ref):  # a mutable array: its type, `Ref{f32[3]}`, in the key
            out.append(leaf.key_aval())
        elif isinstance(leaf, Tracer):
            out.append(leaf.aval)
        elif is_device_array(leaf):
            out.append(device_aval(leaf, f"argument {path!r}"))
        else:
            out.append(concrete_aval(leaf, f"argument {path!r}")[1])
    return out


def merge_static(spec: ArgSpec, split: SplitArgs, dyn_values, nargs):
    """Rebuild (args, kwargs) from traced leaves and the static values."""
    dyn_args, dyn_kwargs = tree_unflatten(split.treedef, dyn_values)
    static_pos = sorted({i if i >= 0 else i + nargs for i in spec.static_argnums})
    statics = dict(split.statics)
    args, it = [], iter(dyn_args)
    for i in range(nargs):
        args.append(statics[_arg_name(spec, i)] if i in static_pos else next(it))
    kwargs = dict(dyn_kwargs)
    passed_positionally = {_arg_name(spec, i) for i in static_pos if i < nargs}
    for k in spec.static_argnames:
        if k in statics and k not in passed_positionally:
            kwargs[k] = statics[k]
    return args, kwargs


def trace_to_jaxpr(fun, spec: ArgSpec, args, kwargs, *, purpose: str,
                   split: SplitArgs | None = None, avals=None) -> ClosedJaxpr:
    """Trace `fun(*args, **kwargs)` with its non-static leaves abstract."""
    split = split or split_args(spec, args, kwargs)
    avals = avals or leaf_avals(split)
    name = function_name(fun)
    report = TraceReport(name, *_file_line(fun))
    origins = _origin_table(fun)
    trace = JaxprTrace(current_trace(), fun_name=name, fun_location=function_location(fun),
                       purpose=purpose, report=report, origins=origins)
    trace.report = report
    trace.origins = origins
    trace.static_hints = split.static_hints
    trace.arg_order = list(split.leaf_paths)
    with TraceMonitor(fun, report, lambda x: is_tracer_of(x, trace)) as monitor:
        with push_trace(trace):
            # Ref arguments, and Refs the function closes over, become inputs (state.py)
            tracers = open_arguments(trace, split.dyn_leaves, avals, split.leaf_paths)
            a, k = merge_static(spec, split, tracers, len(args))
            out = fun(*a, **k)
        out_leaves, out_tree = tree_flatten(out)
        ref_finals, refs = trace.ref_scope.close(out_leaves)
        closed = trace.finish_closed(out_leaves + ref_finals)
        monitor.note_constants(closed)
    names = list(split.leaf_paths) + trace.ref_scope.closed_over_names()
    return closed.replace(report=report, in_tree=split.treedef, out_tree=out_tree,
                          arg_names=names, refs=refs)


def _file_line(fun):
    loc = function_location(fun)
    file, _, line = loc.rpartition(":")
    return file, int(line) if line.isdigit() else 0


def _origin_table(fun):
    table: dict[int, list] = {}
    for b in referenced_bindings(fun).values():
        value = b.cell.cell_contents if b.cell is not None else \
            getattr(getattr(fun, "__wrapped__", fun), "__globals__", {}).get(b.name)
        table.setdefault(id(value), []).append((b.kind, b.name, b.summary))
    return table


def make_jaxpr(fun, static_argnums=(), static_argnames=()):
    """`make_jaxpr(f)(*args)` traces `f` and returns its `ClosedJaxpr` (print it)."""
    spec_cache = {}

    def make(*args, **kwargs):
        spec = spec_cache.get("spec")
        if spec is None:
            spec = spec_cache["spec"] = arg_spec(fun, static_argnums, static_argnames)
        split = split_args(spec, args, kwargs)
        if not any(_struct_aval(leaf) is not None for leaf in split.dyn_leaves):
            return trace_to_jaxpr(fun, spec, args, kwargs, purpose="jit", split=split)
        # ShapeDtypeStructs stand for arguments of their type, as in JAX's make_jaxpr
        return trace_to_jaxpr(fun, spec, args, kwargs, purpose="jit", split=split,
                              avals=_abstract_avals(split))

    make.__name__ = f"make_jaxpr({function_name(fun)})"
    return make


def typeof(x) -> ShapedArray:
    """`jax.typeof`: the abstract type of an array, scalar or traced value (inside `vmap`, of
    one example): `print(jitviz.typeof(x))` shows `float32[3,3]` (`~` marks a weak type)."""
    if isinstance(x, Ref):  # `Ref{float32[3]}`
        return x.key_aval()
    from .lax import aval_of
    from .random import KeyArray, KeyAval
    if isinstance(x, KeyArray):  # typed keys: `key<fry>[...]`, their data's aval less its 2
        return KeyAval(x.shape)
    return aval_of(x)


@contextlib.contextmanager
def named_scope(name: str):
    """`jax.named_scope(name)`: JAX attaches the name to the equations inside for profilers.
    jitviz places every equation by its source line (the explorer, `annotate`), so the block
    runs as it is; the name is checked, not recorded."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope name must be a string, got {type(name).__name__}")
    yield


def named_call(fun, *, name: str | None = None):
    """`jax.named_call(fun, name=...)`: as `named_scope` for a whole function: `fun` itself."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call name must be a string, got {type(name).__name__}")
    return fun


class ShapeDtypeStruct:
    """`jax.ShapeDtypeStruct`: a shape and dtype standing for an array (for `eval_shape`)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, weak_type=False, sharding=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = _as_dtype(dtype)
        self.weak_type, self.sharding = bool(weak_type), sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type)
                == (other.shape, other.dtype, other.weak_type))

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


def _as_dtype(dtype):
    from .random import KeyDtype, key_dtype
    if isinstance(dtype, KeyDtype) or getattr(dtype, "dtype", None) is key_dtype:
        return key_dtype  # typed keys' dtype is no NumPy dtype
    try:
        return np.dtype(dtype)
    except TypeError:  # jnp.float32 and other objects that carry a dtype
        return np.dtype(dtype.dtype)


def eval_shape(fun, *args, **kwargs):
    """`jax.eval_shape`: the shapes and dtypes `fun` would return, as `ShapeDtypeStruct`s,
    found by tracing alone (nothing is computed or compiled). Arguments may be arrays,
    scalars or `ShapeDtypeStruct`s (anything with `.shape` and `.dtype`)."""
    args, kwargs = _keys_for_key_structs((args, kwargs))
    spec = arg_spec(fun)
    split = split_args(spec, args, kwargs)
    closed = trace_to_jaxpr(fun, spec, args, kwargs, purpose="eval_shape", split=split,
                            avals=_abstract_avals(split))
    outs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
            for a in function_out_avals(closed)]  # (not the final values of Refs it wrote)
    return _key_structs_for_keys(tree_unflatten(closed.out_tree, outs))


def _keys_for_key_structs(tree):
    """A ShapeDtypeStruct of typed keys stands for keys over uint32 data of shape
    `shape + (2,)`: the function is given such keys (their data a uint32 struct)."""
    from .random import KeyArray, key_dtype

    def as_keys(leaf):
        if isinstance(leaf, ShapeDtypeStruct) and leaf.dtype is key_dtype:
            return KeyArray(ShapeDtypeStruct(leaf.shape + (2,), np.uint32))
        return leaf
    return tree_map(as_keys, tree)


def _key_structs_for_keys(tree):
    """Typed keys in eval_shape's result, as JAX's: `ShapeDtypeStruct(shape, key<fry>)`."""
    from .random import KeyArray, key_dtype

    def as_struct(leaf):
        if isinstance(leaf, KeyArray):
            return ShapeDtypeStruct(leaf.shape, key_dtype)
        return leaf
    return tree_map(as_struct, tree, is_leaf=lambda x: isinstance(x, KeyArray))


def _struct_aval(leaf):
    if isinstance(leaf, (Tracer, np.ndarray, np.generic)) or not hasattr(leaf, "dtype") \
            or not hasattr(leaf, "shape"):
        return None
    return ShapedArray(leaf.shape, np.dtype(leaf.dtype), bool(getattr(leaf, "weak_type", False)))


def _abstract_avals(split):
    """Each argument leaf's abstract value, a ShapeDtypeStruct-like stand-in's included."""
    return [_struct_aval(leaf) or aval for leaf, aval in
            zip(split.dyn_leaves, _avals_or_none(split))]


def _avals_or_none(split):
    """The abstract value of each leaf that is not a ShapeDtypeStruct-like stand-in."""
    return [None if _struct_aval(leaf) is not None else leaf_avals(
        split._replace(dyn_leaves=[leaf], leaf_paths=[path]))[0]
        for path, leaf in zip(split.leaf_paths, split.dyn_leaves)]
