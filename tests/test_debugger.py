"""`jitviz.debug.breakpoint`: it stops when the program runs (not while tracing), shows the
caller's frame with runtime values, and its prompt (`jdb`) answers as JAX's does. Each test
drives the prompt with a fake stdin (`io.StringIO`) and reads what it printed."""
from __future__ import annotations

import functools
import io
import os
import re

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from helpers import run_program_in_simulator

jax = pytest.importorskip("jax")

BACKENDS = ["interpret", "cpu"]
SESSION = "p x\np y\np n\np x + y\npp {'y': y}\nu\nd\nd\nl\nw\nfoo\nc\n"


def _apis(backend):
    """(jit, numpy, debug) of jitviz on `backend`, and of JAX."""
    ours = (functools.partial(jitviz.jit, backend=backend), jnp, jitviz.debug)
    return ours, (jax.jit, jax.numpy, jax.debug)


def _stopping_program(jit, np_, debug, stdin, stdout):
    @jit
    def f(x):
        y = np_.sin(x) * 2
        n = 3  # noqa: F841 (the debugger reads it)
        debug.breakpoint(stdin=stdin, stdout=stdout)
        return y
    return f


def _transcript(apis, make, commands, *args):
    out = io.StringIO()
    f = make(*apis, io.StringIO(commands), out)
    results = [np.asarray(f(a)) for a in args]
    return out.getvalue(), results


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # JAX flattening the frames' locals
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_prompt_answers_as_jax_s_with_runtime_values(backend):
    """Two calls, one session each: the values are those of each call (the breakpoint runs
    when the program runs); p, pp, u, d, l, w and an error read as JAX's jdb."""
    ours_api, jax_api = _apis(backend)
    commands = SESSION * 2
    ours, ours_results = _transcript(ours_api, _stopping_program, commands, 2.0,
                                     np.float32(3.0))
    theirs, jax_results = _transcript(jax_api, _stopping_program, commands, 2.0,
                                      np.float32(3.0))
    np.testing.assert_allclose(ours_results, jax_results, rtol=1e-6)
    # `w` lists every caller (pytest's frames differ between the two runs): compare the
    # frames up to the test's own, and the rest of the transcript as it is
    assert _cut_callers(ours) == _cut_callers(theirs)
    assert "(jdb) Array(2., dtype=float32)" in ours and "(jdb) Array(3., dtype=float32)" in ours
    assert "->          debug.breakpoint(stdin=stdin, stdout=stdout)" in ours


def _cut_callers(transcript):
    """The transcript with each `w` traceback reduced to its last four lines (this file's
    frames: the call in _transcript and the breakpoint's line)."""
    out, lines = [], transcript.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].endswith("Traceback:"):
            j = i + 1
            while j < len(lines) and lines[j].startswith("  "):
                j += 1
            out += [lines[i]] + lines[max(i + 1, j - 4):j]
            i = j
        else:
            out.append(lines[i])
            i += 1
    return out


def test_help_lists_jdb_s_commands():
    out = io.StringIO()
    jitviz.debug.breakpoint(stdin=io.StringIO("help\nhelp p\nc\n"), stdout=out)
    for command in ("p", "pp", "list", "up", "down", "where", "continue", "quit"):
        assert f" {command} " in out.getvalue().replace("\n", " ")
    assert "Evaluate the expression in the current frame" in out.getvalue()


def test_it_stops_only_when_the_program_runs():
    out = io.StringIO()
    f = _stopping_program(jitviz.jit, jnp, jitviz.debug, io.StringIO("p x\nc\n" * 3), out)
    jitviz.make_jaxpr(f)(1.0)
    f.lower(1.0).compile()
    assert out.getvalue() == ""  # tracing and compiling do not stop
    f(5.0)
    assert out.getvalue().count("Entering jdb:") == 1
    assert "Array(5., dtype=float32)" in out.getvalue()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_breakpoint_in_a_branch_not_taken_does_not_stop(backend):
    """JAX's debugging notebook: a breakpoint inside a cond branch stops only when the
    branch runs."""
    out = io.StringIO()

    def f(x):
        def stop(x):
            jitviz.debug.breakpoint(stdin=io.StringIO("p x\nc\n"), stdout=out)
            return x
        return lax.cond(jnp.isfinite(x), lambda x: x, stop, x)
    g = jitviz.jit(f, backend=backend)
    assert float(g(1.0)) == 1.0 and out.getvalue() == ""
    g(np.float32(np.inf))
    assert out.getvalue() == "Entering jdb:\n(jdb) Array(inf, dtype=float32)\n(jdb) "


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # JAX flattening the frames' locals
def test_under_vmap_it_stops_once_per_example_as_jax():
    transcripts = []
    for api, np_ in ((jitviz, jnp), (jax, jax.numpy)):
        out = io.StringIO()
        stdin = io.StringIO("p x\nc\n" * 3)
        api.vmap(lambda x: (api.debug.breakpoint(stdin=stdin, stdout=out), x * 2)[1])(
            np_.arange(3.0))
        transcripts.append(out.getvalue())
    assert transcripts[0] == transcripts[1]
    assert transcripts[0].count("Entering jdb:") == 3


