"""The IPython magics `%%jit`, `%jaxpr`, `%jitbench`, driven through a real InteractiveShell,
and the `%%jit` AST transform on its own (no IPython)."""
from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pytest

IPython = pytest.importorskip("IPython")
from IPython.core.error import UsageError  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import jitviz  # noqa: E402
import jitviz.numpy as jnp  # noqa: E402
from jitviz.bench import BenchResult, jitbench  # noqa: E402
from jitviz.jit import JitFunction  # noqa: E402
from jitviz.magics import magics as M  # noqa: E402
from jitviz.magics.cell_monitor import CellMonitor  # noqa: E402
from jitviz.magics.transform import HELPER, jit_cell, parse_static  # noqa: E402

from helpers import XSS_PAYLOADS, assert_inert, xss_program  # noqa: E402

B = "interpret"  # until the cpu backend lands; everything here is backend-agnostic


@pytest.fixture(autouse=True)
def _quiet_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitviz.JitvizWarning)
        yield


@pytest.fixture(scope="module")
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "jitviz")
    ip.run_cell("import numpy as np\nimport jitviz\nimport jitviz.numpy as jnp\n"
                f"B = {B!r}", store_history=True)
    yield ip
    ip.run_line_magic("unload_ext", "jitviz")


def run(shell, code):
    with capture_output() as io:
        res = shell.run_cell(code, store_history=True)
    return res, io


def text_of(io) -> str:
    parts = [io.stdout]
    parts += [o.data.get("text/plain", "") for o in io.outputs]
    return "\n".join(parts)


def html_of(io) -> str:
    return "\n".join(o.data.get("text/html", "") for o in io.outputs)


# --- the transform, without IPython ----------------------------------------------------------------

def test_jit_cell_jits_top_level_defs_and_later_lines_call_them():
    ns = {"jnp": jnp}
    run_ = jit_cell("def f(x):\n    return x * 2\n\ndef g(x):\n    def inner(y):\n"
                    "        return y\n    return inner(x) + 1\n\nout = f(3.0)\n",
                    ns, backend=B)
    assert set(run_.functions) == {"f", "g"}
    assert isinstance(ns["f"], JitFunction) and isinstance(ns["g"], JitFunction)
    assert float(ns["out"]) == 6.0
    # the call in the cell went through jit: it traced and compiled once
    assert ns["f"].cache_info().traces == 1
    assert HELPER not in ns  # no helper left behind in the user's namespace


def test_jit_cell_keeps_existing_decorators_outermost_jit():
    calls = []

    def tag(fn):
        calls.append(fn.__name__)
        fn.tagged = True
        return fn

    ns = {"tag": tag, "jitviz": jitviz, "functools": functools, "B": B}
    run_ = jit_cell("@tag\ndef f(x):\n    return x + 1\n\n"
                    "@functools.partial(jitviz.jit, static_argnums=1, backend=B)\n"
                    "def k(x, n):\n    return x * n\n\n"
                    "@functools.lru_cache\ndef cached(n):\n    return n\n", ns, backend=B)
    assert calls == ["f"] and ns["f"].__wrapped__.tagged
    assert isinstance(ns["k"], JitFunction)
    assert ns["k"]._spec.static_argnums == (1,)  # the existing jit's static args survive
    assert float(ns["k"](2.0, 4)) == 8.0
    assert "cached" in run_.skipped and not isinstance(ns["cached"], JitFunction)


def test_jit_cell_static_names_apply_where_the_parameter_exists():
    ns = {}
    run_ = jit_cell("def a(x, n):\n    return x * n\n\ndef b(x):\n    return x\n", ns,
                    backend=B, static="n, k")
    assert ns["a"]._spec.static_argnames == ("n",)
    assert ns["b"]._spec.static_argnames == ()
    assert run_.static_unused == ("k",)
    ns["a"](1.0, 2)
    ns["a"](1.0, 3)
    assert [e.reason for e in ns["a"].events.of_kind("recompile")] == [
        "static argument 'n' changed from 2 to 3"]


