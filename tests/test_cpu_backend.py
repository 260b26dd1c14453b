"""The Numba CPU backend: differential tests (cpu == interpret == NumPy eager) on every
primitive, on generated programs, on control flow and on odd arrays; the kernel cache (in
memory and on disk); errors; views. No timing is asserted here (see benchmarks/)."""
from __future__ import annotations

import glob
import os

import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jitviz
import jitviz.debug
import jitviz.numpy as jnp
import jitviz.passes  # noqa: F401  (registers `fused` before the primitive table is built)
from jitviz import lax
from jitviz.backends import get_backend
from jitviz.backends import cpu as cpu_mod
from jitviz.backends.cpu.cache import KernelCache
from jitviz.backends.cpu.statements import statement_rule
from jitviz.core import registry
from jitviz.core.registry import PRIMITIVES
from jitviz.errors import CompilationError
from jitviz.passes import run_pipeline

from cpu_helpers import (assert_same, compile_cpu, leaves, patch_cpu_rule, run_cpu,
                         run_interpret, trace)
from test_primitives import CASES

f32, f64, i32 = np.float32, np.float64, np.int32
rng = np.random.default_rng(2)
X = rng.standard_normal((4, 5)).astype(f32)
CPU = get_backend("cpu")


# --- every primitive -----------------------------------------------------------------------

def test_every_primitive_has_a_cpu_rule():
    missing = sorted(name for name, prim in PRIMITIVES.items() if statement_rule(prim) is None)
    assert not missing, f"primitives without a CPU lowering rule: {missing}"


def test_every_primitive_has_a_differential_case():
    from test_primitives import primitives_needing_cases
    missing = sorted(primitives_needing_cases() - {c.prim for c in CASES})
    assert not missing, f"primitives without a case in tests/test_primitives.py: {missing}"


def _case_id(c):
    return f"{c.prim}-{c.id}" if c.id else c.prim


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_primitive_cpu_matches_interpret_and_numpy(case, capsys):
    prim = PRIMITIVES[case.prim]

    def f(*args):
        return prim.bind(*args, **case.params)
    ref = case.ref(*case.args)
    ref = ref if isinstance(ref, list) else [ref]
    interp = run_interpret(f, *case.args)
    for fuse in (False, True):
        got = run_cpu(f, *case.args, fuse=fuse)
        assert len(got) == len(ref) == len(interp)
        for g, r, i in zip(got, ref, interp):
            r = np.asarray(r)
            assert_same(g, i)
            assert_same(g.astype(r.dtype), r, rtol=2e-5 if r.dtype != np.float16 else 2e-3)


def test_debug_print_runs_every_call_at_top_level_and_in_loops(capsys):
    def f(x):
        jitviz.debug.print("top {}", x)
        return lax.fori_loop(0, 3, lambda i, c: (jitviz.debug.print("i={} c={}", i, c),
                                                 c + 1.0)[1], x)
    exe, _ = compile_cpu(f, f32(0.5))
    capsys.readouterr()
    for _ in range(2):
        assert_same(exe(f32(0.5))[0], np.asarray(3.5, f32))
    out = capsys.readouterr().out.splitlines()
    want = ["top 0.5", "i=0 c=0.5", "i=1 c=1.5", "i=2 c=2.5"]
    assert out == want * 2


# --- seeds ---------------------------------------------------------------------------------

def seed_f(x, y):
    return x + y - x


def test_float32_exp_is_within_about_one_ulp_everywhere():
    """The kernels' vectorizable exp (vecmath's) over its whole range: normal, subnormal and
    zero results, overflow to inf, and the special values, against float64 exp rounded."""
    x = np.concatenate([
        np.linspace(-110.0, 90.0, 2_000_003, dtype=f32),
        np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -1e-30, 88.72, 88.73, -87.33,
                  -103.28, -103.97, -104.0, -120.0], f32)])
    got = np.asarray(jitviz.jit(jnp.exp)(x))
    exact = np.exp(x.astype(np.float64))
    with np.errstate(over="ignore"):
        rounded = exact.astype(f32)
    finite = np.isfinite(rounded) & (rounded != 0)
    ulps = np.abs(got[finite] - exact[finite]) / np.spacing(rounded[finite]).astype(np.float64)
    normal = rounded[finite] >= np.finfo(f32).tiny
    assert ulps[normal].max() <= 1.01  # NumPy's own SIMD expf allows 2.5 ulp
    assert ulps[~normal].max() <= 1.5  # a ~1 ulp result rounded once more into the subnormals
    np.testing.assert_array_equal(got[~finite], rounded[~finite])  # inf, 0, NaN exactly


def test_seed_x_plus_y_minus_x_is_ieee_exact_without_fastmath():
    args = (f32(1.0), f32(0.001))
    assert run_cpu(seed_f, *args)[0] == f32(0.0010000467)
    assert run_cpu(seed_f, *args, fastmath=True)[0] == f32(0.001)


