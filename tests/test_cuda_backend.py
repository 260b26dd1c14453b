"""The CUDA backend against the interpreter, in Numba's CUDA simulator (no GPU needed).

Numba picks the simulator when `numba.cuda` is first imported, so the differential tests
(marked `sim`) run in a child `python -m pytest` of this file with NUMBA_ENABLE_CUDASIM=1;
`test_simulator_suite` starts it and fails with its report. The main test process never
imports the simulator. Tests that need no device at all (plans, sources, error messages)
run in the main process; real PTX is checked in test_cuda_ptx.py.

The primitive table is test_primitives.CASES (every primitive has a case there) plus CUDA
cases below (block reductions, multi-block grids, dtypes); `fused` gets a case built from the
optimizer. A primitive without a case or without a CUDA lowering fails here.
"""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import jitviz
import jitviz.debug  # noqa: F401  (registers debug_print)
import jitviz.nn
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.core.ir import ClosedJaxpr
from jitviz.core.registry import PRIMITIVES

from test_primitives import CASES, Case, _case_id, closed  # noqa: E402
from helpers import run_in_simulator

try:  # the optimizer registers `fused`
    import jitviz.passes  # noqa: F401
    from jitviz.core.fused import fused_p
except ImportError:  # pragma: no cover - before the passes land
    fused_p = None

ROOT = Path(__file__).resolve().parent.parent
CHILD = os.environ.get("JITVIZ_CUDA_SIM_CHILD") == "1"
sim = pytest.mark.skipif(not CHILD, reason="runs in the CUDA simulator child process "
                                           "(test_simulator_suite)")
main_only = pytest.mark.skipif(CHILD, reason="runs in the main test process")

f32, f64, f16, i32, u8, c64 = (np.float32, np.float64, np.float16, np.int32, np.uint8,
                               np.complex64)
rng = np.random.default_rng(7)


