"""JAX's API surface on jitviz, against real JAX: a notebook that changes only its imports
(`import jitviz as jax`, `import jitviz.numpy as jnp`, `from jitviz import lax, random, nn,
tree_util`) computes the same values, dtypes, shapes, pytree structures and errors."""
from __future__ import annotations

import collections
import dataclasses

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


# --- jitviz.nn --------------------------------------------------------------------------------

from jitviz import nn  # noqa: E402

SPECIALS = np.array([-np.inf, -1e4, -100.0, -20.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0,
                     20.0, 100.0, 1e4, np.inf], np.float32)
FINITE = np.array([-30.0, -6.0, -3.0, -1.3, -0.5, -1e-3, 0.25, 0.7, 1.5, 3.0, 5.5, 7.0, 40.0],
                  np.float32)  # away from the kinks, where a derivative is defined
ELEMENTWISE = ["relu", "relu6", "sigmoid", "softplus", "log_sigmoid", "silu", "swish", "gelu",
               "elu", "leaky_relu", "celu", "selu", "hard_tanh", "hard_sigmoid", "hard_silu",
               "hard_swish", "soft_sign", "mish", "squareplus", "identity"]


def assert_like_jax(ours, theirs, rtol=2e-6, atol=1e-30):
    """Same shapes, dtypes and values (subnormals count as 0: XLA's CPU flushes them)."""
    ours, theirs = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        if a.dtype.kind == "f":
            tiny = np.finfo(a.dtype).tiny
            a, b = np.where(np.abs(a) < tiny, 0, a), np.where(np.abs(b) < tiny, 0, b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf * 0 in the eager reference
@pytest.mark.parametrize("name", ELEMENTWISE)
def test_nn_elementwise_values_match_jax_eager_and_jit(name):
    ours, theirs = getattr(nn, name), getattr(jax.nn, name)
    expected = theirs(SPECIALS)
    # atol: gelu's 1 + tanh(..) cancels near x = -3, where tanh's last ulp shows
    assert_like_jax(ours(SPECIALS), expected, atol=2e-7)
    assert_like_jax(jitviz.jit(ours)(SPECIALS), expected, atol=2e-7)
    assert_like_jax(ours(SPECIALS.reshape(4, 4)), theirs(SPECIALS.reshape(4, 4)))
    assert_like_jax(ours(np.float32(0.5)), theirs(np.float32(0.5)))


@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n != "identity"])
def test_nn_elementwise_gradients_match_jax(name):
    ours, theirs = getattr(nn, name), getattr(jax.nn, name)
    for x in FINITE:
        assert_like_jax(jitviz.grad(ours)(x), jax.grad(theirs)(x), rtol=2e-5, atol=1e-7)
    assert_like_jax(jitviz.vmap(jitviz.grad(ours))(FINITE), jax.vmap(jax.grad(theirs))(FINITE),
                    rtol=2e-5, atol=1e-7)


def test_relu_and_relu6_derivatives_at_the_kinks_are_zero_as_jax():
    for ours, theirs, x in ((nn.relu, jax.nn.relu, 0.0), (nn.relu6, jax.nn.relu6, 0.0),
                            (nn.relu6, jax.nn.relu6, 6.0)):
        assert float(jitviz.grad(ours)(np.float32(x))) == float(jax.grad(theirs)(np.float32(x)))


def test_nn_integer_inputs_promote_as_jax():
    ints = np.array([-3, 0, 2, 7], np.int32)
    for name in ("relu", "relu6", "gelu", "elu", "softplus", "hard_tanh", "celu", "leaky_relu",
                 "hard_sigmoid", "soft_sign"):
        assert_like_jax(getattr(nn, name)(ints), getattr(jax.nn, name)(ints))


def test_gelu_exact_matches_jax_in_float32():
    x = np.linspace(-12, 12, 2001).astype(np.float32)
    assert_like_jax(nn.gelu(x, approximate=False), jax.nn.gelu(x, approximate=False),
                    rtol=5e-6, atol=1e-37)
    assert_like_jax(jitviz.grad(lambda v: nn.gelu(v, approximate=False))(np.float32(0.7)),
                    jax.grad(lambda v: jax.nn.gelu(v, approximate=False))(np.float32(0.7)),
                    rtol=1e-5)


