"""Helpers shared by the tracing-core tests: trace, typecheck, evaluate, compare with NumPy.

`trace_and_check` is the one entry point: every jaxpr a test traces goes through
`jitviz.typecheck_jaxpr`, `eval_jaxpr` runs it on the flat argument leaves, and the result is
compared with running the function eagerly (and with a NumPy reference when one is given).
It also checks the provenance the issue asks for: every equation's `source` is a user line
(never a frame inside jitviz), and every constant says where it came from.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import jitviz
import jitviz.numpy as jnp
from jitviz.core.ir import ClosedJaxpr, Jaxpr, Literal
from jitviz.tree import tree_flatten

JITVIZ_DIR = os.path.dirname(os.path.abspath(jitviz.__file__)) + os.sep
TESTS_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
ORIGIN_KINDS = {"literal", "global", "closure", "computed", "nondeterministic"}
# a string that is live markup if any front end forgets to escape it
XSS = "<img src=x onerror=alert(1)>"


def all_eqns(jaxpr):
    """Every equation of a jaxpr and of the sub-jaxprs in its params, depth first."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in sub_jaxprs(eqn):
            yield from all_eqns(sub)


def sub_jaxprs(eqn):
    for p in eqn.params.values():
        for j in (p if isinstance(p, tuple) else (p,)):
            if isinstance(j, (Jaxpr, ClosedJaxpr)):
                yield j


def count_eqns(closed, name=None):
    """How many equations (all levels), optionally of one primitive."""
    return sum(1 for e in all_eqns(closed) if name is None or e.primitive.name == name)


def check_sources(closed):
    """Every equation records a user line: a file outside the jitviz package."""
    for eqn in all_eqns(closed):
        src = eqn.source
        assert src is not None, f"{eqn.primitive.name} has no source"
        assert not os.path.abspath(src.file).startswith(JITVIZ_DIR), \
            f"{eqn.primitive.name} attributed to jitviz-internal {src.file}:{src.line}"
        assert src.line > 0 and src.function


def check_origins(closed):
    """Every constvar and literal says where it came from (a named global/closure)."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    atoms = list(jaxpr.constvars)
    for eqn in all_eqns(jaxpr):
        atoms += [a for a in eqn.invars if isinstance(a, Literal)]
    atoms += [a for a in jaxpr.outvars if isinstance(a, Literal)]
    for a in atoms:
        origin = getattr(a, "origin", None)
        if a in jaxpr.constvars and origin is None:
            continue  # a tracer captured from an enclosing trace (nested make_jaxpr)
        assert origin is not None, f"{a!r} has no origin"
        assert origin.kind in ORIGIN_KINDS, origin
        if origin.kind in ("global", "closure"):
            assert origin.name, origin


def dynamic_leaves(f, args, kwargs=None, static_argnums=(), static_argnames=()):
    """The traced leaves of a call, as make_jaxpr splits them (static arguments removed)."""
    from jitviz.staging import arg_spec, split_args
    spec = arg_spec(f, static_argnums, static_argnames)
    return split_args(spec, args, kwargs or {}).dyn_leaves


def assert_close(actual, expected, rtol=1e-6, atol=1e-6, check_dtype=True):
    """Equal values (NaN equal to NaN), equal shapes, and (by default) equal dtypes."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    if check_dtype:
        assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    if e.dtype.kind in "biu" and a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, e)
    else:
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


