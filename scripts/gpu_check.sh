#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, as one command for a machine lent for a few minutes:
# the CUDA tests on the hardware (no simulator), then the GPU benchmarks. Logs go to $OUT
# (default /tmp/gpu_check).
#
#     bash scripts/gpu_check.sh            # from the repository root, on the GPU machine
#
# On a machine without jitviz's dependencies installed, wheels in .whl/ (NumPy < 2.5 for
# numba-cuda 0.30, graphviz) are installed into /tmp/site first; the machine's own Numba,
# numba-cuda, CuPy and JAX are used. To fetch them for a Python 3.12 machine (.whl/ is not
# committed: list it in .git/info/exclude):
#     python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#         --implementation cp --platform manylinux_2_28_x86_64 -d .whl numpy==2.3.5 graphviz==0.21 Each step has its own time limit so that one slow step
# leaves the others their time: STEP_TESTS, STEP_MATH_TESTS, STEP_BENCH, STEP_MATH,
# STEP_DISPATCH (seconds; 0 leaves the step out).
set -u
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 JITVIZ_CACHE_DIR=${JITVIZ_CACHE_DIR:-/tmp/jitviz-gpu-cache}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
PY=${PYTHON:-python3}
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
nvidia-smi -L
$PY - <<'EOF'
import importlib
for m in ("numpy", "numba", "numba_cuda", "llvmlite", "cupy", "jax"):
    try:
        print(m, importlib.import_module(m).__version__, end="; ")
    except Exception as e:
        print(m, "n/a", type(e).__name__, end="; ")
print()
EOF
workers=$(( $(nproc) < 16 ? $(nproc) : 16 ))
# step NAME LIMIT CMD...: run CMD under LIMIT seconds, or not at all when LIMIT is 0
step() {
    local name=$1 limit=$2
    shift 2
    [ "$limit" = 0 ] && { echo "== $name: left out"; return; }
    echo "== $name"
    timeout "$limit" "$@"
}

# JITVIZ_CUDA_SIM_CHILD=1 selects the tests the simulator's child process runs; without
# NUMBA_ENABLE_CUDASIM they run on the GPU. Left out: the check that the child runs in the
# simulator, and the explorer's (anywidget, which the GPU image lacks).
step "the CUDA backend's differential tests, kernels, PTX and pool, on the GPU" \
    "${STEP_TESTS:-200}" env JITVIZ_CUDA_SIM_CHILD=1 $PY -m pytest -q -p no:cacheprovider \
    -o addopts= -n "$workers" tests/test_cuda_backend.py tests/test_cuda_ptx.py \
    tests/test_cuda_pool.py \
    --deselect tests/test_cuda_backend.py::test_child_really_runs_in_the_simulator \
    --deselect tests/test_cuda_backend.py::test_explorer_shows_the_cuda_pipeline_and_the_stage_it_compiled \
    2>&1 | tee "$OUT/tests.log" | tail -25
step "libdevice's accuracy through jitviz's kernels (tests/test_vecmath.py -k cuda)" \
    "${STEP_MATH_TESTS:-100}" $PY -m pytest -q -p no:cacheprovider -o addopts= \
    -n "$workers" tests/test_vecmath.py -k cuda 2>&1 | tee "$OUT/vecmath.log" | tail -25
step benchmarks/bench_cuda.py "${STEP_BENCH:-150}" $PY benchmarks/bench_cuda.py 2>&1 |
    tee "$OUT/bench_cuda.txt"
step benchmarks/bench_cuda_math.py "${STEP_MATH:-180}" $PY benchmarks/bench_cuda_math.py 2>&1 |
    tee "$OUT/bench_cuda_math.txt"
step "benchmarks/bench_cuda_dispatch.py --profile" "${STEP_DISPATCH:-60}" \
    $PY benchmarks/bench_cuda_dispatch.py --profile 2>&1 | tee "$OUT/bench_cuda_dispatch.txt"
