"""Structured control flow: cond, switch, select, while_loop, fori_loop, scan, lax.map.

Each body is traced once into a sub-jaxpr (never unrolled); values a body closes over are
hoisted into explicit operands; carries may be pytrees; a carry whose type changes is a
TypeError naming the leaf. The printed jaxprs are compared with the text JAX 0.10.2 prints
for the same programs (`JAX` below, pasted from `print(jax.make_jaxpr(f)(*args))`), which
includes JAX's forwarding optimizations (a carry returned unchanged becomes a const; a y that
is just the current x is not stacked again).
"""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

from helpers import count_eqns, eval_closed, trace_and_check

f32, i32 = np.float32, np.int32
Y_GLOBAL = jnp.ones(3)


def _fc(p, x):
    z = x * 3
    return lax.cond(p, lambda: z + Y_GLOBAL, lambda: z - Y_GLOBAL)


CASES = {
    "while": (lambda x: lax.while_loop(lambda c: c < 10, lambda c: c * 2, x), 1.0),
    "while consts": (lambda x, z: lax.while_loop(lambda c: c < z, lambda c: c * z, x), 1.0, 2.0),
    "while weak": (lambda x: lax.while_loop(lambda c: c < 10, lambda c: c + x, 0.), f32(1)),
    "while weak int->float": (
        lambda x: lax.while_loop(lambda c: c < 10, lambda c: c + 1.5, 0), 1.0),
    "fori static": (lambda x: lax.fori_loop(0, 5, lambda i, c: c + i, x), 1.0),
    "fori traced": (lambda n, x: lax.fori_loop(0, n, lambda i, c: c + i, x), 5, 1.0),
    "fori x": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, x), 1.0),
    "fori lo hi": (lambda x: lax.fori_loop(2, 7, lambda i, c: c + i, x), i32(0)),
    "cond": (lambda p, x: lax.cond(p > 0, lambda x: x + 1, lambda x: x - 1, x), 1, 2.0),
    "cond closure": (_fc, True, jnp.ones(3)),
    "cond no args": (lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0), True),
    "cond float pred": (lambda p, x: lax.cond(p, lambda x: x, lambda x: -x, x), 1.0, 2.0),
    "cond concrete pred": (lambda x: lax.cond(True, lambda x: x, lambda x: -x, x), 2.0),
    "cond pytree": (lambda p, t: lax.cond(p, lambda t: (t[0] + t[1]["v"],), lambda t: (t[0],),
                                          t), True, (f32(1), {"v": f32(2)})),
    "cond longbranch": (lambda p, x: lax.cond(
        p, lambda x: jnp.sin(x) * jnp.cos(x) + jnp.tanh(x) * 2.0, lambda x: -x, x),
        True, jnp.ones(3)),
    "cond weak mix": (lambda p, x: lax.cond(p, lambda x: x, lambda x: x * f32(2), x), True, 1.0),
    "switch": (lambda i, x: lax.switch(i, [lambda x: x, lambda x: x * 2, jnp.sin], x), 1, 2.0),
    "select": (lambda p, x, z: lax.select(p, x, z), np.array([True, False]), np.ones(2, f32),
               np.zeros(2, f32)),
    "scan": (lambda x: lax.scan(lambda c, a: (c + a, c * a), 0., x), jnp.ones(5)),
    "scan drop": (lambda x: lax.scan(lambda c, a: (c + a, None), 0., x)[0], jnp.ones(5)),
    "scan consts": (lambda x, z: lax.scan(lambda c, a: (c + a * z, z), 0., x), jnp.ones(5), 2.0),
    "scan reverse": (lambda x: lax.scan(lambda c, a: (c + a, c), jnp.zeros(()), x, reverse=True),
                     jnp.ones(5)),
    "scan length": (lambda x: lax.scan(lambda c, _: (c * 2, c), x, None, length=4), f32(1)),
    "scan unroll": (lambda x: lax.scan(lambda c, a: (c + a, None), f32(0), x, unroll=True)[0],
                    jnp.ones(3)),
    "scan 2 xs": (lambda x, z: lax.scan(lambda c, a: (c + a[0] * a[1], a[0]), f32(0), (x, z)),
                  jnp.ones(3), jnp.ones(3)),
    "long scan": (lambda x: lax.scan(lambda c, a: (
        jnp.sin(jnp.cos(jnp.tan(c * a + 1.0 - 2.0) * 3.0) / 4.0) ** 2 + c, None), 0., x)[0],
        jnp.ones(5)),
    "map": (lambda x: lax.map(lambda a: a * 2, x), jnp.ones(5)),
    "nested": (lambda x: lax.fori_loop(0, 3, lambda i, c: lax.cond(
        c > 1, lambda v: v * 2, lambda v: v + x, c), x), f32(1)),
    "scan in while": (lambda x: lax.while_loop(
        lambda c: c[0] < 2,
        lambda c: (c[0] + 1, lax.scan(lambda s, a: (s + a * c[1], None), c[1], x)[0]),
        (0, f32(1))), jnp.ones(3)),
}

