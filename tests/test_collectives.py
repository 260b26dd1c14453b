"""Collectives over a named vmap axis (jitviz/transforms/collectives.py), against the values
JAX 0.10 gives for the same programs."""
import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

XS = np.arange(4, dtype=np.float32)


def named(f, **kw):
    return jitviz.vmap(f, axis_name="i", **kw)


@pytest.mark.parametrize("wrap", [lambda f: f, jitviz.jit], ids=["eager", "jit"])
def test_psum_pmean_pmax_pmin_over_the_named_axis(wrap):
    np.testing.assert_allclose(wrap(named(lambda x: x / lax.psum(x, "i")))(XS), XS / XS.sum())
    np.testing.assert_allclose(wrap(named(lambda x: x - lax.pmean(x, "i")))(XS),
                               XS - XS.mean())
    np.testing.assert_array_equal(wrap(named(lambda x: lax.pmax(x, "i") - lax.pmin(x, "i")))
                                  (XS), [3, 3, 3, 3])


def test_collective_of_an_unbatched_value_still_counts_every_example():
    out = named(lambda x: lax.psum(1, "i"))(XS)
    np.testing.assert_array_equal(out, [4, 4, 4, 4])  # JAX: the axis size for each example


def test_axis_index_and_all_gather():
    np.testing.assert_array_equal(named(lambda x: lax.axis_index("i"))(XS), [0, 1, 2, 3])
    np.testing.assert_array_equal(named(lambda x: lax.all_gather(x, "i"))(XS),
                                  np.tile(XS, (4, 1)))
    rows = np.arange(6, dtype=np.float32).reshape(3, 2)
    tiled = jitviz.vmap(lambda r: lax.all_gather(r, "i", tiled=True), axis_name="i")(rows)
    np.testing.assert_array_equal(tiled, np.tile(rows.ravel(), (3, 1)))


def test_nested_vmaps_reduce_over_their_own_names():
    f = jitviz.vmap(jitviz.vmap(lambda x: lax.psum(x, "i") + 10 * lax.psum(x, "j"),
                                axis_name="j"), axis_name="i")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(f(x), [[33, 35, 37], [123, 125, 127]])  # JAX's values
    both = jitviz.vmap(jitviz.vmap(lambda x: lax.psum(x, ("i", "j")), axis_name="j"),
                       axis_name="i")
    np.testing.assert_array_equal(both(x), np.full((2, 3), x.sum()))


def test_psum_inside_a_scan_body_and_under_grad():
    def body_sum(x):
        def step(c, _):
            return c + lax.psum(x, "i"), None
        return lax.scan(step, 0.0, None, length=3)[0]
    np.testing.assert_array_equal(named(body_sum)(XS), [18, 18, 18, 18])
    g = jitviz.grad(lambda x: named(lambda v: v * lax.psum(v, "i"))(x).sum())(XS)
    np.testing.assert_array_equal(g, [12, 12, 12, 12])  # 2 * sum(x), as JAX


def test_the_traced_program_has_no_collective_left():
    text = str(jitviz.make_jaxpr(named(lambda x: x / lax.psum(x, "i")))(XS))
    assert "psum" not in text and "reduce_sum" in text


def test_unbound_axis_name_is_jax_name_error():
    with pytest.raises(NameError, match="unbound axis name: k"):
        lax.psum(1.0, "k")
    with pytest.raises(NameError, match="unbound axis name: k"):
        named(lambda x: lax.psum(x, "k"))(XS)
    # grad outside the vmap sees the reduction the vmap made of pmax (JAX: [0, 0, 0, 4]);
    # inside it, pmax itself would need a derivative rule, which jitviz says it lacks
    g = jitviz.grad(lambda x: named(lambda v: lax.pmax(v, "i"))(x).sum())(XS)
    np.testing.assert_array_equal(g, [0, 0, 0, 4])
    with pytest.raises(NotImplementedError, match="no (JVP|VJP) rule for pmax"):
        named(jitviz.grad(lambda v: lax.pmax(v, "i")))(XS)


def test_axis_size_maps_without_a_mapped_argument():
    out = jitviz.vmap(lambda: lax.axis_index("i"), axis_name="i", axis_size=3)()
    np.testing.assert_array_equal(out, [0, 1, 2])