def F(*shape, dtype=f32, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def I(*shape, lo=-5, hi=6, dtype=i32):
    return rng.integers(lo, hi, shape).astype(dtype)


def _dn(lc, rc, lb=(), rb=(), dt=f32):
    return {"dimension_numbers": ((lc, rc), (lb, rb)), "precision": None,
            "preferred_element_type": np.dtype(dt)}


def _scatter(mode):
    def ref(x, u, i):
        out = x.copy()
        getattr(np, {"mul": "multiply", "min": "minimum", "max": "maximum"}[mode]).at(
            out, (slice(None), i), u)
        return out
    return ref


def _argmax_nan():
    x = F(37, 3)
    x[5, 1], x[20, 1] = np.nan, np.nan
    x[3, 2] = x[30, 2] = 9.0
    return x


NAN_X = _argmax_nan()

# Sizes here exceed the simulator's serial-reduction limit (4), tile (2), block (4) and grid
# (2): block tree reductions, second passes and grid-stride loops all run.
CUDA_CASES = [
    Case("reduce_sum", (F(40),), {"axes": (0,)}, lambda x: x.sum(dtype=f32), "two-pass"),
    Case("reduce_sum", (F(3, 9, 5),), {"axes": (0, 2)}, lambda x: x.sum((0, 2)), "block"),
    Case("reduce_sum", (F(6, 5, dtype=f64),), {"axes": (1,)}, lambda x: x.sum(1), "f64"),
    Case("reduce_max", (F(20, 3),), {"axes": (0,)}, lambda x: x.max(0), "block"),
    Case("reduce_min", (NAN_X,), {"axes": (0,)}, lambda x: x.min(0), "nan block"),
    Case("reduce_prod", (F(3, 4, 5, lo=0.9, hi=1.1),), {"axes": (0, 2)},
         lambda x: x.prod((0, 2)), "block"),
    Case("reduce_and", (rng.integers(0, 8, 30) > 0,), {"axes": (0,)}, lambda x: x.all(),
         "block"),
    Case("reduce_or", (I(3, 12, lo=0, hi=16),), {"axes": (1,)},
         lambda x: np.bitwise_or.reduce(x, 1), "int block"),
    Case("argmax", (NAN_X,), {"axes": (0,), "index_dtype": np.dtype(i32)},
         lambda x: x.argmax(0).astype(i32), "nan and ties"),
    Case("argmin", (F(50),), {"axes": (0,), "index_dtype": np.dtype(i32)},
         lambda x: np.int32(x.argmin()), "two-pass"),
    Case("argmax", (I(6, 7, lo=0, hi=3),), {"axes": (1,), "index_dtype": np.dtype(i32)},
         lambda x: x.argmax(1).astype(i32), "int ties"),
    Case("dot_general", (F(5, 7), F(7, 6)), _dn((1,), (0,)), lambda a, b: a @ b, "tiles"),
    Case("dot_general", (F(7, 5), F(7, 3)), _dn((0,), (0,)), lambda a, b: a.T @ b,
         "contract dim 0"),
    Case("dot_general", (F(3, 5, 4), F(4, 3, 2)), _dn((2,), (0,), (0,), (1,)),
         lambda a, b: np.einsum("bmk,kbn->bmn", a, b), "batch in the middle"),
    Case("dot_general", (F(4, 5, dtype=f64), F(5, dtype=f64)), _dn((1,), (0,), dt=f64),
         lambda a, b: a @ b, "f64 matvec"),
    Case("dot_general", (rng.integers(0, 2, (3, 4)) > 0, rng.integers(0, 2, (4, 2)) > 0),
         _dn((1,), (0,), dt=np.bool_), lambda a, b: a @ b, "bool"),
    Case("cumsum", (F(5, 3),), {"axis": 0, "reverse": True},
         lambda x: np.cumsum(x[::-1], 0)[::-1], "reverse 2d"),
    Case("scatter", (F(3, 5), F(3, 2), np.array([4, 1], i32)), {"axes": (1,), "mode": "mul"},
         _scatter("mul"), "mul axis 1"),
    Case("scatter", (F(3, 5), F(3, 3), np.array([2, 2, 0], i32)), {"axes": (1,), "mode": "max"},
         _scatter("max"), "max repeats"),
    Case("gather", (F(6, 3), np.array([[5, 0], [2, 9]], i32)), {"axes": (0,)},
         lambda x, i: x[np.clip(i, 0, 5)], "2d indices, clipped"),
    Case("concatenate", (F(2, 1), F(2, 0), F(2, 3)), {"dimension": 1},
         lambda *xs: np.concatenate(xs, 1), "with an empty operand"),
    Case("dynamic_update_slice", (F(4, 5), F(2, 3), np.int32(3), np.int32(-1)), {},
         lambda x, u, i, j: _dus_clamped(x, u, 2, 0), "clamped"),
    Case("select_n", (np.array([1, 0, 1], i32), F(3), F(3)), {},
         lambda w, a, b: np.where(w == 1, b, a), "int32 2-way"),
    Case("convert_element_type", (F(5),), {"new_dtype": np.dtype(np.bool_), "weak_type": False},
         lambda x: x.astype(bool), "f32->bool"),
    Case("convert_element_type", (np.array([True, False]),),
         {"new_dtype": np.dtype(f32), "weak_type": False}, lambda x: x.astype(f32),
         "bool->f32"),
    Case("convert_element_type", (F(4, lo=0, hi=200),),
         {"new_dtype": np.dtype(u8), "weak_type": False}, lambda x: x.astype(u8), "f32->u8"),
    Case("add", (F(3, dtype=f16), F(3, dtype=f16)), {}, np.add, "f16"),
    Case("exp", (F(3, dtype=f16),), {}, np.exp, "f16"),
    Case("tanh", (F(4, dtype=f64),), {}, np.tanh, "f64"),
    Case("cos", (F(3).astype(c64) + 0.5j,), {}, np.cos, "c64"),
    Case("tanh", (F(3).astype(c64) - 0.25j,), {}, np.tanh, "c64"),
    Case("sqrt", (F(3).astype(c64) + 1j,), {}, np.sqrt, "c64"),
    Case("max", (I(5, dtype=np.int8), I(5, dtype=np.int8)), {}, np.maximum, "int8"),
    Case("mul", (I(6, lo=100, hi=120, dtype=np.int8), I(6, lo=2, hi=5, dtype=np.int8)), {},
         np.multiply, "int8 wraps"),
    Case("integer_pow", (I(5, lo=-9, hi=9),), {"y": 5}, lambda x: x ** 5, "int y=5"),
]


def _dus_clamped(x, u, i, j):
    out = x.copy()
    out[i:i + u.shape[0], j:j + u.shape[1]] = u
    return out


def _control_cases():
    X = F(2, 3)
    s = np.float32(1.5)
    arr_body = closed(lambda x: x * 1.5 + 1.0, X)
    arr_cond = closed(lambda x: jnp.max(x) < 20.0, X)  # a reduction: the loop runs on the host
    scan_arr = closed(lambda c, x: (c + x, c * 2.0), X, X)
    cases = [
        Case("while", (X,), {"cond_jaxpr": arr_cond, "cond_nconsts": 0, "body_jaxpr": arr_body,
                             "body_nconsts": 0}, _py_while_arr, "host loop"),
        Case("scan", (X, np.stack([X, X + 1, X - 1])),
             {"jaxpr": scan_arr, "length": 3, "reverse": False, "num_consts": 0,
              "num_carry": 1, "unroll": 1}, _py_scan_arr, "array carry, stacked ys"),
        Case("cond", (np.int32(1), X), {"branches": (closed(lambda x: -x, X),
                                                     closed(lambda x: jnp.sin(x) * 2, X))},
             lambda i, x: [np.sin(x) * np.float32(2)], "array branch"),
        Case("cond", (np.int32(5), s), {"branches": (closed(lambda x: -x, s),
                                                     closed(lambda x: x + 1, s))},
             lambda i, x: [x + np.float32(1)], "index clamped"),
    ]
    if fused_p is not None:
        body = closed(lambda x, y: jnp.sum(jnp.sin(x) * y, axis=0), X, X)
        cases.append(Case("fused", (X, X), {"name": "sin_mul_reduce_sum", "jaxpr": body},
                          lambda x, y: [np.sum(np.sin(x) * y, axis=0)]))
    return cases


def _py_while_arr(x):
    while x.max() < 20:
        x = x * np.float32(1.5) + np.float32(1)
    return [x]


def _py_scan_arr(c, xs):
    ys = []
    for x in xs:
        c, y = c + x, c * np.float32(2)
        ys.append(y)
    return [c, np.stack(ys)]


DIFF_CASES = CASES + CUDA_CASES + _control_cases()


def case_jaxpr(case) -> ClosedJaxpr:
    prim = PRIMITIVES[case.prim]
    return jitviz.make_jaxpr(lambda *xs: prim.bind(*xs, **case.params))(*case.args)


# --- the table is complete ---------------------------------------------------------------------

def test_every_primitive_has_a_cuda_lowering():
    """Each primitive becomes some kernel template; the rules each template needs are the
    registry's to check (tests/test_lowering_registry.py covers every "cuda.*" table)."""
    from jitviz.backends.cuda.plan import kernel_template
    missing = sorted(name for name, prim in PRIMITIVES.items() if kernel_template(prim) is None)
    assert not missing, f"primitives without a CUDA lowering: {missing}"


def test_every_primitive_has_a_differential_case():
    from test_primitives import primitives_needing_cases
    missing = sorted(primitives_needing_cases() - {c.prim for c in DIFF_CASES})
    assert not missing, f"primitives without a CUDA differential case: {missing}"


# --- the simulator child -----------------------------------------------------------------------

@main_only
def test_simulator_suite():
    """Run this file's `sim` tests in Numba's CUDA simulator, in a fresh process."""
    run_in_simulator(__file__)


@sim
def test_child_really_runs_in_the_simulator():
    from jitviz.backends.cuda.runtime import runtime
    assert runtime().mode == "sim"


def _compare(got, want, rtol=2e-5, atol=1e-6):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if w.dtype.kind in "fc":
            tol = 2e-3 if w.dtype == np.float16 else rtol
            np.testing.assert_allclose(g, w, rtol=tol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


@sim
@pytest.mark.parametrize("case", DIFF_CASES, ids=_case_id)
def test_primitive_matches_interpreter(case, capsys):
    from jitviz.backends.cuda import CudaArray, CudaBackend
    c = case_jaxpr(case)
    want = jitviz.eval_jaxpr(c.jaxpr, c.consts, *[np.asarray(a) for a in case.args])
    from jitviz.lax.linalg import LINALG_PRIMITIVES
    exe = CudaBackend().compile(c)
    host_steps = ("debug_print", "pure_callback", "io_callback", "debug_callback") + tuple(
        p.name for p in LINALG_PRIMITIVES)
    assert exe.kernels or case.prim in host_steps or not c.jaxpr.eqns
    got = exe(*case.args)
    assert all(isinstance(g, CudaArray) for g in got)
    _compare(got, want)
    if case.prim == "debug_print":
        out = capsys.readouterr().out
        half = len(out) // 2
        assert out and out[:half] == out[half:]  # the interpreter's lines, then the same


# --- programs through jit (the optimizer's output) ----------------------------------------------
from jitviz.examples import f_loop, forward_pass, norm, selu, slow_f  # noqa: E402


def sum_up_to(x):
    return lax.while_loop(lambda c: c[1] <= x, lambda c: (c[0] + c[1], c[1] + 1), (0, 1))[0]


def myabs(x):
    return lax.cond(x > 0, lambda _: x, lambda _: -x, None)


def log2(x):
    return jnp.log(x) / jnp.log(2.0)


def tanh(x):
    y = jnp.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


def nested_loops(x):
    return lax.fori_loop(0, 3, lambda i, y: lax.fori_loop(0, i + 1, lambda j, z: z * 0.5 + 1.0,
                                                           y) - x, x)


def host_while(x):  # a reduction in the condition: kernels in a host loop
    return lax.while_loop(lambda v: jnp.sum(v) < 100.0, lambda v: v * 2.0 + 1.0, x)


def scan_program(xs):
    def step(c, x):
        c = c * 0.5 + x
        return c, jnp.tanh(c)
    return lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)


def host_scan(xs):
    return lax.scan(lambda c, x: (c + jnp.sum(x * c), x / (1.0 + c)), np.float32(0.5), xs)


def host_cond(p, x):  # branches with reductions and a matmul: chosen on the host
    return lax.cond(p, lambda x: jnp.sum(x) * x, lambda x: (x.T @ x)[:2, :] - 1.0, x)


def loops_in_a_host_loop(x):
    def body(v):
        return lax.fori_loop(0, 3, lambda i, y: y * 1.1 + 1.0, v)
    return lax.while_loop(lambda v: jnp.max(v) < 50.0, body, x)


def carries_of_two_shapes(a, b):  # one thread per element cannot hold both: host loop
    return lax.fori_loop(0, 4, lambda i, c: (c[0] * 2.0, c[1] + jnp.sum(c[0])), (a, b))


def switch3(i, x):
    return lax.switch(i, [lambda x: x * 2, lambda x: jnp.sin(x), lambda x: x - 1], x)


def shared_transpose(x):
    e = jnp.exp(x)
    return e + e.T, jnp.sum(e * e.T, axis=1)


def gather_scatter_like(x, i):
    return x[i] * 2.0, jnp.cumsum(x, axis=0)[::-1], jnp.concatenate([x, x[:1]], axis=0)


def _loss(W, X, y):
    return jnp.mean((jnp.maximum(X @ W, 0) - y) ** 2)


PROGRAMS = {
    "slow_f": (slow_f, lambda: (F(6, 5),)),
    "selu": (selu, lambda: (F(64),)),
    "selu_arange": (selu, lambda: (np.arange(-20, 20, dtype=f32),)),
    "norm": (norm, lambda: (rng.random((40, 3)).astype(f32),)),
    "forward_pass": (forward_pass, lambda: (F(5, 9), F(9, 7))),
    "f_loop": (f_loop, lambda: (np.float32(2), np.int32(15))),
    "sum_up_to": (sum_up_to, lambda: (np.int32(10),)),
    "myabs": (myabs, lambda: (np.int32(-2),)),
    "myabs_pos": (myabs, lambda: (np.float32(3.5),)),
    "log2": (log2, lambda: (np.float32(3.0),)),
    "tanh": (tanh, lambda: (F(7),)),
    "nested_loops": (nested_loops, lambda: (F(2, 3),)),
    "host_while": (host_while, lambda: (F(2, 3, lo=0.1, hi=1),)),
    "scan": (scan_program, lambda: (F(4, 3),)),
    "host_scan": (host_scan, lambda: (F(3, 2, lo=0.1, hi=1),)),
    "switch": (switch3, lambda: (np.int32(1), F(4))),
    "host_cond_true": (host_cond, lambda: (np.bool_(True), F(2, 2))),
    "host_cond_false": (host_cond, lambda: (np.bool_(False), F(2, 2))),
    "loops_in_a_host_loop": (loops_in_a_host_loop, lambda: (F(3, lo=0, hi=1),)),
    "carries_of_two_shapes": (carries_of_two_shapes, lambda: (F(3), F(2))),
    "shared_transpose": (shared_transpose, lambda: (F(3, 3),)),
    "gather_cumsum_concat": (gather_scatter_like, lambda: (F(4, 3), np.array([3, 0, 1], i32))),
    "matmul_chain": (lambda a, b, c: jnp.tanh(a @ b) @ c, lambda: (F(3, 4), F(4, 5), F(5, 2))),
    "reduction_epilogues": (lambda x, y: (jnp.sum(x, axis=1) / 3.0 + y[:3],
                                          jnp.sqrt(jnp.sum(x * x, axis=0)) - y,
                                          jnp.argmax(x, axis=0) * 2, jnp.mean(x) < 0.0),
                            lambda: (F(3, 20), F(20))),
    "grad_tanh": (jitviz.grad(tanh), lambda: (np.float32(1.0),)),
    "grad_loss": (jitviz.grad(_loss), lambda: (F(4, 3), F(5, 4), F(5, 3))),
    "vmap_sum_sin": (jitviz.vmap(lambda x: jnp.sum(jnp.sin(x))), lambda: (F(5, 4),)),
    "softmax": (lambda x: (lambda e: e / jnp.sum(e, axis=-1, keepdims=True))(
        jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))), lambda: (F(3, 7),)),
}