JAX = {
    'while': """\
{ lambda ; a:f32[]. let
    b:f32[] = while[
      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 10.0:f32[] in (f,) }
      cond_nconsts=0
    ] a
  in (b,) }""",
    'while consts': """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = while[
      body_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = mul e d in (f,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; g:f32[] h:f32[]. let i:bool[] = lt h g in (i,) }
      cond_nconsts=1
    ] b b a
  in (c,) }""",
    'while weak': """\
{ lambda ; a:f32[]. let
    b:f32[] = while[
      body_jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          f:f32[] = add e c
        in (f,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; g:f32[]. let h:bool[] = lt g 10.0:f32[] in (h,) }
      cond_nconsts=0
    ] a 0.0:f32[]
  in (b,) }""",
    'while weak int->float': """\
{ lambda ; a:f32[]. let
    b:f32[] = while[
      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = add c 1.5:f32[] in (d,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 10.0:f32[] in (f,) }
      cond_nconsts=0
    ] 0.0:f32[]
  in (b,) }""",
    'fori static': """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = convert_element_type[new_dtype=float32 weak_type=True] c
          g:f32[] = add d f
        in (e, g) }
      length=5
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
  in (b,) }""",
    'fori traced': """\
{ lambda ; a:i32[] b:f32[]. let
    _:i32[] _:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[]. let
          g:i32[] = add d 1:i32[]
          h:f32[] = convert_element_type[new_dtype=float32 weak_type=True] d
          i:f32[] = add f h
        in (g, e, i) }
      body_nconsts=0
      cond_jaxpr={ lambda ; j:i32[] k:i32[] l:f32[]. let
          m:bool[] = lt j k
        in (m,) }
      cond_nconsts=0
    ] 0:i32[] a b
  in (c,) }""",
    'fori x': """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:f32[] d:i32[] e:f32[]. let
          f:i32[] = add d 1:i32[]
          g:f32[] = mul e c
        in (f, g) }
      length=3
      num_carry=2
      num_consts=1
      reverse=False
      unroll=1
    ] a 0:i32[] a
  in (b,) }""",
    'fori lo hi': """\
{ lambda ; a:i32[]. let
    _:i32[] b:i32[] = scan[
      jaxpr={ lambda ; c:i32[] d:i32[]. let
          e:i32[] = add c 1:i32[]
          f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
          g:i32[] = add d f
        in (e, g) }
      length=5
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 2:i32[] a
  in (b,) }""",
    'cond': """\
{ lambda ; a:i32[] b:f32[]. let
    c:bool[] = gt a 0:i32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = sub f 1.0:f32[] in (g,) }
        { lambda ; h:f32[]. let i:f32[] = add h 1.0:f32[] in (i,) }
      )
    ] d b
  in (e,) }""",
    'cond closure': """\
{ lambda a:f32[3]; b:bool[] c:f32[3]. let
    d:f32[3] = mul c 3.0:f32[]
    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    f:f32[3] = cond[
      branches=(
        { lambda ; g:f32[3] h:f32[3]. let i:f32[3] = sub g h in (i,) }
        { lambda ; j:f32[3] k:f32[3]. let l:f32[3] = add j k in (l,) }
      )
    ] e d a
  in (f,) }""",
    'cond no args': """\
{ lambda ; a:bool[]. let
    b:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:f32[] = cond[
      branches=(
        { lambda ; . let  in (2.0:f32[],) }
        { lambda ; . let  in (1.0:f32[],) }
      )
    ] b
  in (c,) }""",
    'cond float pred': """\
{ lambda ; a:f32[] b:f32[]. let
    c:bool[] = ne a 0.0:f32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = neg f in (g,) }
        { lambda ; h:f32[]. let  in (h,) }
      )
    ] d b
  in (e,) }""",
    'cond concrete pred': """\
{ lambda ; a:f32[]. let
    b:f32[] = cond[
      branches=(
        { lambda ; c:f32[]. let d:f32[] = neg c in (d,) }
        { lambda ; e:f32[]. let  in (e,) }
      )
    ] 1:i32[] a
  in (b,) }""",
    'cond pytree': """\
{ lambda ; a:bool[] b:f32[] c:f32[]. let
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[] g:f32[]. let  in (f,) }
        { lambda ; h:f32[] i:f32[]. let j:f32[] = add h i in (j,) }
      )
    ] d b c
  in (e,) }""",
    'cond longbranch': """\
{ lambda ; a:bool[] b:f32[3]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[3] = cond[
      branches=(
        { lambda ; e:f32[3]. let f:f32[3] = neg e in (f,) }
        { lambda ; g:f32[3]. let
            h:f32[3] = sin g
            i:f32[3] = cos g
            j:f32[3] = mul h i
            k:f32[3] = tanh g
            l:f32[3] = mul k 2.0:f32[]
            m:f32[3] = add j l
          in (m,) }
      )
    ] c b
  in (d,) }""",
    'cond weak mix': """\
{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let
            f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e
            g:f32[] = mul f 2.0:f32[]
          in (g,) }
        { lambda ; h:f32[]. let  in (h,) }
      )
    ] c b
  in (d,) }""",
    'switch': """\
{ lambda ; a:i32[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[] = clamp 0:i32[] c 2:i32[]
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let  in (f,) }
        { lambda ; g:f32[]. let h:f32[] = mul g 2.0:f32[] in (h,) }
        { lambda ; i:f32[]. let j:f32[] = sin i in (j,) }
      )
    ] d b
  in (e,) }""",
    'select': """\
{ lambda ; a:bool[2] b:f32[2] c:f32[2]. let d:f32[2] = select_n a c b in (d,) }""",
    'scan': """\
{ lambda ; a:f32[5]. let
    b:f32[] c:f32[5] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          g:f32[] = add f e
          h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          i:f32[] = mul h e
        in (g, i) }
      length=5
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] a
  in (b, c) }""",
    'scan drop': """\
{ lambda ; a:f32[5]. let
    b:f32[] = scan[
      jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          f:f32[] = add e d
        in (f,) }
      length=5
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] a
  in (b,) }""",
    'scan consts': """\
{ lambda ; a:f32[5] b:f32[]. let
    c:f32[] d:f32[5] = scan[
      jaxpr={ lambda ; e:f32[] f:f32[] g:f32[]. let
          h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e
          i:f32[] = mul g h
          j:f32[] = convert_element_type[new_dtype=float32 weak_type=False] f
          k:f32[] = add j i
        in (k, e) }
      length=5
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] b 0.0:f32[] a
  in (c, d) }""",
    'scan reverse': """\
{ lambda ; a:f32[5]. let
    b:f32[] c:f32[5] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = add d e in (f, d) }
      length=5
      num_carry=1
      num_consts=0
      reverse=True
      unroll=1
    ] 0.0:f32[] a
  in (b, c) }""",
    'scan length': """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[4] = scan[
      jaxpr={ lambda ; d:f32[]. let e:f32[] = mul d 2.0:f32[] in (e, d) }
      length=4
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a
  in (b, c) }""",
    'scan unroll': """\
{ lambda ; a:f32[3]. let
    b:f32[] = scan[
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = add c d in (e,) }
      length=3
      num_carry=1
      num_consts=0
      reverse=False
      unroll=3
    ] 0.0:f32[] a
  in (b,) }""",
    'scan 2 xs': """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[] f:f32[]. let
          g:f32[] = mul e f
          h:f32[] = add d g
        in (h,) }
      length=3
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] a b
  in (c, a) }""",
    'long scan': """\
let jaxpr = { lambda ; a:f32[] b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[] = mul c b
    e:f32[] = add d 1.0:f32[]
    f:f32[] = sub e 2.0:f32[]
    g:f32[] = tan f
    h:f32[] = mul g 3.0:f32[]
    i:f32[] = cos h
    j:f32[] = div i 4.0:f32[]
    k:f32[] = sin j
    l:f32[] = integer_pow[y=2] k
    m:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    n:f32[] = add l m
  in (n,) } in
{ lambda ; o:f32[5]. let
    p:f32[] = scan[
      jaxpr=jaxpr
      length=5
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] o
  in (p,) }""",
    'map': """\
{ lambda ; a:f32[5]. let
    b:f32[5] = scan[
      jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      length=5
      num_carry=0
      num_consts=0
      reverse=False
      unroll=1
    ] a
  in (b,) }""",
    'nested': """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:f32[] d:i32[] e:f32[]. let
          f:i32[] = add d 1:i32[]
          g:bool[] = gt e 1.0:f32[]
          h:i32[] = convert_element_type[new_dtype=int32 weak_type=False] g
          i:f32[] = cond[
            branches=(
              { lambda ; j:f32[] k:f32[]. let l:f32[] = add k j in (l,) }
              { lambda ; m:f32[] n:f32[]. let
                  o:f32[] = mul n 2.0:f32[]
                in (o,) }
            )
          ] h c e
        in (f, i) }
      length=3
      num_carry=2
      num_consts=1
      reverse=False
      unroll=1
    ] a 0:i32[] a
  in (b,) }""",
    'scan in while': """\
{ lambda ; a:f32[3]. let
    b:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:f32[3] e:i32[] f:f32[]. let
          g:i32[] = add e 1:i32[]
          h:f32[] = scan[
            jaxpr={ lambda ; i:f32[] j:f32[] k:f32[]. let
                l:f32[] = mul k i
                m:f32[] = add j l
              in (m,) }
            length=3
            num_carry=1
            num_consts=1
            reverse=False
            unroll=1
          ] f f d
        in (g, h) }
      body_nconsts=1
      cond_jaxpr={ lambda ; n:i32[] o:f32[]. let
          p:bool[] = lt n 2:i32[]
        in (p,) }
      cond_nconsts=0
    ] a 0:i32[] 1.0:f32[]
  in (b, c) }""",
}


