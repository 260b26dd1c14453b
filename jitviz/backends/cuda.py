"""The CUDA backend: the optimized IR as `numba.cuda` kernels (`jit(f, backend="cuda")`).

    f = jitviz.jit(selu, backend="cuda")
    y = f(x)                      # NumPy in: copied to the GPU once; launches are asynchronous
    jitviz.block_until_ready(y)   # wait for them
    np.asarray(y)                 # copy back to the host
    f.lower(x).compile().kernels[0].ptx(cc=(9, 0))   # real PTX, no GPU needed

The plan and the kernel sources come from `cuda_codegen` (pure Python); this module runs them:
it imports `numba.cuda` lazily (so `NUMBA_ENABLE_CUDASIM=1` set at the top of a notebook still
selects Numba's simulator), chooses launch sizes from the device's properties, keeps device
copies of constants, moves arguments to the device (arrays that are already there, such as
Numba device arrays, CuPy arrays or this backend's outputs, are used in place), runs host-side
loops over kernels, and returns `CudaArray`s that stay on the device.

Without a GPU and without the simulator, compiling still works (the kernels' sources and PTX
are available) and running raises `CudaUnavailableError`, which names both ways out.
"""
from __future__ import annotations

import functools
import json
import linecache
import os
import subprocess
import sys
import threading
import time
import warnings

import numpy as np

from ..core.ir import ClosedJaxpr, Literal, literal_value
from ..errors import CompilationError, JitvizError, backend_message_head
from . import register_backend
from .base import Backend, Cost, Executable, Kernel, Timings
from .cuda_codegen import (SIMULATOR_TARGET, HostCond, HostPrint, HostScan, HostWhile,
                           KernelStep, Program, Target, plan_program)

INSTALL_HINT = 'pip install "jitviz[cuda]"  (that is numba-cuda[cu13]: Numba\'s CUDA target ' \
               'with the CUDA 13 toolkit wheels, NVVM included)'


class CudaUnavailableError(JitvizError, RuntimeError):
    """`backend="cuda"` cannot run here: no GPU and no simulator (or no toolkit)."""


class CudaToolkitError(JitvizError, RuntimeError):
    """numba-cuda or NVVM (the CUDA toolkit's compiler) is missing."""


# --- the runtime: numba.cuda, imported once, lazily -------------------------------------------

class _Runtime:
    def __init__(self):
        self.lock = threading.RLock()
        self.loaded = False
        self.cuda = None
        self.mode = None  # "gpu" | "sim" | None
        self.why = ""
        self.ns = None
        self._target = None
        self.kernels: dict = {}  # (source, fastmath) -> (pyfunc, dispatcher)

    def load(self):
        if self.loaded:
            return self
        with self.lock:
            if self.loaded:
                return self
            try:
                cuda = _import_numba_cuda()
            except ImportError as e:
                self.why = f"numba.cuda cannot be imported ({e}); install it with {INSTALL_HINT}"
                self.loaded = True
                return self
            self.cuda = cuda
            if _is_simulator(cuda):
                self.mode = "sim"
            else:
                try:
                    ok = cuda.is_available()
                except Exception as e:  # a broken driver install
                    ok, self.why = False, f"{type(e).__name__}: {e}"
                if ok:
                    self.mode = "gpu"
                else:
                    self.why = self.why or "no CUDA GPU or driver was found"
                    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
                        self.why += (" (NUMBA_ENABLE_CUDASIM is set, but numba.cuda had been "
                                     "imported before it was: restart the process or kernel)")
            from .cuda_device import namespace
            self.ns = namespace(cuda, self.mode == "sim")
            self.loaded = True
        return self

    @property
    def simulator(self):
        return self.mode == "sim"

    def target(self) -> Target:
        if self._target is None:
            self.load()
            if self.mode == "sim":
                self._target = SIMULATOR_TARGET
            elif self.mode == "gpu":
                self._target = _device_target(self.cuda)
            else:
                self._target = Target()
        return self._target

    def require(self):
        self.load()
        if self.mode is None:
            raise CudaUnavailableError(
                "backend='cuda' cannot run here: " + self.why + ". Two ways out:\n"
                "  * run on a machine with an NVIDIA GPU and driver, with the toolkit: "
                + INSTALL_HINT + "\n"
                "  * or use Numba's CUDA simulator (slow, for testing): set the environment "
                "variable NUMBA_ENABLE_CUDASIM=1 before numba.cuda is first imported, e.g. "
                "`NUMBA_ENABLE_CUDASIM=1 python ...`, or `os.environ['NUMBA_ENABLE_CUDASIM'] = "
                "'1'` in the first cell of a notebook.\n"
                "Kernel sources and PTX (`f.lower(x).compile().kernels[i].ptx()`) work without "
                "either.")
        return self

    def synchronize(self):
        if self.mode is not None:
            self.cuda.synchronize()

    @functools.cached_property
    def pool(self):
        """Recycled device buffers (cuda_pool.py); None in the simulator."""
        from .cuda_pool import DevicePool
        return DevicePool(self.cuda) if self.mode == "gpu" else None

    def empty(self, shape, dtype):
        """An uninitialized C-contiguous device array, from the pool on a GPU."""
        if self.pool is None:
            return self.cuda.device_array(shape, dtype)
        return self.pool.empty(shape, dtype)

    def to_device(self, host: np.ndarray):
        if self.pool is None:
            return self.cuda.to_device(host)
        return self.pool.to_device(host)


