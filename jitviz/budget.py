"""Compile budgets: say how many compiles a piece of code may cause, and fail at the call that
exceeds it — not at the end, when the time is already spent.

    with jitviz.expect_compiles(0):          # a warm loop must not compile
        for batch in batches:
            step(params, batch)

    step = jitviz.jit(step, max_compiles=3)  # warn past 3 compiles (strict=True raises)

Budgets are charged by `jit` itself just before it traces (so an exceeded budget costs no trace
and no compile). They nest, and they follow the context (`contextvars`): a budget opened in
one thread does not count another thread's compiles. `jitviz_compiles`, a pytest fixture
registered by jitviz's `pytest11` entry point, records the compiles of one test.
"""
from __future__ import annotations

import contextvars
import warnings
from dataclasses import dataclass

from .core.ir import SourceInfo
from .core.source import notebook_cell_of
from .errors import CompileBudgetWarning, UnexpectedCompileError

__all__ = ["expect_compiles", "CompileRecord", "CompileCounter", "charge", "fix_for"]

_open: contextvars.ContextVar = contextvars.ContextVar("jitviz_compile_budgets", default=())

# What to do about each kind of cache miss (jit.key_change_kinds, plus first compiles, new
# function objects and evictions): one concrete fix per pattern.
FIXES = {
    "first": "the first compile of each function is expected: budget for it",
    "shape": "a changing dimension compiles once per size: pad or bucket it (round sizes up "
             "to a few fixed lengths), or make the shape static if it takes few values",
    "dtype": "the same argument arrives with different dtypes: cast it at the call site "
             "(e.g. x.astype(jnp.float32)) so every call has one dtype",
    "weak_type": "a Python scalar in one call and an array (or NumPy scalar) in another: pass "
                 "the same kind each time (e.g. jnp.float32(x), or always a Python float)",
    "static": "a static argument takes a new value each time: if it takes many values, make "
              "it a traced argument (drop it from static_argnums/static_argnames)",
    "pytree": "the arguments' structure changes (a dict with other keys, a list of another "
              "length): keep one structure, or split the call",
    "new_function_object": "jit of a lambda or nested def made anew on each call: define the "
                           "function once and hoist jit out of the loop",
    "evicted": "entries were evicted or the cache cleared: raise jitviz.config.jit_cache_size, "
               "or stop calling clear_cache()",
    "dtype_mode": "enable_x64 or keep_float64 changed between calls: each setting traces its "
                  "own program (as in JAX); set them once, at the start",
    "captured_global": "a global or closure changed after it was baked in as a constant: pass "
                       "it as an argument",
}


def fix_for(kind: str) -> str:
    return FIXES.get(kind, "")


@dataclass(frozen=True)
class CompileRecord:
    """One compile a budget saw: the function, its signature, why it missed the cache."""
    function: str
    signature: str
    reason: str | None
    kinds: tuple
    call_site: SourceInfo | None

    def describe(self) -> str:
        why = self.reason or "first compile"
        return f"{self.function}({self.signature}) at {_where(self.call_site)}: {why}"


def _where(site: SourceInfo | None) -> str:
    """`cell 5, line 3 (y = f(x))` in a notebook, `file.py:3 (y = f(x))` elsewhere."""
    if site is None:
        return "an unknown line"
    cell = notebook_cell_of(site.file)
    place = f"{site.file}:{site.line}" if cell is None else f"cell {cell}, line {site.line}"
    return f"{place} ({site.code})" if site.code else place


class CompileCounter:
    """Records the compiles made while it is open; `limit` (None: unlimited) makes the one
    past it raise `UnexpectedCompileError`."""

    def __init__(self, limit: int | None = None, label: str = "CompileCounter"):
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise ValueError(f"a compile budget is a count >= 0, got {limit!r}")
        self.limit = limit
        self.label = label
        self.records: list[CompileRecord] = []
        self._token = None

    @property
    def count(self) -> int:
        return len(self.records)

    def of(self, fun) -> list[CompileRecord]:
        """The compiles of one function (a jitted function, the plain one, or its name)."""
        name = fun if isinstance(fun, str) else \
            getattr(getattr(fun, "__wrapped__", fun), "__name__", repr(fun))
        return [r for r in self.records if r.function == name]

    def expect(self, limit: int) -> "expect_compiles":
        return expect_compiles(limit)

    def __enter__(self):
        self._token = _open.set(_open.get() + (self,))
        return self

    def __exit__(self, *exc):
        _open.reset(self._token)
        return False

    def _refuse_if_over(self, record: CompileRecord):
        if self.limit is not None and self.count >= self.limit:
            raise _over_budget(self, record)

    def __repr__(self):
        lines = [f"{self.label}: {self.count} compile(s)"
                 + ("" if self.limit is None else f" of {self.limit} allowed")]
        lines += [f"  {r.describe()}" for r in self.records]
        return "\n".join(lines)


class expect_compiles(CompileCounter):
    """`with jitviz.expect_compiles(n):` allows at most `n` compiles (of any jitted
    function) inside; the call that would make one more raises `UnexpectedCompileError`
    before tracing, naming the function, the reason and the user's line."""

    def __init__(self, n: int = 0):
        super().__init__(n, f"expect_compiles({n})")


def _over_budget(budget: CompileCounter, record: CompileRecord) -> UnexpectedCompileError:
    kind = next((k for k in record.kinds if k in FIXES), "first")
    seen = "".join(f"\n  already: {r.describe()}" for r in budget.records)
    return UnexpectedCompileError(
        f"{budget.label} exceeded: this call would compile {record.function} "
        f"({record.signature}) at {_where(record.call_site)}"
        + (f": {record.reason}" if record.reason else " for the first time")
        + f".{seen}\nFix: {fix_for(kind)}",
        function=record.function, reason=record.reason, category=kind,
        call_site=record.call_site)


def charge(jf, signature: str, reason: str | None, kinds: tuple, call_site) -> None:
    """Called by jit just before it traces a new specialization of `jf`."""
    budgets = _open.get()
    limit = getattr(jf, "max_compiles", None)
    if not budgets and limit is None:
        return
    record = CompileRecord(jf._cache.name, signature, reason, tuple(kinds), call_site)
    for budget in budgets:  # all of them agree before any counts it
        budget._refuse_if_over(record)
    for budget in budgets:
        budget.records.append(record)
    if limit is not None and jf._cache.compiles >= limit:
        _function_over_budget(jf, limit, record)


def _function_over_budget(jf, limit: int, record: CompileRecord) -> None:
    kind = next((k for k in record.kinds if k in FIXES), "first")
    message = (f"{record.function} is about to compile again (compile number "
               f"{jf._cache.compiles + 1}, max_compiles={limit}) at {_where(record.call_site)}"
               + (f": {record.reason}" if record.reason else "") + f". Fix: {fix_for(kind)}")
    if jf.strict:
        raise UnexpectedCompileError(message, function=record.function, reason=record.reason,
                                     category=kind, call_site=record.call_site)
    if not jf._cache.events.warned.intersection({("budget", limit)}):
        jf._cache.events.warned.add(("budget", limit))  # once per function and limit
        warnings.warn(CompileBudgetWarning(message), stacklevel=5)
