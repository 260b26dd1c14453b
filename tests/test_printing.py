"""Printing jaxprs exactly as JAX 0.10.2 does.

The texts in capitals were printed by JAX 0.10.2 for the same programs
(`print(jax.make_jaxpr(f)(*args))`); they cover the one-line/multi-line layout at 80
columns, constvars, literals, names past `z`, `_` for unused results, line filling of long
variable lists, equations with no operands (a trailing space), and nested `jit` jaxprs
(inline and hoisted as `let name = ... in`). Note: trailing spaces in these strings matter.
"""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.core import pretty
from jitviz.core.ir import ShapedArray
from jitviz.lax.control_flow import bind_jit_call

from helpers import trace_and_check

f32 = np.float32

FITS_80 = """\
{ lambda ; a:f32[1000000] b:f32[1000000]. let c:f32[1000000] = add a b in (c,) }"""

BREAKS_81 = """\
{ lambda ; a:f32[10000000] b:f32[10000000]. let
    c:f32[10000000] = add a b
  in (c,) }"""

CONSTVARS = """\
{ lambda a:f32[3,4]; b:f32[2,3]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] b a
  in (c,) }"""

INT_LITERALS = """\
{ lambda ; a:i32[]. let
    b:i32[] = add a 2:i32[]
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[] = mul c 2.0:f32[]
    e:bool[] = gt a 1:i32[]
    f:i32[] = and a 1:i32[]
  in (b, d, e, f) }"""

MANY_OUTS = """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = mul a 1.0:f32[]
    c:f32[2,3] = mul a 2.0:f32[]
    d:f32[2,3] = mul a 3.0:f32[]
    e:f32[2,3] = mul a 4.0:f32[]
    f:f32[2,3] = mul a 5.0:f32[]
    g:f32[2,3] = mul a 6.0:f32[]
    h:f32[2,3] = mul a 7.0:f32[]
    i:f32[2,3] = mul a 8.0:f32[]
    j:f32[2,3] = mul a 9.0:f32[]
    k:f32[2,3] = mul a 10.0:f32[]
    l:f32[2,3] = mul a 11.0:f32[]
    m:f32[2,3] = mul a 12.0:f32[]
    n:f32[2,3] = mul a 13.0:f32[]
    o:f32[2,3] = mul a 14.0:f32[]
    p:f32[2,3] = mul a 15.0:f32[]
    q:f32[2,3] = mul a 16.0:f32[]
    r:f32[2,3] = mul a 17.0:f32[]
    s:f32[2,3] = mul a 18.0:f32[]
    t:f32[2,3] = mul a 19.0:f32[]
    u:f32[2,3] = mul a 20.0:f32[]
    v:f32[2,3] = mul a 21.0:f32[]
    w:f32[2,3] = mul a 22.0:f32[]
    x:f32[2,3] = mul a 23.0:f32[]
    y:f32[2,3] = mul a 24.0:f32[]
  in (b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y) }"""

UNUSED_SECOND = """\
{ lambda ; a:f32[]. let b:f32[] = sin a; _:f32[] = cos a in (b,) }"""

UNUSED_FIRST = """\
{ lambda ; a:f32[]. let _:f32[] = sin a; b:f32[] = cos a in (b,) }"""

MANY_ARGS = """\
{ lambda ; a:f32[2,3] b:f32[2,3] c:f32[2,3] d:f32[2,3] e:f32[2,3] f:f32[2,3] g:f32[2,3]
    h:f32[2,3] i:f32[2,3] j:f32[2,3] k:f32[2,3] l:f32[2,3] m:f32[2,3] n:f32[2,3]
    o:f32[2,3] p:f32[2,3] q:f32[2,3] r:f32[2,3] s:f32[2,3] t:f32[2,3]. let
    u:f32[2,3] = add 0.0:f32[] a
    v:f32[2,3] = add u b
    w:f32[2,3] = add v c
    x:f32[2,3] = add w d
    y:f32[2,3] = add x e
    z:f32[2,3] = add y f
    ba:f32[2,3] = add z g
    bb:f32[2,3] = add ba h
    bc:f32[2,3] = add bb i
    bd:f32[2,3] = add bc j
    be:f32[2,3] = add bd k
    bf:f32[2,3] = add be l
    bg:f32[2,3] = add bf m
    bh:f32[2,3] = add bg n
    bi:f32[2,3] = add bh o
    bj:f32[2,3] = add bi p
    bk:f32[2,3] = add bj q
    bl:f32[2,3] = add bk r
    bm:f32[2,3] = add bl s
    bn:f32[2,3] = add bm t
  in (bn,) }"""

