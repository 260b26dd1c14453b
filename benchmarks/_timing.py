"""What the benchmark scripts share: interleaved best-of rounds, table formats, and the
wrapper that gives hand-written Numba loops NumPy-allocated outputs."""
from __future__ import annotations

import time

try:  # JAX is optional: its column is left out without it
    import jax
    import jax.numpy as jjnp
    jax.config.update("jax_platforms", "cpu")
except Exception:
    jax = jjnp = None


def block(out):
    """Wait for JAX's asynchronous results (any pytree); other outputs are ready."""
    if jax is not None:
        jax.block_until_ready(out)
    return out


def best_times(fns: dict, args, rounds: int, budget: float, max_calls: int = 1000) -> dict:
    """Interleaved rounds (order rotated each round); per round, as many calls as fit in
    `budget` seconds (at least 1, at most `max_calls`).
    Returns the best per-call time of each implementation, in seconds."""
    per_call = {}
    for name, fn in fns.items():  # warm up, and size the inner loop
        block(fn(*args))
        t = time.perf_counter()
        block(fn(*args))
        per_call[name] = max(time.perf_counter() - t, 1e-7)
    best = {name: float("inf") for name in fns}
    names = list(fns)
    for r in range(rounds):
        # rotate the order: a thread pool still spinning after one implementation (NumPy's
        # and Numba's BLAS are two pools) must not always slow the same next one
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = fns[name]
            n = max(1, min(max_calls, int(budget / per_call[name])))
            t = time.perf_counter()
            for _ in range(n):
                block(fn(*args))
            best[name] = min(best[name], (time.perf_counter() - t) / n)
    return best


def numpy_output(loop):
    """A hand-written Numba loop `loop(x, out)` as a function of x writing into
    np.empty_like(x): NumPy allocates large arrays on huge pages, an array allocated inside a
    Numba function is not, and its page faults alone would cost such a loop 4x."""
    import numpy as np

    def run(x):
        out = np.empty_like(x)
        loop(x, out)
        return out
    return run


def fmt_time(t):
    if t is None:
        return "n/a"
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e6:.1f} us"


def fmt_ratio(a, b):
    return "n/a" if a is None or b is None else f"{a / b:.2f}x"


def print_against_peers(heads, rows):
    """The table bench_math and bench_reductions print: `heads` name the row's label cells;
    each row is (label cells, best times by implementation, agreed with NumPy?)."""
    head = list(heads) + ["jitviz cpu", "NumPy", "jax.jit", "NumPy/jitviz", "jax/jitviz", "ok"]
    lines = []
    for labels, t, ok in rows:
        j = t["jitviz"]
        lines.append(list(labels) + [fmt_time(j), fmt_time(t["numpy"]), fmt_time(t.get("jax")),
                                     fmt_ratio(t["numpy"], j), fmt_ratio(t.get("jax"), j),
                                     "yes" if ok else "NO"])
    print_columns(head, lines)


def print_columns(head, rows):
    """A plain-text table, each column as wide as its widest cell."""
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    sep = "  "
    print(sep.join(h.ljust(w) for h, w in zip(head, widths)))
    print(sep.join("-" * w for w in widths))
    for r in rows:
        print(sep.join(str(c).ljust(w) for c, w in zip(r, widths)))
