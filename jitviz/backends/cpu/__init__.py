"""The CPU backend: the optimized IR compiled to Numba kernels.

    exe = get_backend("cpu").compile(stages[-1][1], fastmath=False, parallel=False)
    outs = exe(*flat_leaves)
    print(exe.kernels[0].source)       # the generated code, with the equations it covers
    print(exe.kernels[0].llvm_ir())    # Numba's LLVM IR; .asm() for machine code
    print(exe.driver_source)           # the Python driver that calls the kernels

Three steps, kept apart: *render* (`render.py` for fused loop nests, `render_program.py` for
the driver and control-flow regions, both applying the rules of `rules.py` and
`statements.py`) produces source text; *compile* (`compile.py`, through the kernel cache of
`cache.py`) turns text into a Numba dispatcher, reusing any earlier compile of the same text
and argument types, in memory or on disk; *run* is the driver, plain Python calling the
kernels and the helpers of `runtime.py`.

If Numba rejects generated code, `CompilationError` carries the generated source, the
equation and the user's line. There is no fallback to another backend.
"""
from __future__ import annotations

import contextlib
import itertools
import tempfile

import numpy as np

from ...core.ir import ClosedJaxpr, Var
from .. import register_backend
from ..base import Backend, Executable, Timings
from ..numba_text import ctor
from .cache import default_cache
from .compile import Program, prep_array, prep_scalar
from .render_program import FunctionBuilder

_driver_ids = itertools.count()


class CpuExecutable(Executable):
    def __init__(self, run, kernels, jaxpr, driver_source, timings=None):
        super().__init__(run, kernels, jaxpr, "cpu", timings)
        self.driver_source = driver_source
        self.host_driver = run  # its first lines convert each argument (`prep_array`)


# --- the backend ---------------------------------------------------------------------------

class CpuBackend(Backend):
    name = "cpu"

    def __init__(self, cache=None):
        self._cache = cache

    @property
    def cache(self):
        return self._cache or default_cache()

    @contextlib.contextmanager
    def bypass_kernel_cache(self):
        """Compile into a fresh, empty kernel cache (in a temporary folder) while inside:
        nothing is read from or added to the shared cache (`%jitbench --cold`)."""
        with tempfile.TemporaryDirectory(prefix="jitviz-cold-") as tmp:
            saved = self._cache
            self._cache = type(self.cache)(tmp)
            try:
                yield
            finally:
                self._cache = saved

    def compile(self, closed: ClosedJaxpr, *, fastmath=False, parallel=False,
                profile=False) -> Executable:
        timings = Timings() if profile else None
        program = Program(fastmath=fastmath, parallel=parallel, cache=self.cache,
                          timings=timings)
        jaxpr = closed.jaxpr
        fb = FunctionBuilder(program, host=True)
        params = []
        for i, v in enumerate(jaxpr.invars):
            arg, name = f"a{i}", fb.define(v, "C", prefix="x")
            params.append(arg)
            if v.aval.ndim == 0:
                fb.emit(f"{name} = _prep_scalar({arg}, {ctor(v.aval.dtype)})")
            else:  # the dtype object, which an array of that dtype has: `is` finds it
                dtype_name = f"_dt_{v.aval.dtype.name}"
                program.namespace[dtype_name] = np.dtype(v.aval.dtype)
                fb.emit(f"{name} = _prep_array({arg}, {dtype_name})")
        for i, (v, c) in enumerate(zip(jaxpr.constvars, closed.consts)):
            name = f"C{i}"
            program.namespace[name] = (prep_scalar(c, v.aval.dtype) if v.aval.ndim == 0
                                       else prep_array(c, v.aval.dtype))
            fb.bind(v, name, "C")
        fb.render_eqns(jaxpr.eqns)
        outs = []
        consts = {v.id for v in jaxpr.constvars}
        for o in jaxpr.outvars:
            src = fb.atom(o)
            if o.aval.ndim == 0:
                src = f"np.asarray({src}, {ctor(o.aval.dtype)})"
            elif isinstance(o, Var) and o.id in consts:  # never hand out our own constant
                src = f"{src}.copy()"
            outs.append(src)
        fname = f"jitviz_driver_{next(_driver_ids)}"
        text, _ = fb.text(f"def {fname}({', '.join(params)}):",
                          f"    return [{', '.join(outs)}]")
        driver = program.load_driver(fname, text)
        return CpuExecutable(driver, program.kernels, closed, text, timings)


register_backend(CpuBackend())
