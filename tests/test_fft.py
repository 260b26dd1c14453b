"""jnp.fft and lax.fft: values, dtypes and shapes against real JAX (and NumPy's pocketfft, the
interpreter's), every backend against the interpreter, JAX's errors, derivatives (the FFT is
linear: its transposes) against JAX, vmap against a loop, and JAX's jaxpr text."""
import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

# written for NumPy 64-bit operands that stay 64-bit (jitviz's keep_float64 switch);
# JAX's own 32-bit narrowing is tests/test_array_promotion.py's
pytestmark = pytest.mark.usefixtures("keep_float64")

jax = pytest.importorskip("jax")
J = jax.numpy

RNG = np.random.default_rng(5)
BACKENDS = ["interpret", "cpu"]
X = RNG.standard_normal((3, 4, 6)).astype(np.float32)
Z = (RNG.standard_normal((3, 4, 6)) + 1j * RNG.standard_normal((3, 4, 6))).astype(np.complex64)

CASES = [
    ("fft", X, {}), ("fft", Z, {"n": 5, "axis": 1, "norm": "ortho"}),
    ("fft", Z, {"n": 9, "axis": 0}), ("ifft", Z, {"norm": "forward"}), ("ifft", X, {}),
    ("rfft", X, {"n": 8}), ("rfft", X, {"axis": 0, "norm": "ortho"}), ("irfft", Z, {}),
    ("irfft", Z, {"n": 7, "axis": 0}), ("irfft", Z, {"norm": "forward"}), ("hfft", Z, {}),
    ("ihfft", X, {"n": 4}), ("fft2", X, {}), ("ifft2", Z, {"s": (3, 3)}),
    ("rfft2", X, {"axes": (0, 2)}), ("irfft2", Z, {}), ("irfft2", Z, {"s": (5, 8)}),
    ("fftn", X, {}), ("fftn", Z, {"axes": (2, 0), "norm": "ortho"}), ("ifftn", Z, {"axes": (0,)}),
    ("rfftn", X, {}), ("rfftn", X, {"s": (2, 3, 7)}), ("irfftn", Z, {"s": (2, 4, 6)}),
    ("irfftn", Z, {"axes": (1, 2)}), ("fftshift", X, {}), ("fftshift", X, {"axes": (0, 2)}),
    ("ifftshift", X, {"axes": 1}), ("fft", np.arange(6, dtype=np.int32), {}),
    ("fftn", RNG.standard_normal((2, 2, 3, 2, 3)).astype(np.float32), {}),
    ("ifftn", Z[None].repeat(2, 0), {}), ("rfftn", RNG.standard_normal((2, 2, 2, 4)).astype(
        np.float32), {}),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,x,kw", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_matches_jax(backend, name, x, kw):
    ours = jitviz.jit(lambda x: getattr(jnp.fft, name)(x, **kw), backend=backend)(x)
    theirs = jax.jit(lambda x: getattr(J.fft, name)(x, **kw))(x)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5)


def test_matches_numpy_in_float64(x64):
    x = RNG.standard_normal((5, 8))
    for ours, ref in [(jnp.fft.fft(x), np.fft.fft(x)), (jnp.fft.irfft(np.fft.rfft(x), 8),
                                                         x),
                      (jnp.fft.rfftn(x, s=(4, 10)), np.fft.rfftn(x, s=(4, 10))),
                      (jnp.fft.ifft2(x, norm="ortho"), np.fft.ifft2(x, norm="ortho"))]:
        assert ours.dtype == ref.dtype
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_frequencies_match_jax():
    for n, d in [(5, 1.0), (8, 0.1), (1, 2.0)]:
        for name in ("fftfreq", "rfftfreq"):
            ours, theirs = getattr(jnp.fft, name)(n, d), getattr(J.fft, name)(n, d)
            assert ours.dtype == theirs.dtype == np.float32
            np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert jnp.fft.fftfreq(4, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="only takes an int"):
        jnp.fft.fftfreq([4])


def test_round_trips():
    x = X.astype(np.float64)
    np.testing.assert_allclose(jnp.fft.ifftn(jnp.fft.fftn(x)).real, x, atol=1e-12)
    np.testing.assert_allclose(jnp.fft.irfftn(jnp.fft.rfftn(x), s=x.shape), x, atol=1e-12)
    np.testing.assert_array_equal(jnp.fft.ifftshift(jnp.fft.fftshift(x)), x)