@pytest.mark.parametrize("name", list(CASES))
def test_printed_jaxpr_matches_jax(name):
    fun, *args = CASES[name]
    closed = trace_and_check(fun, *args, eager=False)
    assert str(closed) == JAX[name]


# --- results equal Python reference loops ----------------------------------------------------

def test_while_loop_results():
    c = trace_and_check(CASES["while"][0], 1.0, expected=f32(16), eager=False)
    assert eval_closed(c, 20.0) == [f32(20)]  # loop body never runs

    def collatz(n):
        return lax.while_loop(lambda c: c[0] != 1,
                              lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1),
                                         c[1] + 1), (n, 0))[1]
    c = trace_and_check(collatz, i32(27), expected=i32(111))

    def py_collatz(n):
        steps = 0
        while n != 1:
            n, steps = (n // 2 if n % 2 == 0 else 3 * n + 1), steps + 1
        return steps
    for n in (1, 6, 7, 97):
        assert eval_closed(c, i32(n)) == [i32(py_collatz(n))]


@pytest.mark.parametrize("lo,hi", [(0, 5), (2, 7), (3, 3), (5, 2), (-2, 2)])
def test_fori_loop_results_static_and_traced_bounds(lo, hi):
    def py(x):
        for i in range(lo, hi):
            x = x * 0.5 + i
        return f32(x)
    body = lambda i, v: v * 0.5 + i  # noqa: E731
    c = trace_and_check(lambda x: lax.fori_loop(lo, hi, body, x), f32(3), expected=py(3.0))
    assert count_eqns(c, "scan") == 1 and count_eqns(c, "while") == 0
    c = trace_and_check(lambda x, a, b: lax.fori_loop(a, b, body, x), f32(3), i32(lo), i32(hi),
                        expected=py(3.0))
    assert count_eqns(c, "while") == 1 and count_eqns(c, "scan") == 0


def test_scan_results_match_a_python_loop():
    xs = np.arange(1, 7, dtype=f32)

    def step(c, x):
        return c * 0.9 + x, c - x

    def py(init, xs, reverse=False):
        c, ys = f32(init), []
        for x in (xs[::-1] if reverse else xs):
            c, y = step(c, x)
            ys.append(f32(y))
        return c, np.array(ys[::-1] if reverse else ys, f32)
    for reverse in (False, True):
        trace_and_check(lambda x: lax.scan(step, f32(1), x, reverse=reverse), xs,
                        expected=py(1.0, xs, reverse), rtol=1e-6)


def test_map_cond_switch_select_results():
    xs = np.arange(-2, 3, dtype=f32)
    trace_and_check(lambda x: lax.map(lambda a: jnp.where(a > 0, a * 10, -a), x), xs,
                    expected=np.where(xs > 0, xs * 10, -xs))
    fn, *_ = CASES["cond"]
    for p, want in ((1, 3.0), (0, 1.0), (-5, 1.0)):
        trace_and_check(fn, p, 2.0, expected=f32(want))
    fn, *_ = CASES["switch"]
    for i, want in ((0, 2.0), (1, 4.0), (2, np.sin(f32(2))), (-3, 2.0), (9, np.sin(f32(2)))):
        trace_and_check(fn, i, 2.0, expected=f32(want))  # out-of-range indices are clamped
    fn, *args = CASES["select"]
    trace_and_check(fn, *args, expected=np.array([1, 0], f32))
    fn, *_ = CASES["cond closure"]
    trace_and_check(fn, False, np.full(3, 2, f32), expected=np.full(3, 5, f32))


# --- traced once, never unrolled ----------------------------------------------------------

def test_bodies_are_traced_once():
    calls = {"cond": 0, "body": 0, "scan": 0, "fori": 0, "t": 0, "f": 0}

    def count(key, out):
        calls[key] += 1
        return out

    def f(x):
        a = lax.while_loop(lambda c: count("cond", c < 100), lambda c: count("body", c * 2), x)
        b = lax.scan(lambda c, y: count("scan", (c + y, c)), a, jnp.ones(50))[0]
        c = lax.fori_loop(0, 1000, lambda i, v: count("fori", v + i), b)
        return lax.cond(c > 0, lambda v: count("t", v), lambda v: count("f", -v), c)
    trace_and_check(f, f32(1), eager=False)
    assert calls == {"cond": 1, "body": 1, "scan": 1, "fori": 1, "t": 1, "f": 1}


@pytest.mark.parametrize("n", [1, 10, 10_000])
def test_loops_are_never_unrolled(n):
    c = jitviz.make_jaxpr(lambda x: lax.fori_loop(0, n, lambda i, v: v * 2 + i, x))(1.0)
    assert count_eqns(c) == 5  # scan + (add, convert, mul, add) in the body: independent of n
    c = jitviz.make_jaxpr(lambda x: lax.scan(lambda a, b: (a + b, a), 0.0, x))(np.ones(n, f32))
    assert len(c.jaxpr.eqns) == 1


# --- closures are hoisted into operands ----------------------------------------------------

def test_closed_over_tracers_and_arrays_become_operands():
    w = np.arange(3, dtype=f32)

    def f(x, y):
        def body(c, a):
            return c + a * y + w, None  # y: an outer tracer; w: a NumPy array
        return lax.scan(body, x, jnp.ones((4, 3)))[0]
    c = trace_and_check(f, np.zeros(3, f32), f32(2), expected=4 * (2 + w))
    scan_eqn = c.jaxpr.eqns[-1]
    assert scan_eqn.params["num_consts"] == 2
    consts = scan_eqn.invars[:2]
    assert consts[0] is c.jaxpr.invars[1]  # y, the argument itself
    assert consts[1] in c.jaxpr.constvars  # w, a constvar of the outer jaxpr
    assert not scan_eqn.params["jaxpr"].jaxpr.constvars  # the body is closed


def test_closure_two_levels_up_is_threaded_through_each_level():
    def f(x, k):
        def outer(c):
            return lax.cond(c[0] > 2, lambda v: v + k, lambda v: v - k, c[1])
        return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, outer(c)), (0, x))[1]
    c = trace_and_check(f, f32(0), f32(1), expected=f32(-1))
    while_eqn = c.jaxpr.eqns[0]
    assert c.jaxpr.invars[1] in while_eqn.invars  # k is an operand of the while