def test_jit_cell_line_numbers_are_the_cells():
    src = "x0 = 1\n\ndef f_loop(x, n):\n    y = 0.\n    for i in range(n):\n" \
          "        y = y + x\n    return y\n"
    ns = {}
    jit_cell(src, ns, backend=B, filename="<cell-under-test>")
    with pytest.raises(jitviz.errors.TracerIntegerConversionError) as info:
        ns["f_loop"](2.0, 10)
    assert info.value.source.file == "<cell-under-test>"
    assert info.value.source.line == 5
    assert info.value.source.code == "for i in range(n):"


def test_jit_cell_skips_async_and_rejects_bad_static():
    ns = {}
    run_ = jit_cell("async def co(x):\n    return x\n", ns, backend=B)
    assert "co" in run_.skipped and not isinstance(ns["co"], JitFunction)
    with pytest.raises(ValueError):
        parse_static("n, 3k")


# --- loading ---------------------------------------------------------------------------------------

def test_load_registers_magics_and_unload_restores(shell):
    assert shell.find_cell_magic("jit") is not None
    assert shell.find_line_magic("jaxpr") is not None
    assert shell.find_line_magic("jitbench") is not None
    assert issubclass(jitviz.errors.ConcretizationTypeError, shell.custom_exceptions)
    shell.run_line_magic("unload_ext", "jitviz")
    try:
        assert shell.find_cell_magic("jit") is None
        assert shell.find_line_magic("jitbench") is None
        assert not issubclass(jitviz.errors.ConcretizationTypeError, shell.custom_exceptions)
    finally:
        shell.run_line_magic("load_ext", "jitviz")
    assert shell.find_cell_magic("jit") is not None


# --- %%jit -----------------------------------------------------------------------------------------

def test_jit_cell_magic_bad_f_side_effect_flagged(shell):
    res, io = run(shell, "%%jit --backend $B\ndef bad_f(x):\n"
                         "    print('I have side effects!')\n"
                         "    return jnp.sin(x) + jnp.cos(x) + x\n\nbad_f(2.0)\n")
    assert res.success, res.error_in_exec
    assert io.stdout.count("I have side effects!") == 1
    assert isinstance(shell.user_ns["bad_f"], JitFunction)
    assert shell.user_ns["bad_f"].backend == B
    text = text_of(io)
    assert "%%jit monitor" in text and "bad_f" in text and "trace" in text
    res, io = run(shell, "bad_f(2.0)\nbad_f(2.0)")
    assert "I have side effects!" not in io.stdout
    monitor = M._state(shell).monitors[-1]
    assert "side effect lost" in repr(monitor)
    s = {d["name"]: d for d in monitor.summaries()}["bad_f"]
    assert s["hits"] == 2 and s["traces"] == 1


def test_jit_cell_functions_carry_their_own_cell_number(shell):
    """IPython 9 counts a cell before running it: the nested run of a %%jit cell must still
    file its code under the cell's own number (monitor, warnings, errors, inspector)."""
    from jitviz.diagnostics import describe_code_location
    res, io = run(shell, "%%jit --backend $B -q\ndef numbered(x):\n    return x + 1\n")
    n = res.execution_count
    code = shell.user_ns["numbered"].__wrapped__.__code__
    assert shell.compile._filename_map[code.co_filename] == n
    assert describe_code_location(code) == f"numbered at cell {n}, line 2"
    res, io = run(shell, "%%jit --backend $B\ndef numbered2(x):\n    return x + 2\n")
    assert f"%%jit monitor — In [{res.execution_count}]" in text_of(io)
    after, _ = run(shell, "1 + 1")  # the shell's own count goes on from where it was
    assert after.execution_count == res.execution_count + 1


