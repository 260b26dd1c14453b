"""The rules of the host-callback primitives (`jitviz/callbacks.py`): vmap, jvp/vjp, and the
lowerings to the CPU driver and regions and to CUDA host steps."""
from __future__ import annotations

import sys

import numpy as np

from .callbacks import (call_slot, debug_callback_p, host_callback, io_callback_p,
                        pure_callback_p, run_callback)
from .core.ir import ShapedArray
from .backends.cuda.host_steps import host_step_template
from .core.registry import register_lowering
from .lax import control_flow as cf
from .lax import primitives as P
from .transforms import register_batch, register_jvp, register_vjp
from .transforms.batching import batch_size, bdim_to_front, moveaxis

# --- vmap ----------------------------------------------------------------------------------------

_NO_VMAP_METHOD = (
    "vmap is only supported for the pure_callback primitive when vmap_method is one of "
    "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
    "'legacy_vectorized'. Got vmap_method=None. Fix: pass vmap_method='sequential' (one call "
    "per example) or 'expand_dims' (one call on the whole batch, if the callback vectorizes)")


def _sequential(prim, args, dims, params):
    """One call per example, in order: a `lax.map` over the batched operands (the unbatched
    ones are the same in every call), as JAX lowers vmap_method='sequential'."""
    batched = [k for k, d in enumerate(dims) if d is not None]

    def one_example(xs):
        full = list(args)
        for k, x in zip(batched, xs):
            full[k] = x
        return prim.bind(*full, **params)
    outs = cf.map(one_example, [bdim_to_front(args[k], dims[k]) for k in batched])
    return list(outs), [0] * len(outs)


def _vectorized_operands(method, args, dims, size):
    """The operands a vectorized call gets: batched ones with the batch axis first, unbatched
    ones with a unit axis ('expand_dims'), the full batch axis ('broadcast_all') or as they
    are ('legacy_vectorized')."""
    placed = []
    for a, d in zip(args, dims):
        if d is not None:
            placed.append(bdim_to_front(a, d))
        elif method == "expand_dims":
            av = _aval(a)
            placed.append(P.broadcast_in_dim_p.bind(
                a, shape=(1,) + av.shape, broadcast_dimensions=tuple(range(1, av.ndim + 1))))
        elif method == "broadcast_all":
            placed.append(bdim_to_front(a, None, size))
        else:
            placed.append(a)
    return placed


def _aval(x):
    from .lax import aval_of
    return aval_of(x)


def _pure_batch(args, dims, *, callback, result_avals, vmap_method, **params):
    if vmap_method is None:
        raise NotImplementedError(_NO_VMAP_METHOD)
    params = dict(params, callback=callback, result_avals=result_avals, vmap_method=vmap_method)
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(pure_callback_p, args, dims, params)
    size = batch_size(args, dims)
    placed = _vectorized_operands(vmap_method, args, dims, size)
    avals = tuple(ShapedArray((size,) + a.shape, a.dtype, a.weak_type) for a in result_avals)
    whole = host_callback(callback.fn, callback.api, callback.in_tree, callback.out_tree, avals)
    outs = pure_callback_p.bind(*placed, **dict(params, callback=whole, result_avals=avals))
    return outs, [0] * len(outs)


def _io_batch(args, dims, *, ordered, **params):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback. Fix: call it on each example "
                         "yourself (a Python loop, or lax.map), or pass ordered=False")
    return _sequential(io_callback_p, args, dims, dict(params, ordered=ordered))


def _debug_batch(args, dims, *, batch_rank=0, **params):
    """One call per example, as `jitviz.debug.print`'s rule: this vmap's axis after the batch
    axes the values already have (unbatched values broadcast)."""
    size = batch_size(args, dims)
    placed = [moveaxis(bdim_to_front(a, d, size), 0, batch_rank) for a, d in zip(args, dims)]
    return debug_callback_p.bind(*placed, batch_rank=batch_rank + 1, **params), []


