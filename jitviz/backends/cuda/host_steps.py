"""Primitives a CUDA kernel cannot compute (LAPACK, FFT, Python callbacks) run on the host
between kernels: `host_step_template(compute)` is their "cuda.kernel" rule. The planner stores
the operands in device memory and ends the kernels before it; at run time the step copies the
operands to the host, calls `compute(eqn, values) -> outputs` and copies the results back."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...core.ir import Literal, Var, literal_value


@dataclass
class HostStep:
    eqn: object
    operands: list
    outvars: list
    compute: Callable

    @property
    def reads(self):
        return self.operands

    def run_on_host(self, executor, env):
        from .array import to_device
        executor.rt.synchronize()  # the kernels before it have written the operands
        values = [literal_value(a) if isinstance(a, Literal) else
                  env[a].copy_to_host().reshape(a.aval.shape) for a in self.operands]
        outs = self.compute(self.eqn, values)
        for v, o in zip(self.outvars, outs):
            env[v] = to_device(executor.rt, o, v.aval)


def host_step_template(compute: Callable):
    """A "cuda.kernel" rule: the equation becomes a `HostStep` after the kernels before it."""
    def template(planner, e):
        from .render import Materialize
        for a in e.invars:  # the host reads its operands from device memory: store them
            if isinstance(a, Var) and a in planner.producer and a not in planner.mat:
                raise Materialize(a)
        planner.flush_all()
        for a in e.invars:
            if isinstance(a, Var):
                planner.need(a)
        planner.program.steps.append(HostStep(e, list(e.invars), list(e.outvars), compute))
        planner.available.update(e.outvars)
    return template
