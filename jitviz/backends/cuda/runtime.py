"""The CUDA runtime: `numba.cuda`, imported once and lazily, the names generated kernels call,
and the in-process cache of compiled kernels.

`numba.cuda` is imported on first use (so `NUMBA_ENABLE_CUDASIM=1` set at the top of a notebook
still selects Numba's simulator). Kernels are self-contained Python: arithmetic, conditional
expressions, typed literals (`np.float32(0.5)`) and a few math names. On a GPU those names are
`math`/`cmath` functions and libdevice intrinsics (`rintf`, `cbrtf`, `exp2f`, `nextafterf`),
which Numba's CUDA target compiles without asking a device (so PTX can be produced on a machine
without a GPU). In Numba's CUDA simulator kernels run as Python threads on NumPy scalars, where
`math.log(-1.0)` raises and `math.nextafter` works in double precision: there the same names
are NumPy's ufuncs, with the interpreter's semantics. The generated source is identical in
both. The helpers of registered rules (`register_lowering(..., helpers=[fn])`, such as
jitviz.random's Threefry hash) join the namespace as device functions (the plain function in
the simulator) when a kernel is built, so rules registered after the runtime loaded are found.
"""
from __future__ import annotations

import cmath
import functools
import linecache
import math
import os
import sys
import threading

import numpy as np

from ...core.registry import lowering_helpers
from ...errors import CompilationError, JitvizError, backend_message_head
from .plan import SIMULATOR_TARGET, Target

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
        self._base_ns = None
        self._helpers: dict = {}  # name -> (plain function, what kernels call)
        self._target = None
        self.kernels: dict = {}  # (source, argument types, fastmath, mode) -> Launcher
        self._thread = threading.local()

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
            self._base_ns = _base_namespace(cuda, self.mode == "sim")
            self.loaded = True
        return self

    def namespace(self) -> dict:
        """The globals generated kernels are executed in: the base names and every helper
        the CUDA rules call (compiled once each, as a device function on a GPU)."""
        ns = dict(self._base_ns)
        for name, fn in lowering_helpers("cuda.expr").items():
            have = self._helpers.get(name)
            if have is None or have[0] is not fn:
                have = self._helpers[name] = (fn, fn if self.simulator else
                                              self.cuda.jit(device=True)(fn))
            ns[name] = have[1]
        return ns

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

    def make_context_current(self):
        """Make Numba's CUDA context current on the calling thread, once per thread.

        Kernels launch through cuda.core (`DirectLaunch`), which needs a current context but
        does not make one current. Numba does, the first time a thread asks for it, and leaves
        it current; so only a thread's first call asks. (Calls used to run inside
        `cuda.require_context`, which asks the driver on every call: 11-12 us of a SELU
        call's 49 on an H200's host, 2026-11-27.)"""
        if not getattr(self._thread, "has_context", False):
            self.cuda.current_context()
            self._thread.has_context = True

    def synchronize(self):
        if self.mode is not None:
            self.cuda.synchronize()

    @functools.cached_property
    def pool(self):
        """Recycled device buffers (pool.py); None in the simulator."""
        from .pool import DevicePool
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



# name in kernels -> (GPU: attribute of `math`, simulator: NumPy function)
_MATH = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt, "floor": np.floor,
    "ceil": np.ceil, "fmod": np.fmod, "atan2": np.arctan2, "isfinite": np.isfinite,
    "copysign": np.copysign,
}
# complex forms -> cmath on the GPU
_CMATH = {"cexp": np.exp, "clog": np.log, "csqrt": np.sqrt, "casin": np.arcsin,
          "cacos": np.arccos, "catan": np.arctan, "casinh": np.arcsinh, "catanh": np.arctanh}
# libdevice intrinsics (float32 names end in f)
_LIBDEVICE = {"rint": np.rint, "cbrt": np.cbrt, "exp2": np.exp2, "nextafter": np.nextafter}


def _base_namespace(cuda, simulator: bool) -> dict:
    """The names every generated kernel may call (before the rules' helpers)."""
    ns = {"np": np, "math": math, "cmath": cmath, "cuda": cuda}
    if simulator:
        ns.update(_MATH)
        ns.update(_CMATH)
        for name, fn in _LIBDEVICE.items():
            ns[name] = ns[name + "f"] = fn
        return ns
    for name in _MATH:
        ns[name] = getattr(math, name)
    for name in _CMATH:
        ns[name] = getattr(cmath, name[1:])
    from numba.cuda import libdevice
    for name in _LIBDEVICE:
        ns[name] = getattr(libdevice, name)
        ns[name + "f"] = getattr(libdevice, name + "f")
    return ns


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


