"""vector_isa: AVX-512 instructions reached from vectorized scalar code (vgetexp, vgetmant,
vscalef, a table lookup as one permute), and vecmath's functions built on them (the logs, float32
tanh and cbrt, float64 cbrt)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

import jitviz
import jitviz.numpy as jnp
from jitviz.backends.cpu import vector_isa
from jitviz.backends.cpu.vecmath_tables import TANH32_D

sys.path.insert(0, os.path.dirname(__file__))
from helpers import float64_kept  # noqa: E402

pytestmark = pytest.mark.skipif(not vector_isa.available(),
                                reason="needs a CPU with AVX-512F and VL")

L = np.longdouble


def _hot_loop(asm):
    """The vector loop of a kernel's assembly: of the blocks that jump back to their own
    label, the one with the most 512-bit registers (then 256-bit ones). Widest first: LLVM
    may add an 8-lane loop for the remainder of a 16-lane one (seen on a Xeon that LLVM
    names rocketlake), and that loop can hold more ymm names than the main loop zmm ones."""
    parts = re.split(r"\n(\.LBB\w+):", asm)
    blocks = [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
    loops = [body for label, body in blocks if re.search(rf"\bj\w+\s+{label}\b", body)]
    return max(loops, key=lambda b: (b.count("zmm"), b.count("ymm")))


def _special_values(dtype):
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, info.smallest_subnormal,
                     info.tiny / 3, info.max, 1.0, 1.5, 0.75, 1.4999, -2.5, 3.0], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_getexp_and_getmant_split_every_float(dtype):
    getexp = vector_isa.getexp_f32 if dtype == np.float32 else vector_isa.getexp_f64
    getmant = vector_isa.getmant_f32 if dtype == np.float32 else vector_isa.getmant_f64
    # ([1/2, 1): float32 only, pow's)
    getmant_half = vector_isa.getmant_half_f32 if dtype == np.float32 else getmant

    @njit
    def split(x, e, m, h):
        for i in range(x.size):  # vectorized: the 16/8-lane versions; the tail: the scalar
            e[i] = getexp(x[i])
            m[i] = getmant(x[i])
            h[i] = getmant_half(x[i])

    rng = np.random.default_rng(3)
    it = np.int32 if dtype == np.float32 else np.int64
    bits = rng.integers(np.iinfo(it).min, np.iinfo(it).max, 5000, dtype=it).view(dtype)
    x = np.concatenate([bits, _special_values(dtype)])
    e, m, h = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    split(x, e, m, h)
    finite = np.isfinite(x) & (x != 0)
    mant, exp = np.frexp(x[finite])  # |mant| in [1/2, 1)
    np.testing.assert_array_equal(e[finite], (exp - 1).astype(dtype))
    want = np.where(np.abs(mant) < 0.75, mant * 2, mant)  # [3/4, 3/2), x's sign
    np.testing.assert_array_equal(m[finite], want)
    if dtype == np.float32:
        np.testing.assert_array_equal(h[finite], mant)
    assert np.all(np.isnan(e[np.isnan(x)])) and np.all(np.isnan(m[np.isnan(x)]))
    np.testing.assert_array_equal(e[np.isinf(x)], np.inf)
    np.testing.assert_array_equal(e[x == 0], -np.inf)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_scalef_scales_by_the_floor_of_a_float_exponent(dtype):
    scalef = vector_isa.scalef_f32 if dtype == np.float32 else vector_isa.scalef_f64

    @njit
    def scale_all(x, e, out):
        for i in range(x.size):
            out[i] = scalef(x[i], e[i])

    rng = np.random.default_rng(4)
    x = np.concatenate([rng.standard_normal(3000), [0.0, -0.0, 1.0, np.inf, 3.0]]).astype(dtype)
    e = np.concatenate([rng.uniform(-40, 40, 3000), [5.0, 7.5, -2.5, -3.0, -200.0]]).astype(dtype)
    out = np.empty_like(x)
    scale_all(x, e, out)
    np.testing.assert_array_equal(out, np.ldexp(x, np.floor(e).astype(np.int32)))


@pytest.mark.parametrize("dtype,n", [(np.float32, 16), (np.float32, 4), (np.float32, 32),
                                     (np.float64, 8), (np.float64, 16)])
def test_table_lookup_is_a_permute_in_the_vector_loop(dtype, n):
    """values[i & (n - 1)], one permute per vector (32 floats, 16 doubles: a two-table one),
    and the vector loop calls nothing: the vector versions were inlined after vectorizing."""
    values = np.arange(n) * 1.25 - 3.0
    lookup = vector_isa.table(list(values), dtype)

    @njit
    def gather(idx, out):
        for i in range(idx.size):
            out[i] = lookup(idx[i])

    idx = np.random.default_rng(1).integers(-50, 50, 1003).astype(np.int32)
    out = np.empty(idx.size, dtype)
    gather(idx, out)
    np.testing.assert_array_equal(out, values[idx & (n - 1)].astype(dtype))
    loop = _hot_loop(gather.inspect_asm(gather.signatures[0]))
    assert re.search(r"vperm\w*", loop), loop
    assert "call" not in loop and "vgather" not in loop


@pytest.mark.parametrize("n,dtype", [(3, np.float32), (64, np.float32), (32, np.float64)])
def test_a_table_of_a_size_no_permute_holds_is_refused_by_name(n, dtype):
    with pytest.raises(ValueError, match=rf"{n} {np.dtype(dtype).name} values.*pad it"):
        vector_isa.table([1.0] * n, dtype)


@pytest.mark.parametrize("fn,instructions", [
    (jnp.log, ("vgetmantps", "vgetexpps", "vperm")),  # a 16-entry table
    (jnp.tanh, ("vpermi2ps",)),  # 32 cells' coefficients
    (jnp.cbrt, ("vgetmantps", "vgetexpps", "vpermi2ps", "vscalefps")),
    (jnp.tan, ("vpermi2ps", "vdivps")),  # 32 points of tan's period, one division
    (lambda v: jnp.log(v.astype(np.float64)), ("vgetmantpd", "vgetexppd", "vpermi2pd"))])
def test_the_kernels_use_them_and_call_nothing_per_vector(fn, instructions):
    x = np.random.default_rng(0).uniform(1e-3, 100, 4096).astype(np.float32)
    with float64_kept():
        k = jitviz.jit(fn).lower(x).compile().kernels[0]
    loop = _hot_loop(k.asm())
    for instruction in instructions:
        assert instruction in loop, (instruction, loop)
    assert "call" not in loop


@pytest.mark.skipif(not vector_isa.available_dq(), reason="needs AVX-512DQ (vrange)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_fmax_and_fmin_by_vrange_match_the_portable_selects(dtype):
    """rt.fmax_f32/f64 (vrange and a NaN test) give the portable fmax/fmin's bits: NaN from
    either side, +0.0 above -0.0, in the vector loop and in its scalar remainder."""
    import itertools
    from jitviz.backends.cpu import runtime as rt
    tag = "f32" if dtype == np.float32 else "f64"
    fast_max, fast_min = getattr(rt, f"fmax_{tag}"), getattr(rt, f"fmin_{tag}")

    @njit
    def run(a, b, out):
        for i in range(a.size):
            out[0, i] = fast_max(a[i], b[i])
            out[1, i] = rt.fmax(a[i], b[i])
            out[2, i] = fast_min(a[i], b[i])
            out[3, i] = rt.fmin(a[i], b[i])

    info = np.finfo(dtype)
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, info.smallest_subnormal,
            -info.smallest_subnormal, info.max, -info.max, 2.0, 2.5]
    a, b = (np.array(v, dtype) for v in zip(*itertools.product(vals, vals)))
    rng = np.random.default_rng(2)
    a = np.concatenate([a, rng.standard_normal(1001).astype(dtype)])
    b = np.concatenate([b, rng.standard_normal(1001).astype(dtype)])
    out = np.empty((4, a.size), dtype)
    run(a, b, out)
    for fast, portable in ((out[0], out[1]), (out[2], out[3])):
        nan = np.isnan(portable)
        np.testing.assert_array_equal(np.isnan(fast), nan)
        np.testing.assert_array_equal(fast[~nan].view(f"i{dtype().itemsize}"),
                                      portable[~nan].view(f"i{dtype().itemsize}"))
    loop = _hot_loop(run.inspect_asm(run.signatures[0]))
    assert ("vrangeps" if dtype == np.float32 else "vrangepd") in loop, loop


def test_float32_pow_uses_them_and_calls_nothing_per_vector():
    """float32 pow's log2 and exp2 by tables: getexp/getmant, a two-register permute for
    the 32 cells, one-register permutes for 2^(j/16), vscalef."""
    from jitviz import lax
    x = np.random.default_rng(0).uniform(1e-3, 100, 4096).astype(np.float32)
    k = jitviz.jit(lambda a, b: lax.pow(a, b), parallel=False).lower(x, x).compile().kernels[0]
    loop = _hot_loop(k.asm())
    for instruction in ("vgetmantps", "vgetexpps", "vpermt2ps", "vpermps", "vscalefps"):
        assert instruction in loop, (instruction, loop)
    assert "call" not in loop and "vgather" not in loop


@pytest.mark.parametrize("parallel", [False, True])
def test_float32_logs_with_the_table_agree_with_long_double(parallel):
    """The table path on every cell, both sides of 1 (where r = 1 keeps log(1 + f) exact),
    subnormals and the specials, threaded or not (a prange body links the table too)."""
    rng = np.random.default_rng(2)
    cells = np.concatenate([np.linspace(0.75, 1.5, 20001), 1 + rng.uniform(-1e-3, 1e-3, 5000),
                            rng.uniform(1e-44, 1e-38, 2000), rng.uniform(0, 1e30, 5000)])
    x = np.concatenate([cells, _special_values(np.float32)]).astype(np.float32)
    f = jitviz.jit(lambda v: (jnp.log(v), jnp.log2(v), jnp.log10(v), jnp.arctanh(v / 1e30)),
                   parallel=parallel)
    got = [np.asarray(g) for g in f(x)]
    with np.errstate(all="ignore"):
        xl = x.astype(L)
        refs = [np.log(xl), np.log(xl) / np.log(L(2)), np.log(xl) / np.log(L(10)),
                np.arctanh((x / np.float32(1e30)).astype(L))]
    for g, ref in zip(got, refs):
        rounded = ref.astype(np.float32)
        finite = np.isfinite(rounded) & (ref != 0)
        np.testing.assert_array_equal(g[~finite & ~np.isnan(rounded)],
                                      rounded[~finite & ~np.isnan(rounded)])
        assert np.all(np.isnan(g[np.isnan(rounded)]))
        ulp = np.maximum(np.spacing(np.abs(rounded[finite])).astype(L),
                         L(np.finfo(np.float32).smallest_subnormal))
        # (log2/log10 as jnp writes them: log(x) / log(b), two roundings more than log)
        assert np.max(np.abs(g[finite] - ref[finite]) / ulp) <= 3.0


def test_without_avx512_the_portable_functions_are_used():
    """A target without AVX-512 (NUMBA_CPU_FEATURES without it) gets the bit manipulations:
    no vgetmant in the kernel, same accuracy (tests/test_vecmath.py runs there too)."""
    code = ("import numpy as np, jitviz, jitviz.numpy as jnp\n"
            "from jitviz.backends.cpu import vector_isa\n"
            "x = np.linspace(0.1, 10, 4096, dtype=np.float32)\n"
            "c = jitviz.jit(jnp.log).lower(x).compile()\n"
            "err = float(np.max(np.abs(np.asarray(c(x)) - np.log(x))))\n"
            "print(vector_isa.available(), 'vgetmant' in c.kernels[0].asm(), err < 1e-6)\n")
    env = {**os.environ, "NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "-avx512f"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.stdout.split() == ["False", "False", "True"], out.stderr[-2000:]


def test_kernels_with_them_load_from_the_disk_cache_in_a_new_process(tmp_path):
    """The kernel cache keeps the object code with the linked functions inlined: a second
    process reuses the kernels and computes the same bits."""
    code = ("import numpy as np, jitviz, jitviz.numpy as jnp\n"
            "x = np.linspace(0.01, 30, 5000, dtype=np.float32)\n"
            "c = jitviz.jit(lambda v: (jnp.log(v), jnp.tanh(v), jnp.cbrt(v), jnp.log1p(v)))"
            ".lower(x).compile()\n"
            "print(all(k.reused for k in c.kernels), "
            "sum(float(np.asarray(o, np.float64).sum()) for o in c(x)).hex())\n")
    env = {**os.environ, "JITVIZ_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    (first_reused, first_sum), (second_reused, second_sum) = (
        r.stdout.split() if r.returncode == 0 else pytest.fail(r.stderr[-2000:]) for r in runs)
    assert (first_reused, second_reused) == ("False", "True")
    assert first_sum == second_sum


def _cell_biases(fn, edges, dtype, per_cell=20000):
    """The mean signed error (in ulps of the long-double result) over each cell."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(lo, hi, per_cell) for lo, hi in zip(edges, edges[1:])])
    x = x.astype(dtype)
    got = np.asarray(jitviz.jit(fn)(x)).astype(L)
    ref = {jnp.tanh: np.tanh, jnp.cbrt: np.cbrt, jnp.log: np.log}[fn](x.astype(L))
    ulp = np.spacing(np.abs(ref.astype(dtype))).astype(L)
    err = ((got - ref) / ulp).astype(np.float64).reshape(len(edges) - 1, per_cell)
    return err.mean(axis=1)