ROWS = np.array([[1.0, 2.0, 3.0, 4.0], [-np.inf, 0.0, 1.0, -np.inf], [-np.inf] * 4,
                 [1e4, -1e4, 1e4, 0.0], [88.0, 89.0, 90.0, -100.0]], np.float32)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp", "standardize"])
@pytest.mark.parametrize("axis", [-1, 0, None, (0, 1)])
def test_nn_reductions_match_jax(name, axis):
    if name == "standardize" and axis is None:
        pytest.skip("standardize needs an axis")
    ours, theirs = getattr(nn, name), getattr(jax.nn, name)
    data = ROWS if name != "standardize" else np.nan_to_num(ROWS, neginf=-5.0)
    assert_like_jax(ours(data, axis=axis), theirs(data, axis=axis), rtol=1e-5)
    assert_like_jax(jitviz.jit(lambda v: ours(v, axis=axis))(data), theirs(data, axis=axis),
                    rtol=1e-5)


def test_softmax_where_and_gradients_match_jax():
    x = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]], np.float32)
    mask = np.array([[True, False, True], [True, True, False]])
    for name in ("softmax", "log_softmax"):
        assert_like_jax(getattr(nn, name)(x, where=mask), getattr(jax.nn, name)(x, where=mask))
        w = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]], np.float32)
        g = jitviz.grad(lambda v: jnp.sum(getattr(nn, name)(v) * w))(x)
        gj = jax.grad(lambda v: (getattr(jax.nn, name)(v) * w).sum())(x)
        assert_like_jax(g, gj, rtol=1e-5, atol=1e-6)
    assert_like_jax(jitviz.grad(lambda v: nn.logsumexp(v))(x), jax.grad(jax.nn.logsumexp)(x),
                    rtol=1e-5)
    assert_like_jax(jitviz.vmap(nn.softmax)(x), jax.vmap(jax.nn.softmax)(x))


def test_glu_one_hot_match_jax():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10
    for axis in (-1, 0):
        assert_like_jax(nn.glu(x, axis=axis), jax.nn.glu(x, axis=axis))
    labels = np.array([[0, 2], [3, -1]], np.int32)
    for kwargs in ({}, {"axis": 0}, {"dtype": np.int32}, {"axis": 1, "dtype": np.float32}):
        assert_like_jax(nn.one_hot(labels, 3, **kwargs), jax.nn.one_hot(labels, 3, **kwargs))
    assert_like_jax(jitviz.jit(lambda v: nn.one_hot(v, 4))(labels), jax.nn.one_hot(labels, 4))
    assert_like_jax(jitviz.vmap(lambda v: nn.one_hot(v, 4))(labels),
                    jax.vmap(lambda v: jax.nn.one_hot(v, 4))(labels))


def test_standardize_options_match_jax():
    x = np.array([[1.0, 2.0, 4.0], [10.0, 11.5, 12.0]], np.float32)
    for kwargs in ({}, {"algorithm": "stable"}, {"epsilon": 1e-2},
                   {"mean": np.float32(1.0), "variance": np.float32(4.0)}):
        assert_like_jax(nn.standardize(x, **kwargs), jax.nn.standardize(x, **kwargs), rtol=1e-5)


INITS = [("zeros", None), ("ones", None), ("constant", (-7.0,)), ("uniform", (2.0,)),
         ("normal", (3.0,)), ("truncated_normal", (3.0,)), ("glorot_uniform", ()),
         ("glorot_normal", ()), ("lecun_uniform", ()), ("lecun_normal", ()),
         ("he_uniform", ()), ("he_normal", ()), ("xavier_uniform", ()), ("kaiming_normal", ()),
         ("variance_scaling", (0.5, "fan_out", "normal")),
         ("variance_scaling", (2.0, "fan_geo_avg", "truncated_normal"))]


@pytest.mark.parametrize("name,args", INITS, ids=[f"{n}{a or ''}" for n, a in INITS])
def test_initializers_match_jax(name, args):
    ours, theirs = getattr(nn.initializers, name), getattr(jax.nn.initializers, name)
    if args is not None:
        ours, theirs = ours(*args), theirs(*args)
    key, xkey = jitviz.random.PRNGKey(3), jax.random.PRNGKey(3)
    for shape, dtype in (((4, 5), None), ((2, 3, 6), np.float32)):
        got = ours(key, shape, dtype) if dtype else ours(key, shape)
        want = theirs(xkey, shape, dtype) if dtype else theirs(xkey, shape)
        assert_like_jax(got, want, rtol=2e-5, atol=2e-6)
    jitted = jitviz.jit(lambda k: ours(k, (4, 5)))(key)
    assert_like_jax(jitted, theirs(xkey, (4, 5)), rtol=2e-5, atol=2e-6)