@sim
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_matches_interpreter(name):
    fn, make = PROGRAMS[name]
    args = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitviz.JitvizWarning)
        want = jitviz.jit(fn, backend="interpret")(*args)
        got = jitviz.jit(fn, backend="cuda")(*args)
    _compare(jitviz.tree_leaves(got), jitviz.tree_leaves(want), rtol=1e-4, atol=1e-5)


def _layernorm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * g + b


def _kept_between_phases(x):
    m = jnp.mean(x, axis=1)
    return m, m * 2.0, jnp.sum((x - m[:, None]) ** 2, axis=1)


# Segments (one block per output of a small reduction, later reductions over the same axes
# and values of the input's shape joining it) on the simulator's target: slices of at most
# 24 elements, 2 columns. Each: (program, inputs, kernels).
SEGMENT_PROGRAMS = {
    "norm over 2 columns": (norm, lambda: (F(20, 2),), 1),
    "softmax over rows": (jitviz.nn.softmax, lambda: (F(5, 17),), 1),
    "layernorm": (_layernorm, lambda: (F(6, 20), F(20), F(20)), 1),
    "mean and max of a vector": (lambda x: (jnp.mean(x), jnp.max(x)), lambda: (F(20),), 1),
    "reduced over two axes": (lambda x: x - x.mean((0, 2), keepdims=True),
                              lambda: (F(3, 4, 5),), 1),
    "results between phases": (_kept_between_phases, lambda: (F(5, 12),), 1),
    # two values of the input's shape: stored by one loop over the slice
    "two results of the input's shape": (lambda x: (x - x.max(1, keepdims=True), x * 2.0),
                                         lambda: (F(5, 12),), 1),
    # a phase reading an earlier result at another row cannot join: a second segment
    "earlier result at another index": (
        lambda x: jnp.sum(x - jnp.roll(jnp.sum(x, 1), 1)[:, None], 1), lambda: (F(5, 12),), 2),
    # a reduction of another dtype cannot share the block's shared memory
    "another dtype": (lambda x: (jnp.sum(x, 1), jnp.sum(x > 0.5, 1)), lambda: (F(5, 12),), 2),
    # three columns are read coalesced: the column template, two passes each, no segment
    "norm over 3 columns": (norm, lambda: (F(20, 3),), 7),
    # other dtypes: booleans (a shared array of them), integers, complex, a product
    "any and all": (lambda x: (jnp.any(x > 0.3, axis=1), jnp.all(x > 0.1, axis=1), x * 2.0),
                    lambda: (F(5, 20),), 1),
    "integers": (lambda x: jnp.max(x, axis=1) - jnp.sum(x, axis=1),
                 lambda: (I(5, 20, lo=-50, hi=50),), 1),
    "complex": (lambda x: x - jnp.mean(x, axis=1, keepdims=True),
                lambda: ((F(5, 20) + 1j * F(5, 20)).astype(np.complex64),), 1),
    "a product": (lambda x: x / jnp.prod(x, axis=1, keepdims=True),
                  lambda: (F(5, 20, lo=0.5, hi=1.5),), 1),
    # float16's maximum, then a sum in float32: two dtypes, two segments
    "float16 softmax": (jitviz.nn.softmax, lambda: (F(5, 20, dtype=np.float16),), 2),
}


