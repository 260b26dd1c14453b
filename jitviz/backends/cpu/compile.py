"""Compile what the renderers produce: each kernel or region module through the kernel cache
into a Numba dispatcher, recorded as a `Kernel` (its annotated source, cost, LLVM/asm views);
a module Numba rejects becomes a `CompilationError` naming the equation and the user's line.
`Program` holds everything one `CpuBackend.compile` builds: the driver's namespace, its
constants and kernels.
"""
from __future__ import annotations

import itertools
import linecache
import re
import time
import warnings
import weakref

import numba
import numpy as np
from numba import from_dtype, types

from ...config import config
from ...core.fused import fused_p
from ...core.ir import Eqn, Literal, Var
from ...errors import CompilationError, backend_message_head
from ...core.ir import literal_key, literal_value
from ...core.jaxpr_util import describe_eqn, sub_jaxprs
from ..base import Cost, Kernel
from ..numba_text import ctor
from . import buffers, runtime
from .render import function_name, kernel_cost, render_fused
from .render_program import FunctionBuilder, ModuleText, provide_helpers


# --- argument normalization (the driver's first lines) -------------------------------------

def prep_array(a, dtype):
    """A C-contiguous, writable, native-endian array of exactly `dtype` (no copy if it is)."""
    if type(a) is np.ndarray and (a.dtype is dtype or a.dtype == dtype):
        flags = a.flags  # (each `a.flags` makes an object: once)
        if flags.c_contiguous and flags.writeable:
            return a
    a = np.asarray(a)
    if a.dtype == dtype and a.dtype.isnative and a.flags.c_contiguous and a.flags.writeable:
        return a
    with np.errstate(all="ignore"):
        return np.array(a, dtype=dtype, order="C", copy=True)


def prep_scalar(a, dtype):
    """A NumPy scalar of `dtype` (Python scalars and weakly typed values as the jaxpr says)."""
    if type(a) is dtype:
        return a
    with np.errstate(all="ignore"):
        return np.asarray(a).astype(dtype)[()]


# --- numba types -------------------------------------------------------------------------

def _nb_type(aval, layout):
    """The Numba type of a kernel argument (float16 travels as uint16 bits / float32)."""
    dtype = aval.dtype
    if dtype == np.float16:
        dtype = np.dtype(np.uint16) if aval.ndim and layout != "S" else np.dtype(np.float32)
    dt = from_dtype(dtype)
    if aval.ndim == 0 or layout == "S":
        return dt
    return types.Array(dt, aval.ndim, layout if layout in ("C", "A") else "A")


# --- the program ---------------------------------------------------------------------------

