"""The recompile ledger (`jitviz.ledger()`, `%jitledger`) and compile budgets
(`expect_compiles`, `jit(max_compiles=...)`, the `jitviz_compiles` pytest fixture)."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.errors import CompileBudgetWarning, UnexpectedCompileError
from jitviz.ledger import Ledger, _row_of

pytest_plugins = ["pytester"]

B = "interpret"  # budgets and the ledger are about the cache, not the backend
f32 = np.float32


def _row(jf):
    return _row_of(jf._cache)


def _group(row, kind):
    (g,) = [g for g in row.reasons if g.kind == kind]
    return g


def test_ledger_groups_each_kind_of_miss_with_its_call_sites_and_fix():
    def scale(x, n):
        return x * n
    f = jitviz.jit(scale, static_argnums=1, backend=B)
    f(np.ones(3, f32), 2)                      # first compile
    f(np.ones(3, f32), 3)                      # static value
    f(np.ones(4, f32), 3)                      # shape
    f(np.ones(4, np.int32), 3)                 # dtype
    f(np.ones(4, np.int32), 3)                 # a hit
    row = _row(f)
    assert row.compiles == 4 and row.hits == 1 and row.recompiles == 3
    assert [g.kind for g in row.reasons][0] == "first"
    assert {g.kind: g.count for g in row.reasons} == {"first": 1, "static": 1, "shape": 1,
                                                      "dtype": 1}
    static = _group(row, "static")
    assert "static argument 'n' changed from 2 to 3" in static.examples[0]
    assert "static_argnums" in static.fix
    (site,) = static.call_sites  # the user's line in this file, not a jitviz frame
    assert "test_ledger.py" in site and "f(np.ones(3, f32), 3)" in site
    assert "pad or bucket" in _group(row, "shape").fix
    assert row.seconds > 0


def test_weak_types_new_function_objects_evictions_and_globals_are_named():
    f = jitviz.jit(lambda x: x + 1, backend=B)
    f(f32(1.0))
    f(1.0)  # a Python float: weakly typed f32[]
    assert _group(_row(f), "weak_type").count == 1

    for _ in range(2):
        g = jitviz.jit(lambda x: x * 2, backend=B)  # a new function object each time
        g(np.ones(2, f32))
    assert _group(_row(g), "new_function_object").count == 1
    assert "hoist jit" in _group(_row(g), "new_function_object").fix

    h = jitviz.jit(lambda x: x - 1, backend=B)
    h(np.ones(2, f32))
    h.clear_cache()
    h(np.ones(2, f32))
    assert _group(_row(h), "evicted").count == 1

    global factor
    factor = 1.0
    k = jitviz.jit(uses_global, backend=B)
    k(np.ones(2, f32))
    factor = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitviz.JitvizWarning)
        k(np.ones(2, f32))
    assert _group(_row(k), "captured_global").count >= 1
    assert "argument" in _group(_row(k), "captured_global").fix


factor = 1.0


def uses_global(x):
    return x * factor


def test_ledger_ranks_by_time_and_renders_as_text_and_escaped_html():
    def cheap(x):
        return x + 1

    def costly(x):
        for _ in range(60):  # unrolled: a long trace
            x = jnp.sin(x)
        return x
    a = jitviz.jit(cheap, backend=B)
    b = jitviz.jit(costly, backend=B)
    a(f32(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitviz.JitvizWarning)
        b(f32(1))
    measured = [_row(a), _row(b)]
    assert all(r.trace_s > 0 and r.compile_s >= 0 for r in measured)
    # the ranking under test, on times set here: measured ones depend on the machine's load
    # and on the kernel cache (CI once traced `cheap` slower than `costly`)
    rows = [dataclasses.replace(measured[0], trace_s=1e-3, compile_s=2e-3),
            dataclasses.replace(measured[1], trace_s=5e-3, compile_s=4e-2)]
    led = Ledger(rows)
    assert [r.name for r in led.rows] == ["costly", "cheap"]
    text = repr(led)
    assert text.index("costly") < text.index("cheap") and "first compile" in text
    evil = "<img src=x onerror=alert(1)>"
    rows[0].reasons[0].examples.append(evil)
    html = Ledger(rows)._repr_html_()
    assert evil not in html and "&lt;img" in html
    assert any(r.name == "cheap" for r in jitviz.ledger().rows)  # the session-wide ledger


@pytest.mark.filterwarnings("ignore::jitviz.errors.SideEffectWarning")  # `traced` is on purpose
def test_expect_compiles_raises_at_the_call_that_exceeds_it_before_tracing():
    traced = []

    def step(x):
        traced.append(x.shape)
        return x * 2
    f = jitviz.jit(step, backend=B)
    f(np.ones(3, f32))
    with jitviz.expect_compiles(1) as budget:
        f(np.ones(3, f32))  # a hit: free
        f(np.ones(4, f32))  # the one allowed compile
        with pytest.raises(UnexpectedCompileError) as info:
            f(np.ones(5, f32))  # the budget's line
    err = info.value
    assert err.function == "step" and err.category == "shape"
    assert "argument 'x' changed from f32[4] to f32[5]" in str(err)
    assert "f(np.ones(5, f32))  # the budget's line" in str(err)
    assert "Fix: a changing dimension" in str(err)
    assert traced == [(3,), (4,)]  # the refused call was never traced
    assert budget.count == 1 and budget.of(f)[0].signature.startswith("x:f32[4]")
    f(np.ones(5, f32))  # outside the block: compiles as usual


def test_budgets_nest_and_reject_bad_limits():
    f = jitviz.jit(lambda x: x + 3, backend=B)
    with jitviz.expect_compiles(5) as outer:
        with jitviz.expect_compiles(0):
            with pytest.raises(UnexpectedCompileError, match="first time"):
                f(f32(1))
        f(f32(1))
    assert outer.count == 1
    with pytest.raises(ValueError, match="count >= 0"):
        jitviz.expect_compiles(-1)
    with pytest.raises(ValueError, match="max_compiles"):
        jitviz.jit(lambda x: x, max_compiles=-2)


def test_max_compiles_warns_once_or_raises_when_strict():
    f = jitviz.jit(lambda x: x * 5, backend=B, max_compiles=2)
    f(np.ones(1, f32))
    f(np.ones(2, f32))
    with pytest.warns(CompileBudgetWarning, match=r"compile number 3, max_compiles=2"):
        f(np.ones(3, f32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileBudgetWarning)
        f(np.ones(4, f32))  # warned once per function: no second warning
    assert f.cache_info().compiles == 4
    g = jitviz.jit(lambda x: x * 6, backend=B, max_compiles=1, strict=True)
    g(np.ones(1, f32))
    with pytest.raises(UnexpectedCompileError, match="max_compiles=1"):
        g(np.ones(2, f32))
    assert g.cache_info().compiles == 1


def test_the_pytest_fixture_through_the_entry_point(pytester):
    pytester.makepyfile(
        """
        import numpy as np
        import pytest
        import jitviz
        from jitviz.errors import UnexpectedCompileError

        f = jitviz.jit(lambda x: x + 1, backend="interpret")

        def test_counts(jitviz_compiles):
            f(np.ones(2, np.float32))
            f(np.ones(2, np.float32))
            f(np.ones(3, np.float32))
            assert jitviz_compiles.count == 2, jitviz_compiles
            assert [r.kinds for r in jitviz_compiles.records] == [("first",), ("shape",)]

        def test_expect(jitviz_compiles):
            f(np.ones(7, np.float32))
            with pytest.raises(UnexpectedCompileError):
                with jitviz_compiles.expect(0):
                    f(np.ones(8, np.float32))

        def test_fails_with_the_compiles_listed(jitviz_compiles):
            f(np.ones(9, np.float32))
            assert jitviz_compiles.count == 0, jitviz_compiles
        """)
    # `-p jitviz` is not given: the fixture comes from the installed entry point
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()  # the failure lists the unexpected compile and its reason
    assert "jitviz_compiles: 1 compile(s)" in out
    assert "<lambda>(x:f32[9])" in out and "changed from f32[7] to f32[9]" in out


def test_jitledger_magic_and_live_mode():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from jitviz.ledger import LiveLedger
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jitviz")
    f = jitviz.jit(lambda x: x / 2, backend=B)
    shell.user_ns["f_ledger_magic"] = f
    f(np.ones(2, f32))
    with capture_output() as io:
        shell.run_line_magic("jitledger", "")
    (out,) = io.outputs
    assert "jit ledger" in out.data["text/plain"] and "<table" in out.data["text/html"]
    with capture_output():
        shell.run_line_magic("jitledger", "--live")
    live = LiveLedger._current
    assert live is not None
    seen = []
    live.handle.update = lambda obj: seen.append(obj)
    f(np.ones(3, f32))  # a compile redraws the table
    assert seen and isinstance(seen[-1], Ledger)
    shell.run_line_magic("jitledger", "--stop")
    assert LiveLedger._current is None
    n = len(seen)
    f(np.ones(4, f32))
    assert len(seen) == n  # stopped: no more redraws


@pytest.mark.filterwarnings("ignore::jitviz.RetraceWarning")  # the churn is the point
def test_functions_that_are_gone_stay_in_the_ledger_merged_by_definition():
    import gc
    import weakref
    refs = []
    for _ in range(4):  # the tutorials' jit-of-a-lambda-in-a-loop: each cache dies young
        g = jitviz.jit(lambda x: x * 7 - 1, backend=B)
        g(np.ones(2, f32))
        refs.append(weakref.ref(g._cache))
    location = g._cache.location
    del g
    gc.collect()
    assert all(r() is None for r in refs)  # the ledger keeps no cache alive
    (row,) = [r for r in jitviz.ledger().rows
              if r.location.endswith(location.rpartition(":")[2]) and r.name == "<lambda>"
              and r.compiles >= 4]
    assert _group(row, "first").count >= 1
    assert _group(row, "new_function_object").count >= 3