def test_seed_selu_norm_forward_and_fori_loop():
    from jitviz.examples import apply_activation, f_loop, get_dot_product, norm, selu

    def forward(w, x):
        return apply_activation(get_dot_product(w, x))
    y = rng.standard_normal(1000).astype(f32)
    assert_same(run_cpu(selu, y)[0], run_interpret(selu, y)[0])
    z = rng.random((300, 10)).astype(f32)
    assert_same(run_cpu(norm, z)[0], run_interpret(norm, z)[0], rtol=1e-5, atol=1e-5)
    w, x = rng.standard_normal((20, 30)).astype(f32), rng.standard_normal((30, 40)).astype(f32)
    assert_same(run_cpu(forward, w, x)[0], np.maximum(0, w @ x), rtol=1e-5, atol=1e-5)
    exe, _ = compile_cpu(f_loop, np.float32(2), np.int32(15))  # traced bound: a while loop
    assert_same(exe(np.float32(2), np.int32(15))[0], np.asarray(30.0, f32))
    assert_same(exe(np.float32(2), np.int32(1000))[0], np.asarray(2000.0, f32))


def test_jitviz_jit_uses_the_cpu_backend():
    f = jitviz.jit(lambda x: x * x + x * 2.0)
    assert_same(np.asarray(f(X)), X * X + X * f32(2))
    compiled = f.lower(X).compile()
    assert [k.name for k in compiled.kernels] == ["mul_add"]
    assert compiled.kernels[0].cost.flops == 3 * X.size


# --- control flow --------------------------------------------------------------------------

V = rng.standard_normal(6).astype(f32)

CONTROL = {
    "cond": (lambda x: lax.cond(x.sum() > 0, lambda a: a * 2.0 + 1.0, lambda a: -a, x), (V,)),
    "switch": (lambda i, x: lax.switch(i, [lambda a: a + 1.0, lambda a: a * a,
                                           lambda a: jnp.sin(a)], x), (np.int32(2), V)),
    "switch clamped": (lambda i, x: lax.switch(i, [lambda a: a + 1.0, lambda a: a * a], x),
                       (np.int32(7), V)),
    "while tuple": (lambda x: lax.while_loop(lambda c: c[0] < 10,
                                             lambda c: (c[0] + 1, c[1] * 1.1 + c[2], c[2]),
                                             (0, x, f32(0.5))), (V,)),
    "fori traced bound": (lambda n, x: lax.fori_loop(0, n, lambda i, c: c + i, x),
                          (np.int32(5), V)),
    "scan": (lambda x: lax.scan(lambda c, xi: (c * 0.5 + xi, c + xi.sum()), jnp.zeros(3, f32),
                                x), (rng.standard_normal((4, 3)).astype(f32),)),
    "scan reverse consts": (lambda x, k: lax.scan(lambda c, xi: (c + k * xi, c), 0.0, x,
                                                  reverse=True), (V, f32(3))),
    "scan no xs": (lambda x: lax.scan(lambda c, _: (c * 2.0, c), x, None, length=5), (V,)),
    "nested": (lambda x: lax.fori_loop(0, 4, lambda i, c: lax.cond(
        i % 2 == 0, lambda v: v + jnp.max(v), lambda v: lax.fori_loop(
            0, 2, lambda j, w: w * 0.5, v), c), x), (V,)),
    "loop with structure": (lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.concatenate(
        [c[1:], c[:1]]) @ jnp.ones((6, 6), f32) * 0.1, x), (V,)),
    "loop with indexing": (lambda x: lax.fori_loop(0, 3, lambda i, c: lax.dynamic_update_slice(
        c, jnp.reshape(jnp.cumsum(c)[i], (1,)), (i,)) + jnp.argmax(c), x), (V,)),
    "cond of scalars": (lambda a, b: lax.cond(a > b, lambda u, v: u - v, lambda u, v: v * u,
                                              a, b), (f32(1.5), f32(2.5))),
    "kernels named like builtins": (lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.maximum(
        c, 0.5) + jnp.maximum(i, 1) + jnp.abs(c), x), (V,)),
    "nested jit": (lambda x: jitviz.jit(lambda v: lax.fori_loop(0, 3, lambda i, c: c + v, v))
                   (x) * 2.0, (V,)),
}


@pytest.mark.parametrize("name", sorted(CONTROL))
def test_control_flow(name):
    f, args = CONTROL[name]
    want = run_interpret(f, *args)
    for fuse in (True, False):
        got = run_cpu(f, *args, fuse=fuse)
        for g, w in zip(got, want):
            assert_same(g, w, rtol=1e-5, atol=1e-5)


def test_loops_are_loops_in_the_generated_code():
    f, args = CONTROL["nested"]
    exe, _ = compile_cpu(f, *args)
    src = "\n".join(k.source for k in exe.kernels)
    assert "for step" in src and "if " in src
    assert src.count("def ") < 12  # not unrolled


def test_fori_loop_of_many_steps_is_one_region():
    exe, _ = compile_cpu(lambda x: lax.fori_loop(0, 200_000, lambda i, y: y + x, 0.), f32(2))
    assert [k.name for k in exe.kernels] == ["scan_region"]
    assert_same(exe(f32(2))[0], np.asarray(400000.0, f32))


# --- odd arrays ----------------------------------------------------------------------------

def _odd_arrays():
    base = rng.standard_normal((6, 8)).astype(f32)
    ro = base.copy()
    ro.flags.writeable = False
    nan = base.copy()
    nan[0, 0], nan[1, 1], nan[2, 2] = np.nan, np.inf, -np.inf
    return {
        "strided": base[::2, ::3],
        "transposed": base.T,
        "zero-size": np.zeros((0, 8), f32),
        "nan and inf": nan,
        "big-endian": base.astype(">f4"),
        "read-only": ro,
        "fortran": np.asfortranarray(base),
        "broadcast view": np.broadcast_to(base[0], (6, 8)),
    }


