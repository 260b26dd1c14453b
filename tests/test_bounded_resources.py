"""Memory and disk stay bounded: the disk kernel cache evicts its least recently used entries
beyond its budget."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.backends import cpu as cpu_mod
from jitviz.backends.cpu_cache import KernelCache

from cpu_helpers import optimized

ROOT = Path(__file__).resolve().parents[1]
X = np.linspace(-1.0, 1.0, 12, dtype=np.float32)


# --- disk -----------------------------------------------------------------------------------

def _chain(k: int):
    """A function whose fused kernel text differs for every k."""
    def f(x):
        for _ in range(k):
            x = jnp.sin(x)
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
    budget(_disk_bytes(tmp_path) + 1_000)  # the next kernel does not fit
    newest = _compile(tmp_path, 5)
    kept = [k for k in used if _on_disk(tmp_path, exes[k])]
    assert _on_disk(tmp_path, newest) and 0 < len(kept) < len(used)
    assert kept == used[len(used) - len(kept):], f"kept {kept} of {used}"


def test_budget_reads_the_environment():
    env = dict(os.environ, JITVIZ_CACHE_MAX_BYTES="12345", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", "import jitviz; "
                          "print(jitviz.config.kernel_cache_max_bytes)"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "12345", out.stderr