def test_jit_cell_magic_static_and_recompile_reason(shell):
    res, io = run(shell, "%%jit --backend interpret --static n\ndef f_loop(x, n):\n    y = 0.\n"
                         "    for i in range(n):\n        y = y + x\n    return y\n\n"
                         "a = f_loop(2.0, 10)\nb = f_loop(2.0, 11)\n")
    assert res.success, res.error_in_exec
    assert float(shell.user_ns["a"]) == 20.0 and float(shell.user_ns["b"]) == 22.0
    assert "static argument 'n' changed from 10 to 11" in text_of(io)


def test_jit_cell_magic_tracing_error_points_at_the_cell_line(shell):
    res, io = run(shell, "%%jit --backend interpret\ndef f_loop2(x, n):\n    y = 0.\n"
                         "    for i in range(n):\n        y = y + x\n    return y\n"
                         "f_loop2(2.0, 10)\n")
    assert not res.success
    assert isinstance(res.error_in_exec, M.CellFailed)
    assert isinstance(res.error_in_exec.error, jitviz.errors.TracerIntegerConversionError)
    text = text_of(io)
    assert f"Cell In[{res.execution_count}], line 4" in text  # line 1 is the %%jit line
    assert "--> 4 |     for i in range(n):" in text
    assert "static_argnums=(1,)" in text  # jitviz's explanation and fix
    assert "Traceback" not in text
    # the function was defined (jitted) before the failing line ran
    assert isinstance(shell.user_ns["f_loop2"], JitFunction)


def test_tracing_error_in_a_later_cell_is_compact_and_tb_is_full(shell):
    run(shell, "%%jit --backend interpret -q\ndef piecewise(x):\n    if x < 3:\n"
               "        return 3.0 * x ** 2\n    return -4 * x\n")
    res, io = run(shell, "y = 1\npiecewise(2.0)")
    assert isinstance(res.error_in_exec, jitviz.errors.TracerBoolConversionError)
    text = text_of(io)
    assert "--> 3 |     if x < 3:" in text
    assert "Traceback" not in text
    html = html_of(io)
    assert "jitviz-error" in html and "if x &lt; 3:" in html
    res, io = run(shell, "%tb")
    assert "TracerBoolConversionError" in io.stdout + io.stderr


def test_jit_cell_magic_syntax_error_points_at_the_cell_line(shell):
    res, io = run(shell, "%%jit --backend interpret\nx = 1\ndef g(x)\n    return x\n")
    assert not res.success
    err = res.error_in_exec.error
    assert isinstance(err, SyntaxError) and err.lineno == 3
    assert "line 3" in io.stdout + io.stderr
    assert "def g(x)" in io.stdout + io.stderr


