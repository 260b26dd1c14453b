"""Real PTX from the CUDA backend, with no GPU: numba-cuda's NVVM (from the `cuda` extra's
CUDA 13 toolkit wheels) compiles every generated kernel for sm_90.

The simulator cannot catch typing errors (it runs kernels as Python), so compiling every
kernel of the differential table to PTX here is what proves the generated code is valid
Numba CUDA. In CI (`CI` set) a missing toolkit is a failure, elsewhere a skip.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax


def _toolkit():
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        pytest.skip("this process runs Numba's CUDA simulator")
    try:
        from numba import cuda
        from jitviz.backends.cuda import CudaToolkitError, kernel_ptx
        kernel_ptx("def k(o0):\n    o0[0] = 1.0\n", "k", [(np.dtype(np.float32), 1)])
    except (ImportError, CudaToolkitError) as e:
        if os.environ.get("CI"):
            raise AssertionError(f"CI needs the cuda extra (pip install -e '.[cuda]'): {e}")
        pytest.skip(f"numba-cuda with NVVM is not installed: {e}")
    return cuda


@pytest.fixture(scope="module", autouse=True)
def toolkit():
    return _toolkit()


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def test_selu_kernel_has_real_sm90_ptx():
    x = np.linspace(-2, 2, 1000).astype(np.float32)
    compiled = jitviz.jit(selu, backend="cuda").lower(x).compile()
    (k,) = compiled.kernels
    ptx = k.ptx(cc=(9, 0))
    assert ".entry" in ptx and ".target sm_90" in ptx and ".address_size 64" in ptx
    assert k.name in ptx  # the kernel's (mangled) name
    assert "ex2.approx" in ptx or "exp" in ptx.lower()
    assert ".target sm_80" in k.ptx(cc=(8, 0))
    assert k.ptx((9, 0)) is k.ptx((9, 0)) or k.ptx((9, 0)) == ptx  # cached


def test_seed_programs_compile_to_ptx():
    def norm(X):
        X = X - X.mean(0)
        return X / X.std(0)

    def forward_pass(W, X):
        Z = jnp.dot(W, X)
        return Z, jnp.maximum(Z, 0)

    def f_loop(x, n):
        return lax.fori_loop(0, n, lambda i, y: y + x, 0.)

    def myabs(x):
        return lax.cond(x > 0, lambda _: x, lambda _: -x, None)

    def printing(x):
        def body(i, y):
            jitviz.debug.print("i={} y={}", i, y)
            return y * 2.0
        return lax.fori_loop(0, 4, body, x)

    progs = [(norm, (np.random.rand(10000, 10).astype(np.float32),)),
             (forward_pass, (np.ones((64, 96), np.float32), np.ones((96, 80), np.float32))),
             (f_loop, (np.float32(2), np.int32(15))), (myabs, (np.int32(-2),)),
             (printing, (np.float32(1),)), (jnp.sum, (np.ones(1 << 20, np.float32),)),
             (lambda x: jnp.argmax(x), (np.ones(1 << 18, np.float32),)),
             (selu, (np.ones(1 << 16, np.float32),))]
    kinds = set()
    for fn, args in progs:
        for k in jitviz.jit(fn, backend="cuda").lower(*args).compile().kernels:
            ptx = k.ptx(cc=(9, 0))
            assert ".entry" in ptx and ".target sm_90" in ptx, k.source
            kinds.add(k.source.split(" kernel")[0].lstrip("# "))
            if "dot" in k.name:
                assert ".shared" in ptx and "bar.sync" in ptx  # tiles in shared memory
            if "cuda.shared.array" in k.source:  # block tree reductions, matmul tiles
                assert ".shared" in ptx
            if "debug_print" in k.name:
                assert "vprintf" in ptx  # CUDA's print
    assert kinds == {"elementwise", "reduce", "dot", "control"}


def _unique_kernels(cases, target):
    from jitviz.backends.cuda.plan import plan_program
    from test_cuda_backend import case_jaxpr
    seen = {}
    for case in cases:
        for spec in plan_program(case_jaxpr(case), target).kernels():
            seen.setdefault(spec.source, (spec, case))
    return list(seen.values())


def test_every_differential_kernel_compiles_to_ptx():
    """Every kernel the differential table produces is valid Numba CUDA: it compiles to
    sm_90 PTX. The target is the simulator's tiny one (so block reductions, second passes and
    serial reductions all occur on the table's small arrays) with GPU semantics; the seed
    programs above cover GPU-sized launch parameters."""
    from jitviz.backends.cuda import kernel_ptx
    from jitviz.backends.cuda.plan import SIMULATOR_TARGET
    from test_cuda_backend import DIFF_CASES
    from test_primitives import _case_id
    tiny = SIMULATOR_TARGET.__class__(**{**SIMULATOR_TARGET.__dict__, "simulator": False})
    failures = []
    n = 0
    for target in (tiny,):
        for spec, case in _unique_kernels(DIFF_CASES, target):
            n += 1
            try:
                ptx = kernel_ptx(spec.source, spec.name, spec.arg_types(), (9, 0))
                assert ".entry" in ptx and ".target sm_90" in ptx
            except Exception as e:  # collect them all
                failures.append(f"{_case_id(case)} {spec.name}: {type(e).__name__}: "
                                f"{str(e).splitlines()[0]}")
    assert n > 100
    assert not failures, "\n".join(failures)


def test_kernels_planned_for_the_hardware_target_compile_to_ptx():
    """The hardware target (an H100's launch sizes; serial reductions up to 32 elements) takes
    paths the simulator's tiny target never does: a small reduction becomes a loop inside its
    consumer, and a fusion attempt that conflicts halfway through such a loop is rolled back.
    Found on an H100: the rollback kept the loop's indent, so softmax over 7 columns rendered
    an IndentationError. Every kernel of the program table and the differential table,
    planned for that target, must compile to sm_90 PTX."""
    from jitviz.backends.cuda import kernel_ptx
    from jitviz.backends.cuda.plan import Target, plan_program
    from jitviz.passes import optimize
    from test_cuda_backend import DIFF_CASES, PROGRAMS, case_jaxpr
    from test_primitives import _case_id
    hardware = Target()
    jaxprs = [(name, jitviz.make_jaxpr(fn)(*make())) for name, (fn, make) in PROGRAMS.items()]
    jaxprs += [(_case_id(case), case_jaxpr(case)) for case in DIFF_CASES]
    seen, failures = set(), []
    for label, closed in jaxprs:
        for spec in plan_program(optimize(closed), hardware).kernels():
            if spec.source in seen:
                continue
            seen.add(spec.source)
            try:
                ptx = kernel_ptx(spec.source, spec.name, spec.arg_types(), (9, 0))
                assert ".entry" in ptx
            except Exception as e:  # collect them all
                failures.append(f"{label} {spec.name}: {type(e).__name__}: "
                                f"{str(e).splitlines()[0]}")
    assert len(seen) > 100
    assert not failures, "\n".join(failures)


def test_gpu_sized_segments_are_one_kernel_that_compiles():
    """Planned for the hardware target, a standardization, a softmax and a layernorm are one
    segment kernel each (its phases separated by the block's barriers), valid sm_90 PTX."""
    from jitviz.backends.cuda import kernel_ptx
    from jitviz.backends.cuda.plan import Target, plan_program
    from jitviz.passes import optimize
    from test_cuda_backend import GPU_SEGMENTS
    for name, (fn, make) in GPU_SEGMENTS.items():
        (spec,) = plan_program(optimize(jitviz.make_jaxpr(fn)(*make())), Target()).kernels()
        assert spec.kind == "reduce", name
        ptx = kernel_ptx(spec.source, spec.name, spec.arg_types(), (9, 0))
        assert ".shared" in ptx and "bar.sync" in ptx, name


def test_logistic_computes_one_exponential_per_element():
    """CUDA's logistic writes e^-|x| twice (1 / (1 + e), times e below 0, accurate where
    e^-x overflows): NVVM computes it once, as many exponentials as 1 / (1 + e^-x) has."""
    x = np.linspace(-5, 5, 1000).astype(np.float32)

    def kernel(fn):
        (k,) = jitviz.jit(fn, backend="cuda").lower(x).compile().kernels
        return k
    logistic, plain = kernel(lax.logistic), kernel(lambda v: 1 / (1 + jnp.exp(-v)))
    # the code, not the comments (which quote the caller's lines)
    code = "\n".join(line for line in logistic.source.splitlines()
                     if not line.lstrip().startswith("#"))
    assert code.count("exp(-abs(") == 2
    assert logistic.ptx((9, 0)).count("ex2.approx") == plain.ptx((9, 0)).count("ex2.approx") > 0
