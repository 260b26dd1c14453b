"""Writes demo_notebooks/02_caching_and_side_effects.ipynb (run it after editing the cells)."""
from notebook_cells import code, md, write_notebook

cells = [
    md("# 02 · Caching, recompiles and lost side effects\n\n"
       "`jitviz.jit` behaves like `jax.jit`: the first call with a new *abstract signature* "
       "(shapes, dtypes, weak types, static values) runs your Python once to **trace** it, "
       "compiles the traced program and caches it; later calls with the same signature run "
       "only the compiled code. Everything the tutorials warn about follows from that — and "
       "jitviz tells you when it happens, with an **event** in `f.events` and a Python "
       "**warning**."),
    code("import warnings, functools\nimport numpy as np\nimport jitviz\n"
         "import jitviz.numpy as jnp\nfrom jitviz import jit, lax\n"
         "warnings.simplefilter('always', jitviz.JitvizWarning)"),
    md("## Prints run once: `bad_f`\nA `print` runs while tracing, so it shows on the first "
       "call only. jitviz says so on the first cache hit (`side_effect_lost`) and counts "
       "later hits instead of repeating itself."),
    code("@jit\ndef bad_f(x):\n    print(\"I have side effects!\")\n"
         "    return jnp.sin(x) + jnp.cos(x) + x\n\nprint(repr(bad_f(2)))\n"
         "print(repr(bad_f(2)))\nbad_f(2)\nbad_f.events"),
    md("`jitviz.debug.print` is part of the program, so it prints on every call:"),
    code("@jit\ndef good_f(x):\n    jitviz.debug.print(\"x = {}\", x)\n    return x * 2\n\n"
         "good_f(1.0); good_f(2.0);"),
    md("## Globals are baked in: `impure_uses_globals`\nThe value of a global is read while "
       "tracing and becomes a constant of the compiled code. Changing the global later does "
       "not change the result — jitviz notices on the next call (`stale_global`)."),
    code("g = 0.\n\ndef impure_uses_globals(x):\n    return x + g\n\n"
         "jit_f = jit(impure_uses_globals)\nprint(jitviz.make_jaxpr(jit_f)(3))\n"
         "print(\"First call:\", jit_f(3.))\ng = 10.\nprint(\"after g = 10:\", jit_f(4.))"),
    md("A new shape retraces, and the new trace reads the new value:"),
    code("print(jit_f(jnp.array([4.])))\nfor e in jit_f.events:\n    print(e.kind, '|', "
         "e.signature, '|', e.message)"),
    md("## Mutating a global list leaks tracers: `number_squared`"),
    code("squared_numbers = []\n\ndef number_squared(num):\n    global squared_numbers\n"
         "    squared = num ** 2\n    squared_numbers.append(squared)\n    return squared\n\n"
         "number_squared_jit = jit(number_squared)\nfor num in [4, 8, 16]:\n"
         "    print(\"Result:\", number_squared_jit(num))\nprint(squared_numbers)\n"
         "for e in number_squared_jit.events.of_kind('tracer_leak'):\n    print(e.message)"),
    code("try:\n    squared_numbers[0] + 1\nexcept jitviz.errors.UnexpectedTracerError as e:\n"
         "    print(type(e).__name__, str(e).splitlines()[0])"),
    md("## Recompiles, with their reason\nStatic arguments are part of the cache key: a new "
       "value recompiles, and the `recompile` event says why."),
    code("@functools.partial(jit, static_argnums=(1,))\ndef f_loop(x, n):\n    y = 0.\n"
         "    for i in range(n):\n        y = y + x\n    return y\n\n"
         "print(f_loop(2, 10), f_loop(2, 11))\n"
         "print([e.reason for e in f_loop.events.of_kind('recompile')])\nf_loop.cache_info()"),
    md("Shapes, dtypes and weak types are part of the key too:"),
    code("h = jit(lambda x: x + 1)\nh(np.zeros(3, np.float32)); h(np.zeros(4, np.float32)); "
         "h(1.0); h(np.float32(1.0))\nfor e in h.events.of_kind('recompile'):\n"
         "    print(e.reason)"),
    md("## jit of a lambda inside a loop never hits the cache\nThe cache is keyed by the "
       "function object. A lambda made in a loop is a new object every time, so every call "
       "traces and compiles again (`retrace_churn`)."),
    code("def unjitted_loop_body(prev_i):\n    return prev_i + 1\n\n"
         "def g_inner_jitted_lambda(x):\n    i = 0\n    while i < 20:\n"
         "        i = jit(lambda x: unjitted_loop_body(x))(i)\n    return x + i\n\n"
         "def g_inner_jitted_normal(x):\n    i = 0\n    while i < 20:\n"
         "        i = jit(unjitted_loop_body)(i)\n    return x + i\n\n"
         "print(g_inner_jitted_lambda(10), g_inner_jitted_normal(10))\n"
         "jit(unjitted_loop_body).cache_info()"),
    md("## Unrolled Python loops\nA Python loop with a static trip count is unrolled into "
       "the program: one source line can produce hundreds of equations."),
    code("@jit\ndef slow_to_compile(x):\n    for _ in range(300):\n        x = x * 1.01\n"
         "    return x\n\nslow_to_compile(1.0)\n"
         "print(slow_to_compile.events.of_kind('unrolled_loop')[0].message)"),
    code("@jit\ndef fast_to_compile(x):\n"
         "    return lax.fori_loop(0, 300, lambda i, x: x * 1.01, x)\n\n"
         "fast_to_compile(1.0), len(fast_to_compile.lower(1.0).jaxpr.eqns)"),
    md("## Shapes must not depend on values: `get_negatives`"),
    code("@jit\ndef get_negatives(x):\n    return x[x < 0]\n\ntry:\n"
         "    get_negatives(jnp.array(np.random.randn(10)))\nexcept IndexError as e:\n"
         "    print(type(e).__name__ + ':', e)"),
    md("## Watching every jitted function\n`jitviz.subscribe` delivers each event as it "
       "happens (the notebook monitor is built on it); `jitviz.registry()` lists the live "
       "jitted functions."),
    code("log = []\nunsubscribe = jitviz.subscribe(lambda cache, ev: log.append((cache.name, "
         "ev.kind)))\nbad_f(3.0); bad_f(3.0)\nunsubscribe()\nlog"),
]
write_notebook(cells, "demo_notebooks/02_caching_and_side_effects.ipynb")
