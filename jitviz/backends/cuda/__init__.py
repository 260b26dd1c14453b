"""The CUDA backend: the optimized IR as `numba.cuda` kernels (`jit(f, backend="cuda")`).

    f = jitviz.jit(selu, backend="cuda")
    y = f(x)                      # NumPy in: copied to the GPU once; launches are asynchronous
    jitviz.block_until_ready(y)   # wait for them
    np.asarray(y)                 # copy back to the host
    f.lower(x).compile().kernels[0].ptx(cc=(9, 0))   # real PTX, no GPU needed

The backend is one subpackage, a file per role:

* `plan.py`: which equations share a kernel and which loops run on the host (the Planner);
  `render.py` renders a kernel's values at symbolic indices (with the pull table: how a kernel
  reads an operand through a structural op), `templates.py` the kernels with their own shape
  (block reductions, tiled matmul, scans, scatters, loops in a kernel), `rules.py` the
  per-element expressions CUDA writes its own way (over the shared ones of `numba_expr.py`).
  All pure Python: no numba import, so plans, sources and their tests work without the CUDA
  toolkit.
* `runtime.py`: `numba.cuda`, imported lazily (so `NUMBA_ENABLE_CUDASIM=1` set at the top of a
  notebook still selects Numba's simulator), the names kernels call, compiled kernels (a
  `Launcher` each: the kernel compiled for its exact signature, launched without per-call
  typing);
  `pool.py` recycles device buffers; `ptx.py` gives PTX without a GPU; `array.py` holds
  `CudaArray` and moves arguments to the device (arrays that are already there, such as Numba
  device arrays, CuPy arrays or this backend's outputs, are used in place).
* this file: the backend and its executable, which keeps device copies of constants, launches
  the kernels, runs host-side loops over them and returns `CudaArray`s that stay on the device.

CUDA draws its own kernel boundaries (a kernel cannot wait for a reduction it computes itself:
that needs a grid-wide barrier), so its pipeline is the shared passes without the CPU's fusion,
and the planner groups the equations of their output.

Without a GPU and without the simulator, compiling still works (the kernels' sources and PTX
are available) and running raises `CudaUnavailableError`, which names both ways out.
"""
from __future__ import annotations

import functools
import os
import sys
import time
import warnings

import numpy as np

from ...core.ir import ClosedJaxpr, Literal, literal_value
from ...errors import CompilationError
from .. import register_backend
from ..base import Backend, Cost, Executable, Kernel, Timings
from .array import CudaArray, kernel_shape, to_device
from .plan import HostCond, HostPrint, HostScan, HostWhile, KernelStep, Program, plan_program
from .ptx import kernel_ptx
from .runtime import CudaToolkitError, CudaUnavailableError, get_kernel, gpu_present
from .runtime import runtime as load_runtime

# --- running a program -------------------------------------------------------------------------

