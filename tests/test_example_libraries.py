"""`jitviz.example_libraries.optimizers` and `.stax`: JAX's example libraries, checked value
for value against real JAX where it is installed, and on their own (schedules, shapes with an
unknown batch size, errors, a jitted training loop that learns) everywhere."""
import importlib.util
import pickle

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import random
from jitviz.example_libraries import optimizers, stax

HAS_JAX = importlib.util.find_spec("jax") is not None
needs_jax = pytest.mark.skipif(not HAS_JAX, reason="needs JAX (pip install -e '.[jax]')")

OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "momentum": lambda o: o.momentum(0.1, 0.9),
    "nesterov": lambda o: o.nesterov(0.1, 0.9),
    "adagrad": lambda o: o.adagrad(0.1),
    "rmsprop": lambda o: o.rmsprop(0.05),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.05),
    "adam": lambda o: o.adam(0.05),
    "adamax": lambda o: o.adamax(0.05),
    "sm3": lambda o: o.sm3(0.1),
    "adam+exponential_decay": lambda o: o.adam(o.exponential_decay(0.1, 10, 0.5)),
    "sgd+inverse_time_decay": lambda o: o.sgd(o.inverse_time_decay(0.1, 3, 0.5, True)),
    "sgd+polynomial_decay": lambda o: o.sgd(o.polynomial_decay(0.1, 4, 0.01, 2.0)),
    "sgd+piecewise_constant": lambda o: o.sgd(o.piecewise_constant([2, 4], [0.1, 0.05, 0.01])),
}


def _params(np_module):
    return {"w": np_module.asarray(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)),
            "b": np_module.asarray(np.float32(0.5)), "v": [np_module.ones(4, np.float32)]}


def _run(lib, opt, steps=6, jit=True):
    """Minimise sum((p - 0.3)^2) over a pytree with lib's grad (and jit); the params after
    each step."""
    np_module = lib.numpy
    init, update, get_params = opt
    loss = lambda p: sum(np_module.sum((x - 0.3) ** 2) for x in lib.tree_util.tree_leaves(p))
    step = lambda i, s: update(i, lib.grad(loss)(get_params(s)), s)  # noqa: E731
    step = lib.jit(step) if jit else step
    state, out = init(_params(np_module)), []
    for i in range(steps):
        state = step(i, state)
        out.append([np.asarray(x) for x in lib.tree_util.tree_leaves(get_params(state))])
    return out


@needs_jax
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_each_optimizer_takes_jaxs_steps(name):
    import jax
    from jax.example_libraries import optimizers as jax_optimizers
    ours = _run(jitviz, OPTIMIZERS[name](optimizers))
    # JAX's sm3 keeps the parameter's shape as integer state leaves, which jit traces (and
    # its reshape then refuses): compare with JAX op by op there; jitviz's runs under jit
    theirs = _run(jax, OPTIMIZERS[name](jax_optimizers), jit=name != "sm3")
    for a, b in zip(ours, theirs):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_allclose(x, y, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_each_optimizer_descends_under_jit(name):
    steps = _run(jitviz, OPTIMIZERS[name](optimizers), steps=25)
    distance = [sum(float(np.sum((x - 0.3) ** 2)) for x in leaves) for leaves in steps]
    assert distance[-1] < 0.5 * distance[0]


def test_schedules_give_their_formulas():
    assert optimizers.constant(0.2)(7) == 0.2
    assert float(optimizers.exponential_decay(1.0, 10, 0.5)(20)) == pytest.approx(0.25)
    assert float(optimizers.inverse_time_decay(1.0, 2, 1.0)(3)) == pytest.approx(1 / 2.5)
    assert float(optimizers.inverse_time_decay(1.0, 2, 1.0, staircase=True)(3)) == 0.5
    poly = optimizers.polynomial_decay(1.0, 4, 0.0, power=2.0)
    assert [float(poly(i)) for i in (0, 2, 4, 9)] == [1.0, 0.25, 0.0, 0.0]
    pc = optimizers.piecewise_constant([2, 4], [3.0, 2.0, 1.0])
    assert [float(pc(i)) for i in (0, 2, 3, 4, 5)] == [3.0, 3.0, 2.0, 2.0, 1.0]
    with pytest.raises(ValueError, match="one more entry"):
        optimizers.piecewise_constant([2, 4], [1.0, 2.0])
    with pytest.raises(TypeError, match="step size"):
        optimizers.make_schedule("fast")


def test_state_unpacks_to_plain_containers_that_pickle_and_pack_back():
    init, update, get_params = optimizers.adam(0.1)
    state = update(0, _params(jnp), init(_params(jnp)))
    restored = optimizers.pack_optimizer_state(
        pickle.loads(pickle.dumps(optimizers.unpack_optimizer_state(state))))
    assert restored.tree_def == state.tree_def
    for a, b in zip(jitviz.tree.tree_leaves(restored), jitviz.tree.tree_leaves(state)):
        np.testing.assert_array_equal(a, b)


def test_a_gradient_of_another_structure_is_refused_by_name():
    init, update, _ = optimizers.sgd(0.1)
    with pytest.raises(TypeError, match="structure of the parameters"):
        update(0, {"w": jnp.ones((2, 3))}, init(_params(jnp)))


def test_clip_grads_bounds_the_joint_norm():
    grads = {"a": jnp.array([3.0, 0.0]), "b": jnp.array([[0.0, 4.0]])}
    assert float(optimizers.l2_norm(grads)) == pytest.approx(5.0)
    clipped = optimizers.clip_grads(grads, 1.0)
    assert float(optimizers.l2_norm(clipped)) == pytest.approx(1.0)
    assert float(optimizers.l2_norm(optimizers.clip_grads(grads, 10.0))) == pytest.approx(5.0)


# --- stax ---------------------------------------------------------------------------------

def _mlp(s):
    return s.serial(s.Dense(16), s.Relu, s.Dense(8), s.Tanh, s.Dense(3), s.LogSoftmax)


def _cnn(s):
    return s.serial(s.Conv(4, (3, 3), padding="SAME"), s.BatchNorm(), s.Relu,
                    s.MaxPool((2, 2), strides=(2, 2)), s.Conv(6, (2, 2)), s.Elu,
                    s.AvgPool((2, 2), padding="SAME"), s.SumPool((1, 1)), s.Flatten,
                    s.Dense(5), s.Softmax)


def _branches(s):
    return s.serial(s.Dense(6), s.FanOut(3),
                    s.parallel(s.Dense(4), s.serial(s.Sigmoid, s.Dense(4)), s.Identity),
                    s.parallel(s.Identity, s.Softplus, s.Dense(4)), s.FanInConcat(),
                    s.Dense(5), s.FanOut(2), s.parallel(s.Gelu, s.Selu), s.FanInSum,
                    s.LeakyRelu, s.Exp)


def _transposed(s):
    return s.serial(s.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"), s.Relu,
                    s.ConvTranspose(2, (2, 2)), s.Flatten)


MODELS = {"mlp": (_mlp, (-1, 7), (5, 7)), "cnn": (_cnn, (-1, 8, 8, 2), (3, 8, 8, 2)),
          "branches": (_branches, (-1, 5), (4, 5)),
          "transposed": (_transposed, (-1, 4, 4, 2), (2, 4, 4, 2))}


def _init_and_apply(lib, s, name):
    make, shape, batch = MODELS[name]
    init_fun, apply_fun = make(s)
    out_shape, params = init_fun(lib.random.PRNGKey(3), shape)
    x = np.random.default_rng(0).normal(size=batch).astype(np.float32)
    return out_shape, params, np.asarray(lib.jit(apply_fun)(params, x))


@needs_jax
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_stax_model_has_jaxs_shapes_parameters_and_outputs(name):
    import jax
    from jax.example_libraries import stax as jax_stax
    ours = _init_and_apply(jitviz, stax, name)
    theirs = _init_and_apply(jax, jax_stax, name)
    assert tuple(ours[0]) == tuple(theirs[0])
    leaves_a, leaves_b = jitviz.tree.tree_leaves(ours[1]), jax.tree_util.tree_leaves(theirs[1])
    assert len(leaves_a) == len(leaves_b)
    for a, b in zip(leaves_a, leaves_b):  # the same key draws the same initial parameters
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=2e-4, atol=1e-5)