register_batch(pure_callback_p, _pure_batch)
register_batch(io_callback_p, _io_batch)
register_batch(debug_callback_p, _debug_batch)


# --- derivatives ---------------------------------------------------------------------------------

def _no_derivative(message):
    def rule(*args, **params):
        raise ValueError(message)
    return rule


_PURE_NO_JVP = ("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                "callbacks while taking gradients. (jitviz: decorate a function that calls "
                "pure_callback with jitviz.custom_jvp and define its derivative with .defjvp)")
_IO_NO_JVP = ("IO callbacks do not support JVP. (Fix: wrap the call in a jitviz.custom_jvp "
              "or custom_vjp function that says its derivative, or stop_gradient its operands)")
register_jvp(pure_callback_p, _no_derivative(_PURE_NO_JVP))
register_vjp(pure_callback_p, _no_derivative(_PURE_NO_JVP))
register_jvp(io_callback_p, _no_derivative(_IO_NO_JVP))
register_vjp(io_callback_p, _no_derivative(_IO_NO_JVP))
# debug.callback sees the primals and contributes no derivative
register_jvp(debug_callback_p, lambda primals, tangents, **params: (
    debug_callback_p.bind(*primals, **params), []))
register_vjp(debug_callback_p, lambda cts, primals, outs, **params: [None] * len(primals))


# --- CPU: a call in the driver, an object-mode block in a Numba region ---------------------------

def _numba_type(aval) -> str:
    """The Numba type text of an object-mode block's output (arrays are C-contiguous)."""
    if aval.dtype == np.float16:
        raise NotImplementedError(
            "a host callback inside lax control flow cannot return float16 on the CPU backend "
            "(Numba has no float16 type); return float32, or use backend='interpret'")
    scalar = "boolean" if aval.dtype == np.bool_ else aval.dtype.name
    if aval.ndim == 0:
        return scalar
    return f"{scalar}[{', '.join([':'] * (aval.ndim - 1) + ['::1'])}]"


def _cpu_callback(fb, eqn):
    cb = eqn.params["callback"]
    dtypes = tuple(a.aval.dtype.name for a in eqn.invars)
    args = "".join(f"{fb.atom(a)}, " for a in eqn.invars)
    call = (f"_call_host_callback({cb.slot!r}, {dtypes!r}, ({args.rstrip(' ')}), "
            f"{eqn.params.get('batch_rank', 0)})")
    if fb.host:  # the driver is Python: call it, then name the results
        fb.program.namespace["_call_host_callback"] = call_slot
        if not eqn.outvars:
            fb.emit(call, eqn)
            return
        results = fb.fresh("cb")
        fb.emit(f"{results} = {call}", eqn)
        for k, v in enumerate(eqn.outvars):
            fb.assign(v, f"{results}[{k}]", eqn)
        return
    # a Numba region: leave nopython mode for the call only, its results typed for the return
    fb.module.extra_imports.add("from jitviz.callbacks import call_slot as _call_host_callback")
    names = [fb.define(v, "C", prefix="o") for v in eqn.outvars]
    typed = ", ".join(f"{n}={_numba_type(v.aval)!r}" for n, v in zip(names, eqn.outvars))
    fb.emit(f"with objmode({typed}):", eqn)
    with fb.indent():
        fb.emit(f"{''.join(n + ', ' for n in names)}= {call}" if names else call, eqn)


for _prim in (pure_callback_p, io_callback_p, debug_callback_p):
    register_lowering(_prim, "cpu.statement", _cpu_callback)


# --- CUDA: a host step between kernels -----------------------------------------------------------

def _run_on_host(eqn, values):
    sys.stdout.flush()  # the program's earlier prints come first
    return run_callback(eqn.params["callback"], values, eqn.params.get("batch_rank", 0))


# Inside a loop that would run in one kernel, the planner moves the loop to the host (the
# kernel renderer refuses the callback), so its body's callbacks are host steps too
for _prim in (pure_callback_p, io_callback_p, debug_callback_p):
    register_lowering(_prim, "cuda.kernel", host_step_template(_run_on_host))
