"""jitviz's CPU backend against NumPy, hand-written Numba, the memory-copy bound and jax.jit.

    python benchmarks/bench_cpu.py            # the full table (about a minute)
    python benchmarks/bench_cpu.py --quick    # fewer repetitions

Each workload is timed through `jitviz.jit` (the user's path: dispatch, argument checks and
all), after a warm-up call. Implementations are timed in interleaved rounds and the best
round is reported (the usual microbenchmark statistic; it filters out noise from other
processes). `copy` is `np.copy` of the array the workload streams (its input, same size as
its output): no elementwise program can beat reading the input and writing the output.
The compile section runs fresh processes for the first-compile numbers.

Nothing here is asserted; the README quotes the output.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from typing import Callable, NamedTuple

# A user's defaults: every core for NumPy's and XLA's BLAS and for jitviz's threaded kernels,
# no thread pinning. A machine that sets OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (to work around
# old OpenBLAS bugs) forces a slower kernel on today's NumPy, which a user's machine does not:
# the script starts itself again without them, and says so.
_FORCED = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(k in os.environ for k in _FORCED) and not os.environ.get("JITVIZ_BENCH_KEEP_BLAS_ENV"):
    _env = {k: v for k, v in os.environ.items() if k not in _FORCED}
    _env["JITVIZ_BENCH_DROPPED"] = ",".join(k for k in _FORCED if k in os.environ)
    os.execve(sys.executable, [sys.executable] + sys.argv, _env)

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jitviz  # noqa: E402
from _timing import (best_times, fmt_ratio, fmt_time, jax, jjnp,  # noqa: E402
                     numpy_output, print_columns)
import jitviz.numpy as jnp  # noqa: E402
from jitviz import lax  # noqa: E402



# --- the seeds' programs -------------------------------------------------------------------
from jitviz.examples import norm, selu, slow_f  # noqa: E402


def exp_only(x):
    return jnp.exp(x)


def sum_and_max(x):
    return x.sum(), x.max()


def loop_scale(x, w):
    """Control flow over arrays: its Numba region is what a new shape must not recompile."""
    return lax.fori_loop(0, 5, lambda i, c: jnp.tanh(c @ w) + c[::-1] * 0.5, x)


def forward(W, X):
    return jnp.maximum(0.0, jnp.dot(W, X))


def dot(W, X):
    return jnp.dot(W, X)


def f_loop(x):
    return lax.fori_loop(0, 200_000, lambda i, y: y + x, 0.)


# --- NumPy eager ---------------------------------------------------------------------------

def np_slow_f(x):
    return x * x + x * np.float32(2.0)


def np_selu(x, alpha=np.float32(1.67), lambda_=np.float32(1.05)):
    return lambda_ * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def np_sum_and_max(x):
    return x.sum(), x.max()


def np_norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


def np_forward(W, X):
    return np.maximum(np.float32(0), np.dot(W, X))


def np_loop(x):
    y = np.float32(0)
    for _ in range(200_000):
        y = y + x
    return y


# --- hand-written Numba: loops, output allocated by NumPy (_timing.numpy_output) ------------

@njit(cache=True)
def _nb_slow_f(x, out):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j]
            out[i, j] = v * v + v * np.float32(2.0)


nb_slow_f = numpy_output(_nb_slow_f)


@njit(cache=True)
def _nb_selu(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = np.float32(1.05) * (v if v > 0 else np.float32(1.67) * np.exp(v) - np.float32(1.67))


nb_selu = numpy_output(_nb_selu)


@njit(cache=True)
def _nb_exp(x, out):
    for i in range(x.shape[0]):
        out[i] = np.exp(x[i])


nb_exp = numpy_output(_nb_exp)


@njit(cache=True)
def nb_sum_and_max(x):
    s, m = np.float32(0), np.float32(-np.inf)
    for i in range(x.shape[0]):
        v = x[i]
        s += v
        m = max(m, v)
    return s, m


@njit(cache=True)
def _nb_norm(X, out):
    n, m = X.shape
    mean = np.zeros(m, X.dtype)
    for i in range(n):
        for j in range(m):
            mean[j] += X[i, j]
    mean /= n
    var = np.zeros(m, X.dtype)
    for i in range(n):
        for j in range(m):
            d = X[i, j] - mean[j]
            var[j] += d * d
    std = np.sqrt(var / n)
    for i in range(n):
        for j in range(m):
            out[i, j] = (X[i, j] - mean[j]) / std[j]


nb_norm = numpy_output(_nb_norm)


@njit(cache=True)
def nb_forward(W, X):
    Z = np.dot(W, X)
    for i in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            if Z[i, j] < 0:
                Z[i, j] = 0
    return Z


@njit(cache=True)
def nb_dot(W, X):
    return np.dot(W, X)


@njit(cache=True)
def nb_loop(x):
    y = np.float32(0)
    for _ in range(200_000):
        y += x
    return y


# --- the table -----------------------------------------------------------------------------

class Workload(NamedTuple):
    name: str
    size: str
    args: Callable[[], tuple]
    jitviz_fn: Callable
    numpy_fn: Callable
    numba_fn: Callable
    jax_fn: Callable | None
    copy: bool  # is the copy bound meaningful (a streaming workload)?
    jit_options: dict = {}  # e.g. parallel=True


def _jax(fn):
    if jax is None:
        return None
    return jax.jit(fn)


def workloads():
    rng = np.random.default_rng(0)
    big = lambda: (rng.random((5000, 5000), np.float32),)  # noqa: E731
    vec = lambda: (rng.standard_normal(1_000_000).astype(np.float32),)  # noqa: E731
    tall = lambda: (rng.random((10000, 10), np.float32),)  # noqa: E731
    long = lambda: (rng.standard_normal(10_000_000).astype(np.float32),)  # noqa: E731
    mats = lambda: (rng.standard_normal((512, 1024)).astype(np.float32),  # noqa: E731
                    rng.standard_normal((1024, 2048)).astype(np.float32))
    jx = {}
    if jax is not None:
        jx = dict(
            slow_f=lambda x: x * x + x * 2.0,
            selu=lambda x: 1.05 * jjnp.where(x > 0, x, 1.67 * jjnp.exp(x) - 1.67),
            exp=jjnp.exp,
            sum_and_max=lambda x: (x.sum(), x.max()),
            norm=lambda X: (X - X.mean(0)) / (X - X.mean(0)).std(0),
            forward=lambda W, X: jjnp.maximum(0.0, jjnp.dot(W, X)),
            dot=lambda W, X: jjnp.dot(W, X),
            loop=lambda x: jax.lax.fori_loop(0, 200_000, lambda i, y: y + x, 0.),
        )
    return [
        Workload("x*x + x*2.0", "5000x5000 f32", big, slow_f, np_slow_f, nb_slow_f,
                 _jax(jx.get("slow_f")) if jx else None, True),
        Workload("  same, parallel=True (prange)", "5000x5000 f32", big, slow_f, np_slow_f,
                 nb_slow_f, None, True, {"parallel": True}),
        Workload("SELU", "1M f32", vec, selu, np_selu, nb_selu,
                 _jax(jx.get("selu")) if jx else None, True),
        Workload("  same, parallel=True (prange)", "1M f32", vec, selu, np_selu, nb_selu,
                 None, True, {"parallel": True}),
        Workload("  same, fastmath=True", "1M f32", vec, selu, np_selu, nb_selu,
                 None, True, {"fastmath": True}),
        Workload("  exp alone (SELU's arithmetic bound)", "1M f32", vec, exp_only, np.exp,
                 nb_exp, _jax(jx.get("exp")) if jx else None, True),
        Workload("sum and max of one array", "10M f32", long, sum_and_max, np_sum_and_max,
                 nb_sum_and_max, _jax(jx.get("sum_and_max")) if jx else None, False),
        Workload("norm (mean/std axis 0)", "10000x10 f32", tall, norm, np_norm, nb_norm,
                 _jax(jx.get("norm")) if jx else None, True),
        Workload("forward (dot + relu)", "512x1024 @ 1024x2048", mats, forward, np_forward,
                 nb_forward, _jax(jx.get("forward")) if jx else None, False),
        Workload("dot alone (BLAS)", "512x1024 @ 1024x2048", mats, dot, np.dot, nb_dot,
                 _jax(jx.get("dot")) if jx else None, False),
        Workload("fori_loop 200k scalar steps", "f32 scalar", lambda: (np.float32(1.0),),
                 f_loop, np_loop, nb_loop, _jax(jx.get("loop")) if jx else None, False),
    ]










def ml_workloads():
    """Softmax, layernorm, GELU, ... (benchmarks/ml_workloads.py) as Workload rows."""
    import ml_workloads as ml
    return [Workload(name, size, args, fn, np_fn, nb_fn, jax_fn, False)
            for name, size, args, fn, np_fn, nb_fn, jax_fn in
            ml.rows(np.random.default_rng(1), jax, jjnp)]


def blas_info() -> str:
    """NumPy's BLAS and its threads, as a user would find them."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        name = f"{blas.get('name')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - older NumPy
        name = "unknown BLAS"
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    dropped = os.environ.get("JITVIZ_BENCH_DROPPED")
    return (f"NumPy BLAS: {name}, threads: {threads or f'default (all {os.cpu_count()} cores)'}"
            + (f"; {dropped} unset for this run (a user's machine does not set them)"
               if dropped else ""))