def test_array_closed_over_by_both_cond_branches_is_one_operand():
    fn, *args = CASES["cond closure"]
    c = jitviz.make_jaxpr(fn)(*args)
    cond_eqn = c.jaxpr.eqns[-1]
    assert len(cond_eqn.invars) == 3 and len(c.jaxpr.constvars) == 1


# --- carries and their types -------------------------------------------------------------

def test_carry_dtype_change_lists_the_leaf():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype(jnp.int32)),
                              (0, x))
    with pytest.raises(TypeError) as e:
        jitviz.make_jaxpr(f)(1.0)
    assert str(e.value) == (
        "while_loop body function carry input and carry output must have equal types, but "
        "they differ:\n\nThe input carry component c[1] has type float32[] but the "
        "corresponding output carry component has type int32[], so the dtypes do not match."
        "\n\nRevise the function so that all output types match the corresponding input types."
        " (For a Python number as the initial carry, give it the body's type, e.g. "
        "jnp.float32(0) instead of 0.)")


def test_scan_carry_changes_are_listed_per_leaf():
    def f(x):
        def step(acc, a):
            return {"m": acc["m"].astype(jnp.float16), "n": acc["n"], "s": acc["s"][:2]}, a
        return lax.scan(step, {"m": x[0], "n": 0, "s": x}, x)
    with pytest.raises(TypeError) as e:
        jitviz.make_jaxpr(f)(np.ones(3, f32))
    msg = str(e.value)
    assert "* the input carry component acc['m'] has type float32[] but the corresponding " \
           "output carry component has type float16[], so the dtypes do not match" in msg
    assert "acc['s'] has type float32[3]" in msg and "float32[2], so the shapes do not match" in msg
    assert "acc['n']" not in msg