MANY_ARGS_NO_EQNS = """\
{ lambda ; a:f32[] b:f32[] c:f32[] d:f32[] e:f32[] f:f32[] g:f32[] h:f32[] i:f32[]
    j:f32[] k:f32[] l:f32[] m:f32[] n:f32[] o:f32[] p:f32[] q:f32[] r:f32[] s:f32[]
    t:f32[] u:f32[] v:f32[] w:f32[] x:f32[] y:f32[] z:f32[] ba:f32[] bb:f32[] bc:f32[]
    bd:f32[]. let
    
  in (bd, bc, bb, ba, z, y, x, w, v, u, t, s, r, q, p, o, n, m, l, k, j, i, h, g,
    f, e, d, c, b, a) }"""

IOTA = """\
{ lambda ; a:i32[]. let
    b:i32[4] = iota[dimension=0 dtype=int32 shape=(4,) sharding=None] 
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[4] = add b c
  in (d,) }"""

WEAK_ARG = """\
{ lambda ; a:f32[]. let  in (a,) }"""

CONST_OUT = """\
{ lambda ; . let  in (2.0:f32[],) }"""

LITERAL_OUTS = """\
{ lambda ; a:f32[]. let  in (a, 1:i32[], 2.0:f32[]) }"""

SHARED_JIT = """\
let s = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
{ lambda ; c:f32[]. let
    d:f32[] = jit[name=s jaxpr=s] c
    e:f32[] = jit[name=s jaxpr=s] d
  in (e,) }"""

JIT_UNUSED_OUT = """\
{ lambda ; a:f32[]. let
    b:f32[] _:f32[] = jit[
      name=two
      jaxpr={ lambda ; a:f32[]. let
          b:f32[] = add a 1.0:f32[]
          _:f32[] = mul a 2.0:f32[]
        in (b, _) }
    ] a
  in (b,) }"""

JIT_INNER = """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=g
      jaxpr={ lambda ; a:f32[]. let
          c:f32[] = mul a 2.0:f32[]
          b:f32[] = add c 1.0:f32[]
        in (b,) }
    ] a
    d:f32[] = add b 1.0:f32[]
  in (d,) }"""