class Launcher:
    """A compiled kernel and how to launch it: `launcher(grid, block, inputs, outputs)`.

    On a GPU the kernel is compiled once, for C-contiguous arrays of its argument types, as a
    dispatcher specialized to that signature (`cuda.jit(signature)`), and launched through
    `DirectLaunch`, which skips Numba's per-call work. Every array jitviz makes is
    C-contiguous; an input that is not (a strided device array of the user's) is launched
    through a generic dispatcher instead, which compiles for its layout on first use, since the
    specialized code would index it as if it were contiguous. In the simulator there is only
    the generic one.
    """

    def __init__(self, rt, pyfunc, fastmath, exact=None):
        self.rt, self.pyfunc, self.fastmath = rt, pyfunc, bool(fastmath)
        self.exact = exact
        self._generic = None
        self._direct = None
        #: how contiguous arguments are launched: "direct", or why Numba's launch is used
        self.how = "numba's launch (simulator)" if exact is None else "direct"

    @property
    def generic(self):
        if self._generic is None:
            jit = self.rt.cuda.jit if self.rt.simulator else \
                self.rt.cuda.jit(fastmath=self.fastmath)
            self._generic = jit(self.pyfunc)
        return self._generic

    def __call__(self, grid, block, inputs, outputs):
        """Launch on `inputs`, writing `outputs`: C-contiguous arrays the kernel writes as
        flat ones (they may have their final shape: the direct launch passes them flat)."""
        exact = self.exact
        if exact is None or not all(a.is_c_contiguous() for a in inputs):
            self.generic[grid, block](*inputs, *_flat(outputs))
            return
        direct = self._direct
        if direct is None:
            direct = self._direct = self._make_direct()
        if direct is False:
            exact[grid, block](*inputs, *_flat(outputs))
        else:
            direct(grid, block, inputs, outputs)

    def _make_direct(self):
        try:
            return DirectLaunch.of(self.exact)
        except (ImportError, AttributeError, StopIteration) as e:  # another numba-cuda
            self.how = f"numba's launch: DirectLaunch unavailable ({type(e).__name__}: {e})"
            return False


class DirectLaunch:
    """A compiled kernel launched through cuda.core, as Numba launches it, minus its per-call
    work.

    Numba's launch of a specialized kernel builds, on every call, a launch configuration, a
    cuda.core `LaunchConfig` and a stream object, wraps each argument and looks up the loaded
    function: 37-47 us a launch on an H200's host (2026-11-27), where the kernel of a
    1M-value SELU runs for about 10. Here those are made once, and a call passes each
    array as Numba's kernel ABI lays it out (meminfo, parent, size, itemsize, data pointer,
    shape, strides: `numba.cuda.dispatcher._Kernel._prepare_args`, which
    tests/test_cuda_pool.py compares with this on real Numba device arrays). Launches go to
    the default stream, as Numba's do, on the device whose context was current at the first
    launch (jitviz runs on one device per process; the README says so).
    """

    def __init__(self, function, stream, launch, config_type, cooperative_option):
        self.function, self.stream = function, stream
        self._launch, self._config_type = launch, config_type
        self._cooperative = {cooperative_option: False}
        self._configs: dict = {}

    @classmethod
    def of(cls, dispatcher):
        """The direct launch of a specialized Numba dispatcher's one kernel (its module loaded
        into the current context). Reads Numba internals: AttributeError or ImportError where
        a numba-cuda release has moved them."""
        from numba.cuda._compat import CUDA_CORE_GE_1_0
        from numba.cuda.cudadrv import driver
        from numba.cuda.dispatcher import LaunchConfig, launch
        kernel = next(iter(dispatcher.overloads.values()))
        return cls(kernel._codelibrary.get_cufunc().kernel, driver._to_core_stream(0), launch,
                   LaunchConfig, "is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch")

    def config(self, grid, block):
        cfg = self._configs.get((grid, block))
        if cfg is None:
            cfg = self._configs[grid, block] = self._config_type(
                grid=grid, block=block, shmem_size=0, **self._cooperative)
        return cfg

    def __call__(self, grid, block, inputs, outputs):
        args = []
        for a in inputs:
            args.extend(array_arguments(a))
        for a in outputs:
            args.extend(flat_array_arguments(a))
        self._launch(self.stream, self.config(grid, block), self.function, *args)


def array_arguments(a) -> tuple:
    """A C-contiguous device array as a Numba kernel receives it (an array is a struct:
    meminfo and parent, null on a device; item count; item size; data pointer; shape; strides
    in bytes)."""
    return (0, 0, a.size, a.dtype.itemsize, a.device_ctypes_pointer.value or 0, *a.shape,
            *a.strides)


def flat_array_arguments(a) -> tuple:
    """`array_arguments` of a C-contiguous array seen as one dimension (`a.reshape(a.size)`,
    without making that view)."""
    n, itemsize = a.size, a.dtype.itemsize
    return (0, 0, n, itemsize, a.device_ctypes_pointer.value or 0, n, itemsize)


def _flat(arrays):
    return [a if a.ndim == 1 else a.reshape(a.size) for a in arrays]


def get_kernel(spec, fastmath=False):
    """(Launcher, reused?) for a kernel spec, from the in-process cache by source and argument
    types: one source serves several dtypes (`out[i] = exp(x[i])`), and the launcher's kernel
    is compiled for exactly one signature."""
    rt = runtime()
    key = (spec.source, tuple((np.dtype(dt).str, nd) for dt, nd in spec.arg_types()),
           bool(fastmath), rt.mode)
    hit = rt.kernels.get(key)
    if hit is not None:
        return hit, True
    pyfunc = _exec_source(spec.source, spec.name, rt.namespace())
    exact = None
    if rt.mode == "gpu":
        from numba import types
        signature = types.void(*_numba_argtypes(spec.arg_types()))
        try:
            exact = rt.cuda.jit(signature, fastmath=bool(fastmath))(pyfunc)
        except Exception as e:
            raise _kernel_error(spec, e) from e
    launcher = rt.kernels[key] = Launcher(rt, pyfunc, fastmath, exact)
    return launcher, False
