"""`lax.sort`: operands sorted together along one dimension, by the first one's values.

Everything about the primitive is here, next to its definition (the registry's design): its
shape rule and NumPy implementation (the interpreter, the oracle), its jvp, vjp and batching
rules, and its CPU and CUDA lowerings with the runtime helpers they call.

The order is `jax.lax.sort`'s: NaN after every number, all NaNs equal whatever their sign,
-0.0 equal to 0.0; complex keys by their real parts, then their imaginary parts (two sorts).
The sort is always stable (`is_stable=False` allows, and gets, a stable one), so equal keys
keep their order. One sort key (`num_keys=1`).

    keys, values = lax.sort_key_val(k, v)           # values reordered as k is sorted
    idx = lax.sort((x, lax.broadcasted_iota(np.int32, x.shape, 0)), num_keys=1)[1]
"""
from __future__ import annotations

import math

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive, register_lowering
from . import primitives as P

_KEY_KINDS = P.FLOAT + P.INT + P.UINT + P.BOOL


def _sort_rule(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort needs at least one operand")
    shape = operands[0].shape
    if any(x.shape != shape for x in operands):
        raise TypeError("sort operands must all have the same shape, got "
                        + ", ".join(str(x.shape) for x in operands))
    if not 0 <= dimension < len(shape):
        raise ValueError(f"dimension {dimension} is out of bounds for array of shape {shape}")
    if num_keys != 1:
        raise NotImplementedError(f"jitviz sorts by one key (num_keys=1), got num_keys="
                                  f"{num_keys}: sort by a combined key instead")
    P._check_kind("sort", operands[0].dtype, _KEY_KINDS)
    return [ShapedArray(x.shape, x.dtype, x.weak_type) for x in operands]


def _sort_impl(*operands, dimension, is_stable, num_keys):
    moved = [np.moveaxis(np.asarray(x), dimension, -1) for x in operands]
    perm = np.argsort(moved[0], axis=-1, kind="stable")  # NumPy's order is JAX's
    return [np.moveaxis(np.take_along_axis(x, perm, -1), -1, dimension) for x in moved]


sort_p = primitive("sort", abstract_eval=_sort_rule, impl=_sort_impl, multiple_results=True,
                   kind="sort")


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """`jax.lax.sort`: one array, or a tuple of arrays sorted by the first `num_keys`."""
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    from . import aval_of
    ndim = aval_of(operands[0]).ndim
    dim = dimension + ndim if dimension < 0 else dimension
    params = dict(dimension=int(dim), is_stable=bool(is_stable), num_keys=int(num_keys))
    if aval_of(operands[0]).dtype.kind == "c" and num_keys == 1:
        out = _sort_by_complex_key(operands, params)
    else:
        out = sort_p.bind(*operands, **params)
    return out[0] if single else tuple(out)


def _sort_by_complex_key(operands, params):
    """JAX's order of complex keys: by the real parts, ties by the imaginary parts, each in
    the float order (NaN last). Two stable sorts give it, the second key first: by the
    imaginary parts, then by the real parts, the equal ones keeping the first sort's order."""
    key = operands[0]
    _, real, *carried = sort_p.bind(P.imag_p.bind(key), P.real_p.bind(key), *operands,
                                    **dict(params, is_stable=True))
    return sort_p.bind(real, *carried, **dict(params, is_stable=True))[1:]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """`jax.lax.sort_key_val`: `values` reordered as `keys` is sorted."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


# --- transformation rules ---------------------------------------------------------------------

def _permutation(keys, dimension, is_stable):
    """Where each sorted element came from, along `dimension` (the keys' sort permutation)."""
    from . import aval_of
    shape = aval_of(keys).shape
    iota = P.iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=dimension)
    return sort_p.bind(keys, iota, dimension=dimension, is_stable=is_stable, num_keys=1)[1]


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    """A sort is a permutation: tangents are sorted along with their primals."""
    from ..transforms._util import aval_of, instantiate
    n = len(primals)
    live = [i for i, t in enumerate(tangents) if t is not None]
    carried = [instantiate(tangents[i], aval_of(primals[i])) for i in live]
    out = sort_p.bind(*primals, *carried, dimension=dimension, is_stable=is_stable,
                      num_keys=num_keys)
    t_out = [None] * n
    for i, t in zip(live, out[n:]):
        t_out[i] = t
    return list(out[:n]), t_out


def _sort_vjp(ct, primals, out, *, dimension, is_stable, num_keys):
    """Cotangents go back through the inverse permutation: sorting them by the permutation
    puts each where its element came from."""
    perm = _permutation(primals[0], dimension, is_stable)
    return [None if c is None else sort_p.bind(perm, c, dimension=dimension, is_stable=True,
                                                num_keys=1)[1] for c in ct]


def _sort_batch(args, dims, *, dimension, is_stable, num_keys):
    from ..transforms.batching import batch_size, bdim_to_front
    size = batch_size(args, dims)
    moved = [bdim_to_front(x, d, size) for x, d in zip(args, dims)]
    out = sort_p.bind(*moved, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return out, [0] * len(out)


def _register_transformation_rules():
    from ..transforms import register_batch, register_jvp, register_vjp
    register_jvp(sort_p, _sort_jvp)
    register_vjp(sort_p, _sort_vjp)
    register_batch(sort_p, _sort_batch)


# --- the CPU lowering: a statement calling two runtime helpers ----------------------------------

def sort_order3(keys3, order3):
    """Numba: for each (pre, post) line of `keys3` (pre, n, post), the stable order of its n
    keys (NaN last), into `order3` (a bottom-up merge sort of indices)."""
    pre, n, post = keys3.shape
    tmp = np.empty(n, np.int64)
    for a in range(pre):
        for c in range(post):
            idx = order3[a, :, c]
            for i in range(n):
                idx[i] = i
            width = 1
            while width < n:
                for lo in range(0, n, 2 * width):
                    mid, hi = min(lo + width, n), min(lo + 2 * width, n)
                    i, j, k = lo, mid, lo
                    while i < mid and j < hi:
                        x, y = keys3[a, idx[j], c], keys3[a, idx[i], c]
                        # take from the right run only if strictly before: stable
                        if x < y or (y != y and x == x):
                            tmp[k] = idx[j]
                            j += 1
                        else:
                            tmp[k] = idx[i]
                            i += 1
                        k += 1
                    while i < mid:
                        tmp[k] = idx[i]
                        i += 1
                        k += 1
                    while j < hi:
                        tmp[k] = idx[j]
                        j += 1
                        k += 1
                    for m in range(lo, hi):
                        idx[m] = tmp[m]
                width *= 2


def permute3(x3, order3, out3):
    """Numba: out3[a, i, c] = x3[a, order3[a, i, c], c]."""
    pre, n, post = x3.shape
    for a in range(pre):
        for i in range(n):
            for c in range(post):
                out3[a, i, c] = x3[a, order3[a, i, c], c]


def _cpu_sort(fb, eqn):
    dim = eqn.params["dimension"]
    shape = eqn.invars[0].aval.shape
    shape3 = (math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:]))
    if any(a.aval.dtype == np.float16 for a in eqn.invars):
        from ..errors import CompilationError
        raise CompilationError("the CPU backend does not sort float16 arrays yet; sort a "
                               "float32 copy, or use backend='interpret'")
    from ..backends.numba_text import ctor
    s3 = fb.shape(shape3)
    keys = f"{fb.contiguous(eqn.invars[0])}.reshape({s3})"
    order = fb.fresh("order")
    fb.emit(f"{order} = np.empty({s3}, np.int64)", eqn)
    fb.emit(f"rt.sort_order3({keys}, {order})", eqn)
    for x, v in zip(eqn.invars, eqn.outvars):
        out = fb.define(v, "C", prefix="o")
        fb.emit(f"{out} = np.empty({fb.shape(v.aval.shape)}, {ctor(v.aval.dtype)})", eqn)
        fb.emit(f"rt.permute3({fb.contiguous(x)}.reshape({s3}), {order}, "
                f"{out}.reshape({s3}))", eqn)


