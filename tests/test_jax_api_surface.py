"""JAX's API surface on jitviz, against real JAX: a notebook that changes only its imports
(`import jitviz as jax`, `import jitviz.numpy as jnp`, `from jitviz import lax, random, nn,
tree_util`) computes the same values, dtypes, shapes, pytree structures and errors."""
from __future__ import annotations

import collections
import dataclasses
import functools

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import tree_util as jtu

jax = pytest.importorskip("jax")
import jax.numpy as xnp  # noqa: E402
from jax import tree_util as xtu  # noqa: E402

Point = collections.namedtuple("Point", "x y")


# --- pytrees: jitviz.tree_util / jitviz.tree --------------------------------------------------

class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label


@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="layer", metadata=dict(static=True))


@dataclasses.dataclass
class Params2:  # the same class registered with real JAX (a class has one registration each)
    w: object
    b: object
    name: str = dataclasses.field(default="layer", metadata=dict(static=True))


for _tu in (jtu, xtu):
    _tu.register_pytree_node(Box, lambda b: ((b.value,), b.label),
                             lambda label, c: Box(c[0], label))
jtu.register_dataclass(Params)
xtu.register_dataclass(Params2)


def _trees():
    return [(1.0, 2.0), (1.0,), (), None, 3.0, [1.0, (2.0, None)],
            {"b": 1.0, "a": [2.0, None]}, Point(1.0, {"z": 2.0}), [Box(1.0, ("a", 2))],
            {"p": Point(1.0, 2.0), "box": Box([3.0, 4.0], "lbl")},
            collections.OrderedDict(b=1.0, a=2.0), collections.defaultdict(list, b=1.0, a=2.0)]


@pytest.mark.parametrize("i", range(len(_trees())))
def test_flatten_structure_repr_and_paths_match_jax(i):
    tree = _trees()[i]
    leaves, treedef = jitviz.tree.flatten(tree)
    x_leaves, x_treedef = jax.tree.flatten(tree)
    assert leaves == x_leaves
    assert repr(treedef) == repr(x_treedef)
    assert (treedef.num_leaves, treedef.num_nodes) == (x_treedef.num_leaves, x_treedef.num_nodes)
    assert [repr(c) for c in treedef.children()] == [repr(c) for c in x_treedef.children()]
    pairs, _ = jtu.tree_flatten_with_path(tree)
    x_pairs, _ = xtu.tree_flatten_with_path(tree)
    assert [repr(p) for p, _ in pairs] == [repr(p) for p, _ in x_pairs]
    assert [jtu.keystr(p) for p, _ in pairs] == [xtu.keystr(p) for p, _ in x_pairs]
    assert [jtu.keystr(p, simple=True, separator="/") for p, _ in pairs] == \
        [xtu.keystr(p, simple=True, separator="/") for p, _ in x_pairs]
    rebuilt = jitviz.tree.unflatten(treedef, leaves)
    assert jitviz.tree.structure(rebuilt) == treedef and type(rebuilt) is type(tree)


def test_dataclass_and_node_class_registration_match_jax():
    tree, x_tree = Params(1.0, [2.0], "l1"), Params2(1.0, [2.0], "l1")
    assert repr(jitviz.tree.structure(tree)).replace("Params", "P") == \
        repr(jax.tree.structure(x_tree)).replace("Params2", "P")
    assert [repr(p) for p, _ in jtu.tree_flatten_with_path(tree)[0]] == \
        [repr(p) for p, _ in xtu.tree_flatten_with_path(x_tree)[0]]
    doubled = jitviz.tree.map(lambda v: 2 * v, tree)
    assert isinstance(doubled, Params) and doubled.w == 2.0 and doubled.name == "l1"

    @jtu.register_pytree_node_class
    class Node:
        def __init__(self, a, aux=None):
            self.a, self.aux = a, aux

        def tree_flatten(self):
            return (self.a,), self.aux

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children, aux)

    assert repr(jitviz.tree.structure(Node(1, "k"))) == "PyTreeDef(CustomNode(Node[k], [*]))"
    assert jitviz.tree.map(lambda v: v + 1, Node(1, "k")).a == 2


def test_key_classes_repr_and_str_as_jax():
    for name, arg in (("SequenceKey", 0), ("DictKey", "a"), ("GetAttrKey", "x"),
                      ("FlattenedIndexKey", 0)):
        ours, theirs = getattr(jtu, name)(arg), getattr(xtu, name)(arg)
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))


def _error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", [
    lambda tree: tree.flatten({1: 1.0, "a": 2.0}),
    lambda tree: tree.map(lambda a, b: a, (1, 2), (1, 2, 3)),
    lambda tree: tree.map(lambda a, b: a, (1, 2), [1, 2]),
    lambda tree: tree.map(lambda a, b: a, {"a": 1}, {"b": 1}),
    lambda tree: tree.map(lambda a, b: a, None, 1),
    lambda tree: tree.unflatten(tree.structure((1, 2)), [1]),
    lambda tree: tree.unflatten(tree.structure((1, 2)), [1, 2, 3]),
    lambda tree: tree.transpose(tree.structure([0, 0]), tree.structure((0, 0)), [(1, 2), (3,)]),
    lambda tree: tree.reduce(lambda a, b: a + b, []),
], ids=["mixed-keys", "tuple-length", "types", "dict-keys", "none", "too-few", "too-many",
        "transpose", "reduce-empty"])
