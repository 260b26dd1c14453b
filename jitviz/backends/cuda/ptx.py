"""PTX of generated kernels, for any compute capability, without a GPU.

    kernel_ptx(source, "k1_exp_mul", [(np.float32, 1), (np.float32, 1)], cc=(9, 0))

With a GPU, or without one and without the simulator, Numba's CUDA target compiles here. In
the simulator `numba.cuda` has no compiler, so a subprocess without the simulator compiles the
kernel (`python -c "from jitviz.backends.cuda.ptx import main; main()"`); it imports the
modules that registered the helpers the kernel calls, so its namespace has them too.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

from ...core.registry import lowering_helpers
from ...errors import CompilationError, backend_message_head
from .runtime import INSTALL_HINT, CudaToolkitError, _exec_source, _numba_argtypes, runtime

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
    pyfunc = _exec_source(source, fn_name, rt.namespace())
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


def _helper_modules() -> list:
    """The modules whose import registers the helpers of the CUDA rules (for the PTX
    subprocess, which imports them)."""
    return sorted({fn.__module__ for fn in lowering_helpers("cuda.expr").values()})


def _ptx_subprocess(source, fn_name, arg_types, cc, fastmath):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    root = str(Path(__file__).resolve().parents[3])  # the directory holding jitviz/
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    payload = json.dumps({"source": source, "name": fn_name, "cc": list(cc),
                          "fastmath": bool(fastmath), "modules": _helper_modules(),
                          "args": [[np.dtype(d).str, n] for d, n in arg_types]})
    proc = subprocess.run([sys.executable, "-c",
                           "from jitviz.backends.cuda.ptx import main; main()"],
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


def main():  # the PTX subprocess (see _ptx_subprocess)
    import importlib
    req = json.loads(sys.stdin.read())
    for module in req["modules"]:
        importlib.import_module(module)
    ptx = _ptx_here(runtime(), req["source"], req["name"],
                    [(np.dtype(d), n) for d, n in req["args"]], tuple(req["cc"]),
                    req["fastmath"])
    sys.stdout.write(ptx)