register_lowering(sort_p, "cpu.statement", _cpu_sort, helpers=[sort_order3, permute3])


# --- the CUDA lowering: one thread per line, an insertion sort in the outputs -------------------

def _cuda_sort(planner, e):
    """One thread per line along the sorted dimension: the operands' line is copied into the
    outputs, then insertion-sorted there (stable), every operand moved with the keys."""
    from ..backends.cuda.render import Renderer, size
    dim = e.params["dimension"]
    shape = e.invars[0].aval.shape
    D = shape[dim]
    others = [d for a, d in enumerate(shape) if a != dim]
    stride = math.prod(shape[dim + 1:])
    r = Renderer(planner)
    r.note_eqn(e)
    r.ind = 2
    oc = r.decompose("line", others, "l")
    it = iter(oc)
    base = tuple("0" if a == dim else next(it) for a in range(len(shape)))
    r.emit(f"base = {r.linear(base, shape)}")
    r.emit(f"for s in range({D}):")
    r.ind += 1
    r.push()
    it = iter(oc)
    idx = tuple("s" if a == dim else next(it) for a in range(len(shape)))
    for k, x in enumerate(e.invars):
        r.emit(f"o{k}[base + s * {stride}] = {r.value(x, idx)}")
    r.pop()
    r.ind -= 1
    key = e.invars[0].aval.dtype
    a, b = f"o0[base + j * {stride}]", f"o0[base + (j - 1) * {stride}]"
    before = f"{a} < {b}"
    if np.dtype(key).kind == "f":  # NaN after every number
        before = f"({a} < {b} or ({b} != {b} and {a} == {a}))"
    r.emit(f"for s in range(1, {D}):")
    r.emit("    j = s")
    r.emit(f"    while j > 0 and {before}:")
    for k in range(len(e.invars)):
        here, there = f"o{k}[base + j * {stride}]", f"o{k}[base + (j - 1) * {stride}]"
        r.emit(f"        {here}, {there} = {there}, {here}")
    r.emit("        j -= 1")
    L = size(others)
    planner.finish("sort", r, e.outvars[0], list(e.outvars), size(shape),
                   [f"for line in range(cuda.grid(1), {L}, cuda.gridsize(1)):"],
                   planner.grid1(L), planner.block1(L), eqns=[e])
    planner.available.update(e.outvars)


register_lowering(sort_p, "cuda.kernel", _cuda_sort)


_register_transformation_rules()