class Program:
    """Everything one `compile` builds: the driver's namespace, kernels and their records."""

    def __init__(self, *, fastmath: bool, parallel: bool, cache, timings=None):
        self.fastmath, self.parallel, self.cache = fastmath, parallel, cache
        self.timings = timings  # profile=True: the driver calls kernels through timers
        # no `cache=True`: cache.py gives each dispatcher a disk cache that verifies files
        self.options = f"fastmath={bool(fastmath)}, error_model='numpy', nogil=True"
        self.namespace = {"np": np, "rt": runtime, "_prep_array": prep_array,
                          "_prep_scalar": prep_scalar, "_empty": buffers.empty}
        if timings is not None:
            self.namespace.update(_timings=timings, _clock=time.perf_counter)
        self.host_consts: dict = {}
        self.kernels: list[Kernel] = []
        self._host_kernels: dict[str, str] = {}  # module key -> driver name

    # -- constants -------------------------------------------------------------------------
    def host_const(self, lit: Literal) -> str:
        k = literal_key(lit)
        if k not in self.host_consts:
            name = f"K{len(self.host_consts)}"
            self.host_consts[k] = name
            self.namespace[name] = literal_value(lit)[()]
        return self.host_consts[k]

    # -- fused kernels ---------------------------------------------------------------------
    def kernel_for(self, fb: FunctionBuilder, body, name, operands, flat=None):
        """The kernel of a fused body, and its code. `flat`: (the body over vectors, a map
        from its equations to the body's), rendered instead, called on reshaped views;
        its source and line map name the body's equations."""
        rendered, back = flat or (body, {})

        def render(fname, parallel):
            code = render_fused(rendered, fname, parallel=parallel, fastmath=self.fastmath)
            return code._replace(
                eqns=[back.get(id(e), e) for e in code.eqns],
                line_eqns={k: back.get(id(e), e) for k, e in code.line_eqns.items()},
                combined={k: back.get(id(e), e) for k, e in code.combined.items()})
        if not fb.host:  # inside a region: the kernel is a function of the region's module
            taken = {f[0] for f in fb.module.functions}
            fname = _unique(function_name(name), taken)
            code = render(fname, False)
            fb.module.add(fname, code.text, code.line_eqns, combined=code.combined)
            return fname, code
        threaded, why = self._threads(body)
        code = render(name, threaded)
        if threaded and not code.uses_prange:
            why = "threads: one (its outer loop cannot be split: it reduces over it, or " \
                  "is blocked; a reduction over it splits its columns from " \
                  f"{2 * runtime.COLUMN_BLOCK} of them)"
        module = ModuleText(self.options)
        module.add(code.name, code.text, code.line_eqns, parallel=code.uses_prange,
                   combined=code.combined)
        arg_types = [_nb_type(v.aval, fb.layout(a)) for v, a in zip(rendered.invars, operands)]
        arg_types += [_nb_type(rendered.outvars[i].aval, "C") for i in code.array_outs]
        arg_types += [_nb_type(lit.aval, "S") for lit in code.consts]
        callee = self._build(module, code.name, tuple(arg_types), code.eqns, code.cost,
                             code.consts, why)
        return callee, code

    def _threads(self, body) -> tuple[bool, str]:
        """Whether a kernel's outer loop runs on every core, and why (shown in its source).
        Waking the threads costs microseconds, so by default only a kernel with enough work
        (its operation count, from the same estimate as Kernel.cost) is threaded."""
        if self.parallel is not None:
            return self.parallel, ("threads: every core (parallel=True)" if self.parallel
                                   else "threads: one (parallel=False)")
        cores = numba.get_num_threads()
        ops = kernel_cost(body).flops
        least = config.parallel_min_ops
        if cores > 1 and ops >= least:
            return True, f"threads: all {cores} cores ({ops:,} operations >= " \
                         f"jitviz.config.parallel_min_ops = {least:,})"
        if cores == 1:
            return False, "threads: one (Numba has one thread here)"
        return False, f"threads: one ({ops:,} operations < jitviz.config.parallel_min_ops " \
                      f"= {least:,}: waking threads would cost more)"

    # -- control-flow regions ---------------------------------------------------------------
    def region_call(self, fb: FunctionBuilder, eqn: Eqn, inline_rule):
        if any(v.aval.dtype == np.float16 for j in sub_jaxprs(eqn) for e in j.eqns
               for v in list(e.invars) + list(e.outvars)) or \
                any(a.aval.dtype == np.float16 for a in list(eqn.invars) + list(eqn.outvars)):
            raise CompilationError(
                f"the CPU backend does not support float16 values inside control flow "
                f"({describe_eqn(eqn)}); compute in float32, or use backend='interpret'")
        module = ModuleText(self.options)
        rb = FunctionBuilder(self, host=False, module=module)
        params, arg_names, arg_types = [], [], []
        for a in eqn.invars:
            if isinstance(a, Var) and a.id not in rb.names:
                p = f"p{len(params)}"
                rb.bind(a, p, fb.layout(a))
                params.append(p)
                arg_names.append(fb.atom(a))
                arg_types.append(_nb_type(a.aval, fb.layout(a)))
        inline_rule(rb, eqn)
        outs = [rb.contiguous(v) for v in eqn.outvars]
        name = f"{eqn.primitive.name}_region"
        consts = [lit for _, lit in rb.consts.values()]
        params += [c for c, _ in rb.consts.values()]
        params += [f"z{k}" for k in range(len(rb.dims))]
        ret = f"    return ({', '.join(outs)}{',' if outs else ''})"
        text, line_eqns = rb.text(f"def {name}({', '.join(params)}):", ret)
        module.add(name, text, line_eqns)
        arg_types += [_nb_type(lit.aval, "S") for lit in consts]
        arg_types += [types.int64] * len(rb.dims)
        callee = self._build(module, name, tuple(arg_types), [eqn], _region_cost(eqn),
                             consts)
        args = arg_names + [fb.atom(lit) for lit in consts] + [str(d) for d in rb.dims]
        r = fb.fresh("r")
        fb.emit(f"{r} = {callee}({', '.join(args)})", eqn)
        for k, v in enumerate(eqn.outvars):
            if v.aval.ndim == 0:
                name_v = fb.define(v, "S")
                fb.emit(f"{name_v} = {ctor(v.aval.dtype)}({r}[{k}])", eqn)
            else:
                name_v = fb.define(v, "C")
                fb.emit(f"{name_v} = {r}[{k}]", eqn)

    # -- the driver ------------------------------------------------------------------------
    def load_driver(self, fname: str, text: str):
        """The driver function `text` defines, run in this program's namespace."""
        provide_helpers(text)
        filename = f"<{fname}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        exec(compile(text, filename, "exec"), self.namespace)
        driver = self.namespace[fname]
        # tracebacks show the driver's lines while it lives; then its text goes too
        weakref.finalize(driver, linecache.cache.pop, filename, None)
        return driver

    # -- compile one module ----------------------------------------------------------------
    def _build(self, module: ModuleText, fname, sig, eqns, cost: Cost, consts,
               threads="") -> str:
        text, line_eqns, combined = module.render()
        key = self.cache.key(text)
        try:
            mod = self.cache.module(text)
            disp = getattr(mod, fname)
            reused = self.cache.compile(text, disp, sig)
        except Exception as e:  # Numba's errors, and the ImportErrors/LLVM errors it lets out
            raise _compilation_error(e, fname, text, line_eqns, eqns, self.cache.path(key)) \
                from e
        shown = _annotated(fname, text, eqns, consts, reused, threads)
        header = shown.count("\n") - text.count("\n")  # the lines _annotated puts first
        kernel = Kernel(
            fname, list(_flat_eqns(eqns)), shown, cost, reused,
            views={"llvm_ir": _view(disp, sig, "llvm"), "asm": _view(disp, sig, "asm")},
            line_eqns={header + k: e for k, e in line_eqns.items()},
            combined={header + k: e for k, e in combined.items()})
        self.kernels.append(kernel)
        callee = self._host_kernels.get((key, fname))
        if callee is None:
            callee = _unique(fname, set(self.namespace))
            self.namespace[callee] = disp if self.timings is None else \
                self.timings.timed(fname, kernel.all_eqns(), disp)
            self._host_kernels[(key, fname)] = callee
        return callee


