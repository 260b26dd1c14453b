"""Fusion: which equations become one kernel, and that the kernels are right."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.debug
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.core.typecheck import typecheck_jaxpr
from jitviz.passes import fuse as fuse_mod
from jitviz.passes import run_pipeline
from jitviz.core.fused import fused_p
from jitviz.passes.fuse import is_fusable

from cpu_helpers import all_eqns, assert_same, compile_cpu, optimized, prim_names, run_interpret, \
    trace

f32 = np.float32
rng = np.random.default_rng(1)
X = rng.standard_normal((6, 5)).astype(f32)


from jitviz.examples import norm, selu, slow_f  # noqa: E402  (the seeds' programs)


def fused_eqns(closed):
    return [e for e in all_eqns(closed) if e.primitive is fused_p]


def test_slow_f_is_one_kernel():
    out = optimized(slow_f, X)
    (eqn,) = out.jaxpr.eqns
    assert eqn.primitive is fused_p and eqn.params["name"] == "mul_add"
    assert prim_names(eqn.params["jaxpr"]) == ["mul", "mul", "add"]
    exe, _ = compile_cpu(slow_f, X)
    assert len(exe.kernels) == 1
    assert_same(exe(X)[0], X * X + X * f32(2))


def test_selu_is_one_kernel():
    exe, _ = compile_cpu(selu, X)
    assert len(exe.kernels) == 1
    assert_same(exe(X)[0], selu(X))


def test_norm_is_at_most_three_kernels():
    x = rng.random((200, 10)).astype(f32)
    exe, closed = compile_cpu(norm, x)
    assert len(exe.kernels) <= 3
    assert len(fused_eqns(closed)) <= 3
    ref = (x - x.mean(0)) / (x - x.mean(0)).std(0)
    assert_same(exe(x)[0], ref, rtol=1e-5, atol=1e-5)


def test_forward_pass_dot_is_a_boundary_and_relu_one_kernel():
    w = rng.standard_normal((5, 7)).astype(f32)
    exe, closed = compile_cpu(lambda x, w: jnp.maximum(0.0, jnp.dot(x, w)), X, w)
    assert prim_names(closed, top_only=True) == ["dot_general", "fused"]
    assert len(exe.kernels) == 1
    assert_same(exe(X, w)[0], np.maximum(0, X @ w), rtol=1e-5, atol=1e-6)


def test_every_fusable_equation_ends_up_in_a_kernel():
    def f(x):
        y = lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) * 2.0 + i, x)
        return jnp.argmax(y, axis=1), jnp.cumsum(y * 3.0, axis=0), y.T @ y
    out = optimized(f, X)
    typecheck_jaxpr(out)

    def bare(jaxpr):
        for e in jaxpr.eqns:
            if e.primitive is fused_p:
                continue
            yield from ([e] if is_fusable(e) else [])
            for p in e.params.values():
                for j in (p if isinstance(p, tuple) else (p,)):
                    if hasattr(j, "jaxpr") and hasattr(j, "consts"):
                        yield from bare(j.jaxpr)
    assert list(bare(out.jaxpr)) == []
    loop = next(e for e in out.jaxpr.eqns if e.primitive.name in ("scan", "while"))
    assert any(e.primitive is fused_p for e in all_eqns(loop.params["jaxpr"]))


def test_no_cycle_through_a_non_fusable_equation():
    w = rng.standard_normal((5, 5)).astype(f32)

    def f(x):
        a = x * 2.0
        b = jnp.dot(a, w)  # depends on a
        return a + b  # depends on a and b: a's kernel must come before the dot
    out = optimized(f, X)
    typecheck_jaxpr(out)
    names = prim_names(out, top_only=True)
    assert names == ["fused", "dot_general", "fused"]
    exe, _ = compile_cpu(f, X)
    assert_same(exe(X)[0], X * 2 + (X * 2) @ w, rtol=1e-5, atol=1e-5)


def waits_on_a_group_that_merges_later(x, y, w):
    """Issue 17's cyclic kernel graph, reduced: `n2` is computed from kernel C; later C
    merges with D, which waits on E through the dot; then `e1 * n2` must not join E."""
    e1 = jnp.sin(x)  # kernel E
    n = e1 @ w  # dot: a kernel boundary, waits on E
    c = jnp.cos(y)  # kernel C
    n2 = jnp.cumsum(c)  # cumsum: a boundary, waits on C
    d = n + 1.0  # kernel D, waits on E through the dot
    m = c * d  # C and D merge
    return m, e1 * n2  # n2 now waits on C+D, which waits on E: no joining E


def found_by_the_search(a, b, c):
    """Seed 32 of `fusion_search_program`: dot, cumsum, a broadcast and a reduction."""
    f = a[:, None] + c[None, :]
    h = (b @ b) * 0.25
    k = h + jnp.cumsum(f, axis=1) * 0.25
    return k, f - f.max(axis=-1, keepdims=True), f + h, (h + h) * h


@pytest.mark.parametrize("fun", [waits_on_a_group_that_merges_later, found_by_the_search])
def test_no_cycle_through_a_group_merged_after_the_value_was_computed(fun):
    args = [rng.standard_normal(s).astype(f32) for s in [(4,), (4, 4), (4,)]]
    if fun is waits_on_a_group_that_merges_later:
        args = [args[0], args[2], args[1]]
    out = optimized(fun, *args)  # fusion used to fail: "fusion produced a cyclic kernel graph"
    typecheck_jaxpr(out)
    want = run_interpret(fun, *args)
    got = jitviz.jit(fun)(*args)
    for g, r in zip(got, want):
        assert_same(np.asarray(g), r, rtol=1e-5, atol=1e-5)


# --- a seeded search over small programs for fusion bugs --------------------------------------

_N = 4
SEARCH_OPS = [  # (function of (jnp module, operands..., variant k), arity)
    (lambda m, a, k: [m.sin, m.cos, m.tanh, lambda v: v * 0.5 + 1][k % 4](a), 1),
    (lambda m, a, b, k: [a + b, a * b, a - b][k % 3], 2),
    (lambda m, a, b, k: (a @ (b if b.ndim == 2 else m.outer(b, b) * 0.25)) * 0.25, 2),  # dot
    (lambda m, a, k: m.cumsum(a, axis=a.ndim - 1) * 0.25, 1),
    # a reduction broadcast back over its operand
    (lambda m, a, k: a - [m.sum, m.max][k % 2](a, axis=-1, keepdims=True), 1),
    # (N,) and (N,) -> (N, N): a broadcast
    (lambda m, a, b, k: a[:, None] + b[None, :] if a.ndim == b.ndim == 1 else a + b, 2),
]


def fusion_search_program(seed, n_steps=8):
    """Steps (op, operand positions, variant) over three inputs (N,), (N, N), (N,)."""
    r = np.random.default_rng(seed)
    steps = []
    for s in range(n_steps):
        op = int(r.integers(len(SEARCH_OPS)))
        args = [int(r.integers(3 + s)) for _ in range(SEARCH_OPS[op][1])]
        steps.append((op, args, int(r.integers(12))))
    return steps


def run_search_program(steps, m, inputs):
    """Every value no later step uses is an output: kernels with several outputs."""
    vals = list(inputs)
    for op, args, k in steps:
        vals.append(SEARCH_OPS[op][0](m, *[vals[i] for i in args], k))
    used = {i for _, args, _ in steps for i in args}
    return [v for i, v in enumerate(vals) if i >= len(inputs) and i not in used]


def test_seeded_search_over_programs_with_dots_cumsums_and_broadcasts():
    """300 random programs (seed 32 was issue 17's cycle): the pipeline succeeds, the result
    typechecks and computes what the traced program computes."""
    for seed in range(300):
        steps = fusion_search_program(seed)
        r = np.random.default_rng(seed)
        xs = [r.standard_normal(s).astype(f32) for s in [(_N,), (_N, _N), (_N,)]]
        closed = trace(lambda *a: run_search_program(steps, jnp, a), *xs)
        out = run_pipeline(closed)[-1][1]
        want = jitviz.eval_jaxpr(closed.jaxpr, closed.consts, *xs)
        got = jitviz.eval_jaxpr(out.jaxpr, out.consts, *xs)
        for g, w in zip(got, want):
            assert_same(g, w, rtol=1e-5, atol=1e-5)


def test_sibling_reductions_of_one_array_share_one_loop():
    """`x.sum()` and `x.max()` depend only on x: one kernel, one loop nest reading x once."""
    x = rng.standard_normal((300, 7)).astype(f32)

    def f(x):
        return x.sum(), jnp.max(x, axis=1), (x * 3.0).min(axis=1)
    out = optimized(f, x)
    (k,) = fused_eqns(out)
    assert sorted(prim_names(k.params["jaxpr"])) == ["mul", "reduce_max", "reduce_min",
                                                     "reduce_sum"]
    exe, _ = compile_cpu(f, x)
    (kernel,) = exe.kernels
    body = kernel.source.split("def ", 1)[1]
    assert body.count("for i0 in range(n0)") == 1, kernel.source
    got = exe(x)
    assert_same(got[0], x.sum(dtype=f32), rtol=1e-5, atol=1e-4)
    assert_same(got[1], x.max(1))
    assert_same(got[2], (x * f32(3)).min(1))


def test_siblings_stay_apart_when_one_waits_on_the_other():
    """x.sum(0) feeds a dot whose result the x.max() kernel uses: merging them would make a
    kernel wait on itself, so they stay two kernels around the dot."""
    w = rng.standard_normal((5, 5)).astype(f32)

    def f(x):
        s = x.sum(0)
        return s, jnp.dot(s, w).sum() + x.max()
    out = optimized(f, X)
    typecheck_jaxpr(out)
    assert prim_names(out, top_only=True) == ["fused", "dot_general", "fused"]
    exe, _ = compile_cpu(f, X)
    got = exe(X)
    assert_same(got[0], X.sum(0), rtol=1e-5)
    assert_same(got[1], (X.sum(0) @ w).sum() + X.max(), rtol=1e-5, atol=1e-5)


def test_siblings_merge_only_over_the_whole_shared_array():
    y = rng.standard_normal((6, 5)).astype(f32)
    # different arrays: nothing shared, two kernels
    assert len(fused_eqns(optimized(lambda a, b: (a.sum(), b.sum()), X, y))) == 2
    # v broadcast across y's rows is read over y's index space, not v's: no shared loop
    v = rng.standard_normal(5).astype(f32)
    two = optimized(lambda v, b: (v.sum(), b + v), v, y)
    assert len(fused_eqns(two)) == 2
    # the same v read over its own shape by both: one kernel
    one = optimized(lambda v, b: (v.sum(), jnp.exp(v)), v, y)
    assert len(fused_eqns(one)) == 1


def test_sibling_merges_respect_the_kernel_size_bound(monkeypatch):
    monkeypatch.setattr(fuse_mod, "MAX_KERNEL_EQNS", 3)
    out = optimized(lambda x: [(x * float(i)).sum() for i in range(6)], X)
    assert all(len(k.params["jaxpr"].jaxpr.eqns) <= 3 for k in fused_eqns(out))
    assert len(fused_eqns(out)) == 6  # each mul + sum is 2 equations: two do not fit in 3
    exe, _ = compile_cpu(lambda x: [(x * float(i)).sum() for i in range(6)], X)
    for i, g in enumerate(exe(X)):
        assert_same(g, (X * f32(i)).sum(dtype=f32), rtol=1e-5, atol=1e-5)


def test_values_used_outside_become_kernel_outputs():
    def f(x):
        a = jnp.exp(x)
        return a.sum(axis=1), a * 3.0
    out = optimized(f, X)
    (k,) = fused_eqns(out)
    assert len(k.outvars) == 2
    exe, _ = compile_cpu(f, X)
    got = exe(X)
    assert_same(got[0], np.exp(X).sum(1), rtol=1e-5)
    assert_same(got[1], np.exp(X) * 3, rtol=1e-5)


def test_reduction_then_elementwise_in_one_kernel():
    def f(x):
        y = x * 2.0
        return y - jnp.max(y, axis=1, keepdims=True), jnp.sum(y) * 2.0
    out = optimized(f, X)
    assert len(fused_eqns(out)) == 1
    exe, _ = compile_cpu(f, X)
    got = exe(X)
    y = X * 2
    assert_same(got[0], y - y.max(1, keepdims=True))
    assert_same(got[1], np.asarray(y.sum() * 2, f32), rtol=1e-5)


def test_kernel_size_is_bounded(monkeypatch):
    monkeypatch.setattr(fuse_mod, "MAX_KERNEL_EQNS", 10)

    def f(x):
        for _ in range(25):
            x = x * 1.01 + 0.5
        return x
    out = optimized(f, X)
    ks = fused_eqns(out)
    assert len(ks) >= 5 and all(len(k.params["jaxpr"].jaxpr.eqns) <= 10 for k in ks)
    want = X
    for _ in range(25):
        want = want * f32(1.01) + f32(0.5)
    assert_same(jitviz.eval_jaxpr(out.jaxpr, out.consts, X)[0], want)


def test_effects_keep_their_order(capsys):
    def f(x):
        jitviz.debug.print("first {}", x[0, 0])
        y = x * 2.0
        jitviz.debug.print("second {}", y[0, 0])
        return y + 1.0
    exe, closed = compile_cpu(f, X)
    names = prim_names(closed, top_only=True)
    assert names.index("debug_print") < len(names) - 1
    capsys.readouterr()
    exe(X)
    lines = capsys.readouterr().out.splitlines()
    assert [l.split()[0] for l in lines] == ["first", "second"]


def test_fused_prints_as_a_kernel_with_its_body():
    text = str(optimized(slow_f, X))
    assert "fused[" in text and "name=mul_add" in text and "jaxpr={ lambda" in text


def test_unit_reshapes_and_squeezes_fuse():
    def f(x):
        m = jnp.sum(x, axis=1).reshape(6, 1)
        return (x - m) * 2.0
    out = optimized(f, X)
    assert len(fused_eqns(out)) == 1
    exe, _ = compile_cpu(f, X)
    assert_same(exe(X)[0], (X - X.sum(1, keepdims=True)) * 2, rtol=1e-5, atol=1e-6)


def test_iota_and_broadcasts_fuse_without_buffers():
    def f(x):
        return x + lax.broadcasted_iota(np.float32, x.shape, 1) + jnp.arange(6.0).reshape(6, 1)
    exe, closed = compile_cpu(f, X)
    assert len(fused_eqns(closed)) == 1
    src = exe.kernels[0].source
    assert "np.empty" not in src  # no temporaries: index maps compute in registers
    want = X + np.arange(5, dtype=f32)[None, :] + np.arange(6, dtype=f32)[:, None]
    assert_same(exe(X)[0], want)


def test_kernel_source_shows_equations_and_user_lines():
    exe, _ = compile_cpu(slow_f, X)
    src = exe.kernels[0].source
    assert "examples.py" in src and "return x * x + x * 2.0" in src
    assert "def mul_add(" in src and "@njit(" in src
    assert [e.primitive.name for e in exe.kernels[0].eqns] == ["mul", "mul", "add"]


def test_norm_kernel_runs_consecutive_loop_nests():
    x = rng.random((50, 3)).astype(f32)
    exe, _ = compile_cpu(norm, x)
    (k,) = exe.kernels
    assert k.source.count("for i0 in range(n0):") >= 4  # 3 sums and the output pass


@pytest.mark.parametrize("fastmath", [False, True])
def test_fastmath_reaches_the_kernels(fastmath):
    exe, _ = compile_cpu(slow_f, X, fastmath=fastmath)
    assert f"fastmath={fastmath}" in exe.kernels[0].source


def test_fused_equation_runs_on_the_interpreter():
    out = run_pipeline(trace(norm, X))[-1][1]
    got = jitviz.backends.get_backend("interpret").compile(out)(X)[0]
    assert_same(got, norm(X), rtol=1e-5, atol=1e-5)