ODD = _odd_arrays()


def _odd_program(x):
    return jnp.where(x > 0, x * 2.0, jnp.exp(x)) - x.sum(axis=0) / (x.shape[0] + 1), \
        jnp.max(x, axis=1, initial=-np.inf), x.T @ x


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_arrays_match_numpy(name):
    x = ODD[name]
    native = np.array(x, dtype=f32)
    with np.errstate(all="ignore"):
        want = _odd_program(native)
    exe, _ = compile_cpu(_odd_program, native)
    before = np.array(x)
    got = exe(x)
    for g, w in zip(got, want):
        assert_same(g, np.asarray(w), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(x), before)  # inputs untouched


def test_python_scalars_and_weak_types_follow_the_jaxpr():
    exe, closed = compile_cpu(lambda x, s: x * s + 1, X, 2.5)
    assert closed.in_avals[1].weak_type
    assert_same(exe(X, 2.5)[0], X * f32(2.5) + f32(1))
    exe, _ = compile_cpu(lambda n: n * 3 + 1, 5)
    assert_same(exe(5)[0], np.asarray(16, np.int32))


def test_integer_wraparound_and_division_semantics():
    a = np.array([2**31 - 1, -7, 7, -(2**31)], i32)
    b = np.array([2, 2, -2, -1], i32)
    got = run_cpu(lambda a, b: (a + a, lax.div(a, b), lax.rem(a, b), a * b), a, b)
    want = run_interpret(lambda a, b: (a + a, lax.div(a, b), lax.rem(a, b), a * b), a, b)
    for g, w in zip(got, want):
        assert_same(g, w)


# --- generated programs --------------------------------------------------------------------

UNARY = {
    "neg": lambda a: -a, "abs": jnp.abs, "sin": jnp.sin, "tanh": jnp.tanh,
    "square": lambda a: a * a, "exp": lambda a: jnp.exp(jnp.minimum(a, 4.0)),
    "sqrt": lambda a: jnp.sqrt(jnp.abs(a)), "floor": jnp.floor,
}
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "max": jnp.maximum, "min": jnp.minimum, "where": lambda a, b: jnp.where(a > b, a, b * 0.5),
}
REDUCE = {
    "sum0": lambda a: jnp.sum(a, axis=0, keepdims=True),
    "max1": lambda a: jnp.max(a, axis=1, keepdims=True),
    "mean": lambda a: jnp.mean(a),
}
STEP = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), st.integers(0, 20)),
    st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), st.integers(0, 20),
              st.integers(0, 20)),
    st.tuples(st.just("reduce"), st.sampled_from(sorted(REDUCE)), st.integers(0, 20)),
    st.tuples(st.just("literal"), st.sampled_from([0.5, -2.0, 3.0]), st.integers(0, 20)),
)


def _build(steps, n_out):
    def program(x, y):
        vals = [x, y]
        for step in steps:
            pick = lambda k: vals[k % len(vals)]  # noqa: E731
            if step[0] == "unary":
                vals.append(UNARY[step[1]](pick(step[2])))
            elif step[0] == "binary":
                vals.append(BINARY[step[1]](pick(step[2]), pick(step[3])))
            elif step[0] == "reduce":
                vals.append(REDUCE[step[1]](pick(step[2])))
            else:
                vals.append(pick(step[2]) * step[1] + 1.0)
        return tuple(vals[-n_out:])
    return program


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEP, min_size=1, max_size=6), n_out=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_generated_programs_cpu_equals_interpret_and_eager(steps, n_out, seed):
    r = np.random.default_rng(seed)
    x = r.standard_normal((3, 4)).astype(f32)
    y = r.standard_normal((3, 4)).astype(f32)
    program = _build(steps, n_out)
    with np.errstate(all="ignore"):
        eager = [np.asarray(v) for v in program(x, y)]
    interp = run_interpret(program, x, y)
    for fuse in (True, False):
        got = run_cpu(program, x, y, fuse=fuse)
        for g, i, e in zip(got, interp, eager):
            assert_same(g, i, rtol=1e-4, atol=1e-5)
            assert_same(g, e.astype(g.dtype), rtol=1e-4, atol=1e-5)


# --- the kernel cache ----------------------------------------------------------------------

def test_new_shape_of_same_rank_reuses_the_compiled_kernel():
    def f(x):
        return jnp.tanh(x) * 3.0 - x / 7.0
    first, _ = compile_cpu(f, rng.standard_normal((3, 4)).astype(f32))
    second, _ = compile_cpu(f, rng.standard_normal((30, 41)).astype(f32))
    assert second.kernels[0].reused
    assert first.kernels[0].source.split("\n", 1)[1] == second.kernels[0].source.split("\n", 1)[1]
    x = rng.standard_normal((30, 41)).astype(f32)
    assert_same(second(x)[0], run_interpret(f, x)[0])