def trace_and_check(f, *args, static_argnums=(), static_argnames=(), expected=None,
                    rtol=1e-6, atol=1e-6, check_dtype=True, eager=True, **kwargs):
    """make_jaxpr + typecheck + eval_jaxpr, compared with the eager call (and `expected`).

    Returns the ClosedJaxpr. `expected` is a NumPy reference (a pytree like f's output);
    its dtypes must match exactly unless `check_dtype=False`.
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    closed = jitviz.make_jaxpr(f, static_argnums=static_argnums,
                               static_argnames=static_argnames)(*args, **kwargs)
    jitviz.typecheck_jaxpr(closed)
    check_sources(closed)
    check_origins(closed)
    leaves = dynamic_leaves(f, args, kwargs, static_argnums, static_argnames)
    assert [a for a in closed.in_avals] == [_aval(x) for x in leaves]
    outs = jitviz.eval_jaxpr(closed.jaxpr, closed.consts, *leaves)
    for o, av in zip(outs, closed.out_avals):  # eval_jaxpr honours the abstract types
        assert np.shape(o) == av.shape and np.asarray(o).dtype == av.dtype, (o, av)
    if eager:
        eager_leaves = tree_flatten(f(*args, **kwargs))[0]
        assert len(eager_leaves) == len(outs)
        for o, e in zip(outs, eager_leaves):
            # a function of Python scalars runs in Python eagerly: compare values only
            python = isinstance(e, (bool, int, float, complex))
            assert_close(o, e, rtol, atol, check_dtype and not python)
    if expected is not None:
        exp_leaves, exp_tree = tree_flatten(expected)
        assert exp_tree == closed.out_tree or len(exp_leaves) == len(outs), \
            f"structure {closed.out_tree} != {exp_tree}"
        for o, e in zip(outs, exp_leaves):
            assert_close(o, e, rtol, atol, check_dtype)
    return closed


def _aval(x):
    from jitviz.core.trace import concrete_aval
    return concrete_aval(x, "argument")[1]


def eval_closed(closed, *args):
    """eval_jaxpr on the flat leaves of `args`, unflattened to the traced output tree."""
    leaves = tree_flatten(args)[0]
    outs = jitviz.eval_jaxpr(closed.jaxpr, closed.consts, *leaves)
    return closed.out_tree.unflatten(outs) if closed.out_tree is not None else outs


def line_of(fun, marker):
    """The line number of the line of `fun` that contains `marker`."""
    lines, start = inspect.getsourcelines(fun)
    for i, text in enumerate(lines):
        if marker in text:
            return start + i
    raise AssertionError(f"{marker!r} not in {fun.__name__}")


def unrolled(x):
    """A 5,000-equation program (1,250 rounds of mul, add, sin, sub) for the explorer's blocks."""
    for _ in range(1250):
        x = x * 1.0001
        x = x + 0.5
        x = jnp.sin(x)
        x = x - 0.25
    return x


def xss_function():
    """A function named, and printing, `XSS`: every place the explorer shows it must escape it."""
    def fun(x):
        print(XSS)
        return jnp.sin(x)
    fun.__name__ = fun.__qualname__ = XSS
    fun.__code__ = fun.__code__.replace(co_name=XSS)
    return fun


# --- user text that would be live markup ---------------------------------------------------------

#: Payloads for every front end: HTML and SVG tags, attribute and comment break-outs, a
#: pre-escaped one (must stay text, not be unescaped), DOT string and HTML-label break-outs.
XSS_PAYLOADS = [
    XSS,
    "<script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "'><iframe src=\"javascript:alert(1)\">",
    "</title><script>alert(1)</script>",
    "</text><image href=x onerror=alert(1)/>",
    "<!--<img src=x onerror=alert(1)>-->",
    "]]><img src=x onerror=alert(1)>",
    "&lt;img src=x onerror=alert(1)&gt;",
    '\\" onmouseover="alert(1)',
    "<a href=javascript:alert(1) onclick=alert(1)>x</a><style>*{}</style>",
    '"]; x [label=<<img src=x onerror=alert(1)>>]; "',
]


def xss_program(payload, index=0):
    """(fun, args, kwargs) carrying `payload` wherever user text enters jitviz: the function's
    name, a dict key and a keyword name of its arguments, the text it prints, its source
    lines, and the name of the jitted function it calls."""
    import linecache
    src = ("def inner(v):\n    return v * 2\n"
           f"def fun(d, **kw):\n    print({payload!r})\n"
           f"    return inner(jnp.sin(d[{payload!r}]) + kw[{payload!r}])\n")
    filename = f"<xss program {index}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"jnp": jnp}
    exec(compile(src, filename, "exec"), ns)  # noqa: S102 - test code with a known text
    ns["inner"] = jitviz.jit(_renamed(ns["inner"], payload))
    fun = _renamed(ns["fun"], payload)
    return fun, ({payload: np.ones(3, np.float32)},), {payload: np.float32(0.5)}


def _renamed(fun, name):
    fun.__name__ = fun.__qualname__ = name
    fun.__code__ = fun.__code__.replace(co_name=name)
    return fun


_LIVE_TAGS = {"script", "iframe", "img", "image", "style", "object", "embed", "a", "base",
              "link", "meta", "template", "foreignobject", "math"}