HORNER_30 = """\
{ lambda ; a:f32[]. let
    b:f32[] = mul 0.0:f32[] a
    c:f32[] = add b 0.0:f32[]
    d:f32[] = mul c a
    e:f32[] = add d 1.0:f32[]
    f:f32[] = mul e a
    g:f32[] = add f 2.0:f32[]
    h:f32[] = mul g a
    i:f32[] = add h 3.0:f32[]
    j:f32[] = mul i a
    k:f32[] = add j 4.0:f32[]
    l:f32[] = mul k a
    m:f32[] = add l 5.0:f32[]
    n:f32[] = mul m a
    o:f32[] = add n 6.0:f32[]
    p:f32[] = mul o a
    q:f32[] = add p 7.0:f32[]
    r:f32[] = mul q a
    s:f32[] = add r 8.0:f32[]
    t:f32[] = mul s a
    u:f32[] = add t 9.0:f32[]
    v:f32[] = mul u a
    w:f32[] = add v 10.0:f32[]
    x:f32[] = mul w a
    y:f32[] = add x 11.0:f32[]
    z:f32[] = mul y a
    ba:f32[] = add z 12.0:f32[]
    bb:f32[] = mul ba a
    bc:f32[] = add bb 13.0:f32[]
    bd:f32[] = mul bc a
    be:f32[] = add bd 14.0:f32[]
    bf:f32[] = mul be a
    bg:f32[] = add bf 15.0:f32[]
    bh:f32[] = mul bg a
    bi:f32[] = add bh 16.0:f32[]
    bj:f32[] = mul bi a
    bk:f32[] = add bj 17.0:f32[]
    bl:f32[] = mul bk a
    bm:f32[] = add bl 18.0:f32[]
    bn:f32[] = mul bm a
    bo:f32[] = add bn 19.0:f32[]
    bp:f32[] = mul bo a
    bq:f32[] = add bp 20.0:f32[]
    br:f32[] = mul bq a
    bs:f32[] = add br 21.0:f32[]
    bt:f32[] = mul bs a
    bu:f32[] = add bt 22.0:f32[]
    bv:f32[] = mul bu a
    bw:f32[] = add bv 23.0:f32[]
    bx:f32[] = mul bw a
    by:f32[] = add bx 24.0:f32[]
    bz:f32[] = mul by a
    ca:f32[] = add bz 25.0:f32[]
    cb:f32[] = mul ca a
    cc:f32[] = add cb 26.0:f32[]
    cd:f32[] = mul cc a
    ce:f32[] = add cd 27.0:f32[]
    cf:f32[] = mul ce a
    cg:f32[] = add cf 28.0:f32[]
    ch:f32[] = mul cg a
    ci:f32[] = add ch 29.0:f32[]
  in (ci,) }"""


def _z(*shape):
    return np.zeros(shape, f32)


W = np.ones((3, 4), f32)


def _horner(x):
    y = 0.
    for i in range(30):
        y = y * x + i
    return y


