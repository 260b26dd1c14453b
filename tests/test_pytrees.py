"""Pytrees (tuple, list, dict, None, namedtuple, registered classes) as arguments, outputs
and control-flow carries."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.tree import (register_pytree_node, tree_flatten, tree_leaves, tree_map,
                         tree_structure, tree_unflatten)

from helpers import eval_closed, trace_and_check

Point = collections.namedtuple("Point", "x y")
f32 = np.float32


class Box:
    """A user class registered as a pytree node."""

    def __init__(self, value, label):
        self.value, self.label = value, label


register_pytree_node(Box, lambda b: ((b.value,), b.label), lambda label, c: Box(c[0], label),
                     lambda label, n: [".value"])


TREES = [
    (1.0, 2.0),
    [1.0, (2.0, 3.0)],
    {"b": 1.0, "a": [2.0, None]},
    Point(1.0, {"z": 2.0}),
    None,
    (),
    {"x": ()},
    [np.ones(2, f32), {"k": (np.zeros(3, f32), 4)}],
]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_flatten_unflatten_roundtrip(tree):
    leaves, treedef = tree_flatten(tree)
    rebuilt = tree_unflatten(treedef, leaves)
    assert tree_structure(rebuilt) == treedef
    assert len(leaves) == treedef.num_leaves
    assert all(a is b for a, b in zip(tree_leaves(rebuilt), leaves))
    assert type(rebuilt) is type(tree)


def test_dicts_flatten_in_sorted_key_order_and_name_their_leaves():
    leaves, treedef = tree_flatten({"b": 1, "a": (2, 3), "c": None})
    assert leaves == [2, 3, 1]
    assert treedef.leaf_paths("d") == ["d['a'][0]", "d['a'][1]", "d['b']"]
    _, t = tree_flatten(Point(1, [2]))
    assert t.leaf_paths("p") == ["p.x", "p.y[0]"]
    _, t = tree_flatten(Box(5, "lbl"))
    assert t.leaf_paths("b") == ["b.value"]


def test_treedefs_compare_and_hash_by_structure():
    a = tree_structure({"a": 1, "b": (2, 3)})
    b = tree_structure({"a": 9.0, "b": (np.ones(2), 1)})
    assert a == b and hash(a) == hash(b)
    assert a != tree_structure({"a": 1, "b": [2, 3]})
    assert a != tree_structure({"a": 1, "c": (2, 3)})
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert tree_structure(Box(1, "x")) != tree_structure(Box(1, "y"))
    assert "added keys 'c'" in a.describe_difference(tree_structure({"a": 1, "b": (2, 3),
                                                                     "c": 4}))
    assert "had 2 elements and now has 3" in a.describe_difference(
        tree_structure({"a": 1, "b": (2, 3, 4)}))


def test_tree_map():
    out = tree_map(lambda x, y: x + y, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
    assert out == {"a": 11, "b": (22, 33)}


# --- as arguments and outputs --------------------------------------------------------------

def test_pytree_arguments_become_flat_invars():
    def f(d, p, xs):
        return d["a"] * p.x + xs[1] - p.y["z"]
    args = ({"a": 2.0, "b": None}, Point(3.0, {"z": np.float32(1)}), [0.0, np.ones(2, f32)])
    c = trace_and_check(f, *args, expected=np.full(2, 6.0, f32))
    assert len(c.jaxpr.invars) == 5
    assert c.arg_names == ["d['a']", "p.x", "p.y['z']", "xs[0]", "xs[1]"]


def test_pytree_outputs_keep_their_structure():
    def f(x):
        return {"sum": x.sum(), "parts": (x[0], [x[1], None]), "pt": Point(x * 2, 1.0)}
    x = np.arange(3, dtype=f32)
    c = trace_and_check(f, x, expected={"sum": f32(3), "parts": (f32(0), [f32(1), None]),
                                        "pt": Point(x * 2, f32(1))})
    out = eval_closed(c, x)
    assert isinstance(out["pt"], Point) and out["parts"][1][1] is None
    np.testing.assert_array_equal(out["pt"].x, x * 2)
    assert c.out_tree == tree_structure(f(jnp.asarray(x)))


def test_registered_class_as_argument_and_output():
    def f(b):
        return Box(b.value * 2, b.label + "!")
    c = trace_and_check(f, Box(np.ones(2, f32), "v"), eager=False,
                        expected=Box(np.full(2, 2, f32), "v!"))
    out = eval_closed(c, Box(np.ones(2, f32), "v"))
    assert isinstance(out, Box) and out.label == "v!"


def test_keyword_arguments_are_traced_in_sorted_order():
    c = trace_and_check(lambda x, *, b, a: x + a * b, 1.0, b=2.0, a=3.0,
                        expected=f32(7))
    assert c.arg_names == ["x", "a", "b"]


def test_empty_and_none_arguments():
    c = trace_and_check(lambda x, nothing, empty: x, 1.0, None, (), expected=f32(1))
    assert len(c.jaxpr.invars) == 1
    c = jitviz.make_jaxpr(lambda: (1.0, None))()
    assert str(c) == "{ lambda ; . let  in (1.0:f32[],) }"


# --- as carries ------------------------------------------------------------------------------

def test_tuple_dict_and_namedtuple_carries_in_while_loop():
    def f(x):
        def body(c):
            return {"i": c["i"] + 1, "acc": Point(c["acc"].x * 2, c["acc"].y + x)}
        return lax.while_loop(lambda c: c["i"] < 4, body,
                              {"i": 0, "acc": Point(x, jnp.zeros(()))})
    out = trace_and_check(f, 1.5, expected={"i": np.int32(4),
                                            "acc": Point(f32(24), f32(6))})
    assert out.out_tree == tree_structure({"i": 0, "acc": Point(0, 0)})


def test_pytree_scan_carry_and_xs():
    def f(xs):
        def step(carry, x):
            s, (n, m) = carry
            return (s + x["a"], (n + 1, jnp.maximum(m, x["b"]))), Point(x["a"] * 2, n)
        return lax.scan(step, (0.0, (0, -np.inf)), xs)
    a = np.arange(4, dtype=f32)
    b = np.array([3, 1, 4, 1], f32)
    trace_and_check(f, {"a": a, "b": b},
                    expected=((f32(6), (np.int32(4), f32(4))),
                              Point(a * 2, np.arange(4, dtype=np.int32))))


def test_pytree_cond_operands_and_outputs():
    def f(p, tree):
        return lax.cond(p, lambda t: {"u": t[0] + t[1]["v"], "w": [t[0]]},
                        lambda t: {"u": t[0] - t[1]["v"], "w": [t[0] * 0]}, tree)
    tree = (np.ones(2, f32), {"v": np.full(2, 3, f32)})
    trace_and_check(f, True, tree, expected={"u": np.full(2, 4, f32), "w": [np.ones(2, f32)]})
    trace_and_check(f, False, tree, expected={"u": np.full(2, -2, f32),
                                              "w": [np.zeros(2, f32)]})


def test_carry_structure_change_is_an_error_naming_the_difference():
    with pytest.raises(TypeError, match="pytree structure"):
        jitviz.make_jaxpr(lambda x: lax.while_loop(lambda c: c[0] < 3,
                                                   lambda c: [c[0] + 1, c[1]], (0, x)))(1.0)
    with pytest.raises(TypeError, match="added keys 'b'"):
        jitviz.make_jaxpr(lambda x: lax.scan(lambda c, y: ({"a": c["a"], "b": y}, y),
                                             {"a": x}, jnp.ones(3)))(1.0)


def test_cond_branches_with_different_structures_is_an_error():
    with pytest.raises(TypeError, match="same pytree structure"):
        jitviz.make_jaxpr(lambda p, x: lax.cond(p, lambda v: (v, v), lambda v: [v, v], x))(
            True, 1.0)
