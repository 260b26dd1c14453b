"""The source-fate view (`jitviz.annotate`, `%%jit -a`): every fate on a program that has
them all, the pass named for dead code, plain and jitted functions, the data and HTML views."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

from helpers import XSS_PAYLOADS, assert_inert, xss_program  # noqa: E402

W = np.ones((4, 4), np.float32)
LOG = []


def everything(x, n):
    y = x @ W
    z = jnp.sin(y) * 2
    unused = jnp.cos(x)  # noqa: F841
    print("tracing")
    LOG.append(1)
    k = x.shape[0] * 2
    for i in range(250):
        z = z + i
    w = lax.fori_loop(0, n, lambda i, a: a * 1.5, z)
    twice = jnp.tanh(w) + jnp.tanh(w)
    return twice.sum() + k


def _line(a, text):
    """The annotation of the line whose code contains `text`."""
    (hit,) = [line for line in a.lines if text in line.code]
    return hit


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitviz.JitvizWarning)
        yield


@pytest.fixture(scope="module")
def annotated():
    f = jitviz.jit(everything, static_argnums=(1,))
    x = np.ones((2, 4), np.float32)
    f(x, 3)
    f(x, 4)  # a new static value: a recompile
    return jitviz.annotate(f)


def test_every_fate_on_its_line(annotated):
    a = annotated
    assert _line(a, "y = x @ W").fates == ("constant", "host")
    assert "W (64 bytes)" in _line(a, "y = x @ W").note
    assert _line(a, "z = jnp.sin(y)").fates == ("kernel",)
    assert _line(a, "unused =").fates == ("dead",) and "dce (1)" in _line(a, "unused =").note
    assert _line(a, 'print("tracing")').fates == ("effect",)
    assert "lost on every later call" in _line(a, 'print("tracing")').note
    assert _line(a, "LOG.append").fates == ("effect",)
    assert _line(a, "k = x.shape").fates == ("static",)
    assert _line(a, "z = z + i").fates == ("unrolled", "kernel")
    assert "250 equations" in _line(a, "z = z + i").note
    assert _line(a, "fori_loop").fates == ("control_flow", "kernel")
    twice = _line(a, "twice =")
    assert "dead" in twice.fates and "cse (1)" in twice.note  # the second tanh is the first
    assert _line(a, "def everything").fates == ("recompile",)
    assert "static argument 'n' changed from 3 to 4" in _line(a, "def everything").note
    assert a.signature == "x:f32[2,4], n=4" and a.backend == "cpu"
    assert str(a).startswith("everything(x:f32[2,4], n=4) on cpu")


def test_lines_carry_equations_and_kernels(annotated):
    sin = _line(annotated, "z = jnp.sin(y)")
    assert any(" sin " in q for q in sin.equations) and sin.kernels
    assert all(k in annotated.kernel_sources for k in sin.kernels)
    assert _line(annotated, "k = x.shape").equations == ()
    assert annotated.fate_of(sin.line) == ("kernel",)


def test_the_data_view_is_json(annotated):
    data = json.loads(json.dumps(annotated.to_dict()))
    assert data["function"] == "everything" and len(data["lines"]) == len(annotated.lines)
    row = data["lines"][1]
    assert set(row) == {"file", "line", "code", "fates", "equations", "kernels",
                        "time_share", "note", "kernel_lines"}
    sin = next(r for r in data["lines"] if "jnp.sin(y)" in r["code"])
    # (sin's lines: its calls, and its block test, which may run before the block's loop)
    assert any(re.search(r"\b(np|rt)\.sin", text) for _, _, text in sin["kernel_lines"])
    for kernel, line, text in sin["kernel_lines"]:
        assert data["kernels"][kernel].splitlines()[line - 1].strip() == text


def test_plain_function_and_interpreter():
    a = jitviz.annotate(everything, np.ones((2, 4), np.float32), 2, backend="interpret")
    # the interpreter's one pseudo-kernel runs every equation with NumPy
    sin = _line(a, "z = jnp.sin(y)")
    assert sin.fates == ("kernel",) and sin.kernels == ("eval_jaxpr",)
    assert "one NumPy call per equation" in a.kernel_sources["eval_jaxpr"]


def test_a_jitted_function_needs_a_call_or_arguments():
    f = jitviz.jit(lambda x: x + 1)
    with pytest.raises(TypeError, match="needs example arguments"):
        jitviz.annotate(f)
    assert jitviz.annotate(f, np.float32(1)).lines


def test_html_has_a_legend_colours_and_links(annotated):
    page = annotated._repr_html_()
    for fate in ("kernel", "host", "effect", "dead", "recompile", "unrolled"):
        assert f">{fate}</span>" in page
    assert "background:#d8f0d8" in page  # a kernel line's colour
    sin = _line(annotated, "z = jnp.sin(y)")
    assert f"href='#jv-kernel-{sin.kernels[0]}'" in page and \
        f"id='jv-kernel-{sin.kernels[0]}'" in page


@pytest.mark.parametrize("k", range(len(XSS_PAYLOADS)))
def test_user_text_stays_text(k):
    payload = XSS_PAYLOADS[k]
    fun, args, kwargs = xss_program(payload, k)
    a = jitviz.annotate(fun, *args, **kwargs)
    assert_inert(a._repr_html_(), payload, allowed_tags=("style", "a"))


def test_export_writes_the_annotation(annotated, tmp_path):
    html_path, json_path = jitviz.export(annotated, tmp_path / "a.html")
    assert "jv-annot" in html_path.read_text()
    assert json.loads(json_path.read_text())["annotation"]["function"] == "everything"


def test_jit_magic_annotates_the_functions_it_called():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "jitviz")
    ip.run_cell("import numpy as np\nimport jitviz.numpy as jnp")
    with capture_output() as io:
        ip.run_cell_magic("jit", "-a -q --backend cpu",
                          "def called(x):\n    return jnp.sin(x) * 2\n\n"
                          "def uncalled(x):\n    return x\n\n"
                          "called(np.ones(3, np.float32))\n")
    page = "\n".join(o.data.get("text/html", "") for o in io.outputs)
    assert "jv-annot" in page and "called" in page
    assert "uncalled: not called in this cell" in io.stdout


SCALE = 2.0
TABLE = np.arange(4, dtype=np.float32)


def uses_globals(x):
    return (x * SCALE + TABLE).sum()


def test_constants_name_their_global_size_and_staleness():
    global SCALE, TABLE
    f = jitviz.jit(uses_globals)
    f(np.ones(4, np.float32))
    line = _line(jitviz.annotate(f), "x * SCALE")
    assert line.fates[0] == "constant" and "TABLE (16 bytes)" in line.note and \
        "SCALE (4 bytes)" in line.note and "stale" not in line.note
    old = SCALE, TABLE
    try:
        SCALE, TABLE = 3.0, TABLE + 1
        note = _line(jitviz.annotate(f), "x * SCALE").note
        assert "SCALE (4 bytes), stale: the value is now 3.0" in note
        assert "TABLE (16 bytes), stale: the value is now [1. 2. 3. 4.]" in note
    finally:
        SCALE, TABLE = old


def with_blas(x, m):
    a = jnp.exp(x) * 2
    b = jnp.sin(x).sum()
    c = m @ m
    return a + b, c


@pytest.mark.parametrize("backend", ["cpu", "interpret"])
def test_profile_gives_each_line_its_share_of_a_call(backend):
    x = np.random.default_rng(0).random(4096).astype(np.float32)
    m = np.ones((64, 64), np.float32)
    a = jitviz.annotate(with_blas, x, m, backend=backend, profile=True, min_time=0.05)
    assert a.seconds_per_call > 0 and a.calls_measured >= 3
    shares = {line.line: line.time_share for line in a.lines}
    assert all(0.0 <= s <= 1.0 for s in shares.values())
    # every timed second is on some line, or counted as untimed: the parts make one call
    assert sum(shares.values()) + a.untimed_share == pytest.approx(1.0, abs=1e-9)
    for text in ("jnp.exp", "jnp.sin", "m @ m"):  # kernels, and the BLAS call the driver runs
        assert _line(a, text).time_share > 0, text
    assert _line(a, "def with_blas").time_share == 0.0
    assert "profiled:" in a._repr_html_() and a.to_dict()["calls_measured"] == a.calls_measured


def test_profiling_costs_nothing_when_off():
    """The cached executable calls Numba's dispatchers directly; only the profiling copy
    goes through timers."""
    f = jitviz.jit(with_blas)
    x, m = np.ones(16, np.float32), np.ones((4, 4), np.float32)
    f(x, m)
    exe = f.specializations[-1].executable
    assert exe.timings is None and "_clock" not in exe.driver_source
    callees = [v for k, v in exe._run.__globals__.items() if k in {kk.name for kk in exe.kernels}]
    assert callees and all(type(c).__name__ == "CPUDispatcher" for c in callees)
    timings, per_call, calls = f.time_kernels(x, m, min_time=0.01)
    assert set(timings.units) >= {k.name for k in exe.kernels} and per_call > 0


def test_profile_needs_arguments():
    f = jitviz.jit(with_blas)
    f(np.ones(4, np.float32), np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match=r"profile=True\) runs the function"):
        jitviz.annotate(f, profile=True)


def _log_then_scale(x):
    y = jnp.log(x)
    return y / 3.0


def test_a_line_computing_two_equations_is_listed_under_both_lines():
    """The CPU computes a log and its division by a constant in one generated line (rules.py
    `_scaled_log`): that line is listed under the log's source line and the division's; the
    store of the division's result only under the division's."""
    a = jitviz.annotate(_log_then_scale, np.linspace(1, 2, 64, dtype=np.float32))
    log, div = _line(a, "y = jnp.log(x)"), _line(a, "return y / 3.0")
    ((kernel, n, text),) = log.kernel_lines
    assert "rt.log_div_const_f32(" in text and (kernel, n, text) in div.kernel_lines
    assert a.kernel_sources[kernel].splitlines()[n - 1].strip() == text
    assert any(t.startswith("out0[") for _, _, t in div.kernel_lines)