def run_table(rounds, budget):
    rows = []
    for w in workloads() + ml_workloads():
        args = w.args()
        jf = jitviz.jit(w.jitviz_fn, **w.jit_options)
        fns = {"jitviz": jf, "numpy": w.numpy_fn, "numba": w.numba_fn}
        if w.copy:
            fns["copy"] = lambda *a: np.copy(a[0])
        if w.jax_fn is not None:
            jargs = tuple(jax.numpy.asarray(a) for a in args)
            fns["jax"] = lambda *a, f=w.jax_fn, j=jargs: f(*j)
        t = best_times(fns, args, rounds, budget)
        check = np.asarray(jf(*args))
        ref = np.asarray(w.numpy_fn(*args))
        ok = np.allclose(check, ref, rtol=1e-3, atol=1e-3 * max(1.0, float(np.abs(ref).max())))
        rows.append((w, t, ok, jf))
    return rows


def print_table(rows):
    head = ["workload", "size", "jitviz cpu", "NumPy", "Numba loop", "copy bound", "jax.jit",
            "vs copy", "NumPy/jitviz", "jitviz/Numba", "jitviz/jax", "ok"]
    lines = []
    for w, t, ok, _ in rows:
        j = t["jitviz"]
        lines.append([w.name, w.size, fmt_time(j), fmt_time(t["numpy"]), fmt_time(t["numba"]),
                      fmt_time(t.get("copy")), fmt_time(t.get("jax")),
                      fmt_ratio(j, t.get("copy")), fmt_ratio(t["numpy"], j),
                      fmt_ratio(j, t["numba"]), fmt_ratio(j, t.get("jax")),
                      "yes" if ok else "NO"])
    print_columns(head, lines)
    ratios = [t["jitviz"] / t["jax"] for _, t, _, _ in rows if t.get("jax")]
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\ngeometric mean of jitviz/jax over {len(ratios)} workloads: {geo:.2f}x "
              "(below 1: jitviz faster)")