def test_random_truncated_normal_matches_jax():
    key, xkey = jitviz.random.PRNGKey(0), jax.random.PRNGKey(0)
    for lo, hi in ((-2.0, 2.0), (-1.0, 3.0), (0.5, 0.75)):
        got = jitviz.random.truncated_normal(key, lo, hi, (1000,))
        assert_like_jax(got, jax.random.truncated_normal(xkey, lo, hi, (1000,)),
                        rtol=2e-5, atol=2e-6)
        assert float(jnp.min(got)) > lo and float(jnp.max(got)) < hi


# --- jitviz.scipy.special, jitviz.scipy.stats.norm ---------------------------------------------

import jitviz.scipy  # noqa: E402
import jax.scipy  # noqa: E402


def test_logsumexp_b_return_sign_and_inf_rows_match_jax():
    sp, xsp = jitviz.scipy.special, jax.scipy.special
    a = ROWS
    b = np.array([[1.0, -2.0, 0.5, 0.0], [1.0, 1.0, -1.0, 2.0], [1.0] * 4,
                  [0.0, 1.0, 1.0, 1.0], [-1.0, -1.0, -1.0, -1.0]], np.float32)
    cases = [dict(), dict(axis=1), dict(axis=0, keepdims=True), dict(b=b, axis=1),
             dict(b=b, axis=1, return_sign=True), dict(b=b), dict(b=2.0, axis=-1),
             dict(axis=(0, 1), keepdims=True, return_sign=True)]
    for kw in cases:
        assert_like_jax(sp.logsumexp(a, **kw), xsp.logsumexp(a, **kw), rtol=1e-5)
        assert_like_jax(jitviz.jit(lambda v: sp.logsumexp(v, **kw))(a),
                        xsp.logsumexp(a, **kw), rtol=1e-5)
    ints = np.arange(4, dtype=np.int32)
    assert_like_jax(sp.logsumexp(ints), xsp.logsumexp(ints))  # integers promote to float32
    assert_like_jax(jitviz.grad(lambda v: sp.logsumexp(v, b=b[0]))(a[0]),
                    jax.grad(lambda v: xsp.logsumexp(v, b=b[0]))(a[0]), rtol=1e-5)


X = np.array([-np.inf, -5.0, -1.0, -1e-3, 0.0, 1e-3, 0.3, 0.5, 0.99, 1.0, 2.0, np.inf, np.nan],
             np.float32)
Y = np.array([0.0, 0.0, 1.5, 2.0, 0.0, -0.5, 1e-30, np.nan, 3.0, -1.0, np.inf, 0.5, 2.0],
             np.float32)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["expit", "logit", "entr", "xlogy", "xlog1py", "ndtri"])
def test_special_functions_match_jax(name):
    ours, theirs = getattr(jitviz.scipy.special, name), getattr(jax.scipy.special, name)
    args = (X, Y) if name.startswith("xlog") else (X,)
    assert_like_jax(ours(*args), theirs(*args), rtol=3e-6)
    assert_like_jax(jitviz.jit(ours)(*args), theirs(*args), rtol=3e-6)
    if name != "ndtri":  # (JAX's ndtri refuses integers)
        ints = tuple(np.array([0, 1, 2], np.int32) for _ in args)
        assert_like_jax(ours(*ints), theirs(*ints), rtol=3e-6)
    interior = tuple(np.array([0.2, 0.5, 0.9], np.float32) for _ in args)
    grad = lambda f: (lambda *v: f(*v).sum())  # noqa: E731
    assert_like_jax(jitviz.grad(grad(ours))(*interior), jax.grad(grad(theirs))(*interior),
                    rtol=1e-5)


def test_ndtri_tails_and_float64(x64):
    p = np.array([1e-37, 1e-20, 1e-8, 0.01, 0.1353, 0.5, 0.9, 1 - 1e-7], np.float32)
    assert_like_jax(jitviz.scipy.special.ndtri(p), jax.scipy.special.ndtri(p), rtol=3e-6)
    import scipy.special  # float64 against SciPy (the same Cephes algorithm): JAX is in x32
    p64 = p.astype(np.float64)
    np.testing.assert_allclose(jitviz.scipy.special.ndtri(p64), scipy.special.ndtri(p64),
                               rtol=1e-13)


