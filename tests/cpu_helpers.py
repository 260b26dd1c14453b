"""Helpers for the compiler-pipeline and CPU-backend tests: trace, optimize, compile, compare.

Kernels are compiled through the normal kernel cache, so tests that generate the same kernel
text share one Numba compile (and a warm disk cache makes reruns fast).
"""
from __future__ import annotations

import numpy as np

import jitviz
from jitviz.backends import get_backend
from jitviz.core import registry
from jitviz.core.ir import ClosedJaxpr, Jaxpr
from jitviz.passes import run_pipeline


def trace(f, *args):
    return jitviz.make_jaxpr(f)(*args)


def optimized(f, *args, fastmath=False):
    return run_pipeline(trace(f, *args), fastmath=fastmath)[-1][1]


def compile_cpu(f, *args, fastmath=False, fuse=True, parallel=False):
    """(executable, closed jaxpr it runs): the pipeline's last stage, or the raw trace."""
    closed = trace(f, *args)
    target = run_pipeline(closed, fastmath=fastmath)[-1][1] if fuse else closed
    return get_backend("cpu").compile(target, fastmath=fastmath, parallel=parallel), target


def patch_cpu_rule(monkeypatch, prim, rule):
    """`prim`'s expression rule in CPU kernels replaced for one test (monkeypatch restores
    the registry's entry): `rule(args, in_dtypes, out_dtype, params) -> str`."""
    monkeypatch.setitem(registry._RULES["cpu.expr"], prim, registry.Lowering(rule, ()))


def leaves(*args):
    return jitviz.tree_leaves(args)


def run_cpu(f, *args, **kw):
    exe, _ = compile_cpu(f, *args, **kw)
    return exe(*leaves(*args))


def run_interpret(f, *args):
    closed = trace(f, *args)
    return get_backend("interpret").compile(closed)(*leaves(*args))


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return dict(rtol=2e-3, atol=2e-3)
    if dtype in (np.float32, np.complex64):
        return dict(rtol=2e-5, atol=2e-6)
    if dtype.kind in "fc":
        return dict(rtol=1e-12, atol=1e-14)
    return dict(rtol=0, atol=0)


def assert_same(got, want, *, rtol=None, atol=None):
    """Same dtype and shape, values equal up to the dtype's tolerance (NaNs equal)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    tol = tolerance(want.dtype)
    if rtol is not None:
        tol["rtol"] = rtol
    if atol is not None:
        tol["atol"] = atol
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, equal_nan=True, **tol)
    else:
        np.testing.assert_array_equal(got, want)


def all_eqns(jaxpr):
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    for e in jaxpr.eqns:
        yield e
        for p in e.params.values():
            for j in (p if isinstance(p, tuple) else (p,)):
                if isinstance(j, (Jaxpr, ClosedJaxpr)):
                    yield from all_eqns(j)


def prim_names(jaxpr, top_only=False):
    j = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    eqns = j.eqns if top_only else all_eqns(j)
    return [e.primitive.name for e in eqns]