@pytest.mark.parametrize("call,error,match", [
    (lambda m: m.fft.fft(np.ones(4), n=0), ValueError, "Shape should be positive"),
    (lambda m: m.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1)), ValueError,
     "Shape and axes have different lengths"),
    (lambda m: m.fft.fftn(np.ones((2, 2)), axes=(0, 0)), ValueError, "repeated axes"),
    (lambda m: m.fft.fft(np.ones(4), norm="x"), ValueError, "Invalid norm value x"),
    (lambda m: m.fft.fft2(np.ones((2, 2, 2)), axes=(0, 1, 2)), ValueError,
     "only supports 2 axes"),
    (lambda m: m.fft.fft(np.ones(4), axis=(0,)), ValueError, "does not support multiple axes"),
    (lambda m: m.fft.rfft(np.ones(4, np.complex64)), (ValueError, TypeError), ""),
    (lambda m: m.fft.rfft(np.ones(4, np.float16)), ValueError,
     "RFFT input must be float32 or float64, got float16"),
])
def test_bad_input_raises_jax_s_error(call, error, match):
    with pytest.raises(error, match=match):
        call(jnp)
    with pytest.raises(error):
        call(J)


def test_lax_fft_checks_its_lengths():
    with pytest.raises(ValueError, match="must equal fft_lengths"):
        lax.fft(Z, "FFT", (5,))
    with pytest.raises(ValueError, match="1 to 3 trailing axes"):
        lax.fft(Z[None], lax.FftType.FFT, (1, 3, 4, 6))
    out = lax.fft(Z, lax.FftType.IFFT, (4, 6))
    np.testing.assert_allclose(out, np.fft.ifftn(Z, axes=(1, 2)), rtol=1e-5, atol=1e-6)


def test_jaxpr_prints_as_jax():
    text = str(jitviz.make_jaxpr(lambda x: jnp.fft.rfft(x))(X))
    assert "b:c64[3,4,4] = fft[fft_lengths=(6,) fft_type=2] a" in text
    text = str(jitviz.make_jaxpr(lambda x: jnp.fft.fft(x))(np.ones(3, np.int32)))
    assert "convert_element_type[new_dtype=complex64 weak_type=False]" in text
    assert "fft[fft_lengths=(3,) fft_type=0]" in text
    jax_text = str(jax.make_jaxpr(lambda x: J.fft.rfft(x))(X))
    assert "fft[fft_lengths=(6,) fft_type=2]" in jax_text


# --- derivatives and vmap ----------------------------------------------------------------------

def _power(m, spectrum):
    return (m.real(spectrum) ** 2 + m.imag(spectrum) ** 2 * 0.5).sum()


GRADS = {
    "fft": lambda m, x: _power(m, m.fft.fft(x * (1 + x))),
    "ifft2": lambda m, x: _power(m, m.fft.ifft2(x, s=(5, 4), norm="ortho")),
    "rfft": lambda m, x: _power(m, m.fft.rfft(x, n=7)),
    "rfftn": lambda m, x: _power(m, m.fft.rfftn(x, axes=(0, 2))),
    "irfft": lambda m, x: (m.fft.irfft(m.fft.rfft(x) * np.arange(4) ** 0.5, n=6) ** 3).sum(),
    "irfft_odd": lambda m, x: (m.fft.irfft(m.fft.fft(x)[..., :4], n=7) ** 2).sum(),
    "irfftn": lambda m, x: (m.fft.irfftn(m.fft.rfftn(x) * (1 + 1j)) * x).sum(),
    "hfft": lambda m, x: (m.fft.hfft(m.fft.fft(x)) ** 2).sum(),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_jax(name):
    f = GRADS[name]
    ours = jitviz.jit(jitviz.grad(lambda x: f(jnp, x)))(X)
    theirs = jax.grad(lambda x: f(J, x))(X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_forward_mode_matches_jax():
    t = RNG.standard_normal(X.shape).astype(np.float32)
    for f in (lambda m, x: m.fft.rfft2(x), lambda m, x: m.fft.irfft(m.fft.fft(x))):
        _, ours = jitviz.jvp(lambda x: f(jnp, x), (X,), (t,))
        _, theirs = jax.jvp(lambda x: f(J, x), (X,), (t,))
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("f,x", [(lambda x: jnp.fft.fft(x), Z), (lambda x: jnp.fft.rfft2(x), X),
                                 (lambda x: jnp.fft.irfft(x, n=5), Z),
                                 (lambda x: jnp.fft.fftshift(x), X),
                                 (lambda x: jnp.fft.ifftn(x, axes=(0,)), Z)])
def test_vmap_matches_a_loop(f, x):
    got = jitviz.vmap(f, in_axes=1)(x)
    want = np.stack([np.asarray(f(x[:, i])) for i in range(x.shape[1])])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
