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
    pass


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
    """A backend rejected generated code; carries the code and the equation."""


class JitvizWarning(UserWarning):
    """Base of jitviz's diagnostics warnings."""


class SideEffectWarning(JitvizWarning):
    pass


class StaleGlobalWarning(JitvizWarning):
    pass


class RetraceWarning(JitvizWarning):
    pass


class UnrolledLoopWarning(JitvizWarning):
    pass


class TracerLeakWarning(JitvizWarning):
    pass


class JitvizInternalWarning(RuntimeWarning):
    """Something inside jitviz went wrong in a way that should never happen (tests turn it into an error)."""