@sim
@pytest.mark.parametrize("name", list(SEGMENT_PROGRAMS))
def test_segments_match_the_interpreter(name):
    fn, make, n_kernels = SEGMENT_PROGRAMS[name]
    args = make()
    want = jitviz.jit(fn, backend="interpret")(*args)
    f = jitviz.jit(fn, backend="cuda")
    got = f(*args)
    _compare(jitviz.tree_leaves(got), jitviz.tree_leaves(want), rtol=1e-4, atol=1e-5)
    from jitviz.backends.cuda.runtime import runtime
    if runtime().mode != "sim":
        return  # a GPU's target: these slices are loops inside one elementwise kernel
    kernels = f.lower(*args).compile().kernels
    assert len(kernels) == n_kernels, [k.source for k in kernels]
    if name.startswith("two results"):  # one phase, one loop storing both
        assert kernels[0].source.count("for rr in range") == 2, kernels[0].source


# The same on a GPU's target (tests/test_cuda_ptx.py compiles their plans to PTX here):
# one kernel each
GPU_SEGMENTS = {
    "norm": (norm, lambda: (F(10000, 10),)),
    "softmax": (jitviz.nn.softmax, lambda: (F(1000, 1000),)),
    "layernorm": (_layernorm, lambda: (F(512, 768), F(768), F(768))),
    "mean and max": (lambda x: (jnp.mean(x), jnp.max(x)), lambda: (F(10000),)),
    "any and all": (lambda x: (jnp.any(x > 0.3, axis=1), jnp.all(x > 0.1, axis=1)),
                    lambda: (F(64, 1000),)),
    "integers": (lambda x: jnp.max(x, axis=1) - jnp.sum(x, axis=1),
                 lambda: (I(64, 1000, lo=-50, hi=50),)),
    "complex": (lambda x: x - jnp.mean(x, axis=1, keepdims=True),
                lambda: ((F(64, 1000) + 1j * F(64, 1000)).astype(np.complex64),)),
}


@sim
def test_calls_from_other_threads_match_the_interpreter():
    """A thread's first call needs the CUDA context made current there (kernels launch
    through cuda.core, which does not do it). The input is already on the device and the
    buffers come from the pool, so nothing else in the call would make it current."""
    import threading

    from jitviz.backends.cuda.runtime import runtime
    f = jitviz.jit(lambda x: jnp.tanh(x) * 2.0 + 1.0, backend="cuda")
    x = F(3000)
    want = np.asarray(jitviz.jit(lambda x: jnp.tanh(x) * 2.0 + 1.0, backend="interpret")(x))
    xd = runtime().cuda.to_device(x)
    f(xd)  # compiled, and its buffers pooled, on this thread
    got, errors = {}, []

    def call(i):
        try:
            got[i] = np.asarray(f(xd))
        except Exception as e:  # reported below, with the thread's error
            errors.append(e)
    for i in range(3):  # one after another: Numba's simulator runs one kernel at a time
        worker = threading.Thread(target=call, args=(i,))
        worker.start()
        worker.join()
    assert errors == [] and sorted(got) == [0, 1, 2]
    for value in got.values():
        np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-6)


@sim
@pytest.mark.parametrize("name", list(GPU_SEGMENTS))
def test_gpu_sized_segments_match_the_interpreter(name):
    from jitviz.backends.cuda.runtime import runtime
    if runtime().mode == "sim":
        pytest.skip("GPU sizes: run on a GPU (scripts/gpu_check.sh)")
    fn, make = GPU_SEGMENTS[name]
    args = make()
    want = jitviz.jit(fn, backend="interpret")(*args)
    f = jitviz.jit(fn, backend="cuda")
    _compare(jitviz.tree_leaves(f(*args)), jitviz.tree_leaves(want), rtol=1e-4, atol=1e-5)
    assert len(f.lower(*args).compile().kernels) == 1


@sim
def test_explorer_shows_the_cuda_pipeline_and_the_stage_it_compiled(monkeypatch):
    """The stages are CUDA's own pipeline (no "fuse" once CUDA plans its own kernels), and
    "kernels" is the stage the CUDA backend compiled."""
    from jitviz.backends import get_backend
    from jitviz.explorer import dot as dotlib
    monkeypatch.setenv(dotlib.DOT_ENV, "none")
    f = jitviz.jit(slow_f, backend="cuda")
    f(F(6, 5))
    w = jitviz.explore(f)
    passes = [p.name for p in get_backend("cuda").pipeline if not p.fastmath_only]
    assert [s["name"] for s in w.stages] == ["traced", *passes, "kernels"]
    assert f.specializations[0].executable.stage == passes[-1]
    assert w._specs[w.specialization].compiled_stage == passes[-1]


def test_cuda_pipeline_has_no_fusion_stage():
    from jitviz.backends import get_backend
    assert "fuse" not in [p.name for p in get_backend("cuda").pipeline]


@sim
def test_seed_results():
    f = jitviz.jit(f_loop, backend="cuda")
    assert float(f(np.float32(2), np.int32(15))) == 30.0
    assert int(jitviz.jit(sum_up_to, backend="cuda")(np.int32(10))) == 55
    assert int(jitviz.jit(myabs, backend="cuda")(np.int32(-2))) == 2
    X = rng.random((100, 10)).astype(f32)
    np.testing.assert_allclose(np.asarray(jitviz.jit(norm, backend="cuda")(X)),
                               (X - X.mean(0)) / X.std(0), atol=1e-5)