# --- compile times -------------------------------------------------------------------------

_FRESH = textwrap.dedent("""
    import sys, time, json
    t0 = time.perf_counter()
    sys.path.insert(0, {root!r})
    import numpy as np, jitviz
    t1 = time.perf_counter()
    def slow_f(x):
        return x * x + x * 2.0
    x = np.ones((64, 64), np.float32)
    f = jitviz.jit(slow_f)
    t2 = time.perf_counter()
    f(x)
    t3 = time.perf_counter()
    print(json.dumps({{"import": t1 - t0, "first_call": t3 - t2,
                       "reused": f.lower(x).compile().kernels[0].reused}}))
""")


def fresh_process(cache_dir):
    env = dict(os.environ, JITVIZ_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", _FRESH.format(root=ROOT)], env=env,
                         capture_output=True, text=True, check=True)
    import json
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_call(f, *args):
    t = time.perf_counter()
    f(*args)
    return time.perf_counter() - t


def steady(f, *args, n=50):
    f(*args)
    t = time.perf_counter()
    for _ in range(n):
        f(*args)
    return (time.perf_counter() - t) / n


def compile_times():
    rows = []
    with tempfile.TemporaryDirectory() as d:
        cold = fresh_process(d)
        warm = fresh_process(d)
    rows.append(("import jitviz (fresh process)", cold["import"], ""))
    rows.append(("first kernel, fresh process, empty disk cache", cold["first_call"],
                 "trace + passes + Numba compile"))
    rows.append(("first kernel, fresh process, warm disk cache", warm["first_call"],
                 f"kernel loaded from disk (reused={warm['reused']})"))
    # the rows below must compile: an empty kernel cache for them
    old = os.environ.get("JITVIZ_CACHE_DIR")
    os.environ["JITVIZ_CACHE_DIR"] = tempfile.mkdtemp(prefix="jitviz-bench-")
    try:
        rows += _in_process_compiles()
    finally:
        if old is None:
            os.environ.pop("JITVIZ_CACHE_DIR")
        else:
            os.environ["JITVIZ_CACHE_DIR"] = old
    return rows