@pytest.mark.parametrize("fn,edges", [
    (jnp.tanh, list(TANH32_D[:29]) + [9.0]),
    (jnp.cbrt, [2.0 ** k * (1 + q / 8) for k in range(3) for q in range(8)] + [8.0]),
    (jnp.log, [0.75 + j / 32 for j in range(9)] + [1 + j / 16 for j in range(1, 9)])],
    ids=["tanh", "cbrt", "log"])
def test_no_cell_leans_one_way(fn, edges):
    """Within each cell of a table-driven float32 function the errors average out: a cell
    whose polynomial sits half an ulp high everywhere (coefficients rounded to float32 all
    at once) passes any max-ulp test, but a training loop adds it up (the JAX notebook's
    MLP drifted about 12x further from float64 than JAX's float32 did)."""
    biases = _cell_biases(fn, edges, np.float32)
    assert np.max(np.abs(biases)) < 0.1, biases.round(3)


# --- the target: 512-bit vectors (jitviz/cpu_target.py) -------------------------------------

_TARGET = """
{before}
import jitviz, numba.core.config as c, numpy as np, jitviz.numpy as jnp
feats = c.CPU_FEATURES or ""
asm = jitviz.jit(jnp.tanh, parallel=False).lower(np.ones(4096, np.float32)).compile() \\
    .kernels[0].asm()
print("-prefer-256-bit" in feats.split(","), asm.count("zmm") > asm.count("ymm"))
"""


