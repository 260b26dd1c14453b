"""A backend failing to compile generated code is one compact jitviz error, never pages of
Numba internals: what failed, the equation, the user's line, the head of Numba's message and
the generated lines around the failure. The rest stays reachable as data (and as __cause__)."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.backends import cpu as cpu_mod
from jitviz.backends.cpu.cache import KernelCache
from jitviz.core.registry import PRIMITIVES
from jitviz.errors import CompilationError
from jitviz.magics.errorview import ErrorView
from jitviz.passes import run_pipeline

from cpu_helpers import patch_cpu_rule, trace
from helpers import XSS

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def _compile(tmp_path, f):
    closed = run_pipeline(trace(f, X))[-1][1]
    return cpu_mod.CpuBackend(KernelCache(str(tmp_path))).compile(closed)


def _sin_of(x):
    return jnp.sin(x) + 1.0  # the user's line


def test_a_typing_failure_is_compact_and_keeps_the_details(tmp_path, monkeypatch):
    # a float plus a string: Numba's typing error lists every candidate overload
    patch_cpu_rule(monkeypatch, PRIMITIVES["sin"], lambda a, *_: f"({a[0]} + 'oops')")
    with pytest.raises(CompilationError) as info:
        _compile(tmp_path, _sin_of)
    err = info.value
    text = str(err)
    assert "return jnp.sin(x) + 1.0  # the user's line" in text
    assert len(text.splitlines()) < 35 < len(err.backend_message.splitlines()) + 20
    assert "\x1b[" not in text  # Numba's terminal colours do not reach the user
    # the whole generated module and Numba's whole message are there as data
    assert "def " in err.generated_source and "'oops'" in err.generated_source
    assert "No implementation of function" in err.backend_message
    marked = [ln for ln in text.splitlines() if ln.startswith(">")]
    assert len(marked) == 1 and "'oops'" in marked[0]  # the failing generated line
    assert err.source is not None and err.source.code.startswith("return jnp.sin(x)")
    assert err.__cause__ is not None  # %tb still shows Numba's own traceback


def test_an_exception_numba_lets_out_is_a_compilation_error(tmp_path, monkeypatch):
    # e.g. Numba's `ImportError: scipy 0.16+ is required for linear algebra` for np.dot
    def no_blas(self, text, dispatcher, sig):
        raise ImportError("scipy 0.16+ is required for linear algebra")
    monkeypatch.setattr(KernelCache, "compile", no_blas)
    with pytest.raises(CompilationError) as info:
        _compile(tmp_path, _sin_of)
    err = info.value
    assert "ImportError: scipy 0.16+ is required for linear algebra" in str(err)
    assert isinstance(err.__cause__, ImportError)
    assert err.generated_source and err.kernel


def test_the_notebook_view_folds_the_generated_source(tmp_path, monkeypatch):
    patch_cpu_rule(monkeypatch, PRIMITIVES["sin"], lambda a, *_: f"no_such_fn({a[0]}) # {XSS}")
    with pytest.raises(CompilationError) as info:
        _compile(tmp_path, _sin_of)
    html = ErrorView(info.value)._repr_html_()
    assert "<details" in html and "generated source" in html
    assert XSS not in html and "no_such_fn" in html
    # the folded block holds the whole module; the visible message does not repeat it
    visible = html.split("<details")[0]
    assert "@njit" not in visible and "@njit" in html


def test_jit_shows_the_compact_error_through_the_call(monkeypatch):
    patch_cpu_rule(monkeypatch, PRIMITIVES["cos"], lambda a, *_: f"no_such_fn({a[0]})")
    f = jitviz.jit(lambda x: jnp.cos(x) * 3.0, backend="cpu")
    with pytest.raises(CompilationError, match="could not compile"):
        f(X)
