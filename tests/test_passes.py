"""The optimization pipeline: each pass on its own, then every pass on every sample program
(type-checked after each, evaluated by the reference interpreter against the trace)."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.debug
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.core.ir import Eqn, Var
from jitviz.core.typecheck import typecheck_jaxpr
from jitviz.passes import PIPELINE, Pass, PassError, run_pipeline
from jitviz.passes.cse import cse
from jitviz.passes.dce import dce
from jitviz.passes.fold import fold_constants
from jitviz.passes.inline import inline_calls
from jitviz.passes.simplify import simplify

from cpu_helpers import all_eqns, assert_same, prim_names, trace

f32 = np.float32
rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5)).astype(f32)
V = rng.standard_normal(5).astype(f32)


def evaluate(closed, *args):
    return jitviz.eval_jaxpr(closed.jaxpr, closed.consts, *jitviz.tree_leaves(args))


# --- the pipeline as a whole ---------------------------------------------------------------

def test_pipeline_is_a_named_list_of_passes():
    names = [p.name for p in PIPELINE]
    assert names == ["inline", "fold", "simplify", "cse", "dce", "fuse"]
    assert all(isinstance(p, Pass) and callable(p.run) for p in PIPELINE)
    assert [p.name for p in PIPELINE if p.fastmath_only] == ["simplify"]


def test_run_pipeline_keeps_every_snapshot():
    closed = trace(lambda x: x * x + x * 2.0, X)
    stages = run_pipeline(closed)
    assert [n for n, _ in stages] == ["inline", "fold", "cse", "dce", "fuse"]
    stages = run_pipeline(closed, fastmath=True)
    assert [n for n, _ in stages] == ["inline", "fold", "simplify", "cse", "dce", "fuse"]
    assert prim_names(stages[-1][1], top_only=True) == ["fused"]


def test_a_broken_pass_is_named_in_the_error():
    def bad(closed, *, fastmath=False):  # defines a var twice
        eqn = closed.jaxpr.eqns[0]
        j = closed.jaxpr.replace(eqns=[eqn, eqn])
        return closed.replace_jaxpr(j)
    closed = trace(lambda x: x + 1.0, X)
    with pytest.raises(PassError, match="pass 'bad_pass' produced an ill-typed jaxpr"):
        run_pipeline(closed, pipeline=[Pass("bad_pass", bad)])

    def crash(closed, *, fastmath=False):
        raise RuntimeError("boom")
    with pytest.raises(PassError, match="pass 'crash' failed: RuntimeError: boom"):
        run_pipeline(closed, pipeline=[Pass("crash", crash)])


# --- dce -----------------------------------------------------------------------------------

def test_dce_drops_unused_equations_and_constants():
    big = np.arange(6, dtype=f32)

    def f(x):
        unused = jnp.sin(x) * big.sum()  # noqa: F841
        return x + 1.0
    closed = trace(f, V)
    out = dce(closed)
    assert prim_names(out) == ["add"]
    assert out.consts == [] and out.jaxpr.constvars == ()
    typecheck_jaxpr(out)


def test_dce_keeps_effects_and_cleans_bodies():
    def f(x):
        jitviz.debug.print("x = {}", x)  # no result, but it must run every call
        dead = x * 3.0  # noqa: F841

        def body(c):
            waste = jnp.cos(c)  # noqa: F841
            return c + 1.0
        return lax.cond(x[0] > 0, body, lambda c: c - 1.0, x)
    out = dce(trace(f, V))
    names = prim_names(out)
    assert "debug_print" in names and "cos" not in names
    assert prim_names(out, top_only=True).count("mul") == 0


def test_dce_keeps_control_flow_that_prints():
    def f(x):
        def body(c):
            jitviz.debug.print("step {}", c)
            return c + 1.0
        lax.fori_loop(0, 3, lambda i, c: body(c), x)  # result unused
        return x
    out = dce(trace(f, f32(1)))
    assert "debug_print" in prim_names(out)


def test_dce_prunes_unused_cond_outputs():
    def f(x):
        a, b = lax.cond(x > 0, lambda v: (v + 1.0, jnp.exp(v)), lambda v: (v - 1.0, v), x)
        return a
    out = dce(trace(f, f32(2)))
    (cond,) = [e for e in out.jaxpr.eqns if e.primitive.name == "cond"]
    assert len(cond.outvars) == 1 and "exp" not in prim_names(out)
    assert_same(evaluate(out, f32(2))[0], f32(3))


# --- cse -----------------------------------------------------------------------------------

def test_cse_merges_equal_equations_and_commuted_operands():
    def f(x, y):
        return (x * y + jnp.sin(x)) + (y * x + jnp.sin(x))
    out = cse(trace(f, X, X))
    assert prim_names(out).count("mul") == 1 and prim_names(out).count("sin") == 1
    assert_same(evaluate(out, X, X)[0], evaluate(trace(f, X, X), X, X)[0])


def test_cse_keeps_distinct_literals_and_prints():
    def f(x):
        jitviz.debug.print("{}", x)
        jitviz.debug.print("{}", x)
        return x * 0.0 + x * -0.0
    out = cse(trace(f, V))
    assert prim_names(out).count("debug_print") == 2
    assert prim_names(out).count("mul") == 2  # 0.0 and -0.0 are different values


def test_cse_inside_bodies():
    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) + jnp.sin(c), x)
    out = cse(trace(f, V))
    assert prim_names(out).count("sin") == 1


# --- fold ----------------------------------------------------------------------------------

def test_fold_scalars_to_literals():
    def f(x):
        two = lax.add(f32(1), f32(1))
        return x * lax.exp(two)
    out = fold_constants(trace(f, V))
    assert prim_names(out) == ["mul"]
    lit = out.jaxpr.eqns[0].invars[1]
    assert np.asarray(lit.val).dtype == f32 and lit.val == np.exp(f32(2))


def test_fold_computations_on_constants():
    w = np.arange(6, dtype=f32).reshape(2, 3)
    x = np.ones((4, 3), f32)
    closed = trace(lambda x: x @ (jnp.transpose(w) * 2.0 + 1.0), x)
    assert len(prim_names(closed)) == 4
    out = dce(fold_constants(closed))
    assert prim_names(out) == ["dot_general"]
    assert_same(evaluate(out, x)[0], x @ (w.T * 2 + 1))


def test_fold_never_blows_a_scalar_up_to_a_big_constant():
    closed = trace(lambda x: x + jnp.zeros((300, 300), f32), np.ones((300, 300), f32))
    out = fold_constants(closed)
    assert all(np.size(c) <= 1 for c in out.consts)
    assert "broadcast_in_dim" in prim_names(out)


def test_fold_takes_the_known_branch_of_a_cond():
    def f(x):
        return lax.cond(True, lambda v: v * 2.0, lambda v: v - 1.0, x)
    out = dce(fold_constants(trace(f, V)))
    assert "cond" not in prim_names(out)
    assert_same(evaluate(out, V)[0], V * 2)


# --- inline --------------------------------------------------------------------------------

def test_inline_nested_jit_calls_twice():
    @jitviz.jit
    def inner(v):
        return v * 2.0 + 1.0

    def f(x):
        return inner(x) + inner(x + 1.0)
    closed = trace(f, V)
    assert "jit" in prim_names(closed)
    out = inline_calls(closed)
    typecheck_jaxpr(out)
    assert "jit" not in prim_names(out)
    assert_same(evaluate(out, V)[0], (V * 2 + 1) + ((V + 1) * 2 + 1))


# --- simplify (fastmath only) --------------------------------------------------------------

def seed_f(x, y):
    return x + y - x


def test_simplify_gives_the_seeds_exact_answer_only_with_fastmath():
    x, y = f32(1.0), f32(0.001)
    exact = run_pipeline(trace(seed_f, x, y))[-1][1]
    assert evaluate(exact, x, y)[0] == f32(0.0010000467)
    fast = run_pipeline(trace(seed_f, x, y), fastmath=True)[-1][1]
    assert evaluate(fast, x, y)[0] == f32(0.001)
    assert fast.jaxpr.eqns == () and fast.jaxpr.outvars[0] is fast.jaxpr.invars[1]


@pytest.mark.parametrize("f, expect", [
    (lambda x, y: (x - y) + y, "x"),
    (lambda x, y: -(x - y) + x, "y"),
    (lambda x, y: x * y / x, "y"),
    (lambda x, y: (x + 1.0) + 2.0, "x+3"),
])
def test_simplify_cancels_terms(f, expect):
    x, y = X, X[::-1].copy()
    out = simplify(trace(f, x, y), fastmath=True)
    got = evaluate(dce(out), x, y)[0]
    want = {"x": x, "y": y, "x+3": x + f32(3)}[expect]
    assert_same(got, want)
    typecheck_jaxpr(out)


def test_simplify_keeps_types_when_everything_cancels():
    out = simplify(trace(lambda x, s: x + s - x - s, X, f32(2)), fastmath=True)
    typecheck_jaxpr(out)
    assert_same(evaluate(dce(out), X, f32(2))[0], np.zeros_like(X))


def test_simplify_leaves_shared_intermediates_alone():
    def f(x, y):
        t = x + y
        return t - x, t * 2.0
    out = dce(simplify(trace(f, X, X), fastmath=True))
    assert_same(evaluate(out, X, X)[0], (X + X) - X)


# --- every pass on every program -----------------------------------------------------------

def _norm(x):
    x = x - x.mean(0)
    return x / x.std(0)


def _selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


W = rng.standard_normal((5, 3)).astype(f32)
PROGRAMS = {
    "slow_f": (lambda x: x * x + x * 2.0, (X,)),
    "selu": (_selu, (X,)),
    "norm": (_norm, (rng.random((20, 4)).astype(f32),)),
    "forward": (lambda x: jnp.maximum(0.0, jnp.dot(x, W)), (X,)),
    "seed_f": (seed_f, (f32(1), f32(0.001))),
    "fori": (lambda x: lax.fori_loop(0, 10, lambda i, y: y + x, 0.0), (f32(2),)),
    "while": (lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5),
                                       (0, x)), (V,)),
    "scan": (lambda x: lax.scan(lambda c, xi: (c + xi, c * xi), 0.0, x), (V,)),
    "cond": (lambda x: lax.cond(x.sum() > 0, lambda a: jnp.tanh(a) * 2,
                                lambda a: a - a.max(), x), (X,)),
    "nested": (lambda x: lax.fori_loop(0, 3, lambda i, c: lax.cond(
        i % 2 == 0, lambda v: v + jnp.sum(v), lambda v: v * 0.5, c), x), (V,)),
    "structural": (lambda x: jnp.concatenate([x.T[::-1], x.T * 2.0], axis=1)[1:, 2:].sum(1),
                   (X,)),
    "indexing": (lambda x, i: x[i] + jnp.cumsum(x[:, 0]).reshape(4, 1) + x.argmax(),
                 (X, np.array([3, 0, 1, 1], np.int32))),
    "consts": (lambda x: x @ W + W.sum(0) * 2.0, (X,)),
}


@pytest.mark.parametrize("fastmath", [False, True], ids=["exact", "fastmath"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_pass_typechecks_and_preserves_results(name, fastmath):
    f, args = PROGRAMS[name]
    closed = trace(f, *args)
    want = evaluate(closed, *args)
    for stage, out in run_pipeline(closed, fastmath=fastmath, check=False):
        typecheck_jaxpr(out, f"{name} after {stage}")
        got = evaluate(out, *args)
        for g, w in zip(got, want):
            assert_same(g, w, rtol=1e-4 if fastmath else None, atol=1e-5 if fastmath else None)
        assert all(e.source is not None for e in all_eqns(out) if e.primitive.name != "fused")


def test_passes_never_mutate_their_input():
    f, args = PROGRAMS["nested"]
    closed = trace(f, *args)
    before = str(closed)
    run_pipeline(closed, fastmath=True)
    assert str(closed) == before


def test_pipeline_is_idempotent_on_its_output():
    f, args = PROGRAMS["norm"]
    once = run_pipeline(trace(f, *args))[-1][1]
    twice = run_pipeline(once)[-1][1]
    assert str(once) == str(twice)


def test_eqn_sources_survive_rewrites():
    closed = trace(lambda x: x * x + x * 2.0, X)
    fused = run_pipeline(closed)[-1][1]
    (eqn,) = fused.jaxpr.eqns
    lines = {e.source.line for e in eqn.params["jaxpr"].jaxpr.eqns}
    assert lines == {e.source.line for e in closed.jaxpr.eqns}
    assert isinstance(eqn, Eqn) and all(isinstance(v, Var) for v in eqn.outvars)


def test_dce_of_two_conds_keeps_each_its_own_branches():
    """Found by the JAX differential fuzzer: DCE prunes a cond's branches into new jaxprs it
    then drops; a later cond's branches, allocated at a freed id, were "found" in the
    sub-jaxpr memo and replaced by the first cond's (an ill-typed program)."""
    def f(x0):
        v1 = jnp.array_equal(x0, x0)
        _, v7 = lax.cond(v1, lambda a, b: (a + v1, (b | (v1 > 0)) | (v1 > 0)),
                         lambda a, b: (a * 0.5 - jnp.mean(a * 0.5), b), x0, v1)
        _, v10 = lax.cond(jnp.sum(v1) > 5,
                          lambda a, b: (jnp.maximum(a, 0.25), jnp.logical_not(b ^ True) | (v7 > 0)),
                          lambda a, b: (jnp.maximum(a, 0.25) * x0, b), x0, v1)
        return v10, jnp.repeat(v1, 2, axis=0), jnp.divide(True, v1)
    for backend in ("interpret", "cpu"):
        out = jitviz.jit(f, backend=backend)(3.25)
        assert bool(out[0]) and out[1].tolist() == [True, True] and float(out[2]) == 1.0
