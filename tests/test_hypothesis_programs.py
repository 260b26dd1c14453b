"""Random programs: traced with make_jaxpr, typechecked and run with eval_jaxpr, they equal
the same program run directly with NumPy.

A program is a list of steps over a growing list of float32 values; each step names an
operation, the earlier values it uses and its static parameters. `run(program, ops, inputs)`
interprets it with either operation table: `JNP` (jitviz.numpy, traced) or `NP` (NumPy, the
reference). Operations are chosen so values stay finite (bounded functions, safe divisors).
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

f32 = np.float32

UNARY = {
    "neg": (lambda m, a: -a), "sin": (lambda m, a: m.sin(a)), "cos": (lambda m, a: m.cos(a)),
    "tanh": (lambda m, a: m.tanh(a)), "abs": (lambda m, a: m.abs(a)),
    "square": (lambda m, a: m.square(a)), "sqrt_abs": (lambda m, a: m.sqrt(m.abs(a))),
    "log1p_abs": (lambda m, a: m.log1p(m.abs(a))), "exp_tanh": (lambda m, a: m.exp(m.tanh(a))),
    "floor": (lambda m, a: m.floor(a)), "sign": (lambda m, a: m.sign(a)),
    "clip": (lambda m, a: m.clip(a, -1.5, 1.5)), "scale": (lambda m, a: a * 0.5 + 1),
    "rsub": (lambda m, a: 2 - a), "pow2": (lambda m, a: a ** 2),
}
BINARY = {
    "add": (lambda m, a, b: a + b), "sub": (lambda m, a, b: a - b),
    "mul": (lambda m, a, b: a * b), "max": (lambda m, a, b: m.maximum(a, b)),
    "min": (lambda m, a, b: m.minimum(a, b)), "safe_div": (lambda m, a, b: a / (b * b + 1)),
    "where": (lambda m, a, b: m.where(a > b, a, b - 1)),
    "select_mask": (lambda m, a, b: m.where(m.logical_and(a > 0, b < 1), a * b, a - b)),
}


def _reduce(name):
    def op(m, a, axis, keepdims):
        return getattr(m, name)(a, axis=axis, keepdims=keepdims)
    return op


REDUCE = {n: _reduce(n) for n in ("sum", "mean", "max", "min")}
SHAPE = {
    "ravel": (lambda m, a: m.ravel(a)), "T": (lambda m, a: a.T),
    "expand0": (lambda m, a: m.expand_dims(a, 0)), "flip_shape": (lambda m, a: a.reshape(
        tuple(reversed(a.shape)))),
    "slice": (lambda m, a: a[::-1] if a.ndim else a), "gram": (lambda m, a: m.matmul(a, a.T)
                                                                if a.ndim == 2 else a * a),
}


def run(program, m, inputs):
    """Interpret `program` with module `m` (jitviz.numpy or numpy); returns the last value."""
    vals = list(inputs)
    for kind, name, args, params in program:
        xs = [vals[i] for i in args]
        table = {"u": UNARY, "b": BINARY, "r": REDUCE, "s": SHAPE, "c": BINARY}[kind]
        if kind == "c":  # a Python scalar operand
            vals.append(table[name](m, xs[0], params[0]))
        else:
            vals.append(table[name](m, *xs, *params))
    return vals[-1], vals[len(inputs):]


def _broadcastable(s, t):
    try:
        np.broadcast_shapes(s, t)
        return True
    except ValueError:
        return False


@st.composite
def programs(draw):
    base = draw(st.sampled_from([(), (4,), (2, 3), (3, 1), (2, 3, 2)]))
    n_in = draw(st.integers(1, 3))
    shapes = []
    for _ in range(n_in):  # broadcast-compatible variants of the base shape
        keep = draw(st.integers(max(0, len(base) - 1), len(base)))  # mostly full rank
        shape = tuple(1 if draw(st.booleans()) and i > 0 else d
                      for i, d in enumerate(base[len(base) - keep:]))
        shapes.append(shape)
    inputs = [draw(st.lists(st.floats(-2, 2, width=32), min_size=int(np.prod(s)),
                            max_size=int(np.prod(s)))) for s in shapes]
    inputs = [np.array(v, f32).reshape(s) for v, s in zip(inputs, shapes)]
    program, cur = [], list(shapes)
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from("uubbcrs"))
        i = draw(st.integers(0, len(cur) - 1))
        s = cur[i]
        if kind == "u":
            step = ("u", draw(st.sampled_from(sorted(UNARY))), [i], ())
        elif kind == "b":
            partners = [j for j, t in enumerate(cur) if _broadcastable(s, t)]
            j = draw(st.sampled_from(partners))
            step = ("b", draw(st.sampled_from(sorted(BINARY))), [i, j], ())
        elif kind == "c":
            c = draw(st.sampled_from([2, -1, 0.5, 3.0, -0.25]))
            step = ("c", draw(st.sampled_from(["add", "mul", "sub", "max"])), [i], (c,))
        elif kind == "r":
            axis = None if not s or draw(st.booleans()) else draw(st.integers(-len(s),
                                                                              len(s) - 1))
            if draw(st.sampled_from(sorted(REDUCE))) in ("max", "min") and 0 in s:
                continue
            step = ("r", draw(st.sampled_from(sorted(REDUCE))), [i],
                    (axis, draw(st.booleans())))
        else:
            step = ("s", draw(st.sampled_from(sorted(SHAPE))), [i], ())
        program.append(step)
        _, outs = run(program, np, inputs)
        cur = list(shapes) + [np.shape(o) for o in outs]
    return program, inputs


def _reference(program, inputs):
    with np.errstate(all="ignore"):
        out, _ = run(program, np, inputs)
    return np.asarray(out, f32) if np.asarray(out).dtype == np.float64 else np.asarray(out)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_jnp_programs_match_numpy(prog):
    program, inputs = prog
    closed = jitviz.make_jaxpr(lambda *xs: run(program, jnp, xs)[0])(*inputs)
    jitviz.typecheck_jaxpr(closed)
    (got,) = jitviz.eval_jaxpr(closed.jaxpr, closed.consts, *inputs)
    want = _reference(program, inputs)
    assert got.shape == want.shape
    assert got.dtype == want.dtype == f32
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4, equal_nan=True)
    # the eager run of the same jnp program agrees too
    eager, _ = run(program, jnp, [jnp.asarray(x) for x in inputs])
    np.testing.assert_allclose(eager, want, rtol=2e-4, atol=2e-4, equal_nan=True)


# --- random lax-level compositions, including control flow ------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-2, 2, width=32), min_size=1, max_size=6),
       st.integers(0, 6), st.sampled_from(["fori", "while", "scan", "cond"]),
       st.sampled_from(sorted(UNARY)))
def test_random_loops_match_python(xs, n, loop, unary):
    x = np.array(xs, f32)
    body_np = lambda v: np.clip(UNARY[unary](np, v), -3, 3) * f32(0.5)  # noqa: E731
    body_jnp = lambda v: jnp.clip(UNARY[unary](jnp, v), -3, 3) * 0.5  # noqa: E731

    with np.errstate(all="ignore"):
        want = x.copy()
        if loop in ("fori", "while"):
            for _ in range(n):
                want = body_np(want)
        elif loop == "scan":
            ys = []
            for a in x:
                want, y = want + a, want.sum()
                ys.append(y)
            want = (want, np.array(ys, f32))
        else:
            want = body_np(want) if n % 2 else -want

    def f(v, k):
        if loop == "fori":
            return lax.fori_loop(0, k, lambda i, c: body_jnp(c), v)
        if loop == "while":
            return lax.while_loop(lambda c: c[0] < k, lambda c: (c[0] + 1, body_jnp(c[1])),
                                  (0, v))[1]
        if loop == "scan":
            return lax.scan(lambda c, a: (c + a, c.sum()), v, v)
        return lax.cond(k % 2 == 1, body_jnp, lambda c: -c, v)

    closed = jitviz.make_jaxpr(f)(x, n)
    jitviz.typecheck_jaxpr(closed)
    got = closed.out_tree.unflatten(jitviz.eval_jaxpr(closed.jaxpr, closed.consts, x, n))
    for g, w in zip(jitviz.tree_leaves(got), jitviz.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True)
