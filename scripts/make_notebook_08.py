"""Writes demo_notebooks/08_a_jax_notebook.ipynb (run it after editing the cells).

The notebook is written for JAX; only its import cell names jitviz. `tests/test_jax_notebook.py`
runs it cell by cell under real JAX (the imports swapped back) and under jitviz and requires the
same output from every cell, except the ones marked `# jitviz only`."""
from notebook_cells import code, md, write_notebook

cells = [
    md("# 08 · A JAX notebook, unchanged but for its imports\n\n"
       "Everything below is ordinary JAX code: arrays, `.at` updates, counter-based random "
       "numbers, pytrees of parameters, `grad`, `jit`, `vmap`, `lax.scan` and a small "
       "training loop. The only lines that differ from the JAX version of this notebook are "
       "the imports in the next cell, which read\n\n"
       "```python\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax, random\n```\n\n"
       "in JAX. `tests/test_jax_notebook.py` runs this notebook both ways and checks that "
       "every cell prints the same thing. The cells marked `# jitviz only` at the end show "
       "what jitviz adds: the programs, the kernels and why anything recompiled."),
    code("import numpy as np\nimport jitviz as jax\nimport jitviz.numpy as jnp\n"
         "from jitviz import lax, random"),
    md("## Arrays are immutable; `.at` makes updated copies\n"
       "Types follow JAX's rules: a Python scalar is weakly typed and takes the array's "
       "dtype."),
    code("x = jnp.arange(5.0)\ny = x.at[2].set(10.0).at[0].add(-1.0)\nprint(x)\nprint(y)\n"
         "print((x * 2).dtype, (jnp.arange(3) + 1).dtype)"),
    code("try:\n    x[0] = 1.0\nexcept TypeError as e:\n    print(type(e).__name__)"),
    md("## Counter-based random numbers: the same key gives the same numbers"),
    code("key = random.PRNGKey(0)\nkey, w_key, b_key, x_key = random.split(key, 4)\n"
         "print(random.normal(w_key, (3,)))\nprint(random.uniform(b_key, (2, 2)))"),
    md("## A model as a pytree of parameters"),
    code("def init_params(key, sizes):\n    params = []\n"
         "    for n_in, n_out in zip(sizes[:-1], sizes[1:]):\n"
         "        key, w_key = random.split(key)\n"
         "        params.append({'w': random.normal(w_key, (n_in, n_out)) / jnp.sqrt(n_in),\n"
         "                       'b': jnp.zeros(n_out)})\n    return params\n\n"
         "def predict(params, x):\n    for layer in params[:-1]:\n"
         "        x = jnp.tanh(x @ layer['w'] + layer['b'])\n"
         "    return x @ params[-1]['w'] + params[-1]['b']\n\n"
         "params = init_params(random.PRNGKey(1), [1, 16, 16, 1])\n"
         "print(jax.tree_util.tree_map(jnp.shape, params))"),
    md("## Data, a loss, its gradient"),
    code("xs = jnp.linspace(-2.0, 2.0, 64).reshape(-1, 1)\n"
         "ys = jnp.sin(3 * xs) + 0.1 * random.normal(x_key, xs.shape)\n\n"
         "def loss(params, x, y):\n    return jnp.mean((predict(params, x) - y) ** 2)\n\n"
         "print(loss(params, xs, ys))\n"
         "grads = jax.grad(loss)(params, xs, ys)\n"
         "print(jax.tree_util.tree_map(lambda g: float(jnp.linalg.norm(g)), grads))"),
    md("## A jitted training step, run in a Python loop\n"
       "Printed to three decimals: XLA's kernels and jitviz's round float32 differently in the "
       "last bit here and there, and 300 steps of gradient descent amplify that to about "
       "1e-4 (a float64 run of the same loop is as far from either)."),
    code("@jax.jit\ndef update(params, x, y, lr=0.1):\n"
         "    value, grads = jax.value_and_grad(loss)(params, x, y)\n"
         "    params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)\n"
         "    return params, value\n\n"
         "for step in range(301):\n    params, value = update(params, xs, ys)\n"
         "    if step % 100 == 0:\n        print(step, f\"{float(value):.3f}\")"),
    md("## Per-example gradients with `vmap`"),
    code("per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))\n"
         "g = per_example(params, xs[:4, None], ys[:4, None])\n"
         "print(g[0]['b'].shape, g[-1]['w'].shape)\nprint(np.round(g[-1]['b'][:, 0], 2))"),
    md("## `lax.scan`: a loop traced once"),
    code("def running_mean(xs):\n    def step(carry, x):\n        total, n = carry\n"
         "        total, n = total + x, n + 1\n        return (total, n), total / n\n"
         "    _, means = lax.scan(step, (0.0, 0), xs)\n    return means\n\n"
         "print(jax.jit(running_mean)(jnp.array([1.0, 3.0, 5.0, 7.0])))"),
    code("def clipped(x):\n    return lax.cond(x > 1.0, lambda v: 1.0 + 0 * v, lambda v: v, x)\n\n"
         "print(jax.vmap(clipped)(jnp.array([0.5, 2.0])), jax.grad(clipped)(0.5))"),
    md("## What jitviz adds\n"
       "The cells below are not in the JAX notebook. The program `update` compiled to, in "
       "JAX's jaxpr syntax:"),
    code("# jitviz only\nprint(jax.make_jaxpr(update)(params, xs, ys))"),
    md("Its kernels (one fused loop nest per group of elementwise operations; the matrix "
       "products are BLAS calls):"),
    code("# jitviz only\ncompiled = update.lower(params, xs, ys).compile()\n"
         "print([k.name for k in compiled.kernels])"),
    md("And what `jit` did for it in this session: one trace and compile, then cache hits. "
       "A call with a batch of another size would show a recompile with its reason here, and "
       "`jitviz.explore(update)` draws the program with every stage of the optimizer."),
    code("# jitviz only\nfor event in update.events:\n    print(event.kind, event.count, "
         "event.message[:70])"),
]

if __name__ == "__main__":
    write_notebook(cells, "demo_notebooks/08_a_jax_notebook.ipynb")