@sim
def test_odd_arrays_match_numpy():
    base = np.arange(24, dtype=f32).reshape(4, 6) / 7
    nan = base.copy()
    nan[1, 2], nan[2, 3] = np.nan, np.inf
    f = jitviz.jit(lambda x: (jnp.sum(jnp.sin(x) * 2.0 + x, axis=0), jnp.max(x, axis=-1),
                              x.T + 1.0), backend="cuda")
    for x in (base, np.arange(48, dtype=f32).reshape(4, 12)[:, ::2], np.asfortranarray(base),
              base.astype(">f4"), nan, base[::-1, ::-1]):
        with np.errstate(invalid="ignore"):
            want = (np.sum(np.sin(x) * f32(2) + x, axis=0), np.max(x, axis=-1), x.T + f32(1))
        for g, w in zip(f(x), want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, equal_nan=True)


@sim
def test_zero_size_arrays():
    x = np.zeros((0, 3), f32)
    out = jitviz.jit(lambda x: (x * 2, jnp.sum(x, axis=0), x.reshape(3, 0)), backend="cuda")(x)
    assert np.asarray(out[0]).shape == (0, 3)
    assert np.asarray(out[1]).tolist() == [0.0, 0.0, 0.0]
    assert np.asarray(out[2]).shape == (3, 0)


# --- arrays on the device -----------------------------------------------------------------------

@sim
def test_outputs_stay_on_the_device_and_come_back_with_asarray():
    from jitviz.backends.cuda import CudaArray, CudaBackend
    x = F(3, 4)
    exe = CudaBackend().compile(jitviz.make_jaxpr(slow_f)(x))
    (y,) = exe(x)
    assert isinstance(y, CudaArray) and y.shape == (3, 4) and y.dtype == f32
    assert y.block_until_ready() is y
    np.testing.assert_allclose(np.asarray(y), x * x + x * 2, rtol=1e-6)
    assert jitviz.block_until_ready((y, [y])) == (y, [y])
    assert "CudaArray(" in repr(y) and len(y) == 3
    (s,) = CudaBackend().compile(jitviz.make_jaxpr(jnp.sum)(x))(x)
    assert s.shape == () and abs(float(s) - x.sum()) < 1e-5