def test_it_runs_in_program_order_with_debug_print(capsys):
    @jitviz.jit
    def f(x):
        jitviz.debug.print("before {}", x)
        jitviz.debug.breakpoint(stdin=io.StringIO("p x * 10\nc\n"))
        jitviz.debug.print("after {}", x)
        return x
    f(np.float32(1.5))
    assert capsys.readouterr().out == (
        "before 1.5\nEntering jdb:\n(jdb) Array(15., dtype=float32)\n(jdb) after 1.5\n")


def test_without_input_it_continues_instead_of_waiting():
    out = io.StringIO()
    f = jitviz.jit(lambda x: (jitviz.debug.breakpoint(stdin=io.StringIO(""), stdout=out),
                              x + 1)[1])
    assert float(f(1.0)) == 2.0
    assert out.getvalue() == "Entering jdb:\n(jdb) no more input (EOF): continuing\n"


def test_quit_stops_the_program_as_jax_s():
    f = jitviz.jit(lambda x: (jitviz.debug.breakpoint(stdin=io.StringIO("q\n"),
                                                      stdout=io.StringIO()), x)[1])
    with pytest.raises(SystemExit):
        f(1.0)


def test_eager_code_stops_at_once_and_sees_its_locals():
    out = io.StringIO()
    a, b = jnp.arange(3), "text"  # noqa: F841 (read by the debugger)
    jitviz.debug.breakpoint(stdin=io.StringIO("p a + 1\np b\nc\n"), stdout=out)
    assert out.getvalue() == ("Entering jdb:\n(jdb) Array([1, 2, 3], dtype=int32)\n"
                              "(jdb) 'text'\n(jdb) ")


@pytest.mark.filterwarnings("ignore::jitviz.errors.RetraceWarning")  # one lambda per option
def test_num_frames_and_filter_frames():
    def run(**kw):
        out = io.StringIO()
        jitviz.jit(lambda x: (jitviz.debug.breakpoint(stdin=io.StringIO("u\nw\nc\n"),
                                                      stdout=out, **kw), x)[1])(1.0)
        return out.getvalue()
    at_top = "(jdb) At topmost " + "frame."  # split: the listed source shows this line
    one = run(num_frames=1)
    assert at_top in one and one.count('  File "') == 1
    assert at_top not in run() and run().count('  File "') > 1
    package = os.path.dirname(jitviz.__file__)
    assert not [f for f in _files(run()) if f.startswith(package)]  # jitviz's frames left out
    assert os.path.join(package, "jit.py") in _files(run(filter_frames=False))


def _files(transcript):
    return re.findall(r'  File "([^"]+)", line', transcript)


def test_bad_arguments_name_the_fix():
    with pytest.raises(ValueError, match="backend='web'.*'cli'"):
        jitviz.debug.breakpoint(backend="web")
    with pytest.raises(ValueError, match="num_frames"):
        jitviz.debug.breakpoint(num_frames=0)
    with pytest.raises(NotImplementedError, match="ordered=True"):
        jitviz.debug.breakpoint(token=jnp.zeros(()))


CUDA_PROGRAM = """
import io, numpy as np, jitviz, jitviz.numpy as jnp
out = io.StringIO()

@jitviz.jit(backend="cuda")
def f(x):
    y = jnp.sin(x) * 2
    jitviz.debug.breakpoint(stdin=io.StringIO("p y\\nc\\n"), stdout=out)
    return y + 1

result = f(np.arange(3, dtype=np.float32))
assert out.getvalue() == ("Entering jdb:\\n(jdb) Array([0.       , 1.682942 , 1.8185948], "
                          "dtype=float32)\\n(jdb) "), out.getvalue()
np.testing.assert_allclose(np.asarray(result), np.sin(np.arange(3)) * 2 + 1, rtol=1e-6)
print("ok")
"""


def test_cuda_stops_between_kernels_in_the_simulator():
    assert run_program_in_simulator(CUDA_PROGRAM).strip().endswith("ok")


def test_ordered_is_jax_s_ordered_debug_effect():
    for ordered, effect in ((False, "effect=Debug"), (True, "effect=OrderedDebug")):
        text = str(jitviz.make_jaxpr(
            lambda x: (jitviz.debug.breakpoint(ordered=ordered), x + 1)[1])(1.0))
        assert effect in text and "debug_callback" in text
