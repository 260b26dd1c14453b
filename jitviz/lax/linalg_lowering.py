"""The backends' lowerings of the `lax.linalg` primitives (defined with their other rules in
`linalg.py`)."""
from __future__ import annotations

import math

import numpy as np

from ..backends.cuda.host_steps import host_step_template
from ..core.registry import register_lowering

from .linalg import LINALG_PRIMITIVES, lu_p, triangular_solve_p


# --- the CPU lowering: NumPy's LAPACK, called from the driver ----------------------------------
#
# Numba's own np.linalg needs SciPy's LAPACK bindings, which jitviz does not depend on, so these
# primitives never enter a Numba kernel: the driver (plain Python) calls `host_call`, which runs
# the primitive's NumPy implementation (np.linalg's LAPACK: potrf, geqrf/orgqr, syevd, gesdd;
# pocketfft; the substitutions and the LU in NumPy), exactly the interpreter's values. Inside
# a control-flow region (a Numba function) the same call runs in an object-mode block.

def host_call(name, params, *args):
    """Run the primitive `name`'s NumPy implementation on arrays; C-contiguous results."""
    from ..core.registry import PRIMITIVES
    prim = PRIMITIVES[name]
    out = prim.impl(*args, **dict(params))
    outs = out if prim.multiple_results else [out]
    return tuple(np.ascontiguousarray(o) for o in outs)


def _numba_array_type(aval):
    dims = [":"] * (aval.ndim - 1) + ["::1"]
    return f"{np.dtype(aval.dtype).name}[{', '.join(dims)}]"


def _cpu_statement(fb, eqn):
    params = repr(tuple(sorted(eqn.params.items())))
    args = ", ".join(fb.atom(a) for a in eqn.invars)
    names = [fb.define(v, "C", prefix="la") for v in eqn.outvars]
    call = f"{', '.join(names)}, = _linalg_call({eqn.primitive.name!r}, {params}, {args})"
    if fb.host:
        fb.program.namespace["_linalg_call"] = host_call
        fb.emit(call, eqn)
        return
    fb.module.extra_imports.add("from jitviz.lax.linalg_lowering import host_call as _linalg_call")
    types = ", ".join(f"{n}={_numba_array_type(v.aval)!r}" for n, v in zip(names, eqn.outvars))
    fb.emit(f"with objmode({types}):", eqn)
    with fb.indent():
        fb.emit(call, eqn)
    # Numba refuses an annotated result that nothing reads after the block (a decomposition's
    # unused factor): each is read once here
    fb.emit(f"{', '.join(names)}, = {', '.join(names)},", eqn)


# The LU and the triangular solve are what NumPy's LAPACK lacks (getrf, trsm); on the CPU each
# is a compiled Numba loop (the unblocked algorithms: the same pivots as the NumPy
# implementation, and no Python loop over the rows, which dominates for the small matrices
# solve/det/inv see)

def lu_rows3(a3, pivots2, perm2):
    """Numba: LU with partial pivoting of each matrix of `a3` (batch, m, n) in place; the
    pivot is the first row of largest magnitude |re| + |im| (LAPACK's izamax; a NaN wins, as
    NumPy's argmax)."""
    batch, m, n = a3.shape
    k = min(m, n)
    for b in range(batch):
        a = a3[b]
        for i in range(m):
            perm2[b, i] = i
        for j in range(k):
            p = j
            best = abs(a[j, j].real) + abs(a[j, j].imag)
            if best == best:
                for i in range(j + 1, m):
                    v = abs(a[i, j].real) + abs(a[i, j].imag)
                    if v != v:
                        p = i
                        break
                    if v > best:
                        best = v
                        p = i
            pivots2[b, j] = p
            if p != j:
                for c in range(n):
                    a[j, c], a[p, c] = a[p, c], a[j, c]
                perm2[b, j], perm2[b, p] = perm2[b, p], perm2[b, j]
            d = a[j, j]
            if d != 0:
                for i in range(j + 1, m):
                    a[i, j] = a[i, j] / d
            for i in range(j + 1, m):
                f = a[i, j]
                for c in range(j + 1, n):
                    a[i, c] -= f * a[j, c]