NORM_X = np.concatenate([np.linspace(-12, 8, 401), [-np.inf, np.inf, np.nan]]).astype(np.float32)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["pdf", "logpdf", "cdf", "logcdf", "ppf"])
def test_norm_matches_jax_in_float32(name):
    ours, theirs = getattr(jitviz.scipy.stats.norm, name), getattr(jax.scipy.stats.norm, name)
    x = NORM_X if name != "ppf" else np.concatenate([np.linspace(0, 1, 201), [1e-30, 1e-8]]
                                                    ).astype(np.float32)
    # cdf in the far left tail is exp(-x^2/2)-small: float32 rounding of x^2 gives ~1e-5
    assert_like_jax(ours(x), theirs(x), rtol=2e-5, atol=1e-37)
    assert_like_jax(ours(x, 1.5, 2.0), theirs(x, 1.5, 2.0), rtol=2e-5, atol=1e-37)
    assert_like_jax(jitviz.jit(ours)(x), theirs(x), rtol=2e-5, atol=1e-37)
    pt = np.float32(0.3)
    assert_like_jax(jitviz.grad(ours)(pt), jax.grad(theirs)(pt), rtol=1e-5)
    assert_like_jax(jitviz.vmap(ours)(x[:5]), jax.vmap(theirs)(x[:5]), rtol=2e-5, atol=1e-37)


def test_norm_cdf_takes_float64_and_erf_is_the_primitive(x64):
    assert jitviz.scipy.stats.norm.cdf(np.ones(2, np.float64)).dtype == np.float64
    assert "erf[" not in str(jitviz.make_jaxpr(jitviz.scipy.special.erf)(np.ones(2)))
    assert "= erf a" in str(jitviz.make_jaxpr(jitviz.scipy.special.erf)(np.ones(2)))


# --- devices, eval_shape, disable_jit -------------------------------------------------------

def test_devices_match_jax_on_cpu():
    assert repr(jitviz.devices()) == repr(jax.devices("cpu")) == "[CpuDevice(id=0)]"
    dev, xdev = jitviz.devices()[0], jax.devices("cpu")[0]
    assert (str(dev), dev.id, dev.platform, dev.device_kind, dev.process_index) == \
        (str(xdev), xdev.id, xdev.platform, xdev.device_kind, xdev.process_index)
    assert jitviz.local_devices() == jitviz.devices("cpu") == [dev]
    assert (jitviz.device_count(), jitviz.local_device_count(), jitviz.process_index(),
            jitviz.process_count()) == (1, 1, 0, 1)
    assert jitviz.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu'"):
        jitviz.devices("gpu")


def test_device_put_get_and_array_placement_match_jax():
    x = np.arange(3, dtype=np.float32)
    ours, theirs = jitviz.device_put(x), jax.device_put(x)
    assert isinstance(ours, jitviz.Array)
    assert_like_jax(ours, theirs)
    assert repr(ours.devices()) == repr(theirs.devices())
    assert str(ours.device) == str(theirs.device) and repr(ours.device) == repr(theirs.device)
    assert repr(ours.sharding) == repr(theirs.sharding)
    assert jitviz.device_put(x, jitviz.devices()[0]).device == jitviz.devices()[0]
    tree = {"a": [1, 2.0], "b": x}
    put, xput = jitviz.device_put(tree), jax.device_put(tree)
    assert [(np.asarray(a).dtype, a.weak_type) for a in jitviz.tree.leaves(put)] == \
        [(np.asarray(b).dtype, b.weak_type) for b in jax.tree.leaves(xput)]
    got, xgot = jitviz.device_get({"a": ours, "n": 1}), jax.device_get({"a": theirs, "n": 1})
    assert type(got["a"]) is type(xgot["a"]) is np.ndarray and got["n"] == xgot["n"] == 1
    out = jitviz.jit(lambda v: v * 2)(x)
    assert out.device == jitviz.devices()[0]
    assert jitviz.block_until_ready({"o": out, "n": 3, "s": None}) == {"o": out, "n": 3, "s": None}