@sim
def test_device_inputs_are_used_without_copies(monkeypatch):
    from jitviz.backends import cuda as cb
    rt = cb.runtime.runtime()
    x = F(3, 4)
    exe = cb.CudaBackend().compile(jitviz.make_jaxpr(slow_f)(x))
    dx = rt.cuda.to_device(x)
    (y,) = exe(x)
    calls = []
    real = rt.to_device  # every host-to-device copy of the backend goes through it
    monkeypatch.setattr(rt, "to_device", lambda *a, **k: calls.append(a) or real(*a, **k))
    (y1,) = exe(dx)  # a Numba device array
    (y2,) = exe(y)  # this backend's own output, fed back in
    f = jitviz.jit(slow_f, backend="cuda")
    f(x)
    del calls[:]
    y3 = f(dx)  # through jit: its cache key and argument checks take it as it is
    assert calls == []
    np.testing.assert_allclose(np.asarray(y3), np.asarray(y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(y1), np.asarray(y), rtol=1e-6)
    yy = np.asarray(y)
    np.testing.assert_allclose(np.asarray(y2), yy * yy + yy * 2, rtol=1e-5)
    exe(x)  # NumPy in: one copy
    assert len(calls) == 1


@sim
def test_strided_device_inputs_match_numpy():
    """Device arrays that are not C-contiguous (a step, a transpose) are read by their strides:
    on a GPU they take the launcher's generic dispatcher, not the kernel compiled for
    contiguous arrays."""
    from jitviz.backends.cuda.runtime import runtime
    rt = runtime()
    base = np.arange(48, dtype=f32).reshape(4, 12) / 7
    f = jitviz.jit(lambda x: (jnp.sin(x) * 2.0 + x, jnp.sum(x, axis=0)), backend="cuda")
    dev = rt.cuda.to_device(base)
    for view, host in ((dev[:, ::2], base[:, ::2]), (dev.T, base.T), (dev[1:3], base[1:3])):
        got = f(view)
        np.testing.assert_allclose(np.asarray(got[0]), np.sin(host) * f32(2) + host, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(got[1]), host.sum(0), rtol=1e-5)


@sim
def test_complex_sort_and_maximum_match_the_interpreter():
    """Complex keys sort by two float keys with the complex values carried along; complex
    maximum picks by real, then imaginary part (a NaN part loses)."""
    x = np.array([[2 + 1j, 1 + 5j, 1 - 2j, np.nan + 0j, 0j],
                  [0j, -1 + 1j, complex(1, np.nan), 3j, 1 + 5j]], np.complex64)

    def f(x):
        return jnp.sort(x, axis=1), jnp.argsort(x, axis=0), jnp.maximum(x, x[::-1])
    got = jitviz.jit(f, backend="cuda")(x)
    want = jitviz.jit(f, backend="interpret")(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@sim
def test_one_kernel_source_for_two_dtypes_is_two_kernels():
    """`exp` over float32 and over float64 renders the same source; each launcher's kernel
    is compiled for one signature, so the cache keys by argument types too (keyed by source
    alone, an H100 ran float64 exp through the float32 kernel: wrong values, no error)."""
    from helpers import x64_enabled
    from jitviz.backends.cuda.runtime import get_kernel
    f = jitviz.jit(jnp.exp, backend="cuda")
    x32 = np.linspace(-3, 3, 50, dtype=np.float32)
    with x64_enabled():
        x64 = x32.astype(np.float64) + 1e-9
        compiled = [f.lower(x).compile() for x in (x32, x64)]  # one line: one header
        (k32,), (k64,) = [c.kernels for c in compiled]
        assert k32.source == k64.source and not k64.reused
        specs = [c.executable.program.kernels()[0] for c in compiled]
        assert get_kernel(specs[0])[0] is not get_kernel(specs[1])[0]
        np.testing.assert_allclose(np.asarray(f(x64)), np.exp(x64), rtol=1e-15)
        np.testing.assert_allclose(np.asarray(f(x32)), np.exp(x32), rtol=1e-6)


def test_launcher_takes_the_exact_kernel_only_for_contiguous_inputs():
    """The kernel compiled for C-contiguous arrays would index a strided array as if it were
    contiguous: any input that is not goes to the generic dispatcher (compiled once, lazily)."""
    from types import SimpleNamespace

    from jitviz.backends.cuda.runtime import Launcher
    launched, made = [], []

    class Dispatcher:
        def __init__(self, name):
            self.name = name

        def __getitem__(self, config):
            return lambda *args: launched.append((self.name, config, args))

    def jit(**options):
        assert options == {"fastmath": True}
        return lambda fn: made.append(fn) or Dispatcher("generic")

    class Arr:
        ndim = 1

        def __init__(self, contiguous):
            self.contiguous = contiguous

        def is_c_contiguous(self):
            return self.contiguous

    rt = SimpleNamespace(simulator=False, cuda=SimpleNamespace(jit=jit))
    pyfunc = object()
    launch = Launcher(rt, pyfunc, True, exact=Dispatcher("exact"))
    a, b, out = Arr(True), Arr(False), Arr(True)
    launch((4,), (256,), [a, a], [out])
    assert launched[-1] == ("exact", ((4,), (256,)), (a, a, out)) and made == []
    # this stand-in has no compiled overloads to launch directly: Numba launches it, and the
    # launcher says why
    assert launch.how.startswith("numba's launch: DirectLaunch unavailable (")
    launch((4,), (256,), [a, b], [out])
    launch((4,), (256,), [b], [out])
    assert [name for name, _, _ in launched] == ["exact", "generic", "generic"]
    assert made == [pyfunc]  # the generic dispatcher is made once


def test_the_context_is_made_current_once_per_thread():
    """Direct launches need Numba's context current on the calling thread: the first call on
    each thread asks Numba (which makes it current and leaves it so), later ones do not."""
    import threading
    from types import SimpleNamespace

    from jitviz.backends.cuda.runtime import _Runtime
    asked = []
    rt = _Runtime()
    rt.cuda = SimpleNamespace(current_context=lambda: asked.append(threading.get_ident()))
    rt.make_context_current()
    rt.make_context_current()
    worker = threading.Thread(target=lambda: [rt.make_context_current() for _ in range(2)])
    worker.start()
    worker.join()
    assert len(asked) == 2 and asked[0] == threading.get_ident() and asked[1] != asked[0]


def test_direct_launch_passes_arrays_as_numba_does_and_outputs_flat():
    """DirectLaunch hands cuda.core's launch the kernel's arguments: inputs as they are,
    outputs (allocated in their final shape) as the flat arrays the kernel writes; one
    LaunchConfig per grid and block."""
    from types import SimpleNamespace

    from jitviz.backends.cuda.runtime import DirectLaunch
    calls, configs = [], []

    def config(**kw):
        configs.append(kw)
        return ("config", kw["grid"], kw["block"])

    def arr(shape, dtype, address):
        dtype = np.dtype(dtype)
        strides = tuple(int(np.prod(shape[i + 1:])) * dtype.itemsize for i in range(len(shape)))
        return SimpleNamespace(size=int(np.prod(shape)), dtype=dtype, shape=shape,
                               strides=strides,
                               device_ctypes_pointer=SimpleNamespace(value=address))

    launch = DirectLaunch("function", "stream", lambda *a: calls.append(a), config,
                          "is_cooperative")
    x, y, out = arr((3, 4), np.float32, 4096), arr((5,), np.int64, 8192), arr((3, 4), "f8", 0)
    launch((2,), (128,), [x, y], [out])
    launch((2,), (128,), [x, y], [out])
    assert configs == [dict(grid=(2,), block=(128,), shmem_size=0, is_cooperative=False)]
    assert calls[0] == ("stream", ("config", (2,), (128,)), "function",
                        0, 0, 12, 4, 4096, 3, 4, 16, 4,    # x: its shape and strides
                        0, 0, 5, 8, 8192, 5, 8,            # y
                        0, 0, 12, 8, 0, 12, 8)             # out, flat (a null pointer: 0)


@sim
def test_constants_are_copied_once(monkeypatch):
    from jitviz.backends import cuda as cb
    rt = cb.runtime.runtime()
    table = F(4)
    exe = cb.CudaBackend().compile(jitviz.make_jaxpr(lambda x: x * table)(F(4)))
    exe(F(4))
    calls = []
    real = rt.to_device  # every host-to-device copy of the backend goes through it
    monkeypatch.setattr(rt, "to_device", lambda *a, **k: calls.append(a) or real(*a, **k))
    for _ in range(3):
        exe(F(4))
    assert len(calls) == 3  # the argument each time; the constant stayed on the device


# --- jit integration -----------------------------------------------------------------------------

@sim
def test_jit_passes_device_arrays_through(monkeypatch):
    """Once jit.py hands device arrays to the executable and takes its `wrap_outputs`, a
    jitted call returns `CudaArray`s and accepts device arrays without copies."""
    from jitviz.backends import cuda as cb
    f = jitviz.jit(lambda x: x * 2.0 + 1.0, backend="cuda")
    x = F(5)
    y = f(x)
    if not isinstance(y, cb.CudaArray):
        pytest.skip("jitviz/jit.py wraps outputs with np.asarray (no device pass-through yet)")
    assert y.shape == (5,) and y.dtype == f32 and not y.weak_type
    rt = cb.runtime.runtime()
    calls = []
    real = rt.to_device  # every host-to-device copy of the backend goes through it
    monkeypatch.setattr(rt, "to_device", lambda *a, **k: calls.append(a) or real(*a, **k))
    z = f(y)
    w = f(real(x))
    assert calls == [] and isinstance(z, cb.CudaArray) and isinstance(w, cb.CudaArray)
    np.testing.assert_allclose(np.asarray(z), (x * 2 + 1) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(w), x * 2 + 1, rtol=1e-6)
    assert [e.kind for e in f.events].count("compile") == 1
    assert jitviz.block_until_ready(z) is z


@sim
def test_jit_events_say_cuda_and_cache_hits():
    def selu2(x):
        return selu(x)
    f = jitviz.jit(selu2, backend="cuda")
    x = F(16)
    f(x)
    f(x)
    kinds = [e.kind for e in f.events]
    assert kinds[:2] == ["trace", "compile"] and "cache_hit" in kinds
    comp = next(e for e in f.events if e.kind == "compile")
    assert comp.backend == "cuda" and "compiled for cuda" in comp.message
    assert f.cache_info().compiles == 1
    f.clear_cache()
    f(x)
    assert f.cache_info().compiles == 2
    assert f.cache_info().kernels_reused >= 1  # the same kernel source: compiled once


@sim
def test_side_effect_diagnostics_unchanged():
    def f(x):
        print("tracing")
        return x + 1
    jf = jitviz.jit(f, backend="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitviz.JitvizWarning)
        jf(F(3))
        jf(F(3))
    assert "side_effect_lost" in [e.kind for e in jf.events]


@sim
def test_host_print_is_exact_and_in_order(capsys):
    def f(x):
        jitviz.debug.print("sum={} first={x0}", jnp.sum(x), x0=x[0])
        y = x * 2
        jitviz.debug.print("y={}", y)
        return y
    x = np.array([1.0, 2.0, 3.0], f32)
    jitviz.jit(f, backend="interpret")(x)
    want = capsys.readouterr().out
    jitviz.jit(f, backend="cuda")(x)
    assert capsys.readouterr().out == want == "sum=6.0 first=1.0\ny=[2. 4. 6.]\n"


@sim
def test_print_inside_a_kernel_loop(capfd):
    """The kernel's own print: Python's formatting in the simulator, C printf's on a GPU
    (whose output reaches the process's stdout, hence capfd), as the README says."""
    from jitviz.backends.cuda.runtime import runtime

    def f(x):
        def body(i, y):
            jitviz.debug.print("step {} y {}", i, y)
            return y * 2.0
        return lax.fori_loop(0, 3, body, x)
    c = jitviz.jit(f, backend="cuda")
    out = c(np.float32(1.0))
    assert float(out) == 8.0
    kernels = c.lower(np.float32(1.0)).compile().kernels
    assert len(kernels) == 1 and "print(" in kernels[0].source
    runtime().synchronize()
    text = capfd.readouterr().out
    one, four = ("1.000000", "4.000000") if runtime().mode == "gpu" else ("1.0", "4.0")
    assert f"step 0 y {one}" in text and f"step 2 y {four}" in text


@sim
def test_in_kernel_loops_and_branches_are_single_kernels():
    from jitviz.backends.cuda import CudaBackend
    for fn, args in [(f_loop, (np.float32(2), np.int32(15))), (sum_up_to, (np.int32(10),)),
                     (myabs, (np.int32(-2),)), (nested_loops, (F(2, 3),))]:
        ks = CudaBackend().compile(jitviz.make_jaxpr(fn)(*args)).kernels
        assert len(ks) == 1, [k.name for k in ks]
        assert ks[0].source.startswith("# control kernel")


@sim
def test_ptx_from_the_simulator_process():
    """numba.cuda is the simulator here: PTX comes from a subprocess without it."""
    ks = jitviz.jit(selu, backend="cuda").lower(F(8)).compile().kernels
    ptx = ks[0].ptx(cc=(9, 0))
    assert ".entry" in ptx and ".target sm_90" in ptx


# --- generated programs ------------------------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

UNARY = [jnp.sin, jnp.tanh, jnp.abs, jnp.negative, jnp.square, lambda x: jnp.sqrt(jnp.abs(x)),
         lambda x: jnp.exp(jnp.tanh(x)), jnp.floor]
BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum,
          lambda a, b: jnp.where(a > b, a, b * 0.5), lambda a, b: a / (1.0 + jnp.abs(b))]
REDUCE = [jnp.sum, jnp.max, jnp.min, jnp.mean]
SHAPE = (3, 5)


def _apply(ops, xs):
    pool = list(xs)
    for kind, a, b, which in ops:
        x, y = pool[a % len(pool)], pool[b % len(pool)]
        if kind == 0:
            pool.append(UNARY[which % len(UNARY)](x))
        elif kind == 1:
            pool.append(BINARY[which % len(BINARY)](x, y))
        elif kind == 2:
            pool.append(x - REDUCE[which % len(REDUCE)](y, axis=which % 2, keepdims=True))
        elif kind == 3:
            pool.append(jnp.cumsum(x, axis=which % 2) * 0.1)
        elif kind == 4:
            pool.append(jnp.flip(x, axis=which % 2) + y[:, :1])
        else:
            pool.append(jnp.concatenate([x[:, 1:], y[:, :1]], axis=1))
    return pool[len(xs):] or pool


programs = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 9), st.integers(0, 9),
                              st.integers(0, 20)), min_size=1, max_size=6)