def test_cond_branches_with_different_types():
    with pytest.raises(TypeError) as e:
        jitviz.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x, lambda x: x.astype(jnp.int32),
                                                x))(True, 1.0)
    msg = str(e.value)
    assert msg.startswith("cond branches must have equal output types but they differ.")
    assert "The output of true_fun has type float32[] but the corresponding output of " \
           "false_fun has type int32[], so the dtypes do not match." in msg
    assert f"true_fun is <lambda> at {__file__}:" in msg


def test_weak_typed_carries_are_promoted_like_jax():
    # a weak float carry meeting a strong body output keeps its type (the body converts it)
    c = trace_and_check(*CASES["while weak"], eager=False)
    assert c.out_avals[0] == jitviz.ShapedArray((), f32, False)
    # a weak int carry whose body makes floats is promoted before tracing again
    c = trace_and_check(*CASES["while weak int->float"], expected=f32(10.5), eager=False)
    assert c.jaxpr.eqns[0].invars[0].aval == jitviz.ShapedArray((), f32, False)
    # sum_up_to from the seeds: weak ints stay weak
    c = trace_and_check(lambda: lax.while_loop(lambda c: c < 5, lambda c: c + 1, 0),
                        expected=i32(5), eager=False)
    assert c.out_avals[0].weak_type


