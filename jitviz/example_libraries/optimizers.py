"""`jax.example_libraries.optimizers`: first-order optimizers as (init, update, get_params)
triples over pytrees of arrays, as JAX's example library defines them.

    from jitviz.example_libraries import optimizers
    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, grads, state)     # usually inside a jitted train step
    params = get_params(state)

Each optimizer is written for one array (`optimizer` lifts it to pytrees); the step size may
be a number or a schedule `i -> step size` (`constant`, `exponential_decay`,
`inverse_time_decay`, `polynomial_decay`, `piecewise_constant`). The state is an
`OptimizerState` pytree, so it passes through `jit`; `unpack_optimizer_state` /
`pack_optimizer_state` turn it into nested Python containers and back (for pickling).
The formulas (and so the numbers) are JAX's; `tests/test_example_libraries.py` checks
them against real JAX when it is installed.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

from .. import numpy as jnp
from ..tree import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["Optimizer", "OptimizerState", "JoinPoint", "optimizer", "make_schedule",
           "constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "sgd", "momentum", "nesterov", "adagrad", "rmsprop",
           "rmsprop_momentum", "adam", "adamax", "sm3", "l2_norm", "clip_grads",
           "unpack_optimizer_state", "pack_optimizer_state"]

Schedule = Callable[[Any], Any]


class OptimizerState(NamedTuple):
    """Every parameter's state leaves (`packed_state`, one tuple per parameter), the
    parameters' tree structure and each parameter's state structure."""
    packed_state: Any
    tree_def: Any
    subtree_defs: Any


# the structures are static (auxiliary data): a jitted step is keyed on them, traces the arrays
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker):
    """Lift an optimizer written for one array, `opt_maker(*args) -> (init, update,
    get_params)`, to one over pytrees of arrays (each leaf its own state)."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            leaves, tree_def = tree_flatten(x0_tree)
            states = [tree_flatten(init(x0)) for x0 in leaves]
            packed = [tuple(state_leaves) for state_leaves, _ in states]
            subtree_defs = tuple(sub_def for _, sub_def in states)
            return OptimizerState(packed, tree_def, subtree_defs)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            packed, tree_def, subtree_defs = opt_state
            grads, grad_def = tree_flatten(grad_tree)
            if grad_def != tree_def:
                raise TypeError(
                    f"optimizer update: the gradient tree {grad_def} does not have the "
                    f"structure of the parameters {tree_def}")
            new_packed = []
            for g, state_leaves, sub_def in zip(grads, packed, subtree_defs):
                new_state = update(i, g, tree_unflatten(sub_def, state_leaves))
                new_packed.append(tuple(tree_leaves(new_state)))
            return OptimizerState(new_packed, tree_def, subtree_defs)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            packed, tree_def, subtree_defs = opt_state
            params = [get_params(tree_unflatten(sub_def, state_leaves))
                      for state_leaves, sub_def in zip(packed, subtree_defs)]
            return tree_unflatten(tree_def, params)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# --- step-size schedules ------------------------------------------------------------------

def constant(step_size) -> Schedule:
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    def schedule(i):
        done = jnp.minimum(i, decay_steps) / decay_steps
        return (1 - done) ** power * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values) -> Schedule:
    """`values[k]` while `i` has passed k of the `boundaries` (one more value than
    boundaries)."""
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("piecewise_constant: boundaries and values must be sequences")
    if values.shape[0] != boundaries.shape[0] + 1:
        raise ValueError(f"piecewise_constant: values must have one more entry than "
                         f"boundaries, got {values.shape[0]} values for "
                         f"{boundaries.shape[0]} boundaries")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule) -> Schedule:
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    try:
        scalar = jnp.ndim(scalar_or_schedule) == 0
    except TypeError:  # not an array or a number at all
        scalar = False
    if scalar:
        return constant(scalar_or_schedule)
    raise TypeError(f"a step size must be a number or a schedule (a function of the step), "
                    f"got {type(scalar_or_schedule).__name__}")


# --- the optimizers (each for one array) --------------------------------------------------

def _identity(x):
    return x


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step * g."""
    step_size = make_schedule(step_size)
    return _identity, lambda i, g, x: x - step_size(i) * g, _identity


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: v <- mass v + g; x <- x - step v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return lambda x0: (x0, jnp.zeros_like(x0)), update, _first


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient: v <- mass v + g; x <- x - step (mass v + g)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return lambda x0: (x0, jnp.zeros_like(x0)), update, _first


def _inverse_sqrt_or_zero(acc):
    return jnp.where(acc > 0, 1.0 / jnp.sqrt(acc), 0.0)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        m = (1.0 - momentum) * (g * _inverse_sqrt_or_zero(g_sq)) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return lambda x0: (x0, jnp.zeros_like(x0)), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba, 2015), with bias-corrected moment estimates."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v
    return lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam's infinity-norm variant."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        return x - (step_size(i) / (1 - b1 ** (i + 1))) * m / (u + eps), m, u
    return lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., 2019): one accumulator per axis (its maximum over the others)
    instead of one per entry; a 0-d parameter has one accumulator of one entry. The
    state holds arrays only, so a jitted step traces every part of it."""
    step_size = make_schedule(step_size)

    def init(x0):
        x0 = jnp.asarray(x0)
        per_axis = [jnp.zeros(n, x0.dtype) for n in jnp.atleast_1d(x0).shape]
        return x0, jnp.zeros_like(x0), per_axis

    def along(axis, ndim, v):
        """v (one axis' accumulator) broadcast against the parameter's axes."""
        return jnp.reshape(v, tuple(-1 if k == axis else 1 for k in range(ndim)))

    def update(i, g, state):
        x0, m0, per_axis = state
        x, m, g = (jnp.atleast_1d(a) for a in (x0, m0, g))
        acc = functools.reduce(jnp.minimum, [along(k, x.ndim, v) for k, v in
                                             enumerate(per_axis)]) + jnp.square(g)
        m = (1.0 - momentum) * (g * _inverse_sqrt_or_zero(acc)) + momentum * m
        x = x - step_size(i) * m
        per_axis = [acc.max(axis=tuple(a for a in range(x.ndim) if a != k))
                    for k in range(x.ndim)]
        return jnp.reshape(x, jnp.shape(x0)), jnp.reshape(m, jnp.shape(m0)), per_axis
    return init, update, _first


# --- utilities ----------------------------------------------------------------------------

def l2_norm(tree):
    """The Euclidean norm of all the leaves together."""
    leaves = tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale the gradients so that their joint l2 norm is at most `max_norm`."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where a parameter's own state tree starts in `unpack_optimizer_state`'s
    output."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):  # so it unpacks like a one-element container
        yield self.subtree

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """The state as the parameters' tree whose leaves are `JoinPoint`s of each parameter's
    state tree: plain Python containers and arrays, e.g. for pickling."""
    packed, tree_def, subtree_defs = opt_state
    marked = [JoinPoint(tree_unflatten(sub_def, leaves))
              for leaves, sub_def in zip(packed, subtree_defs)]
    return tree_unflatten(tree_def, marked)


def pack_optimizer_state(marked_pytree):
    """The inverse of `unpack_optimizer_state`."""
    joins, tree_def = tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint, as "
                        "unpack_optimizer_state makes them")
    states = [tree_flatten(j.subtree) for j in joins]
    packed = [tuple(leaves) for leaves, _ in states]
    return OptimizerState(packed, tree_def, tuple(sub_def for _, sub_def in states))