def test_an_unknown_batch_size_stays_unknown_except_after_pooling_as_in_jax():
    assert _mlp(stax)[0](random.PRNGKey(0), (-1, 7))[0] == (-1, 3)
    assert _cnn(stax)[0](random.PRNGKey(0), (-1, 8, 8, 2))[0] == (0, 5)  # JAX's formula
    conv_shape = stax.Conv(4, (3, 3), strides=(2, 2))[0](random.PRNGKey(0), (-1, 9, 9, 1))[0]
    assert conv_shape == (-1, 4, 4, 4)
    assert stax.MaxPool((3, 3))[0](random.PRNGKey(0), (-1, 7, 7, 2))[0] == (0, 5, 5, 2)
    assert stax.MaxPool((3, 3))[0](random.PRNGKey(0), (4, 7, 7, 2))[0] == (4, 5, 5, 2)
    assert stax.FanInConcat(1)[0](None, [(-1, 2, 3), (-1, 4, 3)])[0] == (-1, 6, 3)


def test_dropout_keeps_with_probability_rate_and_needs_a_key():
    init_fun, apply_fun = stax.Dropout(0.75)
    x = jnp.ones((200, 50))
    out = np.asarray(apply_fun((), x, rng=random.PRNGKey(1)))
    kept = out != 0
    assert 0.7 < kept.mean() < 0.8  # JAX's meaning: rate is the keep probability
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    with pytest.raises(ValueError, match="PRNG key"):
        apply_fun((), x)
    assert stax.Dropout(0.5, mode="test")[1]((), x, rng=random.PRNGKey(0)) is x  # as JAX


def test_a_stax_classifier_learns_with_an_optimizer_under_jit():
    init_fun, apply_fun = _mlp(stax)
    _, params = init_fun(random.PRNGKey(0), (-1, 7))
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 7)).astype(np.float32)
    labels = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0.5)
    onehot = jnp.eye(3)[labels]
    loss = lambda p: -jnp.mean(jnp.sum(apply_fun(p, x) * onehot, axis=-1))  # noqa: E731
    opt_init, opt_update, get_params = optimizers.adam(0.02)
    step = jitviz.jit(lambda i, s: opt_update(i, jitviz.grad(loss)(get_params(s)), s))
    state = opt_init(params)
    first = float(loss(get_params(state)))
    for i in range(60):
        state = step(i, state)
    assert float(loss(get_params(state))) < 0.5 * first
    assert step.cache_info().misses == 1  # the step index is traced: one compile
