"""The backend interface: render (IR -> source) is separate from compile and run."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..core.ir import ClosedJaxpr, Eqn


@dataclass
class Cost:
    flops: int = 0
    bytes_moved: int = 0


@dataclass
class Kernel:
    """One compiled unit: the equations it covers, its generated source, its views."""
    name: str
    eqns: Sequence[Eqn]
    source: str = ""
    cost: Cost = field(default_factory=Cost)
    reused: bool = False  # came from the kernel cache instead of a fresh compile
    views: dict[str, Callable[[], str]] = field(default_factory=dict)
    # line of `source` (1-based) -> the equation it computes, where the renderer knows it
    line_eqns: dict[int, Eqn] = field(default_factory=dict)
    # line of `source` -> the equation that line also computes: its equation's operand (the
    # CPU's `cpu.with_producer` rules: a log and its scale in one function)
    combined: dict[int, Eqn] = field(default_factory=dict)

    def llvm_ir(self) -> str:
        return self._view("llvm_ir")

    def asm(self) -> str:
        return self._view("asm")

    def ptx(self, cc=(9, 0)) -> str:
        view = self.views.get("ptx")
        if view is None:
            raise NotImplementedError(f"kernel {self.name} has no PTX view (not a CUDA kernel)")
        return view(cc)

    def _view(self, name):
        view = self.views.get(name)
        if view is None:
            raise NotImplementedError(f"kernel {self.name} has no {name} view on this backend")
        return view()

    def all_eqns(self) -> list:
        """Its equations and those of the bodies of the regions it runs whole (a CPU
        `while_region` kernel lists the `while`, not the equations of its body)."""
        from ..core.jaxpr_util import sub_jaxprs
        out, todo = [], list(self.eqns)
        while todo:
            e = todo.pop(0)
            out.append(e)
            for sub in sub_jaxprs(e):
                todo.extend(sub.eqns)
        return out

    @property
    def source_lines(self):
        """The user's source lines this kernel came from."""
        seen, out = set(), []
        for e in self.eqns:
            if e.source and (e.source.file, e.source.line) not in seen:
                seen.add((e.source.file, e.source.line))
                out.append(e.source)
        return out


class Timings:
    """Measured time per timed unit (a kernel, or an equation on the interpreter), filled in
    by an executable compiled with `profile=True`; executables compiled without it have none
    and pay nothing."""

    def __init__(self):
        self.units: dict = {}  # key -> [equations covered, seconds, calls]

    def add(self, key, eqns, seconds: float):
        unit = self.units.get(key)
        if unit is None:
            unit = self.units[key] = [list(eqns), 0.0, 0]
        unit[1] += seconds
        unit[2] += 1

    def reset(self):
        self.units.clear()

    def timed(self, key, eqns, fn):
        """`fn` wrapped so that each call adds its duration to `key`."""
        clock = time.perf_counter

        def run(*args, **kwargs):
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(key, eqns, clock() - t0)
        return run


class Executable:
    """What a backend returns: call it with the flat argument leaves."""

    stage: str | None = None  # the name of the pipeline stage compiled (set by jit)
    # a function of the argument leaves as the user passed them (host arrays of any dtype and
    # layout), which converts them itself; None where they must be converted first
    host_driver: Callable | None = None

    def __init__(self, run: Callable, kernels: list[Kernel], jaxpr: ClosedJaxpr, backend: str,
                 timings: Timings | None = None):
        self._run = run
        self.kernels = kernels
        self.jaxpr = jaxpr
        self.backend = backend
        self.timings = timings  # a Timings when compiled with profile=True

    def __call__(self, *flat_args):
        return self._run(*flat_args)

    @property
    def cost(self):
        return {k.name: k.cost for k in self.kernels}


class Backend:
    name = "abstract"

    @property
    def pipeline(self) -> list:
        """The passes this backend's input goes through (`jitviz.passes.Pass`): the shared
        ones, then its own planning stage (the CPU's is fusion)."""
        from ..passes import PIPELINE
        return PIPELINE

    def compile(self, closed: ClosedJaxpr, *, fastmath: bool = False,
                parallel: bool = False, profile: bool = False) -> Executable:
        """`profile=True`: the executable times each kernel (`Executable.timings`)."""
        raise NotImplementedError

    def block_until_ready(self, x):
        return x

    def available(self) -> tuple[bool, str]:
        """(usable here?, why not)."""
        return True, ""