def _in_process_compiles():
    rows = []

    def g(x):  # a function no other row compiled
        return jnp.tanh(x) * 0.5 + x * x - 1.0
    f = jitviz.jit(g)
    x32 = np.ones((300, 200), np.float32)
    t_first = first_call(f, x32) - steady(f, x32)
    rows.append(("new function (Numba compile, warm process)", t_first,
                 "on top of a steady call"))
    jitviz.config.update("enable_x64", True)  # float64 arguments need x64, as in JAX
    try:
        t_spec = first_call(f, np.ones((300, 200), np.float64)) - steady(f, np.ones((300, 200)))
    finally:
        jitviz.config.update("enable_x64", False)
    rows.append(("new specialization (f32 -> f64)", t_spec, "new kernel text: compiles"))
    t_rank = first_call(f, np.ones(60000, np.float32)) - steady(f, np.ones(60000, np.float32))
    rows.append(("new specialization (rank 2 -> 1)", t_rank, "new kernel text: compiles"))
    y = np.ones((400, 150), np.float32)
    t_shape = first_call(f, y) - steady(f, y)
    rows.append(("new shape, same rank and dtype", t_shape,
                 "retrace, kernel reused (target < 10 ms)"))
    yn = np.ones((1000, 1000), np.float32)
    fn = jitviz.jit(norm)
    fn(np.ones((50, 10), np.float32))
    t_norm = first_call(fn, yn) - steady(fn, yn, n=5)
    rows.append(("norm: new shape, same rank", t_norm, "literal 1/N is a kernel argument"))
    fl = jitviz.jit(loop_scale)
    fl(np.ones(64, np.float32), np.eye(64, dtype=np.float32))
    xb, wb = np.ones(96, np.float32), np.eye(96, dtype=np.float32)
    t_loop = first_call(fl, xb, wb) - steady(fl, xb, wb)
    rows.append(("fori_loop over arrays: new shape, same rank", t_loop,
                 "the loop's Numba region takes sizes as arguments: reused"))
    if jax is not None:
        jg = jax.jit(lambda x: jjnp.tanh(x) * 0.5 + x * x - 1.0)
        jg(jjnp.ones((300, 200))).block_until_ready()
        t = time.perf_counter()
        jg(jjnp.ones((400, 150))).block_until_ready()
        rows.append(("jax.jit: new shape, same rank", time.perf_counter() - t,
                     "XLA recompiles"))
    return rows


def print_compile(rows):
    w = max(len(r[0]) for r in rows)
    print(f"{'compile':<{w}}  {'time':>10}  note")
    print(f"{'-' * w}  {'-' * 10}  {'-' * 40}")
    for name, t, note in rows:
        print(f"{name:<{w}}  {fmt_time(t):>10}  {note}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds")
    a = p.parse_args(argv)
    rounds, budget = (3, 0.05) if a.quick else (7, 0.25)
    import platform
    import numba
    print(f"jitviz {jitviz.__version__}, numba {numba.__version__}, numpy {np.__version__}, "
          f"jax {jax.__version__ if jax else 'not installed'}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; best of {rounds} interleaved rounds")
    print(blas_info())
    print(f"jitviz threads: chosen per kernel (parallel=None), numba has "
          f"{numba.get_num_threads()}\n")
    print_table(run_table(rounds, budget))
    print()
    print_compile(compile_times())


if __name__ == "__main__":
    main()