def _shapeful_loop(x, w, idx):
    """Control flow whose bodies use every statement that needs a size: slices, reshapes,
    BLAS, gathers, scatters, dynamic slices, arg-reductions, cumulative sums, scans."""
    n = x.shape[0]

    def body(i, c):
        h = jnp.tanh(c @ w) + c[::-1] * 0.5
        g = lax.scatter(h, h[idx] * 2.0, [idx], axes=(0,), mode="add")
        d = lax.dynamic_update_slice(g, lax.dynamic_slice(g, [i], [2]) + 1.0, [n - 2 - i])
        k = jnp.argmax(d)
        e = jnp.concatenate([jnp.cumsum(d)[1:], d[:1] + k.astype(jnp.float32)])
        return e / jnp.sum(e * e)
    y = lax.fori_loop(0, 3, body, x)
    y = lax.while_loop(lambda c: jnp.sum(c[1:]) < 50.0, lambda c: c[::-1] + 1.0, y)
    z = lax.cond(y.sum() > 0, lambda a: jnp.reshape(a, (2, -1))[1] * 2.0,
                 lambda a: jnp.reshape(a, (-1, 2))[:, 0] - 1.0, y)
    carry, ys = lax.scan(lambda c, r: (c + r.sum(), r.max() + c), 0.0,
                         jnp.reshape(x, (-1, 2)))
    return z, carry, ys


def test_new_shape_reuses_compiled_control_flow_regions():
    """Sizes inside a loop, branch or scan are parameters of its Numba function, so a new
    shape of the same rank costs a trace, not a Numba compile of the region."""
    shapes = (6, 10, 16)
    exes = []
    for n in shapes:
        x = rng.standard_normal(n).astype(f32)
        w = (rng.standard_normal((n, n)) / n).astype(f32)
        idx = np.array([0, n - 1, 1], np.int32)
        exe, _ = compile_cpu(_shapeful_loop, x, w, idx)
        for g, i in zip(exe(x, w, idx), run_interpret(_shapeful_loop, x, w, idx)):
            assert_same(g, i, rtol=1e-4, atol=1e-5)
        exes.append(exe)
    regions = [k.name for k in exes[0].kernels if k.name.endswith("_region")]
    assert sorted(regions) == ["cond_region", "scan_region", "scan_region", "while_region"]
    for exe in exes[1:]:
        assert [k.name for k in exe.kernels] == [k.name for k in exes[0].kernels]
        assert all(k.reused for k in exe.kernels), [(k.name, k.reused) for k in exe.kernels]


def test_literal_values_do_not_change_the_kernel():
    a, _ = compile_cpu(lambda x: x * 3.0 + 1.0, X)
    b, _ = compile_cpu(lambda x: x * 5.0 + 2.0, X)
    assert b.kernels[0].reused
    assert_same(b(X)[0], X * f32(5) + f32(2))


def _fresh_cache(tmp_path):
    return cpu_mod.CpuBackend(KernelCache(str(tmp_path)))


def test_disk_cache_survives_a_restart_and_rebuilds_corrupt_entries(tmp_path):
    def f(x):
        return jnp.cos(x) * 1.25 + jnp.abs(x) ** 1.5
    closed = run_pipeline(trace(f, X))[-1][1]
    exe = _fresh_cache(tmp_path).compile(closed)
    assert not exe.kernels[0].reused
    files = glob.glob(str(tmp_path / "*" / "__pycache__" / "*.nb*"))
    assert files, "Numba wrote no cache files"
    # a new cache object has nothing in memory: it must load from disk
    exe2 = _fresh_cache(tmp_path).compile(closed)
    assert exe2.kernels[0].reused
    # corrupt every cache file: ignored, rebuilt, still right
    for path in files:
        with open(path, "wb") as fh:
            fh.write(b"not a numba cache file")
    cache = KernelCache(str(tmp_path))
    with pytest.warns(jitviz.errors.KernelCacheWarning, match="rejected .*not a jitviz cache"):
        exe3 = cpu_mod.CpuBackend(cache).compile(closed)
    assert cache.rebuilt >= 1 and not exe3.kernels[0].reused
    assert_same(exe3(X)[0], run_interpret(f, X)[0])


def test_foreign_module_file_is_replaced(tmp_path):
    closed = run_pipeline(trace(lambda x: x * 9.0 - 4.0, X))[-1][1]
    exe = _fresh_cache(tmp_path).compile(closed)
    (module,) = glob.glob(str(tmp_path / "*" / "jk_*.py"))
    with open(module, "w") as fh:
        fh.write("raise RuntimeError('somebody else wrote this')\n")
    cache = KernelCache(str(tmp_path))
    with pytest.warns(jitviz.errors.KernelCacheWarning, match="does not hold the text"):
        exe2 = cpu_mod.CpuBackend(cache).compile(closed)
    assert cache.rebuilt == 1
    assert_same(exe2(X)[0], exe(X)[0])


def test_unwritable_cache_dir_warns_and_still_compiles(tmp_path):
    blocked = tmp_path / "a_file"  # a file where the cache folder should be: not writable
    blocked.write_text("")
    with pytest.warns(jitviz.errors.JitvizWarning, match="not writable"):
        cache = KernelCache(str(blocked))
    exe = cpu_mod.CpuBackend(cache).compile(run_pipeline(trace(lambda x: x - 2.5, X))[-1][1])
    assert_same(exe(X)[0], X - f32(2.5))


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    from jitviz.backends.cpu.cache import default_cache
    monkeypatch.setenv("JITVIZ_CACHE_DIR", str(tmp_path))
    assert default_cache().root == str(tmp_path)


