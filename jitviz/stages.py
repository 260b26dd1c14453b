"""JAX's ahead-of-time stages of a jitted function: `f.trace(*args)` -> `Traced` (the program
as traced), `.lower()` -> `Lowered` (every stage of the backend's pipeline), `.compile()` ->
`Compiled` (the backend's kernels, callable); and the two steps jit itself takes, running a
backend's pipeline and compiling its last stage."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .core.ir import ClosedJaxpr
from .core.source import function_name
from .tree import tree_flatten, tree_unflatten

if TYPE_CHECKING:
    from .jit import JitFunction


# --- pipeline and backends -----------------------------------------------------------------

def _lower(closed: ClosedJaxpr, backend_name: str, fastmath: bool):
    """The traced program and the output of each pass of the backend's own pipeline."""
    from .backends import get_backend
    from .passes import lower_stages
    return lower_stages(closed, fastmath=fastmath, pipeline=get_backend(backend_name).pipeline)


def _compile(backend_name, stages, fastmath, parallel, profile=False):
    """Compile the stage the backend runs; the executable records its name (`.stage`), which
    the explorer shows as what was compiled."""
    from .backends import get_backend
    backend = get_backend(backend_name)
    # the interpreter is the oracle: it runs the traced program, untouched by the passes
    name, closed = stages[0] if backend_name == "interpret" else stages[-1]
    options = {"profile": True} if profile else {}
    executable = backend.compile(closed, fastmath=fastmath, parallel=parallel, **options)
    executable.stage = name
    return executable


class Traced:
    """A traced function (`f.trace(*args)`, JAX's AOT stage before lowering): `.jaxpr` is the
    program as traced, `.out_info` its outputs as `ShapeDtypeStruct`s."""

    def __init__(self, jf: JitFunction, closed: ClosedJaxpr, stages=None):
        self._jf = jf
        self.jaxpr = closed
        self._stages = stages
        self.fun_name = function_name(jf.__wrapped__)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)

    @property
    def out_info(self):
        from .staging import ShapeDtypeStruct
        from .state import function_out_avals
        outs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                for a in function_out_avals(self.jaxpr)]  # (not Refs' final values)
        return tree_unflatten(self.jaxpr.out_tree, outs)

    def lower(self) -> "Lowered":
        """Run the backend's optimization pipeline (the stages the explorer shows)."""
        jf = self._jf
        stages = self._stages or _lower(self.jaxpr, jf.backend, jf.fastmath)
        return Lowered(jf, self.jaxpr, stages)

    def __repr__(self):
        return f"<Traced {self.fun_name}: {self.jaxpr.in_avals} -> {self.jaxpr.out_avals}>"


class Lowered:
    """A traced and optimized function, before compilation (`f.lower(*args)`)."""

    def __init__(self, jf: JitFunction, closed: ClosedJaxpr, stages):
        self._jf = jf
        self.jaxpr = closed
        self.stages = list(stages)

    def as_text(self, stage: str | None = None) -> str:
        if stage is None:
            return str(self.stages[-1][1])
        for name, j in self.stages:
            if name == stage:
                return str(j)
        raise KeyError(f"no stage {stage!r}; stages are {[n for n, _ in self.stages]}")

    def compile(self) -> "Compiled":
        jf = self._jf
        exe = _compile(jf.backend, self.stages, jf.fastmath, jf.parallel)
        return Compiled(exe, self.jaxpr)


class Compiled:
    """A compiled function (`f.lower(*args).compile()`): call it with arguments of the
    lowered types; `.kernels` are the backend's kernels and `.cost` their cost estimates."""

    def __init__(self, executable, closed: ClosedJaxpr):
        self.executable = executable
        self.kernels = executable.kernels
        self.jaxpr = closed

    @property
    def cost(self):
        return {k.name: k.cost for k in self.kernels}

    def __call__(self, *args, **kwargs):
        from .jit import _call_executable
        leaves, _ = tree_flatten((args, kwargs))
        refs = self.jaxpr.refs  # Refs' values go in and their final values back (state.py)
        outs = _call_executable(self.executable, leaves if refs is None else refs.inputs(leaves),
                                self.jaxpr.in_avals, self.jaxpr.out_avals)
        if refs is not None:
            outs = refs.write_back(leaves, outs)
        return tree_unflatten(self.jaxpr.out_tree, outs)
