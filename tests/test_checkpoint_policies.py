"""Checkpoint policies in reverse mode, checkpoint_name and print_saved_residuals: a policy
decides which of a checkpointed function's intermediates the forward pass saves, the backward
pass recomputes the rest, values and gradients never change, and the saved residuals are
JAX's (compared with real JAX's print_saved_residuals where it is installed)."""
import contextlib
import io
import math

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals

cp = jitviz.checkpoint_policies

# The notebooks' three-layer network, compiled under one file name for both libraries so the
# `file:line:column (function)` of each residual can be compared as text.
NETWORK = '''
def g(W, x):
  y = jnp.dot(W, x)
  return jnp.sin(y)

def f(W1, W2, W3, x):
  x = g(W1, x)
  x = g(W2, x)
  x = g(W3, x)
  return x

def f2(W1, W2, W3, x):
  x = checkpoint(g)(W1, x)
  x = checkpoint(g)(W2, x)
  x = checkpoint(g)(W3, x)
  return x

def f4(W1, W2, W3, x):
  x = checkpoint_name(g(W1, x), name='a')
  x = checkpoint_name(g(W2, x), name='b')
  x = checkpoint_name(g(W3, x), name='c')
  return x

def loss(params, x, y):
  return jnp.sum((predict(params, x) - y) ** 2)

def predict(params, x):
  *Ws, Wlast = params
  for i, W in enumerate(Ws):
    x = jnp.sin(jnp.dot(W, x))
    x = checkpoint_name(x, name=f'layer{i}_output')
  return jnp.dot(Wlast, x)

def h(a, b):
  return jnp.sin(a) + b * 2.0

def chain(x):
  for _ in range(6):
    x = jnp.sin(x)
  return x

def recursive(funs):
  if len(funs) == 1:
    return funs[0]
  if len(funs) == 2:
    return lambda x: funs[0](funs[1](x))
  f1, f2 = recursive(funs[:len(funs) // 2]), recursive(funs[len(funs) // 2:])
  return lambda x: f1(checkpoint(f2)(x))

recursive8 = recursive([jnp.sin] * 8)
'''

W1 = np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)
W2 = np.linspace(1, -0.5, 30, dtype=np.float32).reshape(6, 5)
W3 = np.linspace(-0.3, 0.7, 42, dtype=np.float32).reshape(7, 6)
X = np.linspace(0.1, 0.9, 4, dtype=np.float32)
ARGS = (W1, W2, W3, X)
PARAMS = [np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4) * k for k in (1, 0.5, 2)]


def _network(jax_module, numpy_module, checkpoint_name_fn):
    namespace = {"jnp": numpy_module, "checkpoint": jax_module.checkpoint,
                 "checkpoint_name": checkpoint_name_fn}
    exec(compile(NETWORK, "<network>", "exec"), namespace)
    return namespace


OURS = _network(jitviz, jnp, checkpoint_name)


def _policies(policies):
    """The policy cases (name, policy, function name, args) for one library's policies."""
    return [
        ("no policy", None, "f", ARGS),
        ("nothing_saveable", policies.nothing_saveable, "f", ARGS),
        ("dots_saveable", policies.dots_saveable, "f", ARGS),
        ("checkpoint_dots", policies.checkpoint_dots, "f", ARGS),
        ("dots_with_no_batch_dims_saveable", policies.dots_with_no_batch_dims_saveable,
         "f", ARGS),
        ("save_only_these_names", policies.save_only_these_names("a"), "f4", ARGS),
        ("save_only_these_names, two", policies.save_only_these_names("a", "c"), "f4", ARGS),
        ("save_any_names_but_these", policies.save_any_names_but_these("a"), "f4", ARGS),
        ("save_from_both_policies", policies.save_from_both_policies(
            policies.dots_saveable, policies.save_only_these_names("b")), "f4", ARGS),
        ("names in a pytree-argument function",
         policies.save_any_names_but_these("layer1_output"), "loss", (PARAMS, X, X)),
    ]


POLICY_CASES = _policies(cp)
CASE_IDS = [c[0] for c in POLICY_CASES]
# the offloading policies save what JAX moves to host memory (a deliberate difference:
# tests/test_deliberate_differences.py); their values and gradients are tested here
OFFLOADING = [
    ("offload_dot_with_no_batch_dims",
     cp.offload_dot_with_no_batch_dims("device", "pinned_host"), "f", ARGS),
    ("save_and_offload_only_these_names", cp.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
        offload_src="device", offload_dst="pinned_host"), "f4", ARGS),
]


