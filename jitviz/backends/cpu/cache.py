"""The CPU kernel cache: generated modules keyed by their text, in memory and on disk.

On disk, one folder per environment, `<cache>/<tag>/`, where `<tag>` names the Numba and
llvmlite versions, the CPU (name and features) and a hash of `runtime.py`, `vecmath*.py`
and the modules they import from (whose helpers are compiled into the kernels). One entry per kernel module:

    jk_<key>.py                                  the module text; <key> hashes the text
    __pycache__/jk_<key>.<fn>-<line>.py311.nbi   Numba's index: signature -> code file
    __pycache__/jk_<key>.<fn>-<line>.py311.N.nbc the compiled code of one signature

Nothing on disk is trusted blindly. Numba's own `cache=True` unpickles whatever it finds and
hands the machine code to LLVM: a swapped code file silently computes another kernel, a
flipped bit segfaults or aborts inside LLVM, and the broken files stay for every later
process. So the modules are compiled without `cache=True`, and each dispatcher gets a
`VerifiedCache` instead: Numba's index/data scheme (`numba.core.caching`), with every file
written as a frame

    MAGIC, a JSON header, sha256(header + payload), the payload (what Numba would write)

whose header says what the file is: which file name, kernel text, signature (for code
files), Numba, llvmlite, Python, CPU and runtime wrote it. A file is read once, as bytes;
only if the digest matches and the header is exactly what this process would write for that
file are the same bytes unpickled. Verifying the bytes that are then loaded (rather than
checking a sidecar manifest before Numba opens the file again) leaves no window between
check and use, and self-describing files need no shared manifest for concurrent processes
to keep in step. The module text itself is compared with the text asked for and executed
from that string, not re-read. The `runtime` helpers that drivers call directly get the
same cache (`_verify_runtime_helpers`). This subclasses `numba.core.caching` internals, so a
Numba release that reshapes them breaks here, loudly, not silently (tests:
test_kernel_cache_integrity.py).

Any mismatch (a swapped, bit-flipped or truncated file, one from other versions, a
directory, link or unreadable thing where a file should be) rejects the entry: a
`KernelCacheWarning` says which file and why, that function's cache files are deleted and
the kernel is compiled again. The digest guards against damage and mix-ups, not against
someone who can write to the cache folder: they can run code as you anyway.

The disk cache is bounded: when the bytes written make it exceed
`jitviz.config.kernel_cache_max_bytes` (env `JITVIZ_CACHE_MAX_BYTES`, default 256 MiB), the
least recently used entries (of every environment folder under `<cache>`: upgrades leave old
ones behind) are deleted down to three quarters of the budget. A module file's
modification time is its entry's last use (touched when a process first uses it); the folder
is scanned only on a process's first write and when the running total passes the budget.

In memory, one module object per text: a retrace that produces the same kernel text (a new
shape of the same rank and dtypes) finds the module and its Numba dispatcher, whose compiled
specializations are keyed by argument types, so no LLVM compile happens at all.
"""
from __future__ import annotations

import glob
import hashlib
import importlib.util
import json
import os
import pickle
import re
import shutil
import stat
import sys
import tempfile
import threading
import warnings

import llvmlite
import numba
from numba.core.caching import (CompileResultCacheImpl, FunctionCache, IndexDataCacheFile,
                                _CacheLocator)
from numba.core.dispatcher import Dispatcher

from ...config import config
from ...errors import KernelCacheWarning

_LOCK = threading.RLock()
MAGIC = b"jitviz kernel cache file 1\n"
RUNTIME_FILES = "jitviz.backends.cpu.runtime."  # how Numba names the helpers' files
LOW_WATER = 0.75  # evict down to this share of the budget, so eviction is not on every write


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


