"""Named axes: `vmap(f, axis_name='i')` and the collectives that reduce over such an axis
(`lax.psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `axis_index`), as JAX runs them on one
device: each is a primitive in the traced body whose batching rule, when the vmap of its axis
name replays the body, becomes the reduction over that batch dimension.

    jitviz.vmap(lambda x: x / lax.psum(x, 'i'), axis_name='i')(xs)   # xs / xs.sum()

A vmap pushes its name and size for as long as it runs (`bound_axes`: tracing the body looks
up sizes there, and an unbound name is JAX's NameError at the call), and names the axis it is
replaying (`replaying`), so a collective for an outer vmap is re-emitted unchanged, for that
vmap to reduce. Collectives never reach a backend: outside every vmap of their name they are
an error before anything is traced.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive, register_lowering
from ..tree import tree_flatten, tree_unflatten
from ._util import aval_of, moveaxis


class _AxisState(threading.local):
    def __init__(self):
        self.bound: list[tuple[str, int]] = []     # (name, size) of each running vmap
        self.replaying: list[tuple[str, int]] = []  # the vmap whose body is being batched


_axes = _AxisState()


@contextlib.contextmanager
def bound_axis(name, size):
    """While a vmap named `name` runs (a None name binds nothing)."""
    if name is None:
        yield
        return
    _axes.bound.append((name, size))
    try:
        yield
    finally:
        _axes.bound.pop()


@contextlib.contextmanager
def replaying(name, size):
    """While a vmap named `name` batches its body."""
    _axes.replaying.append((name, size))
    try:
        yield
    finally:
        _axes.replaying.pop()


def axis_size(name) -> int:
    """The size of the innermost running vmap named `name` (JAX's NameError otherwise)."""
    for bound, size in reversed(_axes.bound):
        if bound == name:
            return size
    names = [n for n, _ in _axes.bound]
    raise NameError(f"unbound axis name: {name}. The following axis names (e.g. defined by "
                    f"vmap(..., axis_name=...)) are available to collective operations: "
                    f"{names}")


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _current():
    return _axes.replaying[-1] if _axes.replaying else (None, None)


# --- the primitives ---------------------------------------------------------------------------

def _same(x, **params):
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _gathered(x, *, axis_name, axis, tiled, sizes):
    size = int(np.prod(sizes))
    shape = list(x.shape)
    if tiled:
        shape[axis] *= size
    else:
        shape.insert(axis, size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _index_aval(*, axis_name, sizes):
    return ShapedArray((), np.dtype(np.int32))


def _unbound_impl(*args, axis_name, **params):
    # reached only by evaluating a traced body outside its vmap
    raise NameError(f"unbound axis name: {_names(axis_name)[0]}")


def _pp(params):
    return [("axes", _names(params["axis_name"]))] + [
        (k, v) for k, v in params.items() if k not in ("axis_name", "sizes")]


psum_p = primitive("psum", abstract_eval=_same, impl=_unbound_impl, pp_params=_pp)
pmax_p = primitive("pmax", abstract_eval=_same, impl=_unbound_impl, pp_params=_pp)
pmin_p = primitive("pmin", abstract_eval=_same, impl=_unbound_impl, pp_params=_pp)
all_gather_p = primitive("all_gather", abstract_eval=_gathered, impl=_unbound_impl,
                         pp_params=_pp)
axis_index_p = primitive("axis_index", abstract_eval=_index_aval, impl=_unbound_impl,
                         pp_params=_pp)
COLLECTIVES = (psum_p, pmax_p, pmin_p, all_gather_p, axis_index_p)


# --- what users call ----------------------------------------------------------------------

def _sizes(axis_name):
    return tuple(axis_size(n) for n in _names(axis_name))


def _each_leaf(prim, x, axis_name, **params):
    sizes = _sizes(axis_name)  # checks every name is bound
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [prim.bind(leaf, axis_name=_names(axis_name), sizes=sizes,
                                           **params) for leaf in leaves])


def psum(x, axis_name):
    """The sum of `x` over the examples of the vmap(s) named `axis_name` (a pytree)."""
    return _each_leaf(psum_p, x, axis_name)


def pmean(x, axis_name):
    """The mean of `x` over the named axis (or axes)."""
    from .. import numpy as jnp
    n = int(np.prod(_sizes(axis_name)))
    leaves, tree = tree_flatten(psum(x, axis_name))
    return tree_unflatten(tree, [jnp.true_divide(s, n) for s in leaves])


def pmax(x, axis_name):
    return _each_leaf(pmax_p, x, axis_name)


def pmin(x, axis_name):
    return _each_leaf(pmin_p, x, axis_name)


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every example's `x`, stacked along a new `axis` (concatenated with `tiled=True`)."""
    leaves, tree = tree_flatten(x)
    sizes = _sizes(axis_name)
    out = []
    for leaf in leaves:
        nd = aval_of(leaf).ndim
        a = axis % (nd + (0 if tiled else 1)) if nd or not tiled else 0
        out.append(all_gather_p.bind(leaf, axis_name=_names(axis_name), axis=a,
                                     tiled=bool(tiled), sizes=sizes))
    return tree_unflatten(tree, out)


def axis_index(axis_name):
    """This example's position along the named axis (int32)."""
    return axis_index_p.bind(axis_name=_names(axis_name), sizes=_sizes(axis_name))


# --- batching: the reduction over the current vmap's dimension -----------------------------

def _split(axis_name):
    """(is the replayed vmap's name among these, the names left for outer vmaps)."""
    current, _ = _current()
    names = _names(axis_name)
    return current in names, tuple(n for n in names if n != current)


def _reduction_rule(prim, reduce):
    def rule(args, dims, *, axis_name, sizes):
        (x,), (d,) = args, dims
        mine, rest = _split(axis_name)
        if not mine:  # an outer vmap's axis: keep it for that vmap
            return prim.bind(x, axis_name=axis_name, sizes=sizes), d
        out = reduce(x, d, _current()[1])
        if rest:
            out = prim.bind(out, axis_name=rest, sizes=sizes[:len(rest)])
        return out, None
    return rule


def _sum(x, d, size):
    from .. import lax
    if d is None:
        return lax.mul(x, np.asarray(size, aval_of(x).dtype)[()])
    return lax.reduce_sum(x, (d,))


def _extreme(reducer):
    def reduce(x, d, size):
        from .. import lax
        return x if d is None else getattr(lax, reducer)(x, (d,))
    return reduce


def _all_gather_rule(args, dims, *, axis_name, axis, tiled, sizes):
    from .. import lax
    from .batching import bdim_to_front
    (x,), (d,) = args, dims
    mine, rest = _split(axis_name)
    if not mine or rest:
        if mine:
            raise NotImplementedError("all_gather over several named axes at once")
        return all_gather_p.bind(x, axis_name=axis_name, axis=axis, tiled=tiled,
                                 sizes=sizes), d
    stacked = bdim_to_front(x, d, _current()[1])
    if tiled:
        shape = aval_of(stacked).shape
        stacked = moveaxis(stacked, 0, axis)
        merged = list(shape[1:])
        merged[axis] *= shape[0]
        return lax.reshape(stacked, tuple(merged)), None
    return moveaxis(stacked, 0, axis), None


def _axis_index_rule(args, dims, *, axis_name, sizes):
    from .. import lax
    mine, rest = _split(axis_name)
    if not mine:
        return axis_index_p.bind(axis_name=axis_name, sizes=sizes), None
    if rest:
        raise NotImplementedError("axis_index over several named axes at once")
    return lax.iota(np.int32, _current()[1]), 0


def _register():
    # the tables themselves: this module is imported while jitviz.transforms is (its public
    # register_* functions are not defined yet)
    from .batching import ALWAYS_BATCHED, BATCH_RULES
    from .jvp import JVP_RULES, NON_DIFFERENTIABLE
    from .vjp import VJP_RULES
    register_batch, register_jvp, register_vjp = (BATCH_RULES.__setitem__,
                                                  JVP_RULES.__setitem__, VJP_RULES.__setitem__)
    declare_non_differentiable = NON_DIFFERENTIABLE.add
    for prim, reduce in ((psum_p, _sum), (pmax_p, _extreme("reduce_max")),
                         (pmin_p, _extreme("reduce_min"))):
        register_batch(prim, _reduction_rule(prim, reduce))
    register_batch(all_gather_p, _all_gather_rule)
    register_batch(axis_index_p, _axis_index_rule)
    ALWAYS_BATCHED.update(COLLECTIVES)  # a collective of an unbatched value still reduces

    # psum is linear: its tangent is the psum of the tangent, its cotangent the psum of the
    # cotangent (every example's output depends on every example's input)
    def psum_jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        return psum_p.bind(x, **params), None if t is None else psum_p.bind(t, **params)
    register_jvp(psum_p, psum_jvp)
    register_vjp(psum_p, lambda ct, primals, out, **params: [psum_p.bind(ct, **params)])

    def gather_jvp(primals, tangents, **params):  # linear too
        (x,), (t,) = primals, tangents
        return all_gather_p.bind(x, **params), \
            None if t is None else all_gather_p.bind(t, **params)
    register_jvp(all_gather_p, gather_jvp)
    declare_non_differentiable(axis_index_p)  # an integer

    def no_derivative(prim, mode):
        def rule(*args, **params):
            raise NotImplementedError(f"jitviz has no {mode} rule for {prim.name} (a "
                                      f"collective inside vmap) yet; JAX has one")
        return rule
    for prim in (pmax_p, pmin_p):
        register_jvp(prim, no_derivative(prim, "JVP"))
    for prim in (pmax_p, pmin_p, all_gather_p):
        register_vjp(prim, no_derivative(prim, "VJP"))

    # never lowered: outside its vmap a collective is an error before tracing ends
    def unbound(*args, **kwargs):
        eqn = next((a for a in args if hasattr(a, "params")), None)
        name = _names(eqn.params["axis_name"])[0] if eqn is not None else "?"
        raise NameError(f"unbound axis name: {name} (a collective outside its vmap)")
    for prim in COLLECTIVES:
        register_lowering(prim, "cpu.statement", unbound)
        register_lowering(prim, "cuda.kernel", unbound)


_register()