def _cpu_lu(fb, eqn):
    from ..backends.numba_text import ctor
    x = eqn.invars[0]
    m, n = x.aval.shape[-2:]
    k, batch = min(m, n), math.prod(x.aval.shape[:-2])
    lu_var, piv_var, perm_var = eqn.outvars
    lu = fb.define(lu_var, "C", prefix="la")
    fb.emit(f"{lu} = {fb.contiguous(x)}.copy()", eqn)
    flat = [f"{lu}.reshape({fb.shape((batch, m, n))})"]
    for var, size in ((piv_var, k), (perm_var, m)):
        name = fb.define(var, "C", prefix="la")
        fb.emit(f"{name} = np.empty({fb.shape(var.aval.shape)}, {ctor(var.aval.dtype)})", eqn)
        flat.append(f"{name}.reshape({fb.shape((batch, size))})")
    fb.emit(f"rt.lu_rows3({', '.join(flat)})", eqn)


def trsm3(a3, b3, x3, left, lower, transpose, conj, unit):
    """Numba: x3 with op(a) x = b (left) or x op(a) = b for each matrix of the batch, by
    substitution (trsm's; a zero on the diagonal gives inf/NaN). The system solved is t x = b
    with t = op(a) (left) or op(a)^T, read from a, transposed or not (`flip`)."""
    batch, m, _ = a3.shape
    ncols = b3.shape[2] if left else b3.shape[1]
    flip = transpose != (not left)
    t_lower = lower != flip
    for bt in range(batch):
        a = a3[bt]
        for c in range(ncols):
            for step in range(m):
                i = step if t_lower else m - 1 - step
                acc = b3[bt, i, c] if left else b3[bt, c, i]
                for q in range(step):
                    j = q if t_lower else m - 1 - q
                    t = a[j, i] if flip else a[i, j]
                    if conj:
                        t = np.conj(t)
                    acc -= t * (x3[bt, j, c] if left else x3[bt, c, j])
                if not unit:
                    d = a[i, i]
                    if conj:
                        d = np.conj(d)
                    acc = acc / d
                if left:
                    x3[bt, i, c] = acc
                else:
                    x3[bt, c, i] = acc


def _cpu_triangular_solve(fb, eqn):
    from ..backends.numba_text import ctor
    a, b = eqn.invars
    (out,) = eqn.outvars
    p = eqn.params
    m = a.aval.shape[-1]
    batch = math.prod(a.aval.shape[:-2])
    x = fb.define(out, "C", prefix="la")
    fb.emit(f"{x} = np.empty({fb.shape(out.aval.shape)}, {ctor(out.aval.dtype)})", eqn)
    flags = (p["left_side"], p["lower"], p["transpose_a"],
             p["conjugate_a"], p["unit_diagonal"])
    b3, o3 = (fb.shape((batch,) + tuple(out.aval.shape[-2:])) for _ in range(2))
    fb.emit(f"rt.trsm3({fb.contiguous(a)}.reshape({fb.shape((batch, m, m))}), "
            f"{fb.contiguous(b)}.reshape({b3}), {x}.reshape({o3}), "
            f"{', '.join(map(str, flags))})", eqn)


for _prim in LINALG_PRIMITIVES:
    register_lowering(_prim, "cpu.statement", _cpu_statement)
register_lowering(lu_p, "cpu.statement", _cpu_lu, helpers=[lu_rows3])
register_lowering(triangular_solve_p, "cpu.statement", _cpu_triangular_solve, helpers=[trsm3])


# --- CUDA: a host step between kernels (the operands copied to the host, the NumPy
# implementation run there, the results copied back): no CUDA kernel here has a LAPACK or an
# FFT. The step is this module's own; the executor runs any step with `run_on_host` -----------

def _run_on_host(eqn, values):
    return host_call(eqn.primitive.name, tuple(eqn.params.items()), *values)


for _prim in LINALG_PRIMITIVES:
    register_lowering(_prim, "cuda.kernel", host_step_template(_run_on_host))