def _plus_half(x):
    return x + 0.5


def test_a_rule_brings_its_own_helper(tmp_path):
    """A primitive defined outside the backend lowers with one `register_lowering`: its
    helper becomes rt.<name> in the kernel, and the module names it with a hash of its
    source (an edited helper is another cache key)."""
    prim = registry.Primitive("test_plus_half", abstract_eval=lambda x: x,
                              impl=lambda x: x + f32(0.5), kind="elementwise")
    try:
        registry.register_lowering(prim, "cpu.expr", lambda a, *_: f"rt.plus_half({a[0]})",
                                   helpers=[("plus_half", _plus_half)])
        closed = run_pipeline(trace(lambda x: prim.bind(x), X))[-1][1]
        exe = _fresh_cache(tmp_path).compile(closed)
        assert_same(exe(X)[0], X + f32(0.5))
        assert "# rt.plus_half is test_cpu_backend._plus_half (source " in \
            exe.kernels[0].source
    finally:
        del PRIMITIVES["test_plus_half"]
        registry._RULES["cpu.expr"].pop(prim)


# --- errors and views ----------------------------------------------------------------------

def test_numba_rejecting_a_kernel_is_a_compilation_error(tmp_path, monkeypatch):
    patch_cpu_rule(monkeypatch, PRIMITIVES["sin"], lambda a, *_: f"no_such_fn({a[0]})")

    def f(x):
        return jnp.sin(x) + 1.0  # the user's line
    closed = run_pipeline(trace(f, X))[-1][1]
    with pytest.raises(CompilationError) as info:
        _fresh_cache(tmp_path).compile(closed)
    err = info.value
    msg = str(err)
    assert "no_such_fn" in msg and "sin" in msg
    assert "return jnp.sin(x) + 1.0  # the user's line" in msg
    assert err.eqn.primitive.name == "sin" and "no_such_fn" in err.generated_source


def test_llvm_ir_and_asm_views():
    exe, _ = compile_cpu(lambda x: x * 4.0 + 3.0, X)
    k = exe.kernels[0]
    assert "define" in k.llvm_ir()
    assert len(k.asm()) > 100
    assert k.cost.flops == 2 * X.size and k.cost.bytes_moved == 2 * X.nbytes


def test_driver_source_is_readable():
    exe, _ = compile_cpu(lambda x: jnp.dot(x, x.T) + 1.0, X)
    assert "np.matmul" in exe.driver_source or "np.dot" in exe.driver_source
    assert "np.empty((4, 4,), np.float32)" in exe.driver_source.replace("(4, 4)", "(4, 4,)")


def test_parallel_kernels_use_prange_and_agree():
    x = rng.standard_normal((64, 33)).astype(f32)

    def f(x):
        return jnp.exp(x) * 2.0 + x.sum(axis=1, keepdims=True)
    exe, _ = compile_cpu(f, x, parallel=True)
    assert "prange" in exe.kernels[0].source and "parallel=True" in exe.kernels[0].source
    assert_same(exe(x)[0], run_interpret(f, x)[0], rtol=1e-5, atol=1e-5)


def test_float16_inside_control_flow_is_an_explicit_error():
    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: c * 2, x)
    with pytest.raises(CompilationError, match="float16"):
        compile_cpu(f, np.ones(3, np.float16))


def test_executable_outputs_are_fresh_arrays():
    exe, _ = compile_cpu(lambda x: x + 1.0, X)
    a, b = exe(X)[0], exe(X)[0]
    assert a is not b and not np.shares_memory(a, b)
    w = np.arange(3, dtype=f32)
    exe, _ = compile_cpu(lambda x: (x, w), X)
    out = exe(X)[1]
    out[:] = -1  # the caller owns what it gets: the compiled constant is unchanged
    assert_same(exe(X)[1], np.arange(3, dtype=f32))


def _pooled(cpu_buffers, a) -> bool:
    """Whether `a` is one of the pool's arrays, or a view of one."""
    base = a if a.base is None else a.base
    return any(base is p for arrays in cpu_buffers._pool.values() for p in arrays)


def test_big_outputs_come_from_recycled_buffers():
    from jitviz.backends.cpu import buffers as cpu_buffers
    x = np.ones((600, 600), f32)  # 1.4 MB: pooled
    exe, _ = compile_cpu(lambda x: x * 2.0, x)
    first = exe(x)[0]
    addr = first.ctypes.data
    view = first[1:]  # keeps the array busy after `first` is gone
    del first
    second = exe(x)[0]
    assert second.ctypes.data != addr  # still in use through `view`
    assert_same(view, np.full((599, 600), 2, f32))
    reused = {addr, second.ctypes.data}
    del view, second
    third = exe(x)[0]  # both arrays are free again: the call takes one of them
    assert third.ctypes.data in reused and _pooled(cpu_buffers, third)
    assert third.flags.writeable and cpu_buffers.pooled_bytes() >= 2 * x.nbytes
    assert_same(third, np.full((600, 600), 2, f32))