class _Run:
    """Executes a Program's steps on the device."""

    def __init__(self, exe: "CudaExecutable"):
        self.exe = exe
        self.rt = exe.rt

    def read(self, env, atom):
        if isinstance(atom, Literal):
            return self.exe.literal_array(atom)
        return env[atom]

    def program(self, prog: Program, args):
        env = dict(zip(prog.invars, args))
        for v in prog.consts:
            if v not in env:
                env[v] = self.exe.const_array(v, prog.consts[v])
        for i, step in enumerate(prog.steps):
            if isinstance(step, KernelStep):
                self.launch(step.kernel, env)
            elif isinstance(step, HostPrint):
                self.host_print(step, env)
            elif isinstance(step, HostCond):
                idx = int(self.host_value(env, step.index))
                br = step.branches[min(max(idx, 0), len(step.branches) - 1)]
                outs = self.program(br, [self.read(env, a) for a in step.operands])
                env.update(zip(step.outvars, outs))
            elif isinstance(step, HostWhile):
                self.host_while(step, env)
            elif isinstance(step, HostScan):
                self.host_scan(step, env)
            elif hasattr(step, "run_on_host"):  # a step a primitive's module defines
                step.run_on_host(self, env)
            if prog.release:
                for v in prog.release[i]:
                    env.pop(v, None)
        return [self.read(env, a) for a in prog.outvars]

    def host_value(self, env, atom):
        if isinstance(atom, Literal):
            return literal_value(atom)[()]
        return env[atom].copy_to_host().reshape(atom.aval.shape)[()]

    def launch(self, spec, env):
        args = [env[v] for v in spec.inputs]
        layouts = self.exe.output_layouts(spec)
        outs = [self.rt.empty(shape, dtype) for dtype, shape in layouts]
        if spec.elements > 0 and self.exe.timings is not None:
            self._timed_launch(spec, args, outs)
        elif spec.elements > 0:
            launcher = self.exe.launcher(spec)
            if self.rt.simulator:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    launcher(spec.grid, spec.block, args, outs)
            else:
                launcher(spec.grid, spec.block, args, outs)
        env.update(zip(spec.outputs, outs))

    def _timed_launch(self, spec, args, outs):
        """profile=True: the kernel alone, between two synchronizations."""
        launcher = self.exe.launcher(spec)
        self.rt.synchronize()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the simulator's overflow noise
            t0 = time.perf_counter()
            launcher(spec.grid, spec.block, args, outs)
            self.rt.synchronize()
        self.exe.timings.add(spec.name, spec.eqns, time.perf_counter() - t0)

    def host_print(self, step, env):
        from ...debug import emit
        self.rt.synchronize()
        vals = []
        for a in step.atoms:
            if isinstance(a, Literal):
                vals.append(literal_value(a))
            else:
                vals.append(env[a].copy_to_host().reshape(a.aval.shape))
        sys.stdout.flush()
        emit(step.eqn.params["fmt"], step.eqn.params["names"], vals,
             step.eqn.params.get("batch_rank", 0))

    def host_while(self, step, env):
        cc = [self.read(env, a) for a in step.cond_consts]
        bc = [self.read(env, a) for a in step.body_consts]
        carry = [self.read(env, a) for a in step.init]
        while True:
            (pred,) = self.program(step.cond, cc + carry)
            if not bool(pred.copy_to_host().reshape(())[()]):
                break
            carry = self.program(step.body, bc + carry)
        env.update(zip(step.outvars, carry))

    def host_scan(self, step, env):
        cuda = self.rt.cuda
        consts = [self.read(env, a) for a in step.consts]
        carry = [self.read(env, a) for a in step.init]
        xs = [self.read(env, a) for a in step.xs]
        nc = step.num_carry
        ys_vars = step.outvars[nc:]
        ys = [self.rt.empty(v.aval.shape, v.aval.dtype) for v in ys_vars]
        for t in range(step.length):
            i = step.length - 1 - t if step.reverse else t
            x_i = [x[i:i + 1] if x.ndim == 1 else x[i] for x in xs]
            out = self.program(step.body, consts + carry + x_i)
            carry = out[:nc]
            for y_all, y, v in zip(ys, out[nc:], ys_vars):
                dst = y_all[i:i + 1] if v.aval.ndim == 1 else y_all[i]
                _copy_into(cuda, dst, y)
        env.update(zip(step.outvars[:nc], carry))
        env.update(zip(ys_vars, ys))


def _copy_into(cuda, dst, src):
    try:
        dst.copy_to_device(src)
    except Exception:
        dst.copy_to_device(np.ascontiguousarray(src.copy_to_host()).reshape(dst.shape))


