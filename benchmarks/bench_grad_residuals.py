"""Where reverse mode computes an elementwise derivative: in the forward pass, keeping it as
the residual (`cos x` for `sin x`, JAX's choice and jitviz's), or in the backward pass from the
kept operand (jitviz's earlier choice). Times jitted `grad` of small models on the CPU backend
both ways, interleaved, best of rounds.

    python benchmarks/bench_grad_residuals.py [--rounds 5] [--budget 0.2]
"""
from __future__ import annotations

import argparse
import contextlib
import warnings

import numpy as np

import jitviz
import jitviz.numpy as jnp
from _timing import best_times
from jitviz.transforms.vjp import VJP_RULES


@contextlib.contextmanager
def derivatives_in_backward_pass():
    """The earlier placement: every elementwise rule computes its partials when the backward
    pass runs it."""
    rules = [r for r in VJP_RULES.values() if getattr(r, "partials_in_forward", False)]
    for r in rules:
        r.partials_in_forward = False
    try:
        yield
    finally:
        for r in rules:
            r.partials_in_forward = True


def models():
    def mlp(ws, x):
        for w in ws:
            x = jnp.sin(w @ x)
        return jnp.sum(x ** 2)

    def gelu_mlp(ws, x):
        for w in ws:
            h = w @ x
            x = 0.5 * h * (1.0 + jnp.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
        return jnp.sum(x)

    def softmax_loss(ws, x):
        logits = ws[0] @ x
        e = jnp.exp(logits - logits.max(axis=0, keepdims=True))
        return -jnp.sum(jnp.log(e / e.sum(axis=0, keepdims=True))[0])
    return {"sin mlp": mlp, "gelu mlp": gelu_mlp, "softmax loss": softmax_loss}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget", type=float, default=0.2)
    ap.add_argument("--size", type=int, default=512)
    args = ap.parse_args()
    warnings.simplefilter("ignore", jitviz.RetraceWarning)  # one jit per model and placement
    rng = np.random.default_rng(0)
    n = args.size
    ws = [(rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32) for _ in range(3)]
    x = rng.standard_normal((n, 64)).astype(np.float32)
    print(f"{'model':<14} {'forward (ms)':>13} {'backward (ms)':>14}")
    for name, model in models().items():
        in_forward = jitviz.jit(jitviz.grad(lambda w, x, m=model: m(w, x)), backend="cpu")
        in_backward = jitviz.jit(jitviz.grad(lambda w, x, m=model: m(w, x)), backend="cpu")
        in_forward(ws, x)
        with derivatives_in_backward_pass():
            in_backward(ws, x)  # traced and compiled with the earlier placement
        np.testing.assert_allclose(in_forward(ws, x)[0], in_backward(ws, x)[0], rtol=1e-4, atol=1e-5)
        t = best_times({"forward": in_forward, "backward": in_backward}, (ws, x), args.rounds,
                       args.budget)
        print(f"{name:<14} {t['forward'] * 1e3:>13.2f} {t['backward'] * 1e3:>14.2f}")


if __name__ == "__main__":
    main()