def test_eval_shape_matches_jax():
    def f(a, b, scale=2.0):
        return {"mm": a @ b, "sum": jnp.sum(a) * scale, "n": a.shape[0], "w": b[0] + 1}

    def fx(a, b, scale=2.0):
        return {"mm": a @ b, "sum": xnp.sum(a) * scale, "n": a.shape[0], "w": b[0] + 1}

    args = (jitviz.ShapeDtypeStruct((2, 3), jnp.float32), np.ones((3, 4), np.float32))
    xargs = (jax.ShapeDtypeStruct((2, 3), xnp.float32), np.ones((3, 4), np.float32))
    assert repr(jitviz.eval_shape(f, *args)) == repr(jax.eval_shape(fx, *xargs))
    for fn, xfn in ((lambda: 1.0, lambda: 1.0), (lambda v: v * 2, lambda v: v * 2)):
        a = () if fn.__code__.co_argcount == 0 else (3,)
        assert repr(jitviz.eval_shape(fn, *a)) == repr(jax.eval_shape(xfn, *a))
    s = jitviz.ShapeDtypeStruct((2, 3), jnp.int32)
    assert (repr(s), s.size, s.ndim) == (repr(jax.ShapeDtypeStruct((2, 3), xnp.int32)), 6, 2)
    assert s == jitviz.ShapeDtypeStruct((2, 3), np.int32) and hash(s) == hash(
        jitviz.ShapeDtypeStruct((2, 3), np.int32))


def test_disable_jit_runs_python_each_call_and_jax_config_names():
    calls = []

    @jitviz.jit
    def f(x):
        calls.append(type(x))
        return x * 2

    with jitviz.disable_jit():
        assert float(f(1.5)) == 3.0 and float(f(2.5)) == 5.0
    assert calls == [float, float]  # ran as Python, with the values themselves
    assert float(f(jnp.float32(1.0))) == 2.0 and len(calls) == 3  # traced once
    assert not jitviz.config.disable_jit
    before = jitviz.config.read("jax_enable_x64")
    jitviz.config.update("jax_enable_x64", True)
    try:
        assert jitviz.config.enable_x64 is True
    finally:
        jitviz.config.update("jax_enable_x64", before)


# --- a JAX notebook with only its imports changed -------------------------------------------

NOTEBOOK = '''
def init_mlp(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    return [{"w": nn.initializers.glorot_normal()(k, (m, n), jnp.float32),
             "b": nn.initializers.zeros(k, (n,), jnp.float32)}
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

def predict(params, x):
    for layer in params[:-1]:
        x = nn.gelu(x @ layer["w"] + layer["b"])
    return nn.log_softmax(x @ params[-1]["w"] + params[-1]["b"])

def loss(params, x, labels):
    return -jnp.mean(jnp.sum(predict(params, x) * nn.one_hot(labels, 3), axis=-1))

@jax.jit
def step(params, x, labels):
    value, grads = jax.value_and_grad(loss)(params, x, labels)
    return value, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)

key = random.PRNGKey(0)
key, data_key = random.split(key)
x = random.normal(data_key, (16, 4))
labels = jnp.arange(16) % 3
params = init_mlp(key, [4, 8, 3])
losses = []
for _ in range(3):
    value, params = step(params, x, labels)
    losses.append(value)
per_example = jax.vmap(lambda xi: predict(params, xi[None])[0])(x)
n_params = sum(p.size for p in tree_util.tree_leaves(params))
paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(params)[0]]
shapes = jax.eval_shape(predict, params, jax.ShapeDtypeStruct((5, 4), jnp.float32))
device = repr(jax.devices()[0])
'''


def test_a_jax_notebook_runs_on_jitviz_after_changing_its_imports():
    results = {}
    for name, header in (("jax", "import jax\nimport jax.numpy as jnp\n"
                                 "from jax import lax, random, nn, tree_util\n"),
                         ("jitviz", "import jitviz as jax\nimport jitviz.numpy as jnp\n"
                                    "from jitviz import lax, random, nn, tree_util\n")):
        ns: dict = {}
        exec(compile(header + NOTEBOOK, f"<notebook on {name}>", "exec"), ns)
        results[name] = ns
    ours, theirs = results["jitviz"], results["jax"]
    assert_like_jax(ours["losses"], theirs["losses"], rtol=2e-4)
    assert_like_jax(ours["params"], theirs["params"], rtol=2e-4, atol=1e-6)
    assert_like_jax(ours["per_example"], theirs["per_example"], rtol=2e-4, atol=1e-6)
    assert ours["n_params"] == theirs["n_params"] and ours["paths"] == theirs["paths"]
    assert repr(ours["shapes"]) == repr(theirs["shapes"]) and ours["device"] == theirs["device"]