PROGRAMS = {
    "FITS_80": (lambda a, b: a + b, _z(1000000), _z(1000000)),
    "BREAKS_81": (lambda a, b: a + b, _z(10000000), _z(10000000)),
    "CONSTVARS": (lambda x: x @ W, _z(2, 3)),
    "INT_LITERALS": (lambda x: (x + 2, x * 2.0, x > 1, x & True), 1),
    "MANY_OUTS": (lambda x: tuple(x * i for i in range(1, 25)), jnp.ones((2, 3))),
    "UNUSED_SECOND": (lambda x: (jnp.sin(x), jnp.cos(x))[0], 1.0),
    "UNUSED_FIRST": (lambda x: (jnp.sin(x), jnp.cos(x))[1], 1.0),
    "MANY_ARGS": (lambda *xs: sum(xs), *[jnp.ones((2, 3))] * 20),
    "MANY_ARGS_NO_EQNS": (lambda *xs: xs[::-1], *[1.0] * 30),
    "IOTA": (lambda x: jnp.arange(4) + x, 1),
    "WEAK_ARG": (lambda x: x, 3.0),
    "CONST_OUT": (lambda: 2.0,),
    "LITERAL_OUTS": (lambda x: (x, 1, 2.0), 1.0),
    "HORNER_30": (_horner, 2.0),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_printed_like_jax(name):
    fun, *args = PROGRAMS[name]
    closed = trace_and_check(fun, *args, eager=False)
    assert str(closed) == globals()[name]


def test_the_80_column_boundary():
    assert len(FITS_80) == 80 and "\n" not in FITS_80
    assert len(BREAKS_81.replace("\n", " ").replace("    ", "").replace("  ", "")) > 80
    # width is a parameter of the renderer: the same jaxpr breaks in 79 columns
    closed = jitviz.make_jaxpr(lambda a, b: a + b)(_z(1000000), _z(1000000))
    assert "\n" in pretty.pp_jaxpr(closed.jaxpr, width=79)


def test_names_go_past_z_without_aa():
    names = [pretty._alphabetic(i) for i in range(80)]
    assert names[:3] == ["a", "b", "c"] and names[25] == "z"
    assert names[26:29] == ["ba", "bb", "bc"] and names[51] == "bz" and names[52] == "ca"
    assert "aa" not in names
    assert " ba:f32[2,3] = add z g" in MANY_ARGS


def test_unused_results_are_underscores_only_at_the_top_level():
    def f(p, x):
        def branch(v):
            unused = v * 3  # noqa: F841  (an unused value inside a sub-jaxpr keeps a name)
            return v + 1
        return lax.cond(p, branch, lambda v: v, x)
    text = str(jitviz.make_jaxpr(f)(True, 1.0))
    assert "_:" not in text and "= mul" in text
    text = str(jitviz.make_jaxpr(lambda x: (x * 2, x + 1)[1])(1.0))
    assert text == ("{ lambda ; a:f32[]. let\n    _:f32[] = mul a 2.0:f32[]\n"
                    "    b:f32[] = add a 1.0:f32[]\n  in (b,) }")


@pytest.mark.parametrize("fun,arg,literal", [
    (lambda x: x * 2, 1, "2:i32[]"), (lambda x: x * 2, 1.0, "2.0:f32[]"),
    (lambda x: x & True, True, "True:bool[]"), (lambda x: x * -1.5, 1.0, "-1.5:f32[]"),
    (lambda x: x + 0.1, 1.0, "0.1:f32[]"), (lambda x: x + 1e-8, 1.0, "1e-08:f32[]"),
    (lambda x: x + 1e20, 1.0, "1e+20:f32[]"), (lambda x: x * 123456789.0, 1.0, "123456789.0:f32[]"),
    (lambda x: x + 1 / 3, 1.0, "0.3333333333333333:f32[]"),
    (lambda x: x + float("inf"), 1.0, "inf:f32[]"), (lambda x: x - float("nan"), 1.0, "nan:f32[]"),
    (lambda x: x * (1 + 2j), 1.0, "(1+2j):c64[]"),
    (lambda x: x * np.float32(0.1), 1.0, "0.10000000149011612:f32[]"),
    (lambda x: x + jnp.array(0.1, jnp.float32), 1.0, "0.10000000149011612:f32[]"),
    (lambda x: x + jnp.array(0.1), 1.0, "0.1:f32[]"),
    (lambda x: x * np.int8(3), np.int8(1), "3:i8[]"), (lambda x: x + 1, np.uint8(1), "1:u8[]"),
    (lambda x: x + 2, np.float16(1), "2.0:f16[]"),
])
def test_literals(fun, arg, literal):
    closed = trace_and_check(fun, arg, eager=False)
    assert f" {literal}" in str(closed)


def test_weak_types_are_not_printed():
    assert str(jitviz.make_jaxpr(lambda x: x)(3.0)) == WEAK_ARG
    assert str(jitviz.make_jaxpr(lambda x: x)(np.float32(3))) == WEAK_ARG


# --- nested jaxprs ---------------------------------------------------------------------------

def test_nested_jit_inline():
    @jitviz.jit
    def g(x):
        return x * 2 + 1
    closed = trace_and_check(lambda x: g(x) + 1, 3.0, eager=False)
    assert str(closed) == JIT_INNER

    @jitviz.jit
    def two(x):
        return x + 1, x * 2
    assert str(jitviz.make_jaxpr(lambda x: two(x)[0])(1.0)) == JIT_UNUSED_OUT


def _jit_call(sub, name, *args):
    """A `jit` equation calling the (shared) jaxpr `sub`."""
    return bind_jit_call(name, sub, [], list(args))[0]


def test_a_jaxpr_used_twice_is_hoisted_as_let():
    sub = jitviz.make_jaxpr(jnp.sin)(f32(1)).jaxpr
    closed = jitviz.make_jaxpr(lambda x: _jit_call(sub, "s", _jit_call(sub, "s", x)))(1.0)
    jitviz.typecheck_jaxpr(closed)
    assert str(closed) == SHARED_JIT


def test_jit_called_twice_in_a_trace_shares_its_jaxpr():
    @jitviz.jit
    def s(x):
        return jnp.sin(x)
    assert str(jitviz.make_jaxpr(lambda x: s(s(x)))(1.0)) == SHARED_JIT


def test_long_sub_jaxprs_are_hoisted():
    def step(c, a):
        return jnp.sin(jnp.cos(jnp.tan(c * a + 1.0 - 2.0) * 3.0) / 4.0) ** 2 + c, None
    text = str(jitviz.make_jaxpr(lambda x: lax.scan(step, 0., x)[0])(jnp.ones(5)))
    assert text.startswith("let jaxpr = { lambda ; a:f32[] b:f32[]. let\n")
    assert "      jaxpr=jaxpr\n" in text and "{ lambda ; o:f32[5]. let" in text


# --- tracers, avals, equations ----------------------------------------------------------------

@pytest.mark.parametrize("arg,text", [
    (3, "Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>"),
    (3.0, "Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace>"),
    (np.float32(3), "Traced<ShapedArray(float32[])>with<DynamicJaxprTrace>"),
    (np.ones((2, 3), np.int8), "Traced<ShapedArray(int8[2,3])>with<DynamicJaxprTrace>"),
    (True, "Traced<ShapedArray(bool[])>with<DynamicJaxprTrace>"),
])
def test_tracer_repr(arg, text, capsys):
    def f(x):
        print(x)
        assert repr(x) == str(x) == f"{x}" == text
        return x
    jitviz.make_jaxpr(f)(arg)
    assert capsys.readouterr().out == text + "\n"


def test_shaped_array_strings():
    # str and repr are JAX 0.10's; str_short is the jaxpr printer's type text
    a = ShapedArray((2, 3), np.float32, True)
    assert str(a) == "~float32[2,3]" and a.str_short() == "f32[2,3]"
    assert repr(a) == "ShapedArray(float32[2,3], weak_type=True)"
    assert str(ShapedArray((), np.complex128)) == "complex128[]"
    assert ShapedArray((), np.complex128).str_short() == "c128[]"
    assert str(ShapedArray((4,), np.bool_)) == "bool[4]"
    assert str(ShapedArray((1, 0), np.uint16)) == "uint16[1,0]"


def test_equation_repr_and_no_outputs():
    closed = jitviz.make_jaxpr(lambda x: x * 2)(1.0)
    # alone, an equation names its outputs first (as JAX's error messages print them)
    assert repr(closed.jaxpr.eqns[0]) == "a:f32[] = mul b 2.0:f32[]"
    closed = jitviz.make_jaxpr(lambda x: jitviz.debug.print("{}", x))(1.0)
    line = str(closed).splitlines()[0]
    assert "debug_print[" in line and " = debug_print" not in line  # no outputs, no `=`


def test_jupyter_shows_the_text():
    closed = jitviz.make_jaxpr(lambda x: x + 1)(1.0)

    class P:
        def __init__(self):
            self.out = ""

        def text(self, s):
            self.out += s
    p = P()
    closed._repr_pretty_(p, False)
    assert p.out == str(closed) == repr(closed)


# --- the document layout engine ----------------------------------------------------------------

def test_group_prints_flat_when_it_fits_in_the_rest_of_the_line():
    doc = pretty.group(pretty.nest(2, pretty.concat(
        [pretty.text("aaaa"), pretty.brk(), pretty.text("bbbb")])))
    assert pretty.render(doc, width=9) == "aaaa bbbb"
    assert pretty.render(doc, width=8) == "aaaa\n  bbbb"
    # only the group counts: text after it may run past the width
    tail = pretty.concat([doc, pretty.text(" and more text after the group")])
    assert pretty.render(tail, width=9).startswith("aaaa bbbb and more")


def test_nested_groups_choose_their_own_mode():
    inner = pretty.group(pretty.concat([pretty.text("x"), pretty.brk(), pretty.text("y")]))
    outer = pretty.group(pretty.nest(4, pretty.concat(
        [pretty.text("0123456789"), pretty.brk(), inner])))
    assert pretty.render(outer, width=12) == "0123456789\n    x y"