def test_rerunning_the_cell_replaces_and_says_so_without_retrace_warnings(shell):
    cell = "%%jit --backend interpret\ndef h(x):\n    return x * 2\nh(1.0)\n"
    res, io = run(shell, cell)
    first = shell.user_ns["h"]
    old_monitor = M._state(shell).monitors[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", jitviz.RetraceWarning)
        for _ in range(3):
            res, io = run(shell, cell)
            assert res.success, res.error_in_exec
    assert shell.user_ns["h"] is not first
    assert "replaced h (from In [" in text_of(io)
    assert old_monitor.closed and "redefined" in repr(old_monitor)
    assert not shell.user_ns["h"].events.of_kind("retrace_churn")


def test_jit_cell_magic_quiet_and_usage_errors(shell):
    res, io = run(shell, "%%jit -q --backend interpret\ndef q(x):\n    return x\nq(1.0)\n")
    assert res.success and "%%jit monitor" not in text_of(io)
    with pytest.raises(UsageError):
        shell.run_cell_magic("jit", "--backend nope", "def z(x):\n    return x\n")
    with pytest.raises(UsageError):
        shell.run_cell_magic("jit", "--static 1n", "def z(x):\n    return x\n")


def test_live_monitor_updates_its_display_from_later_cells(shell, monkeypatch):
    monkeypatch.setattr(M, "in_kernel", lambda shell: True)
    monkeypatch.setattr(M, "_explorer", lambda attr: None)
    res, io = run(shell, "%%jit --backend interpret\ndef live(x):\n    return x + 1\n")
    assert res.success
    ids = {(o.transient or {}).get("display_id") for o in io.outputs} - {None}
    assert len(ids) == 1
    display_id = ids.pop()
    monitor = M._state(shell).monitors[-1]
    assert monitor.live and monitor.handle is not None
    res, io = run(shell, "live(1.0)\nlive(2.0)\nlive(np.ones(2))")
    assert res.success
    updates = [o for o in io.outputs
               if o.update and (o.transient or {}).get("display_id") == display_id]
    assert updates, "the monitor was not redrawn after a later cell called the function"
    last = updates[-1].data["text/plain"]
    assert "recompile" in last and "changed from" in last
    assert "text/html" in updates[-1].data


def test_monitor_escapes_user_strings():
    evil = "<img src=x onerror=alert(1)>"

    def f(x, tag):
        return x

    jf = jitviz.jit(f, static_argnames="tag", backend=B)
    jf(1.0, evil)  # (by keyword it hits a jit bug: static argnames passed as keywords)
    mon = CellMonitor(jf, names=[evil], live=False)
    html = mon._repr_html_()
    assert evil not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert evil in repr(mon)  # plain text is plain


@pytest.mark.parametrize("index", range(len(XSS_PAYLOADS)), ids=lambda i: f"payload{i}")
def test_monitor_html_keeps_every_payload_inert(index):
    """The payload as the function's name, a dict key and a keyword name (the signature and
    the recompile reason), and in the user's line an error event quotes."""
    payload = XSS_PAYLOADS[index]
    fun, (d,), kw = xss_program(payload, index)
    jf = jitviz.jit(fun, backend=B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with capture_output():  # it prints the payload
            jf(d, **kw)
            jf({payload: np.ones(4, np.float32)}, **kw)  # a recompile: the key changed shape
            with pytest.raises(TypeError):  # f32[4] + f32[2]: an error event quotes the line
                jf({payload: np.ones(4, np.float32)}, **{payload: np.ones(2, np.float32)})
    kinds = [e.kind for e in jf.events]
    assert "recompile" in kinds and "error" in kinds
    html = CellMonitor(jf, live=False)._repr_html_()
    assert_inert(html, payload, also=[f"d[{payload!r}]:f32[4]"])
    assert any(payload in e.message for e in jf.events if e.kind == "error")


# --- %jaxpr ---------------------------------------------------------------------------------------

def test_jaxpr_magic_on_plain_and_jitted_functions(shell):
    run(shell, "def plain(x):\n    return jnp.sin(x) + x\n"
               "jitted = jitviz.jit(plain, backend=B)\njitted(1.0)")
    before = shell.user_ns["jitted"].cache_info()
    n_events = len(shell.user_ns["jitted"].events)
    for callee in ("plain", "jitted"):
        res, io = run(shell, f"%jaxpr {callee}(2.0)")
        assert res.success, res.error_in_exec
        text = text_of(io)
        assert "sin a" in text and "{ lambda ; a:f32[]." in text
    res, io = run(shell, "%jaxpr jitted(np.ones(3, np.float32))")  # a new signature: traced,
    assert "f32[3]" in text_of(io)                                  # not cached, not run
    assert shell.user_ns["jitted"].cache_info() == before
    assert len(shell.user_ns["jitted"].events) == n_events


def test_jaxpr_magic_stages_static_and_errors(shell):
    run(shell, "def loop(x, n):\n    y = 0.\n    for i in range(n):\n        y = y + x\n"
               "    return y\n")
    res, io = run(shell, "%jaxpr --static n --text loop(2.0, 3)")
    assert res.success and text_of(io).count("add") == 3
    res, io = run(shell, "%jaxpr --stage optimized --static n loop(2.0, 3)")
    assert res.success and "optimized" in text_of(io)
    res, io = run(shell, "%jaxpr --stage kernels --backend interpret --static n loop(2.0, 3)")
    assert res.success and "kernel" in text_of(io)
    res, io = run(shell, "%jaxpr loop(2.0, 3)")
    assert isinstance(res.error_in_exec, jitviz.errors.TracerIntegerConversionError)
    assert "-->" in text_of(io) and "for i in range(n):" in text_of(io)
    with pytest.raises(UsageError):
        shell.run_line_magic("jaxpr", "loop")
    with pytest.raises(UsageError):
        shell.run_line_magic("jaxpr", "--stage fused loop(1.0, 2)")


def test_jaxpr_magic_call_text_is_not_var_expanded(shell):
    run(shell, "def pick(d):\n    return d['a'] * 2\n")
    res, io = run(shell, "%jaxpr pick({'a': 1.0})")
    assert res.success, res.error_in_exec
    assert "mul" in text_of(io)


# --- %jitbench -------------------------------------------------------------------------------------

def define_selu(shell):
    run(shell, "def selu(x, alpha=1.67, lambda_=1.05):\n"
               "    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)\n"
               "selu_jit = jitviz.jit(selu, backend=B)\nx = jnp.arange(1000.0)\nselu_jit(x)")


def test_jitbench_magic_returns_result_and_leaves_user_cache_alone(shell):
    define_selu(shell)
    user = shell.user_ns["selu_jit"]
    before, n_events = user.cache_info(), len(user.events)
    res, io = run(shell, "r = %jitbench -n 3 -r 4 --warmup 2 -o -q selu_jit(x)")
    assert res.success, res.error_in_exec
    r = shell.user_ns["r"]
    assert isinstance(r, BenchResult)
    assert set(r.timings) == {B, "baseline"}
    for t in r.timings.values():
        assert t.loops == 3 and t.repeats == 4 and len(t.per_call) == 4
        assert t.min <= t.median <= max(t.per_call) and t.iqr >= 0
    assert r.cold.total_s >= r.cold.trace_s + r.cold.compile_s
    assert r.cold.trace_s > 0 and r.cold.backend == B
    assert r.speedup == pytest.approx(r.timings["baseline"].median / r.timings[B].median)
    json.dumps(r.to_dict())
    assert text_of(io).strip() == ""  # -q
    assert user.cache_info() == before and len(user.events) == n_events


def test_jitbench_magic_report_text_and_html(shell):
    res, io = run(shell, "%jitbench -n 2 -r 2 --backend $B selu(x)")
    assert res.success, res.error_in_exec
    text = text_of(io)
    assert "cold call (interpret, fresh cache)" in text and "baseline (python)" in text
    assert "break-even" in text
    html = html_of(io)
    assert "<svg" in html and "<table" in html


def test_jitbench_magic_tiny_function_break_even_never(shell):
    run(shell, "def tiny(x, y):\n    return x + y\n")
    res, io = run(shell, "r2 = %jitbench -n 200 -r 3 --backend interpret -o tiny(1.0, 2.0)")
    r = shell.user_ns["r2"]
    # a tiny function: whatever the machine, the jitted call must not beat 1 Python add by
    # enough to matter; the relation between speedup and break-even always holds
    if r.speedup <= 1:
        assert r.break_even_calls == float("inf") and "never" in text_of(io)
    else:
        assert r.break_even_calls >= 1


def test_jitbench_magic_usage_errors(shell):
    define_selu(shell)  # each line is wrong in its options or call, not in the user's names
    for line in ("--backend nope selu(x)", "-n 0 selu(x)", "selu", "selu(x", "x.shape(",
                 "--baseline numpy selu(x)"):
        with pytest.raises(UsageError):
            shell.run_line_magic("jitbench", line)


def test_jitbench_magic_tracing_error_is_compact(shell):
    res, io = run(shell, "%jitbench -n 1 -r 1 --backend interpret loop(2.0, 3)")
    assert isinstance(res.error_in_exec, jitviz.errors.TracerIntegerConversionError)
    assert "--> 3 |     for i in range(n):" in text_of(io)


def test_split_options_leaves_the_call_verbatim(shell):
    parser = M.JitvizMagics.jitbench.parser
    opts, call = M.split_options(parser, "-n5 -r 3 --backend=interpret -o f(x, 'a -n b', {1: 2})")
    assert (opts.n, opts.r, opts.backend, opts.o) == (5, 3, "interpret", True)
    assert call == "f(x, 'a -n b', {1: 2})"
    fn, args, kwargs = M.eval_call("max(*[3, 1], key=abs)", {})
    assert fn is max and args == (3, 1) and kwargs == {"key": abs}
    assert np.isscalar(M.eval_call("abs(-2)", {})[1][0])


def test_jit_cell_magic_uses_the_explorer_monitor_when_there_is_one(shell, monkeypatch):
    made = []

    class FakeWidget:
        def __init__(self, *fns):
            made.append(fns)

        def _repr_html_(self):
            return "<b>explorer monitor</b>"

        def __repr__(self):
            return "FakeWidget"

    monkeypatch.setattr(M, "in_kernel", lambda shell: True)
    monkeypatch.setattr(M, "_explorer", lambda attr: FakeWidget if attr == "monitor" else None)
    res, io = run(shell, "%%jit --backend interpret\ndef e1(x):\n    return x\n"
                         "def e2(x):\n    return x\ne1(1.0)\n")
    assert res.success, res.error_in_exec
    # made once, with both functions, before the call on the last line
    assert len(made) == 1 and [f.__name__ for f in made[0]] == ["e1", "e2"]
    assert "FakeWidget" in text_of(io) and "%%jit monitor" not in text_of(io)


def test_monitor_redraws_are_throttled_and_flushed():
    class Handle:
        updates = 0

        def update(self, obj):
            Handle.updates += 1
            repr(obj)

    jf = jitviz.jit(lambda x: x + 1, backend=B)
    mon = CellMonitor(jf, names=["inc"], live=True, interval=3600)
    mon.handle = Handle()
    for _ in range(500):
        jf(1.0)
    assert mon.redraws <= 1  # not one display update per call
    mon.flush()
    assert 1 <= mon.redraws <= 2 and Handle.updates == mon.redraws
    assert "cache hits" in repr(mon) and " 499 " in repr(mon)
    mon.close("bye")
    jf(2.0)
    assert mon.closed and "bye" in repr(mon)
    n = Handle.updates
    mon.flush()
    assert Handle.updates == n  # a closed monitor no longer follows


def test_jit_cell_magic_passes_fastmath_and_parallel(shell):
    res, io = run(shell, "%%jit -q --backend interpret --fastmath --parallel\n"
                         "def fm(x):\n    return x * 2\n")
    assert res.success
    fm = shell.user_ns["fm"]
    assert fm.fastmath and fm.parallel and fm.backend == "interpret"


def test_jitbench_html_escapes_the_call_text(shell):
    run(shell, "def tagged(x, tag):\n    return x\ntagged_jit = jitviz.jit(tagged, "
               "static_argnums=1, backend=B)")
    res, io = run(shell, '%jitbench -n 1 -r 1 tagged_jit(1.0, "<img src=x onerror=alert(1)>")')
    assert res.success, res.error_in_exec
    html = html_of(io)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest.mark.parametrize("index", range(len(XSS_PAYLOADS)), ids=lambda i: f"payload{i}")
def test_jitbench_html_keeps_every_payload_inert(index):
    """The payload as the call text, the function's name, the argument paths of the
    signature and the printed text (a note)."""
    payload = XSS_PAYLOADS[index]
    fun, args, kw = xss_program(payload, index)
    with capture_output():
        result = jitbench(fun, *args, kwargs=kw, n=1, r=1, warmup=0, backends=B,
                                 call=f"{payload}(d, **kw)")
    assert_inert(result.report()._repr_html_(), payload,
                 also=[f"{payload}(d, **kw)", f"d[{payload!r}]:f32[3]"])
