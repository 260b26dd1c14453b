"""Host callbacks (`jitviz.pure_callback`, `jitviz.experimental.io_callback`,
`jitviz.debug.callback`) against real JAX: values, how often and with what the function is
called (every call, per example under vmap), printing, errors; on the interpreter, the CPU
backend (the driver, and Numba regions of fori_loop/cond/scan through objmode) and, in a child
process, CUDA in Numba's simulator (as tests/test_cuda_backend.py)."""
from __future__ import annotations

import gc
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.experimental import io_callback

jax = pytest.importorskip("jax")
import jax.numpy as jaxnp  # noqa: E402
from jax.experimental import io_callback as jax_io_callback  # noqa: E402
from helpers import child_env, run_in_simulator

CHILD = os.environ.get("JITVIZ_CUDA_SIM_CHILD") == "1"
sim = pytest.mark.skipif(not CHILD, reason="runs in the CUDA simulator child process")
main_only = pytest.mark.skipif(CHILD, reason="runs in the main test process")
f32 = np.float32
BACKENDS = ["interpret", "cpu"]
X = np.array([0.5, -1.25, 2.0], f32)


def S(shape, dtype=f32):
    return jitviz.ShapeDtypeStruct(shape, dtype)


def JS(shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


class Calls:
    """A host function that records the values it was called with."""

    def __init__(self, fn=lambda *a, **kw: a[0] if a else None):
        self.fn, self.seen = fn, []

    def __call__(self, *args, **kwargs):
        self.seen.append([np.array(a) for a in args] + [np.array(v) for v in kwargs.values()])
        return self.fn(*args, **kwargs)


def _both(program):
    """`program(api)` under jitviz's names and under JAX's: (jitviz's, JAX's)."""
    return program(_JITVIZ), program(_JAX)


class _Api:
    def __init__(self, jit, pure, io, debug, sds, vmap, grad, fori, cond, scan):
        self.jit, self.pure, self.io, self.debug, self.S = jit, pure, io, debug, sds
        self.vmap, self.grad, self.fori, self.cond, self.scan = vmap, grad, fori, cond, scan


_JITVIZ = _Api(jitviz.jit, jitviz.pure_callback, io_callback, jitviz.debug.callback, S,
               jitviz.vmap, jitviz.grad, lax.fori_loop, lax.cond, lax.scan)
_JAX = _Api(jax.jit, jax.pure_callback, jax_io_callback, jax.debug.callback, JS, jax.vmap,
            jax.grad, jax.lax.fori_loop, jax.lax.cond, jax.lax.scan)


def _jit(api, fn, backend):
    return api.jit(fn, backend=backend) if api is _JITVIZ else api.jit(fn)


# --- values and calls, against JAX ---------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_pure_callback_returns_the_host_result_as_jax(backend):
    def program(api):
        def host(x, scale):
            return {"sin": np.sin(x) * scale, "n": np.asarray(x.size, np.int32)}
        f = _jit(api, lambda x: api.pure(
            host, {"sin": api.S((3,)), "n": api.S((), np.int32)}, x * 2, scale=f32(3)),
            backend)
        return f(X)
    got, want = _both(program)
    np.testing.assert_allclose(got["sin"], np.asarray(want["sin"]), rtol=1e-6)
    assert int(got["n"]) == int(want["n"]) == 3 and got["n"].dtype == np.int32
    assert got["sin"].dtype == np.float32


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("where", ["top", "fori_loop", "cond", "scan"])
def test_called_on_every_call_with_the_runtime_values(backend, where):
    """Not once while tracing: two calls of one compiled function (a cache hit) call the host
    function twice as often as one, with each call's values, at the top level and inside the
    Numba region of each control-flow primitive."""
    def program(api):
        seen = Calls(lambda v: v * f32(10))

        def cb(v):
            return api.pure(seen, api.S(()), v)
        fns = {"top": lambda x: cb(x) + 1,
               "fori_loop": lambda x: api.fori(0, 2, lambda i, c: cb(c) + 1, x),
               "cond": lambda x: api.cond(x > 0, lambda v: cb(v), lambda v: v - 1, x),
               "scan": lambda x: api.scan(lambda c, e: (c + cb(e), None), x, X)[0]}
        f = _jit(api, fns[where], backend)
        outs = [float(f(f32(1.5))), float(f(f32(2.5)))]
        return outs, [float(s[0]) for s in seen.seen]
    (outs, seen), (jouts, jseen) = _both(program)
    np.testing.assert_allclose(outs, jouts, rtol=1e-6)
    assert seen == pytest.approx(jseen) and len(seen) >= 2


def test_cpu_regions_call_through_objmode_and_the_driver_directly():
    f = jitviz.jit(lambda x: lax.fori_loop(
        0, 3, lambda i, c: jitviz.pure_callback(np.cos, S((3,)), c), x), backend="cpu")
    np.testing.assert_allclose(f(X), np.cos(np.cos(np.cos(X))), rtol=1e-6)
    exe = f.specializations[0].executable
    region = "\n".join(k.source for k in exe.kernels)
    assert re.search(r"with objmode\(\w+='float32\[::1\]'\):", region)
    assert "_call_host_callback('numpy.cos#" in region
    g = jitviz.jit(lambda x: jitviz.pure_callback(np.cos, S((3,)), x) * 2, backend="cpu")
    np.testing.assert_allclose(g(X), np.cos(X) * 2, rtol=1e-6)
    assert "_call_host_callback(" in g.specializations[0].executable.driver_source


@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_results_pure_is_dropped_io_and_debug_are_kept(backend):
    """As under jax.jit: a pure callback whose result nobody reads may be removed (the
    optimizing CPU backend does; the interpreter runs the traced program as it is); an
    io_callback and a debug.callback are effects, and two equal ones both run."""
    def program(api):
        pure, io, dbg = Calls(), Calls(), Calls()

        def f(x):
            api.pure(pure, api.S((3,)), x)
            api.io(io, api.S((3,)), x)
            api.io(io, api.S((3,)), x)
            api.debug(dbg, x)
            api.debug(dbg, x)
            return x + 1
        _jit(api, f, backend)(X)
        return len(pure.seen), len(io.seen), len(dbg.seen)
    got, want = _both(program)
    assert want == (0, 2, 2)
    assert got == (0 if backend == "cpu" else 1, 2, 2)


# --- vmap -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_vmap_methods_call_as_jax_does(backend, method):
    def program(api):
        seen = Calls(lambda x, y: x * y)
        f = _jit(api, api.vmap(lambda x, y: api.pure(seen, api.S((3,)), x, y,
                                                     vmap_method=method),
                               in_axes=(0, None)), backend)
        out = f(np.stack([X, X * 2]), X + 1)
        return np.asarray(out), [[a.shape for a in s] for s in seen.seen]
    (out, shapes), (jout, jshapes) = _both(program)
    np.testing.assert_allclose(out, jout, rtol=1e-6)
    assert shapes == jshapes


def test_vmap_without_a_method_raises_as_jax():
    for api, exc in [(_JITVIZ, NotImplementedError), (_JAX, NotImplementedError)]:
        with pytest.raises(exc, match="vmap_method"):
            api.vmap(lambda x: api.pure(np.sin, api.S(()), x))(X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_io_callback_under_vmap_runs_per_example_and_ordered_refuses(backend):
    def program(api):
        seen = Calls(lambda v: v * 2)
        out = _jit(api, api.vmap(lambda x: api.io(seen, api.S(()), x)), backend)(X)
        return np.asarray(out), [float(s[0]) for s in seen.seen]
    (out, seen), (jout, jseen) = _both(program)
    np.testing.assert_allclose(out, jout)
    assert seen == list(X) == jseen
    for api in (_JITVIZ, _JAX):
        with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
            api.vmap(lambda x: api.io(np.sin, api.S(()), x, ordered=True))(X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_callback_per_example_under_nested_vmap_in_jax_order(backend):
    """The order of JAX's op-by-op calls, which is jitviz.debug.print's: the first vmap
    applied varies slowest (under jax.jit JAX's order is the other one)."""
    def program(api):
        seen = Calls()
        f = api.vmap(api.vmap(lambda x, y: api.debug(seen, x, y=y), in_axes=(0, None)),
                     in_axes=(None, 0))
        (jitviz.jit(f, backend=backend) if api is _JITVIZ else f)(X, np.arange(2, dtype=f32))
        return [tuple(float(v) for v in s) for s in seen.seen]
    got, want = _both(program)
    assert got == want and len(got) == 6


# --- derivatives ----------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_callback_sees_primals_under_grad(backend):
    def program(api):
        seen = Calls()

        def loss(x):
            api.debug(seen, x)
            return (x * x).sum()
        g = _jit(api, api.grad(loss), backend)(X)
        return np.asarray(g), [s[0] for s in seen.seen]
    (g, seen), (jg, jseen) = _both(program)
    np.testing.assert_allclose(g, jg)
    assert len(seen) == len(jseen) == 1
    np.testing.assert_array_equal(seen[0], jseen[0])


@pytest.mark.parametrize("which", ["pure", "io"])
def test_no_derivative_raises_jax_error(which):
    messages = {"pure": "Pure callbacks do not support JVP. Please use `jax.custom_jvp`",
                "io": "IO callbacks do not support JVP."}
    for api in (_JITVIZ, _JAX):
        call = getattr(api, which)
        with pytest.raises(ValueError, match=re.escape(messages[which])):
            api.grad(lambda x: call(np.sin, api.S(()), x))(f32(1))
    with pytest.raises(ValueError, match=re.escape(messages[which])):
        jitviz.jvp(lambda x: getattr(_JITVIZ, which)(np.sin, S(()), x), (f32(1),), (f32(1),))


def test_custom_jvp_gives_a_pure_callback_a_derivative():
    """The fix the error names works: the callback runs on the host, its derivative is jitted."""
    @jitviz.custom_jvp
    def host_sin(x):
        return jitviz.pure_callback(np.sin, S(x.shape), x)

    @host_sin.defjvp
    def _(primals, tangents):
        return host_sin(primals[0]), jnp.cos(primals[0]) * tangents[0]
    g = jitviz.jit(jitviz.grad(lambda x: host_sin(x).sum()), backend="cpu")(X)
    np.testing.assert_allclose(g, np.cos(X), rtol=1e-6)


def test_a_callback_off_the_differentiated_path_needs_no_derivative():
    f = lambda x, k: x * jitviz.pure_callback(np.square, S(()), k)  # noqa: E731
    assert float(jitviz.grad(f)(f32(2), f32(3))) == 9.0


# --- printing ---------------------------------------------------------------------------------------

def _params(text):
    return re.findall(r"^\s+(\w+)=(.*)$", text, re.M)


@pytest.mark.parametrize("which", ["pure", "io", "debug"])
def test_jaxpr_prints_jax_params(which):
    """Every param JAX prints, in JAX's order, with JAX's values; only the callback's own
    repr differs (JAX wraps it in _FlatCallback)."""
    def program(api, make_jaxpr):
        calls = {"pure": lambda x: api.pure(np.sin, api.S((3,)), x),
                 "io": lambda x: api.io(np.sin, api.S((3,)), x, ordered=True),
                 "debug": lambda x: api.debug(print, x)}
        return str(make_jaxpr(calls[which])(X))
    got, want = program(_JITVIZ, jitviz.make_jaxpr), program(_JAX, jax.make_jaxpr)
    name = {"pure": "pure_callback", "io": "io_callback", "debug": "debug_callback"}[which]
    assert f"{name}[" in got and f"{name}[" in want
    mine, theirs = _params(got), _params(want)
    assert [k for k, _ in mine] == [k for k, _ in theirs]
    assert mine[1:] == theirs[1:]
    assert mine[0][1] == repr(np.sin if which != "debug" else print)


# --- errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_result_shape_names_callback_result_and_fix(backend):
    def wrong(x):
        return np.ones(4, f32)
    f = jitviz.jit(lambda x: jitviz.pure_callback(wrong, S((3,)), x), backend=backend)
    with pytest.raises(TypeError, match=r"pure_callback: the callback .*wrong returned "
                                        r"f32\[4\].*declares f32\[3\]\. Fix:"):
        f(X)
    with pytest.raises(Exception, match="Incorrect output shape"):  # JAX refuses it too
        jax.jit(lambda x: jax.pure_callback(wrong, JS((3,)), x))(X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_result_dtype_follows_jax(backend):
    """Float64/int64 results (NumPy's and Python's defaults) are accepted for a declared
    float32/int32 without x64, as JAX does; another kind of number is an error."""
    ok = jitviz.jit(lambda x: jitviz.pure_callback(lambda v: float(v) * 2, S(()), x),
                    backend=backend)(f32(1.5))
    assert float(ok) == 3.0 and ok.dtype == np.float32
    bad = jitviz.jit(lambda x: jitviz.pure_callback(lambda v: v + 0.5, S((3,), np.int32), x),
                     backend=backend)
    with pytest.raises(TypeError, match=r"returned f32\[3\].*declares i32\[3\]"):
        bad(X)
    with pytest.raises(Exception, match="Incorrect output dtype"):
        jax.jit(lambda x: jax.pure_callback(lambda v: v + 0.5, JS((3,), np.int32), x))(X)


def test_wrong_result_structure_and_bad_arguments():
    with pytest.raises(TypeError, match=r"returned 2 array\(s\) \(PyTreeDef\(\(\*, \*\)\), a "
                                        r"tuple\), but result_shape_dtypes declares 1"):
        jitviz.jit(lambda x: jitviz.pure_callback(lambda v: (v, v), S((3,)), x))(X)
    # as in JAX, only the number of arrays counts: a list for a declared tuple is fine
    pair = jitviz.jit(lambda x: jitviz.pure_callback(lambda v: [v, v * 2], (S((3,)), S((3,))),
                                                     x))(X)
    assert isinstance(pair, tuple) and np.allclose(pair[1], 2 * X)
    with pytest.raises(TypeError, match="result_shape_dtypes must be a pytree of "
                                        "jitviz.ShapeDtypeStruct"):
        jitviz.pure_callback(np.sin, (3,), X)
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        jitviz.pure_callback(np.sin, S((3,)), X, vmap_method="bad")
    with pytest.raises(TypeError, match="the callback must be callable"):
        jitviz.pure_callback(S((3,)), np.sin, X)
    with pytest.raises(TypeError, match="not a number"):
        jitviz.jit(lambda x: jitviz.pure_callback(lambda v: "a", S(()), x))(f32(1))


def test_eager_calls_return_arrays_and_none():
    out = jitviz.pure_callback(lambda v: v * 2, S(()), f32(2))
    assert isinstance(out, jitviz.Array) and float(out) == 4.0
    seen = Calls()
    assert jitviz.debug.callback(seen, X) is None and len(seen.seen) == 1
    assert float(io_callback(lambda v: v + 1, S(()), f32(1))) == 2.0


# --- slots: how generated code names the function ----------------------------------------------------

def _scaler(k):
    def scale(v):
        return v * f32(k)
    return jitviz.jit(lambda x: lax.fori_loop(
        0, 2, lambda i, c: jitviz.pure_callback(scale, S((3,)), c), x), backend="cpu")


def _slot(f):
    text = "\n".join(k.source for k in f.specializations[0].executable.kernels)
    return re.search(r"_call_host_callback\('([^']+)'", text).group(1)


def test_two_live_callbacks_never_share_a_kernel():
    """Same qualname, same code, different closures: each region names its own slot, so
    the text-keyed kernel cache cannot hand one the other's function."""
    f2, f3 = _scaler(2), _scaler(3)
    np.testing.assert_allclose(f2(X), X * 4)
    np.testing.assert_allclose(f3(X), X * 9)
    assert _slot(f2) != _slot(f3)
    np.testing.assert_allclose(f2(X), X * 4)


def test_a_rerun_cell_reuses_the_slot_of_the_run_it_replaces():
    """A notebook cell run again defines a new function; once the old jitted function is gone
    its slot is free, so the new run has the same text (a kernel cache hit) and calls the new
    function, and the slots in use stay bounded."""
    from jitviz.callbacks import _SLOTS
    gc.collect()  # (earlier tests' functions, still in reference cycles, free their slots)
    f = _scaler(2)
    f(X)
    first = _slot(f)
    del f
    gc.collect()
    before = len(_SLOTS)
    for k in (5, 7):
        f = _scaler(k)
        np.testing.assert_allclose(f(X), X * k * k)
        assert _slot(f) == first
        del f
        gc.collect()
    assert len(_SLOTS) <= before


# --- CUDA in the simulator ---------------------------------------------------------------------------

@main_only
def test_cuda_simulator_suite():
    """Run this file's `sim` tests in Numba's CUDA simulator, in a fresh process."""
    run_in_simulator(__file__, "-k", "cuda", timeout=900)


@sim
def test_cuda_callbacks_at_the_top_level_between_kernels():
    from jitviz.backends.cuda.runtime import runtime
    assert runtime().mode == "sim"
    seen = Calls()

    def f(x):
        y = jitviz.pure_callback(lambda v: np.sort(v), S((3,)), x * 2)
        jitviz.debug.callback(seen, y)
        z = io_callback(lambda v: v.sum(dtype=f32), S(()), y + 1)
        return y, z
    want = jitviz.jit(f, backend="interpret")(X)
    got = jitviz.jit(f, backend="cuda")(X)
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), want[1], rtol=1e-6)
    assert len(seen.seen) == 2
    np.testing.assert_allclose(seen.seen[1][0], np.sort(X * 2))


@sim
def test_cuda_callbacks_inside_loops_run_the_loop_on_the_host():
    """A loop that would be one kernel cannot call the host from a thread: the planner runs
    it on the host, its body's callbacks as host steps, every iteration."""
    seen = Calls()

    def f(x):
        def body(i, c):
            jitviz.debug.callback(seen, i, c)
            return jitviz.pure_callback(np.cos, S(()), c) + f32(1)
        return lax.fori_loop(0, 3, body, x)
    want = jitviz.jit(f, backend="interpret")(f32(0.5))
    got = jitviz.jit(f, backend="cuda")(f32(0.5))
    np.testing.assert_allclose(float(np.asarray(got)), float(want), rtol=1e-6)
    assert [int(s[0]) for s in seen.seen] == [0, 1, 2] * 2
    g = jitviz.jit(jitviz.vmap(lambda x: jitviz.pure_callback(
        np.sin, S(()), x, vmap_method="sequential")), backend="cuda")
    np.testing.assert_allclose(np.asarray(g(X)), np.sin(X), rtol=1e-6)


# --- the `host` fate of a line ---------------------------------------------------------------------

def _annotated(x):
    y = jitviz.pure_callback(np.sin, S((3,)), x)
    z = lax.fori_loop(0, 2, lambda i, c: jitviz.pure_callback(np.cos, S((3,)), c), y)
    return z * 2


def test_annotate_gives_callback_lines_the_host_fate_naming_the_function():
    """At the top level and inside a region (where the Numba code leaves nopython mode)."""
    lines = {a.code.strip(): a for a in jitviz.annotate(_annotated, X, backend="cpu").lines}
    top = lines["y = jitviz.pure_callback(np.sin, S((3,)), x)"]
    loop = next(a for code, a in lines.items() if code.startswith("z = lax.fori_loop"))
    assert "host" in top.fates and "calls numpy.sin (pure_callback) on the host" in top.note
    assert {"host", "control_flow"} <= set(loop.fates)
    assert "calls numpy.cos (pure_callback) on the host" in loop.note
    assert "host" not in lines["return z * 2"].fates


def test_debug_callback_ordered_and_decorator_forms_as_jax():
    """`ordered`/`partitioned` are JAX's options, not the callback's keywords; without a
    callback, debug.callback is a decorator factory."""
    for api, make_jaxpr in [(_JITVIZ, jitviz.make_jaxpr), (_JAX, jax.make_jaxpr)]:
        seen = Calls()
        text = str(make_jaxpr(lambda x: api.debug(seen, x, ordered=True))(f32(1)))
        assert "effect=OrderedDebug" in text
        api.jit(lambda x: api.debug(seen, x, ordered=True))(f32(2))
        assert [float(s[0]) for s in seen.seen] == [2.0]
    for api in (_JITVIZ, _JAX):
        seen = Calls()
        api.jit(lambda x: api.debug(ordered=True)(seen, x, x + 1))(f32(2))
        assert [[float(v) for v in s] for s in seen.seen] == [[2.0, 3.0]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_debug_callback_passes_non_array_arguments_as_they_are(backend):
    def program(api):
        seen = []
        f = _jit(api, lambda x: api.debug(lambda label, v, unit: seen.append(
            f"{label}={float(v)}{unit}"), "loss", x, unit="!"), backend)
        f(f32(2))
        f(f32(3))
        return seen
    got, want = _both(program)
    assert got == want == ["loss=2.0!", "loss=3.0!"]


def test_pure_callback_accepts_jax_sharding_keyword():
    out = jitviz.jit(lambda x: jitviz.pure_callback(np.sin, S((3,)), x, sharding=None))(X)
    np.testing.assert_allclose(out, np.sin(X), rtol=1e-6)


_SCALE_SCRIPT = """
import sys, numpy as np, jitviz
from jitviz import lax
k = np.float32(sys.argv[1])
def scale(v):
    return v * k
f = jitviz.jit(lambda x: lax.fori_loop(0, 2, lambda i, c: jitviz.pure_callback(
    scale, jitviz.ShapeDtypeStruct((3,), np.float32), c), x), backend="cpu")
print(float(f(np.ones(3, np.float32))[0]))
"""


@main_only
def test_a_kernel_from_the_disk_cache_calls_this_process_function(tmp_path):
    """Two processes, one kernel text (the same slot name), different functions: the second
    loads the first's compiled region from disk and still calls its own function."""
    env = child_env(JITVIZ_CACHE_DIR=str(tmp_path / "cache"))
    script = tmp_path / "scale.py"
    script.write_text(_SCALE_SCRIPT)
    outs = []
    for k in ("2", "3"):
        proc = subprocess.run([sys.executable, str(script), k], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(float(proc.stdout.split()[-1]))
        files = sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file())
        if k == "2":
            first = files
    assert outs == [4.0, 9.0]
    assert files == first  # nothing new compiled: the region came from the disk cache


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("where", ["top", "fori_loop"])
def test_an_exception_in_the_callback_reaches_the_caller(backend, where):
    def broken(v):
        raise KeyError("the table has no such row")

    def call(v):
        return jitviz.pure_callback(broken, S(()), v)
    f = call if where == "top" else (lambda x: lax.fori_loop(0, 2, lambda i, c: call(c), x))
    with pytest.raises(KeyError, match="the table has no such row"):
        jitviz.jit(f, backend=backend)(f32(1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_callback_cannot_change_the_programs_values(backend):
    """Operands are read-only to the callback (JAX's are too): an in-place update raises
    instead of changing a value the program reads afterwards."""
    def bump(v):
        v += 1
        return v
    f = jitviz.jit(lambda x: (jitviz.pure_callback(bump, S((3,)), x), x), backend=backend)
    with pytest.raises(ValueError, match=r"pure_callback: the callback .*bump wrote into one "
                                         r"of its operands.*Fix: compute a new array"):
        f(X)
    ok = jitviz.jit(lambda x: jitviz.pure_callback(lambda v: v + 1, S((3,)), x) + x,
                    backend=backend)
    np.testing.assert_allclose(ok(X), 2 * X + 1)
