"""Memory and disk stay bounded: jitting many closures does not grow the process, and the
disk kernel cache evicts its least recently used entries beyond its budget."""
from __future__ import annotations

import gc
import json
import linecache
import os
import subprocess
import sys
import tracemalloc
import warnings
import weakref
from pathlib import Path

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.backends import cpu as cpu_mod
from jitviz.backends.cpu.cache import KernelCache

from cpu_helpers import optimized

ROOT = Path(__file__).resolve().parents[1]
X = np.linspace(-1.0, 1.0, 12, dtype=np.float32)


# --- memory ---------------------------------------------------------------------------------

def _jit_closures(n: int, alive: list | None = None):
    x = np.ones(10_000)
    for i in range(n):
        captured = np.full(10_000, float(i))  # 80 kB, a constant of the traced program
        if alive is not None:
            alive.append(weakref.ref(captured))
        assert jitviz.jit(lambda v: v * 2.0 + captured)(x)[0] == 2.0 + i


def _drivers_in_linecache() -> set:
    return {name for name in linecache.cache if name.startswith("<jitviz_driver_")}


def measure_closure_memory() -> dict:
    """What 400 released jits of closures leave behind, after a warm-up (run in a fresh
    process by the test below)."""
    alive: list = []
    earlier = _drivers_in_linecache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitviz.errors.RetraceWarning)
        _jit_closures(20, alive)  # Numba and the kernel warm up
        tracemalloc.start()
        try:
            # jitviz's bounded records (the last 256 compiles of one code object, for
            # retrace-churn warnings) fill up; replacing them is then traced both ways: what
            # is measured is the steady state
            _jit_closures(700, alive)
            # two batches of 400: a leak grows in both
            grown = None
            for _ in range(2):
                gc.collect()
                before = tracemalloc.get_traced_memory()[0]
                _jit_closures(400)  # a captured array kept alive here would add 80 kB each
                gc.collect()
                batch = tracemalloc.get_traced_memory()[0] - before
                grown = batch if grown is None else min(grown, batch)
        finally:
            tracemalloc.stop()
    return {"outlived": sum(r() is not None for r in alive),
            "new_drivers_in_linecache": len(_drivers_in_linecache() - earlier),
            "grown": grown}


def test_many_jits_of_closures_do_not_grow_memory():
    """Before: every compile left its driver's text in `linecache` for good (0.7 kB a jit:
    400 jits grew the traced heap by 300 kB, and on without end).

    Measured in a fresh process: in a test worker the heap also holds what earlier tests
    left in bounded records that are still filling (CI measured 134 kB and once 230 kB so,
    where this process alone measures under 100 kB)."""
    code = ("import json, test_bounded_resources as t; "
            "print(json.dumps(t.measure_closure_memory()))")
    run = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parent,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    measured = json.loads(run.stdout.strip().splitlines()[-1])
    assert measured["outlived"] == 0, "a captured array outlived its jit"
    assert measured["new_drivers_in_linecache"] < 50
    assert measured["grown"] < 100_000, \
        f"400 released jits still hold {measured['grown'] / 1e3:.0f} kB"


# --- disk -----------------------------------------------------------------------------------

def _chain(k: int):
    """A function whose fused kernel text differs for every k, its machine code small (an
    inlined vectorized `sin` would make each entry bigger than the test's whole budget)."""
    def f(x):
        for _ in range(k):
            x = jnp.abs(x) * 1.5
        return x
    return optimized(f, X)


def _compile(root: Path, k: int):
    return cpu_mod.CpuBackend(KernelCache(str(root))).compile(_chain(k))


def _disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _on_disk(root: Path, exe) -> bool:
    source = exe.kernels[0].source
    text = source[source.index("# jitviz generated kernels"):]  # less the annotation
    return any(root.glob(f"*/jk_{KernelCache(str(root)).key(text)}.py"))


@pytest.fixture
def budget():
    before = jitviz.config.kernel_cache_max_bytes
    yield lambda n: jitviz.config.update("kernel_cache_max_bytes", n)
    jitviz.config.update("kernel_cache_max_bytes", before)


def test_disk_cache_stays_within_its_budget(tmp_path, budget):
    """Before: no eviction at all (61 MB after a fuzz run)."""
    budget(100_000)
    _compile(tmp_path, 1)
    entry = written = _disk_bytes(tmp_path)
    for k in range(2, 16):
        _compile(tmp_path, k)
        written += entry
        assert _disk_bytes(tmp_path) <= 100_000, f"{_disk_bytes(tmp_path)} bytes on disk"
    assert written > 2 * 100_000
    assert _compile(tmp_path, 15).kernels[0].reused, "the newest kernel was evicted"


def test_eviction_takes_the_least_recently_used_first(tmp_path, budget):
    exes = {k: _compile(tmp_path, k) for k in (1, 2, 3, 4)}
    assert _compile(tmp_path, 1).kernels[0].reused  # a new process uses kernel 1 again
    used = [2, 3, 4, 1]  # least recently used first
    # what an older Numba left behind, unused for a year, shares the budget and goes first
    stale = tmp_path / "numba0.1.0-llvmlite0.1.0-cpu0-rt0" / "jk_00000000000000000000aaaa.py"
    stale.parent.mkdir()
    stale.write_bytes(b"#" * 5_000)
    os.utime(stale, (stale.stat().st_atime - 365 * 86400,) * 2)
    budget(_disk_bytes(tmp_path) + 1_000)  # the next kernel does not fit
    newest = _compile(tmp_path, 5)
    kept = [k for k in used if _on_disk(tmp_path, exes[k])]
    assert not stale.exists()
    assert _on_disk(tmp_path, newest) and 0 < len(kept) < len(used)
    assert kept == used[len(used) - len(kept):], f"kept {kept} of {used}"


def test_budget_reads_the_environment():
    env = dict(os.environ, JITVIZ_CACHE_MAX_BYTES="12345", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", "import jitviz; "
                          "print(jitviz.config.kernel_cache_max_bytes)"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "12345", out.stderr