def test_forwarded_carries_and_ys_come_straight_from_the_inputs():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1]), (0, x))
    c = trace_and_check(f, f32(2), expected=(i32(10), f32(2)), eager=False)
    assert str(c) == """\
{ lambda ; a:f32[]. let
    b:i32[] = while[
      body_jaxpr={ lambda ; c:f32[] d:i32[]. let
          e:i32[] = add d 1:i32[]
        in (e,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; f:i32[]. let g:bool[] = lt f 10:i32[] in (g,) }
      cond_nconsts=0
    ] a 0:i32[]
  in (b, a) }"""
    x = np.arange(3, dtype=f32)
    c = trace_and_check(lambda x: lax.scan(lambda c, a: (c, a), x[0], x), x, expected=(f32(0), x))
    assert str(c) == """\
{ lambda ; a:f32[3]. let
    b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
    scan[
      jaxpr={ lambda ; d:f32[] e:f32[]. let  in () }
      length=3
      num_carry=0
      num_consts=1
      reverse=False
      unroll=1
    ] c a
  in (c, a) }"""


# --- misuse ----------------------------------------------------------------------------------

def test_control_flow_misuse_errors():
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c + 1, 1.0)
    with pytest.raises(TypeError, match="must return a pair"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3))
    with pytest.raises(ValueError, match="inconsistent lengths: 3, 4"):
        lax.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="pass length"):
        lax.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(TypeError, match="bounds must be integers"):
        lax.fori_loop(0.0, 3, lambda i, v: v, 1.0)
    with pytest.raises(TypeError, match="Pred type must be a boolean or number scalar"):
        lax.cond(np.ones(2), lambda: 1, lambda: 2)
    with pytest.raises(ValueError, match="at least one branch"):
        lax.switch(0, [], 1.0)


