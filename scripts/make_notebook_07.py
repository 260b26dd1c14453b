"""Writes demo_notebooks/07_ledger_budgets_and_fates.ipynb (run it after editing the cells)."""
from notebook_cells import code, md, write_notebook

cells = [
    md("# 07 · The recompile ledger, compile budgets, diffs and each line's fate\n\n"
       "The tutorials' pitfalls each cost time: a recompile for every new shape, a static "
       "argument that takes a new value on every call, `jit` of a lambda inside a loop. "
       "One by one, jitviz flags them as they happen (notebook 02). This notebook looks at a "
       "whole session at once — which functions cost the most tracing and compiling, why, "
       "from which line — and shows how to make an unexpected compile fail loudly, at the "
       "call that causes it."),
    code("import warnings\nimport numpy as np\nimport jitviz\nimport jitviz.numpy as jnp\n"
         "from jitviz import jit, lax\n"
         "warnings.simplefilter('ignore', jitviz.JitvizWarning)  # the ledger shows it all\n"
         "%load_ext jitviz"),
    md("## A session with the tutorials' pitfalls\n"
       "`f_loop` takes its trip count as a static argument (a new value recompiles), "
       "`normalize` is called with batches of changing length (a new shape recompiles), "
       "`h` gets a Python float and then a NumPy scalar (a new weak type), and "
       "`g_inner_jitted_lambda` jits a fresh lambda on every iteration."),
    code("from functools import partial\n\n"
         "@partial(jit, static_argnums=(1,))\ndef f_loop(x, n):\n    y = 0.\n"
         "    for i in range(n):\n        y = y + x\n    return y\n\n"
         "@jit\ndef normalize(x):\n    return (x - x.mean()) / (x.std() + 1e-6)\n\n"
         "h = jit(lambda x: x * 2 + 1)\n\n"
         "def unjitted_loop_body(prev_i):\n    return prev_i + 1\n\n"
         "def g_inner_jitted_lambda(x):\n    i = 0\n    while i < 5:\n"
         "        i = jit(lambda x: unjitted_loop_body(x))(i)\n    return x + i\n\n"
         "for n in (10, 11, 12):\n    f_loop(2.0, n)\n"
         "for size in (100, 101, 128, 100):\n    normalize(np.ones(size, np.float32))\n"
         "h(1.0); h(np.float32(1.0))\ng_inner_jitted_lambda(10);"),
    md("## `%jitledger`: where the compile time went, and what to do about it\n"
       "Every jitted function of the session, most costly first: its compiles and cache "
       "hits, the reasons grouped by kind, the line that made each miss, and a fix for "
       "each kind. `jitviz.ledger()` is the same without IPython; `.rows` has it as data."),
    code("%jitledger"),
    code("row = next(r for r in jitviz.ledger().rows if r.name == 'normalize')\n"
         "for group in row.reasons:\n    print(f'{group.name:>15} x{group.count}  fix: {group.fix}')"),
    md("`%jitledger --live` keeps a table below its cell up to date as later cells compile "
       "(`%jitledger --stop` ends it)."),
    md("## Budgets: an unexpected compile fails at its call\n"
       "A warm loop should not compile. `expect_compiles(0)` says so; the call that would "
       "compile raises `UnexpectedCompileError` *before* it traces, naming the function, the "
       "reason, the line and the fix."),
    code("batches = [np.ones(128, np.float32), np.ones(128, np.float32), np.ones(127, np.float32)]\n"
         "try:\n    with jitviz.expect_compiles(0):\n        for batch in batches:\n"
         "            normalize(batch)\nexcept jitviz.errors.UnexpectedCompileError as err:\n"
         "    print(err)"),
    md("The fix it suggests — pad a changing dimension to a few fixed sizes — keeps the loop "
       "within its budget:"),
    code("def padded(x, size=128):\n    return np.pad(x, (0, size - len(x)), mode='edge')\n\n"
         "with jitviz.expect_compiles(0) as budget:\n    for batch in batches:\n"
         "        normalize(padded(batch))\nbudget"),
    md("Per function: `jit(f, max_compiles=k)` warns once past `k` compiles (`strict=True` "
       "raises). In a test suite, the `jitviz_compiles` pytest fixture (installed with "
       "jitviz) records the compiles of one test:\n\n"
       "```python\ndef test_step_compiles_once(jitviz_compiles):\n"
       "    for batch in batches:\n        step(params, batch)\n"
       "    assert jitviz_compiles.count == 1, jitviz_compiles\n```"),
    md("## What a recompile changed: `jitviz.diff`\n"
       "`f_loop` unrolls its loop, so each static `n` is a different program. "
       "`diff_with_previous` compares the newest specialization with the one it was "
       "recompiled from: one more `add` at the loop's line."),
    code("d = jitviz.diff_with_previous(f_loop)\nprint(d.text())"),
    code("d  # side by side, changed fields highlighted, both graphs coloured by status"),
    md("`jitviz.export(f_loop, 'f_loop.html')` writes all of it — ledger row, "
       "specializations, a diff per recompile, events — as one offline HTML file and a JSON "
       "twin, for a colleague or a CI artifact."),
    code("import os, tempfile\nhtml, js = jitviz.export(f_loop, os.path.join(tempfile.mkdtemp(), "
         "'f_loop.html'))\nprint(os.path.basename(html), os.path.getsize(html), 'bytes;', "
         "os.path.basename(js))"),
    md("## A cell edited and run again: compare with its previous run\n"
       "Editing a cell and running it again makes a new function object with an empty "
       "cache; the old one, with its traces, is usually gone. The explorer keeps the traces "
       "of each cell's previous run (a few per function, bounded) and offers "
       "**compare with previous run**: both graphs side by side, added / removed / changed "
       "nodes coloured, unchanged regions folded, and the jaxprs' diff by source line. Here "
       "the edited version is the next cell; editing the cell itself and running it again "
       "does the same."),
    code("@jit\ndef selu(x, alpha=1.67, lmbda=1.05):\n"
         "    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)\n\n"
         "x = np.linspace(-3, 3, 1000, dtype=np.float32)\nselu(x);"),
    code("@jit\ndef selu(x, alpha=1.67, lmbda=1.05):\n"
         "    return lmbda * jnp.where(x > 0, x, alpha * jnp.expm1(x))  # one call, not two\n\n"
         "selu(x)\nexplorer = jitviz.explore(selu)\n"
         "explorer  # 'compare with previous run' above the graph"),
    code("print(explorer.compare_previous_run().text())  # the same diff, as text"),
    code("step = jit(lambda x: x.sum(), max_compiles=2, strict=True)\n"
         "step(np.ones(3)); step(np.ones(4))\ntry:\n    step(np.ones(5))\n"
         "except jitviz.errors.UnexpectedCompileError as err:\n    print(err)"),
    md("## Every line's fate: `%%jit -a` and `jitviz.annotate`\n"
       "Like Cython's `%%cython -a`, but read off what jit really did: each line of the "
       "function is coloured by what it became — fused into a kernel, run on the host (a "
       "BLAS call), a `lax` loop region, a Python loop unrolled into many equations, a global "
       "baked in as a constant, a side effect that ran only while tracing, Python-only work, "
       "equations an optimizer pass removed (named), or the argument whose change caused a "
       "recompile. Click a line for its equations and the kernels they went into. The "
       "function below has the tutorials' pitfalls in a few lines."),
    code("scale = 2.0\nW = np.ones((8, 8), np.float32)\nseen = []"),
    code("%%jit -a --static n\n"
         "def pitfalls(x, n):\n"
         "    print('tracing pitfalls')        # runs once, while tracing\n"
         "    seen.append(x.shape)             # a mutation lost on every later call\n"
         "    y = (x @ W) * scale              # BLAS on the host; W and scale baked in\n"
         "    for i in range(n):               # a Python loop: unrolled n times\n"
         "        y = y + jnp.sin(y)\n"
         "    half = x.shape[0] // 2           # shape arithmetic: no equations\n"
         "    unused = jnp.cos(x)              # removed by dead-code elimination\n"
         "    return y[:half].sum()\n\n"
         "pitfalls(np.ones((4, 8), np.float32), 3)\n"
         "pitfalls(np.ones((4, 8), np.float32), 4);"),
    md("The same as data, for scripts and tests (`Annotation.lines`), and after `scale` "
       "changes the constant is marked stale: the compiled code still multiplies by 2.0."),
    code("scale = 5.0\na = jitviz.annotate(pitfalls)\n"
         "for line in a.lines:\n    if line.fates:\n"
         "        print(f'{line.line:3d} {\",\".join(line.fates):22} {line.note[:70]}')"),
]

if __name__ == "__main__":
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    write_notebook(cells, os.path.join(here, "..", "demo_notebooks",
                                       "07_ledger_budgets_and_fates.ipynb"))