arrays = st.lists(st.floats(-3, 3, width=32), min_size=15, max_size=15).map(
    lambda v: np.array(v, f32).reshape(SHAPE))


@sim
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs, arrays, arrays)
def test_generated_programs_match_interpreter(ops, x, y):
    def f(x, y):
        return _apply(ops, [x, y])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = jitviz.jit(f, backend="interpret")(x, y)
        got = jitviz.jit(f, backend="cuda")(x, y)
    _compare(got, want, rtol=1e-4, atol=1e-4)


@sim
@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(0, 9)),
                min_size=1, max_size=5),
       st.lists(st.integers(-50, 50), min_size=6, max_size=6))
def test_generated_int_programs_match_interpreter(ops, values):
    x = np.array(values, i32).reshape(2, 3)
    int_ops = [jnp.add, jnp.multiply, jnp.maximum, lambda a, b: a - jnp.abs(b)]

    def f(x):
        pool = [x, x[::-1]]
        for kind, a, b in ops:
            pool.append(int_ops[kind](pool[a % len(pool)], pool[b % len(pool)]))
        return pool[2:] + [jnp.sum(pool[-1], axis=1), jnp.argmax(pool[-1], axis=0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = jitviz.jit(f, backend="interpret")(x)
        got = jitviz.jit(f, backend="cuda")(x)
    _compare(got, want)


# --- without a device -----------------------------------------------------------------------------

@main_only
def test_plans_have_the_expected_kernels():
    from jitviz.backends.cuda.plan import Target, plan_program

    def kernels(fn, *args, target=Target()):
        stages = jitviz.jit(fn, backend="cuda").lower(*args).stages
        return [k.kind for k in plan_program(stages[-1][1], target).kernels()]
    assert kernels(slow_f, F(50, 50)) == ["elementwise"]
    assert kernels(selu, F(1000)) == ["elementwise"]
    assert kernels(forward_pass, F(8, 9), F(9, 7)) == ["dot"]  # Z and relu(Z): one kernel
    assert kernels(f_loop, np.float32(2), np.int32(15)) == ["control"]
    assert kernels(myabs, np.int32(-2)) == ["control"]
    # norm: three reductions over axis 0 of 10 columns and the normalized result, one
    # segment: a block per column runs the three reductions, then stores the result
    assert kernels(norm, F(1000, 10)) == ["reduce"]
    # ... but 100 columns are read coalesced by the column template (chunks of rows, then a
    # second pass over the chunks), and the result is an elementwise kernel
    ks = kernels(norm, F(1000, 100))
    assert ks.count("elementwise") == 1 and ks.count("reduce") == 6, ks
    # a reduction over few elements is a loop inside its consumer: one kernel
    assert kernels(lambda x: x / jnp.sum(x, axis=1, keepdims=True), F(100, 8)) == \
        ["elementwise"]
    # one output reduced by many blocks: a second pass
    assert kernels(jnp.sum, F(1 << 20)) == ["reduce", "reduce"]
    # elementwise work on a reduction's result runs at the end of the reduction kernel, and
    # reductions over the same elements share it
    assert kernels(lambda x: (jnp.mean(x), jnp.max(x) < 50.0), F(1000)) == ["reduce"]
    assert kernels(lambda x: (jnp.mean(x), jnp.argmax(x)), F(1000)) == ["reduce", "reduce"]
    assert kernels(lambda x: (jnp.mean(x), jnp.max(x)), F(20000)) == ["reduce"] * 4
    # a softmax over rows: the maximum, the sum of exponentials and the result, one kernel
    assert kernels(lambda x: jitviz.nn.softmax(x, axis=-1), F(300, 200)) == ["reduce"]
    assert kernels(lambda x: jnp.sqrt(jnp.sum(x * x, axis=0)), F(1000, 300)) == \
        ["reduce", "reduce"]


@main_only
def test_control_flow_runs_in_kernels_or_on_the_host():
    from jitviz.backends.cuda.plan import (HostCond, HostScan, HostWhile, KernelStep, Target,
                                           plan_program)

    def steps(fn, *args):
        stages = jitviz.jit(fn, backend="cuda").lower(*args).stages
        return plan_program(stages[-1][1], Target()).steps
    for fn, args in [(f_loop, (np.float32(2), np.int32(15))), (myabs, (np.int32(-2),)),
                     (scan_program, (F(4, 3),)), (nested_loops, (F(2, 3),))]:
        (step,) = steps(fn, *args)
        assert isinstance(step, KernelStep) and step.kernel.kind == "control"
    (hc,) = [s for s in steps(host_cond, np.bool_(True), F(2, 2)) if not isinstance(s,
                                                                                 KernelStep)]
    assert isinstance(hc, HostCond)  # branches: (false_fun, true_fun)
    assert [k.kind for k in hc.branches[0].kernels()] == ["dot"]
    (hw,) = steps(loops_in_a_host_loop, F(64))
    assert isinstance(hw, HostWhile)
    assert [k.kind for k in hw.body.kernels()] == ["control"]  # the inner loop: one kernel
    assert [k.kind for k in hw.cond.kernels()] == ["reduce"]  # max(v) < 50: one kernel
    assert isinstance(steps(carries_of_two_shapes, F(3), F(2))[-1], HostScan)


@main_only
def test_kernels_keep_their_source_and_equations():
    from jitviz.backends.cuda import CudaBackend
    exe = CudaBackend().compile(jitviz.make_jaxpr(selu)(F(10)))
    (k,) = exe.kernels
    assert "def " in k.source and "cuda.grid(1)" in k.source and "exp(" in k.source
    assert k.source.startswith("# elementwise kernel")
    assert "selu" not in k.name and {e.primitive.name for e in k.eqns} >= {"exp", "select_n"}
    assert any("jnp.where" in s.code for s in k.source_lines)
    assert k.cost.bytes_moved == 10 * 4 * 2


@main_only
def test_without_gpu_or_simulator_running_names_both_ways_out():
    from jitviz.backends.cuda import CudaUnavailableError
    from jitviz.backends.cuda.runtime import runtime
    if runtime().mode is not None:
        pytest.skip("a GPU (or the simulator) is available here")
    f = jitviz.jit(slow_f, backend="cuda")
    with pytest.raises(CudaUnavailableError) as info:
        f(F(3))
    msg = str(info.value)
    assert "NUMBA_ENABLE_CUDASIM=1" in msg and "GPU" in msg and "jitviz[cuda]" in msg
    # compiling and reading the kernels still works
    assert f.lower(F(3)).compile().kernels[0].source
    assert [e.kind for e in f.events][:2] == ["trace", "compile"]
    assert next(e for e in f.events if e.kind == "compile").backend == "cuda"


@main_only
def test_without_the_toolkit_the_message_says_how_to_install(monkeypatch):
    from jitviz.backends import cuda as cb
    from jitviz.backends.cuda import runtime as cuda_runtime

    def fail():
        raise ImportError("No module named 'numba.cuda'")
    monkeypatch.setattr(cuda_runtime, "_import_numba_cuda", fail)
    rt = cuda_runtime._Runtime().load()
    assert rt.mode is None and 'pip install "jitviz[cuda]"' in rt.why
    monkeypatch.setattr(cuda_runtime, "_RT", rt)
    with pytest.raises(cb.CudaToolkitError, match="jitviz\\[cuda\\]"):
        cb.kernel_ptx("def k(o0):\n    pass\n", "k", [(np.dtype(f32), 1)])
    with pytest.raises(cb.CudaUnavailableError, match="jitviz\\[cuda\\]"):
        rt.require()


@main_only
def test_importing_the_backend_does_not_import_numba_cuda():
    code = ("import sys, jitviz, jitviz.backends.cuda, jitviz.backends.cuda.plan; "
            "print('numba.cuda' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.stdout.strip() == "False", out.stderr


@sim
def test_annotate_reads_the_cuda_kernels():
    """jitviz.annotate on CUDA: kernels are planned from re-inlined copies of the equations,
    so lines are matched to kernels by line and primitive; a host-driven loop is host work."""
    def f(x, n):
        y = jnp.sin(x) * 2
        return lax.fori_loop(0, n, lambda i, a: a * 1.5 + y, y)
    a = jitviz.annotate(f, F(8), np.int32(3), backend="cuda")
    sin = next(line for line in a.lines if "jnp.sin" in line.code)
    loop = next(line for line in a.lines if "fori_loop" in line.code)
    assert sin.fates == ("kernel",) and sin.kernels
    assert loop.fates[0] == "control_flow" and "host" in loop.fates
    assert set(a.kernel_sources) >= set(sin.kernels)


@sim
def test_profiled_cuda_kernels_are_timed_between_synchronizations():
    def f(x):
        return jnp.sin(x) * 2, jnp.sum(x)
    a = jitviz.annotate(f, F(64), backend="cuda", profile=True, min_time=0.01)
    sin = next(line for line in a.lines if "jnp.sin" in line.code)
    assert sin.time_share > 0 and a.calls_measured >= 3
    assert sum(line.time_share for line in a.lines) + a.untimed_share == pytest.approx(1.0)


@sim
def test_max_min_order_signed_zeros_as_the_interpreter():
    """IEEE 754-2019 / XLA: max(-0.0, 0.0) is +0.0 and min is -0.0 whichever comes first,
    elementwise and in reductions (the interpreter and the CPU kernels do the same)."""
    a = np.array([-0.0, 0.0, -0.0, 0.0, 1.0, np.nan], f32)
    b = np.array([0.0, -0.0, -0.0, 0.0, 1.0, 0.0], f32)
    rows = np.array([[-0.0, 0.0], [0.0, -0.0]], f32)
    for fn, args in [(jnp.maximum, (a, b)), (jnp.minimum, (a, b)),
                     (lambda r: jnp.max(r, axis=1), (rows,)),
                     (lambda r: jnp.min(r, axis=1), (rows,))]:
        want = np.asarray(jitviz.jit(fn, backend="interpret")(*args))
        got = np.asarray(jitviz.jit(fn, backend="cuda")(*args))
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all(), (got, want)


@sim
def test_batched_print_prints_each_example_on_the_host(capsys):
    def f(x, y):
        jitviz.debug.print("x={} y={}", x, y)
        return x * y
    g = jitviz.vmap(f, in_axes=(0, None))
    x = np.array([1.0, 2.0], f32)
    jitviz.jit(g, backend="interpret")(x, f32(3))
    want = capsys.readouterr().out
    jitviz.jit(g, backend="cuda")(x, f32(3))
    assert capsys.readouterr().out == want == "x=1.0 y=3.0\nx=2.0 y=3.0\n"