def test_control_flow_runs_eagerly_outside_a_trace():
    assert lax.fori_loop(0, 4, lambda i, v: v + i, 0) == 6
    assert lax.while_loop(lambda c: c < 100, lambda c: c * 3, 1) == 243
    c, ys = lax.scan(lambda c, x: (c + x, c), 0, np.arange(4, dtype=i32))
    assert c == 6 and ys.tolist() == [0, 0, 1, 3]
    assert lax.cond(False, lambda x: x + 1, lambda x: x - 1, 5) == 4
    assert lax.switch(7, [lambda: 0, lambda: 1]) == 1


def test_every_sub_jaxpr_is_fed_and_read_by_its_equation():
    """Each primitive's `sub_io` rule routes the equation's operands and results to the
    sub-jaxpr's invars and outvars (the explorer draws its edges from it)."""
    from jitviz.core.pretty import sub_jaxprs

    def f(x, n):
        y = lax.cond(x > 0, lambda v: v + 1.0, lambda v: v - 1.0, x)
        z = lax.while_loop(lambda c: c < n, lambda c: c * 2.0 + y, y)
        w, _ = lax.scan(lambda c, a: (c + a * z, None), 0.0, jnp.ones(3))
        return lax.fori_loop(0, 4, lambda i, c: c + w, w)
    closed = jitviz.make_jaxpr(f)(1.0, 10.0)
    seen = set()
    for eqn in closed.jaxpr.eqns:
        for key, value in eqn.params.items():
            for sub in (value if isinstance(value, tuple) else (value,)):
                if not hasattr(sub, "jaxpr"):
                    continue
                ops, results = eqn.primitive.sub_io(eqn.params, eqn.invars, eqn.outvars, key)
                assert len(ops) == len(sub.jaxpr.invars)
                for a, v in zip(ops, sub.jaxpr.invars):  # scan feeds slices of its xs
                    assert a.aval.dtype == v.aval.dtype and \
                        v.aval.shape in (a.aval.shape, a.aval.shape[1:])
                for r, v in zip(results, sub.jaxpr.outvars):  # ... and stacks its ys
                    assert r is None or (r.aval.dtype == v.aval.dtype and
                                         v.aval.shape in (r.aval.shape, r.aval.shape[1:]))
                assert len(results) == len(sub.jaxpr.outvars)
                seen.add(eqn.primitive.name)
        assert list(sub_jaxprs(eqn)) or eqn.primitive.name not in ("cond", "while", "scan")
    assert seen == {"cond", "while", "scan"}
