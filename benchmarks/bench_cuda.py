"""GPU benchmark of `jit(f, backend="cuda")` on the seeds' workloads and two row
normalizations (softmax, layernorm).

    python benchmarks/bench_cuda.py              # needs an NVIDIA GPU (pip install "jitviz[cuda]")
    python benchmarks/bench_cuda.py --full       # the seed's full forward pass (W 2000x10000)
    python benchmarks/bench_cuda.py --only norm,softmax   # the workloads named so
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_cuda.py --smoke   # tiny sizes, simulator:
                                                  # checks the script, measures nothing

Side by side, per workload, median of repeated runs with the inputs already on the device and
a synchronize after each call:
  jitviz cuda    the compiled jaxpr (device arrays in, device arrays out)
  numba.cuda     a hand-written numba.cuda kernel doing the same work (the baseline)
  copy bound     a device-to-device copy of the input (memory bandwidth; elementwise only)
  jax.jit        JAX on the GPU, when JAX with CUDA is installed
plus compile times (first call: trace + plan + Numba/NVVM compile + launch).
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import jitviz  # noqa: E402
from jitviz.backends.cuda.runtime import runtime as cuda_runtime  # noqa: E402


# --- the workloads (as the seeds write them) -----------------------------------------------------
from jitviz.examples import f_loop, forward_pass, norm, selu, slow_f  # noqa: E402
import jitviz.nn  # noqa: E402


def layernorm(x, g, b):
    """Layer normalization over the last axis (written with `.mean`, so that JAX's arrays
    run it too)."""
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / (v + 1e-5) ** 0.5 * g + b


# --- hand-written numba.cuda baselines --------------------------------------------------------

cuda = None  # numba.cuda, set by main(): the simulator swaps a kernel's global `cuda`


def baselines():
    import numba

    @cuda.jit
    def k_slow_f(x, out):
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            v = x[i]
            out[i] = v * v + v * np.float32(2.0)

    @cuda.jit
    def k_selu(x, out):
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            v = x[i]
            out[i] = np.float32(1.05) * (v if v > 0 else np.float32(1.67) * math.exp(v)
                                         - np.float32(1.67))

    @cuda.jit
    def k_colstats(X, mean, inv_std):  # one thread per column, two passes
        j = cuda.grid(1)
        if j < X.shape[1]:
            n = X.shape[0]
            s = np.float32(0)
            for i in range(n):
                s += X[i, j]
            m = s / n
            v = np.float32(0)
            for i in range(n):
                d = X[i, j] - m
                v += d * d
            mean[j] = m
            inv_std[j] = np.float32(1) / math.sqrt(v / n)

    @cuda.jit
    def k_norm_apply(X, mean, inv_std, out):
        for t in range(cuda.grid(1), X.size, cuda.gridsize(1)):
            i, j = t // X.shape[1], t % X.shape[1]
            out[i, j] = (X[i, j] - mean[j]) * inv_std[j]

    T = 16

    @cuda.jit
    def k_matmul_relu(A, B, Z, R):
        sa = cuda.shared.array((T, T), numba.float32)
        sb = cuda.shared.array((T, T), numba.float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        m = cuda.blockIdx.y * T + ty
        n = cuda.blockIdx.x * T + tx
        acc = np.float32(0)
        for k0 in range(0, A.shape[1], T):
            sa[ty, tx] = A[m, k0 + tx] if m < A.shape[0] and k0 + tx < A.shape[1] else 0
            sb[ty, tx] = B[k0 + ty, n] if k0 + ty < B.shape[0] and n < B.shape[1] else 0
            cuda.syncthreads()
            for kt in range(T):
                acc += sa[ty, kt] * sb[kt, tx]
            cuda.syncthreads()
        if m < Z.shape[0] and n < Z.shape[1]:
            Z[m, n] = acc
            R[m, n] = max(acc, np.float32(0))

    @cuda.jit(device=True)
    def block_combine(sm, v, take_max):  # every thread gets the block's max (or sum) of v
        tid = cuda.threadIdx.x
        sm[tid] = v
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 0:
            if tid < s:
                sm[tid] = max(sm[tid], sm[tid + s]) if take_max else sm[tid] + sm[tid + s]
            cuda.syncthreads()
            s //= 2
        r = sm[0]
        cuda.syncthreads()
        return r

    @cuda.jit
    def k_softmax_rows(X, out):  # a block per row
        sm = cuda.shared.array(256, numba.float32)
        tid, nt, n = cuda.threadIdx.x, cuda.blockDim.x, X.shape[1]
        for row in range(cuda.blockIdx.x, X.shape[0], cuda.gridDim.x):
            m = -np.float32(math.inf)
            for j in range(tid, n, nt):
                m = max(m, X[row, j])
            m = block_combine(sm, m, True)
            s = np.float32(0)
            for j in range(tid, n, nt):
                s += math.exp(X[row, j] - m)
            s = block_combine(sm, s, False)
            for j in range(tid, n, nt):
                out[row, j] = math.exp(X[row, j] - m) / s

    @cuda.jit
    def k_layernorm_rows(X, g, b, out):  # a block per row
        sm = cuda.shared.array(256, numba.float32)
        tid, nt, n = cuda.threadIdx.x, cuda.blockDim.x, X.shape[1]
        for row in range(cuda.blockIdx.x, X.shape[0], cuda.gridDim.x):
            s = np.float32(0)
            for j in range(tid, n, nt):
                s += X[row, j]
            mean = block_combine(sm, s, False) / n
            v = np.float32(0)
            for j in range(tid, n, nt):
                d = X[row, j] - mean
                v += d * d
            inv = np.float32(1) / math.sqrt(block_combine(sm, v, False) / n + np.float32(1e-5))
            for j in range(tid, n, nt):
                out[row, j] = (X[row, j] - mean) * inv * g[j] + b[j]

    @cuda.jit
    def k_loop(x, n, out):
        if cuda.grid(1) == 0:
            y = np.float32(0)
            for i in range(n[0]):
                y += x[0]
            out[0] = y

    return locals()


# --- timing --------------------------------------------------------------------------------------

def timeit(fn, sync, repeat):
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e3:9.3f} ms" if s >= 1e-3 else f"{s * 1e6:9.1f} us"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (works in the simulator)")
    ap.add_argument("--full", action="store_true", help="the seed's full forward-pass sizes")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", default="", help="comma-separated words: only the workloads "
                    "whose names contain one (e.g. norm,softmax)")
    args = ap.parse_args(argv)

    rt = cuda_runtime()
    if rt.mode is None:
        print(f"no CUDA device: {rt.why}.\nThis benchmark needs an NVIDIA GPU; it has not been run "
              "here. (NUMBA_ENABLE_CUDASIM=1 ... --smoke checks the script in the simulator.)")
        return 0
    if rt.mode == "sim" and not args.smoke:
        print("the simulator measures nothing: pass --smoke to check the script")
        return 0
    global cuda
    cuda = rt.cuda
    repeat = 2 if args.smoke else args.repeat
    sync = cuda.synchronize
    k = baselines()
    rng = np.random.default_rng(0)
    if args.smoke:
        sizes = dict(slow=(50, 40), selu=1000, norm=(100, 10), W=(8, 16), X=(16, 12), loop=50,
                     rows=(16, 40))
    else:
        W, X = ((2000, 10000), (10000, 20000)) if args.full else ((1000, 4000), (4000, 4000))
        sizes = dict(slow=(5000, 5000), selu=1_000_000, norm=(10000, 10), W=W, X=X,
                     loop=200_000, rows=(4096, 1024))
    if rt.mode == "gpu":
        dev = cuda.get_current_device()
        print(f"device: {dev.name.decode() if isinstance(dev.name, bytes) else dev.name}, "
              f"cc {dev.compute_capability}, {dev.MULTIPROCESSOR_COUNT} SMs")
    else:
        print("device: Numba CUDA simulator (--smoke: timings are meaningless)")

    try:
        import jax
        jax_gpu = any(d.platform == "gpu" for d in jax.devices())
    except Exception:
        jax, jax_gpu = None, False

    def exe_of(fn, *host_args):
        """The compiled program called on device arrays (outputs stay on the device)."""
        jf = jitviz.jit(fn, backend="cuda")
        t0 = time.perf_counter()
        compiled = jf.lower(*host_args).compile()
        dev_args = [cuda.to_device(np.asarray(a)) for a in host_args]
        out = compiled.executable(*dev_args)
        sync()
        first = time.perf_counter() - t0
        return (lambda: compiled.executable(*dev_args)), first, compiled, out

    rows = []

    only = [w for w in args.only.split(",") if w]

    def bench(name, fn, host_args, hand=None, copy_of=None, jax_fn=None, check=None):
        if only and not any(w in name for w in only):
            return
        run, first, compiled, out = exe_of(fn, *host_args)
        t_jv = timeit(run, sync, repeat)
        t_hand = timeit(hand, sync, repeat) if hand else None
        t_copy = None
        if copy_of is not None:
            src = cuda.to_device(copy_of)
            dst = cuda.device_array_like(src)
            t_copy = timeit(lambda: dst.copy_to_device(src), sync, repeat)
        t_jax = None
        if jax_gpu and jax_fn is not None:
            jargs = [jax.device_put(a) for a in host_args]
            jf = jax.jit(jax_fn)
            t_jax = timeit(lambda: jax.block_until_ready(jf(*jargs)), lambda: None, repeat)
        if check is not None:
            check([np.asarray(o.copy_to_host()) for o in out])
        rows.append((name, len(compiled.kernels), first, t_jv, t_hand, t_copy, t_jax))

    x = rng.standard_normal(sizes["slow"]).astype(np.float32)
    dx, dout = cuda.to_device(x.ravel()), cuda.device_array(x.size, np.float32)
    grid = (min(-(-x.size // 256), 4096) if rt.mode == "gpu" else 2, 256 if rt.mode == "gpu" else 4)
    # NVVM contracts x*x + t into one fma (one rounding instead of two), as XLA's GPU backend
    # does: results differ from NumPy's by an ulp of the larger term, hence the atol
    bench("x*x + x*2.0", slow_f, (x,), hand=lambda: k["k_slow_f"][grid](dx, dout), copy_of=x,
          jax_fn=(lambda a: a * a + a * 2.0),
          check=lambda o: np.testing.assert_allclose(o[0], x * x + x * 2, rtol=1e-5, atol=1e-6))

    s = rng.standard_normal(sizes["selu"]).astype(np.float32)
    ds, dso = cuda.to_device(s), cuda.device_array_like(s)
    bench("selu", selu, (s,), hand=lambda: k["k_selu"][grid](ds, dso), copy_of=s,
          jax_fn=_jax_selu(jax) if jax_gpu else None)

    Xn = rng.random(sizes["norm"]).astype(np.float32)
    dX = cuda.to_device(Xn)
    dm, di = cuda.device_array(Xn.shape[1], np.float32), cuda.device_array(Xn.shape[1],
                                                                           np.float32)
    dno = cuda.device_array_like(dX)

    def hand_norm():
        k["k_colstats"][1, 32 if rt.mode == "gpu" else 4](dX, dm, di)
        k["k_norm_apply"][grid](dX, dm, di, dno)
    bench("norm (mean/std axis 0)", norm, (Xn,), hand=hand_norm,
          jax_fn=(lambda X: (X - X.mean(0)) / X.std(0)),
          check=lambda o: np.testing.assert_allclose(o[0], (Xn - Xn.mean(0)) / Xn.std(0),
                                                     atol=1e-4))

    # a block per row: 256 threads (4 in the simulator), at most 8 blocks per SM
    rgrid = (min(sizes["rows"][0], 132 * 8) if rt.mode == "gpu" else 2,
             256 if rt.mode == "gpu" else 4)
    Xs = rng.standard_normal(sizes["rows"]).astype(np.float32)
    dXs, dso2 = cuda.to_device(Xs), cuda.device_array(sizes["rows"], np.float32)
    e = np.exp(Xs - Xs.max(1, keepdims=True))
    bench(f"softmax over rows {Xs.shape}", jitviz.nn.softmax, (Xs,),
          hand=lambda: k["k_softmax_rows"][rgrid](dXs, dso2),
          jax_fn=(lambda x: jax.nn.softmax(x, axis=-1)) if jax_gpu else None,
          check=lambda o: np.testing.assert_allclose(o[0], e / e.sum(1, keepdims=True),
                                                     rtol=1e-4, atol=1e-7))
    gs = rng.standard_normal(sizes["rows"][1]).astype(np.float32)
    bs = rng.standard_normal(sizes["rows"][1]).astype(np.float32)
    dg, db = cuda.to_device(gs), cuda.to_device(bs)
    mu, var = Xs.mean(1, keepdims=True), Xs.var(1, keepdims=True)
    bench(f"layernorm over rows {Xs.shape}", layernorm, (Xs, gs, bs),
          hand=lambda: k["k_layernorm_rows"][rgrid](dXs, dg, db, dso2), jax_fn=layernorm,
          check=lambda o: np.testing.assert_allclose(
              o[0], (Xs - mu) / np.sqrt(var + 1e-5) * gs + bs, rtol=1e-4, atol=1e-4))

    Wm = rng.standard_normal(sizes["W"]).astype(np.float32)
    Xm = rng.standard_normal(sizes["X"]).astype(np.float32)
    dW, dXm = cuda.to_device(Wm), cuda.to_device(Xm)
    dZ = cuda.device_array((Wm.shape[0], Xm.shape[1]), np.float32)
    dR = cuda.device_array_like(dZ)
    mgrid = (-(-Xm.shape[1] // 16), -(-Wm.shape[0] // 16))
    bench(f"forward pass {Wm.shape}@{Xm.shape}", forward_pass, (Wm, Xm),
          hand=lambda: k["k_matmul_relu"][mgrid, (16, 16)](dW, dXm, dZ, dR),
          jax_fn=(lambda W, X: (W @ X, (W @ X).clip(0))))

    n = np.int32(sizes["loop"])
    dx1, dn1, do1 = cuda.to_device(np.float32([2.0])), cuda.to_device(np.int32([n])), \
        cuda.device_array(1, np.float32)
    bench(f"fori_loop {int(n)} scalar steps", f_loop, (np.float32(2), n),
          hand=lambda: k["k_loop"][1, 1](dx1, dn1, do1),
          jax_fn=_jax_loop(jax) if jax_gpu else None,
          check=lambda o: np.testing.assert_allclose(o[0], 2.0 * int(n), rtol=1e-3))

    hdr = (f"{'workload':34} {'kernels':>7} {'1st call':>12} {'jitviz cuda':>12} "
           f"{'numba.cuda':>12} {'copy bound':>12} {'jax.jit':>12} {'vs hand':>8}")
    print(hdr)
    print("-" * len(hdr))
    for name, nk, first, tj, th, tc, tx in rows:
        ratio = f"{tj / th:7.2f}x" if th else "-"
        print(f"{name:34} {nk:7d} {fmt(first):>12} {fmt(tj):>12} {fmt(th):>12} {fmt(tc):>12} "
              f"{fmt(tx):>12} {ratio:>8}")
    print("(vs hand = jitviz time / hand-written numba.cuda time; lower is better)")
    return 0


def _jax_selu(jax):
    import jax.numpy as xnp

    def f(x, alpha=1.67, lambda_=1.05):
        return lambda_ * xnp.where(x > 0, x, alpha * xnp.exp(x) - alpha)
    return f


def _jax_loop(jax):
    from jax import lax as jlax

    def f(x, n):
        return jlax.fori_loop(0, n, lambda i, y: y + x, 0.)
    return f


if __name__ == "__main__":
    sys.exit(main())