def assert_inert(markup: str, payload: str, *, shown=True, also=(), allowed_tags=()):
    """`markup` (HTML or SVG) holds `payload` as text only: no element a payload could open
    (script, img, a, style, ...), no event-handler attribute, no javascript: URL, no comment
    or CDATA carrying it -- and, with `shown`, the payload itself among the text and
    attribute values once entities are decoded (the field really reached the output), and
    so is each text of `also` (other fields that carry it, e.g. `d['<payload>']`)."""
    from html.parser import HTMLParser

    found = {"bad": [], "data": []}

    class Collector(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag in _LIVE_TAGS - set(allowed_tags):
                found["bad"].append(f"<{tag}>")
            for name, value in attrs:
                found["data"].append(value or "")
                url = name.lower().rpartition(":")[2] in ("href", "src", "action")
                if name.lower().startswith("on") or \
                        (url and "javascript:" in (value or "").lower()):
                    found["bad"].append(f"{tag} {name}={value!r}")

        handle_startendtag = handle_starttag

        def handle_data(self, data):
            found["data"].append(data)

        def handle_comment(self, data):
            if "alert" in data or "<" in data:
                found["bad"].append(f"<!--{data}-->")

        def unknown_decl(self, data):
            found["bad"].append(f"<![{data}]>")

    parser = Collector(convert_charrefs=True)
    parser.feed(markup)
    parser.close()
    assert not found["bad"], f"{payload!r} became markup: {found['bad']}"
    for text in ([payload] if shown else []) + list(also):
        assert any(text in d for d in found["data"]), f"{text!r} not shown as text"


def dot_strings(dot_text: str) -> tuple[list[str], str]:
    """(the quoted strings of DOT text, decoded; the text outside them)."""
    import re
    strings, outside = [], []
    pos = 0
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', dot_text, re.S):
        outside.append(dot_text[pos:m.start()])
        pos = m.end()
        strings.append(re.sub(r'\\(["\\])', r"\1", m.group(1)))
    outside.append(dot_text[pos:])
    return strings, "".join(outside)


@contextlib.contextmanager
def x64_enabled():
    """64-bit defaults inside the block, the previous setting restored after it."""
    before = jitviz.config.enable_x64
    jitviz.config.update("enable_x64", True)
    try:
        yield
    finally:
        jitviz.config.update("enable_x64", before)


@contextlib.contextmanager
def jax_x64_enabled():
    """Real JAX's 64-bit mode on inside the block (the reference in tests comparing with
    JAX), the previous setting restored after it."""
    import jax
    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


@contextlib.contextmanager
def float64_kept():
    """jitviz's `keep_float64` switch on inside the block: NumPy 64-bit inputs and named
    64-bit dtypes keep their dtype without x64 (for tests about float64 precision)."""
    before = jitviz.config.keep_float64
    jitviz.config.update("keep_float64", True)
    try:
        yield
    finally:
        jitviz.config.update("keep_float64", before)


# --- the browser tests (Debian's Chromium driven by playwright-core from Node) --------------

CHROMIUM = os.environ.get("JITVIZ_CHROMIUM", "/usr/bin/chromium")


def browser_marks(what: str) -> list:
    """Skip marks for a browser-test module: only Chromium or Node missing skips it."""
    import shutil
    from pathlib import Path

    import pytest
    return [
        pytest.mark.skipif(not Path(CHROMIUM).exists() and shutil.which("chromium") is None,
                           reason=f"{what} need Chromium (apt-get install chromium)"),
        pytest.mark.skipif(shutil.which("node") is None,
                           reason=f"{what} need Node.js to run playwright-core"),
        pytest.mark.filterwarnings("ignore::jitviz.JitvizWarning"),
    ]


def playwright_env(labextension) -> dict:
    """The environment for the Node drivers, with labextension/'s npm packages (playwright-core)
    installed first if they are not there yet."""
    import shutil
    import subprocess
    from pathlib import Path
    if not (Path(labextension) / "node_modules" / "playwright-core").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install playwright-core for the browser tests"
        proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=labextension,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"npm ci failed:\n{proc.stdout}\n{proc.stderr}"
    env = dict(os.environ)
    env["JITVIZ_CHROMIUM"] = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    return env


# --- child processes (Numba's CUDA simulator, bounds checks: settings read at import) ---------

ROOT = Path(__file__).resolve().parent.parent


def child_env(**extra) -> dict:
    """This process's environment with `extra` set and the repository first on PYTHONPATH."""
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths), **extra)


def run_pytest_child(test_file, *pytest_args, timeout=1200, **env) -> str:
    """pytest on `test_file` in a fresh process with `env` set; asserts that it passed and
    returns its output."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=", *pytest_args, str(test_file)],
                          cwd=ROOT, env=child_env(**env), capture_output=True, text=True,
                          timeout=timeout)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-80:])
    assert proc.returncode == 0, f"the child process's tests failed:\n{tail}"
    assert " passed" in proc.stdout and " failed" not in proc.stdout, tail
    return proc.stdout


def run_in_simulator(test_file, *pytest_args, timeout=1200) -> str:
    """`test_file`'s simulator tests (those its JITVIZ_CUDA_SIM_CHILD switch selects) in
    Numba's CUDA simulator, in a fresh process."""
    return run_pytest_child(test_file, *pytest_args, timeout=timeout,
                            NUMBA_ENABLE_CUDASIM="1", JITVIZ_CUDA_SIM_CHILD="1")


def run_program_in_simulator(program: str, timeout=600) -> str:
    """A Python program in Numba's CUDA simulator, in a fresh process; returns its output."""
    proc = subprocess.run([sys.executable, "-c", program], cwd=ROOT,
                          env=child_env(NUMBA_ENABLE_CUDASIM="1"), capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return proc.stdout
