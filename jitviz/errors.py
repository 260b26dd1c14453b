"""jitviz's exceptions and warnings, named and arranged as JAX's (`jax.errors`).

Every tracing error is built by `jitviz.core.explain`, which adds the function being
traced, the arguments the value depends on, the user's source line and the fix.
"""
from __future__ import annotations


class JitvizError(Exception):
    """Base of jitviz's own errors that are not TypeError/IndexError in JAX."""


class JAXTypeError(TypeError):
    """Base of the tracer errors, a TypeError as in JAX."""


class JAXIndexError(IndexError):
    """Base of the indexing errors, an IndexError as in JAX."""


class ConcretizationTypeError(JAXTypeError):
    """A traced (abstract) value was used where Python needs a concrete one."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool(tracer)`: an `if`/`while` on a traced value."""


class TracerIntegerConversionError(JAXTypeError):
    """`tracer.__index__()`: a traced value used as a Python int (range, indexing a list)."""


class TracerArrayConversionError(JAXTypeError):
    """`np.asarray(tracer)`: a traced value handed to code that needs a real NumPy array."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """`x[mask]` with a traced boolean mask: the result's shape would depend on values."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer used after the trace that made it has ended (it leaked)."""


class UnsupportedOperationError(JitvizError, TypeError):
    """A NumPy function or operation that jitviz cannot trace."""


class CompilationError(JitvizError):
    """A backend rejected generated code.

    `str(err)` is compact: what failed, the equation and the user's line, the first lines of
    the backend's message and the generated lines around the failure. The rest is kept as
    data: `generated_source` (the whole text), `backend_message` (everything the backend
    said), `source` (the user's line, as for tracing errors), `eqn` and `kernel`; the
    backend's own traceback is the `__cause__` (`%tb` shows it).
    """

    def __init__(self, summary: str, *, generated_source: str | None = None,
                 backend_message: str | None = None, failing_line: int | None = None,
                 eqn=None, kernel: str | None = None):
        self.summary = summary
        self.generated_source = generated_source
        self.backend_message = backend_message
        self.failing_line = failing_line
        self.eqn, self.kernel = eqn, kernel
        self.source = getattr(eqn, "source", None)
        super().__init__(summary)

    def __str__(self) -> str:
        if not self.generated_source:
            return self.summary
        lines = self.generated_source.split("\n")
        lo, hi = source_window(len(lines), self.failing_line)
        shown = "\n".join(f"{'>' if i == self.failing_line else ' '}{i:4d}  {lines[i - 1]}"
                          for i in range(lo, hi + 1))
        whole = "" if (lo, hi) == (1, len(lines)) else \
            f" (lines {lo}-{hi} of {len(lines)}; all of it: err.generated_source)"
        return f"{self.summary}\nGenerated source{whole}:\n{shown}"


_ANSI = None


def backend_message_head(exc: BaseException, max_lines: int = 8) -> tuple[str, str]:
    """(the first lines of what a backend said, all of it) for an exception from Numba:
    colour codes removed, blank lines dropped; its type named when it is not Numba's own."""
    import re
    global _ANSI
    _ANSI = _ANSI or re.compile(r"\x1b\[[0-9;]*m")
    text = _ANSI.sub("", str(exc)).strip()
    if not type(exc).__module__.startswith("numba"):
        text = f"{type(exc).__name__}: {text}"
    lines = [ln.rstrip() for ln in text.split("\n") if ln.strip()]
    head = lines[:max_lines]
    if len(lines) > max_lines:
        head.append(f"... ({len(lines) - max_lines} more lines: err.backend_message)")
    return "\n".join(head), text


def source_window(n_lines: int, focus: int | None, radius: int = 5) -> tuple[int, int]:
    """The 1-based line range of generated source to show: around `focus`, or the head."""
    if focus is None or not 1 <= focus <= n_lines:
        return 1, min(n_lines, 2 * radius + 1)
    return max(1, focus - radius), min(n_lines, focus + radius)


class UnexpectedCompileError(JitvizError):
    """A call would compile more than a compile budget allows (`jitviz.expect_compiles`,
    `jit(..., max_compiles=k, strict=True)`). Carries `function`, `reason`, `category`
    and `call_site` (the user's line of the call)."""

    def __init__(self, message: str, *, function=None, reason=None, category=None,
                 call_site=None):
        super().__init__(message)
        self.function, self.reason, self.category = function, reason, category
        self.call_site = self.source = call_site


class JitvizWarning(UserWarning):
    """Base of jitviz's diagnostics warnings."""


class CompileBudgetWarning(JitvizWarning):
    """A function compiled more often than `jit(..., max_compiles=k)` allows."""


class SideEffectWarning(JitvizWarning):
    """A `print` or a mutation of outside state ran only while tracing: later calls run the
    compiled code and skip it (`jitviz.debug.print` prints on every call). Switched off by
    `config.warn_side_effects`."""


class StaleGlobalWarning(JitvizWarning):
    """A global or closed-over variable changed after the trace baked its value into the
    compiled code, which still uses the old value. Switched off by
    `config.warn_stale_globals`."""


class RetraceWarning(JitvizWarning):
    """The same code was traced and compiled again and again for new function objects
    (`jit` of a lambda or nested def inside a loop), so nothing is reused. Switched off by
    `config.warn_retrace`."""


class UnrolledLoopWarning(JitvizWarning):
    """One source line produced `config.unrolled_loop_threshold` equations or more: a Python
    loop is being unrolled into the program (`lax.fori_loop` / `lax.scan` trace it once).
    Switched off by `config.warn_unrolled_loops`."""


class TracerLeakWarning(JitvizWarning):
    """A tracer was stored outside the function while tracing (a global, an attribute): using
    it after the trace raises `UnexpectedTracerError`. Switched off by
    `config.warn_side_effects`."""


class CacheMissWarning(JitvizWarning):
    """Every trace of a jitted function, with jitviz's reason (a new function, or what
    changed since the closest earlier signature). Off unless
    `config.update("explain_cache_misses", True)` (JAX's `jax_explain_cache_misses`)."""


class X64ConversionWarning(JitvizWarning):
    """A jitted function was given a 64-bit NumPy argument (float64, int64, ...) while x64 is
    off: as JAX does, jit converts it to the 32-bit type, which JAX does silently. Switched
    off by `config.warn_x64_conversion`."""


class KernelCacheWarning(JitvizWarning):
    """The disk kernel cache rejected an entry (it was deleted and the kernel compiled
    again), or could not be written."""


class JitvizInternalWarning(RuntimeWarning):
    """Something inside jitviz went wrong in a way that should never happen (tests turn it into an error)."""