def test_a_result_held_any_way_keeps_its_array():
    """A jitted call's result, a view of it, NumPy's base-class view and the pooled array
    itself (the result's `.base`) each keep the array from the next call; once all are
    gone it is used again."""
    from jitviz.backends.cpu import buffers as cpu_buffers
    f = jitviz.jit(lambda v: v * 2.0)
    x = np.arange(360_000, dtype=f32).reshape(600, 600)
    same = lambda r: r  # noqa: E731
    for hold, part in ((same, same), (lambda r: r[::7, 3:], lambda r: r[::7, 3:]),
                       (np.asarray, same), (lambda r: r.base, same)):
        first = f(x)
        assert _pooled(cpu_buffers, first)
        kept, addr = hold(first), first.ctypes.data
        del first
        second = f(x + 1.0)
        assert second.ctypes.data != addr
        assert_same(np.asarray(second), (x + 1.0) * 2)
        assert_same(np.asarray(kept), part(x * 2.0))  # untouched
        del kept, second
        assert f(x).ctypes.data in (addr, f(x).ctypes.data)


def test_the_pool_is_bounded_and_forgets_the_least_recently_used_shapes(monkeypatch):
    from jitviz.backends.cpu import buffers as cpu_buffers
    monkeypatch.setattr(cpu_buffers, "_pool", type(cpu_buffers._pool)())
    monkeypatch.setattr(cpu_buffers, "_pooled_bytes", 0)
    monkeypatch.setattr(cpu_buffers, "MAX_POOLED_BYTES", 3 << 20)  # three 1 MiB arrays
    shapes = [(1 << 18,), (1 << 18, 1), (1, 1 << 18), (2, 1 << 17)]  # 1 MiB of float32 each
    keys = [(s, np.dtype(f32)) for s in shapes]
    held = [cpu_buffers.empty(shape, f32) for shape in shapes[:3]]
    # a second array of the first shape (the first is held): the least recently used shape,
    # the second, makes room for it
    held.append(cpu_buffers.empty(shapes[0], f32))
    assert cpu_buffers.pooled_bytes() == 3 << 20
    assert list(cpu_buffers._pool) == [keys[2], keys[0]] and len(cpu_buffers._pool[keys[0]]) == 2
    held.append(cpu_buffers.empty(shapes[3], f32))  # the third shape makes room
    assert cpu_buffers.pooled_bytes() == 3 << 20
    assert list(cpu_buffers._pool) == [keys[0], keys[3]]
    more = [cpu_buffers.empty(shapes[3], f32) for _ in range(cpu_buffers.MAX_PER_SIZE + 2)]
    assert len(cpu_buffers._pool[(shapes[3], np.dtype(f32))]) <= cpu_buffers.MAX_PER_SIZE
    assert cpu_buffers.pooled_bytes() <= 3 << 20 and len(more) == cpu_buffers.MAX_PER_SIZE + 2


def test_outputs_under_the_pool_threshold_are_numpy_s_own():
    from jitviz.backends.cpu import buffers as cpu_buffers
    x = np.ones((100, 100), f32)  # 40 kB
    assert x.nbytes < cpu_buffers.MIN_BYTES
    exe, _ = compile_cpu(lambda x: x * 2.0, x)
    out = exe(x)[0]
    assert not _pooled(cpu_buffers, out)
    assert_same(out, np.full((100, 100), 2, f32))


def test_a_pooled_array_is_checked_and_handed_out_under_the_lock(monkeypatch):
    """The reference count that says an array is free is read under the pool's lock (two
    threads reading it at once could both take the array): every read is checked."""
    from jitviz.backends.cpu import buffers as cpu_buffers
    reads = []

    class Sys:
        @staticmethod
        def getrefcount(a):
            reads.append(cpu_buffers._lock.locked())
            return sys.getrefcount(a) - 1  # (this frame's own reference)
    monkeypatch.setattr(cpu_buffers, "sys", Sys)
    first = cpu_buffers.empty((400, 400), f32)
    address = first.ctypes.data
    del first
    again = cpu_buffers.empty((400, 400), f32)  # the same array, free again
    assert reads and all(reads) and again.ctypes.data == address


def test_threads_never_share_a_pooled_array():
    """Calls from four threads at once, each checking its own results (that the pool reads
    a reference count under its lock: the test above)."""
    import threading

    f = jitviz.jit(lambda v: v * 2.0 + 1.0)
    x = np.arange(200_000, dtype=f32)
    f(x)
    errors = []

    def work(k):
        for i in range(200):
            xi = x + f32(k * 1000 + i)
            r = f(xi)
            if not np.array_equal(r, xi * 2 + 1):
                errors.append((k, i))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors


def test_leaves_helper_flattens_pytrees():
    assert len(leaves(X, (X, {"a": X}))) == 3
    assert os.path.basename(__file__) == "test_cpu_backend.py"


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int64, np.float32, np.complex128])
def test_stack_array_stores_and_reads_every_dtype(dtype):
    """rt.stack_array (the kernels' register lanes) allocates by the storage type: a bool is a
    byte in an array, not LLVM's i1."""
    from numba import njit
    from jitviz.backends.cpu import runtime as rt

    @njit
    def roundtrip(x):
        lanes = rt.stack_array(16, x.dtype.type)  # noqa: F841 (the literal size is the point)
        for j in range(16):
            lanes[j] = x[j]
        out = np.empty_like(x)
        for j in range(16):
            out[j] = lanes[j]
        return out
    x = (np.arange(16) % 3).astype(dtype)
    np.testing.assert_array_equal(roundtrip(x), x)