def _printed(fn, *args, **kwargs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(fn, *args, **kwargs)
    return out.getvalue()


def _jax_printed(fn, *args, **kwargs):
    from jax.ad_checkpoint import print_saved_residuals as jax_print
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        jax_print(fn, *args, **kwargs)
    return out.getvalue()


@pytest.fixture(scope="module")
def jax_network():
    jax = pytest.importorskip("jax")
    from jax.ad_checkpoint import checkpoint_name as jax_name
    return jax, _network(jax, jax.numpy, jax_name)


# --- the residuals are JAX's ---------------------------------------------------------------

@pytest.mark.parametrize("index", range(len(POLICY_CASES)), ids=CASE_IDS)
def test_saved_residuals_are_jax_s_under_every_policy(index, jax_network):
    jax, theirs = jax_network
    _, policy, name, args = POLICY_CASES[index]
    _, jax_policy, _, _ = _policies(jax.checkpoint_policies)[index]
    ours = _printed(jitviz.checkpoint(OURS[name], policy=policy), *args)
    want = _jax_printed(jax.checkpoint(theirs[name], policy=jax_policy), *args)
    assert ours == want


@pytest.mark.parametrize("name, args", [
    ("f", ARGS), ("f4", ARGS), ("loss", (PARAMS, X, X)), ("chain", (np.float32(3),)),
    ("recursive8", (np.float32(3),))])
def test_without_a_policy_the_residuals_are_jax_s(name, args, jax_network):
    """Elementwise derivatives are computed in the forward pass and kept, as JAX keeps them
    (`cos x` for `sin x`, not `x`); checkpointed parts keep only their inputs."""
    jax, theirs = jax_network
    assert _printed(OURS[name], *args) == _jax_printed(theirs[name], *args)


def test_partials_of_constant_operands_are_not_computed():
    """The forward pass computes an elementwise partial only for differentiated operands:
    x ** c differentiated in x alone has no log(x) (its partial in c) anywhere."""
    c = np.full(4, 2.5, np.float32)
    closed = jitviz.make_jaxpr(jitviz.grad(lambda x, c: jnp.sum(x ** c)))(X, c)
    forward = [e for e in closed.jaxpr.eqns if e.params.get("name") == "forward(<lambda>)"][0]
    names = [e.primitive.name for e in forward.params["jaxpr"].jaxpr.eqns]
    assert "pow" in names and "log" not in names
    np.testing.assert_allclose(jitviz.grad(lambda x, c: jnp.sum(x ** c))(X, c),
                               2.5 * X ** 1.5, rtol=1e-5)


def test_inputs_of_checkpointed_calls_are_the_residuals(jax_network):
    """The notebooks' f2: each layer checkpointed, so only the layers' inputs are kept (the
    sin outputs feeding the next layer)."""
    jax, theirs = jax_network
    ours = _printed(OURS["f2"], *ARGS)
    assert ours == _jax_printed(theirs["f2"], *ARGS)
    assert "output of sin from <network>:4:9 (g)" in ours and "cos" not in ours


def test_a_residual_nobody_reads_is_not_kept(jax_network):
    """`b * 2.0`'s cotangent for the constant would read `b`; nobody takes it, so `b` is not
    a residual (JAX keeps only `a`, for cos)."""
    jax, theirs = jax_network
    assert _printed(jitviz.checkpoint(OURS["h"]), X, X) == "f32[4] from the argument a\n"
    outer = _printed(lambda a, b: jitviz.checkpoint(OURS["h"])(a, b) * a, X, X)
    assert outer == _jax_printed(lambda a, b: jax.checkpoint(theirs["h"])(a, b) * a, X, X)


def test_argument_names_follow_jax_s(jax_network):
    jax, _ = jax_network

    def star(p, *rest, **kw):
        return jnp.sum((p[0] * rest[1][1]) * (rest[0] * kw["z"]))

    def jax_star(p, *rest, **kw):
        return jax.numpy.sum((p[0] * rest[1][1]) * (rest[0] * kw["z"]))
    args = ([W1, W1], X[0], (X[:4], W1 * 2))
    ours = _printed(star, *args, z=np.float32(3)).splitlines()
    want = _jax_printed(jax_star, *args, z=np.float32(3)).splitlines()
    arguments = [line for line in ours if " from the argument " in line]
    assert arguments == [line for line in want if " from the argument " in line]
    assert [line.split(" from ")[1] for line in arguments] == [
        "the argument p[0]", "the argument rest[0]", "the argument rest[1][1]",
        "the argument kw['z']"]


def test_the_function_is_named_by_its_qualified_name(jax_network):
    jax, _ = jax_network

    def layer(w, x):
        return jnp.sin(jnp.dot(w, x))

    def jax_layer(w, x):
        return jax.numpy.sin(jax.numpy.dot(w, x))
    ours = _printed(jitviz.checkpoint(layer, policy=cp.dots_saveable), W1, X)
    want = _jax_printed(jax.checkpoint(jax_layer, policy=jax.checkpoint_policies.dots_saveable),
                        W1, X)
    assert ours.splitlines()[-1].endswith(
        "(test_the_function_is_named_by_its_qualified_name.<locals>.layer)")
    assert want.splitlines()[-1].endswith(
        "(test_the_function_is_named_by_its_qualified_name.<locals>.jax_layer)")


def test_saved_residuals_returns_avals_and_descriptions():
    found = saved_residuals(jitviz.checkpoint(OURS["f"], policy=cp.dots_saveable), *ARGS)
    assert [str(a.str_short()) for a, _ in found] == \
        ["f32[5,4]", "f32[6,5]", "f32[7,6]", "f32[4]", "f32[5]", "f32[6]", "f32[7]"]
    assert found[4][1] == "output of dot_general from <network>:3:6 (g)"


# --- values and gradients never change --------------------------------------------------------

def _plain_loss(name):
    return lambda *a: jnp.sum(OURS[name](*a) ** 2)


@pytest.mark.parametrize("case", POLICY_CASES + OFFLOADING,
                         ids=CASE_IDS + [c[0] for c in OFFLOADING])
@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_gradients_are_those_without_checkpoint(case, backend):
    _, policy, name, args = case
    fn = OURS[name]
    remat = jitviz.checkpoint(fn, policy=policy)
    argnums = tuple(range(len(args)))
    got = jitviz.jit(jitviz.value_and_grad(lambda *a: jnp.sum(remat(*a) ** 2), argnums),
                     backend=backend)(*args)
    want = jitviz.jit(jitviz.value_and_grad(lambda *a: jnp.sum(fn(*a) ** 2), argnums),
                      backend=backend)(*args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    for a, b in zip(jitviz.tree_util.tree_leaves(got[1]), jitviz.tree_util.tree_leaves(want[1])):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


def test_gradient_against_finite_differences():
    remat = jitviz.checkpoint(OURS["f4"], policy=cp.save_only_these_names("b"))
    scalar = lambda x: float(jnp.sum(remat(W1, W2, W3, x)))  # noqa: E731
    grad = np.asarray(jitviz.grad(lambda x: jnp.sum(remat(W1, W2, W3, x)))(X))
    x64 = X.astype(np.float64)
    eps = 1e-3
    for i in range(len(X)):
        up, down = x64.copy(), x64.copy()
        up[i] += eps
        down[i] -= eps
        fd = (scalar(up.astype(np.float32)) - scalar(down.astype(np.float32))) / (2 * eps)
        assert math.isclose(grad[i], fd, rel_tol=2e-2, abs_tol=2e-3)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_a_policy_in_a_scan_body_and_nested_checkpoints(backend):
    """The notebooks' idiom: a checkpointed scan step saving its named pre-activation; and a
    checkpoint with a policy inside another."""
    def step(c, w):
        pre = checkpoint_name(jnp.dot(c, w) + 0.5, "preactivation")
        return jnp.maximum(pre, 0.0), None
    ws = np.stack([PARAMS[0], PARAMS[1]])
    remat = jitviz.checkpoint(step, policy=cp.save_only_these_names("preactivation"))

    def net(ws, x, body):
        return jnp.sum(lax.scan(body, x, ws)[0])
    got = jitviz.jit(jitviz.grad(lambda w, x: net(w, x, remat), (0, 1)), backend=backend)(
        ws, X)
    want = jitviz.jit(jitviz.grad(lambda w, x: net(w, x, step), (0, 1)), backend=backend)(
        ws, X)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)

    inner = jitviz.checkpoint(OURS["g"], policy=cp.dots_saveable)
    outer = jitviz.checkpoint(lambda w, x: jnp.sin(inner(w, x)).sum(),
                              policy=cp.everything_saveable)
    got = jitviz.jit(jitviz.grad(outer, (0, 1)), backend=backend)(W1, X)
    want = jitviz.jit(jitviz.grad(lambda w, x: jnp.sin(OURS["g"](w, x)).sum(), (0, 1)),
                      backend=backend)(W1, X)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_gradients_match_jax_under_policies(jax_network):
    jax, theirs = jax_network
    for (_, policy, name, args), (_, jpolicy, _, _) in zip(
            POLICY_CASES, _policies(jax.checkpoint_policies)):
        ours = jitviz.grad(lambda *a: jnp.sum(jitviz.checkpoint(OURS[name], policy=policy)(
            *a) ** 2))(*args)
        want = jax.grad(lambda *a: jax.numpy.sum(jax.checkpoint(theirs[name], policy=jpolicy)(
            *a) ** 2))(*args)
        for a, b in zip(jitviz.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, np.asarray(b), rtol=2e-5, atol=1e-6)


# --- what the backward pass recomputes ---------------------------------------------------------

def _backward_call(fn, *args):
    """The remat2[differentiated=True] equation of grad(sum of fn) in every argument."""
    argnums = tuple(range(len(args)))
    closed = jitviz.make_jaxpr(jitviz.grad(lambda *a: jnp.sum(fn(*a)), argnums))(*args)

    def find(jaxpr):
        for e in jaxpr.eqns:
            if e.primitive.name == "remat2" and e.params["differentiated"]:
                return [e]
            found = [hit for p in e.params.values()
                     if hasattr(getattr(p, "jaxpr", None), "eqns") for hit in find(p.jaxpr)]
            if found:
                return found
        return []
    (call,) = find(closed.jaxpr)
    return call


def _count(call, name):
    return sum(e.primitive.name == name for e in call.params["jaxpr"].jaxpr.eqns)


def test_the_policy_decides_what_the_backward_pass_recomputes():
    g = OURS["g"]
    # no policy: the product W @ x is recomputed (for sin's derivative), then transposed
    # twice (the cotangents of W and x)
    call = _backward_call(jitviz.checkpoint(g), W1, X)
    assert _count(call, "dot_general") == 3
    assert [v.aval.shape for v in call.invars] == [(5, 4), (4,), (5,)]  # W, x, cotangent
    # dots saved: the product is an operand of the backward call, only the transposes remain
    call = _backward_call(jitviz.checkpoint(g, policy=cp.dots_saveable), W1, X)
    assert _count(call, "dot_general") == 2
    assert [v.aval.shape for v in call.invars] == [(5, 4), (4,), (5,), (5,)]
    # a policy saving nothing the backward pass reads recomputes as no policy does
    call = _backward_call(jitviz.checkpoint(g, policy=cp.save_only_these_names("a")), W1, X)
    assert _count(call, "dot_general") == 3


# --- checkpoint_name ------------------------------------------------------------------------

def test_checkpoint_name_is_the_identity_and_prints_as_jax_s():
    text = str(jitviz.make_jaxpr(lambda x: checkpoint_name(x * 2.0, "a"))(X))
    assert "= name[name=a] " in text
    np.testing.assert_array_equal(checkpoint_name(X, "a"), X)
    tree = checkpoint_name({"w": X, "b": (X[0],)}, "p")
    np.testing.assert_array_equal(tree["w"], X)
    np.testing.assert_array_equal(tree["b"][0], X[0])
    with pytest.raises(TypeError, match="name must be a string"):
        checkpoint_name(X, 3)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_checkpoint_name_under_every_transformation(backend):
    fn = lambda x: jnp.sin(checkpoint_name(jnp.exp(x), "e"))  # noqa: E731
    plain = lambda x: jnp.sin(jnp.exp(x))  # noqa: E731
    np.testing.assert_allclose(jitviz.jit(fn, backend=backend)(X), np.sin(np.exp(X)),
                               rtol=1e-6)
    for transform in (lambda f: jitviz.grad(lambda x: f(x).sum()),
                      lambda f: jitviz.vmap(f),
                      lambda f: lambda x: jitviz.jvp(f, (x,), (jnp.ones_like(x),))[1]):
        np.testing.assert_allclose(jitviz.jit(transform(fn), backend=backend)(X),
                                   jitviz.jit(transform(plain), backend=backend)(X),
                                   rtol=1e-6)


def test_policies_take_names_as_strings():
    with pytest.raises(TypeError, match="save_only_these_names: names are strings"):
        cp.save_only_these_names(["a"])


# --- config ---------------------------------------------------------------------------------

def test_jax_implementation_switches_are_accepted_and_recorded():
    before = jitviz.config.remat3
    try:
        jitviz.config.update("jax_remat3", True)
        assert jitviz.config.remat3 is True and jitviz.config.read("jax_remat3") is True
        g = jitviz.grad(lambda x: jitviz.checkpoint(jnp.sin)(x).sum())(X)
        np.testing.assert_allclose(g, np.cos(X), rtol=1e-6)
    finally:
        jitviz.config.update("jax_remat3", before)
    with pytest.raises(ValueError, match="jax_remat3 .* takes True or False"):
        jitviz.config.update("jax_remat3", "yes")
    with pytest.raises(AttributeError, match="no option 'jax_remat9'; known options: .*remat3"):
        jitviz.config.update("jax_remat9", True)