def runtime_files() -> list[str]:
    """The files whose code kernels compile in: runtime.py, vector_isa.py and every
    vecmath*.py (by pattern, so that a new one cannot be left out: vecmath_erf.py was, for
    a commit, and kernels cached before a change to it would have been reused), and the
    modules outside this folder they import from (`from ...lax.special import
    lgamma_scalar`: vecmath compiles that helper into lgamma's kernels)."""
    folder = os.path.dirname(os.path.abspath(__file__))
    own = [os.path.join(folder, "runtime.py"), os.path.join(folder, "vector_isa.py")] + \
        sorted(glob.glob(os.path.join(folder, "vecmath*.py")))
    outside = sorted({p for path in own for p in _imported_from_outside(path, folder)})
    return own + outside


def _imported_from_outside(path, folder) -> list[str]:
    """The files of `from ..x.y import ...` lines of `path` (relative imports of two or more
    dots: those leave `folder`)."""
    found = []
    with open(path, encoding="utf-8") as f:
        for dots, module in re.findall(r"^from (\.{2,})([\w.]+) import", f.read(), re.M):
            base = folder
            for _ in range(len(dots) - 1):
                base = os.path.dirname(base)
            stem = os.path.join(base, *module.split("."))
            found.append(stem + ".py" if os.path.isfile(stem + ".py")
                         else os.path.join(stem, "__init__.py"))
    return found


def _runtime_tag() -> str:
    h = hashlib.sha256()
    for path in runtime_files():
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + b"\0" + f.read())
    return h.hexdigest()[:8]


def environment_tag() -> str:
    return (f"numba{numba.__version__}-llvmlite{llvmlite.__version__}-cpu{_cpu_tag()}"
            f"-rt{_runtime_tag()}")


def _writer() -> dict:
    """What the header of every file this process writes says about its writer."""
    return {"numba": numba.__version__, "llvmlite": llvmlite.__version__,
            "python": sys.version, "cpu": _cpu_tag(), "runtime": _runtime_tag()}