_RT = _Runtime()


def runtime() -> _Runtime:
    return _RT.load()


def _import_numba_cuda():
    """`numba.cuda`, honouring NUMBA_ENABLE_CUDASIM even when set after `import numba`."""
    want_sim = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    if "numba.cuda" not in sys.modules:
        import numba  # noqa: F401
        from numba.core import config
        if bool(config.ENABLE_CUDASIM) != want_sim:
            config.reload_config()
    from numba import cuda
    return cuda


def _is_simulator(cuda) -> bool:
    return getattr(cuda, "compile_ptx", None) is None or \
        type(cuda).__name__ == "FakeCUDAModule" or "simulator" in getattr(cuda.jit, "__module__",
                                                                          "")


def _device_target(cuda) -> Target:
    """Launch sizes from the current device: SM count, threads per block and per SM, grid
    limits (the defaults, an H100's, if the driver does not say)."""
    dev = cuda.get_current_device()

    def attr(name, default):
        try:
            return int(getattr(dev, name))
        except Exception:
            return default
    sm = attr("MULTIPROCESSOR_COUNT", 132)
    max_threads = attr("MAX_THREADS_PER_BLOCK", 1024)
    threads = min(256, max_threads)
    per_sm = attr("MAX_THREADS_PER_MULTI_PROCESSOR", 2048)
    return Target(simulator=False, sm_count=sm, max_threads=max_threads, threads=threads,
                  reduce_threads=threads, tile=16 if max_threads >= 256 else 8,
                  blocks_per_sm=max(1, per_sm // threads) * 4,
                  max_grid=attr("MAX_GRID_DIM_Y", 65535))


def gpu_present() -> bool:
    """Is an NVIDIA driver with at least one GPU here? (Does not import numba.cuda, so a
    notebook can decide to set NUMBA_ENABLE_CUDASIM=1 before anything imports it.)"""
    import ctypes
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll", "libcuda.dylib"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        try:
            if lib.cuInit(0) != 0:
                return False
            n = ctypes.c_int(0)
            return lib.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0
        except AttributeError:
            return False
    return False


# --- kernels: compile, cache, PTX -----------------------------------------------------------------

def _exec_source(source: str, fn_name: str, ns: dict):
    filename = f"<jitviz-cuda {fn_name}>"
    lines = source.splitlines(True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    glb = dict(ns)
    exec(compile(source, filename, "exec"), glb)
    return glb[fn_name]


def _numba_argtypes(arg_types):
    from numba import types
    from numba.np.numpy_support import from_dtype
    return tuple(types.Array(from_dtype(np.dtype(dt)), nd, "C") for dt, nd in arg_types)


def _kernel_error(spec, err) -> CompilationError:
    head, whole = backend_message_head(err)
    lines = []
    for e in spec.eqns:
        src = f"  {e.source.file}:{e.source.line}: {e.source.code}" if e.source else ""
        lines.append(f"  {e.primitive.name}{src}")
    more = f"\n  ... ({len(lines) - 12} more)" if len(lines) > 12 else ""
    summary = (f"Numba CUDA could not compile kernel {spec.name}.\nequations:\n"
               + "\n".join(lines[:12]) + more + "\nNumba said:\n  " + head.replace("\n", "\n  "))
    out = CompilationError(summary, generated_source=spec.source, backend_message=whole,
                           eqn=next(iter(spec.eqns), None), kernel=spec.name)
    out.eqns = list(spec.eqns)
    return out


def get_kernel(spec, fastmath=False):
    """(dispatcher, reused?) for a kernel spec, from the in-process cache by source."""
    rt = runtime()
    key = (spec.source, bool(fastmath), rt.mode)
    hit = rt.kernels.get(key)
    if hit is not None:
        return hit[1], True
    pyfunc = _exec_source(spec.source, spec.name, rt.ns)
    if rt.mode == "sim":
        disp = rt.cuda.jit(pyfunc)
    else:
        disp = rt.cuda.jit(fastmath=bool(fastmath))(pyfunc)
        if rt.mode == "gpu":
            try:
                disp.compile(_numba_argtypes(spec.arg_types()))
            except Exception as e:
                raise _kernel_error(spec, e) from e
    rt.kernels[key] = (pyfunc, disp)
    return disp, False


_PTX_CACHE: dict = {}


def kernel_ptx(source: str, fn_name: str, arg_types, cc=(9, 0), fastmath=False) -> str:
    """PTX of a generated kernel for compute capability `cc` (no GPU needed). In the
    simulator, numba.cuda has no compiler: a subprocess without the simulator compiles it."""
    cc = tuple(int(c) for c in cc)
    key = (source, tuple((np.dtype(d).str, n) for d, n in arg_types), cc, bool(fastmath))
    hit = _PTX_CACHE.get(key)
    if hit is not None:
        return hit
    rt = runtime()
    if rt.cuda is None:
        raise CudaToolkitError(f"PTX needs numba-cuda: {rt.why}")
    if rt.simulator:
        ptx = _ptx_subprocess(source, fn_name, arg_types, cc, fastmath)
    else:
        ptx = _ptx_here(rt, source, fn_name, arg_types, cc, fastmath)
    _PTX_CACHE[key] = ptx
    return ptx


_PTX_LOCK = threading.Lock()


class _StubDevice:
    def __init__(self, cc):
        self.compute_capability = cc


def _ptx_here(rt, source, fn_name, arg_types, cc, fastmath):
    pyfunc = _exec_source(source, fn_name, rt.ns)
    try:
        with _PTX_LOCK, _device_for_device_functions(rt, cc):
            ptx, _ = rt.cuda.compile_ptx(pyfunc, _numba_argtypes(arg_types), cc=cc,
                                         fastmath=bool(fastmath))
    except Exception as e:
        text = f"{type(e).__name__}: {e}"
        if "NVVM" in text or "nvvm" in text or "libnvvm" in text or "CUDA_HOME" in text:
            raise CudaToolkitError(
                f"cannot compile PTX: the CUDA toolkit's NVVM was not found ({text}). "
                f"Install it with {INSTALL_HINT}") from e
        raise CompilationError(f"Numba CUDA could not compile kernel {fn_name} to PTX: "
                               f"{backend_message_head(e)[0]}", generated_source=source,
                               backend_message=text, kernel=fn_name) from e
    return ptx


class _device_for_device_functions:
    """Numba compiles a kernel's calls of `cuda.jit(device=True)` helpers (such as
    jitviz.random's Threefry hash) for the *current device's* compute capability, which
    needs a driver. Without a GPU, answer that question with the requested `cc`, only while
    compiling PTX."""

    def __init__(self, rt, cc):
        self.rt, self.cc, self.saved = rt, cc, None

    def __enter__(self):
        if self.rt.mode == "gpu":
            return self
        try:
            from numba.cuda import dispatcher
        except ImportError:
            return self
        if hasattr(dispatcher, "get_current_device"):
            self.saved = dispatcher.get_current_device
            dispatcher.get_current_device = lambda: _StubDevice(self.cc)
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            from numba.cuda import dispatcher
            dispatcher.get_current_device = self.saved
        return False


def _extra_helpers(rt):
    """(name, module, qualname) of helper functions other modules added to the kernels'
    namespace (as `cuda_device.register_helper` does), for the PTX subprocess to import."""
    from .cuda_device import base_names
    out = []
    for name, fn in (rt.ns or {}).items():
        if name in base_names():
            continue
        fn = getattr(fn, "py_func", fn)
        mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
        if mod and qual and "<" not in qual:
            out.append([name, mod, qual])
    return out


def _ptx_subprocess(source, fn_name, arg_types, cc, fastmath):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    payload = json.dumps({"source": source, "name": fn_name, "cc": list(cc),
                          "fastmath": bool(fastmath), "helpers": _extra_helpers(runtime()),
                          "args": [[np.dtype(d).str, n] for d, n in arg_types]})
    proc = subprocess.run([sys.executable, "-c",
                           "from jitviz.backends.cuda import _ptx_main; _ptx_main()"],
                          input=payload, capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()
        last = err[-1] if err else "no output"
        if "CudaToolkitError" in last:
            raise CudaToolkitError(last.split(":", 1)[-1].strip())
        raise CompilationError(f"PTX compilation of {fn_name} failed in a subprocess: {last}",
                               generated_source=source, backend_message=proc.stderr,
                               kernel=fn_name)
    return proc.stdout


def _ptx_main():  # the PTX subprocess (see _ptx_subprocess)
    import importlib
    req = json.loads(sys.stdin.read())
    rt = runtime()
    for name, mod, qual in req.get("helpers", []):
        if name not in rt.ns:
            obj = importlib.import_module(mod)
            for part in qual.split("."):
                obj = getattr(obj, part)
            rt.ns[name] = rt.cuda.jit(device=True)(obj)
    ptx = _ptx_here(rt, req["source"], req["name"], [(np.dtype(d), n) for d, n in req["args"]],
                    tuple(req["cc"]), req["fastmath"])
    sys.stdout.write(ptx)


# --- arrays on the device ---------------------------------------------------------------------

class CudaArray:
    """A result that lives on the GPU. `np.asarray(a)` copies it to the host (waiting for the
    kernels that compute it); `a.block_until_ready()` waits; `a.device_array` is the Numba
    device array, and `__cuda_array_interface__` lets CuPy, PyTorch or another jit use it in
    place."""

    __jitviz_device_array__ = True
    __array_priority__ = 1000

    def __init__(self, dev, aval):
        self._dev = dev  # kernel layout: 0-d values are stored with shape (1,)
        self.shape = tuple(aval.shape)
        self.dtype = np.dtype(aval.dtype)
        self.weak_type = bool(aval.weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    @property
    def device_array(self):
        """The Numba device array (0-d values have shape (1,))."""
        return self._dev

    @property
    def __cuda_array_interface__(self):
        iface = dict(self._dev.__cuda_array_interface__)
        if tuple(iface.get("shape", ())) != self.shape:
            iface["shape"], iface["strides"] = self.shape, None
        return iface

    def copy_to_host(self) -> np.ndarray:
        host = self._dev.copy_to_host()
        return host.reshape(self.shape)

    def __array__(self, dtype=None, copy=None):
        host = self.copy_to_host()
        return host if dtype is None else host.astype(dtype, copy=False)

    def block_until_ready(self):
        runtime().synchronize()
        return self

    def __repr__(self):
        body = np.array2string(self.copy_to_host(), separator=", ", prefix="CudaArray(")
        weak = ", weak_type=True" if self.weak_type else ""
        return f"CudaArray({body}, dtype={self.dtype.name}{weak})"

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        return iter(self.copy_to_host())

    def __getitem__(self, item):
        return self.copy_to_host()[item]

    def item(self, *args):
        return self.copy_to_host().item(*args)

    def tolist(self):
        return self.copy_to_host().tolist()

    def __float__(self):
        return float(self.copy_to_host())

    def __int__(self):
        return int(self.copy_to_host())

    def __complex__(self):
        return complex(self.copy_to_host())

    def __bool__(self):
        return bool(self.copy_to_host())

    def __index__(self):
        return int(self.copy_to_host().__index__())

    def astype(self, dtype):
        return self.copy_to_host().astype(dtype)


def _host_op(name):
    def op(self, *args):
        args = [np.asarray(a) if isinstance(a, CudaArray) else a for a in args]
        return getattr(self.copy_to_host(), name)(*args)
    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lt", "le", "gt", "ge", "eq", "ne"):
    for _n in (f"__{_name}__", f"__r{_name}__"):
        if hasattr(np.ndarray, _n):
            setattr(CudaArray, _n, _host_op(_n))
for _n in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(CudaArray, _n, _host_op(_n))
CudaArray.__hash__ = None


def is_device_array(x) -> bool:
    return getattr(x, "__jitviz_device_array__", False) or \
        hasattr(x, "__cuda_array_interface__") or type(x).__name__ == "FakeCUDAArray"


def _kshape(aval):
    return aval.shape if aval.ndim else (1,)


def to_device(rt, x, aval):
    """`x` as a device array in kernel layout (no copy when it is already on the device)."""
    cuda = rt.cuda
    shape = _kshape(aval)
    if isinstance(x, CudaArray):
        dev = x._dev
    elif type(x).__name__ == "FakeCUDAArray" or (rt.mode == "gpu" and
                                                   hasattr(x, "__cuda_array_interface__")):
        dev = x if type(x).__name__ in ("FakeCUDAArray", "DeviceNDArray") else \
            cuda.as_cuda_array(x)
        if np.dtype(dev.dtype) != aval.dtype:
            raise TypeError(f"device array of dtype {dev.dtype} passed where {aval.dtype} was "
                            "traced")
    else:
        host = np.ascontiguousarray(np.asarray(x), dtype=aval.dtype).reshape(shape)
        return rt.to_device(host)
    if tuple(dev.shape) != shape:
        dev = dev.reshape(shape)
    return dev


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
        outs = [self.rt.empty((v.aval.size if v.aval.ndim else 1,), v.aval.dtype)
                for v in spec.outputs]
        if spec.elements > 0 and self.exe.timings is not None:
            self._timed_launch(spec, args, outs)
        elif spec.elements > 0:
            disp = self.exe.dispatcher(spec)
            if self.rt.simulator:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    disp[spec.grid, spec.block](*args, *outs)
            else:
                disp[spec.grid, spec.block](*args, *outs)
        for v, o in zip(spec.outputs, outs):
            shape = _kshape(v.aval)
            env[v] = o if tuple(o.shape) == shape else o.reshape(shape)

    def _timed_launch(self, spec, args, outs):
        """profile=True: the kernel alone, between two synchronizations."""
        disp = self.exe.dispatcher(spec)
        self.rt.synchronize()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the simulator's overflow noise
            t0 = time.perf_counter()
            disp[spec.grid, spec.block](*args, *outs)
            self.rt.synchronize()
        self.exe.timings.add(spec.name, spec.eqns, time.perf_counter() - t0)

    def host_print(self, step, env):
        from ..debug import emit
        self.rt.synchronize()
        vals = []
        for a in step.atoms:
            if isinstance(a, Literal):
                vals.append(literal_value(a))
            else:
                vals.append(env[a].copy_to_host().reshape(a.aval.shape))
        sys.stdout.flush()
        emit(step.eqn.params["fmt"], step.eqn.params["names"], vals)

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
        self.rt = _RT
        self.fastmath = fastmath
        self._consts: dict = {}
        self._literals: dict = {}
        self._dispatchers: dict = {}
        super().__init__(self._run, kernels, closed, "cuda", timings)

    def dispatcher(self, spec):
        d = self._dispatchers.get(spec.name)
        if d is None:
            d = self._dispatchers[spec.name] = get_kernel(spec, self.fastmath)[0]
        return d

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
        e = next(e for e in spec.eqns if e.primitive.name == "dot_general")
        k = int(np.prod([e.invars[0].aval.shape[a] for a in
                         e.params["dimension_numbers"][0][0]], dtype=np.int64))
        return Cost(2 * spec.elements * max(k, 1) + spec.elements * (len(spec.eqns) - 1),
                    moved)
    return Cost(spec.elements * max(1, len(spec.eqns)), moved)


class CudaBackend(Backend):
    name = "cuda"

    def available(self):
        rt = runtime()
        return rt.mode is not None, rt.why

    def block_until_ready(self, x):
        runtime().synchronize()
        return x

    def compile(self, closed: ClosedJaxpr, *, fastmath=False, parallel=False,
                profile=False) -> Executable:
        rt = runtime()
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
