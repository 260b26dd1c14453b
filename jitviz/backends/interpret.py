"""The interpret backend: `eval_jaxpr`, NumPy op by op. The oracle the others match."""
from __future__ import annotations

from ..core.interpreter import eval_jaxpr
from ..core.ir import ClosedJaxpr
from . import register_backend
from .base import Backend, Executable, Kernel, Timings


class InterpretBackend(Backend):
    name = "interpret"

    def compile(self, closed: ClosedJaxpr, *, fastmath=False, parallel=False,
                profile=False) -> Executable:
        jaxpr, consts = closed.jaxpr, closed.consts
        timings = Timings() if profile else None

        def run(*args):
            return eval_jaxpr(jaxpr, consts, *args, timings=timings)
        kernel = Kernel("eval_jaxpr", list(jaxpr.eqns),
                        source="# interpreted by jitviz.eval_jaxpr, one NumPy call per equation")
        return Executable(run, [kernel], closed, self.name, timings)


register_backend(InterpretBackend())
