"""The CPU kernel cache: generated modules keyed by their text, in memory and on disk.

A kernel module is a real file `<cache>/<tag>/jk_<hash>.py` whose name is the hash of its
text, so Numba's own `cache=True` (which needs a source file) stores the machine code next
to it in `__pycache__`. `<tag>` names the Numba version, the CPU (name and features) and a
hash of `cpu_runtime.py` and `vecmath.py` (whose helpers are compiled into the kernels), so a different
machine, Numba or jitviz never reads another's code.

Nothing on disk is trusted blindly: a module file whose text differs from what we asked for
(truncated, edited, a hash collision) is rewritten, and if Numba fails to load its cached
code (a corrupt index or object file) those cache files are deleted and the kernel is
compiled again.

In memory, one module object per text: a retrace that produces the same kernel text (a new
shape of the same rank and dtypes) finds the module and its Numba dispatcher, whose compiled
specializations are keyed by argument types, so no LLVM compile happens at all.
"""
from __future__ import annotations

import glob
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import warnings

import numba
from numba.core import errors as numba_errors

from ..errors import JitvizWarning

_LOCK = threading.RLock()


def default_cache_dir() -> str:
    env = os.environ.get("JITVIZ_CACHE_DIR")
    if env:
        return env
    try:
        import platformdirs
        return platformdirs.user_cache_dir("jitviz")
    except ImportError:
        return os.path.join(os.path.expanduser("~"), ".cache", "jitviz")


def _cpu_tag() -> str:
    """The CPU Numba compiles for: NUMBA_CPU_NAME/NUMBA_CPU_FEATURES when set (an AVX2 build
    on an AVX-512 host is other code: vecmath scales by exponent bits there), else the host."""
    import llvmlite.binding as ll
    from numba.core import config
    try:
        cpu = ((config.CPU_NAME or ll.get_host_cpu_name())
               + (config.CPU_FEATURES if config.CPU_FEATURES is not None
                  else ll.get_host_cpu_features().flatten()))
    except Exception:  # pragma: no cover - very old llvmlite
        cpu = "unknown-cpu"
    return hashlib.sha256(cpu.encode()).hexdigest()[:10]


def _runtime_tag() -> str:
    from . import cpu_runtime, vecmath
    h = hashlib.sha256()
    for mod in (cpu_runtime, vecmath):  # vecmath's functions are compiled into kernels too
        with open(mod.__file__, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:8]


def environment_tag() -> str:
    return f"numba{numba.__version__}-cpu{_cpu_tag()}-rt{_runtime_tag()}"


class KernelCache:
    """Modules by text hash; `compile(dispatcher, sig)` says whether it was reused."""

    def __init__(self, root: str | None = None):
        self.root = root or default_cache_dir()
        self.tag = environment_tag()
        self.dir = os.path.join(self.root, self.tag)
        self._modules: dict[str, object] = {}
        self.rebuilt = 0  # corrupt or foreign entries thrown away (for tests and events)
        try:
            os.makedirs(self.dir, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=self.dir, prefix=".probe", delete=True)
            probe.close()
        except OSError as e:  # read-only home, full disk: compile anyway, cache per process
            self.dir = tempfile.mkdtemp(prefix="jitviz-kernels-")
            warnings.warn(f"jitviz kernel cache {self.root!r} is not writable ({e}); compiled "
                          f"kernels go to {self.dir} and will not outlive this process. Set "
                          "JITVIZ_CACHE_DIR to a writable folder.", JitvizWarning, stacklevel=3)

    # -- modules ---------------------------------------------------------------------------
    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.tag}\n{text}".encode()).hexdigest()[:24]

    def module(self, text: str):
        """The imported module for `text` (written to disk first if needed)."""
        key = self.key(text)
        with _LOCK:
            mod = self._modules.get(key)
            if mod is None:
                mod = self._modules[key] = self._import(key, text)
            return mod

    def path(self, key: str) -> str:
        return os.path.join(self.dir, f"jk_{key}.py")

    def _import(self, key: str, text: str):
        path = self.path(key)
        if _read(path) != text:
            if os.path.exists(path):
                self.rebuilt += 1
                self.purge(key)
            _atomic_write(path, text)
        name = f"jk_{key}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    def purge(self, key: str):
        """Delete Numba's cached code for one module."""
        for f in glob.glob(os.path.join(self.dir, "__pycache__", f"jk_{key}.*")):
            try:
                os.remove(f)
            except OSError:
                pass

    # -- compiling -------------------------------------------------------------------------
    def compile(self, text: str, dispatcher, sig) -> bool:
        """Make sure `dispatcher` has code for `sig`; True if nothing had to be compiled
        (in memory already, or loaded from the disk cache)."""
        with _LOCK:
            if sig in dispatcher.overloads:
                return True
            hits = _hits(dispatcher)
            try:
                dispatcher.compile(sig)
            except numba_errors.NumbaError:
                raise
            except Exception:
                # Numba could not read its cache (corrupt or foreign files): rebuild
                self.rebuilt += 1
                self.purge(self.key(text))
                dispatcher.compile(sig)
            return _hits(dispatcher) > hits


def _hits(dispatcher) -> int:
    try:
        return sum(dispatcher.stats.cache_hits.values())
    except Exception:  # pragma: no cover
        return 0


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _atomic_write(path: str, text: str):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


_default: KernelCache | None = None


def default_cache() -> KernelCache:
    global _default
    with _LOCK:
        want = default_cache_dir()
        if _default is None or _default.root != want:
            _default = KernelCache(want)
        return _default