class CacheEntryRejected(Exception):
    """A cache file that failed verification (reported as a KernelCacheWarning)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{os.path.basename(path)} {reason}")
        self.path = path


class KernelCache:
    """Modules by text hash; `compile(dispatcher, sig)` says whether it was reused."""

    def __init__(self, root: str | None = None):
        self.root = root or default_cache_dir()
        self.tag = environment_tag()
        self.dir = os.path.join(self.root, self.tag)
        self.writer = _writer()
        self._modules: dict[str, object] = {}
        self._bytes_on_disk: int | None = None  # unknown until this process first writes
        self.rebuilt = 0  # rejected entries thrown away (for tests and events)
        try:
            os.makedirs(self.dir, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=self.dir, prefix=".probe", delete=True)
            probe.close()
        except OSError as e:  # read-only home, full disk: compile anyway, cache per process
            self.dir = tempfile.mkdtemp(prefix="jitviz-kernels-")
            warnings.warn(f"jitviz kernel cache {self.root!r} is not writable ({e}); compiled "
                          f"kernels go to {self.dir} and will not outlive this process. Set "
                          "JITVIZ_CACHE_DIR to a writable folder.", KernelCacheWarning,
                          stacklevel=3)
        if os.path.lexists(self.code_dir) and (os.path.islink(self.code_dir) or
                                               not os.path.isdir(self.code_dir)):
            self.reject(CacheEntryRejected(self.code_dir, "is not a folder"), "")

    # -- modules ---------------------------------------------------------------------------
    def key(self, text: str) -> str:
        """The text's hash (not the tag's too: files copied in from another environment
        then meet the header check, and are rejected, rather than lie around unseen)."""
        return hashlib.sha256(text.encode()).hexdigest()[:24]

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

    @property
    def code_dir(self) -> str:
        return os.path.join(self.dir, "__pycache__")

    def _import(self, key: str, text: str):
        self._ensure_module_file(key, text)
        name = f"jk_{key}"
        spec = importlib.util.spec_from_file_location(name, self.path(key))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        # run the text we verified, not whatever the file holds by the time it is re-read
        exec(compile(text, self.path(key), "exec"), mod.__dict__)
        for obj in list(vars(mod).values()):
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == name:
                obj._cache = VerifiedCache(obj.py_func, self, text)
        return mod

    def _ensure_module_file(self, key: str, text: str):
        """The module file holds `text` (and its mtime says the entry was just used)."""
        path = self.path(key)
        try:
            found = _read_file(path)
            if found is not None and found != text.encode():
                raise CacheEntryRejected(path, "does not hold the text its name is a hash of")
        except CacheEntryRejected as e:
            self.reject(e, self.code_files(key))
            found = None
        if found is None:
            self._atomic_write(path, text.encode())
        else:
            _touch(path)

    # -- verification failures -------------------------------------------------------------
    def reject(self, error: CacheEntryRejected, pattern: str):
        """Delete the rejected file and the Numba files matching `pattern`; say so."""
        self.rebuilt += 1
        warnings.warn(f"jitviz kernel cache: rejected {error}; deleted the entry and compiled "
                      f"the kernel again (in {self.dir})", KernelCacheWarning, stacklevel=2)
        _remove(error.path)
        for path in glob.glob(pattern):
            _remove(path)

    def code_files(self, key: str) -> str:
        """A glob pattern for Numba's files of one module."""
        return glob.escape(os.path.join(self.code_dir, f"jk_{key}.")) + "*"

    # -- compiling -------------------------------------------------------------------------
    def compile(self, text: str, dispatcher, sig) -> bool:
        """Make sure `dispatcher` has code for `sig`; True if nothing had to be compiled
        (in memory already, or loaded from the disk cache)."""
        with _LOCK:
            if sig in dispatcher.overloads:
                return True
            hits = _hits(dispatcher)
            dispatcher.compile(sig)
            if _hits(dispatcher) > hits:
                return True
            key = self.key(text)
            if not os.path.isfile(self.path(key)):  # evicted while this process used it
                self._atomic_write(self.path(key), text.encode())
            self._keep_to_budget(protect=key)
            return False

    # -- writing and the size budget -------------------------------------------------------
    def _atomic_write(self, path: str, data: bytes):
        _atomic_write(path, data)
        self.wrote(len(data))

    def wrote(self, nbytes: int):
        if self._bytes_on_disk is not None:
            self._bytes_on_disk += nbytes

    def _keep_to_budget(self, protect: str):
        """Evict least recently used entries when the running total says we may be over
        budget (overwritten files count twice, so it errs towards a rescan)."""
        budget = config.kernel_cache_max_bytes
        if self._bytes_on_disk is not None and self._bytes_on_disk <= budget:
            return
        entries = _scan_entries(self._environment_dirs())
        total = sum(e.size for e in entries.values())
        if total > budget:
            for place in sorted(entries, key=lambda p: entries[p].last_used):
                if total <= budget * LOW_WATER:
                    break
                if place != (self.dir, protect):
                    entries[place].remove()
                    total -= entries[place].size
        self._bytes_on_disk = total

    def _environment_dirs(self) -> list[str]:
        """This environment's folder and the others beside it (left by other Numba versions,
        CPUs, runtimes): they share the budget, and nobody else would ever clean them."""
        if self.dir != os.path.join(self.root, self.tag):  # a private fallback folder
            return [self.dir]
        try:
            return [e.path for e in os.scandir(self.root) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return [self.dir]


class _Entry:
    """The files of one kernel module on disk."""

    def __init__(self):
        self.paths: list[str] = []
        self.size = 0
        self.last_used = 0.0

    def add(self, path: str, st: os.stat_result):
        self.paths.append(path)
        self.size += st.st_size if stat.S_ISREG(st.st_mode) else 0
        if path.endswith(".py") or not self.last_used:  # the module file's mtime wins
            self.last_used = st.st_mtime

    def remove(self):
        for path in self.paths:
            _remove(path)


def _scan_entries(folders: list[str]) -> dict[tuple[str, str], _Entry]:
    """Entries by (environment folder, key)."""
    entries: dict[tuple[str, str], _Entry] = {}
    for folder in folders:
        for sub in (folder, os.path.join(folder, "__pycache__")):
            try:
                listing = list(os.scandir(sub))
            except OSError:
                continue
            for item in listing:
                key = _entry_key(item.name)
                if key is None:
                    continue
                try:
                    st = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                entries.setdefault((folder, key), _Entry()).add(item.path, st)
    return entries


def _entry_key(name: str) -> str | None:
    """The entry a cache file belongs to: its kernel module, or the runtime helpers."""
    if name.startswith("jk_"):
        return name[3:27]
    if name.startswith(RUNTIME_FILES):
        return "runtime"
    return None


# --- Numba's cache, verified --------------------------------------------------------------

class _Locator(_CacheLocator):
    """Numba's files for a kernel go next to its module, whatever NUMBA_CACHE_DIR says, so
    one entry's files are found together (verification, eviction); the source stamp is the
    hash of the text we executed."""

    def __init__(self, py_func, folder: str, text_hash: str):
        self._py_file = py_func.__code__.co_filename
        self._lineno = py_func.__code__.co_firstlineno
        self._folder, self._stamp = folder, text_hash

    def get_cache_path(self):
        return self._folder

    def get_source_stamp(self):
        return self._stamp

    def get_disambiguator(self):
        return str(self._lineno)


class _Impl(CompileResultCacheImpl):
    def __init__(self, py_func, locator: _Locator):  # no locator search: ours is fixed
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = locator
        self._filename_base = self.get_filename_base(
            f"{py_func.__module__}.{py_func.__qualname__}", getattr(sys, "abiflags", ""))


class VerifiedCache(FunctionCache):
    """A dispatcher's disk cache that loads nothing it cannot verify (see the module doc)."""

    def __init__(self, py_func, owner: KernelCache, text: str):
        text_hash = hashlib.sha256(text.encode()).hexdigest()
        self._name = repr(py_func)
        self._py_func = py_func
        self._owner = owner
        self._impl = _Impl(py_func, _Locator(py_func, owner.code_dir, text_hash))
        self._cache_path = owner.code_dir
        header = {**owner.writer, "text": text_hash}
        self._cache_file = _VerifiedFiles(self._cache_path, self._impl.filename_base,
                                          text_hash, header, owner.wrote)
        self.enable()

    def _own_files(self) -> str:
        return glob.escape(os.path.join(self._cache_path, self._impl.filename_base)) + ".*"

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except CacheEntryRejected as e:
            self._owner.reject(e, self._own_files())
        except Exception as e:  # verified, yet Numba cannot rebuild it: not ours to load
            self._owner.reject(CacheEntryRejected(self._cache_file.index_path,
                                                  f"could not be loaded ({e!r})"),
                               self._own_files())
        return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except CacheEntryRejected as e:  # the index went bad since it was loaded
            self._owner.reject(e, self._own_files())  # the next process writes a new one
        except OSError as e:
            warnings.warn(f"jitviz kernel cache: could not save {self._py_func.__name__!r} "
                          f"({e}); it will be compiled again by the next process",
                          KernelCacheWarning, stacklevel=2)


class _VerifiedFiles(IndexDataCacheFile):
    """Numba's index and data files, each framed with a header and its sha256; the data
    files' headers also name the signature they hold (the index key), so a code file
    cannot stand in for another signature even with a matching index."""

    def __init__(self, cache_path, filename_base, source_stamp, header: dict, wrote):
        super().__init__(cache_path, filename_base, source_stamp)
        self._header, self._wrote = header, wrote

    @property
    def index_path(self) -> str:
        return self._index_path

    def load(self, key):
        name = self._load_index().get(key)
        data = None if name is None else self._read(name, key)
        return None if data is None else pickle.loads(data)  # None: a miss, compile

    def save(self, key, data):
        overloads = self._load_index()
        name = overloads.get(key)
        if name is None:
            taken = set(overloads.values())
            name = next(self._data_name(i) for i in range(1, len(taken) + 2)
                        if self._data_name(i) not in taken)
            overloads[key] = name
            self._save_index(overloads)
        self._write(name, self._dump(data), key)

    def _load_index(self):
        payload = self._read(self._index_name)
        if payload is None:
            return {}
        stamp, overloads = pickle.loads(payload)
        return overloads if stamp == self._source_stamp else {}

    def _save_index(self, overloads):
        self._write(self._index_name, self._dump((self._source_stamp, overloads)))

    def _expected(self, name: str, key) -> dict:
        header = {**self._header, "file": name}
        if key is not None:
            header["signature"] = hashlib.sha256(repr(key).encode()).hexdigest()
        return header

    def _read(self, name: str, key=None) -> bytes | None:
        path = os.path.join(self._cache_path, name)
        data = _read_file(path)
        return None if data is None else _unframe(path, data, self._expected(name, key))

    def _write(self, name: str, payload: bytes, key=None):
        data = _frame(self._expected(name, key), payload)
        with self._open_for_write(os.path.join(self._cache_path, name)) as f:
            f.write(data)
        self._wrote(len(data))


def _frame(header: dict, payload: bytes) -> bytes:
    head = json.dumps(header, sort_keys=True).encode()
    digest = hashlib.sha256(head + b"\n" + payload).hexdigest().encode()
    return MAGIC + head + b"\n" + digest + b"\n" + payload


def _unframe(path: str, data: bytes, expected: dict) -> bytes:
    """The payload, if `data` is intact and says it is exactly the file we expect."""
    if not data.startswith(MAGIC):
        raise CacheEntryRejected(path, "is not a jitviz cache file (damaged or foreign)")
    parts = data[len(MAGIC):].split(b"\n", 2)
    if len(parts) != 3 or \
            hashlib.sha256(parts[0] + b"\n" + parts[2]).hexdigest().encode() != parts[1]:
        raise CacheEntryRejected(path, "fails its sha256 check (damaged or truncated)")
    mismatch = _mismatch(json.loads(parts[0]), expected)
    if mismatch:
        raise CacheEntryRejected(path, mismatch)
    return parts[2]


def _mismatch(header: dict, expected: dict) -> str | None:
    """Why an intact file is still not the one we expect, most telling reason first."""
    if header.get("file") != expected["file"]:
        return f"holds {header.get('file')} (swapped or copied)"
    if header.get("text") != expected["text"]:
        return "was compiled from another kernel text"
    if header.get("signature") != expected.get("signature"):
        return "holds the code of another signature"
    theirs = [f"{k} {header.get(k)}" for k, v in expected.items() if header.get(k) != v]
    ours = [f"{k} {v}" for k, v in expected.items() if header.get(k) != v]
    if theirs:
        return f"was written by {', '.join(theirs)} (this process: {', '.join(ours)})"
    return None


# --- files --------------------------------------------------------------------------------

def _read_file(path: str) -> bytes | None:
    """The bytes of a regular file; None if nothing is there. Anything else there (a folder,
    a link, a device) or a read error rejects it."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CacheEntryRejected(path, f"cannot be opened as a file ({e.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CacheEntryRejected(path, "is not a regular file")
    with os.fdopen(fd, "rb") as f:
        try:
            return f.read()
        except OSError as e:
            raise CacheEntryRejected(path, f"cannot be read ({e.strerror})") from None


def _remove(path: str):
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)
    except OSError:
        pass  # gone already, or not ours to delete: writing over it will say so


def _touch(path: str):
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache still serves; its entries just age


def _hits(dispatcher) -> int:
    try:
        return sum(dispatcher.stats.cache_hits.values())
    except Exception:  # pragma: no cover
        return 0


def _atomic_write(path: str, data: bytes):
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    # named after the entry, so a leftover from a crash is evicted with it
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
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
            _verify_runtime_helpers(_default)
        return _default


def _verify_runtime_helpers(cache: KernelCache):
    """The `runtime` helpers that drivers call directly (gathers, scatters, matmuls) get
    the same verified disk cache as the kernels, keyed by the text of runtime.py; a
    fresh process then loads them instead of compiling each again."""
    from . import runtime
    with open(runtime.__file__, encoding="utf-8") as f:
        text = f.read()
    for obj in vars(runtime).values():
        # not the closures (argmax3, cumsum3...): Numba keys them by their pickled cells,
        # which differ in every process, so they never hit and would only pile up files
        if isinstance(obj, Dispatcher) and obj.py_func.__module__ == runtime.__name__ \
                and obj.py_func.__closure__ is None:
            obj._cache = VerifiedCache(obj.py_func, cache, text)
