"""The jaxpr utilities of `jitviz.core` (walks, the rewrite driver, the environment interpreter)
and the contracts built on them: passes hand back an unchanged input, the pipeline records it,
and a ClosedJaxpr never changes after construction."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.core.interpreter import run_jaxpr
from jitviz.core.ir import Literal, ShapedArray, literal_key
from jitviz.core.jaxpr_util import all_eqns, rewrite_jaxpr, sub_jaxprs
from jitviz.lax import primitives as P
from jitviz.passes import PIPELINE, run_pipeline

from cpu_helpers import trace

f32 = np.float32
X = np.linspace(-1, 1, 5, dtype=f32)


def loop_program(x):
    return lax.fori_loop(0, 3, lambda i, y: jnp.sin(y) * 2.0, x) + jnp.sin(x) * 2.0


def test_all_eqns_visits_bodies_after_their_equation():
    closed = trace(loop_program, X)
    names = [e.primitive.name for e in all_eqns(closed.jaxpr)]
    loop = next(e for e in closed.jaxpr.eqns if list(sub_jaxprs(e)))
    body = [e.primitive.name for b in sub_jaxprs(loop) for e in all_eqns(b)]
    start = names.index(loop.primitive.name) + 1
    assert names[start:start + len(body)] == body
    assert "sin" in body


def mul_by_two_to_add(jaxpr, subst):
    """A rule: `y = mul x 2.0` becomes `y' = add x x`, everywhere, bodies included."""
    def rule(eqn):
        if eqn.primitive is not P.mul_p or not isinstance(eqn.invars[1], Literal) or \
                float(eqn.invars[1].val) != 2.0:
            return None
        x = eqn.invars[0]
        new = eqn.replace(primitive=P.add_p, invars=(x, x),
                          outvars=[type(eqn.outvars[0])(eqn.outvars[0].aval)])
        return [new], list(new.outvars)
    return rule


def test_rewrite_jaxpr_substitutes_and_recurses():
    closed = trace(loop_program, X)
    j, changed = rewrite_jaxpr(closed.jaxpr, mul_by_two_to_add)
    assert changed and j is not closed.jaxpr
    names = [e.primitive.name for e in all_eqns(j)]
    assert "mul" not in names and names.count("add") >= 3  # top level and the loop's body
    want = jitviz.eval_jaxpr(closed.jaxpr, closed.consts, X)
    got = jitviz.eval_jaxpr(j, closed.consts, X)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


def test_rewrite_jaxpr_hands_back_an_unchanged_jaxpr_itself():
    closed = trace(lambda x: jnp.sin(x) + 1.0, X)
    j, changed = rewrite_jaxpr(closed.jaxpr, lambda jaxpr, subst: lambda eqn: None)
    assert j is closed.jaxpr and not changed


def test_each_scope_gets_its_own_rule():
    scopes = []

    def make_rule(jaxpr, subst):
        scopes.append(jaxpr)
        return lambda eqn: None
    closed = trace(loop_program, X)
    rewrite_jaxpr(closed.jaxpr, make_rule)
    assert scopes[0] is closed.jaxpr and len(scopes) == 2


@pytest.mark.parametrize("fastmath", [False, True])
def test_a_pass_that_changes_nothing_hands_back_its_input(fastmath):
    closed = trace(lambda x: jnp.sin(x) * 2.0, X)
    stages = run_pipeline(closed, fastmath=fastmath)
    before = closed
    for stage in stages:
        assert stage.changed == (stage.jaxpr is not before)
        before = stage.jaxpr
    changed = {s.name: s.changed for s in stages}
    assert changed["inline"] is False and changed["cse"] is False and changed["dce"] is False
    assert changed["fuse"] is True
    again = run_pipeline(stages[-1].jaxpr, pipeline=[p for p in PIPELINE if p.name != "fuse"])
    assert not any(s.changed for s in again)


def test_stages_unpack_as_name_and_jaxpr():
    closed = trace(lambda x: x + x, X)
    (name, j), = run_pipeline(closed, pipeline=PIPELINE[:1])
    assert name == "inline" and j is closed
    assert dict(run_pipeline(closed))["fuse"] is not closed


def test_closed_jaxpr_is_immutable():
    closed = trace(lambda x: x * np.arange(5, dtype=f32), X)
    with pytest.raises(AttributeError, match="immutable"):
        closed.consts = []
    with pytest.raises(AttributeError, match="immutable"):
        closed.report = None
    other = closed.replace(consts=[np.ones(5, f32)])
    assert other.jaxpr is closed.jaxpr and other.report is closed.report
    assert closed.consts[0].tolist() == list(range(5))


def test_literal_key_tells_values_of_their_type_apart():
    f32_aval = ShapedArray((), f32)
    assert literal_key(Literal(0.0, f32_aval)) != literal_key(Literal(-0.0, f32_aval))
    assert literal_key(Literal(1.0, f32_aval)) == literal_key(Literal(f32(1), f32_aval))
    assert literal_key(Literal(1.0, f32_aval)) != \
        literal_key(Literal(1.0, ShapedArray((), f32, weak_type=True)))


def test_run_jaxpr_is_the_interpreter_loop():
    closed = trace(lambda x: jnp.sin(x) * 2.0 + x, X)
    seen = []

    def apply_eqn(eqn, ins):
        seen.append(eqn.primitive.name)
        return [eqn.primitive.impl(*ins, **eqn.params)]
    outs, env = run_jaxpr(closed.jaxpr, [X], apply_eqn,
                          literal=lambda lit: np.asarray(lit.val, lit.aval.dtype))
    assert seen == [e.primitive.name for e in closed.jaxpr.eqns]
    np.testing.assert_allclose(outs[0], np.sin(X) * 2 + X, rtol=1e-6)
    assert env.read(closed.jaxpr.invars[0]) is X