class CudaExecutable(Executable):
    """What `CudaBackend.compile` returns: runs the program, returns `CudaArray`s."""

    returns_device_arrays = True

    def __init__(self, program: Program, kernels, closed, fastmath, timings=None):
        self.program = program
        self.rt = load_runtime()
        self.fastmath = fastmath
        self._consts: dict = {}
        self._literals: dict = {}
        self._launchers: dict = {}
        self._layouts: dict = {}
        super().__init__(self._run, kernels, closed, "cuda", timings)

    def launcher(self, spec):
        d = self._launchers.get(spec.name)
        if d is None:
            d = self._launchers[spec.name] = get_kernel(spec, self.fastmath)[0]
        return d

    def output_layouts(self, spec):
        """(dtype, kernel shape) of each output (kernels write them as flat buffers)."""
        lay = self._layouts.get(spec.name)
        if lay is None:
            lay = self._layouts[spec.name] = [
                (v.aval.dtype, tuple(kernel_shape(v.aval))) for v in spec.outputs]
        return lay

    def const_array(self, var, value):
        d = self._consts.get(var)
        if d is None:
            d = self._consts[var] = to_device(self.rt, np.asarray(value), var.aval)
        return d

    def literal_array(self, lit):
        key = (lit.aval, repr(lit.val))
        d = self._literals.get(key)
        if d is None:
            d = self._literals[key] = to_device(self.rt, literal_value(lit), lit.aval)
        return d

    def _run(self, *args):
        rt = self.rt.require()
        if rt.mode == "gpu":
            rt.make_context_current()
        return self._execute(rt, args)

    def _execute(self, rt, args):
        prog = self.program
        dev_args = [to_device(rt, a, v.aval) for a, v in zip(args, prog.invars)]
        outs = _Run(self).program(prog, dev_args)
        return [CudaArray(o, a.aval) for o, a in zip(outs, prog.outvars)]

    def wrap_outputs(self, outs, avals):
        """jit's hook: the outputs are already `CudaArray`s of the exact abstract types."""
        for o, av in zip(outs, avals):
            o.weak_type = av.weak_type
        return list(outs)


def _kernel_header(spec, target) -> str:
    where = []
    seen = set()
    for e in spec.eqns:
        if e.source and (e.source.file, e.source.line) not in seen:
            seen.add((e.source.file, e.source.line))
            where.append(f"#   {os.path.basename(e.source.file)}:{e.source.line}: "
                         f"{e.source.code.strip()}")
    grid = "x".join(map(str, spec.grid))
    block = "x".join(map(str, spec.block))
    dev = "simulator" if target.simulator else f"{target.sm_count} SMs"
    head = [f"# {spec.kind} kernel: {spec.elements} results, grid {grid} x block {block} "
            f"({dev})"]
    if where:
        head.append("# from:")
        head.extend(where[:8])
    return "\n".join(head) + "\n"


def _cost(spec) -> Cost:
    moved = sum(v.aval.size * v.aval.dtype.itemsize for v in spec.inputs + spec.outputs)
    if spec.kind == "dot":
        e = next(e for e in spec.eqns if e.primitive.kind == "dot")
        k = int(np.prod([e.invars[0].aval.shape[a] for a in
                         e.params["dimension_numbers"][0][0]], dtype=np.int64))
        return Cost(2 * spec.elements * max(k, 1) + spec.elements * (len(spec.eqns) - 1),
                    moved)
    return Cost(spec.elements * max(1, len(spec.eqns)), moved)


class CudaBackend(Backend):
    name = "cuda"

    @property
    def pipeline(self) -> list:
        """The shared passes only: the planner draws kernel boundaries on their output."""
        from ...passes import SHARED
        return SHARED

    def available(self):
        rt = load_runtime()
        return rt.mode is not None, rt.why

    def block_until_ready(self, x):
        load_runtime().synchronize()
        return x

    def compile(self, closed: ClosedJaxpr, *, fastmath=False, parallel=False,
                profile=False) -> Executable:
        rt = load_runtime()
        target = rt.target()
        try:
            program = plan_program(closed, target)
        except NotImplementedError as e:
            raise CompilationError(str(e)) from e
        kernels = []
        for spec in program.kernels():
            spec.source = _kernel_header(spec, target) + spec.source
            reused = False
            if rt.mode is not None:
                _, reused = get_kernel(spec, fastmath)
            view = functools.partial(_ptx_view, spec.source, spec.name, spec.arg_types(),
                                     fastmath)
            kernels.append(Kernel(spec.name, spec.eqns, spec.source, _cost(spec), reused,
                                  views={"ptx": view}))
        return CudaExecutable(program, kernels, closed, fastmath,
                              Timings() if profile else None)


def _ptx_view(source, name, arg_types, fastmath, cc=(9, 0)):
    return kernel_ptx(source, name, arg_types, cc, fastmath)


register_backend(CudaBackend())


__all__ = ["CudaArray", "CudaBackend", "CudaExecutable", "CudaToolkitError",
           "CudaUnavailableError", "gpu_present", "kernel_ptx"]