def test_an_elementary_function_weighs_what_it_costs():
    """The work estimate that picks threads counts a vectorized elementary function as the
    operations it costs (rules.COST); every primitive whose float32 kernel code calls a
    vecmath function (rt.<name>_f32) has such a weight."""
    from jitviz.backends.cpu import rules, vecmath
    from jitviz.core.registry import PRIMITIVES
    # every rt.<name>_f32 that vecmath exports (lgamma, bessel_i0e, ... too)
    vecmath_functions = {n[: -len("_f32")] for n in vecmath.__all__ if n.endswith("_f32")}
    from jitviz.lax import primitives as lax
    k = jitviz.jit(lambda x: jnp.tanh(x) + 1).lower(np.ones(1000, np.float32)).compile()
    tanh_weight = rules.operations_per_element(lax.tanh_p)
    assert k.kernels[0].cost.flops == 1000 * (tanh_weight + 1)
    # (the weights are AVX-512's; without it a vector holds half the values: twice them)
    assert tanh_weight == (3 if vecmath.target_has_avx512() else 6)
    unweighted, vectorized = [], set()
    for prim in PRIMITIVES.values():
        rule = rules.expr_rule(prim) if prim.kind == "elementwise" else None
        if rule is None:
            continue
        for arity in (1, 2):
            try:
                text = rule(["a", "b"][:arity], [np.dtype(np.float32)] * arity,
                            np.dtype(np.float32), {})
            except Exception:  # noqa: BLE001 - a rule that needs params or other arity
                continue
            called = re.search(r"rt\.(\w+)_f32\(", text)
            if called and called.group(1) in vecmath_functions:
                vectorized.add(prim.name)
                if rules.operations_per_element(prim) < 2:
                    unweighted.append(prim.name)
    assert {"tanh", "log", "sin", "pow", "atan2", "cbrt", "lgamma", "bessel_i0e"} <= vectorized, \
        vectorized
    assert not unweighted, f"vectorized functions without a weight in rules.COST: {unweighted}"


def test_without_avx512_the_elementary_functions_weigh_twice(tmp_path):
    """The weights are measured with AVX-512; an AVX2-only target (NUMBA_CPU_FEATURES
    without it, in a fresh process: the factor is decided at import) counts them twice."""
    import subprocess
    import sys
    code = ("from jitviz.backends.cpu import rules; from jitviz.lax import primitives as lax; "
            "print(rules.operations_per_element(lax.tanh_p), "
            "rules.operations_per_element(lax.pow_p), rules.operations_per_element(lax.add_p))")
    env = {**os.environ, "NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "-avx512f",
           "JITVIZ_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["6", "14", "1"]


def test_threads_are_chosen_per_kernel_from_its_size(monkeypatch):
    """parallel=None: a kernel with parallel_min_ops operations or more runs its outer loop on
    every core (prange), a smaller one on one; the kernel's source says which and why, and the
    results are the same either way."""
    import numba
    monkeypatch.setattr(numba, "get_num_threads", lambda: 2)
    monkeypatch.setattr(jitviz.config, "parallel_min_ops", 4096)

    def f(x):
        return jnp.tanh(x) * 2

    def head(fn, x, **kw):
        k = jitviz.jit(fn, **kw).lower(x).compile().kernels[0]
        return k.source.splitlines()[1], "prange(" in k.source

    from jitviz.backends.cpu import rules
    from jitviz.lax import primitives as lax
    # tanh (its rules.COST weight, twice that without AVX-512) and the product
    per_element = rules.operations_per_element(lax.tanh_p) + 1
    small, big = np.ones(100, np.float32), np.ones(4096, np.float32)
    line, threaded = head(f, small)
    assert not threaded and f"threads: one ({100 * per_element} operations < " in line
    line, threaded = head(f, big)
    assert threaded and f"threads: all 2 cores ({4096 * per_element:,} operations >= " in line
    line, threaded = head(f, big, parallel=False)
    assert not threaded and line == "# threads: one (parallel=False)"
    line, threaded = head(f, small, parallel=True)
    assert threaded and line == "# threads: every core (parallel=True)"
    line, threaded = head(lambda x: x.sum(0), np.ones((4096, 4), np.float32))
    assert not threaded and "cannot be split" in line
    line, threaded = head(jnp.sin, big)  # blockwise sin/cos/tan: their blocks split
    assert threaded and "threads: all 2 cores" in line
    x = np.random.default_rng(1).random((300, 40)).astype(np.float32)
    g = lambda x: jnp.sum(jnp.exp(x), axis=1) + x[:, 0]  # noqa: E731
    np.testing.assert_array_equal(np.asarray(jitviz.jit(g)(x)),
                                  np.asarray(jitviz.jit(g, parallel=False)(x)))


def test_a_large_integer_power_is_a_loop_in_xlas_order():
    """integer_pow beyond 32: rt.ipow's loop, not inline text that doubles with each bit
    of the exponent (x ** (2**31 - 1) used to exhaust memory rendering 2**31 copies of x);
    the same products in the same order as XLA's repeated squaring, so the same bits."""
    def squaring(x, n):  # from the highest bit, as XLA: float32 products, each rounded
        r = x.copy()
        for bit in bin(n)[3:]:
            r = r * r
            if bit == "1":
                r = r * x
        return r
    x = np.random.default_rng(3).uniform(-1.05, 1.05, 1000).astype(np.float32)
    x[:4] = [-2.0, -0.0, np.inf, np.nan]
    for n in (33, 47, 64, 1000, 2**31 - 1):
        c = jitviz.jit(lambda v, n=n: v ** n).lower(x).compile()
        assert f"rt.ipow(" in c.kernels[0].source and len(c.kernels[0].source) < 5000
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(np.asarray(c(x)), squaring(x, n))
    assert np.asarray(jitviz.jit(lambda v: v ** (2**31 - 1))(np.float32([-2.0])))[0] == -np.inf


# --- elementwise kernels over arrays of one shape run as one loop over every value ----------

def _kernel_of(f, *args, **kw):
    c = jitviz.jit(f, **kw).lower(*args).compile()
    (kernel,) = c.kernels
    return c, kernel


@pytest.mark.parametrize("shape", [(333, 3), (7, 5, 300), (40, 129)])
def test_an_elementwise_kernel_over_one_shape_runs_as_one_loop(shape):
    """statements._flat_body: C-contiguous arrays of one shape are passed as vectors
    (reshape views), so the kernel is one loop over every value, blocked and vectorized
    (a loop over a last axis of 3 had no block and no vector: `jnp.sin` of (333334, 3)
    took 16x a 1-D array's time); the same bits as the 1-D kernel, and the source's lines
    and the kernel's equations are the program's own (annotate and the explorer find
    them by identity)."""
    from jitviz.core.jaxpr_util import all_eqns
    r = np.random.default_rng(5)
    x = r.uniform(-3, 3, shape).astype(np.float32)
    y = r.uniform(-3, 3, shape).astype(np.float32)
    x.reshape(-1)[-2] = 1e10  # sin's table, in the tail of the flat loop

    def f(x, y):
        return jnp.tanh(x) * 2 + jnp.sin(y * x), x - y
    c, kernel = _kernel_of(f, x, y)
    assert "i1" not in kernel.source and "for b0 in " in kernel.source, kernel.source
    flat = jitviz.jit(f)(x.reshape(-1), y.reshape(-1))
    for got, want in zip(c(x, y), flat):
        assert np.asarray(got).shape == shape
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), np.asarray(want))
    program = {id(e) for e in all_eqns(c.executable.jaxpr.jaxpr)}
    assert kernel.eqns and all(id(e) in program for e in kernel.eqns)
    assert kernel.line_eqns and all(id(e) in program for e in kernel.line_eqns.values())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_reductions_over_every_axis_of_one_shape_run_as_one_loop(dtype):
    """Reductions over every axis flatten too (their axes become (0,)): `x.sum()` of a
    (333334, 3) float32 array took 30x a 1-D array's time, its rows of 3 each a block. The
    same bits as the kernel of the same function on the 1-D array."""
    x = (np.random.default_rng(8).standard_normal((3331, 3)) * 10).astype(dtype)

    def f(x):
        return x.sum(), jnp.max(x * 2), jnp.min(x), jnp.mean(x * x), x - 1
    c, kernel = _kernel_of(f, x)
    assert "i1" not in kernel.source, kernel.source
    got, want = c(x), jitviz.jit(f)(x.reshape(-1))
    for a, b in zip(got[:4], want[:4]):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    np.testing.assert_array_equal(np.asarray(got[4]), np.asarray(want[4]).reshape(x.shape))
    np.testing.assert_allclose(np.asarray(got[0]), x.sum(dtype=np.float64), rtol=1e-5)