def _unique(name, taken):
    if name not in taken:
        return name
    for i in itertools.count(1):
        if f"{name}_{i}" not in taken:
            return f"{name}_{i}"


def _flat_eqns(eqns):
    for e in eqns:
        if e.primitive is fused_p:
            yield from e.params["jaxpr"].jaxpr.eqns
        else:
            yield e


def _region_cost(eqn: Eqn) -> Cost:
    """Static estimate: the fused kernels of the bodies, times the trip count where known."""
    trips = eqn.params.get("length", 1)  # a scan's step count; a while's is not known
    total = Cost()
    for j in sub_jaxprs(eqn):
        for e in j.eqns:
            c = kernel_cost(e.params["jaxpr"].jaxpr) if e.primitive is fused_p else (
                _region_cost(e) if any(True for _ in sub_jaxprs(e)) else Cost())
            total.flops += c.flops * trips
            total.bytes_moved += c.bytes_moved * trips
    return total


def _user_line(eqn: Eqn) -> str:
    s = eqn.source
    return f"{s.file}:{s.line}: {s.code}" if s is not None else "(no source line)"


def _annotated(fname, text, eqns, consts, reused, threads="") -> str:
    """The kernel's source as shown to users: which equations and lines it covers, how many
    threads run it and why, then the exact module text Numba compiled."""
    head = [f"# kernel {fname}: " + ("reused from the kernel cache" if reused
                                     else "compiled by Numba")]
    if threads:
        head.append(f"# {threads}")
    for e in _flat_eqns(eqns):
        head.append(f"#   {e.primitive.name:<22} {_user_line(e)}")
    for i, lit in enumerate(consts):
        head.append(f"#   c{i} = {lit!r}")
    return "\n".join(head) + "\n" + text


def _view(disp, sig, kind):
    def show():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # "Inspection disabled for cached code"
                out = disp.inspect_llvm(sig) if kind == "llvm" else disp.inspect_asm(sig)
            if out:
                return out
        except Exception:
            pass
        # code loaded from the disk cache has no IR: compile a private copy to show it
        from numba import njit
        opts = {k: v for k, v in disp.targetoptions.items() if k != "nopython"}
        fresh = njit(**{**opts, "cache": False})(disp.py_func)
        fresh.compile(sig)
        return fresh.inspect_llvm(sig) if kind == "llvm" else fresh.inspect_asm(sig)
    return show


def _compilation_error(e, fname, text, line_eqns, eqns, path) -> CompilationError:
    head, whole = backend_message_head(e)
    failing = None
    for m in re.finditer(r'File "([^"]+)", line (\d+)', whole):
        if m.group(1).endswith(path.rsplit("/", 1)[-1]):
            failing = int(m.group(2))
    eqn = line_eqns.get(failing) if failing is not None else None
    eqn = eqn or next(iter(_flat_eqns(eqns)), None)
    where = describe_eqn(eqn) if eqn is not None else "?"
    summary = (f"Numba could not compile the generated kernel {fname!r} for equation {where}.\n"
               f"Numba said:\n  " + head.replace("\n", "\n  ") +
               f"\n(the generated module is {path})")
    return CompilationError(summary, generated_source=text, backend_message=whole,
                            failing_line=failing, eqn=eqn, kernel=fname)