def _target_in_child(before="", **env):
    import subprocess
    from helpers import child_env
    environ = child_env(**env)
    for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "JITVIZ_PREFER_256_BIT"):
        if name not in env:
            environ.pop(name, None)
    out = subprocess.run([sys.executable, "-c", _TARGET.format(before=before)], env=environ,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()


@pytest.mark.skipif(bool(os.environ.get("NUMBA_CPU_NAME") or
                         os.environ.get("NUMBA_CPU_FEATURES")),
                    reason="the suite runs for a chosen target")
def test_jitviz_compiles_with_512_bit_vectors_unless_told_otherwise():
    """LLVM tunes Intel's AVX-512 CPUs to prefer 256-bit vectors; importing jitviz turns that
    off (on AMD's Zen 4, which has no such tuning, the kernel has 512-bit loops either way).
    A target the user chose, JITVIZ_PREFER_256_BIT=1, or a Numba function decorated before
    jitviz's import (Numba's target machine then exists) keep LLVM's choice."""
    assert _target_in_child() == ["True", "True"]
    assert _target_in_child(JITVIZ_PREFER_256_BIT="1")[0] == "False"
    assert _target_in_child("import numba\nnumba.njit(lambda: 0)")[0] == "False"
    from jitviz.backends.cpu.vecmath_core import target_features
    chosen = target_features().replace(",-prefer-256-bit", "")
    assert _target_in_child(NUMBA_CPU_FEATURES=chosen)[0] == "False"