@pytest.mark.parametrize("case", ["transposed", "broadcast", "reduction"])
def test_kernels_that_are_not_one_shape_keep_their_loops(case):
    """A transposed operand (not C-contiguous: a reshape would copy it), a broadcast one, or
    a reduction keep the kernel's loop nest, and their values."""
    r = np.random.default_rng(6)
    x = r.uniform(-3, 3, (64, 48)).astype(np.float32)
    fs = {"transposed": (lambda x: jnp.sin(x.T) * 2 + 1, lambda x: np.sin(x.T) * 2 + 1),
          "broadcast": (lambda x: jnp.sin(x) + x[0], lambda x: np.sin(x) + x[0]),
          "reduction": (lambda x: jnp.sin(x) * x.sum(axis=1, keepdims=True),
                        lambda x: np.sin(x) * x.sum(axis=1, keepdims=True))}
    f, ref = fs[case]
    c = jitviz.jit(f).lower(x).compile()
    assert any("i1" in k.source for k in c.kernels), [k.source for k in c.kernels]
    np.testing.assert_allclose(np.asarray(c(x)), ref(x), rtol=2e-6, atol=2e-5)


def test_a_loop_bodys_elementwise_kernel_runs_as_one_loop_too():
    """Inside a control-flow region (a Numba function of its own) the kernel is called on
    reshaped views as well."""
    x = np.random.default_rng(7).uniform(-1, 1, (50, 3)).astype(np.float32)

    def f(x):
        return lax.fori_loop(0, 4, lambda i, v: jnp.tanh(v) * 1.5 + 0.25, x)
    c = jitviz.jit(f).lower(x).compile()
    src = "\n".join(k.source for k in c.kernels)
    assert "i1" not in src, src
    step, want = jitviz.jit(lambda v: jnp.tanh(v) * 1.5 + 0.25), x
    for _ in range(4):
        want = np.asarray(step(want))
    np.testing.assert_array_equal(np.asarray(c(x)), want)