def test_errors_match_jax(case):
    assert _error(case, jitviz.tree) == _error(case, jax.tree)


def test_map_reduce_all_transpose_match_jax():
    for tree in (jitviz.tree, jax.tree):
        assert tree.map(lambda a, b: (a, b), (1, 2), ((3, 4), 5)) == ((1, (3, 4)), (2, 5))
    cases = [
        lambda t: t.reduce(lambda a, b: a + b, [1, (2, 3)]),
        lambda t: t.reduce(lambda a, b: a + b, [1, (2, 3)], 10),
        lambda t: (t.all([True, 1, (2,)]), t.all([True, 0]), t.all([])),
        lambda t: t.transpose(t.structure([0, 0]), t.structure((0, 0)), [(1, 2), (3, 4)]),
        lambda t: t.transpose(t.structure([0, 0]), None, [{"a": 1}, {"a": 2}]),
        lambda t: t.leaves([None, 1, (2, None)]),
        lambda t: t.leaves([None, 1], is_leaf=lambda x: x is None),
        lambda t: t.map(lambda x: x, [None, 1]),
        lambda t: t.map(lambda x: len(x), [[1, 2], [3]], is_leaf=lambda x: isinstance(x, list)
                        and len(x) < 3 and all(not isinstance(i, list) for i in x)),
        lambda t: t.map_with_path(lambda p, x: str(p[-1]), {"a": (1, 2), "b": Point(3, 4)}),
        lambda t: [(str(p), x) for p, x in t.leaves_with_path({"a": [1], "b": 2})],
    ]
    for case in cases:
        assert case(jitviz.tree) == case(jax.tree)
    assert jtu.tree_map_with_path(lambda p, x, y: (jtu.keystr(p), x + y), {"a": 1}, {"a": 2}) \
        == xtu.tree_map_with_path(lambda p, x, y: (xtu.keystr(p), x + y), {"a": 1}, {"a": 2})


def test_tree_util_names_exist_as_in_jax():
    for name in ("tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
                 "tree_reduce", "tree_all", "tree_flatten_with_path", "tree_map_with_path",
                 "tree_transpose", "keystr", "register_pytree_node", "register_dataclass",
                 "register_pytree_node_class", "Partial", "SequenceKey", "DictKey",
                 "GetAttrKey", "PyTreeDef"):
        assert hasattr(jtu, name) and hasattr(xtu, name), name
    for name in ("map", "leaves", "structure", "flatten", "unflatten", "reduce", "all",
                 "transpose", "map_with_path", "flatten_with_path", "leaves_with_path"):
        assert hasattr(jitviz.tree, name) and hasattr(jax.tree, name), name
    assert jitviz.tree_util.tree_map is jitviz.tree.map is jitviz.tree_map


def test_partial_is_a_pytree_through_jit_and_grad():
    add = lambda a, b: a * b  # noqa: E731
    p = jtu.Partial(add, jnp.float32(3.0))
    assert repr(jitviz.tree.structure(p)) == repr(jax.tree.structure(
        xtu.Partial(add, xnp.float32(3.0))))  # the same function object: the same repr
    assert jitviz.tree.leaves(p) == [3.0] and p(2.0) == 6.0

    @jitviz.jit
    def call(fn, x):
        return fn(x)

    np.testing.assert_allclose(call(p, jnp.float32(2.0)), 6.0)
    out = jitviz.jit(lambda s: jtu.Partial(add, s))(jnp.float32(4.0))
    assert isinstance(out, jtu.Partial) and float(out(2.0)) == 8.0
    g = jitviz.grad(lambda fn: fn(jnp.float32(2.0)))(p)
    assert isinstance(g, jtu.Partial) and float(g.args[0]) == 2.0


@pytest.mark.filterwarnings("ignore::jitviz.SideEffectWarning")  # the trace counter
def test_jit_takes_dataclasses_and_namedtuples_and_recompiles_on_static_field():
    calls = []

    @jitviz.jit
    def f(params, pt):
        calls.append(1)
        return params.w * pt.x + params.b

    out = f(Params(jnp.float32(2.0), jnp.float32(1.0)), Point(jnp.float32(3.0), 0.0))
    assert float(out) == 7.0
    f(Params(jnp.float32(5.0), jnp.float32(1.0)), Point(jnp.float32(3.0), 0.0))
    assert len(calls) == 1
    f(Params(jnp.float32(5.0), jnp.float32(1.0), "other"), Point(jnp.float32(3.0), 0.0))
    assert len(calls) == 2  # a static field is part of the structure, as in JAX
