"""Writes demo_notebooks/03_speed.ipynb (run it after editing the cells)."""
from notebook_cells import code, md, write_notebook

cells = [
    md("# 03 · Speed: what the compiler does with the whole function\n\n"
       "The tutorials promise that `jit` is faster because the compiler sees the whole "
       "function at once. This notebook reproduces their timing examples on the CPU backend "
       "(Numba) and shows the kernels jitviz generated. Timings depend on the machine; the "
       "README quotes `benchmarks/bench_cpu.py` side by side with NumPy, hand-written Numba, "
       "the memory-copy bound and `jax.jit`."),
    code("import numpy as np\nimport jitviz\nimport jitviz.numpy as jnp\n"
         "from jitviz import jit, lax, random"),
    md("## Fusion: `slow_f`\n`x * x + x * 2.0` is four array operations for NumPy (each "
       "one reads and writes 100 MB). jitviz fuses them into **one** loop over the data."),
    code("def slow_f(x):\n    # Element-wise ops see a large benefit from fusion\n"
         "    return x * x + x * 2.0\n\nx = jnp.ones((5000, 5000))\nfast_f = jit(slow_f)\n"
         "fast_f(x)  # warm-up: trace + compile\n"
         "%timeit -n10 -r3 fast_f(x)\n%timeit -n10 -r3 slow_f(x)"),
    md("The optimizer's stages and the one generated kernel:"),
    code("lowered = fast_f.lower(x)\nfor name, jaxpr in lowered.stages:\n"
         "    print(f'--- {name}: {len(jaxpr.eqns)} equation(s)')\n"
         "print(lowered.as_text())\ncompiled = lowered.compile()\nprint(len(compiled.kernels), "
         "'kernel(s)')\nprint(compiled.kernels[0].source)"),
    md("## SELU on a million elements"),
    code("def selu(x, alpha=1.67, lambda_=1.05):\n"
         "    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)\n\n"
         "x = jnp.arange(1000000, dtype=jnp.float32) / 1e5 - 5\n"
         "%timeit selu(x).block_until_ready()\nselu_jit = jit(selu)\n"
         "selu_jit(x).block_until_ready()  # warm up\n"
         "%timeit selu_jit(x).block_until_ready()\n"
         "np.testing.assert_allclose(selu(x), selu_jit(x), rtol=1e-6, atol=1e-6)"),
    md("## `norm`: reductions and the work that waits on them"),
    code("def norm(X):\n    X = X - X.mean(0)\n    return X / X.std(0)\n\n"
         "norm_compiled = jit(norm)\nnp.random.seed(1701)\n"
         "X = jnp.array(np.random.rand(10000, 10), dtype=jnp.float32)\n"
         "print(np.allclose(norm(X), norm_compiled(X), atol=1E-6))\n"
         "%timeit norm(X).block_until_ready()\n"
         "%timeit norm_compiled(X).block_until_ready()\n"
         "print(len(norm_compiled.lower(X).compile().kernels), 'kernel(s)')"),
    md("## The forward pass: `dot` + ReLU\nThe tutorial compares jitting the two functions "
       "separately with jitting one function that calls both. (Smaller matrices than the "
       "tutorial's 2000×10000 @ 10000×20000, so the notebook runs quickly in CI.) The dot is "
       "NumPy's BLAS either way; the ReLU becomes one fused kernel."),
    code("def apply_activation(x):\n    return jnp.maximum(0.0, x)\n\n"
         "def get_dot_product(W, X):\n    return jnp.dot(W, X)\n\n"
         "def forward_pass(W, X):\n    Z = get_dot_product(W, X)\n"
         "    A = apply_activation(Z)\n    return Z, A\n\n"
         "key = random.PRNGKey(1234)\nW = random.normal(key=key, shape=[200, 1000], "
         "dtype=jnp.float32)\nkey, subkey = random.split(key)\n"
         "X = random.normal(key=subkey, shape=[1000, 2000], dtype=jnp.float32)\n\n"
         "dot_product_jit = jit(get_dot_product)\nactivation_jit = jit(apply_activation)\n"
         "forward_pass_jit = jit(forward_pass)\n"
         "%timeit activation_jit(dot_product_jit(W, X)).block_until_ready()\n"
         "%timeit jitviz.block_until_ready(forward_pass_jit(W, X))\n"
         "print(jitviz.make_jaxpr(forward_pass)(W, X))"),
    md("## When jit is not worth it\nFor a tiny function the fixed cost of a call (checking "
       "the cache key, calling the compiled code) is larger than the work. `%jitbench` "
       "separates the compile from steady state and says when jit pays off — here: never."),
    code("%load_ext jitviz"),
    code("def g(x, n):\n    i = 0\n    while i < n:\n        i += 1\n    return x + i\n\n"
         "g_jit_correct = jit(g, static_argnums=1)\nprint(g_jit_correct(10, 20))\n"
         "%timeit g_jit_correct(10, 20).block_until_ready()\n%timeit g(10, 20)"),
    code("%jitbench -n 2000 -r 3 g_jit_correct(10, 20)"),
    md("## Loops: `lax.fori_loop` compiles to a real loop\nA Python loop is unrolled into the "
       "program (one equation per iteration); `lax.fori_loop` keeps one copy of the body and "
       "the CPU backend emits a real `for` loop."),
    code("@jit\ndef count(x):\n    return lax.fori_loop(0, 200_000, lambda i, c: c * 0.999999 "
         "+ 1.0, x)\n\ncount(jnp.float32(0))\n%timeit count(jnp.float32(0))\n"
         "print(count.lower(jnp.float32(0)).compile().executable.driver_source)"),
    md("## A new shape is a retrace, not a compile\nKernels take their sizes from their "
       "arguments, and so do the Numba functions that hold loops and branches: calling a jitted "
       "function with a new shape of the same rank and dtype retraces it (a few milliseconds) "
       "and reuses every compiled kernel. JAX recompiles with XLA for each new shape."),
    code("import time\n\n@jit\ndef smooth(x, w):\n"
         "    return lax.fori_loop(0, 5, lambda i, c: jnp.tanh(c @ w) + c[::-1] * 0.5, x)\n\n"
         "for n in (64, 96, 128):\n    x, w = jnp.ones(n), jnp.eye(n)\n"
         "    t = time.perf_counter()\n    smooth(x, w)\n"
         "    ms = (time.perf_counter() - t) * 1e3\n"
         "    kernels = smooth.lower(x, w).compile().kernels\n"
         "    print(f'n={n}: first call {ms:.1f} ms;', ', '.join(\n"
         "        f\"{k.name} {'reused' if k.reused else 'compiled'}\" for k in kernels))"),
    md("## Sibling reductions share one loop\n`x.sum()` and `x.max()` both read all of `x` "
       "and neither waits on the other, so fusion puts them in one kernel that reads `x` once."),
    code("def stats(x):\n    return x.sum(), x.max(), x.min()\n\n"
         "x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)\n"
         "stats_jit = jit(stats)\n"
         "print([k.name for k in stats_jit.lower(x).compile().kernels])\n"
         "%timeit stats_jit(x)\n%timeit stats(x)"),
    md("## Asynchronous dispatch\nOn a GPU, JAX (and jitviz's CUDA backend) return before the "
       "work is done, which is why the tutorials time `f(x).block_until_ready()`. On the CPU "
       "backend results are ready when the call returns; `block_until_ready` is kept so the "
       "same code runs everywhere."),
    code("y = fast_f(jnp.ones((1000, 1000)))\ny.block_until_ready() is y"),
]
write_notebook(cells, "demo_notebooks/03_speed.ipynb")
